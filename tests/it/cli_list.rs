//! `attn-tutor list`: the built-in lessons, one line each with name, title and shape.

use crate::common;
use common::*;

use predicates::prelude::*;
use tempfile::TempDir;

/// Every built-in lesson as `list` should show it: name, title, shape.
const BUILT_INS: [(&str, &str, &str); 14] = [
    ("cat-sleeps", "The cat sleeps", "(3 tokens × 4 → d_k 4)"),
    (
        "numpy-walkthrough",
        "Self-attention in NumPy, step by step",
        "(3 tokens × 4 → d_k 3)",
    ),
    (
        "cat-sat-mat",
        "The cat sat on the mat",
        "(6 tokens × 2 → d_k 2)",
    ),
    (
        "random-qkv",
        "Scaled dot-product attention on random Q, K, V",
        "(3 tokens, Q/K/V given, d_k 4)",
    ),
    (
        "identity-2x2",
        "Two tokens, identity queries and keys",
        "(2 tokens × 2 → d_k 2)",
    ),
    (
        "causal-cat-sat-mat",
        "The cat sat on the mat, with a causal mask",
        "(6 tokens × 2 → d_k 2)",
    ),
    (
        "positions-cat-sat-mat",
        "The cat sat on the mat, with sinusoidal positions",
        "(6 tokens × 2 → d_k 2, sinusoidal positions)",
    ),
    (
        "rope-same-distance",
        "the cat met the cat: rotary positions",
        "(5 tokens × 2 → d_k 2, RoPE)",
    ),
    (
        "two-heads",
        "Two heads: the word before, and the word itself",
        "(5 tokens × 5 → d_k 2, 2 heads, learned positions)",
    ),
    (
        "gqa",
        "Grouped-query attention: 4 heads share 2 K/V groups",
        "(4 tokens × 5 → d_k 2, 4 heads in 2 K/V groups)",
    ),
    (
        "translation",
        "Translation: le chat noir dort reads the English",
        "(4 tokens × 4 → d_k 2, attending to 5 source tokens)",
    ),
    (
        "generation",
        "The cat sat on the mat, one word at a time",
        "(6 tokens × 4 → d_k 2, generated with a K/V cache)",
    ),
    (
        "backward",
        "Backward: how attention learns, two tokens",
        "(2 tokens × 2 → d_k 2, with a backward pass)",
    ),
    (
        "induction",
        "An induction head, in a model trained here",
        "(13 tokens × 32 → d_k 16)",
    ),
];

fn list_stdout() -> String {
    let dir = TempDir::new().unwrap();
    let output = attn_tutor(&dir).arg("list").output().unwrap();
    assert!(output.status.success(), "list failed: {output:?}");
    String::from_utf8(output.stdout).expect("list writes UTF-8")
}

#[test]
fn list_exits_0_and_writes_nothing_to_stderr() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("list")
        .assert()
        .code(0)
        .stderr(predicate::str::is_empty());
}

#[test]
fn list_shows_every_built_in_name_with_its_title_and_shape() {
    let stdout = list_stdout();
    for (name, title, shape) in BUILT_INS {
        let line = stdout
            .lines()
            .find(|line| line.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no line for {name} in:\n{stdout}"));
        let title_at = line
            .find(title)
            .unwrap_or_else(|| panic!("{name}: title {title:?} missing from {line:?}"));
        let shape_at = line
            .find(shape)
            .unwrap_or_else(|| panic!("{name}: shape {shape:?} missing from {line:?}"));
        assert!(
            name.len() <= title_at && title_at < shape_at,
            "{name}: expected name, title, shape in that order: {line:?}"
        );
    }
}

#[test]
fn list_prints_exactly_one_line_per_built_in_lesson() {
    let stdout = list_stdout();
    assert_eq!(
        stdout.lines().count(),
        BUILT_INS.len(),
        "unexpected list:\n{stdout}"
    );
}

#[test]
fn list_aligns_titles_in_one_column() {
    let stdout = list_stdout();
    let columns: Vec<usize> = BUILT_INS
        .iter()
        .map(|(name, title, _)| {
            let line = stdout
                .lines()
                .find(|line| line.starts_with(&format!("{name} ")))
                .unwrap();
            line[..line.find(title).unwrap()].chars().count()
        })
        .collect();
    assert!(
        columns.windows(2).all(|pair| pair[0] == pair[1]),
        "titles start at columns {columns:?}:\n{stdout}"
    );
}

#[test]
fn list_reports_no_built_in_lesson_as_invalid() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("list")
        .assert()
        .stdout(predicate::str::contains("invalid").not());
}

#[test]
fn list_titles_are_the_titles_show_reports() {
    let dir = TempDir::new().unwrap();
    for (name, title, _) in BUILT_INS {
        let output = attn_tutor(&dir)
            .args(["show", name, "--format", "json"])
            .output()
            .unwrap();
        assert!(output.status.success(), "show {name} failed: {output:?}");
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(json["title"], title, "title of {name}");
    }
}

#[test]
fn list_accepts_no_color_before_the_subcommand() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["--no-color", "list"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("cat-sat-mat"))
        .stdout(predicate::str::contains("Usage").not());
}
