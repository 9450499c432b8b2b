//! Fuzzing, bounded to run in `cargo test`: mutated lessons through the loader, `check`, `show`
//! (text, Markdown, JSON), `freeze` and the tutor's screens, and random terminal bytes through
//! the input decoder into the tutor. Nothing may panic, and no output may carry a character
//! that acts on a terminal or hides text (C0 and C1 controls, bidi and zero-width characters).
//!
//! The seeds are the built-in lessons, the malformed-lesson corpus, the fixtures and
//! `tests/fuzz_corpus/`. A failure prints the mutated input; add it to `tests/fuzz_corpus/` once
//! fixed. `ATTN_FUZZ_CASES=5000 cargo test --release --test fuzz` fuzzes for longer.

use std::path::{Path, PathBuf};

use attn_tutor::app::{App, PickerEntry, update};
use attn_tutor::cli::{Cli, run_command};
use attn_tutor::input::{action_for, bytes::Decoder};
use attn_tutor::lesson::text::keeps_its_place;
use attn_tutor::lesson::{BUILTIN, load_text};
use attn_tutor::ui::{Theme, view};
use clap::Parser;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

/// Lessons larger than this (tokens × widths) are loaded and checked, but not computed and
/// shown: a debug build would spend seconds on one, and size is the memory tests' business.
const MAX_FUZZED_WORK: usize = 20_000;

fn cases(default: u32) -> u32 {
    std::env::var("ATTN_FUZZ_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default)
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        max_shrink_iters: 200,
        ..Config::default()
    }
}

fn files_in(folder: &str, extension: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("cannot list {}: {error}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == extension))
        .collect();
    files.sort();
    files
}

fn lesson_seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = BUILTIN.iter().map(|b| b.text.as_bytes().to_vec()).collect();
    for folder in [
        "tests/malformed",
        "tests/fixtures",
        "tests/fuzz_corpus/lessons",
    ] {
        seeds.extend(
            files_in(folder, "toml")
                .iter()
                .map(|p| std::fs::read(p).unwrap()),
        );
    }
    seeds
}

fn input_seeds() -> Vec<Vec<u8>> {
    files_in("tests/fuzz_corpus/input", "bin")
        .iter()
        .map(|path| std::fs::read(path).unwrap())
        .collect()
}

/// Bytes a mutation inserts: the characters that break terminals and parsers, and the
/// punctuation and words that lesson files are made of.
fn interesting() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 1..4),
        Just(b"\x1b".to_vec()),
        Just(b"\x07".to_vec()),
        Just("\u{9b}".as_bytes().to_vec()),
        Just("\u{85}".as_bytes().to_vec()),
        Just("\u{202e}".as_bytes().to_vec()),
        Just("\u{200b}".as_bytes().to_vec()),
        Just("\u{301}".repeat(40).into_bytes()),
        Just("猫".as_bytes().to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\n[narration]\n".to_vec()),
        Just(b"\n[expected]\n".to_vec()),
        Just(b"\"".to_vec()),
        Just(b"[".to_vec()),
        Just(b"]".to_vec()),
        Just(b"{".to_vec()),
        Just(b",".to_vec()),
        Just(b"=".to_vec()),
        Just(b"-inf".to_vec()),
        Just(b"nan".to_vec()),
        Just(b"1e308".to_vec()),
        Just(b"999999999999999999999".to_vec()),
        Just(b"-0".to_vec()),
        Just(b"\"causal\"".to_vec()),
        Just(b"shape = [256, 64]".to_vec()),
        Just(b"seed = 18446744073709551615".to_vec()),
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Replace(usize, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), interesting()).prop_map(|(at, bytes)| Mutation::Insert(at, bytes)),
        2 => (any::<usize>(), 1..40usize).prop_map(|(at, len)| Mutation::Delete(at, len)),
        1 => (any::<usize>(), 1..200usize).prop_map(|(at, len)| Mutation::Duplicate(at, len)),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Replace(at, byte)),
    ]
}

fn mutate(seed: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for mutation in mutations {
        let len = bytes.len().max(1);
        match mutation {
            Mutation::Insert(at, insert) => {
                let at = at % (bytes.len() + 1);
                bytes.splice(at..at, insert.iter().copied());
            }
            Mutation::Delete(at, count) => {
                let at = at % len;
                let end = (at + count).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            Mutation::Duplicate(at, count) => {
                let at = at % len;
                let end = (at + count).min(bytes.len());
                let copy = bytes[at.min(end)..end].to_vec();
                bytes.splice(end..end, copy);
            }
            Mutation::Replace(at, byte) => {
                if !bytes.is_empty() {
                    let at = at % bytes.len();
                    bytes[at] = *byte;
                }
            }
        }
    }
    bytes
}

/// What an output leaked: any hidden character but the line breaks (LF or a CRLF file's
/// CRLF, which `freeze` keeps) and tabs of plain text.
fn leaked(output: &[u8]) -> Vec<char> {
    let text = String::from_utf8_lossy(output);
    let mut chars = text.chars().peekable();
    let mut found = Vec::new();
    while let Some(ch) = chars.next() {
        if !keeps_its_place(ch, chars.peek().copied()) {
            found.push(ch);
        }
    }
    found
}

fn assert_no_leak(what: &str, output: &[u8]) -> Result<(), TestCaseError> {
    let found = leaked(output);
    prop_assert!(
        found.is_empty(),
        "{what} leaked {found:?}:\n{}",
        String::from_utf8_lossy(output)
    );
    Ok(())
}

/// Runs one command as the binary would, in memory.
fn command(args: &[&str]) -> (u8, Vec<u8>, Vec<u8>) {
    let cli = Cli::try_parse_from(std::iter::once("attn-tutor").chain(args.iter().copied()))
        .expect("the fuzz test's command lines are valid");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_command(cli.command, false, &mut out, &mut err);
    (code, out, err)
}

/// Every frame drawn from the app, checked for leaks.
fn draw(terminal: &mut Terminal<TestBackend>, app: &App) -> Result<(), TestCaseError> {
    terminal
        .draw(|frame| view(frame, app, &Theme::monochrome()))
        .unwrap();
    let symbols: String = terminal
        .backend()
        .buffer()
        .content
        .iter()
        .map(|cell| cell.symbol())
        .collect();
    assert_no_leak("the tutor's screen", symbols.as_bytes())
}

/// Roughly the multiplications computing a lesson takes.
fn work(lesson: &attn_tutor::lesson::Lesson) -> usize {
    let seq = lesson.seq_len();
    seq * lesson.d_k() * (lesson.d_model().unwrap_or(1) + seq)
}

#[test]
fn mutated_lessons_never_panic_and_never_leak_hidden_characters() {
    let seeds = lesson_seeds();
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("fuzzed.toml");
    let path = path.to_str().unwrap();
    let strategy = (0..seeds.len(), proptest::collection::vec(mutation(), 0..6));
    proptest!(config(cases(300)), |((seed, mutations) in strategy)| {
        let bytes = mutate(&seeds[seed], &mutations);
        std::fs::write(path, &bytes).unwrap();
        let (code, out, err) = command(&["check", path]);
        assert_no_leak("check", &out)?;
        assert_no_leak("check (stderr)", &err)?;
        let Ok(text) = String::from_utf8(bytes) else {
            prop_assert_eq!(code, 2, "a file that is not UTF-8 is invalid");
            return Ok(());
        };
        let loaded = load_text("fuzzed", None, text.clone());
        prop_assert_eq!(loaded.is_ok(), code != 2, "check and the loader agree");
        let Ok(loaded) = loaded else { return Ok(()); };
        if work(&loaded.lesson) > MAX_FUZZED_WORK {
            return Ok(());
        }
        for format in ["text", "markdown", "json"] {
            let (_, out, err) = command(&["show", path, "--format", format]);
            assert_no_leak(&format!("show --format {format}"), &out)?;
            assert_no_leak("show (stderr)", &err)?;
        }
        let (_, out, err) = command(&["freeze", path, "-o", "-"]);
        assert_no_leak("freeze", &out)?;
        assert_no_leak("freeze (stderr)", &err)?;
        let entry = PickerEntry { name: "fuzzed".into(), lesson: Ok(loaded) };
        let mut app = App::new(vec![entry], Some(0));
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        for step in 1..=7 {
            update(&mut app, attn_tutor::app::Action::GoToStep(step));
            draw(&mut terminal, &app)?;
        }
    });
}

/// Bytes a terminal (or a hostile SSH client) may send: sequences the decoder knows, parts of
/// them, pastes, and anything at all.
fn terminal_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => proptest::collection::vec(any::<u8>(), 1..8),
        2 => proptest::sample::select(vec![
            &b"\x1b"[..], b"\x1b[", b"\x1b[A", b"\x1b[B", b"\x1b[C", b"\x1b[D", b"\x1bO",
            b"\x1b[200~", b"\x1b[201~", b"\x1b[<0;5;5M", b"\x1b[<64;1;1M", b"\x1b[1;5C",
            b"\r", b"\x7f", b"\x03", b"e", b"x", b"t", b"n", b"[", b"]", b"?", b"w", b"q",
            b"u", b"r", b"R", b"f", b"-inf", b"0.5", "\u{202e}".as_bytes(),
            "\u{9b}".as_bytes(),
        ]).prop_map(|bytes| bytes.to_vec()),
        2 => (b'1'..=b'7').prop_map(|digit| vec![digit]),
    ];
    proptest::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
}

#[test]
fn random_terminal_bytes_drive_the_tutor_without_panic_or_leak() {
    let seeds = input_seeds();
    // The built-ins are read once: each case opens its own app on a copy of them.
    let entries = App::builtin_entries();
    let strategy = (
        prop_oneof![
            1 => (0..seeds.len()).prop_map(move |index| seeds[index].clone()),
            3 => terminal_bytes(),
        ],
        proptest::collection::vec(1..32usize, 1..8),
        0..BUILTIN.len(),
        (20..140u16, 5..50u16),
    );
    proptest!(config(cases(300)), |((bytes, chunks, lesson, (width, height)) in strategy)| {
        let mut app = App::new(entries.clone(), Some(lesson));
        let mut decoder = Decoder::new();
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        let area = Rect::new(0, 0, width, height);
        let mut rest = &bytes[..];
        let mut sizes = chunks.iter().cycle();
        while !rest.is_empty() {
            let size = (*sizes.next().unwrap()).min(rest.len());
            let (read, after) = rest.split_at(size);
            rest = after;
            for event in decoder.feed(read) {
                if let Some(action) = action_for(&event, &app, area) {
                    // Effects (saves) are not carried out: no file is written by fuzzing.
                    update(&mut app, action);
                }
            }
            draw(&mut terminal, &app)?;
            if app.quit {
                break;
            }
        }
        for event in decoder.flush() {
            if let Some(action) = action_for(&event, &app, area) {
                update(&mut app, action);
            }
        }
        draw(&mut terminal, &app)?;
    });
}
