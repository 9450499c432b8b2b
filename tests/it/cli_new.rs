//! `attn-tutor new PATH`: write a commented template lesson that passes `check`, never
//! overwriting a file.

use crate::common;
use common::*;

use predicates::prelude::*;
use tempfile::TempDir;

/// `show --format json` of a lesson file in `dir`.
fn show_json(dir: &TempDir, path: &str) -> serde_json::Value {
    let output = attn_tutor(dir)
        .args(["show", path, "--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "show {path} failed: {output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn new_writes_the_file_and_says_so() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["new", "lesson.toml"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("wrote lesson.toml"));
    assert!(dir.path().join("lesson.toml").is_file());
}

#[test]
fn new_writes_a_lesson_that_check_accepts() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["new", "lesson.toml"])
        .assert()
        .code(0);
    attn_tutor(&dir)
        .args(["check", "lesson.toml"])
        .assert()
        .code(0)
        .stderr(predicate::str::is_empty());
}

#[test]
fn new_writes_a_lesson_that_show_opens() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["new", "lesson.toml"])
        .assert()
        .code(0);
    attn_tutor(&dir)
        .args(["show", "lesson.toml"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("== Step 7/7 · Online softmax =="));
}

#[test]
fn new_refuses_to_overwrite_an_existing_file_and_leaves_its_bytes_unchanged() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("lesson.toml");
    let original: &[u8] = b"# my own notes, not a lesson\n\xff\x00 binary tail";
    std::fs::write(&path, original).unwrap();
    attn_tutor(&dir)
        .args(["new", "lesson.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(std::fs::read(&path).unwrap(), original);
}

#[test]
fn new_refuses_to_overwrite_a_lesson_it_wrote_itself() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["new", "lesson.toml", "--title", "First"])
        .assert()
        .code(0);
    let first = std::fs::read(dir.path().join("lesson.toml")).unwrap();
    attn_tutor(&dir)
        .args(["new", "lesson.toml", "--title", "Second"])
        .assert()
        .code(2);
    assert_eq!(
        std::fs::read(dir.path().join("lesson.toml")).unwrap(),
        first
    );
}

#[test]
fn new_leaves_no_temporary_file_behind() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["new", "lesson.toml"])
        .assert()
        .code(0);
    attn_tutor(&dir)
        .args(["new", "lesson.toml"])
        .assert()
        .code(2);
    assert_eq!(files_in(dir.path()), ["lesson.toml"]);
}

#[test]
fn new_sets_the_title_given_with_title() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args([
            "new",
            "lesson.toml",
            "--title",
            "Attention over three words",
        ])
        .assert()
        .code(0);
    assert_eq!(
        show_json(&dir, "lesson.toml")["title"],
        "Attention over three words"
    );
}

#[test]
fn new_without_title_uses_the_default_title() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["new", "lesson.toml"])
        .assert()
        .code(0);
    assert_eq!(
        show_json(&dir, "lesson.toml")["title"],
        "My attention lesson"
    );
}

#[test]
fn new_keeps_quotes_and_backslashes_in_the_title_verbatim() {
    let dir = TempDir::new().unwrap();
    let title = r#"The "cat" \ the mat"#;
    attn_tutor(&dir)
        .args(["new", "lesson.toml", "--title", title])
        .assert()
        .code(0);
    assert_eq!(show_json(&dir, "lesson.toml")["title"], title);
}

#[test]
fn new_refuses_a_title_with_a_line_break_and_writes_nothing() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["new", "lesson.toml", "--title", "two\nlines"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the title cannot be used"));
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn new_into_a_missing_directory_exits_2() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["new", "no-such-dir/lesson.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot write no-such-dir/lesson.toml",
        ));
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn new_writes_a_template_that_explains_itself_in_comments() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["new", "lesson.toml"])
        .assert()
        .code(0);
    let text = std::fs::read_to_string(dir.path().join("lesson.toml")).unwrap();
    assert!(text.starts_with('#'), "no opening comment:\n{text}");
    assert!(text.contains("attn-tutor check"), "{text}");
}

#[test]
fn new_writes_a_template_that_shows_where_heads_kv_heads_and_w_o_go() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["new", "lesson.toml"])
        .assert()
        .code(0);
    let text = std::fs::read_to_string(dir.path().join("lesson.toml")).unwrap();
    for key in ["heads =", "kv_heads", "w_o =", "[expected.heads.1]"] {
        assert!(text.contains(key), "no `{key}` in:\n{text}");
    }
    // The heads it suggests work when their lines are uncommented: three heads and W_o.
    let tried = text
        .replace("# heads = 3", "heads = 3")
        .replace("# w_o = ", "w_o = ");
    assert_ne!(tried, text, "nothing to uncomment in:\n{text}");
    std::fs::write(dir.path().join("heads.toml"), tried).unwrap();
    attn_tutor(&dir)
        .args(["check", "heads.toml"])
        .assert()
        .code(0)
        .stderr(predicate::str::is_empty());
    let json = show_json(&dir, "heads.toml");
    assert_eq!(json["heads"].as_array().map(Vec::len), Some(3), "{json}");
}

#[test]
fn new_writes_a_template_whose_grad_output_line_adds_a_backward_pass() {
    let dir = TempDir::new().unwrap();
    attn_tutor(&dir)
        .args(["new", "lesson.toml"])
        .assert()
        .code(0);
    let text = std::fs::read_to_string(dir.path().join("lesson.toml")).unwrap();
    assert!(
        text.contains("backward_softmax"),
        "the narration keys:\n{text}"
    );
    let tried = text.replace("# grad_output = ", "grad_output = ");
    assert_ne!(tried, text, "nothing to uncomment in:\n{text}");
    std::fs::write(dir.path().join("backward.toml"), tried).unwrap();
    attn_tutor(&dir)
        .args(["check", "backward.toml"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("ok    gradients:"));
    let json = show_json(&dir, "backward.toml");
    assert!(json["backward"]["d_w_q"].is_array(), "{json}");
}
