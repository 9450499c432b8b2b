//! The malformed-lesson corpus: every file in tests/malformed/ must be refused by
//! `attn-tutor check` with its own specific diagnostic, and nothing may panic or hang.
//!
//! Each corpus file starts with comment lines saying what it must produce:
//!
//! ```toml
//! # expect: unknown key `tokns`
//! # at: 7:1
//! # help: did you mean `tokens`?
//! ```
//!
//! `expect` is a substring of the first `error:` line, `at` is the line:col of that error's
//! ` --> ` location, and `help` (optional) is a substring of that error's `= help:` line.
//!
//! Cases that need a file too big or too broken to commit (over 16 MiB, not UTF-8, deeply
//! nested, huge keys, huge generated matrices) are written to a temporary folder at run time.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use predicates::prelude::*;

const CORPUS: &str = "tests/malformed";
const TIMEOUT: Duration = Duration::from_secs(10);
/// `attn-tutor check` exits with this status when a lesson is invalid.
const INVALID: i32 = 2;

/// Corpus files whose declared expectation is what *should* happen, but the code does not do
/// it yet. They are skipped by `every_malformed_lesson_gets_its_diagnostic`; when the code is
/// fixed, remove the entry here (`known_bad_cases_report_their_status` says which now pass).
const KNOWN_BAD: &[(&str, &str)] = &[];

/// What a corpus file declares about itself.
#[derive(Debug)]
struct Expectation {
    message: String,
    at: String,
    help: Option<String>,
}

fn corpus_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(CORPUS);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("cannot list {}: {error}", dir.display()))
        .map(|entry| entry.expect("a readable folder entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    files.sort();
    files
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .expect("a file name")
        .to_string_lossy()
        .into_owned()
}

/// Reads the `# expect:`, `# at:` and `# help:` comment lines at the top of a corpus file.
fn expectation(path: &Path) -> Result<Expectation, String> {
    let bytes = std::fs::read(path).map_err(|error| format!("cannot read: {error}"))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut message = None;
    let mut at = None;
    let mut help = None;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        let Some(comment) = line.strip_prefix('#') else {
            break;
        };
        let comment = comment.trim_start();
        if let Some(rest) = comment.strip_prefix("expect:") {
            message = Some(rest.trim().to_string());
        } else if let Some(rest) = comment.strip_prefix("at:") {
            at = Some(rest.trim().to_string());
        } else if let Some(rest) = comment.strip_prefix("help:") {
            help = Some(rest.trim().to_string());
        }
    }
    let message = message.ok_or("no `# expect:` line at the top of the file")?;
    let at = at.ok_or("no `# at:` line at the top of the file")?;
    let valid_at = at
        .split_once(':')
        .is_some_and(|(l, c)| l.parse::<usize>().is_ok() && c.parse::<usize>().is_ok());
    if !valid_at {
        return Err(format!("`# at: {at}` is not LINE:COL"));
    }
    Ok(Expectation { message, at, help })
}

/// Runs `attn-tutor check --no-color ARG` from the package root, with the timeout.
fn check(arg: &str) -> (Output, Duration) {
    check_within(arg, TIMEOUT)
}

/// `check` with its own hang guard. The guard only catches a hang: speed is measured by the
/// benchmarks, never asserted here.
fn check_within(arg: &str, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let output = Command::new(assert_cmd::cargo::cargo_bin!("attn-tutor"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("NO_COLOR")
        .args(["check", "--no-color", arg])
        .timeout(limit)
        .output()
        .expect("attn-tutor runs");
    (output, started.elapsed())
}

/// Problems common to every run: a panic, a timeout, a crash by signal.
fn run_problems(output: &Output, elapsed: Duration) -> Vec<String> {
    run_problems_within(output, elapsed, TIMEOUT)
}

fn run_problems_within(output: &Output, elapsed: Duration, limit: Duration) -> Vec<String> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let mut problems = Vec::new();
    if predicate::str::contains("panicked").eval(&stderr) {
        problems.push("panicked".to_string());
    }
    if let Some(bad) = stderr.chars().find(|ch| unsafe_for_terminals(*ch)) {
        problems.push(format!(
            "stderr contains U+{:04X}, which must never reach a terminal",
            bad as u32
        ));
    }
    if elapsed >= limit {
        problems.push(format!("did not finish within {limit:?} (killed)"));
    } else if output.status.code().is_none() {
        problems.push(format!("killed by a signal: {:?}", output.status));
    }
    problems
}

/// Characters a diagnostic must never print: with --no-color there is no reason for any
/// control character but newline, and bidi or zero-width characters echoed from a lesson could
/// make the report read differently from what it is.
fn unsafe_for_terminals(ch: char) -> bool {
    (ch.is_control() && ch != '\n')
        || matches!(ch as u32, 0x200B..=0x200F | 0x202A..=0x202E | 0x2066..=0x2069 | 0xFEFF)
}

/// The first error of a rendered report: its message line, its ` --> ` line and its help.
struct FirstError<'a> {
    message: &'a str,
    location: Option<&'a str>,
    help: Option<&'a str>,
}

fn first_error(stderr: &str) -> Option<FirstError<'_>> {
    let mut lines = stderr
        .lines()
        .skip_while(|line| !line.starts_with("error:"));
    let message = lines.next()?;
    let mut location = None;
    let mut help = None;
    for line in lines {
        if line.starts_with("error:") || line.starts_with("warning:") {
            break;
        }
        let trimmed = line.trim_start();
        if location.is_none()
            && let Some(rest) = trimmed.strip_prefix("--> ")
        {
            location = Some(rest);
        }
        if help.is_none()
            && let Some(rest) = trimmed.strip_prefix("= help:")
        {
            help = Some(rest.trim());
        }
    }
    Some(FirstError {
        message,
        location,
        help,
    })
}

/// Everything wrong with one corpus file's run, or nothing.
fn judge(path: &Path) -> Result<(Vec<String>, Duration), String> {
    let expected = expectation(path)?;
    let relative = format!("{CORPUS}/{}", path.file_name().unwrap().to_string_lossy());
    let (output, elapsed) = check(&relative);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let mut problems = run_problems(&output, elapsed);
    if output.status.code() != Some(INVALID) {
        problems.push(format!(
            "exit status {:?}, expected {INVALID}",
            output.status.code()
        ));
    }
    match first_error(&stderr) {
        None => problems.push("no `error:` line on stderr".to_string()),
        Some(first) => {
            if !predicate::str::contains(expected.message.as_str()).eval(first.message) {
                problems.push(format!(
                    "first error is `{}`, expected it to contain `{}`",
                    first.message, expected.message
                ));
            }
            let location = format!("{relative}:{}", expected.at);
            if first.location != Some(location.as_str()) {
                problems.push(format!(
                    "first error is at `{}`, expected `{location}`",
                    first.location.unwrap_or("(no --> line)")
                ));
            }
            if let Some(help) = &expected.help
                && !first
                    .help
                    .is_some_and(|found| predicate::str::contains(help.as_str()).eval(found))
            {
                problems.push(format!(
                    "first error's help is `{}`, expected it to contain `{help}`",
                    first.help.unwrap_or("(none)")
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok((problems, elapsed))
    } else {
        let report = stderr.chars().take(3000).collect::<String>();
        problems.push(format!("stderr was:\n{report}"));
        Ok((problems, elapsed))
    }
}

#[test]
fn every_malformed_lesson_gets_its_diagnostic() {
    let mut failures = Vec::new();
    for path in corpus_files() {
        let name = stem(&path);
        if KNOWN_BAD.iter().any(|(bad, _)| *bad == name) {
            continue;
        }
        match judge(&path) {
            Ok((problems, _)) if problems.is_empty() => {}
            Ok((problems, _)) => {
                failures.push(format!("{name}.toml:\n  {}", problems.join("\n  ")))
            }
            Err(problem) => failures.push(format!("{name}.toml: {problem}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} malformed lessons did not get their diagnostic:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_corpus_is_large_enough() {
    let files = corpus_files();
    assert!(
        files.len() >= 30,
        "only {} files in {CORPUS}; the corpus needs at least 30",
        files.len()
    );
}

#[test]
fn known_bad_cases_are_in_the_corpus() {
    let names: Vec<String> = corpus_files().iter().map(|path| stem(path)).collect();
    for (bad, _) in KNOWN_BAD {
        assert!(
            names.iter().any(|name| name == bad),
            "KNOWN_BAD names {bad}, which is not in {CORPUS}"
        );
    }
}

/// Never fails: says which known-bad cases still misbehave and which now pass (those can be
/// moved back into the main test by deleting their KNOWN_BAD entry).
#[test]
fn known_bad_cases_report_their_status() {
    for (bad, reason) in KNOWN_BAD {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(CORPUS)
            .join(format!("{bad}.toml"));
        match judge(&path) {
            Ok((problems, _)) if problems.is_empty() => {
                eprintln!("{bad}: now passes; remove it from KNOWN_BAD")
            }
            Ok(_) => eprintln!("{bad}: still known bad: {reason}"),
            Err(problem) => eprintln!("{bad}: {problem}"),
        }
    }
}

/// A lesson that loads, for cases that need a valid body.
const VALID_BODY: &str = "format = 1
title = \"Tiny\"
tokens = [\"a\", \"b\"]
q = [[1, 0], [0, 1]]
k = [[1, 0], [0, 1]]
v = [[1, 2], [3, 4]]
";

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("the temporary file is written");
    path.to_str().expect("a UTF-8 temporary path").to_string()
}

fn assert_clean_run(name: &str, output: &Output, elapsed: Duration) {
    let problems = run_problems(output, elapsed);
    assert!(
        problems.is_empty(),
        "{name}: {} ({elapsed:?})\nstderr:\n{}",
        problems.join("; "),
        String::from_utf8_lossy(&output.stderr)
            .chars()
            .take(3000)
            .collect::<String>()
    );
}

#[test]
fn a_file_over_sixteen_mebibytes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = VALID_BODY.as_bytes().to_vec();
    text.extend_from_slice(b"# padding\n");
    text.resize(16 * 1024 * 1024 + 1, b'#');
    let path = write(dir.path(), "huge.toml", &text);
    let (output, elapsed) = check(&path);
    assert_clean_run("huge.toml", &output, elapsed);
    assert_eq!(output.status.code(), Some(INVALID));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let expected = format!(
        "error: {path} is 16777217 bytes; lesson files are at most 16777216 bytes (16 MiB)"
    );
    assert!(
        predicate::str::contains(expected.as_str()).eval(&stderr),
        "{stderr}"
    );
    assert!(
        predicate::str::contains("help: use generators").eval(&stderr),
        "{stderr}"
    );
}

#[test]
fn a_file_of_exactly_sixteen_mebibytes_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = VALID_BODY.as_bytes().to_vec();
    text.extend_from_slice(b"# padding ");
    text.resize(16 * 1024 * 1024 - 1, b'#');
    text.push(b'\n');
    let path = write(dir.path(), "just-fits.toml", &text);
    let (output, elapsed) = check(&path);
    assert_clean_run("just-fits.toml", &output, elapsed);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_file_that_is_not_utf8_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = b"format = 1\ntitle = \"Caf".to_vec();
    let offset = text.len();
    text.extend_from_slice(b"\xe9\"\ntokens = [\"a\", \"b\"]\n");
    let path = write(dir.path(), "latin1.toml", &text);
    let (output, elapsed) = check(&path);
    assert_clean_run("latin1.toml", &output, elapsed);
    assert_eq!(output.status.code(), Some(INVALID));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let expected = format!("error: {path} is not UTF-8 text (invalid byte at offset {offset})");
    assert!(
        predicate::str::contains(expected.as_str()).eval(&stderr),
        "{stderr}"
    );
    assert!(
        predicate::str::contains("help: save the lesson as UTF-8").eval(&stderr),
        "{stderr}"
    );
}

#[test]
fn a_mask_row_that_hides_every_key_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{VALID_BODY}mask = [[0, -inf], [-inf, -inf]]\n");
    let path = write(dir.path(), "blind-row.toml", text.as_bytes());
    let (output, elapsed) = check(&path);
    assert_clean_run("blind-row.toml", &output, elapsed);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        predicate::str::contains("warning: row 2 of the mask hides every key").eval(&stderr),
        "{stderr}"
    );
    assert!(
        predicate::str::contains(format!("--> {path}:7:20").as_str()).eval(&stderr),
        "{stderr}"
    );
    assert!(!stderr.contains("error:"), "{stderr}");
}

/// Runs a hostile file that must be refused: exit 2 with an `error:`, no panic, no hang.
fn assert_refused(name: &str, text: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), name, text.as_bytes());
    let (output, elapsed) = check(&path);
    assert_clean_run(name, &output, elapsed);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let start: String = stderr.chars().take(2000).collect();
    assert_eq!(
        output.status.code(),
        Some(INVALID),
        "{name} after {elapsed:?}:\n{start}"
    );
    assert!(stderr.starts_with("error: "), "{name}:\n{start}");
    assert!(
        predicate::str::contains(format!("--> {path}:4:").as_str()).eval(&stderr),
        "{name}: the first error should be on line 4:\n{start}"
    );
}

const DEEP_HEAD: &str = "format = 1\ntitle = \"Deep\"\ntokens = [\"a\", \"b\"]\n";

#[test]
fn ten_thousand_nested_arrays_do_not_overflow_the_stack() {
    let text = format!(
        "{DEEP_HEAD}q = {}{}\nk = [[1, 0], [0, 1]]\nv = [[1, 0], [0, 1]]\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    assert_refused("nested.toml", &text);
}

#[test]
fn ten_thousand_unclosed_arrays_do_not_overflow_the_stack() {
    let text = format!("{DEEP_HEAD}q = {}\n", "[".repeat(10_000));
    assert_refused("unclosed.toml", &text);
}

#[test]
fn a_hundred_thousand_nested_inline_tables_do_not_overflow_the_stack() {
    let text = format!("{DEEP_HEAD}q = {}\n", "{a = ".repeat(100_000));
    assert_refused("braces.toml", &text);
}

#[test]
fn deep_nesting_inside_a_generator_does_not_overflow_the_stack() {
    let text = format!(
        "{DEEP_HEAD}q = {{ random = \"normal\", seed = 1, shape = {}2, 2{} }}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    assert_refused("generator.toml", &text);
}

#[test]
fn narration_for_masking_without_a_mask_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{VALID_BODY}[narration]\nmasking = \"Nothing is hidden.\"\n");
    let path = write(dir.path(), "unused-narration.toml", text.as_bytes());
    let (output, elapsed) = check(&path);
    assert_clean_run("unused-narration.toml", &output, elapsed);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        predicate::str::contains(
            "warning: narration for masking is never shown: this lesson has no mask"
        )
        .eval(&stderr),
        "{stderr}"
    );
    assert!(
        predicate::str::contains(format!("--> {path}:8:1").as_str()).eval(&stderr),
        "{stderr}"
    );
}

#[test]
fn a_key_of_100_000_characters_is_reported_without_trouble() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{VALID_BODY}{} = 1\n", "k".repeat(100_000));
    let path = write(dir.path(), "long-key.toml", text.as_bytes());
    let (output, elapsed) = check(&path);
    assert_clean_run("long-key.toml", &output, elapsed);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(INVALID), "{}", &stderr[..500]);
    assert!(
        predicate::str::contains("error: unknown key `kkkk").eval(&stderr),
        "{}",
        &stderr[..500]
    );
    assert!(
        predicate::str::contains(format!("--> {path}:7:1").as_str()).eval(&stderr),
        "{}",
        &stderr[..500]
    );
}

#[test]
fn the_largest_generated_lesson_loads_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let tokens: Vec<String> = (1..=256).map(|i| format!("\"t{i}\"")).collect();
    let text = format!(
        "format = 1
title = \"The largest lesson\"
tokens = [{}]
embeddings = {{ random = \"normal\", seed = 1, shape = [256, 1024] }}
w_q = {{ random = \"normal\", seed = 2, shape = [1024, 1024] }}
w_k = {{ random = \"uniform\", seed = 3, shape = [1024, 1024] }}
w_v = {{ random = \"normal\", seed = 4, shape = [1024, 1024] }}
mask = \"causal\"
",
        tokens.join(", ")
    );
    let path = write(dir.path(), "largest.toml", text.as_bytes());
    // Three 1024 × 1024 products take seconds in an unoptimized test build on a busy machine;
    // the limit is a generous hang guard (the release figure is in the README's benchmarks).
    let limit = Duration::from_secs(120);
    let (output, elapsed) = check_within(&path, limit);
    let problems = run_problems_within(&output, elapsed, limit);
    assert!(problems.is_empty(), "largest.toml: {}", problems.join("; "));
    let code = output.status.code();
    assert!(
        code == Some(0) || code == Some(1),
        "exit status {code:?} after {elapsed:?}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("largest.toml: checked in {elapsed:?}");
}

#[test]
fn narration_for_a_positions_step_the_lesson_lacks_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{VALID_BODY}[narration]\nrotation = \"Each query turns.\"\n");
    let path = write(dir.path(), "unused-rotation.toml", text.as_bytes());
    let (output, elapsed) = check(&path);
    assert_clean_run("unused-rotation.toml", &output, elapsed);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "warning: narration for rotation is never shown: this lesson has no Rotation step"
        ) && stderr.contains("add `positions = \"rope\"`"),
        "{stderr}"
    );
}
