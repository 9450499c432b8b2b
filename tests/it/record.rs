//! `attn-tutor --record FILE.cast`: the real binary in a pseudo-terminal writes an asciicast of
//! what it draws; replayed through a vt100 screen, the cast ends on the screen the terminal
//! showed.

use crate::common;

use std::time::Duration;

use common::pty::{PATIENCE, PtyChild, top_line};
use portable_pty::CommandBuilder;

/// The cast replayed: every "o" event written to a vt100 screen of the header's size, resized
/// where the cast says so.
fn replay(cast: &str) -> (serde_json::Value, vt100::Parser, usize) {
    let mut lines = cast.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    let (width, height) = (
        header["width"].as_u64().unwrap() as u16,
        header["height"].as_u64().unwrap() as u16,
    );
    let mut screen = vt100::Parser::new(height.try_into().unwrap(), width.try_into().unwrap(), 0);
    let mut resizes = 0;
    let mut last_time = 0.0;
    for line in lines {
        let event: serde_json::Value = serde_json::from_str(line).unwrap();
        let time = event[0].as_f64().unwrap();
        assert!(time >= last_time, "times go forwards: {line}");
        last_time = time;
        match event[1].as_str().unwrap() {
            "o" => screen.process(event[2].as_str().unwrap().as_bytes()),
            "r" => {
                let (w, h) = event[2].as_str().unwrap().split_once('x').unwrap();
                let (rows, cols): (u16, u16) = (h.parse().unwrap(), w.parse().unwrap());
                screen
                    .screen_mut()
                    .set_size(rows.try_into().unwrap(), cols.try_into().unwrap());
                resizes += 1;
            }
            other => panic!("an event of kind {other}"),
        }
    }
    (header, screen, resizes)
}

#[test]
fn a_recorded_session_replays_to_the_screen_the_terminal_showed() {
    let dir = tempfile::TempDir::new().unwrap();
    let cast_path = dir.path().join("demo.cast");
    let mut command = CommandBuilder::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
    command.args(["--record", cast_path.to_str().unwrap(), "cat-sleeps"]);
    command.env("TERM", "xterm-256color");
    command.env_remove("NO_COLOR");
    let mut tutor = PtyChild::spawn(command);
    tutor.wait_for_step("Embedding");
    tutor.press("nn");
    tutor.wait_for_step("Scores");
    // A resize is recorded too.
    tutor.resize(100, 30);
    // The second resize waits until the first is in the cast: two resizes close together are
    // one for a terminal (and on a loaded machine they can arrive together).
    let resizes_in_the_cast = || {
        std::fs::read_to_string(&cast_path)
            .unwrap()
            .lines()
            .filter(|event| event.contains("\"r\""))
            .count()
    };
    let wait_for_resizes = |count: usize| {
        let started = std::time::Instant::now();
        while resizes_in_the_cast() < count && started.elapsed() < PATIENCE {
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait_for_resizes(1);
    tutor.resize(80, 24);
    // A terminal's resize comes as a signal, apart from the keys typed: on a loaded machine the
    // next key can be read before it. The screen asked for is the one after both.
    wait_for_resizes(2);
    tutor.press("n");
    let on_scaling = tutor.wait_for_step("Scaling");
    // The cast is written as it goes: before the tutor ends, it already holds this screen.
    let (header, screen, resizes) = replay(&std::fs::read_to_string(&cast_path).unwrap());
    assert_eq!(header["version"], 2);
    assert_eq!(
        (header["width"].as_u64(), header["height"].as_u64()),
        (Some(80), Some(24))
    );
    assert_eq!(resizes, 2);
    let replayed = screen.screen().contents();
    assert_eq!(top_line(&replayed), top_line(&on_scaling));
    assert_eq!(
        replayed, on_scaling,
        "the replayed screen is the terminal's"
    );
    tutor.press("qq");
    tutor.wait_for_exit();
    // Without a terminal the tutor does not start, and the cast is left as it is (that a
    // second recording never writes over a file is `term::record`'s own test).
    let dir_text = std::fs::read_to_string(&cast_path).unwrap();
    let out = common::attn_tutor(&dir)
        .args(["--record", cast_path.to_str().unwrap(), "cat-sleeps"])
        .timeout(PATIENCE)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a terminal"));
    assert_eq!(std::fs::read_to_string(&cast_path).unwrap(), dir_text);
}

#[test]
fn a_classroom_records_only_its_presenters_screen() {
    let dir = tempfile::TempDir::new().unwrap();
    let out = common::attn_tutor(&dir)
        .args(["serve", "--open", "--record", "class.cast"])
        .timeout(PATIENCE)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--present"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.path().join("class.cast").exists());
}

#[test]
fn record_with_a_subcommand_that_draws_nothing_is_refused() {
    let dir = tempfile::TempDir::new().unwrap();
    for args in [
        ["--record", "x.cast", "list"].as_slice(),
        ["--record", "x.cast", "show", "cat-sleeps"].as_slice(),
    ] {
        let out = common::attn_tutor(&dir).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--record x.cast records the tutor"),
            "{args:?}"
        );
    }
    // Training's JSON lines draw no screen to record, which the refusal says.
    let out = common::attn_tutor(&dir)
        .args([
            "--record",
            "x.cast",
            "train",
            "induction",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "records the live training screen, and `train` draws none with --format json"
        ),
        "{said}"
    );
    assert!(!dir.path().join("x.cast").exists());
}

#[test]
fn a_class_that_cannot_start_leaves_no_recording_behind() {
    let dir = tempfile::TempDir::new().unwrap();
    let cast_path = dir.path().join("class.cast");
    // A port already taken: the class never starts, in a real terminal as a teacher runs it.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let mut command = CommandBuilder::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
    command.args([
        "serve",
        "--open",
        "--present",
        "--listen",
        &address,
        "--record",
    ]);
    command.arg(cast_path.to_str().unwrap());
    command.env("TERM", "xterm-256color");
    let mut server = PtyChild::spawn(command);
    let status = server.wait_for_exit();
    assert!(!status.success());
    assert!(
        server.screen_text().contains("error"),
        "{}",
        server.screen_text()
    );
    assert!(!cast_path.exists(), "the header alone is left behind");
    drop(taken);
}

#[test]
fn a_hostile_term_is_written_into_the_header_visibly() {
    let dir = tempfile::TempDir::new().unwrap();
    let cast_path = dir.path().join("term.cast");
    let mut command = CommandBuilder::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
    command.args(["--record", cast_path.to_str().unwrap(), "cat-sleeps"]);
    // JSON escapes ESC and BEL, but leaves C1 controls such as CSI (U+009B) and bidi controls
    // as they are: a player or `cat` of the file would act on them.
    command.env("TERM", "xterm\u{9b}2J\u{1b}]2;PWNED\u{7}\u{202e}");
    let mut tutor = PtyChild::spawn(command);
    tutor.wait_for_step("Embedding");
    tutor.press("qq");
    tutor.wait_for_exit();
    let cast = std::fs::read_to_string(&cast_path).unwrap();
    let header = cast.lines().next().unwrap();
    let raw: Vec<char> = header
        .chars()
        .filter(|ch| attn_tutor::lesson::text::is_hidden(*ch))
        .collect();
    assert!(raw.is_empty(), "{raw:?} raw in the header {header:?}");
    let header: serde_json::Value = serde_json::from_str(header).unwrap();
    assert_eq!(
        header["env"]["TERM"],
        "xterm\\u{009b}2J\\u{001b}]2;PWNED\\u{0007}\\u{202e}"
    );
}
