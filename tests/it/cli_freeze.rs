//! `attn-tutor freeze LESSON -o OUT`: a copy of a lesson with every generated (random) matrix
//! written out as numbers. Never overwrites a file; `-o -` writes to standard output.

use crate::common;
use common::*;

use std::collections::BTreeMap;

use predicates::prelude::*;
use tempfile::TempDir;

/// The matrices `show --format json` gives for every lesson.
const MATRICES: [&str; 13] = [
    "embeddings",
    "w_q",
    "w_k",
    "w_v",
    "q",
    "k",
    "v",
    "scores",
    "scaled",
    "mask",
    "masked",
    "weights",
    "output",
];

/// Freezes `lesson` into `frozen.toml` in a new temporary directory.
fn freeze_to_file(lesson: &str) -> (TempDir, String) {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["freeze", lesson, "-o", "frozen.toml"])
        .assert()
        .code(0);
    let text = std::fs::read_to_string(dir.path().join("frozen.toml")).unwrap();
    (dir, text)
}

/// Paths of every table in the TOML document that has a `random` key: the generators.
fn generators(document: &toml::Table) -> Vec<String> {
    fn walk(value: &toml::Value, path: String, found: &mut Vec<String>) {
        match value {
            toml::Value::Table(table) => {
                if table.contains_key("random") {
                    found.push(path.clone());
                }
                for (key, value) in table {
                    walk(value, format!("{path}.{key}"), found);
                }
            }
            toml::Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    walk(item, format!("{path}[{index}]"), found);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(
        &toml::Value::Table(document.clone()),
        String::new(),
        &mut found,
    );
    found
}

/// `show --format json` as text, run in `dir`.
fn show_json_text(dir: &TempDir, lesson: &str) -> String {
    let output = attn_tutor(dir)
        .args(["show", lesson, "--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "show {lesson} failed: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// The text of each top-level value of pretty-printed JSON (`  "key": value`), trailing comma
/// removed. serde_json writes each f64 as the shortest text that reads back to it, so equal
/// text means bit-for-bit equal numbers, a stricter test than comparing parsed values.
fn top_level_values(json: &str) -> BTreeMap<String, String> {
    let mut values = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in json.lines() {
        if let Some(rest) = line.strip_prefix("  \"") {
            if let Some((key, value)) = current.take() {
                values.insert(key, value);
            }
            let (key, value) = rest.split_once("\": ").expect("a key line");
            current = Some((key.to_string(), value.to_string()));
        } else if let Some((_, value)) = current.as_mut()
            && line != "}"
        {
            value.push('\n');
            value.push_str(line);
        }
    }
    if let Some((key, value)) = current {
        values.insert(key, value);
    }
    for value in values.values_mut() {
        if value.ends_with(',') {
            value.pop();
        }
    }
    values
}

/// Asserts that two lessons' `show --format json` matrices are equal bit for bit.
fn assert_same_matrices(dir: &TempDir, original: &str, frozen: &str) {
    let original_json = show_json_text(dir, original);
    let frozen_json = show_json_text(dir, frozen);
    let before = top_level_values(&original_json);
    let after = top_level_values(&frozen_json);
    for key in MATRICES {
        let before = before
            .get(key)
            .unwrap_or_else(|| panic!("no {key} in {original}"));
        let after = after
            .get(key)
            .unwrap_or_else(|| panic!("no {key} in {frozen}"));
        assert_eq!(before, after, "{key} differs after freezing {original}");
    }
    // The same values, parsed: guards the text comparison against a change of layout.
    let before: serde_json::Value = serde_json::from_str(&original_json).unwrap();
    let after: serde_json::Value = serde_json::from_str(&frozen_json).unwrap();
    for key in MATRICES {
        assert_eq!(
            before[key], after[key],
            "{key} differs after freezing {original}"
        );
    }
}

// --- numpy-walkthrough -----------------------------------------------------------------------

#[test]
fn freeze_writes_the_file_and_says_so() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["freeze", "numpy-walkthrough", "-o", "frozen.toml"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("wrote frozen.toml"));
    assert_eq!(files_in(dir.path()), ["frozen.toml"]);
}

#[test]
fn freeze_of_numpy_walkthrough_leaves_no_random_generator() {
    let (_dir, text) = freeze_to_file("numpy-walkthrough");
    let document: toml::Table = text.parse().expect("the frozen lesson is TOML");
    assert_eq!(generators(&document), Vec::<String>::new());
}

#[test]
fn freeze_of_numpy_walkthrough_writes_the_weights_as_4_by_3_number_matrices() {
    let (_dir, text) = freeze_to_file("numpy-walkthrough");
    let document: toml::Table = text.parse().unwrap();
    for key in ["w_q", "w_k", "w_v"] {
        let rows = document[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key} is not an array"));
        assert_eq!(rows.len(), 4, "rows of {key}");
        for row in rows {
            let cells = row.as_array().unwrap();
            assert_eq!(cells.len(), 3, "columns of {key}");
            assert!(
                cells
                    .iter()
                    .all(|cell| cell.is_float() || cell.is_integer()),
                "{key}: {row}"
            );
        }
    }
}

#[test]
fn freeze_of_numpy_walkthrough_writes_a_lesson_check_accepts() {
    let (dir, _text) = freeze_to_file("numpy-walkthrough");
    attn_tutor(&dir)
        .args(["check", "frozen.toml"])
        .assert()
        .code(0)
        .stderr(predicate::str::is_empty());
}

#[test]
fn freeze_of_numpy_walkthrough_shows_exactly_the_matrices_of_the_built_in() {
    let (dir, _text) = freeze_to_file("numpy-walkthrough");
    assert_same_matrices(&dir, "numpy-walkthrough", "frozen.toml");
}

#[test]
fn freeze_keeps_the_comments_and_narration_of_the_original() {
    let (_dir, text) = freeze_to_file("numpy-walkthrough");
    assert!(text.starts_with("# Built-in lesson: the NumPy walkthrough.\n"));
    assert!(text.contains("[narration]"));
    assert!(text.contains("projection = \"Three weight matrices, each 4 by 3,"));
}

#[test]
fn freeze_of_a_frozen_lesson_changes_nothing() {
    let (dir, text) = freeze_to_file("numpy-walkthrough");
    attn_tutor(&dir)
        .args(["freeze", "frozen.toml", "-o", "-"])
        .assert()
        .code(0)
        .stdout(predicate::eq(text.as_str()));
}

// --- lesson files ----------------------------------------------------------------------------

#[test]
fn freeze_of_a_file_with_normal_and_uniform_generators_keeps_its_matrices_exactly() {
    let source = fixture("generated.toml");
    let (dir, text) = freeze_to_file(source.to_str().unwrap());
    let document: toml::Table = text.parse().unwrap();
    assert_eq!(generators(&document), Vec::<String>::new());
    assert_same_matrices(&dir, source.to_str().unwrap(), "frozen.toml");
}

#[test]
fn freeze_of_a_lesson_without_generators_copies_it_unchanged() {
    let source = fixture("direct-qkv.toml");
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("freeze")
        .arg(&source)
        .args(["-o", "-"])
        .assert()
        .code(0)
        .stdout(predicate::eq(std::fs::read(&source).unwrap()));
}

// --- writing ---------------------------------------------------------------------------------

#[test]
fn freeze_refuses_to_overwrite_an_existing_file_and_leaves_its_bytes_unchanged() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("frozen.toml");
    let original: &[u8] = b"# keep me\n\xfe\xff";
    std::fs::write(&path, original).unwrap();
    attn_tutor(&dir)
        .args(["freeze", "numpy-walkthrough", "-o", "frozen.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(std::fs::read(&path).unwrap(), original);
    assert_eq!(files_in(dir.path()), ["frozen.toml"]);
}

#[test]
fn freeze_to_dash_prints_the_frozen_lesson_to_stdout_and_writes_no_file() {
    let dir = TempDir::new().unwrap();
    let output = attn_tutor(&dir)
        .args(["freeze", "numpy-walkthrough", "-o", "-"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let document: toml::Table = String::from_utf8(output.stdout)
        .unwrap()
        .parse()
        .expect("stdout is a TOML lesson");
    assert_eq!(
        document["title"].as_str(),
        Some("Self-attention in NumPy, step by step")
    );
    assert_eq!(generators(&document), Vec::<String>::new());
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn freeze_to_dash_prints_the_same_text_it_writes_to_a_file() {
    let (dir, text) = freeze_to_file("numpy-walkthrough");
    attn_tutor(&dir)
        .args(["freeze", "numpy-walkthrough", "-o", "-"])
        .assert()
        .code(0)
        .stdout(predicate::eq(text.as_str()));
}

#[test]
fn freeze_of_an_unknown_lesson_exits_2_and_writes_nothing() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["freeze", "numpy-walktrough", "-o", "frozen.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "did you mean `numpy-walkthrough`?",
        ));
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn freeze_of_an_invalid_lesson_exits_2_and_writes_nothing() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .arg("freeze")
        .arg(fixture("invalid-token-count.toml"))
        .args(["-o", "frozen.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`embeddings` has 2 rows"));
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn freeze_without_an_output_is_a_usage_error_exiting_2() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["freeze", "numpy-walkthrough"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--output"));
    assert!(files_in(dir.path()).is_empty());
}
