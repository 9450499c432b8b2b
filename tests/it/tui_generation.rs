//! Generation in the tutor: ( ) change the token of the generation steps, the header says
//! which, the cache marks its new row, the output step says it agrees with the whole pass,
//! practice hides the new row of weights, a follower in a classroom follows the token, and
//! every generation screen at 80×24 and 120×40 (snapshots, at token 3 of 5).

use crate::common;

use common::status;

use std::sync::Arc;

use attn_tutor::app::{Action, App, Audience, Classroom, Follow, Presented, update};

const FIXTURE: &str = include_str!("../fixtures/decode-two-heads.toml");

fn app() -> App {
    common::lesson_app("decode-two-heads", FIXTURE)
}

fn token(app: &App) -> usize {
    app.tutor().unwrap().token
}

/// Goes to the generation step with this key, at the first token.
fn at_first_token(app: &mut App, key: &str) {
    common::go_to(app, key);
    app.tutor_mut().unwrap().set_token(0);
}

#[test]
fn the_token_keys_change_the_token_on_a_generation_step_and_the_header_says_which() {
    let mut app = app();
    at_first_token(&mut app, "kv_cache");
    assert!(common::screen(&app, 120, 40).contains("token 1 of 5"));
    update(&mut app, Action::NextToken);
    update(&mut app, Action::NextToken);
    assert_eq!(token(&app), 2);
    let screen = common::screen(&app, 120, 40);
    assert!(
        screen.contains("Generation: the K/V cache · token 3 of 5"),
        "{screen}"
    );
    assert!(screen.contains("fox (new)"), "{screen}");
    update(&mut app, Action::PreviousToken);
    assert_eq!(token(&app), 1);
}

#[test]
fn the_token_keys_stop_at_the_ends_and_say_so() {
    let mut app = app();
    at_first_token(&mut app, "new_token");
    update(&mut app, Action::PreviousToken);
    assert_eq!(token(&app), 0);
    assert!(status(&app).contains("first token"), "{}", status(&app));
    for _ in 0..10 {
        update(&mut app, Action::NextToken);
    }
    assert_eq!(token(&app), 4);
    assert!(status(&app).contains("last token"), "{}", status(&app));
}

#[test]
fn the_token_keys_elsewhere_say_where_they_work() {
    let mut app = app();
    common::go_to(&mut app, "scores");
    let before = token(&app);
    update(&mut app, Action::NextToken);
    assert_eq!(token(&app), before);
    assert!(
        status(&app).contains("generation steps"),
        "{}",
        status(&app)
    );
    let mut plain = common::two_head_lesson();
    update(&mut plain, Action::NextToken);
    assert!(
        status(&plain).contains("decode = true"),
        "{}",
        status(&plain)
    );
}

#[test]
fn the_output_step_says_the_row_equals_the_whole_passs() {
    let mut app = app();
    at_first_token(&mut app, "decode_output");
    update(&mut app, Action::NextToken);
    let screen = common::screen(&app, 120, 40);
    assert!(
        screen.contains("Checked: this row and these weights equal row red of the whole"),
        "{screen}"
    );
}

#[test]
fn the_cache_step_counts_what_the_cache_holds_and_saved() {
    let mut app = app();
    at_first_token(&mut app, "kv_cache");
    update(&mut app, Action::NextToken);
    let screen = common::screen(&app, 120, 40);
    assert!(screen.contains("Cache: 16 numbers"), "{screen}");
    assert!(screen.contains("saved"), "{screen}");
}

#[test]
fn the_help_and_the_bottom_line_name_the_token_keys_on_a_decoding_lesson() {
    let mut app = app();
    at_first_token(&mut app, "decode_weights");
    let screen = common::screen(&app, 120, 40);
    assert!(screen.contains("( ) token"), "{screen}");
    update(&mut app, Action::ToggleHelp);
    let help = common::screen(&app, 120, 40);
    assert!(help.contains("previous, next token"), "{help}");
    let mut plain = common::two_head_lesson();
    update(&mut plain, Action::ToggleHelp);
    assert!(!common::screen(&plain, 120, 40).contains("previous, next token"));
}

#[test]
fn practice_on_the_weights_step_hides_the_new_row() {
    let mut app = app();
    at_first_token(&mut app, "decode_weights");
    update(&mut app, Action::NextToken);
    update(&mut app, Action::TogglePractice);
    let screen = common::screen(&app, 120, 40);
    assert!(
        screen.contains("Practice: predict scores_t⁽¹⁾[red, the]"),
        "{screen}"
    );
    assert!(screen.contains("red   ?   ?"), "{screen}");
}

#[test]
fn a_following_student_follows_the_presenters_token() {
    let mut teacher = app();
    teacher.classroom = Some(Classroom::Presenter {
        audience: Audience::default(),
        join: "ssh -p 2222 NAME@127.0.0.1".to_string(),
        host_key: None,
    });
    at_first_token(&mut teacher, "decode_weights");
    update(&mut teacher, Action::NextToken);
    update(&mut teacher, Action::NextToken);
    let mut student = App::new(App::builtin_entries(), None);
    student.classroom = Some(Classroom::Student {
        follow: Follow::Following,
        latest: None,
    });
    update(
        &mut student,
        Action::Presenter(Arc::new(Presented::of(&teacher, 1))),
    );
    assert_eq!(token(&student), 2);
    assert!(common::screen(&student, 120, 40).contains("token 3 of 5"));
    // The token is the presenter's to change, as the step is.
    update(&mut student, Action::NextToken);
    assert_eq!(token(&student), 2);
    assert!(status(&student).contains("following the presenter"));
    // At 80 columns the message does not fit beside the badge: it takes the line above, whole,
    // and is not split around the badge.
    let screen = common::screen(&student, 80, 24);
    let lines: Vec<&str> = screen.lines().collect();
    let (above, bottom) = (lines[lines.len() - 2], lines[lines.len() - 1]);
    assert!(
        above.contains("You are following the presenter: f goes free to explore"),
        "{screen}"
    );
    assert_eq!(bottom.trim(), "following", "{screen}");
}

#[test]
fn every_generation_screen_at_80x24_and_120x40() {
    for key in ["new_token", "kv_cache", "decode_weights", "decode_output"] {
        let mut app = app();
        at_first_token(&mut app, key);
        update(&mut app, Action::NextToken);
        update(&mut app, Action::NextToken);
        for (width, height) in [(80, 24), (120, 40)] {
            insta::assert_snapshot!(
                format!("generation_{key}_{width}x{height}"),
                common::screen(&app, width, height)
            );
        }
    }
}

#[test]
fn generation_opens_at_the_lessons_focus_token() {
    let mut app = app();
    common::go_to(&mut app, "decode_weights");
    // The fixture's focus is "fox", the third token.
    assert_eq!(token(&app), 2);
    assert!(common::screen(&app, 120, 40).contains("token 3 of 5"));
}

#[test]
fn going_to_a_kept_row_of_the_cache_shows_the_step_that_made_it() {
    let mut app = app();
    common::go_to(&mut app, "kv_cache");
    assert_eq!(token(&app), 2);
    // The cursor on K_cache's first row ("the"), kept since the first token's step.
    for _ in 0..4 {
        update(&mut app, Action::Move(attn_tutor::app::Direction::Up));
    }
    update(&mut app, Action::Edit);
    update(&mut app, Action::Submit);
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.token, 0, "the step of the token that made the row");
    let cell = tutor.selected_cell().unwrap();
    assert_eq!(
        (cell.matrix, cell.token),
        (attn_tutor::attention::MatrixName::KNew, 0)
    );
    assert!(common::screen(&app, 120, 40).contains("How k_t⁽¹⁾[the, 1] is computed"));
}

#[test]
fn practice_predicts_the_new_row_of_the_cache_and_not_the_copy_of_x() {
    let mut app = app();
    common::go_to(&mut app, "kv_cache");
    update(&mut app, Action::TogglePractice);
    let tutor = app.tutor().unwrap();
    let hidden = tutor.hidden_cells();
    assert!(!hidden.is_empty());
    assert!(
        hidden.iter().all(|cell| cell.row == tutor.token),
        "{hidden:?}"
    );
    update(&mut app, Action::TogglePractice);
    common::go_to(&mut app, "new_token");
    update(&mut app, Action::TogglePractice);
    let tutor = app.tutor().unwrap();
    let targets = tutor.practice_targets();
    assert!(
        !targets.contains(&attn_tutor::attention::MatrixName::XNew),
        "{targets:?}"
    );
    assert!(targets.contains(&attn_tutor::attention::MatrixName::QNew));
}

#[test]
fn the_causal_mask_of_a_generating_lesson_is_not_edited() {
    let mut app = app();
    common::go_to(&mut app, "masking");
    {
        let tutor = app.tutor_mut().unwrap();
        tutor.focus_on(attn_tutor::attention::MatrixName::Mask);
        tutor.set_cursor(
            attn_tutor::attention::MatrixName::Mask,
            attn_tutor::app::Cursor {
                row: 0,
                col: 1,
                on_label: false,
            },
        );
    }
    update(&mut app, Action::Edit);
    update(&mut app, Action::ClearInput);
    update(&mut app, Action::Type('0'));
    update(&mut app, Action::Submit);
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.lesson.mask, attn_tutor::lesson::Mask::Causal);
    assert!(
        status(&app).contains("needs the causal mask"),
        "{}",
        status(&app)
    );
}

#[test]
fn practice_of_the_focus_row_only_still_asks_a_generation_steps_row() {
    let mut app = app();
    common::go_to(&mut app, "decode_weights");
    update(&mut app, Action::NextToken);
    update(&mut app, Action::TogglePractice);
    update(&mut app, Action::TogglePracticeRow);
    let tutor = app.tutor().unwrap();
    assert!(tutor.practice.as_ref().unwrap().focus_row_only);
    assert!(!tutor.hidden_cells().is_empty());
}

#[test]
fn an_edit_marks_the_generation_cells_it_changed_at_the_token_on_screen() {
    let mut app = app();
    common::go_to(&mut app, "embedding");
    // The cursor on "fox"'s first embedding (the focus, token 3, the token on screen).
    let tutor = app.tutor_mut().unwrap();
    assert_eq!(tutor.token, 2);
    tutor.set_cursor(
        attn_tutor::attention::MatrixName::Embeddings,
        attn_tutor::app::Cursor {
            row: 2,
            col: 0,
            on_label: false,
        },
    );
    update(&mut app, Action::Edit);
    update(&mut app, Action::ClearInput);
    for ch in "5".chars() {
        update(&mut app, Action::Type(ch));
    }
    update(&mut app, Action::Submit);
    let tutor = app.tutor().unwrap();
    let x_t =
        attn_tutor::attention::Cell::new(attn_tutor::attention::MatrixName::XNew, 0, 0).at_token(2);
    assert!(
        tutor.changed.contains(&x_t),
        "x_t of fox changed and is marked"
    );
}

#[test]
fn away_from_the_focus_token_the_lessons_own_text_says_which_token_it_was_written_at() {
    let lesson = attn_tutor::lesson::builtin("generation").unwrap();
    let mut app = common::lesson_app("generation", lesson.text);
    common::go_to(&mut app, "new_token");
    let text = |app: &App| attn_tutor::ui::narration_text(app.tutor().unwrap());
    let written_at = "The lesson's text below is written at “sat”, token 3 of 6";
    assert!(!text(&app).contains(written_at), "{}", text(&app));
    for _ in 0..3 {
        update(&mut app, Action::NextToken);
    }
    assert!(text(&app).contains(written_at), "{}", text(&app));
    assert!(text(&app).contains("this screen shows “mat”, token 6 of 6"));
    // And it is on screen, where the narration starts.
    assert!(common::screen(&app, 120, 40).contains("The lesson's text below is written at"));
}
