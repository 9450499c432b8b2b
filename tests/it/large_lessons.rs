//! A saved or frozen lesson is always one `check` accepts. Large generated matrices written out
//! number by number are over the 16 MiB file limit: `freeze` and the tutor's save measure
//! the file before writing anything, say how big it would be, write nothing, and the tutor
//! offers what fits (the generators of the edited matrices).

use crate::common;

use common::status;
use common::*;

use std::path::Path;

use attn_tutor::app::{Action, App, Overlay, PickerEntry, PromptFor, Question, update};
use attn_tutor::attention::MatrixName;
use attn_tutor::lesson::{load_file, load_text};
use attn_tutor::term::{dispatch, save_locally};
use tempfile::TempDir;

/// Small to compute, large to write out: W_q has 1,048,576 numbers, about 21 MB as text.
const LARGE_W_Q: &str = r#"format = 1
title = "Large W_q"
tokens = ["a", "b", "c", "d"]
embeddings = { random = "normal", seed = 1, shape = [4, 1024] }
w_q = { random = "normal", seed = 2, shape = [1024, 1024] }
w_k = { random = "normal", seed = 3, shape = [1024, 1024] }
w_v = { random = "normal", seed = 4, shape = [1024, 4] }
"#;

fn check_accepts(path: &Path) {
    let dir = TempDir::new().unwrap();
    let output = attn_tutor(&dir)
        .args(["check", "--no-color"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "check refuses {}: {}",
        path.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn freeze(lesson: &Path, output: &Path) -> (i32, String) {
    let dir = TempDir::new().unwrap();
    let result = attn_tutor(&dir)
        .args(["freeze", "--no-color"])
        .arg(lesson)
        .arg("-o")
        .arg(output)
        .output()
        .unwrap();
    (
        result.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&result.stderr).into_owned(),
    )
}

#[test]
fn freeze_of_a_lesson_too_large_once_frozen_says_how_big_and_writes_nothing() {
    let dir = TempDir::new().unwrap();
    let lesson = dir.path().join("large.toml");
    std::fs::write(&lesson, LARGE_W_Q).unwrap();
    check_accepts(&lesson);
    let output = dir.path().join("frozen.toml");
    let (code, stderr) = freeze(&lesson, &output);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("would be 4") && stderr.contains(" bytes"),
        "says how big: {stderr}"
    );
    assert!(stderr.contains("16 MiB"), "says the limit: {stderr}");
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert!(!stderr.contains("please report"), "not a bug: {stderr}");
    assert!(!output.exists());
    assert_eq!(files_in(dir.path()), ["large.toml"]);
}

#[test]
fn freeze_of_the_largest_lesson_refuses_before_writing_and_keeps_an_existing_file() {
    let dir = TempDir::new().unwrap();
    let output = dir.path().join("mine.toml");
    std::fs::write(&output, "my own notes").unwrap();
    let (code, stderr) = freeze(&fixture("largest.toml"), &output);
    assert_ne!(code, 0);
    assert!(stderr.contains("16 MiB"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&output).unwrap(), "my own notes");
}

#[test]
fn freeze_of_a_256_token_lesson_that_fits_writes_a_lesson_check_accepts() {
    let dir = TempDir::new().unwrap();
    let tokens: Vec<String> = (0..256).map(|i| format!("\"t{i}\"")).collect();
    let text = format!(
        "format = 1\ntitle = \"Many tokens\"\ntokens = [{}]\n\
         q = {{ random = \"normal\", seed = 1, shape = [256, 8] }}\n\
         k = {{ random = \"normal\", seed = 2, shape = [256, 8] }}\n\
         v = {{ random = \"uniform\", seed = 3, shape = [256, 8] }}\n",
        tokens.join(", ")
    );
    let lesson = dir.path().join("many.toml");
    std::fs::write(&lesson, text).unwrap();
    let output = dir.path().join("frozen.toml");
    let (code, stderr) = freeze(&lesson, &output);
    assert_eq!(code, 0, "{stderr}");
    check_accepts(&output);
}

fn open_large() -> App {
    let entry = PickerEntry {
        name: "large".to_string(),
        lesson: load_text("large", None, LARGE_W_Q.to_string()),
    };
    App::new(vec![entry], Some(0))
}

/// Goes to W_q and types `text` into its selected cell.
fn edit_w_q(app: &mut App, text: &str) {
    update(app, Action::GoToStep(2));
    update(app, Action::PreviousMatrix);
    assert_eq!(app.tutor().unwrap().focus, MatrixName::WQ);
    update(app, Action::Edit);
    update(app, Action::ClearInput);
    for ch in text.chars() {
        update(app, Action::Type(ch));
    }
    update(app, Action::Submit);
}

fn save_to(app: &mut App, path: &Path) {
    assert!(matches!(
        &app.overlay,
        Overlay::Prompt(prompt) if prompt.purpose == PromptFor::SavePath
    ));
    update(app, Action::ClearInput);
    for ch in path.to_str().unwrap().chars() {
        update(app, Action::Type(ch));
    }
    dispatch(app, Action::Submit, &mut save_locally);
}

#[test]
fn saving_an_edit_of_a_large_generated_matrix_says_how_big_before_asking_for_a_name() {
    let mut app = open_large();
    edit_w_q(&mut app, "3");
    dispatch(&mut app, Action::Save, &mut save_locally);
    assert_eq!(
        app.overlay,
        Overlay::Question(Question::TooLarge {
            keep: vec![MatrixName::WQ]
        }),
        "{}",
        status(&app)
    );
    let said = status(&app);
    assert!(said.contains("MB") && said.contains("16 MiB"), "{said}");
    // Esc: nothing written, the edit still there.
    dispatch(&mut app, Action::Cancel, &mut save_locally);
    assert_eq!(app.overlay, Overlay::None);
    assert!(
        status(&app).contains("nothing was written"),
        "{}",
        status(&app)
    );
    let tutor = app.tutor().unwrap();
    assert!(tutor.has_unsaved_edits());
    assert_eq!(tutor.attention.matrix(MatrixName::WQ).unwrap()[(0, 0)], 3.0);
}

#[test]
fn keeping_the_generator_saves_a_file_check_accepts_and_u_brings_the_edit_back() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("saved.toml");
    let mut app = open_large();
    edit_w_q(&mut app, "3");
    dispatch(&mut app, Action::Save, &mut save_locally);
    dispatch(&mut app, Action::Answer('k'), &mut save_locally);
    assert!(status(&app).contains("W_q"), "says which: {}", status(&app));
    save_to(&mut app, &path);
    assert!(status(&app).starts_with("Saved to"), "{}", status(&app));
    check_accepts(&path);
    let saved = load_file(&path).unwrap();
    let w_q = saved.lesson.input(MatrixName::WQ).unwrap();
    assert!(w_q.generator.is_some(), "kept as a generator");
    assert!(std::fs::metadata(&path).unwrap().len() < 4096);
    update(&mut app, Action::Undo);
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.attention.matrix(MatrixName::WQ).unwrap()[(0, 0)], 3.0);
}

#[test]
fn a_save_too_large_on_the_way_out_writes_nothing_and_stays() {
    let mut app = open_large();
    edit_w_q(&mut app, "3");
    update(&mut app, Action::Back);
    assert!(matches!(
        app.overlay,
        Overlay::Question(Question::LeaveUnsaved(_))
    ));
    dispatch(&mut app, Action::Answer('w'), &mut save_locally);
    assert!(matches!(
        app.overlay,
        Overlay::Question(Question::TooLarge { .. })
    ));
    dispatch(&mut app, Action::Answer('n'), &mut save_locally);
    assert!(app.tutor().is_some(), "still in the lesson");
    assert!(!app.quit);
}

#[test]
fn a_large_lesson_saved_without_edits_to_generated_numbers_keeps_its_generators() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("renamed.toml");
    let mut app = open_large();
    update(&mut app, Action::GoToStep(1));
    update(&mut app, Action::Edit);
    update(&mut app, Action::ClearInput);
    update(&mut app, Action::Type('9'));
    update(&mut app, Action::Submit);
    update(&mut app, Action::Undo);
    dispatch(&mut app, Action::Save, &mut save_locally);
    save_to(&mut app, &path);
    assert!(status(&app).starts_with("Saved to"), "{}", status(&app));
    check_accepts(&path);
}
