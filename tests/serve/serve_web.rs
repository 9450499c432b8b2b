//! What the browser seat's server accepts, without a browser: only its page, assets and
//! socket; the socket only from its own page; join codes checked and paced as SSH's are; the
//! deadlines; the class's size and its memory (`--max-memory`); HTTPS; and the tutor's frames
//! for the page's keys and size.

use crate::common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::Duration;

use common::classroom::{PICKER, Server, closed_by_the_server, silent_connection};
use common::pty::top_line;
use common::web::{Seat, get, http};

const CODE: &str = "sunflower";

/// A class served to browsers (and SSH) with `access`.
fn class(access: &[&str]) -> Server {
    let mut args = vec!["--web", "127.0.0.1:0"];
    args.extend_from_slice(access);
    Server::start(&args)
}

/// A class with the join code `CODE`; the folder with its file goes with the test.
fn class_with_code(more: &[&str]) -> (Server, tempfile::TempDir) {
    let dir = tempfile::TempDir::new().unwrap();
    let code = dir.path().join("code");
    std::fs::write(&code, format!("{CODE}\n")).unwrap();
    let mut args = vec!["--password-file", code.to_str().unwrap()];
    args.extend_from_slice(more);
    (class(&args), dir)
}

fn told(seat: &Seat, key: &str) -> Option<serde_json::Value> {
    seat.said
        .iter()
        .rev()
        .find_map(|said| said.get(key).cloned())
}

/// The last refusal the seat was told.
fn refusal(seat: &Seat) -> String {
    told(seat, "refused")
        .and_then(|why| why.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A seat signed in as `name` to an open class, on the lesson picker.
fn signed_in(port: u16, name: &str) -> Seat {
    let mut seat = Seat::open(port);
    seat.join(name, "", 80, 24);
    seat.wait_until("the picker", |seat| seat.screen_text().contains(PICKER));
    seat
}

#[test]
fn only_the_page_and_its_socket_are_served() {
    let server = class(&["--open"]);
    let port = server.page_port();
    let (status, page) = get(port, "/");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("text/html") && page.contains("<div id=\"terminal\">"));
    assert!(
        page.to_lowercase()
            .contains("content-security-policy: default-src 'none'")
    );
    // The page is whole: the vendored xterm.js is in it, and nothing else is fetched.
    assert!(page.contains(include_str!("../../web/vendor/xterm.js")));
    assert!(
        page.to_lowercase().contains("script-src 'sha256-"),
        "{}",
        &page[..600]
    );
    for elsewhere in [
        "/xterm.js",
        "/seat.js",
        "/index.html",
        "/../Cargo.toml",
        "/%2e%2e/Cargo.toml",
        "/xterm.js.map",
        "/web/seat.js",
        "/favicon.ico",
        "/ws/",
    ] {
        assert_eq!(get(port, elsewhere).0, 404, "{elsewhere}");
    }
    let (status, answer) = http(
        port,
        &format!("POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\n\r\n"),
    );
    assert_eq!(status, 405, "{answer}");
    // The socket's path without a WebSocket handshake is refused, not served.
    let (status, answer) = get(port, "/ws");
    assert!((400..500).contains(&status), "{answer}");
    assert!(
        answer.to_lowercase().contains("connection: close"),
        "{answer}"
    );
    // A request head larger than any browser's is refused.
    let huge = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Filler: {}\r\n\r\n",
        "a".repeat(100_000)
    );
    let (status, _) = http(port, &huge);
    assert_eq!(status, 431);
}

#[test]
fn the_socket_is_only_for_the_servers_own_page() {
    let server = class(&["--open"]);
    let port = server.page_port();
    for origin in [
        None,
        Some("http://evil.example"),
        Some(format!("https://127.0.0.1:{port}").as_str()),
        Some(format!("http://127.0.0.1:{}", port + 1).as_str()),
    ] {
        let refused = Seat::connect(port, origin).err();
        assert!(
            refused.as_deref().is_some_and(|why| why.contains("403")),
            "origin {origin:?}: {refused:?}"
        );
    }
    let log = server.wait_for_log("the refusals", |log| {
        log.contains("origin=http://evil.example")
    });
    assert!(
        log.contains("WebSocket refused: not from this server's page"),
        "{log}"
    );
    Seat::open(port);
}

#[test]
fn a_student_signs_in_with_the_code_and_their_keys_and_size_move_their_tutor() {
    let (server, _dir) = class_with_code(&[]);
    let port = server.page_port();
    let mut seat = Seat::open(port);
    seat.join("ada", "sunflowers", 80, 24);
    seat.wait_until("the refusal", |seat| told(seat, "refused").is_some());
    assert_eq!(told(&seat, "again"), Some(serde_json::json!(true)));
    assert!(refusal(&seat).contains("join code"));

    seat.join("ada", CODE, 80, 24);
    seat.wait_until("the picker", |seat| seat.screen_text().contains(PICKER));
    assert_eq!(told(&seat, "joined"), Some(serde_json::json!("ada")));
    seat.press("\r");
    seat.wait_until("the first step", |seat| {
        top_line(&seat.screen_text()).contains("· Embedding")
    });
    seat.press("n");
    seat.wait_until("the next step", |seat| {
        top_line(&seat.screen_text()).contains("· Projection")
    });
    // A wider window: the tutor draws for it.
    seat.resize(120, 40);
    seat.wait_until("a 120-column frame", |seat| {
        seat.screen_text()
            .lines()
            .any(|line| line.chars().count() > 80)
    });
    seat.press("q");
    seat.press("q");
    seat.wait_until("the goodbye", |seat| told(seat, "ended").is_some());
    let log = server.wait_for_log("the seat closing", |log| {
        log.contains("browser seat closed")
    });
    assert!(log.contains("sign-in refused: wrong join code"), "{log}");
    assert!(log.contains("student=ada from 127.0.0.1"), "{log}");
}

#[test]
fn join_codes_from_one_address_are_paced_across_its_sockets() {
    let (server, _dir) = class_with_code(&[]);
    let port = server.page_port();
    let mut sockets: Vec<Seat> = (0..3).map(|_| Seat::open(port)).collect();
    for seat in &mut sockets {
        for _ in 0..5 {
            seat.join("mallory", "guess", 80, 24);
        }
    }
    // Fifteen codes from one address: past the burst of ten, they are slowed.
    for seat in &mut sockets {
        seat.wait_until("five refusals", |seat| {
            seat.said
                .iter()
                .filter(|said| said.get("refused").is_some())
                .count()
                == 5
        });
    }
    let log = server.wait_for_log("the pacing", |log| {
        log.contains("sign-ins from this address are slowed")
    });
    let waited = log
        .lines()
        .filter_map(|line| line.split("waited_ms=").nth(1))
        .filter_map(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    // Ten a second is a turn every 100 ms; a code arriving a little after the last turn waits
    // a little less (99 ms was seen). An unpaced code waits 0.
    assert!(waited >= 50, "the longest wait was {waited} ms:\n{log}");
}

#[test]
fn a_host_name_over_plain_http_is_refused_and_an_address_is_served() {
    let server = class(&["--open"]);
    let port = server.page_port();
    let (status, answer) = http(
        port,
        "GET / HTTP/1.1\r\nHost: evil.example:8080\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 421, "{answer}");
    assert!(answer.contains("by this machine's address"), "{answer}");
    // Even when the page's origin would match the name: a rebound name is no way in.
    let (status, _) = http(
        port,
        "GET /ws HTTP/1.1\r\nHost: evil.example:8080\r\nOrigin: http://evil.example:8080\r\n\
         Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    );
    assert_eq!(status, 421);
    // A request in absolute form names its host in the request line, and that name is the
    // one that counts (RFC 9112, 3.2.2), whatever the Host header says.
    for target in ["http://evil.example/", "http://evil.example:8080/ws"] {
        let (status, answer) = http(
            port,
            &format!(
                "GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(status, 421, "{target}: {answer}");
    }
    let (status, _) = http(
        port,
        &format!(
            "GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        ),
    );
    assert_eq!(status, 200);
    let (status, _) = http(
        port,
        &format!("GET / HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(status, 200);
}

#[test]
fn a_browser_that_stops_answering_is_dropped_and_its_place_freed() {
    let server = class(&["--open", "--max-sessions", "1", "--keepalive-seconds", "1"]);
    let port = server.page_port();
    let silent = signed_in(port, "ada");
    // From now on it reads nothing and answers no ping.
    let log = server.wait_for_log("the drop", |log| {
        log.contains("dropped: the browser stopped answering")
    });
    assert!(log.contains("student=ada"), "{log}");
    server.wait_for_log("the seat closing", |log| {
        log.contains("browser seat closed")
    });
    signed_in(port, "grace");
    drop(silent);
}

#[test]
fn a_seat_that_answers_its_pings_stays() {
    let server = class(&["--open", "--keepalive-seconds", "1"]);
    let port = server.page_port();
    let mut seat = signed_in(port, "ada");
    // Reading answers the pings (the client library pongs as it reads), for 5 s: past 3 pings.
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while std::time::Instant::now() < until {
        assert!(!seat.closes_within(Duration::from_millis(200)), "dropped");
    }
    seat.press("\r");
    seat.wait_until("the first step", |seat| {
        top_line(&seat.screen_text()).contains("· Embedding")
    });
    assert!(!server.log().contains("stopped answering"));
}

#[test]
fn six_wrong_codes_close_the_socket_and_the_server_goes_on() {
    let (mut server, _dir) = class_with_code(&[]);
    let port = server.page_port();
    let mut seat = Seat::open(port);
    for _ in 0..6 {
        seat.join("mallory", "guess", 80, 24);
    }
    assert!(
        seat.closes_within(Duration::from_secs(10)),
        "{:?}",
        seat.said
    );
    let refusals = seat
        .said
        .iter()
        .filter(|said| said.get("refused").is_some())
        .count();
    assert_eq!(refusals, 6, "{:?}", seat.said);
    assert_eq!(told(&seat, "again"), Some(serde_json::json!(false)));
    server.assert_still_serving();
    // A classmate still gets in.
    let mut classmate = Seat::open(port);
    classmate.join("grace", CODE, 80, 24);
    classmate.wait_until("the picker", |seat| seat.screen_text().contains(PICKER));
}

#[test]
fn a_name_with_escapes_reaches_the_log_escaped_and_an_empty_name_is_asked_again() {
    let server = class(&["--open"]);
    let port = server.page_port();
    let mut seat = Seat::open(port);
    seat.join("  ", "", 80, 24);
    seat.wait_until("the question", |seat| told(seat, "refused").is_some());
    assert!(refusal(&seat).contains("name"));
    seat.join("eve\x1b]2;PWNED\x07\u{202e}", "", 80, 24);
    seat.wait_until("the picker", |seat| seat.screen_text().contains(PICKER));
    let log = server.wait_for_log("the sign-in", |log| {
        log.contains("how=\"browser\"") || log.contains("how=browser")
    });
    assert!(
        !log.contains('\x1b') && !log.contains('\u{202e}'),
        "{log:?}"
    );
    assert!(
        log.contains(r"eve\u{001b}]2;PWNED\u{0007}\u{202e}"),
        "{log}"
    );
}

#[test]
fn a_message_bigger_than_any_page_sends_closes_the_socket() {
    let server = class(&["--open"]);
    let port = server.page_port();
    let mut seat = signed_in(port, "ada");
    seat.press(&"j".repeat(100 * 1024));
    assert!(seat.closes_within(Duration::from_secs(10)));
    // Something the page never sends closes it too.
    let mut other = Seat::open(port);
    other.send_text("{\"sudo\": true}");
    assert!(other.closes_within(Duration::from_secs(10)));
}

#[test]
fn the_class_size_counts_browser_seats() {
    let server = class(&["--open", "--max-sessions", "1"]);
    let port = server.page_port();
    let first = signed_in(port, "ada");
    let mut second = Seat::open(port);
    second.join("grace", "", 80, 24);
    second.wait_until("the refusal", |seat| told(seat, "refused").is_some());
    assert!(refusal(&second).contains("full"));
    assert!(second.closes_within(Duration::from_secs(10)));
    // When the first leaves, even without a word (its socket just closes), there is room again.
    drop(first);
    server.wait_for_log("the seat closing", |log| {
        log.contains("browser seat closed")
    });
    signed_in(port, "grace");
}

/// A generation lesson of 64 tokens over 4 heads (d_model 64): opened in a moment, and what it
/// reserves is tens of MiB.
fn generation_lesson() -> String {
    let tokens: Vec<String> = (0..64).map(|token| format!("\"t{token}\"")).collect();
    let mut text = format!(
        "format = 2\ntitle = \"Generation, 64 tokens\"\nheads = 4\nmask = \"causal\"\n\
         decode = true\ntokens = [{}]\n\
         embeddings = {{ random = \"normal\", seed = 1, shape = [64, 64] }}\n",
        tokens.join(", ")
    );
    for (key, seed) in [("w_q", 2), ("w_k", 3), ("w_v", 4), ("w_o", 5)] {
        text.push_str(&format!(
            "{key} = {{ random = \"normal\", seed = {seed}, shape = [64, 64] }}\n"
        ));
    }
    text
}

#[test]
fn a_lesson_the_classs_memory_has_no_room_for_is_not_opened_until_a_classmate_leaves() {
    let text = generation_lesson();
    let lesson = attn_tutor::lesson::load_text("gen", None, text.clone())
        .expect("the lesson loads")
        .lesson;
    let mib = 1024 * 1024;
    let seat = attn_tutor::serve::seat_bytes(&lesson);
    // Room for one student on this lesson, not two.
    let limit = (seat + seat / 2).div_ceil(mib);
    let lessons = tempfile::TempDir::new().unwrap();
    std::fs::write(lessons.path().join("gen.toml"), text).unwrap();
    let server = class(&[
        "--open",
        "--lessons",
        lessons.path().to_str().unwrap(),
        "--max-memory",
        &format!("{limit}M"),
    ]);
    let port = server.page_port();
    let open_the_lesson = |seat: &mut Seat| {
        // The folder's lesson is the picker's last.
        seat.press("\x1b[F");
        seat.press("\r");
    };
    let mut first = signed_in(port, "ada");
    open_the_lesson(&mut first);
    first.wait_until("the lesson", |seat| seat.screen_text().contains("Step 1/"));
    let mut second = signed_in(port, "grace");
    open_the_lesson(&mut second);
    second.wait_until("the refusal", |seat| {
        seat.screen_text().contains("gen.toml is not opened")
    });
    let screen = second.screen_text();
    assert!(screen.contains(PICKER), "{screen}");
    // The status line wraps: read its words.
    let words = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    let needed = seat.div_ceil(mib);
    assert!(
        words.contains(&format!(
            "gen.toml is not opened: it may take up to {needed} MiB of the server's memory, \
             and the class has {} MiB left of its {limit} MiB; open a smaller lesson, or try \
             again when a classmate has left theirs",
            (limit * mib - seat) / mib
        )),
        "{screen}"
    );
    // A classmate on a small lesson is not held up by it.
    let mut third = signed_in(port, "alan");
    third.press("\r");
    third.wait_until("the first built-in lesson", |seat| {
        seat.screen_text().contains("Step 1/")
    });
    // The first student leaves (the socket just closes): their room comes back.
    drop(first);
    server.wait_for_log("the seat closing", |log| {
        log.contains("browser seat closed")
    });
    // The session ends a moment after its socket: the student tries again, as one would.
    for _ in 0..20 {
        second.press("\r");
        let tried = std::time::Instant::now();
        second.wait_until("the lesson, or a moment", |seat| {
            seat.screen_text().contains("Step 1/") || tried.elapsed() > Duration::from_millis(500)
        });
        if second.screen_text().contains("Step 1/") {
            return;
        }
    }
    panic!(
        "the room did not come back when the first student left:\n{}",
        second.screen_text()
    );
}

#[test]
fn a_memory_limit_written_wrong_is_refused_with_an_example() {
    for size in ["4", "4T", "8M", "lots", "99999999999G", "1.5G"] {
        let finished = common::classroom::finish({
            let mut command =
                std::process::Command::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
            command.args(["serve", "--open", "--max-memory", size]);
            command
        });
        assert_eq!(finished.status.code(), Some(2), "{size}");
        assert!(
            finished.stderr.contains("--max-memory")
                && finished
                    .stderr
                    .contains("expected a size of memory like 4G (gibibytes) or 512M (mebibytes)"),
            "{size}: {}",
            finished.stderr
        );
    }
}

#[test]
fn a_browser_that_never_asks_or_never_joins_is_dropped_at_its_deadlines() {
    let server = class(&["--open", "--login-seconds", "2"]);
    let port = server.page_port();
    let silent = silent_connection("127.0.0.1", port);
    let mut seat = Seat::open(port);
    assert!(
        seat.closes_within(Duration::from_secs(10)),
        "not dropped at the login deadline"
    );
    assert!(closed_by_the_server(silent));
    let log = server.wait_for_log("both drops", |log| {
        log.contains("dropped: no HTTP request (or TLS handshake) within the handshake deadline")
            && log.contains("dropped: not signed in within the login deadline")
    });
    assert!(!log.contains("tutor started"), "{log}");
}

#[test]
fn browsers_only_with_no_ssh() {
    let server = Server::start(&["--open", "--web", "127.0.0.1:0", "--no-ssh"]);
    // The banner's port is the page's: nothing listens for SSH.
    assert_eq!(server.port, server.page_port());
    let mut seat = Seat::open(server.port);
    seat.join("ada", "", 80, 24);
    seat.wait_until("the picker", |seat| seat.screen_text().contains(PICKER));
}

/// A certificate for 127.0.0.1 and its key, in PEM files in `dir`, and a client that trusts it.
fn certificate(
    dir: &std::path::Path,
) -> (
    std::path::PathBuf,
    std::path::PathBuf,
    Arc<tokio_rustls::rustls::ClientConfig>,
) {
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    // A private key readable by its owner only, as `serve` asks.
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut roots = tokio_rustls::rustls::RootCertStore::empty();
    roots.add(made.cert.der().clone()).unwrap();
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let client = tokio_rustls::rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    (cert, key, Arc::new(client))
}

#[test]
fn with_a_certificate_the_page_and_the_socket_are_https_and_wss() {
    let dir = tempfile::TempDir::new().unwrap();
    let (cert, key, client) = certificate(dir.path());
    let server = class(&[
        "--open",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]);
    let page = server.page();
    assert!(page.starts_with("https://127.0.0.1:"), "{page}");
    let port = server.page_port();
    // Plain HTTP on the TLS port gets nothing.
    let (status, answer) = get(port, "/");
    assert_eq!(status, 0, "plain HTTP answered on the HTTPS port: {answer}");
    // The page's own origin is https.
    let http_origin = format!("http://127.0.0.1:{port}");
    assert!(Seat::connect_with(port, Some(&http_origin), Some(Arc::clone(&client))).is_err());
    let origin = format!("https://127.0.0.1:{port}");
    let mut seat = Seat::connect_with(port, Some(&origin), Some(client)).expect("wss joins");
    seat.join("ada", "", 80, 24);
    seat.wait_until("the picker over wss", |seat| {
        seat.screen_text().contains(PICKER)
    });
}

#[test]
fn failed_tls_handshakes_give_their_places_back() {
    let dir = tempfile::TempDir::new().unwrap();
    let (cert, key, client) = certificate(dir.path());
    let server = class(&[
        "--open",
        "--per-address",
        "4",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]);
    let port = server.page_port();
    // Forty plain-HTTP requests on the TLS port, one after another: each handshake fails at
    // once. Ten times the address's places: a connection that kept its place would make the
    // later ones evict it.
    for index in 0..40 {
        let (status, answer) = get(port, "/");
        assert_eq!(status, 0, "request {index} answered: {answer}");
    }
    // As many ClientHellos as the address has places, stopped half-way: dropped at the
    // handshake deadline.
    let stalled: Vec<std::net::TcpStream> = (0..4)
        .map(|_| {
            let mut hello = silent_connection("127.0.0.1", port);
            hello
                .write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
                .unwrap();
            hello
        })
        .collect();
    for hello in stalled {
        assert!(closed_by_the_server(hello));
    }
    server.wait_for_log("the stalled handshakes dropped", |log| {
        log.matches("no HTTP request (or TLS handshake) within the handshake deadline")
            .count()
            >= 4
    });
    // Every place is free again: four students from the same address sign in, and nobody
    // was ever evicted to make room.
    let origin = format!("https://127.0.0.1:{port}");
    let seats: Vec<Seat> = (0..4)
        .map(|index| {
            let mut seat = Seat::connect_with(port, Some(&origin), Some(Arc::clone(&client)))
                .expect("wss joins");
            seat.join(&format!("student{index}"), "", 80, 24);
            seat.wait_until("the picker over wss", |seat| {
                seat.screen_text().contains(PICKER)
            });
            seat
        })
        .collect();
    assert_eq!(seats.len(), 4);
    let log = server.log();
    assert!(
        !log.contains("evicted"),
        "a failed handshake kept its place until a newcomer evicted it:\n{log}"
    );
}

#[test]
fn a_certificate_that_cannot_be_read_is_named_before_the_class_starts() {
    let dir = tempfile::TempDir::new().unwrap();
    let (cert, key, _) = certificate(dir.path());
    let garbage = dir.path().join("garbage.pem");
    std::fs::File::create(&garbage)
        .unwrap()
        .write_all(b"not a certificate\n")
        .unwrap();
    let serve = |cert: &std::path::Path, key: &std::path::Path| {
        common::classroom::finish({
            let mut command =
                std::process::Command::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
            command
                .args([
                    "serve",
                    "--open",
                    "--listen",
                    "127.0.0.1:0",
                    "--web",
                    "127.0.0.1:0",
                ])
                .arg("--host-key")
                .arg(dir.path().join("host_key"))
                .arg("--tls-cert")
                .arg(cert)
                .arg("--tls-key")
                .arg(key);
            command
        })
    };
    let finished = serve(&garbage, &key);
    assert!(!finished.status.success());
    assert!(
        finished.stderr.contains("--tls-cert") && finished.stderr.contains("garbage.pem"),
        "{}",
        finished.stderr
    );
    assert!(
        finished.stderr.contains("BEGIN CERTIFICATE"),
        "{}",
        finished.stderr
    );
    let finished = serve(&cert, &garbage);
    assert!(!finished.status.success());
    assert!(
        finished.stderr.contains("--tls-key") && finished.stderr.contains("garbage.pem"),
        "{}",
        finished.stderr
    );
    // A key that is not the certificate's.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let (_, other_key, _) = certificate(&other);
    let finished = serve(&cert, &other_key);
    assert!(!finished.status.success());
    assert!(
        finished.stderr.contains("do not go together"),
        "{}",
        finished.stderr
    );
}

#[test]
fn a_tls_key_others_can_read_or_a_device_given_for_a_pem_file_is_refused_at_start_up() {
    let dir = tempfile::TempDir::new().unwrap();
    let (cert, key, _) = certificate(dir.path());
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let readable = dir.path().join("readable-key.pem");
    std::fs::copy(key, &readable).unwrap();
    std::fs::set_permissions(&readable, std::fs::Permissions::from_mode(0o644)).unwrap();
    let readable = readable.to_str().unwrap();
    for (files, said) in [
        (
            [cert, "/dev/zero"],
            "--tls-key /dev/zero: not a regular file (it is a character device); expected a \
             PEM private key"
                .to_string(),
        ),
        (
            ["/dev/urandom", key],
            "--tls-cert /dev/urandom: not a regular file (it is a character device); expected a \
             PEM file of -----BEGIN CERTIFICATE----- blocks"
                .to_string(),
        ),
        (
            [cert, readable],
            format!(
                "UNPROTECTED PRIVATE KEY FILE: --tls-key {readable} has mode 0644, so others on \
                 this machine can read it and pretend to be this server; it must be readable by \
                 its owner only\nhelp: chmod 600 {readable}"
            ),
        ),
    ] {
        let served = common::classroom::serve_bounded(&[
            "--open",
            "--no-ssh",
            "--web",
            "127.0.0.1:0",
            "--tls-cert",
            files[0],
            "--tls-key",
            files[1],
        ]);
        assert!(!served.status.success(), "{files:?}: serve ran");
        assert!(
            !served.stdout.contains("listening"),
            "{files:?}: {}",
            served.stdout
        );
        assert!(
            served.stderr.contains(&said),
            "{files:?}: the error says {said:?}:\n{}",
            served.stderr
        );
    }
}

#[test]
fn authorized_keys_are_for_ssh_only_and_say_so() {
    let dir = tempfile::TempDir::new().unwrap();
    let keys = dir.path().join("authorized_keys");
    std::fs::write(
        &keys,
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGk2YXyD5xK7pVmVZz7QWqj8o8b0QxgVq8L0Yg1b3v8F ada\n",
    )
    .unwrap();
    let finished = common::classroom::finish({
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--web", "127.0.0.1:0"])
            .arg("--authorized-keys")
            .arg(&keys);
        command
    });
    assert!(!finished.status.success());
    assert!(
        finished
            .stderr
            .contains("--authorized-keys is for SSH only"),
        "{}",
        finished.stderr
    );
    assert!(
        finished.stderr.contains("--password-file"),
        "{}",
        finished.stderr
    );
}

/// The banner `serve --open` prints with `args`: its lines until a moment passes with none
/// (the server is stopped then).
fn banner(args: &[&str]) -> String {
    use std::io::BufRead;
    let dir = tempfile::TempDir::new().unwrap();
    let mut child = common::classroom::KillOnDrop(
        std::process::Command::new(assert_cmd::cargo::cargo_bin!("attn-tutor"))
            .args(["serve", "--open"])
            .args(args)
            .env("XDG_DATA_HOME", dir.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let (lines, banner) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines.send(line);
        }
    });
    let mut shown = banner
        .recv_timeout(common::pty::PATIENCE)
        .expect("a banner");
    while let Ok(line) = banner.recv_timeout(Duration::from_millis(500)) {
        shown.push('\n');
        shown.push_str(&line);
    }
    shown
}

#[test]
fn the_banner_says_when_the_room_cannot_reach_an_address() {
    let shown = banner(&["--listen", "127.0.0.1:0", "--web", "127.0.0.1:0"]);
    assert!(
        shown.contains("students open the page:  http://127.0.0.1:"),
        "{shown}"
    );
    assert!(
        shown.contains("note: only this machine can reach the addresses above; --listen 0.0.0.0:"),
        "{shown}"
    );
    assert!(shown.contains(" and --web 0.0.0.0:"), "{shown}");
    assert!(shown.contains(" let the room join"), "{shown}");
}

#[test]
fn an_address_written_wrong_is_refused_with_an_example() {
    for (flag, address) in [
        ("--web", "localhost:8080"),
        ("--web", "8080"),
        ("--listen", "0.0.0.0"),
    ] {
        let finished = common::classroom::finish({
            let mut command =
                std::process::Command::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
            command.args(["serve", "--open", flag, address]);
            command
        });
        assert_eq!(finished.status.code(), Some(2), "{flag} {address}");
        assert!(
            finished.stderr.contains("like 0.0.0.0:8080"),
            "{flag} {address}: {}",
            finished.stderr
        );
    }
    // --no-ssh with what only SSH uses.
    let finished = common::classroom::finish({
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
        command.args([
            "serve",
            "--open",
            "--web",
            "127.0.0.1:0",
            "--no-ssh",
            "--listen",
            "0.0.0.0:2222",
        ]);
        command
    });
    assert_eq!(finished.status.code(), Some(2));
    assert!(finished.stderr.contains("--listen"), "{}", finished.stderr);
}

#[test]
fn forty_students_behind_one_address_opening_the_page_at_once_all_get_in() {
    let server = class(&["--open"]);
    let port = server.page_port();
    let students: Vec<_> = (0..40)
        .map(|index| {
            std::thread::spawn(move || {
                let (status, _) = get(port, "/");
                assert_eq!(status, 200, "student {index}'s page");
                signed_in(port, &format!("student{index}"))
            })
        })
        .collect();
    let seats: Vec<Seat> = students
        .into_iter()
        .map(|student| student.join().expect("every student gets in"))
        .collect();
    assert_eq!(seats.len(), 40);
    assert!(!server.log().contains("evicted"), "{}", server.log());
}
