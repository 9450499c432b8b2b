//! Load benchmark of the classroom: the real `attn-tutor serve --web` in its own process, and N
//! students (50 by default) on loopback, each with its own tutor: half of them (`--browsers N`
//! sets how many) in a browser seat, with a WebSocket client (tokio-tungstenite) speaking the
//! page's messages, the others with a russh client and pty. Every
//! student opens the first lesson and then presses cursor moves (h j k l) and step changes
//! (n p), one key every 50–100 ms, jittered. It reports the key-to-frame latency (from sending
//! a key to the end of the frame it caused; the Enter that opens the lesson is not counted), the
//! bytes of terminal output each key brought back (channel data, before SSH's framing), the CPU
//! time of the server and the clients while typing, and the server's memory per session
//! (VmRSS from /proc, so Linux only). The goal: p99 under 50 ms on a 2-core machine.
//!
//! Run with `cargo bench --bench classroom` (50 students × 100 keys, about ten seconds).
//! Without `--bench` (`cargo test --benches`, or `-- --test`) it is a quick smoke run of 3
//! students × 10 keys. `--sessions N` and `--keys N` after `--`, or `ATTN_BENCH_SESSIONS` and
//! `ATTN_BENCH_KEYS`, set the counts in either mode. `--lesson FILE` (or `ATTN_BENCH_LESSON`)
//! offers that lesson too and has every student open it instead (End, then Enter in the
//! picker): the server's memory per student at a large lesson. `--browsers N` (or
//! `ATTN_BENCH_BROWSERS`) puts N of the students in browser seats (default: half).
//! `--flood N` (or `ATTN_BENCH_FLOOD`) first has N more browser seats open the scaling lab and
//! send 1,000 `r` each in one message, as an attacker would, while the class joins and types:
//! the class's join and key times under that flood. With `--sustain SECS` (or
//! `ATTN_BENCH_SUSTAIN`) the flooding seats are 200×60 and keep flooding instead: each sends
//! 60 KB messages of `r]` (a new seed and one more key a row: a heavier sweep each time), one
//! after another for SECS seconds, reading its frames as they come; the class joins 2 s into it.
//! `ATTN_BENCH_PORTS=N` has the server listen on ports N (SSH) and N + 1 (the page) instead of
//! any free ones.
//! `ATTN_BENCH_SERVER=PATH` runs that
//! attn-tutor binary as the server instead of this build's (to measure an older commit).
//! `--walk` (or `ATTN_BENCH_WALK=1`, with `--lesson`) has every student walk the lesson instead of
//! pressing random keys: every step in turn (`n`), and on a step of generation every token, on
//! the online softmax every tile (`)` and `(`), a frame awaited after each key. The server's
//! memory is read before anyone joins, with everyone on the picker, at its peak while they walk,
//! once they have walked, and 0.5 s, 5 s and 15 s after they have all left: what a seat costs at its
//! most, and what the server gives back when it goes.
//! `--class` (or `ATTN_BENCH_CLASS=1`) is a class led by a presenter instead: `serve --present`
//! in a pseudo-terminal, the bench typing the presenter's step changes every 2 s, and every
//! student following, a cursor key about once a second each (`--keys N` of them): the times from
//! a student's key to their next frame, and from the presenter's key to each follower's frame
//! showing the new step (see `class`). Then the class's poll (see `class_poll`): the presenter
//! goes to the Softmax step and asks for the cell under the cursor (`a`); once every seat shows
//! the question, each student types an answer (mostly the right value, some a common slip,
//! some any number; a key every 40–120 ms, the Enter within a second of the start) and the
//! presenter's screen must count them all ("500 of 500 answered"); then the presenter reveals
//! (`a`), and the bench reports the time from that key to each seat's first frame showing the
//! reveal (goal: p99 ≤ 100 ms), with the question's and each answer key's times, and checks
//! the reveal's count of right answers against its own.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use futures_util::{SinkExt, StreamExt};
use russh::client::{self, Handle, Msg};
use russh::keys::PublicKeyOrCertificate;
use russh::{Channel, ChannelMsg, Disconnect};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use tempfile::TempDir;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// Every frame the server draws ends by leaving synchronized-output mode (see `Painter::draw`).
const FRAME_END: &[u8] = b"\x1b[?2026l";

/// The longest any single wait may take: a connection, a sign-in, a frame.
const PATIENCE: Duration = Duration::from_secs(20);

/// A student's pause between keys, in milliseconds: somebody reading the screen as they go.
const PAUSE_MS: (u64, u64) = (50, 100);

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("classroom bench failed: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let (sessions, keys, browsers) = counts()?;
    if class_mode() {
        return class(sessions, keys, browsers);
    }
    let lesson = lesson()?;
    let flood = flood_seats()?;
    let sustained = sustain()?;
    let walk = match (walking(), &lesson) {
        (false, _) => None,
        (true, Some(path)) => Some(Arc::new(Walk::of(path)?)),
        (true, None) => bail!("--walk walks the lesson of --lesson FILE: give one"),
    };
    let server = Server::start(sessions + flood, lesson.as_deref())?;
    // The client shares the machine (and its cores) with the server, as a loopback test must.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(classroom(
        &server,
        sessions,
        keys,
        browsers,
        lesson.is_some(),
        (flood, sustained),
        walk,
    ));
    let log = server.log();
    drop(server);
    let report = outcome?;
    report.print(&log);
    if let Some(path) = &lesson {
        let reserved = attn_tutor::serve::seat_bytes(&load(path)?);
        println!(
            "each student on the lesson reserved {:.1} MiB of the class's --max-memory",
            reserved as f64 / (1024.0 * 1024.0)
        );
    }
    ensure!(
        report.failures.is_empty(),
        "{} of {sessions} students failed",
        report.failures.len()
    );
    Ok(())
}

/// Students and keys per student. `cargo bench` passes `--bench`; any other run (`cargo test
/// --benches`, `--test`) is a smoke run that must be quick.
fn counts() -> anyhow::Result<(usize, usize, usize)> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let full = args.iter().any(|arg| arg == "--bench") && !args.iter().any(|arg| arg == "--test");
    let setting = |flag: &str, variable: &str, full_default: usize, quick_default: usize| {
        let given = args
            .iter()
            .position(|arg| arg == flag)
            .map(|at| args.get(at + 1).cloned().unwrap_or_default())
            .or_else(|| std::env::var(variable).ok());
        match given {
            Some(text) => text
                .parse::<usize>()
                .ok()
                .filter(|&count| count > 0)
                .with_context(|| {
                    format!("{flag} / {variable} wants a positive count, not {text:?}")
                }),
            None => Ok(if full { full_default } else { quick_default }),
        }
    };
    let sessions = setting("--sessions", "ATTN_BENCH_SESSIONS", 50, 3)?;
    let keys = setting("--keys", "ATTN_BENCH_KEYS", 100, 10)?;
    let browsers = match args
        .iter()
        .position(|arg| arg == "--browsers")
        .map(|at| args.get(at + 1).cloned().unwrap_or_default())
        .or_else(|| std::env::var("ATTN_BENCH_BROWSERS").ok())
    {
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|&count| count <= sessions)
            .with_context(|| {
                format!("--browsers / ATTN_BENCH_BROWSERS wants 0 to {sessions}, not {text:?}")
            })?,
        None => sessions.div_ceil(2),
    };
    Ok((sessions, keys, browsers))
}

/// Seats that flood the lab before the class joins (`--flood N`); none by default.
fn flood_seats() -> anyhow::Result<usize> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let given = args
        .iter()
        .position(|arg| arg == "--flood")
        .map(|at| args.get(at + 1).cloned().unwrap_or_default())
        .or_else(|| std::env::var("ATTN_BENCH_FLOOD").ok());
    given.map_or(Ok(0), |text| {
        text.parse::<usize>()
            .ok()
            .with_context(|| format!("--flood / ATTN_BENCH_FLOOD wants a count, not {text:?}"))
    })
}

/// The redraws each flooding seat sends, in one message.
static REDRAWS: [u8; 1000] = [b'r'; 1000];

/// How long the flooding seats keep flooding (`--sustain SECS`); `None`: one message each.
fn sustain() -> anyhow::Result<Option<Duration>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let given = args
        .iter()
        .position(|arg| arg == "--sustain")
        .map(|at| args.get(at + 1).cloned().unwrap_or_default())
        .or_else(|| std::env::var("ATTN_BENCH_SUSTAIN").ok());
    given
        .map(|text| {
            text.parse::<f64>()
                .ok()
                .filter(|seconds| seconds.is_finite() && *seconds > 0.0 && *seconds <= 3600.0)
                .map(Duration::from_secs_f64)
                .with_context(|| {
                    format!(
                        "--sustain / ATTN_BENCH_SUSTAIN wants seconds (0 to 3600), not {text:?}"
                    )
                })
        })
        .transpose()
}

/// A sustained flooding seat's terminal.
const FLOOD_SIZE: (u16, u16) = (200, 60);

/// What one sustained flooding seat did.
#[derive(Debug, Default)]
struct Flooded {
    messages: usize,
    frames: usize,
}

/// `seats` browser seats at `FLOOD_SIZE` in the scaling lab, each sending 60 KB messages of
/// `r]` for `time` and reading whatever frames come: the tasks, each ending with what it did.
async fn sustained_flood(
    web_port: u16,
    seats: usize,
    time: Duration,
) -> anyhow::Result<Vec<tokio::task::JoinHandle<anyhow::Result<Flooded>>>> {
    let message: Vec<u8> = b"r]".repeat(30_000);
    let mut flooding = Vec::new();
    for index in 0..seats {
        let mut request = format!("ws://127.0.0.1:{web_port}/ws").into_client_request()?;
        request
            .headers_mut()
            .insert("Origin", format!("http://127.0.0.1:{web_port}").parse()?);
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", web_port)).await?;
        stream.set_nodelay(true)?;
        // tungstenite zeroes its whole read buffer (128 KiB by default) before every read, and a
        // seat's socket is read after every frame: work no browser does, which at a class's
        // step change cost the bench's 250 seats more than their frames did.
        let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .read_buffer_size(4096);
        let (mut socket, _) =
            tokio_tungstenite::client_async_with_config(request, stream, Some(config)).await?;
        let join = serde_json::json!({
            "join": { "name": format!("flood{index}"), "code": "",
                      "columns": FLOOD_SIZE.0, "rows": FLOOD_SIZE.1 }
        });
        socket.send(Message::Text(join.to_string().into())).await?;
        let mut seen = Vec::new();
        // The picker, then the lab.
        for (key, shows) in [(None, &b"\x1b[?2026l"[..]), (Some(&b"L"[..]), &b"seed"[..])] {
            if let Some(key) = key {
                socket.send(Message::Binary(key.to_vec().into())).await?;
                seen.clear();
            }
            within("a flooding seat's frame", async {
                while find(&seen, shows).is_none() {
                    match socket.next().await {
                        Some(Ok(Message::Binary(data))) => seen.extend_from_slice(&data),
                        Some(Ok(_)) => {}
                        _ => bail!("the server ended a flooding seat"),
                    }
                }
                Ok(())
            })
            .await?;
        }
        flooding.push(socket);
    }
    let until = Instant::now() + time;
    Ok(flooding
        .into_iter()
        .map(|socket| {
            let message = message.clone();
            tokio::spawn(async move {
                let (mut sink, mut stream) = socket.split();
                let frames = Arc::new(std::sync::atomic::AtomicUsize::new(0));
                let counted = Arc::clone(&frames);
                let reading = tokio::spawn(async move {
                    while let Some(Ok(message)) = stream.next().await {
                        if let Message::Binary(data) = message {
                            let drawn = data.windows(FRAME_END.len()).filter(|w| *w == FRAME_END);
                            counted.fetch_add(drawn.count(), std::sync::atomic::Ordering::SeqCst);
                        }
                    }
                });
                let mut flooded = Flooded::default();
                while Instant::now() < until {
                    let sent = tokio::time::timeout_at(
                        until.into(),
                        sink.send(Message::Binary(message.clone().into())),
                    )
                    .await;
                    match sent {
                        Ok(Ok(())) => flooded.messages += 1,
                        Ok(Err(error)) => return Err(error.into()),
                        Err(_) => break,
                    }
                }
                // The frames drawn while it flooded; the seat is left as it is (it leaves when
                // the bench ends).
                flooded.frames = frames.load(std::sync::atomic::Ordering::SeqCst);
                reading.abort();
                drop(sink);
                Ok(flooded)
            })
        })
        .collect())
}

/// `seats` browser seats in the scaling lab, each having sent `REDRAWS`: kept (and not read)
/// while the class works.
async fn flood(web_port: u16, seats: usize) -> anyhow::Result<Vec<Student>> {
    let mut flooding = Vec::new();
    for index in 0..seats {
        let (mut seat, _) = Student::join(0, Some(web_port), format!("flood{index}")).await?;
        seat.press(b"L").await.context("opening the lab")?;
        flooding.push(seat);
    }
    for seat in &mut flooding {
        seat.send(&REDRAWS).await?;
    }
    Ok(flooding)
}

/// Whether the students walk the lesson (`--walk`) rather than press random keys.
fn walking() -> bool {
    std::env::args().skip(1).any(|arg| arg == "--walk")
        || std::env::var("ATTN_BENCH_WALK").is_ok_and(|value| value == "1")
}

/// What walking a lesson takes: each step's positions (tokens of a step of generation, tiles of
/// the online softmax; none elsewhere), and where the tutor opens them.
struct Walk {
    /// For each step, in order: whether `(` `)` move the token there (else the tile), and how
    /// many positions there are (0 on a step without them).
    steps: Vec<(bool, usize)>,
    /// The token the tutor opens at (the lesson's focus).
    first_token: usize,
}

/// The lesson of `--lesson`, as the server loads it.
fn load(path: &Path) -> anyhow::Result<attn_tutor::lesson::Lesson> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let loaded = attn_tutor::lesson::load_text("bench", Some(path.to_path_buf()), text)
        .map_err(|error| anyhow::anyhow!("{}: {}", path.display(), error.first_line()))?;
    Ok(loaded.lesson)
}

impl Walk {
    fn of(path: &Path) -> anyhow::Result<Walk> {
        let lesson = &load(path)?;
        let plan = attn_tutor::pipeline::Plan::new(lesson.shape());
        let tiles = lesson.key_len().div_ceil(lesson.tile.max(1));
        let steps = lesson
            .steps()
            .into_iter()
            .map(|step| {
                if step.is_at_a_token(&plan) {
                    (true, lesson.seq_len())
                } else if step.is_at_a_tile(&plan) {
                    (false, tiles)
                } else {
                    (true, 0)
                }
            })
            .collect();
        Ok(Walk {
            steps,
            first_token: lesson.focus.unwrap_or(0),
        })
    }

    fn keys(&self) -> usize {
        let moves: usize = self.steps.iter().map(|&(_, count)| 2 * count).sum();
        moves + self.steps.len()
    }
}

/// The lesson every student opens, when not the first built-in one.
fn lesson() -> anyhow::Result<Option<PathBuf>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let given = args
        .iter()
        .position(|arg| arg == "--lesson")
        .map(|at| args.get(at + 1).cloned().unwrap_or_default())
        .or_else(|| std::env::var("ATTN_BENCH_LESSON").ok());
    given
        .map(|path| {
            let path = PathBuf::from(path);
            ensure!(path.is_file(), "--lesson {}: no such file", path.display());
            Ok(path)
        })
        .transpose()
}

/// `attn-tutor serve --open` on a free loopback port, with a new host key in a temporary folder.
/// Killed when dropped, and on SIGINT, SIGTERM or SIGHUP, so no run leaves it behind.
struct Server {
    child: Arc<Mutex<Child>>,
    pid: u32,
    port: u16,
    /// The browser seat's port.
    web_port: u16,
    /// Its stderr (the log) so far.
    log: Arc<Mutex<Vec<String>>>,
    _dir: TempDir,
}

impl Server {
    fn start(sessions: usize, lesson: Option<&Path>) -> anyhow::Result<Server> {
        let dir = TempDir::new()?;
        // Room for everyone: the limits are the server's to test elsewhere.
        let limit = sessions.max(200).to_string();
        // Another build of the server, to compare with (an older commit's, say).
        let binary = std::env::var_os("ATTN_BENCH_SERVER").map_or_else(
            || PathBuf::from(env!("CARGO_BIN_EXE_attn-tutor")),
            PathBuf::from,
        );
        let mut serve = Command::new(binary);
        serve.arg("serve");
        if let Some(lesson) = lesson {
            // Alone in a folder, it is the picker's last entry.
            let folder = dir.path().join("lessons");
            std::fs::create_dir(&folder)?;
            std::fs::copy(lesson, folder.join("bench.toml"))
                .with_context(|| format!("cannot copy {}", lesson.display()))?;
            serve.arg("--lessons").arg(folder);
        }
        let mut child = serve
            .args([
                "--open",
                "--listen",
                &listen("ssh"),
                "--web",
                &listen("web"),
            ])
            .arg("--host-key")
            .arg(dir.path().join("host_key"))
            .args(["--max-sessions", &limit, "--per-address", &limit])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot start attn-tutor serve")?;
        let stdout = child.stdout.take().context("the server's stdout")?;
        let stderr = child.stderr.take().context("the server's stderr")?;
        let pid = child.id();
        let child = Arc::new(Mutex::new(child));
        let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
        let (doomed, folder) = (Arc::clone(&child), dir.path().to_path_buf());
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                kill(&doomed);
                let _ = std::fs::remove_dir_all(folder);
                std::process::exit(128 + signal);
            }
        });
        let mut server = Server {
            child,
            pid,
            port: 0,
            web_port: 0,
            log: Arc::new(Mutex::new(Vec::new())),
            _dir: dir,
        };
        let log = Arc::clone(&server.log);
        let logging = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                log.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(line);
            }
        });
        let (lines, banner) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });
        let first = match banner.recv_timeout(PATIENCE) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) => bail!(
                "attn-tutor serve printed no banner within {PATIENCE:?}; its log:\n{}",
                server.log().join("\n")
            ),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // It ended: its whole log is there once stderr is closed.
                let status = server.child.lock().map(|mut child| child.wait());
                let status = match status {
                    Ok(Ok(status)) => status.to_string(),
                    _ => "unknown status".to_string(),
                };
                let _ = logging.join();
                bail!(
                    "attn-tutor serve ended before listening ({status}); its log:\n{}",
                    server.log().join("\n")
                )
            }
        };
        server.port = first
            .strip_prefix("attn-tutor classroom listening on 127.0.0.1:")
            .and_then(|port| port.trim().parse().ok())
            .with_context(|| format!("the server's banner names no port: {first:?}"))?;
        let page = "students open the page:  http://127.0.0.1:";
        let web = loop {
            let line = banner
                .recv_timeout(PATIENCE)
                .context("the server's banner names no page for browsers")?;
            if let Some(rest) = line.strip_prefix(page) {
                break rest.trim_end_matches('/').to_string();
            }
        };
        server.web_port = web
            .parse()
            .with_context(|| format!("the page's address names no port: {web:?}"))?;
        Ok(server)
    }

    fn log(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The server's resident memory now, and its peak.
    fn memory(&self) -> anyhow::Result<Memory> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid))
            .context("cannot read the server's /proc status (is this Linux?)")?;
        let field = |name: &str| -> anyhow::Result<u64> {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
                .with_context(|| format!("no {name} in /proc/{}/status", self.pid))
        };
        Ok(Memory {
            rss_kib: field("VmRSS:")?,
            hwm_kib: field("VmHWM:")?,
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        kill(&self.child);
    }
}

fn kill(child: &Mutex<Child>) {
    let mut child = child.lock().unwrap_or_else(PoisonError::into_inner);
    if let Ok(None) = child.try_wait() {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The machine's count of connections dropped because a listen queue was full (each one costs
/// its client a SYN retry, a second later). System-wide: other programs' listeners count too.
fn listen_overflows() -> Option<u64> {
    let netstat = std::fs::read_to_string("/proc/net/netstat").ok()?;
    let mut tcp_ext = netstat.lines().filter(|line| line.starts_with("TcpExt:"));
    let (names, values) = (tcp_ext.next()?, tcp_ext.next()?);
    let at = names
        .split_whitespace()
        .position(|name| name == "ListenOverflows")?;
    values.split_whitespace().nth(at)?.parse().ok()
}

/// The user and system CPU time process `pid` ("self" for this one) has used, all threads.
fn cpu_time(pid: &str) -> anyhow::Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // After the command name in parentheses, utime and stime are the 12th and 13th fields.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |at: usize| -> anyhow::Result<u64> {
        let field = fields.get(at).context("a short /proc stat")?;
        Ok(field.parse()?)
    };
    // Linux reports them in USER_HZ ticks, which is 100 on every common architecture.
    Ok(Duration::from_millis((ticks(11)? + ticks(12)?) * 10))
}

#[derive(Debug, Clone, Copy)]
struct Memory {
    rss_kib: u64,
    hwm_kib: u64,
}

/// The client side: any host key will do, the server was made a moment ago.
struct Trusting;

impl client::Handler for Trusting {
    type Error = russh::Error;

    async fn check_server_key(&mut self, _: &PublicKeyOrCertificate) -> Result<bool, Self::Error> {
        Ok(true)
    }
}

/// How a student is connected: an SSH channel, or a browser seat's WebSocket.
enum Seat {
    Ssh {
        handle: Handle<Trusting>,
        channel: Channel<Msg>,
    },
    Web(WebSocketStream<tokio::net::TcpStream>),
}

/// One connected student, on the tutor's screen.
struct Student {
    name: String,
    seat: Seat,
    /// Data read past the end of the last frame.
    pending: Vec<u8>,
    /// The student's terminal, as the frames so far have drawn it.
    screen: vt100::Parser,
    /// Whether frames are drawn into `screen`. A class's followers, once on the lesson, only
    /// look for the step in each frame's bytes: their terminals are the students' own
    /// machines' work, not the server's, and parsing 500 of them here took the cores the
    /// server is measured on.
    parse: bool,
}

impl Student {
    /// Connects (over SSH, or as a browser seat on `web_port`), signs in as `name` on an 80×24
    /// terminal; returns once the first frame (the lesson picker) has arrived.
    async fn join(
        port: u16,
        web_port: Option<u16>,
        name: String,
    ) -> anyhow::Result<(Student, Duration)> {
        let started = Instant::now();
        let seat = match web_port {
            Some(web_port) => within("joining", Student::browse(web_port, &name)).await?,
            None => within("joining", Student::connect(port, &name)).await?,
        };
        let mut student = Student {
            name,
            seat,
            pending: Vec::new(),
            screen: vt100::Parser::new(24.try_into()?, 80.try_into()?, 0),
            parse: true,
        };
        student.frame().await.context("waiting for the picker")?;
        Ok((student, started.elapsed()))
    }

    async fn connect(port: u16, name: &str) -> anyhow::Result<Seat> {
        let config = Arc::new(client::Config {
            // As OpenSSH does for interactive sessions: a key must not wait for Nagle.
            nodelay: true,
            ..Default::default()
        });
        let mut handle = client::connect(config, ("127.0.0.1", port), Trusting).await?;
        ensure!(
            handle.authenticate_none(name).await?.success(),
            "the open server refused to sign in"
        );
        let channel = handle.channel_open_session().await?;
        channel
            .request_pty(true, "xterm-256color", 80, 24, 0, 0, &[])
            .await?;
        channel.request_shell(true).await?;
        Ok(Seat::Ssh { handle, channel })
    }

    /// A browser seat, as the page makes one: the socket from the page's origin, then the join.
    async fn browse(port: u16, name: &str) -> anyhow::Result<Seat> {
        let mut request = format!("ws://127.0.0.1:{port}/ws").into_client_request()?;
        request
            .headers_mut()
            .insert("Origin", format!("http://127.0.0.1:{port}").parse()?);
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
        // As browsers do for WebSockets.
        stream.set_nodelay(true)?;
        // tungstenite zeroes its whole read buffer (128 KiB by default) before every read, and a
        // seat's socket is read after every frame: work no browser does, which at a class's
        // step change cost the bench's 250 seats more than their frames did.
        let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .read_buffer_size(4096);
        let (mut socket, _) =
            tokio_tungstenite::client_async_with_config(request, stream, Some(config)).await?;
        let join = serde_json::json!({
            "join": { "name": name, "code": "", "columns": 80, "rows": 24 }
        });
        socket.send(Message::Text(join.to_string().into())).await?;
        Ok(Seat::Web(socket))
    }

    /// Reads up to the end of the next frame, and returns the frame.
    async fn frame(&mut self) -> anyhow::Result<Vec<u8>> {
        loop {
            if let Some(at) = find(&self.pending, FRAME_END) {
                let rest = self.pending.split_off(at + FRAME_END.len());
                let frame = std::mem::replace(&mut self.pending, rest);
                if self.parse {
                    self.screen.process(&frame);
                }
                return Ok(frame);
            }
            match &mut self.seat {
                Seat::Ssh { channel, .. } => {
                    let message =
                        within("waiting for a frame", async { Ok(channel.wait().await) }).await?;
                    match message {
                        Some(ChannelMsg::Data { data }) => self.pending.extend_from_slice(&data),
                        Some(ChannelMsg::Failure) => {
                            bail!("the server refused the pty or the shell")
                        }
                        Some(ChannelMsg::Eof | ChannelMsg::Close) | None => {
                            bail!("the server ended the session")
                        }
                        Some(_) => {}
                    }
                }
                Seat::Web(socket) => {
                    let message =
                        within("waiting for a frame", async { Ok(socket.next().await) }).await?;
                    match message {
                        Some(Ok(Message::Binary(data))) => self.pending.extend_from_slice(&data),
                        Some(Ok(Message::Text(said))) if said.contains("refused") => {
                            bail!("the server refused the browser seat: {said}")
                        }
                        Some(Ok(Message::Close(_))) | Some(Err(_)) | None => {
                            bail!("the server ended the browser seat")
                        }
                        Some(Ok(_)) => {}
                    }
                }
            }
        }
    }

    /// Sends a key and waits for the frame it causes: the time that took, and the frame.
    async fn press(&mut self, key: &'static [u8]) -> anyhow::Result<(Duration, Vec<u8>)> {
        let sent = Instant::now();
        self.send(key).await?;
        let frame = self.frame().await?;
        Ok((sent.elapsed(), frame))
    }

    /// Sends keys without waiting for a frame.
    async fn send(&mut self, key: &'static [u8]) -> anyhow::Result<()> {
        match &mut self.seat {
            Seat::Ssh { channel, .. } => {
                within("sending a key", async {
                    Ok(channel.data_bytes(key).await?)
                })
                .await?
            }
            Seat::Web(socket) => {
                within("sending a key", async {
                    Ok(socket.send(Message::Binary(key.to_vec().into())).await?)
                })
                .await?
            }
        }
        Ok(())
    }

    fn in_browser(&self) -> bool {
        matches!(self.seat, Seat::Web(_))
    }

    async fn leave(self) {
        match self.seat {
            Seat::Ssh { handle, .. } => {
                let _ = handle
                    .disconnect(Disconnect::ByApplication, "class over", "en")
                    .await;
            }
            Seat::Web(mut socket) => {
                let _ = socket.close(None).await;
            }
        }
    }
}

/// `future`, or an error once `PATIENCE` is up: no wait may hang the bench.
async fn within<T>(
    what: &str,
    future: impl Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    tokio::time::timeout(PATIENCE, future)
        .await
        .map_err(|_| anyhow::anyhow!("{what}: nothing within {PATIENCE:?}"))?
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Cursor,
    Step,
    /// `(` or `)`: a step of generation's next token, or the online softmax's next tile.
    Position,
}

/// One key press: what it was, from which seat, how long until its frame had arrived, the
/// frame's size.
#[derive(Debug, Clone, Copy)]
struct Sample {
    kind: Kind,
    browser: bool,
    latency: Duration,
    bytes: usize,
}

/// What one student measured.
#[derive(Default)]
struct Run {
    samples: Vec<Sample>,
    /// Step changes whose frame did not show the step expected.
    wrong_steps: usize,
}

/// SplitMix64: a seeded, dependency-free source of jitter and key choices.
struct Jitter(u64);

impl Jitter {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % bound
    }
}

/// The step a frame's header shows ("Step 3/6 · Scores"), as (3, 6).
fn step_shown(frame: &[u8]) -> Option<(u64, u64)> {
    let text = String::from_utf8_lossy(frame);
    let (_, rest) = text.split_once("Step ")?;
    let (number, rest) = rest.split_once('/')?;
    let total: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((number.parse().ok()?, total.parse().ok()?))
}

/// Opens the first lesson with Enter (or the last, with End first), then presses `keys` keys with a student's pauses: three
/// cursor moves to one step change, steps kept within the lesson so that every key changes
/// the screen.
async fn drive(
    student: &mut Student,
    keys: usize,
    seed: u64,
    last: bool,
    walk: Option<Arc<Walk>>,
) -> anyhow::Result<Run> {
    let mut jitter = Jitter(seed);
    // Students do not press in lockstep.
    tokio::time::sleep(Duration::from_millis(jitter.below(PAUSE_MS.1))).await;
    if last {
        student
            .press(b"\x1b[F")
            .await
            .context("choosing the last lesson")?;
    }
    let (_, frame) = student.press(b"\r").await.context("opening the lesson")?;
    let (mut step, steps) =
        step_shown(&frame).context("the lesson's first frame shows no \"Step 1/N\"")?;
    if let Some(walk) = walk {
        return walk_lesson(student, &walk, step, steps).await;
    }
    let mut run = Run::default();
    for _ in 0..keys {
        let pause = PAUSE_MS.0 + jitter.below(PAUSE_MS.1 - PAUSE_MS.0 + 1);
        tokio::time::sleep(Duration::from_millis(pause)).await;
        let (kind, key): (Kind, &'static [u8]) = if jitter.below(4) == 0 {
            let forward = step == 1 || (step < steps && jitter.below(2) == 0);
            step = if forward { step + 1 } else { step - 1 };
            (Kind::Step, if forward { b"n" } else { b"p" })
        } else {
            let keys: [&'static [u8]; 4] = [b"h", b"j", b"k", b"l"];
            (Kind::Cursor, keys[jitter.below(4) as usize])
        };
        let (latency, frame) = student.press(key).await?;
        if kind == Kind::Step && step_shown(&frame).map(|(shown, _)| shown) != Some(step) {
            run.wrong_steps += 1;
        }
        run.samples.push(Sample {
            kind,
            browser: student.in_browser(),
            latency,
            bytes: frame.len(),
        });
    }
    Ok(run)
}

/// Walks the open lesson from its first step to its last, over every token (or tile) of each
/// step that has them, a key at a time, each key's frame awaited.
async fn walk_lesson(
    student: &mut Student,
    walk: &Walk,
    first: u64,
    steps: u64,
) -> anyhow::Result<Run> {
    ensure!(
        first == 1 && steps as usize == walk.steps.len(),
        "the lesson opened at step {first} of {steps}, not 1 of {}",
        walk.steps.len()
    );
    let mut run = Run::default();
    let (mut token, mut tile) = (walk.first_token, 0);
    let mut press = async |student: &mut Student, kind, key: &'static [u8]| {
        let (latency, frame) = student.press(key).await?;
        run.samples.push(Sample {
            kind,
            browser: student.in_browser(),
            latency,
            bytes: frame.len(),
        });
        anyhow::Ok(frame)
    };
    for (index, &(tokens, count)) in walk.steps.iter().enumerate() {
        let at = if tokens { &mut token } else { &mut tile };
        if count > 1 {
            // To the nearer end first when the tutor opened in between, then to the other.
            if *at != 0 && *at != count - 1 {
                for _ in 0..*at {
                    press(student, Kind::Position, b"(").await?;
                }
                *at = 0;
            }
            let (key, to): (&'static [u8], usize) = if *at == 0 {
                (b")", count - 1)
            } else {
                (b"(", 0)
            };
            for _ in 1..count {
                press(student, Kind::Position, key)
                    .await
                    .with_context(|| format!("walking step {}", index + 1))?;
            }
            *at = to;
        }
        if index + 1 < walk.steps.len() {
            press(student, Kind::Step, b"n").await?;
            let expected = format!("Step {}/{steps}", index + 2);
            let screen = student.screen.screen().contents();
            ensure!(
                screen.contains(&expected),
                "after n the screen does not show {expected}:\n{screen}"
            );
        }
    }
    Ok(run)
}

struct Report {
    sessions: usize,
    browsers: usize,
    keys: usize,
    /// Seats that flooded the lab before the class joined.
    flood: usize,
    /// How long they flooded, and what each did, when they kept flooding (`--sustain`).
    sustained: Option<(Duration, Vec<Flooded>)>,
    joined: usize,
    connect_time: Duration,
    /// Each student's time from connecting to seeing the picker, sorted.
    join_times: Vec<Duration>,
    /// Connections the kernel dropped from a full listen queue while everyone joined.
    overflows: Option<u64>,
    drive_time: Duration,
    /// CPU time the bench's own process and the server used while the students typed.
    client_cpu: Duration,
    server_cpu: Duration,
    failures: Vec<String>,
    samples: Vec<Sample>,
    wrong_steps: usize,
    baseline: Memory,
    connected: Memory,
    driven: Memory,
    left: Memory,
    /// 5 s after everyone left.
    settled: Memory,
    /// 15 s after everyone left.
    later: Memory,
    /// The keys of one walk through the lesson, when the students walked it.
    walked: Option<usize>,
}

/// The whole class: everyone joins at once, memory is read, everyone works through their keys,
/// memory is read again, everyone leaves.
async fn classroom(
    server: &Server,
    sessions: usize,
    keys: usize,
    browsers: usize,
    last: bool,
    (flood_seats, sustain): (usize, Option<Duration>),
    walk: Option<Arc<Walk>>,
) -> anyhow::Result<Report> {
    let baseline = server.memory()?;
    let (flooding, sustaining) = match sustain {
        None => (flood(server.web_port, flood_seats).await?, Vec::new()),
        Some(time) => {
            let sustaining = sustained_flood(server.web_port, flood_seats, time).await?;
            // The flood under way before the class comes.
            tokio::time::sleep(Duration::from_secs(2).min(time / 2)).await;
            (Vec::new(), sustaining)
        }
    };
    let overflows_before = listen_overflows();
    let started = Instant::now();
    let joining: Vec<_> = (0..sessions)
        .map(|index| {
            // Browser seats and SSH students alternate, so both join at the same moments.
            let web = (index * browsers / sessions != (index + 1) * browsers / sessions)
                .then_some(server.web_port);
            tokio::spawn(Student::join(server.port, web, format!("student{index}")))
        })
        .collect();
    let (mut students, mut join_times, mut failures) = (Vec::new(), Vec::new(), Vec::new());
    for (index, joined) in joining.into_iter().enumerate() {
        match joined.await? {
            Ok((student, time)) => {
                students.push(student);
                join_times.push(time);
            }
            Err(error) => failures.push(format!("student{index} joining: {error:#}")),
        }
    }
    let connect_time = started.elapsed();
    let overflows = listen_overflows()
        .zip(overflows_before)
        .map(|(after, before)| after - before);
    join_times.sort();
    ensure!(
        !students.is_empty(),
        "no student could join: {}",
        failures.join("; ")
    );
    let connected = server.memory()?;

    let started = Instant::now();
    let joined = students.len();
    let cpu_before = (cpu_time("self")?, cpu_time(&server.pid.to_string())?);
    let driving: Vec<_> = students
        .into_iter()
        .enumerate()
        .map(|(index, mut student)| {
            let walk = walk.clone();
            tokio::spawn(async move {
                let run = drive(&mut student, keys, index as u64 + 1, last, walk).await;
                (student, run)
            })
        })
        .collect();
    let mut students = Vec::new();
    let (mut samples, mut wrong_steps) = (Vec::new(), 0);
    for driven in driving {
        let (student, run) = driven.await?;
        match run {
            Ok(run) => {
                samples.extend(run.samples);
                wrong_steps += run.wrong_steps;
            }
            Err(error) => failures.push(format!("{} typing: {error:#}", student.name)),
        }
        students.push(student);
    }
    let drive_time = started.elapsed();
    let mut flooded = Vec::new();
    for seat in sustaining {
        match seat.await? {
            Ok(seat) => flooded.push(seat),
            Err(error) => failures.push(format!("a flooding seat: {error:#}")),
        }
    }
    let client_cpu = cpu_time("self")? - cpu_before.0;
    let server_cpu = cpu_time(&server.pid.to_string())? - cpu_before.1;
    let driven = server.memory()?;

    for student in students.into_iter().chain(flooding) {
        student.leave().await;
    }
    // Time for the server to drop every session.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let left = server.memory()?;
    // And for an allocator that gives memory back after a while rather than at once, or once
    // the threads that did the work have ended (tokio ends a blocking thread idle for 10 s).
    tokio::time::sleep(Duration::from_millis(4500)).await;
    let settled = server.memory()?;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let later = server.memory()?;
    Ok(Report {
        sessions,
        browsers,
        keys,
        flood: flood_seats,
        sustained: sustain.map(|time| (time, flooded)),
        joined,
        connect_time,
        join_times,
        overflows,
        drive_time,
        client_cpu,
        server_cpu,
        failures,
        samples,
        wrong_steps,
        baseline,
        connected,
        driven,
        left,
        settled,
        later,
        walked: walk.map(|walk| walk.keys()),
    })
}

/// The nearest-rank percentile `p` (0–100) of sorted latencies, in milliseconds.
fn percentile(sorted: &[Duration], p: usize) -> f64 {
    let rank = (sorted.len() * p).div_ceil(100).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1000.0
}

impl Report {
    fn print(&self, log: &[String]) {
        let cores = std::thread::available_parallelism().map_or(0, usize::from);
        let joined = self.joined;
        println!("attn-tutor classroom load benchmark");
        println!(
            "machine: {cores} cores, shared by the server and the {} clients",
            self.sessions
        );
        println!(
            "seats: {} in a browser seat (WebSocket), {} over SSH",
            self.browsers,
            self.sessions - self.browsers
        );
        println!(
            "sessions: {joined} of {} joined at once in {:.2} s (connect to picker: p50 {:.1} ms, \
             max {:.1} ms)",
            self.sessions,
            self.connect_time.as_secs_f64(),
            percentile(&self.join_times, 50),
            percentile(&self.join_times, 100),
        );
        match &self.sustained {
            _ if self.flood == 0 => {}
            None => println!(
                "  while {} browser seats in the lab had each sent 1,000 r (a sweep each on a \
                 server that redraws per key)",
                self.flood
            ),
            Some((time, flooded)) => println!(
                "  while {} browser seats at {}×{} in the lab sent 60 KB messages of r] for {:.0} s \
                 (the class joining 2 s in): {} messages sent, {} frames drawn for them",
                self.flood,
                FLOOD_SIZE.0,
                FLOOD_SIZE.1,
                time.as_secs_f64(),
                flooded.iter().map(|seat| seat.messages).sum::<usize>(),
                flooded.iter().map(|seat| seat.frames).sum::<usize>(),
            ),
        }
        if let Some(overflows) = self.overflows.filter(|&count| count > 0) {
            println!(
                "  the listen queue overflowed {overflows} times: those connections were retried by \
                 TCP a second later"
            );
        }
        match self.walked {
            Some(walked) => println!(
                "keys: each student walked the lesson, every step and every token (or tile) of \
                 each, {walked} keys at most, each as soon as the last frame came; that took {:.1} s",
                self.drive_time.as_secs_f64()
            ),
            None => println!(
                "keys: {} per student, one every {}–{} ms; typing took {:.1} s",
                self.keys,
                PAUSE_MS.0,
                PAUSE_MS.1,
                self.drive_time.as_secs_f64()
            ),
        }
        println!();
        println!(
            "{:<26}{:>7}{:>9}{:>9}{:>9}{:>9}{:>13}",
            "key-to-frame", "keys", "p50 ms", "p95 ms", "p99 ms", "max ms", "bytes/key"
        );
        let kinds = [
            ("all keys", None, None),
            ("cursor move (h j k l)", Some(Kind::Cursor), None),
            ("step change (n p)", Some(Kind::Step), None),
            ("token or tile (( ))", Some(Kind::Position), None),
            ("  in a browser seat", None, Some(true)),
            ("  over SSH", None, Some(false)),
        ];
        let mut overall_p99 = None;
        for (label, kind, browser) in kinds {
            let chosen: Vec<&Sample> = self
                .samples
                .iter()
                .filter(|sample| kind.is_none_or(|kind| sample.kind == kind))
                .filter(|sample| browser.is_none_or(|browser| sample.browser == browser))
                .collect();
            if chosen.is_empty() {
                println!("{label:<26}{:>7}", 0);
                continue;
            }
            let mut latencies: Vec<Duration> = chosen.iter().map(|sample| sample.latency).collect();
            latencies.sort();
            let bytes = chosen.iter().map(|sample| sample.bytes).sum::<usize>() as f64
                / chosen.len() as f64;
            let p99 = percentile(&latencies, 99);
            if kind.is_none() && browser.is_none() {
                overall_p99 = Some(p99);
            }
            println!(
                "{label:<26}{:>7}{:>9.2}{:>9.2}{:>9.2}{:>9.2}{:>13.0}",
                chosen.len(),
                percentile(&latencies, 50),
                percentile(&latencies, 95),
                p99,
                percentile(&latencies, 100),
                bytes
            );
        }
        let steps = self.samples.iter().filter(|s| s.kind == Kind::Step).count();
        let typing = self.drive_time.as_secs_f64();
        let cpu = |time: Duration| {
            format!(
                "{:.2} s ({:.0} % of one core, {:.0} µs per key)",
                time.as_secs_f64(),
                100.0 * time.as_secs_f64() / typing,
                1e6 * time.as_secs_f64() / self.samples.len().max(1) as f64
            )
        };
        println!(
            "step changes whose frame showed the expected step: {} of {steps}",
            steps - self.wrong_steps
        );
        println!();
        println!("CPU while typing: server {}", cpu(self.server_cpu));
        println!("                  clients {}", cpu(self.client_cpu));
        println!();
        let mib = |kib: u64| kib as f64 / 1024.0;
        let per_session = |memory: Memory| {
            memory.rss_kib.saturating_sub(self.baseline.rss_kib) as f64 / joined.max(1) as f64
        };
        println!("server memory (VmRSS)");
        println!(
            "  before anyone joined     {:>8.1} MiB",
            mib(self.baseline.rss_kib)
        );
        println!(
            "  {joined:>3} on the picker        {:>8.1} MiB   {:>6.0} KiB per session",
            mib(self.connected.rss_kib),
            per_session(self.connected)
        );
        println!(
            "  {joined:>3} after their keys     {:>8.1} MiB   {:>6.0} KiB per session",
            mib(self.driven.rss_kib),
            per_session(self.driven)
        );
        println!(
            "  after everyone left      {:>8.1} MiB",
            mib(self.left.rss_kib)
        );
        println!(
            "  5 s after they left      {:>8.1} MiB",
            mib(self.settled.rss_kib)
        );
        println!(
            "  15 s after they left     {:>8.1} MiB",
            mib(self.later.rss_kib)
        );
        // The kernel's RSS counters are per-thread and lazily summed, so VmHWM can lag a VmRSS
        // read a moment earlier: the peak is the highest of both.
        let peak = [
            self.connected,
            self.driven,
            self.left,
            self.settled,
            self.later,
        ]
        .iter()
        .map(|memory| memory.hwm_kib.max(memory.rss_kib))
        .max()
        .unwrap_or_default();
        println!(
            "  peak (VmHWM)             {:>8.1} MiB   {:>6.0} KiB per session",
            mib(peak),
            peak.saturating_sub(self.baseline.rss_kib) as f64 / joined.max(1) as f64
        );
        println!();
        // The log is INFO lines for connections and sign-ins; anything else deserves a look.
        let notable: Vec<&String> = log
            .iter()
            .filter(|line| {
                !line.contains(" INFO ") || line.contains("error") || line.contains("failed")
            })
            .collect();
        println!(
            "server log: {} lines, {} warnings or errors",
            log.len(),
            notable.len()
        );
        for line in notable.iter().take(10) {
            println!("  {line}");
        }
        for failure in &self.failures {
            println!("FAILED {failure}");
        }
        if let Some(p99) = overall_p99 {
            let verdict = if p99 < 50.0 { "met" } else { "NOT met" };
            println!(
                "goal p99 < 50 ms on a 2-core machine: {verdict} ({p99:.2} ms on {cores} cores)"
            );
        }
    }
}

/// Where the server listens for `way` ("ssh" or "web"): `ATTN_BENCH_PORTS=FIRST` puts SSH on
/// port FIRST and the page on FIRST + 1 (on a machine whose users keep to ports of their own);
/// otherwise any free port.
fn listen(way: &str) -> String {
    let Ok(first) = std::env::var("ATTN_BENCH_PORTS") else {
        return "127.0.0.1:0".to_string();
    };
    let port = first
        .trim()
        .parse::<u16>()
        .ok()
        .and_then(|first| first.checked_add(u16::from(way == "web")))
        .filter(|port| *port > 0)
        .unwrap_or_else(|| {
            panic!("ATTN_BENCH_PORTS={first:?}: give the first of two ports, 1 to 65534")
        });
    format!("127.0.0.1:{port}")
}

/// `--class` (or `ATTN_BENCH_CLASS=1`): a class led by a presenter, as it is taught. The server
/// runs `serve --present` in a pseudo-terminal, the bench typing the presenter's keys; every
/// student follows, presses a cursor key (h j k l) about once a second (0.5–1.5 s apart), and the
/// presenter changes step every 2 s (forward to the last step, then back), so every 2 s the
/// server draws a new screen for every student at once.
fn class_mode() -> bool {
    std::env::args().skip(1).any(|arg| arg == "--class")
        || std::env::var("ATTN_BENCH_CLASS").is_ok_and(|value| value == "1")
}

/// How long a class student waits between keys, in milliseconds.
const CLASS_PAUSE_MS: (u64, u64) = (500, 1500);

/// How often the presenter changes step.
const PRESENTER_EVERY: Duration = Duration::from_secs(2);

/// `attn-tutor serve --present` in a pseudo-terminal: its keyboard, and the ports it serves.
struct Presenting {
    child: Box<dyn portable_pty::Child + Send + Sync>,
    keyboard: Box<dyn std::io::Write + Send>,
    /// The presenter's screen, as the terminal shows it.
    screen: Arc<Mutex<vt100::Parser>>,
    /// Words looked for on the screen as its output comes, and when they first showed.
    watched: Arc<Mutex<Watched>>,
    pid: u32,
    port: u16,
    web_port: u16,
    log: PathBuf,
    _master: Box<dyn portable_pty::MasterPty + Send>,
    _dir: TempDir,
}

impl Presenting {
    fn start(sessions: usize) -> anyhow::Result<Presenting> {
        use portable_pty::{CommandBuilder, PtySize, native_pty_system};
        let dir = TempDir::new()?;
        let limit = sessions.max(200).to_string();
        let binary = std::env::var_os("ATTN_BENCH_SERVER").map_or_else(
            || PathBuf::from(env!("CARGO_BIN_EXE_attn-tutor")),
            PathBuf::from,
        );
        let log = dir.path().join("serve.log");
        let mut serve = CommandBuilder::new(binary);
        serve.args(["serve", "--open", "--present"]);
        serve.args(["--listen", &listen("ssh"), "--web", &listen("web")]);
        serve.arg("--host-key");
        serve.arg(dir.path().join("host_key"));
        serve.arg("--log");
        serve.arg(&log);
        serve.args(["--max-sessions", &limit, "--per-address", &limit]);
        serve.env("TERM", "xterm-256color");
        serve.env("XDG_DATA_HOME", dir.path());
        serve.cwd(dir.path());
        // Wide, so that the status line's ways in fit on one line.
        let (rows, cols) = (40, 240);
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|error| anyhow::anyhow!("cannot open a pseudo-terminal: {error}"))?;
        let child = pair
            .slave
            .spawn_command(serve)
            .map_err(|error| anyhow::anyhow!("cannot start attn-tutor serve --present: {error}"))?;
        drop(pair.slave);
        let pid = child.process_id().context("the server's process id")?;
        let screen = Arc::new(Mutex::new(vt100::Parser::new(
            rows.try_into()?,
            cols.try_into()?,
            0,
        )));
        let mut output = pair
            .master
            .try_clone_reader()
            .map_err(|error| anyhow::anyhow!("{error}"))?;
        let shown = Arc::clone(&screen);
        let watched = Arc::new(Mutex::new(Watched::None));
        let watching = Arc::clone(&watched);
        // Read all the while: a terminal nobody reads would stall the presenter's tutor.
        std::thread::spawn(move || {
            let mut buffer = [0; 16384];
            while let Ok(read @ 1..) = std::io::Read::read(&mut output, &mut buffer) {
                let mut screen = shown.lock().unwrap_or_else(PoisonError::into_inner);
                screen.process(&buffer[..read]);
                let arrived = Instant::now();
                let mut watched = watching.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some((words, seen @ None)) = &mut *watched
                    && screen.screen().contents().contains(words.as_str())
                {
                    *seen = Some(arrived);
                }
            }
        });
        let keyboard = pair
            .master
            .take_writer()
            .map_err(|error| anyhow::anyhow!("{error}"))?;
        let mut presenting = Presenting {
            child,
            keyboard,
            screen,
            watched,
            pid,
            port: 0,
            web_port: 0,
            log,
            _master: pair.master,
            _dir: dir,
        };
        let started = Instant::now();
        let text = loop {
            let text = presenting.text();
            if text.contains("ssh -p ") && text.contains("http://127.0.0.1:") {
                break text;
            }
            ensure!(
                started.elapsed() < PATIENCE,
                "the presenter's tutor named no ways in within {PATIENCE:?}:\n{text}\nits log:\n{}",
                std::fs::read_to_string(&presenting.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let after = |marker: &str| -> Option<u16> {
            let rest = text.split(marker).nth(1)?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        };
        presenting.port = after("ssh -p ").context("no ssh port on the presenter's screen")?;
        presenting.web_port =
            after("http://127.0.0.1:").context("no page address on the presenter's screen")?;
        Ok(presenting)
    }

    fn text(&self) -> String {
        self.screen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .screen()
            .contents()
    }

    fn press(&mut self, keys: &[u8]) -> anyhow::Result<()> {
        std::io::Write::write_all(&mut self.keyboard, keys)?;
        Ok(std::io::Write::flush(&mut self.keyboard)?)
    }

    /// Waits until the presenter's own screen shows `words`.
    fn wait_for(&self, words: &str) -> anyhow::Result<()> {
        let started = Instant::now();
        while !self.text().contains(words) {
            ensure!(
                started.elapsed() < PATIENCE,
                "the presenter's screen never showed {words:?}:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    /// Presses `keys` and returns the time until the presenter's screen shows `words` (noted
    /// as its output is read, so that nothing polls it meanwhile).
    fn press_until(&mut self, keys: &[u8], words: &str) -> anyhow::Result<Duration> {
        *self.watched.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((words.to_string(), None));
        let pressed = Instant::now();
        self.press(keys)?;
        loop {
            let seen = self
                .watched
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
                .and_then(|(_, seen)| *seen);
            if let Some(seen) = seen {
                return Ok(seen.saturating_duration_since(pressed));
            }
            ensure!(
                pressed.elapsed() < PATIENCE,
                "the presenter's screen never showed {words:?}:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn memory(&self) -> anyhow::Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid))?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .context("no VmRSS in the server's /proc status")
    }
}

impl Drop for Presenting {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Words looked for on the presenter's screen, and when they first showed there.
type Watched = Option<(String, Option<Instant>)>;

/// The presenter's latest step change: which step, and when its key was typed.
#[derive(Debug, Clone, Copy)]
struct Announced {
    /// Counts the changes, so that each student times each change once.
    number: u64,
    step: u64,
    at: Instant,
}

/// What one class student measured: their keys' latencies, and the presenter's step changes'
/// (key typed by the presenter to the end of the student's frame showing the new step).
#[derive(Default)]
struct ClassRun {
    keys: Vec<Duration>,
    changes: Vec<Duration>,
    /// Step changes this student never saw (a later one came first, or the class ended).
    missed: u64,
    bytes: usize,
    frames: usize,
}

/// One following student: a cursor key every 0.5–1.5 s (`keys` of them), reading every frame
/// the while, until `until`.
async fn follow(
    student: &mut Student,
    keys: usize,
    seed: u64,
    until: Instant,
    mut announced: tokio::sync::watch::Receiver<Option<Announced>>,
) -> anyhow::Result<ClassRun> {
    let mut jitter = Jitter(seed);
    let mut run = ClassRun::default();
    let mut next_key =
        tokio::time::Instant::now() + Duration::from_millis(jitter.below(CLASS_PAUSE_MS.1));
    let (mut sent, mut pressed, mut seen) = (None::<Instant>, 0, 0);
    let until = tokio::time::Instant::from_std(until);
    loop {
        let key_due = sent.is_none() && pressed < keys;
        tokio::select! {
            frame = student.frame() => {
                let frame = frame?;
                let arrived = Instant::now();
                run.frames += 1;
                run.bytes += frame.len();
                if let Some(at) = sent.take() {
                    run.keys.push(arrived - at);
                }
                let latest = *announced.borrow_and_update();
                if let Some(change) = latest
                    && change.number > seen
                    && step_shown(&frame).map(|(step, _)| step) == Some(change.step)
                {
                    run.missed += change.number - seen - 1;
                    seen = change.number;
                    run.changes.push(arrived - change.at);
                }
            }
            () = tokio::time::sleep_until(next_key), if key_due => {
                let keys: [&'static [u8]; 4] = [b"h", b"j", b"k", b"l"];
                student.send(keys[jitter.below(4) as usize]).await?;
                sent = Some(Instant::now());
                pressed += 1;
                let pause = CLASS_PAUSE_MS.0 + jitter.below(CLASS_PAUSE_MS.1 - CLASS_PAUSE_MS.0 + 1);
                next_key = tokio::time::Instant::now() + Duration::from_millis(pause);
            }
            () = tokio::time::sleep_until(until) => break,
        }
    }
    let last = announced.borrow().map_or(0, |change| change.number);
    run.missed += last.saturating_sub(seen);
    Ok(run)
}

/// The class led by a presenter (`--class`): everyone joins and follows the presenter into the
/// first lesson, then types for `keys` seconds or so while the presenter changes step.
fn class(sessions: usize, keys: usize, browsers: usize) -> anyhow::Result<()> {
    let mut server = Presenting::start(sessions)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (port, web_port) = (server.port, server.web_port);
    let before_kib = server.memory()?;
    let started = Instant::now();
    let mut students = runtime.block_on(async {
        let joining: Vec<_> = (0..sessions)
            .map(|index| {
                let web = (index * browsers / sessions != (index + 1) * browsers / sessions)
                    .then_some(web_port);
                tokio::spawn(Student::join(port, web, format!("student{index}")))
            })
            .collect();
        let mut students = Vec::new();
        for joined in joining {
            students.push(joined.await??.0);
        }
        anyhow::Ok(students)
    })?;
    let joined_in = started.elapsed();
    // The presenter opens the first lesson; every student's screen follows to its first step.
    server.press(b"\r")?;
    server.wait_for("Step 1/")?;
    let steps: u64 = step_shown(server.text().as_bytes())
        .map(|(_, steps)| steps)
        .context("the presenter's lesson shows no \"Step 1/N\"")?;
    runtime.block_on(async {
        for student in &mut students {
            while !student.screen.screen().contents().contains("Step 1/") {
                student.frame().await?;
            }
        }
        anyhow::Ok(())
    })?;
    let with_lesson_kib = server.memory()?;

    let typing = Duration::from_secs(keys as u64) + Duration::from_millis(CLASS_PAUSE_MS.1);
    let until = Instant::now() + typing + Duration::from_secs(1);
    let (announce, announced) = tokio::sync::watch::channel(None::<Announced>);
    let cpu_before = (cpu_time("self")?, cpu_time(&server.pid.to_string())?);
    let began = Instant::now();
    let driving: Vec<_> = students
        .into_iter()
        .enumerate()
        .map(|(index, mut student)| {
            let announced = announced.clone();
            student.parse = false;
            runtime.spawn(async move {
                let run = follow(&mut student, keys, index as u64 + 1, until, announced).await;
                (student, run)
            })
        })
        .collect();
    // The presenter: a step every 2 s, to the last and back.
    let (mut step, mut forward, mut number) = (1, true, 0);
    let mut next = began + PRESENTER_EVERY;
    while next + PRESENTER_EVERY < began + typing {
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        if step == steps {
            forward = false;
        } else if step == 1 {
            forward = true;
        }
        step = if forward { step + 1 } else { step - 1 };
        number += 1;
        announce.send_replace(Some(Announced {
            number,
            step,
            at: Instant::now(),
        }));
        server.press(if forward { b"n" } else { b"p" })?;
        next += PRESENTER_EVERY;
    }
    let mut runs = Vec::new();
    let mut failures = Vec::new();
    let mut students = Vec::new();
    for driven in driving {
        let (student, run) = runtime.block_on(driven)?;
        match run {
            Ok(run) => runs.push(run),
            Err(error) => failures.push(format!("{} following: {error:#}", student.name)),
        }
        students.push(student);
    }
    let drive_time = began.elapsed();
    let client_cpu = cpu_time("self")? - cpu_before.0;
    let server_cpu = cpu_time(&server.pid.to_string())? - cpu_before.1;
    let after_kib = server.memory()?;
    let (students, polled) = class_poll(&mut server, &runtime, students, steps)?;
    failures.extend(polled.failures.iter().cloned());
    runtime.block_on(async {
        for student in students {
            student.leave().await;
        }
    });

    let mut key_times: Vec<Duration> = runs.iter().flat_map(|run| run.keys.clone()).collect();
    let mut change_times: Vec<Duration> = runs.iter().flat_map(|run| run.changes.clone()).collect();
    key_times.sort();
    change_times.sort();
    let missed: u64 = runs.iter().map(|run| run.missed).sum();
    let frames: usize = runs.iter().map(|run| run.frames).sum();
    let bytes: usize = runs.iter().map(|run| run.bytes).sum();
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    println!("attn-tutor classroom benchmark: a class led by a presenter");
    println!("machine: {cores} cores, shared by the server and the {sessions} clients");
    println!(
        "seats: {browsers} in a browser seat, {} over SSH; all {sessions} joined in {:.2} s and follow",
        sessions - browsers,
        joined_in.as_secs_f64()
    );
    println!(
        "each student: a cursor key (h j k l) every {}–{} ms, {keys} keys; the presenter: a step \
         change every {} s ({number} changes over a {steps}-step lesson); {:.1} s in all",
        CLASS_PAUSE_MS.0,
        CLASS_PAUSE_MS.1,
        PRESENTER_EVERY.as_secs(),
        drive_time.as_secs_f64()
    );
    println!();
    println!(
        "{:<34}{:>7}{:>9}{:>9}{:>9}{:>9}",
        "", "count", "p50 ms", "p95 ms", "p99 ms", "max ms"
    );
    latency_rows(&[
        ("student key to next frame", &key_times),
        ("presenter's step to a student", &change_times),
    ]);
    println!(
        "step changes a student never saw (a later one came first): {missed} of {}",
        number * sessions as u64
    );
    let work = key_times.len() + change_times.len();
    println!();
    println!(
        "frames: {frames}, {:.0} bytes each on average",
        bytes as f64 / frames.max(1) as f64
    );
    let seconds = drive_time.as_secs_f64();
    println!(
        "CPU while the class ran: server {:.2} s ({:.0} % of one core, {:.0} µs per student key \
         or step change seen)",
        server_cpu.as_secs_f64(),
        100.0 * server_cpu.as_secs_f64() / seconds,
        1e6 * server_cpu.as_secs_f64() / work.max(1) as f64
    );
    println!(
        "                         clients {:.2} s ({:.0} % of one core)",
        client_cpu.as_secs_f64(),
        100.0 * client_cpu.as_secs_f64() / seconds
    );
    println!(
        "server memory (VmRSS): {:.1} MiB before anyone joined, {:.1} MiB with everyone on the \
         lesson, {:.1} MiB at the end",
        before_kib as f64 / 1024.0,
        with_lesson_kib as f64 / 1024.0,
        after_kib as f64 / 1024.0
    );
    polled.print();
    for failure in &failures {
        println!("FAILED {failure}");
    }
    let p99 = percentile(&key_times, 99).max(percentile(&change_times, 99));
    if !key_times.is_empty() && !change_times.is_empty() {
        let verdict = if p99 <= 20.0 { "met" } else { "NOT met" };
        println!(
            "goal p99 ≤ 20 ms for keys and step changes: {verdict} ({p99:.2} ms on {cores} cores)"
        );
    }
    polled.goal(cores);
    ensure!(
        failures.is_empty(),
        "{} of {sessions} students failed",
        failures.len()
    );
    Ok(())
}

/// How long the class has to answer the poll: each student's Enter is planned within this of
/// the start, at a moment of their own.
const ANSWERING: Duration = Duration::from_secs(1);

/// A student's pause between the keys of their answer, in milliseconds.
const TYPING_MS: (u64, u64) = (40, 120);

/// The reveal's words on every screen, which nothing shows before it.
const REVEAL_WORDS: &str = "Right: ";

/// What the bench tells each student during the poll, as it happens.
#[derive(Clone)]
struct PollCues {
    /// When the presenter pressed `a` to ask.
    asked: tokio::sync::watch::Receiver<Option<Instant>>,
    /// The presenter's screen has shown the question for a while: the frames so far are read.
    read: tokio::sync::watch::Receiver<bool>,
    /// When the class may start answering, and each student's answer (by seat).
    go: tokio::sync::watch::Receiver<Option<(Instant, Arc<Vec<String>>)>>,
    /// When the presenter pressed `a` to reveal.
    revealed: tokio::sync::watch::Receiver<Option<Instant>>,
    /// The bench stops waiting for the reveal.
    stop: tokio::sync::watch::Receiver<bool>,
    /// Seats whose screens show the question.
    showing: Arc<std::sync::atomic::AtomicUsize>,
    /// Seats whose answers are in (their screens say so).
    in_: Arc<std::sync::atomic::AtomicUsize>,
    /// Seats whose frame's bytes held the reveal's words (checked on the screen afterwards).
    seen: Arc<std::sync::atomic::AtomicUsize>,
    /// Seats whose part in the poll failed: none of the counts above will come from them.
    failed: Arc<std::sync::atomic::AtomicUsize>,
}

/// What one student measured in the poll.
#[derive(Default)]
struct PollRun {
    /// The presenter's `a` to the end of this student's frame showing the question.
    asked: Option<Duration>,
    /// Each key of the answer typed to the end of its frame.
    keys: Vec<Duration>,
    /// When the answer's Enter was sent, and the time to the frame saying it is in.
    answered: Option<(Instant, Duration)>,
    /// The presenter's second `a` to the end of this student's first frame showing the reveal.
    revealed: Option<Duration>,
}

/// One student in the poll: the frames of the presenter's steps and question kept with their
/// arrival times (`unparsed`), and parsed into the student's screen once the bench has seen the
/// question on the presenter's (the step change before it repaints the whole screen, so the
/// screen is exact from there); the answer typed a key at a time, each key's frame awaited and
/// parsed; then the frames to the reveal kept, and parsed once it has come, to find the first
/// that showed it.
async fn answer_poll(
    student: &mut Student,
    seat: usize,
    mut cues: PollCues,
) -> anyhow::Result<PollRun> {
    use std::sync::atomic::Ordering;
    let mut jitter = Jitter(0x9011_0000 + seat as u64);
    let mut run = PollRun::default();
    // The presenter's steps and question, parsed once the presenter's screen shows it.
    let frames = unparsed(student, &mut cues.read, None).await?;
    let asked = (*cues.asked.borrow()).context("the bench never asked")?;
    let since = |arrived: Instant| Some(arrived.saturating_duration_since(asked));
    for (arrived, frame) in frames {
        student.screen.process(&frame);
        if run.asked.is_none() && shows_question(&student.screen.screen().contents()) {
            run.asked = since(arrived);
        }
    }
    // A seat the question has not reached yet.
    student.parse = true;
    while run.asked.is_none() {
        student.frame().await.context("waiting for the question")?;
        if shows_question(&student.screen.screen().contents()) {
            run.asked = since(Instant::now());
        }
    }
    cues.showing.fetch_add(1, Ordering::SeqCst);
    let (start, answers) = within("waiting for the class to answer", async {
        let go = cues.go.wait_for(Option::is_some).await?;
        (*go).clone().context("no answers")
    })
    .await?;
    let typed: Vec<u8> = answers
        .get(seat)
        .context("no answer for this seat")?
        .bytes()
        .chain(std::iter::once(b'\r'))
        .collect();
    // The keys' moments, planned so that the Enter falls within `ANSWERING` of the start.
    let pauses: Vec<u64> = (1..typed.len())
        .map(|_| TYPING_MS.0 + jitter.below(TYPING_MS.1 - TYPING_MS.0 + 1))
        .collect();
    let typing: u64 = pauses.iter().sum();
    let slack = (ANSWERING.as_millis() as u64).saturating_sub(typing).max(1);
    let mut at = start + Duration::from_millis(jitter.below(slack));
    for (index, &key) in typed.iter().enumerate() {
        tokio::time::sleep_until(at.into()).await;
        let sent = Instant::now();
        student.send(typed_key(key)?).await?;
        student
            .frame()
            .await
            .context("waiting for an answer key's frame")?;
        run.keys.push(sent.elapsed());
        if key == b'\r' {
            // The answer is in when the screen says so (a frame or two after Enter).
            while !student.screen.screen().contents().contains("(in)") {
                student
                    .frame()
                    .await
                    .context("waiting for the answer to be in")?;
            }
            run.answered = Some((sent, sent.elapsed()));
        }
        at =
            Instant::now().max(at) + Duration::from_millis(pauses.get(index).copied().unwrap_or(0));
    }
    cues.in_.fetch_add(1, Ordering::SeqCst);
    let frames = unparsed(student, &mut cues.stop, Some(&cues.seen)).await?;
    // Parsed once the class has it, so as not to slow the others' frames.
    cues.stop.wait_for(|stop| *stop).await?;
    let revealed = *cues.revealed.borrow();
    for (arrived, frame) in frames {
        student.screen.process(&frame);
        if run.revealed.is_none() && student.screen.screen().contents().contains(REVEAL_WORDS) {
            let revealed = revealed.context("the reveal before the presenter revealed")?;
            run.revealed = Some(arrived.saturating_duration_since(revealed));
        }
    }
    Ok(run)
}

/// The frames that come until `until` changes, with the moments they arrived, not parsed: the
/// students' terminals are their own machines' work, and 500 of them parsed here as the frames
/// came would take the cores the server is measured on. With `seen`, a frame whose bytes hold
/// the reveal's words ends it early, counted there (its screen is checked when parsed).
async fn unparsed(
    student: &mut Student,
    until: &mut tokio::sync::watch::Receiver<bool>,
    seen: Option<&std::sync::atomic::AtomicUsize>,
) -> anyhow::Result<Vec<(Instant, Vec<u8>)>> {
    student.parse = false;
    let mut frames = Vec::new();
    while !*until.borrow_and_update() {
        tokio::select! {
            frame = student.frame() => {
                let frame = frame?;
                let arrived = Instant::now();
                let words = seen.is_some() && find(&frame, REVEAL_WORDS.as_bytes()).is_some();
                frames.push((arrived, frame));
                if let Some(seen) = seen.filter(|_| words) {
                    seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    break;
                }
            }
            _ = until.changed() => {}
        }
    }
    Ok(frames)
}

/// Whether a screen shows the poll's question: its title, `Poll: weights[sleeps, The] = ?`.
fn shows_question(text: &str) -> bool {
    text.lines()
        .any(|line| line.contains("Poll: ") && line.contains(" = ?"))
}

/// One typed key of an answer, as the bytes a student's keyboard sends.
fn typed_key(key: u8) -> anyhow::Result<&'static [u8]> {
    const KEYS: &[u8] = b"0123456789-.\r";
    let at = KEYS
        .iter()
        .position(|&known| known == key)
        .with_context(|| format!("an answer holds {:?}, not a key of a number", key as char))?;
    Ok(&KEYS[at..=at])
}

/// The poll's question as the bench works it out from the lesson: the cell the presenter's
/// screen names, its value and the common slips' values, and so each student's answer and how
/// many of them are right.
struct Question {
    truth: f64,
    decimals: usize,
    /// The slips practice mode recognises for the cell, with their values.
    slips: Vec<f64>,
    attention: attn_tutor::attention::Attention,
    cell: attn_tutor::attention::Cell,
}

impl Question {
    /// The cell named `name` (as the poll's title writes it) in the first built-in lesson.
    fn of(name: &str) -> anyhow::Result<Question> {
        use attn_tutor::attention::{Attention, Cell, MatrixName};
        let lesson = first_lesson()?;
        let attention = Attention::compute(&lesson);
        let computed = &attention;
        let cell = MatrixName::ALL
            .iter()
            .filter(|&&matrix| computed.has(matrix))
            .flat_map(|&matrix| {
                (0..computed.heads().query).flat_map(move |head| {
                    let (rows, cols) = computed
                        .matrix_in(matrix, head)
                        .map_or((0, 0), |values| values.shape());
                    (0..rows).flat_map(move |row| {
                        (0..cols).map(move |col| Cell {
                            matrix,
                            head,
                            row,
                            col,
                            token: 0,
                        })
                    })
                })
            })
            .find(|&cell| attention.cell_name(cell) == name)
            .with_context(|| format!("no cell {name} in the first built-in lesson"))?;
        let truth = attention
            .value(cell)
            .with_context(|| format!("{name} has no value"))?;
        // The slips a student makes on a softmax's weight: the exponential alone, the unscaled
        // scores, the softmax down the column; kept when practice mode names them.
        let mut slips = Vec::new();
        if let Some(scaled) = attention.matrix_in(attention.softmax_input(), cell.head)
            && cell.matrix == MatrixName::Weights
        {
            let root = (attention.d_k() as f64).sqrt();
            let x = scaled[(cell.row, cell.col)];
            let unscaled: f64 = scaled.row(cell.row).iter().map(|x| (x * root).exp()).sum();
            let column: f64 = scaled.column(cell.col).iter().map(|x| x.exp()).sum();
            slips.extend([x.exp(), (x * root).exp() / unscaled, x.exp() / column]);
        }
        slips.retain(|&value| {
            attn_tutor::practice::check(&attention, cell, value, lesson.decimals)
                .is_some_and(|verdict| verdict.slip().is_some())
        });
        Ok(Question {
            truth,
            decimals: lesson.decimals,
            slips,
            attention,
            cell,
        })
    }

    /// Each student's answer, as a class answers: half the truth as the lesson writes it, a
    /// tenth to a decimal fewer, a tenth a last digit off, a fifth a common slip, the rest
    /// any number at all.
    fn answers(&self, students: usize) -> Vec<String> {
        let mut jitter = Jitter(0x0A11_5EED);
        let decimals = self.decimals;
        let unit = 10f64.powi(-(decimals as i32));
        (0..students)
            .map(|_| match jitter.below(100) {
                0..50 => format!("{:.decimals$}", self.truth),
                50..60 => format!("{:.*}", decimals.saturating_sub(1).max(2), self.truth),
                60..70 => {
                    let off = if jitter.below(2) == 0 { unit } else { -unit };
                    format!("{:.decimals$}", self.truth + off)
                }
                70..90 if !self.slips.is_empty() => format!(
                    "{:.decimals$}",
                    self.slips[jitter.below(self.slips.len() as u64) as usize]
                ),
                _ => {
                    let value = jitter.below(1000) as f64 / 1000.0;
                    let sign = if jitter.below(4) == 0 { -1.0 } else { 1.0 };
                    format!("{:.decimals$}", sign * value)
                }
            })
            .collect()
    }

    /// How many of `answers` practice mode counts right, and how many it names a slip for.
    fn count(&self, answers: &[String]) -> (usize, usize) {
        let (mut right, mut slips) = (0, 0);
        for typed in answers {
            let verdict = attn_tutor::practice::Answer::parse(typed)
                .ok()
                .and_then(|answer| {
                    attn_tutor::practice::check_answer(
                        &self.attention,
                        self.cell,
                        &answer,
                        self.decimals,
                    )
                });
            match verdict {
                Some(verdict) if verdict.is_right() => right += 1,
                Some(verdict) if verdict.slip().is_some() => slips += 1,
                _ => {}
            }
        }
        (right, slips)
    }
}

/// What the poll measured, for the whole class.
#[derive(Default)]
struct PollReport {
    /// The cell asked, its step, and the reveal's count as the bench worked it out.
    question: String,
    step: (u64, u64),
    answers: usize,
    expected: (usize, usize),
    asked: Vec<Duration>,
    keys: Vec<Duration>,
    answered: Vec<Duration>,
    revealed: Vec<Duration>,
    /// From the start of the answering to the last Enter sent.
    last_enter: Duration,
    /// From the start of the answering to the presenter's screen counting every answer.
    counted: Option<Duration>,
    /// From the presenter's question and reveal to its own screen showing them.
    presenter_asked: Duration,
    presenter: Duration,
    /// The presenter's reveal: its "Right" line and its slips line.
    right_line: String,
    slips_line: String,
    time: Duration,
    server_cpu: Duration,
    client_cpu: Duration,
    failures: Vec<String>,
}

/// The first built-in lesson, which the presenter opens.
fn first_lesson() -> anyhow::Result<attn_tutor::lesson::Lesson> {
    let first = &attn_tutor::lesson::BUILTIN[0];
    let loaded = attn_tutor::lesson::load_text(first.name, None, first.text.to_string())
        .map_err(|error| anyhow::anyhow!("{}: {}", first.name, error.first_line()))?;
    Ok(loaded.lesson)
}

/// The class's poll, once the class has followed the step changes: the presenter goes to the
/// Softmax step and asks for the cell under the cursor (`a`), every student types an answer
/// (see `answer_poll`), the presenter's screen counts them, and the presenter reveals (`a`
/// again). Returns the students, still connected, and what was measured.
fn class_poll(
    server: &mut Presenting,
    runtime: &tokio::runtime::Runtime,
    students: Vec<Student>,
    steps: u64,
) -> anyhow::Result<(Vec<Student>, PollReport)> {
    use attn_tutor::pipeline::Step;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let lesson = first_lesson()?;
    let softmax = lesson
        .steps()
        .iter()
        .position(|step| *step == Step::Softmax)
        .context("the first lesson has no Softmax step to ask on")? as u64
        + 1;
    ensure!(
        lesson.steps().len() as u64 == steps,
        "the presenter's lesson has {steps} steps, the first built-in lesson {}",
        lesson.steps().len()
    );
    let mut report = PollReport {
        step: (softmax, steps),
        ..PollReport::default()
    };
    let class = students.len();
    let (asked, asked_cue) = tokio::sync::watch::channel(None);
    let (read, read_cue) = tokio::sync::watch::channel(false);
    let (go, go_cue) = tokio::sync::watch::channel(None);
    let (revealed, revealed_cue) = tokio::sync::watch::channel(None);
    let (stop, stop_cue) = tokio::sync::watch::channel(false);
    let cues = PollCues {
        asked: asked_cue,
        read: read_cue,
        go: go_cue,
        revealed: revealed_cue,
        stop: stop_cue,
        showing: Arc::new(AtomicUsize::new(0)),
        in_: Arc::new(AtomicUsize::new(0)),
        seen: Arc::new(AtomicUsize::new(0)),
        failed: Arc::new(AtomicUsize::new(0)),
    };
    let cpu_before = (cpu_time("self")?, cpu_time(&server.pid.to_string())?);
    let began = Instant::now();
    let answering: Vec<_> = students
        .into_iter()
        .enumerate()
        .map(|(seat, mut student)| {
            let cues = cues.clone();
            runtime.spawn(async move {
                let failed = Arc::clone(&cues.failed);
                let run = answer_poll(&mut student, seat, cues).await;
                if run.is_err() {
                    failed.fetch_add(1, Ordering::SeqCst);
                }
                (student, run)
            })
        })
        .collect();
    // Waits until `count` and the students who failed make the class.
    let until = |what: &str, count: &AtomicUsize| -> anyhow::Result<Duration> {
        let started = Instant::now();
        loop {
            if count.load(Ordering::SeqCst) + cues.failed.load(Ordering::SeqCst) >= class {
                return Ok(started.elapsed());
            }
            ensure!(
                started.elapsed() < PATIENCE,
                "{what}: {} of {class} within {PATIENCE:?}",
                count.load(Ordering::SeqCst)
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    };
    // The presenter to the Softmax step (by another step, if there already: a step change
    // repaints every student's screen).
    let mut step = step_shown(server.text().as_bytes())
        .map(|(step, _)| step)
        .context("the presenter's screen shows no step")?;
    if step == softmax {
        step = if step > 1 { step - 1 } else { step + 1 };
        server.press(if step < softmax { b"p" } else { b"n" })?;
        server.wait_for(&format!("Step {step}/{steps}"))?;
    }
    while step != softmax {
        let forward = step < softmax;
        step = if forward { step + 1 } else { step - 1 };
        server.press(if forward { b"n" } else { b"p" })?;
        server.wait_for(&format!("Step {step}/{steps}"))?;
    }
    // Time for the step's frames to reach every seat before the question.
    std::thread::sleep(Duration::from_millis(500));
    asked.send_replace(Some(Instant::now()));
    report.presenter_asked = server.press_until(b"a", " = ?")?;
    let text = server.text();
    let name = text
        .lines()
        .find_map(|line| {
            let (_, rest) = line.split_once("Poll: ")?;
            Some(rest.split_once(" = ?")?.0.to_string())
        })
        .context("the presenter's screen shows no poll")?;
    let question = Question::of(&name)?;
    let answers = question.answers(class);
    report.question = name;
    report.answers = class;
    report.expected = question.count(&answers);
    // The class reads the question a moment before anyone answers.
    std::thread::sleep(Duration::from_millis(500));
    read.send_replace(true);
    let shown = until("showing the question", &cues.showing);
    let start = Instant::now();
    go.send_replace(Some((start, Arc::new(answers))));
    let counted = shown.and_then(|_| {
        server.wait_for(&format!("{class} of {class} answered"))?;
        Ok(start.elapsed())
    });
    match counted {
        Ok(counted) => report.counted = Some(counted),
        Err(error) => report.failures.push(format!("the answers: {error:#}")),
    }
    let all_in = until("answers in", &cues.in_);
    // The presenter waits a moment, as a class's does, and reveals.
    std::thread::sleep(Duration::from_millis(500));
    revealed.send_replace(Some(Instant::now()));
    // The presenter's own time (the answers counted, its screen drawn), which every student's
    // includes.
    report.presenter = server.press_until(b"a", REVEAL_WORDS)?;
    // Until every seat's bytes held the reveal, or `PATIENCE`: their screens tell afterwards.
    let seen = all_in.and_then(|_| until("the reveal", &cues.seen));
    if let Err(error) = seen {
        report.failures.push(format!("{error:#}"));
    }
    stop.send_replace(true);
    let mut students = Vec::new();
    let mut runs = Vec::new();
    for task in answering {
        let (student, run) = runtime.block_on(task)?;
        match run {
            Ok(run) => runs.push(run),
            Err(error) => report
                .failures
                .push(format!("{} in the poll: {error:#}", student.name)),
        }
        students.push(student);
    }
    report.time = began.elapsed();
    report.client_cpu = cpu_time("self")? - cpu_before.0;
    report.server_cpu = cpu_time(&server.pid.to_string())? - cpu_before.1;
    let text = server.text();
    // From the words on: the panel may share its lines with the matrices on its left.
    let line_with = |words: &str| {
        text.lines()
            .find_map(|line| line.find(words).map(|at| line[at..].trim().to_string()))
            .unwrap_or_default()
    };
    report.right_line = line_with(REVEAL_WORDS);
    report.slips_line = line_with("Slips: ");
    let expected = format!("Right: {} of {class} (", report.expected.0);
    if !report.right_line.starts_with(&expected) {
        report.failures.push(format!(
            "the presenter's reveal says {:?}, the bench counted {expected}",
            report.right_line
        ));
    }
    let start_of = |run: &PollRun| {
        run.answered
            .map(|(sent, _)| sent.saturating_duration_since(start))
    };
    report.last_enter = runs.iter().filter_map(start_of).max().unwrap_or_default();
    let missed = runs.iter().filter(|run| run.revealed.is_none()).count();
    if missed > 0 {
        report.failures.push(format!(
            "{missed} students' screens never showed the reveal"
        ));
    }
    report.asked = runs.iter().filter_map(|run| run.asked).collect();
    report.keys = runs.iter().flat_map(|run| run.keys.clone()).collect();
    report.answered = runs
        .iter()
        .filter_map(|run| run.answered.map(|(_, took)| took))
        .collect();
    report.revealed = runs.iter().filter_map(|run| run.revealed).collect();
    for times in [
        &mut report.asked,
        &mut report.keys,
        &mut report.answered,
        &mut report.revealed,
    ] {
        times.sort();
    }
    Ok((students, report))
}

/// One row per latency measured, under a `count p50 p95 p99 max` header printed before: its
/// count and percentiles in ms (times sorted), or a count of 0.
fn latency_rows(rows: &[(&str, &Vec<Duration>)]) {
    for (label, times) in rows {
        if times.is_empty() {
            println!("{label:<34}{:>7}", 0);
            continue;
        }
        println!(
            "{label:<34}{:>7}{:>9.2}{:>9.2}{:>9.2}{:>9.2}",
            times.len(),
            percentile(times, 50),
            percentile(times, 95),
            percentile(times, 99),
            percentile(times, 100)
        );
    }
}

impl PollReport {
    fn print(&self) {
        println!();
        println!(
            "the poll: the presenter asks for {} on step {}/{} (a), every student types an \
             answer (a key every {}–{} ms, Enter within {} s of the start), the presenter \
             reveals (a); {:.1} s in all",
            self.question,
            self.step.0,
            self.step.1,
            TYPING_MS.0,
            TYPING_MS.1,
            ANSWERING.as_secs(),
            self.time.as_secs_f64()
        );
        println!(
            "answers: {} typed, {} right and {} a common slip as practice mode counts them; the \
             last Enter {:.0} ms after the start",
            self.answers,
            self.expected.0,
            self.expected.1,
            self.last_enter.as_secs_f64() * 1000.0
        );
        let class = self.answers;
        match self.counted {
            Some(counted) => println!(
                "all {class} answers counted on the presenter's screen ({class} of {class} \
                 answered) {:.0} ms after the start, {:.0} ms after the last Enter",
                counted.as_secs_f64() * 1000.0,
                counted.saturating_sub(self.last_enter).as_secs_f64() * 1000.0
            ),
            None => println!("the presenter's screen never counted every answer"),
        }
        println!(
            "the presenter's reveal: {} {}",
            self.right_line, self.slips_line
        );
        println!(
            "the presenter's own screen showed the question {:.1} ms after the key, the reveal \
             {:.1} ms after it",
            self.presenter_asked.as_secs_f64() * 1000.0,
            self.presenter.as_secs_f64() * 1000.0
        );
        println!();
        println!(
            "{:<34}{:>7}{:>9}{:>9}{:>9}{:>9}",
            "the poll", "count", "p50 ms", "p95 ms", "p99 ms", "max ms"
        );
        latency_rows(&[
            ("presenter's ask to a student", &self.asked),
            ("answer key to next frame", &self.keys),
            ("answer's Enter to \"(in)\"", &self.answered),
            ("presenter's reveal to a student", &self.revealed),
        ]);
        let seconds = self.time.as_secs_f64();
        println!(
            "CPU during the poll: server {:.2} s ({:.0} % of one core), clients {:.2} s ({:.0} %)",
            self.server_cpu.as_secs_f64(),
            100.0 * self.server_cpu.as_secs_f64() / seconds,
            self.client_cpu.as_secs_f64(),
            100.0 * self.client_cpu.as_secs_f64() / seconds
        );
    }

    fn goal(&self, cores: usize) {
        if self.revealed.is_empty() {
            return;
        }
        let p99 = percentile(&self.revealed, 99);
        let verdict = if p99 <= 100.0 { "met" } else { "NOT met" };
        println!(
            "goal p99 ≤ 100 ms for the poll's reveal to every seat: {verdict} ({p99:.2} ms on \
             {cores} cores)"
        );
    }
}
