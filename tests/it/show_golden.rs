//! `show` writes exactly what it wrote before its output was streamed: every built-in lesson and
//! the fixtures, in text, Markdown and JSON, byte for byte. The expected files in
//! `tests/fixtures/show/` were recorded from the version that built the output in memory; since
//! then, on purpose, their steps are numbered as the tutor numbers them (only the steps each
//! lesson has), and the JSON has format 2's keys (`x`, `positions`, `heads`, `concat`, `w_o`)
//! besides format 1's, which are unchanged.

use crate::common;
use common::*;

fn expect_same(lesson: &str, args: &[&str], recorded: &str) {
    let want = std::fs::read(fixture("show").join(recorded)).unwrap();
    let got = show_bytes(lesson, args);
    assert!(
        got == want,
        "show {lesson} {args:?} differs from tests/fixtures/show/{recorded}:\n{}",
        first_difference(&got, &want)
    );
}

fn first_difference(got: &[u8], want: &[u8]) -> String {
    let got = String::from_utf8_lossy(got);
    let want = String::from_utf8_lossy(want);
    for (line, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        if g != w {
            return format!("line {}: got {g:?}, want {w:?}", line + 1);
        }
    }
    format!(
        "one is longer: got {} lines, want {}",
        got.lines().count(),
        want.lines().count()
    )
}

#[test]
fn json_of_every_built_in_lesson_is_unchanged() {
    for lesson in BUILT_INS {
        expect_same(lesson, &["--format", "json"], &format!("{lesson}.json"));
        expect_same(
            lesson,
            &["--format", "json", "--cell", "2,2"],
            &format!("{lesson}.cell-2-2.json"),
        );
    }
    expect_same(
        "cat-sat-mat",
        &["--format", "json", "--step", "softmax"],
        "cat-sat-mat.softmax.json",
    );
}

#[test]
fn text_and_markdown_of_every_built_in_lesson_are_unchanged() {
    for lesson in BUILT_INS {
        expect_same(lesson, &[], &format!("{lesson}.txt"));
        expect_same(lesson, &["--format", "markdown"], &format!("{lesson}.md"));
    }
}

#[test]
fn fixtures_with_generators_masks_and_many_columns_are_unchanged() {
    for name in ["generated", "direct-qkv"] {
        let path = fixture(&format!("{name}.toml"));
        let path = path.to_str().unwrap();
        expect_same(path, &["--format", "json"], &format!("{name}.json"));
        expect_same(path, &[], &format!("{name}.txt"));
    }
    let medium = fixture("medium-masked.toml");
    let medium = medium.to_str().unwrap();
    expect_same(medium, &[], "medium-masked.txt");
    expect_same(medium, &["--format", "markdown"], "medium-masked.md");
    expect_same(medium, &["--format", "json"], "medium-masked.json");
    expect_same(
        medium,
        &["--format", "json", "--cell", "a,b"],
        "medium-masked.cell-a-b.json",
    );
}

/// The benchmark that sets `show --format json` beside numpy + orjson times
/// `cli::show_json_of_loaded` from a lesson already loaded: it must write what the command
/// writes, byte for byte, so that the figure is the command's work and not less.
#[test]
fn json_from_a_loaded_lesson_is_what_the_command_writes() {
    for lesson in BUILT_INS {
        let loaded = attn_tutor::lesson::load(lesson).unwrap();
        for compact in [false, true] {
            let mut got = Vec::new();
            let mut err = Vec::new();
            let code = attn_tutor::cli::show_json_of_loaded(&loaded, compact, &mut got, &mut err);
            assert_eq!(code, 0, "{lesson}: {}", String::from_utf8_lossy(&err));
            let args: &[&str] = if compact {
                &["--format", "json", "--compact"]
            } else {
                &["--format", "json"]
            };
            let want = show_bytes(lesson, args);
            assert!(
                got == want,
                "{lesson} {args:?}: {}",
                first_difference(&got, &want)
            );
        }
    }
}
