//! The tutor's update logic, without a terminal: editing recomputes, bad input keeps the old
//! value, undo/redo/reset/re-roll, saving round-trips, and leaving with unsaved edits asks first.

use crate::common;

use common::status;

use attn_tutor::app::{
    Action, App, Direction, Effect, Overlay, PickerEntry, PromptFor, Question, update,
};
use attn_tutor::attention::{Cell, MatrixName, Step};
use attn_tutor::lesson::{load_file, load_text};
use attn_tutor::term::{dispatch, save_locally};

fn open(name: &str) -> App {
    let entries = App::builtin_entries();
    let index = entries
        .iter()
        .position(|entry| entry.name == name)
        .expect("a built-in lesson");
    App::new(entries, Some(index))
}

fn open_text(text: &str) -> App {
    let entry = PickerEntry {
        name: "test".to_string(),
        lesson: load_text("test", None, text.to_string()),
    };
    App::new(vec![entry], Some(0))
}

fn value(app: &App, matrix: MatrixName, row: usize, col: usize) -> f64 {
    app.tutor().unwrap().attention.matrix(matrix).unwrap()[(row, col)]
}

fn type_text(app: &mut App, text: &str) {
    for ch in text.chars() {
        update(app, Action::Type(ch));
    }
}

/// Edits the selected cell: e, the text, Enter.
fn edit(app: &mut App, text: &str) -> Vec<Effect> {
    update(app, Action::Edit);
    update(app, Action::ClearInput);
    type_text(app, text);
    update(app, Action::Submit)
}

fn step(app: &App) -> Step {
    app.tutor().unwrap().step()
}

#[test]
fn the_tutor_opens_on_the_embedding_step_with_the_cursor_on_the_focus_row() {
    let app = open("cat-sat-mat");
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.step(), Step::Embedding);
    assert_eq!(
        tutor.selected_cell(),
        Some(Cell::new(MatrixName::Embeddings, 1, 0))
    );
}

#[test]
fn steps_go_forwards_backwards_and_by_number() {
    let mut app = open("cat-sleeps");
    update(&mut app, Action::NextStep);
    assert_eq!(step(&app), Step::Projection);
    update(&mut app, Action::GoToStep(5));
    assert_eq!(step(&app), Step::Softmax);
    update(&mut app, Action::PreviousStep);
    assert_eq!(step(&app), Step::Scaling);
    update(&mut app, Action::LastStep);
    assert_eq!(step(&app), Step::OnlineSoftmax);
    update(&mut app, Action::GoToStep(8));
    assert_eq!(
        step(&app),
        Step::OnlineSoftmax,
        "cat-sleeps has no mask, so seven steps"
    );
    assert!(status(&app).contains("7 steps"));
}

#[test]
fn editing_an_embedding_recomputes_everything_downstream() {
    let mut app = open("cat-sleeps");
    let weights_before = value(&app, MatrixName::Weights, 2, 0);
    edit(&mut app, "5");
    assert_eq!(value(&app, MatrixName::Embeddings, 2, 0), 5.0);
    assert_ne!(value(&app, MatrixName::Weights, 2, 0), weights_before);
    let tutor = app.tutor().unwrap();
    assert!(tutor.changed.contains(&Cell::new(MatrixName::Q, 2, 0)));
    assert!(tutor.changed.contains(&Cell::new(MatrixName::Output, 2, 0)));
    assert!(tutor.has_unsaved_edits());
    assert_eq!(app.overlay, Overlay::None);
}

#[test]
fn changed_cells_are_marked_until_the_next_move() {
    let mut app = open("cat-sleeps");
    edit(&mut app, "5");
    assert!(!app.tutor().unwrap().changed.is_empty());
    update(&mut app, Action::Move(Direction::Right));
    assert!(app.tutor().unwrap().changed.is_empty());
}

#[test]
fn an_invalid_edit_keeps_the_old_value_and_says_why() {
    for typed in ["abc", "NaN", "inf", "-inf", "1e9", "1,5", ""] {
        let mut app = open("cat-sleeps");
        let before = value(&app, MatrixName::Embeddings, 2, 0);
        edit(&mut app, typed);
        assert_eq!(
            value(&app, MatrixName::Embeddings, 2, 0),
            before,
            "{typed:?}"
        );
        let status = app.status.clone().expect("a message");
        assert!(status.is_error, "{typed:?}: {}", status.text);
        assert!(
            matches!(app.overlay, Overlay::Prompt(_)),
            "the prompt stays open to fix it"
        );
        assert!(!app.tutor().unwrap().has_unsaved_edits());
    }
}

#[test]
fn escape_cancels_an_edit() {
    let mut app = open("cat-sleeps");
    update(&mut app, Action::Edit);
    type_text(&mut app, "9");
    update(&mut app, Action::Cancel);
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(value(&app, MatrixName::Embeddings, 2, 0), 1.0);
}

#[test]
fn a_mask_cell_takes_minus_infinity_or_a_bias_and_a_fully_hidden_row_gets_zero_weights() {
    let mut app = open("causal-cat-sat-mat");
    let masking = app
        .tutor()
        .unwrap()
        .steps
        .iter()
        .position(|s| *s == Step::Masking)
        .unwrap();
    update(&mut app, Action::GoToStep(masking + 1));
    // Focus the mask, then hide the only key the first token may see.
    update(
        &mut app,
        Action::Select {
            matrix: MatrixName::Mask,
            row: 0,
            col: Some(0),
        },
    );
    edit(&mut app, "-inf");
    assert_eq!(value(&app, MatrixName::Mask, 0, 0), f64::NEG_INFINITY);
    assert_eq!(value(&app, MatrixName::Weights, 0, 0), 0.0);
    assert!(value(&app, MatrixName::Output, 0, 0).is_finite());
    assert!(status(&app).contains("hides every key"), "{}", status(&app));
    // Any finite bias is a mask cell too, a tutorial's -1e9 among them: on the row's only
    // visible key it is a shift of the whole row, which softmax ignores.
    edit(&mut app, "-1e9");
    assert!(!app.status.as_ref().unwrap().is_error, "{}", status(&app));
    assert_eq!(value(&app, MatrixName::Mask, 0, 0), -1e9);
    assert_eq!(value(&app, MatrixName::Weights, 0, 0), 1.0);
    edit(&mut app, "1e400");
    assert!(app.status.as_ref().unwrap().is_error);
    assert_eq!(value(&app, MatrixName::Mask, 0, 0), -1e9);
    edit(&mut app, "1");
    assert_eq!(value(&app, MatrixName::Mask, 0, 0), 1.0);
    assert_eq!(value(&app, MatrixName::Weights, 0, 0), 1.0);
}

#[test]
fn a_token_label_is_edited_from_the_row_header() {
    let mut app = open("cat-sleeps");
    update(&mut app, Action::Move(Direction::Left));
    edit(&mut app, "dog");
    assert_eq!(app.tutor().unwrap().lesson.tokens[2], "dog");
    // A bidi override would reorder the text on every screen it reaches: refused.
    edit(&mut app, "\u{202e}god");
    assert_eq!(app.tutor().unwrap().lesson.tokens[2], "dog");
    assert!(app.status.as_ref().unwrap().is_error);
}

#[test]
fn control_characters_never_reach_a_prompt() {
    let mut app = open("cat-sleeps");
    update(&mut app, Action::Move(Direction::Left));
    update(&mut app, Action::Edit);
    type_text(&mut app, "a\u{1b}[31m");
    update(&mut app, Action::Paste("b\u{7}\r\nc".to_string()));
    let Overlay::Prompt(prompt) = &app.overlay else {
        panic!("the prompt is open");
    };
    assert_eq!(prompt.input, "a[31mbc");
}

#[test]
fn editing_a_computed_cell_offers_to_jump_to_its_source() {
    let mut app = open("cat-sleeps");
    update(&mut app, Action::GoToStep(3));
    update(&mut app, Action::Edit);
    let Overlay::Question(Question::JumpTo { to, .. }) = app.overlay.clone() else {
        panic!("expected an offer to jump, got {:?}", app.overlay);
    };
    assert_eq!(to.matrix, MatrixName::Q);
    update(&mut app, Action::Submit);
    assert_eq!(app.tutor().unwrap().focus, MatrixName::Q);
    assert_eq!(step(&app), Step::Scores, "Q is on the Scores screen");
}

#[test]
fn undo_and_redo_walk_through_the_edits() {
    let mut app = open("cat-sleeps");
    edit(&mut app, "5");
    edit(&mut app, "6");
    update(&mut app, Action::Undo);
    assert_eq!(value(&app, MatrixName::Embeddings, 2, 0), 5.0);
    update(&mut app, Action::Undo);
    assert_eq!(value(&app, MatrixName::Embeddings, 2, 0), 1.0);
    assert!(!app.tutor().unwrap().has_unsaved_edits());
    update(&mut app, Action::Undo);
    assert_eq!(status(&app), "Nothing to undo");
    update(&mut app, Action::Redo);
    assert_eq!(value(&app, MatrixName::Embeddings, 2, 0), 5.0);
}

#[test]
fn reset_returns_to_the_lessons_own_numbers_and_can_be_undone() {
    let mut app = open("cat-sleeps");
    edit(&mut app, "5");
    update(&mut app, Action::Reset);
    assert_eq!(value(&app, MatrixName::Embeddings, 2, 0), 1.0);
    update(&mut app, Action::Undo);
    assert_eq!(value(&app, MatrixName::Embeddings, 2, 0), 5.0);
}

#[test]
fn reroll_gives_a_generated_matrix_new_numbers() {
    let mut app = open("numpy-walkthrough");
    update(&mut app, Action::GoToStep(2));
    // The Projection screen opens on Q; the weights it is made from are just before it.
    update(&mut app, Action::PreviousMatrix);
    assert_eq!(app.tutor().unwrap().focus, MatrixName::WQ);
    let before = value(&app, MatrixName::WQ, 0, 0);
    let q_before = value(&app, MatrixName::Q, 0, 0);
    update(&mut app, Action::Reroll);
    assert_ne!(value(&app, MatrixName::WQ, 0, 0), before);
    assert_ne!(value(&app, MatrixName::Q, 0, 0), q_before);
    assert!(status(&app).contains("seed"), "{}", status(&app));
    update(&mut app, Action::Undo);
    assert_eq!(value(&app, MatrixName::WQ, 0, 0), before);
}

#[test]
fn rerolled_then_saved_lessons_always_open_again_with_short_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = open("numpy-walkthrough");
    update(&mut app, Action::GoToStep(2));
    update(&mut app, Action::PreviousMatrix);
    for roll in 0..6 {
        update(&mut app, Action::Reroll);
        let path = dir.path().join(format!("roll-{roll}.toml"));
        save_to(&mut app, &path);
        let saved = std::fs::read_to_string(&path).unwrap();
        let reloaded = load_file(&path).unwrap_or_else(|error| {
            panic!(
                "re-roll {roll} saved a lesson that does not open:\n{}",
                error.render(false)
            )
        });
        let seed = reloaded
            .lesson
            .input(MatrixName::WQ)
            .unwrap()
            .generator
            .unwrap()
            .seed;
        assert!(
            (1..=999_999).contains(&seed),
            "re-roll {roll}: seed {seed} in\n{saved}"
        );
    }
}

#[test]
fn reroll_of_a_typed_matrix_explains_why_not() {
    let mut app = open("cat-sleeps");
    update(&mut app, Action::Reroll);
    let status = app.status.clone().unwrap();
    assert!(status.is_error && status.text.contains("not generated"));
}

/// Asks to save to `path` and carries out the save on the local disk.
fn save_to(app: &mut App, path: &std::path::Path) {
    dispatch(app, Action::Save, &mut save_locally);
    assert!(matches!(
        &app.overlay,
        Overlay::Prompt(prompt) if prompt.purpose == PromptFor::SavePath
    ));
    update(app, Action::ClearInput);
    type_text(app, path.to_str().unwrap());
    dispatch(app, Action::Submit, &mut save_locally);
}

#[test]
fn saving_writes_a_lesson_that_reloads_to_the_same_values_and_passes_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("edited.toml");
    let mut app = open("cat-sat-mat");
    edit(&mut app, "0.25");
    save_to(&mut app, &path);
    assert!(status(&app).starts_with("Saved to"), "{}", status(&app));
    assert!(!app.tutor().unwrap().has_unsaved_edits());
    let reloaded = load_file(&path).expect("the saved lesson loads");
    assert_eq!(reloaded.lesson.inputs, app.tutor().unwrap().lesson.inputs);
    assert_eq!(reloaded.lesson.tokens, app.tutor().unwrap().lesson.tokens);
    let check = std::process::Command::new(assert_cmd::cargo::cargo_bin!("attn-tutor"))
        .args(["check", "--no-color", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
}

#[test]
fn saving_over_an_existing_file_asks_first_and_keeps_it_when_told_no() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.toml");
    std::fs::write(&path, "my own notes").unwrap();
    let mut app = open("cat-sleeps");
    edit(&mut app, "5");
    save_to(&mut app, &path);
    assert!(matches!(
        app.overlay,
        Overlay::Question(Question::Replace { .. })
    ));
    dispatch(&mut app, Action::Answer('n'), &mut save_locally);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "my own notes");
    assert!(app.tutor().unwrap().has_unsaved_edits());
    save_to(&mut app, &path);
    dispatch(&mut app, Action::Answer('y'), &mut save_locally);
    assert!(load_file(&path).is_ok(), "replaced by the lesson");
}

#[test]
fn a_failed_save_keeps_the_edits_and_says_why() {
    let mut app = open("cat-sleeps");
    edit(&mut app, "5");
    save_to(&mut app, std::path::Path::new("/no/such/folder/x.toml"));
    let status = app.status.clone().unwrap();
    assert!(status.is_error && status.text.contains("edits are still here"));
    assert!(app.tutor().unwrap().has_unsaved_edits());
}

#[test]
fn leaving_with_unsaved_edits_asks_first() {
    let mut app = open("cat-sleeps");
    edit(&mut app, "5");
    update(&mut app, Action::Back);
    assert_eq!(
        app.overlay,
        Overlay::Question(Question::LeaveUnsaved(attn_tutor::app::Leave::ToPicker))
    );
    update(&mut app, Action::Cancel);
    assert!(app.tutor().is_some(), "Esc stays");
    update(&mut app, Action::Quit);
    assert!(!app.quit, "Ctrl-c asks too");
    update(&mut app, Action::Answer('d'));
    assert!(app.quit);
}

#[test]
fn save_then_leave_goes_back_to_the_lessons_once_saved() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = open("cat-sleeps");
    edit(&mut app, "5");
    update(&mut app, Action::Back);
    update(&mut app, Action::Answer('w'));
    update(&mut app, Action::ClearInput);
    type_text(&mut app, dir.path().join("kept.toml").to_str().unwrap());
    dispatch(&mut app, Action::Submit, &mut save_locally);
    assert!(app.tutor().is_none(), "back on the picker");
    assert!(dir.path().join("kept.toml").exists());
}

#[test]
fn leaving_without_edits_does_not_ask() {
    let mut app = open("cat-sleeps");
    update(&mut app, Action::Back);
    assert!(app.tutor().is_none());
    update(&mut app, Action::Back);
    assert!(app.quit);
}

#[test]
fn a_lesson_that_fails_to_load_is_listed_and_says_why_when_opened() {
    let mut entries = App::builtin_entries();
    entries.push(PickerEntry {
        name: "broken.toml".to_string(),
        lesson: load_text("broken", None, "format = 1\ntitle = 3\n".to_string()),
    });
    let broken = entries.len() - 1;
    let mut app = App::new(entries, None);
    app.picked = broken;
    update(&mut app, Action::Open);
    assert!(app.tutor().is_none());
    let status = app.status.clone().unwrap();
    assert!(
        status.is_error && status.text.contains("broken.toml"),
        "{}",
        status.text
    );
}

#[test]
fn direct_qkv_lessons_show_q_k_v_on_the_first_steps() {
    let app = open_text(
        "format = 1\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nq = [[1, 0], [0, 1]]\n\
         k = [[1, 0], [0, 1]]\nv = [[1, 2], [3, 4]]\n",
    );
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.focus, MatrixName::Q);
    assert!(tutor.is_editable(MatrixName::Q));
}

#[test]
fn the_same_app_is_driven_from_raw_terminal_bytes_as_an_ssh_channel_delivers_them() {
    use attn_tutor::input::{action_for, bytes::Decoder};
    use ratatui::layout::Rect;
    let mut app = App::new(App::builtin_entries(), None);
    let area = Rect::new(0, 0, 80, 24);
    let mut decoder = Decoder::new();
    let mut feed = |app: &mut App, read: &[u8]| {
        for event in decoder.feed(read) {
            if let Some(action) = action_for(&event, app, area) {
                update(app, action);
            }
        }
    };
    // Down to the second lesson, open it, step 5, and an arrow split across two reads.
    for read in [&b"\x1b[B"[..], b"\r5", b"\x1b[", b"B"] {
        feed(&mut app, read);
    }
    let tutor = app.tutor().expect("the lesson opened");
    assert_eq!(tutor.step(), Step::Softmax);
    let start = tutor.lesson.focus.unwrap_or(0);
    assert_eq!(tutor.cursor(tutor.focus).row, start + 1, "one row down");
    feed(&mut app, b"\x1b");
    for event in decoder.flush() {
        if let Some(action) = action_for(&event, &app, area) {
            update(&mut app, action);
        }
    }
    // The lone ESC at the end went back to the picker.
    assert!(app.tutor().is_none());
    assert_eq!(app.picked, 1);
}

#[test]
fn any_terminal_size_draws_without_panicking_from_nothing_to_the_largest_allowed() {
    use attn_tutor::ui::{Theme, view};
    let mut app = open("causal-cat-sat-mat");
    for (width, height) in [(0, 0), (1, 1), (80, 0), (0, 24), (79, 23), (500, 200)] {
        for step in 1..=7 {
            update(&mut app, Action::GoToStep(step));
            let backend = ratatui::backend::TestBackend::new(width, height);
            let mut terminal = ratatui::Terminal::new(backend).unwrap();
            terminal
                .draw(|frame| view(frame, &app, &Theme::monochrome()))
                .unwrap();
        }
    }
}

#[test]
fn after_a_reset_the_lesson_is_no_longer_edited() {
    let mut app = open("cat-sleeps");
    edit(&mut app, "5");
    assert!(app.tutor().unwrap().has_unsaved_edits());
    update(&mut app, Action::Reset);
    assert!(
        !app.tutor().unwrap().has_unsaved_edits(),
        "the lesson's own numbers are nothing to save"
    );
    update(&mut app, Action::Back);
    assert!(app.tutor().is_none(), "leaving asks nothing");
}

#[test]
fn a_lesson_saved_with_edited_numbers_leaves_out_the_narration_written_for_the_old_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("edited.toml");
    let mut app = open("cat-sleeps");
    // X[The, 1] = 2, where the narration says "The is [1, 0, 1, 0]".
    edit(&mut app, "2");
    save_to(&mut app, &path);
    assert!(
        status(&app).contains("default narration"),
        "{}",
        status(&app)
    );
    let saved = std::fs::read_to_string(&path).unwrap();
    assert!(!saved.contains("The is [1, 0, 1, 0]"), "{saved}");
    let reloaded = load_file(&path).expect("the saved lesson loads").lesson;
    assert_eq!(reloaded.narration, Default::default());
    assert_eq!(reloaded.title, "The cat sleeps (edited)");
    assert!(
        reloaded.source.contains("numbers edited in attn-tutor"),
        "{}",
        reloaded.source
    );
}

/// The note about the edit never cuts the attribution of a source that fits beside a shorter
/// note: gqa's cites both papers whole.
#[test]
fn a_lesson_saved_with_edited_numbers_keeps_its_sources_attribution_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("edited.toml");
    let mut app = open("gqa");
    let original = app.tutor().unwrap().lesson.source.clone();
    edit(&mut app, "2");
    save_to(&mut app, &path);
    let reloaded = load_file(&path).expect("the saved lesson loads").lesson;
    assert!(
        reloaded.source.starts_with(&format!("{original}: ")),
        "{}",
        reloaded.source
    );
    assert!(
        reloaded.source.ends_with("numbers edited in attn-tutor"),
        "{}",
        reloaded.source
    );
}

#[test]
fn a_lesson_saved_unchanged_keeps_its_own_words() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("same.toml");
    let mut app = open("cat-sleeps");
    edit(&mut app, "2");
    edit(&mut app, "1");
    save_to(&mut app, &path);
    let reloaded = load_file(&path).expect("the saved lesson loads").lesson;
    assert_eq!(reloaded.title, "The cat sleeps");
    assert_ne!(reloaded.narration, Default::default());
}

#[test]
fn editing_dl_d_output_shows_that_the_backward_words_were_written_for_other_numbers() {
    // The backward lesson's words quote L and the gradients, which dO changes.
    let narration_text = |app: &App| common::screen(app, 120, 40);
    let mut app = open("backward");
    common::go_to(&mut app, "backward_values");
    assert!(!narration_text(&app).contains("You have changed"));
    app.tutor_mut().unwrap().focus_on(MatrixName::DOutput);
    edit(&mut app, "2");
    assert!(app.tutor().unwrap().numbers_changed(), "{}", status(&app));
    assert!(
        narration_text(&app).contains("You have changed the lesson"),
        "{}",
        narration_text(&app)
    );
}

#[test]
fn adding_a_backward_pass_keeps_the_lessons_words_which_quote_no_gradient() {
    // gqa has no dL/d(output): `d` adds the backward steps and changes no number its
    // narration quotes, so its words stand without the changed-lesson caveat and are saved.
    let narration_text = |app: &App| common::screen(app, 120, 40);
    let mut app = open("gqa");
    common::go_to(&mut app, "masking");
    update(&mut app, Action::AddBackward);
    assert!(
        app.tutor().unwrap().lesson.grad_output.is_some(),
        "{}",
        status(&app)
    );
    assert!(!app.tutor().unwrap().numbers_changed());
    let text = narration_text(&app);
    assert!(!text.contains("You have changed"), "{text}");
    let saved = app.tutor().unwrap().lesson_to_save();
    assert!(saved.grad_output.is_some());
    assert_eq!(saved.narration, app.tutor().unwrap().lesson.narration);
}

#[test]
fn brackets_keep_the_cursor_on_the_token_when_the_next_matrix_has_the_same_rows() {
    // gqa's Masking opens on masked[snow, …]; from masked[sun, …], [ went to mask[snow, …].
    let mut app = open("gqa");
    common::go_to(&mut app, "masking");
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.focus, MatrixName::Masked);
    assert_ne!(tutor.cursor(MatrixName::Masked).row, 0);
    while app.tutor().unwrap().cursor(MatrixName::Masked).row > 0 {
        update(&mut app, Action::Move(Direction::Up));
    }
    update(&mut app, Action::PreviousMatrix);
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.focus, MatrixName::Mask);
    assert_eq!(tutor.cursor(MatrixName::Mask).row, 0, "{}", status(&app));
    // And back: masked keeps the token too.
    update(&mut app, Action::Move(Direction::Down));
    update(&mut app, Action::NextMatrix);
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.focus, MatrixName::Masked);
    assert_eq!(tutor.cursor(MatrixName::Masked).row, 1);
}

#[test]
fn renaming_a_token_shows_that_the_lessons_text_was_written_for_other_words() {
    let narration_text = |app: &App| common::screen(app, 120, 40);
    let mut app = open("cat-sleeps");
    update(&mut app, Action::GoToStep(3));
    assert!(!narration_text(&app).contains("You have changed"));
    update(&mut app, Action::GoToStep(1));
    update(&mut app, Action::Move(Direction::Left));
    edit(&mut app, "naps");
    assert!(
        app.tutor()
            .unwrap()
            .lesson
            .tokens
            .contains(&"naps".to_string()),
        "{}",
        status(&app)
    );
    update(&mut app, Action::GoToStep(3));
    let text = narration_text(&app);
    assert!(text.contains("You have changed the lesson"), "{text}");
}
