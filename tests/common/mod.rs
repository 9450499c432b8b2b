//! Helpers shared by the command-line tests: the binary in a scratch folder, fixtures, a real
//! terminal for the color tests, and a pseudo-terminal read through vt100 ([`pty`]).
#![allow(dead_code)]

pub mod arithmetic;
pub mod browser;
pub mod checkpoint;
pub mod classroom;
pub mod pty;
pub mod web;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use assert_cmd::Command;
use tempfile::TempDir;

pub const ESC: u8 = 0x1b;

/// The built-in lessons, named here rather than read from the program, so that a lesson
/// dropped or renamed by mistake fails the tests that go through them all.
pub const BUILT_INS: [&str; 14] = [
    "cat-sleeps",
    "numpy-walkthrough",
    "cat-sat-mat",
    "random-qkv",
    "identity-2x2",
    "causal-cat-sat-mat",
    "positions-cat-sat-mat",
    "rope-same-distance",
    "two-heads",
    "gqa",
    "translation",
    "generation",
    "backward",
    "induction",
];

/// The binary, run from an empty temporary directory (so no stray file can shadow a built-in),
/// with its data folder inside it, whatever `XDG_DATA_HOME` says (see [`pty::PtyChild::spawn`]).
pub fn attn_tutor(dir: &TempDir) -> Command {
    let mut cmd = Command::cargo_bin("attn-tutor").expect("the attn-tutor binary is built");
    cmd.current_dir(dir.path())
        .env_remove("NO_COLOR")
        .env("XDG_DATA_HOME", dir.path().join("data"));
    cmd
}

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Runs `attn-tutor show LESSON ARGS…` in a scratch folder, expecting success; returns stdout.
pub fn show(lesson: &str, args: &[&str]) -> String {
    String::from_utf8(show_bytes(lesson, args)).expect("show writes UTF-8")
}

/// `show`'s stdout as bytes, for comparing byte for byte.
pub fn show_bytes(lesson: &str, args: &[&str]) -> Vec<u8> {
    let dir = TempDir::new().unwrap();
    let output = attn_tutor(&dir)
        .arg("show")
        .arg(lesson)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "show {lesson} {args:?} failed: {output:?}"
    );
    output.stdout
}

/// Runs the binary on a pseudo-terminal through util-linux `script`, so that stderr is a
/// terminal; returns the exit code and everything written. `None` when `script` is missing.
pub fn run_on_terminal(args: &[&str], no_color_env: Option<&str>) -> Option<(i32, Vec<u8>)> {
    let probe = std::process::Command::new("script")
        .args(["-q", "-e", "-c", "true", "/dev/null"])
        .stdin(Stdio::null())
        .output();
    if !probe.is_ok_and(|probe| probe.status.success()) {
        missing_tool("script", "bsdutils");
        return None;
    }
    let quote = |word: &str| format!("'{}'", word.replace('\'', r"'\''"));
    let command: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_attn-tutor"))
        .chain(args.iter().copied())
        .map(quote)
        .collect();
    let dir = TempDir::new().unwrap();
    let mut script = std::process::Command::new("script");
    script
        .args(["-q", "-e", "-c", &command.join(" "), "/dev/null"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .env_remove("NO_COLOR")
        .env("XDG_DATA_HOME", dir.path().join("data"));
    if let Some(value) = no_color_env {
        script.env("NO_COLOR", value);
    }
    let output = script.output().unwrap();
    Some((output.status.code().unwrap_or(-1), output.stdout))
}

/// A test that needs a tool the machine lacks is skipped where a developer runs it, but fails
/// under CI (`CI` set, as CI services do), so that no CI run passes without running it.
pub fn missing_tool(tool: &str, package: &str) {
    let message = format!("`{tool}` is not installed (install {package})");
    if std::env::var_os("CI").is_some_and(|value| !value.is_empty() && value != "false") {
        panic!("{message}: under CI this test must run, not be skipped");
    }
    eprintln!("skipping: {message}");
}

/// A drawn buffer as text, as a terminal shows it: one line per row, trailing spaces trimmed,
/// the cell after a wide symbol skipped.
pub fn buffer_text(buffer: &ratatui::buffer::Buffer) -> String {
    use unicode_width::UnicodeWidthStr;
    buffer
        .content
        .chunks(usize::from(buffer.area.width.max(1)))
        .map(|cells| {
            let mut line = String::new();
            let mut skip = 0;
            for cell in cells {
                if skip == 0 {
                    line.push_str(cell.symbol());
                }
                skip = usize::max(skip, cell.symbol().width()).saturating_sub(1);
            }
            line.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The status line's message, or nothing.
pub fn status(app: &attn_tutor::app::App) -> String {
    app.status
        .as_ref()
        .map(|status| status.text.clone())
        .unwrap_or_default()
}

/// Row `row` of the 80×24 screen, without its trailing spaces: row 0 is the header (the title
/// and where the learner is).
pub fn screen_line(app: &attn_tutor::app::App, row: usize) -> String {
    screen(app, 80, 24)
        .lines()
        .nth(row)
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

/// Draws the app once on a fresh test terminal and returns every cell's symbol, a line per row.
pub fn screen(app: &attn_tutor::app::App, width: u16, height: u16) -> String {
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| attn_tutor::ui::view(frame, app, &attn_tutor::ui::Theme::monochrome()))
        .unwrap();
    terminal
        .backend()
        .buffer()
        .content
        .chunks(usize::from(width.max(1)))
        .map(|row| row.iter().map(|cell| cell.symbol()).collect::<String>() + "\n")
        .collect()
}

pub fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A lesson of two heads with W_o, typed out: head 1 looks at the previous token's pattern,
/// head 2 at the token itself, so that the heads' weights differ.
pub const TWO_HEADS: &str = r#"
format = 2
title = "Two heads"
tokens = ["The", "cat", "sat", "on", "the", "mat"]
embeddings = [
  [1, 0, 0, 1],
  [0, 1, 0, 1],
  [1, 1, 0, 0],
  [0, 0, 1, 1],
  [1, 0, 1, 0],
  [0, 1, 1, 0],
]
heads = 2
w_q = [
  [1, 0, 2, 0],
  [0, 1, 0, 2],
  [1, 1, 0, 0],
  [0, 0, 1, 1],
]
w_k = [
  [0, 1, 2, 0],
  [1, 0, 0, 2],
  [0, 0, 1, 0],
  [1, 1, 0, 1],
]
w_v = [
  [1, 0, 0, 1],
  [0, 1, 1, 0],
  [1, 1, 0, 0],
  [0, 0, 1, 1],
]
w_o = [
  [1, 0, 0, 0],
  [0, 1, 0, 0],
  [0, 0, 1, 0],
  [0, 0, 0, 1],
]
"#;

/// Grouped-query attention: four query heads sharing two K/V groups, six tokens, generated
/// weights.
pub const GQA: &str = r#"
format = 2
title = "Four heads, two K/V groups"
tokens = ["The", "cat", "sat", "on", "the", "mat"]
embeddings = { random = "normal", seed = 1, shape = [6, 4] }
heads = 4
kv_heads = 2
w_q = { random = "normal", seed = 2, shape = [4, 8] }
w_k = { random = "normal", seed = 3, shape = [4, 4] }
w_v = { random = "normal", seed = 4, shape = [4, 4] }
w_o = { random = "normal", seed = 5, shape = [8, 4] }
"#;

/// `heads` query heads of 2 dimensions each over `tokens` generated tokens (d_model 8): the
/// All heads screen's paging and the benchmarks' large lessons.
pub fn many_heads(heads: usize, tokens: usize) -> String {
    let names: Vec<String> = (0..tokens)
        .map(|token| format!("\"w{token:02}\""))
        .collect();
    format!(
        r#"
format = 2
title = "{heads} heads"
tokens = [{}]
embeddings = {{ random = "normal", seed = 1, shape = [{tokens}, 8] }}
heads = {heads}
w_q = {{ random = "normal", seed = 2, shape = [8, {w}] }}
w_k = {{ random = "normal", seed = 3, shape = [8, {w}] }}
w_v = {{ random = "normal", seed = 4, shape = [8, {w}] }}
w_o = {{ random = "normal", seed = 5, shape = [{w}, 8] }}
"#,
        names.join(", "),
        w = heads * 2
    )
}

/// The tutor opened on a lesson given as text (named `name`, as a file stem would be).
pub fn lesson_app(name: &str, text: &str) -> attn_tutor::app::App {
    let loaded = attn_tutor::lesson::load_text(name, None, text.to_string())
        .unwrap_or_else(|error| panic!("{name} loads: {}", error.first_line()));
    attn_tutor::app::App::new(
        vec![attn_tutor::app::PickerEntry {
            name: name.to_string(),
            lesson: Ok(loaded),
        }],
        Some(0),
    )
}

/// The tutor on the two-head lesson.
pub fn two_head_lesson() -> attn_tutor::app::App {
    lesson_app("typed-heads", TWO_HEADS)
}

/// The tutor on the grouped-query lesson.
pub fn gqa_lesson() -> attn_tutor::app::App {
    lesson_app("generated-gqa", GQA)
}

/// Goes to the step with this key, by its number.
pub fn go_to(app: &mut attn_tutor::app::App, key: &str) {
    let tutor = app.tutor_mut().expect("a lesson is open");
    let index = tutor
        .steps
        .iter()
        .position(|step| step.key() == key)
        .unwrap_or_else(|| panic!("the lesson has a {key} step"));
    tutor.go_to_step(index);
}

/// A lesson given as text, which must be valid: the test fails naming its errors otherwise.
pub fn valid_lesson(text: &str) -> attn_tutor::lesson::Lesson {
    let parsed = attn_tutor::lesson::parse(text);
    let errors: Vec<String> = parsed.errors().map(|error| error.message.clone()).collect();
    parsed
        .lesson
        .unwrap_or_else(|| panic!("the lesson is refused: {errors:?}"))
}

/// Whether this interpreter has what the reference needs: numpy, and tomllib (Python 3.11+).
pub fn has_numpy(python: &std::ffi::OsString) -> bool {
    std::process::Command::new(python)
        .args(["-c", "import numpy, tomllib"])
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|output| output.status.success())
}

/// The interpreter to run the numpy references (tests/reference/) with, or `None` (skipped
/// here, failed under CI).
pub fn numpy_python() -> Option<std::ffi::OsString> {
    if let Some(chosen) = std::env::var_os("ATTN_PYTHON") {
        assert!(
            has_numpy(&chosen),
            "ATTN_PYTHON={chosen:?} cannot import numpy and tomllib (Python 3.11 or later)"
        );
        return Some(chosen);
    }
    let found = ["python3", "/usr/bin/python3"]
        .map(std::ffi::OsString::from)
        .into_iter()
        .find(has_numpy);
    if found.is_none() {
        missing_tool("python3 with numpy", "python3-numpy");
    }
    found
}
