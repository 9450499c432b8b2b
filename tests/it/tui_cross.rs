//! Cross-attention in the tutor: the source on the Embedding screen, keys labelled by the
//! source, a source token renamed from its row label (undo names it), the working of a source
//! label, the mask's undo line, All heads with more keys than queries, and practice.

use crate::common;

use common::status;

use attn_tutor::app::{Action, App, Direction, update};
use attn_tutor::attention::MatrixName;

/// Two target tokens attending to four source tokens (more keys than queries: a key's row
/// index beyond the target's would have been read from the target's tokens), two heads.
const CROSS: &str = r#"
format = 2
title = "Cross in the tutor"
tokens = ["le", "chat"]
source_tokens = ["the", "black", "cat", "sleeps"]
heads = 2
embeddings = [[1, 0], [0, 1]]
source_embeddings = [[1, 0], [0.5, 0.5], [0, 2], [1, 1]]
w_q = [[1, 0], [0, 1]]
w_k = [[2, 0], [0, 1]]
w_v = [[1, 2], [3, 4]]
w_o = [[1, 0], [0, 1]]
mask = [[0, 0, 0, 0], [0, 0, 0, 0]]
"#;

fn app() -> App {
    common::lesson_app("cross", CROSS)
}

fn type_text(app: &mut App, text: &str) {
    for ch in text.chars() {
        update(app, Action::Type(ch));
    }
}

/// Puts the cursor on row `row`'s label of `matrix` on the current screen.
fn on_label(app: &mut App, matrix: MatrixName, row: usize) {
    while app.tutor().unwrap().focus != matrix {
        update(app, Action::NextMatrix);
    }
    for _ in 0..8 {
        update(app, Action::Move(Direction::Up));
    }
    for _ in 0..row {
        update(app, Action::Move(Direction::Down));
    }
    for _ in 0..8 {
        update(app, Action::Move(Direction::Left));
    }
    assert!(app.tutor().unwrap().cursor(matrix).on_label);
}

#[test]
fn the_embedding_step_shows_the_source_and_its_tokens() {
    let mut app = app();
    common::go_to(&mut app, "embedding");
    update(&mut app, Action::NextMatrix);
    let screen = common::screen(&app, 80, 24);
    assert!(screen.contains("S (source embeddings)"), "{screen}");
    assert!(screen.contains("sleeps"), "{screen}");
}

#[test]
fn a_source_token_is_renamed_from_a_key_row_label_and_undo_names_it() {
    let mut app = app();
    common::go_to(&mut app, "projection");
    on_label(&mut app, MatrixName::K, 3);
    let screen = common::screen(&app, 120, 40);
    assert!(screen.contains("── Source token 4 ──"), "{screen}");
    assert!(
        screen.contains("Source token 4 is “sleeps”: the label of"),
        "{screen}"
    );
    update(&mut app, Action::Edit);
    assert!(common::screen(&app, 80, 24).contains("Source token 4 (now sleeps) = "));
    update(&mut app, Action::ClearInput);
    type_text(&mut app, "naps");
    update(&mut app, Action::Submit);
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.lesson.source_tokens[3], "naps");
    assert_eq!(
        tutor.lesson.tokens,
        ["le", "chat"],
        "the target's tokens stay"
    );
    assert_eq!(tutor.attention.column_label(MatrixName::Scores, 3), "naps");
    assert!(
        status(&app).contains("source token 4 is now naps (was sleeps)"),
        "{}",
        status(&app)
    );
    update(&mut app, Action::Undo);
    assert_eq!(app.tutor().unwrap().lesson.source_tokens[3], "sleeps");
    assert!(
        status(&app).contains("source token 4 = naps → sleeps"),
        "{}",
        status(&app)
    );
}

#[test]
fn a_target_token_is_renamed_from_a_query_row_label() {
    let mut app = app();
    common::go_to(&mut app, "projection");
    on_label(&mut app, MatrixName::Q, 1);
    update(&mut app, Action::Edit);
    update(&mut app, Action::ClearInput);
    type_text(&mut app, "chien");
    update(&mut app, Action::Submit);
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.lesson.tokens[1], "chien");
    assert_eq!(tutor.lesson.source_tokens[1], "black");
    assert!(
        status(&app).contains("target token 2 is now chien (was chat)"),
        "{}",
        status(&app)
    );
}

#[test]
fn a_mask_edit_is_undone_with_the_cell_it_changed() {
    let mut app = app();
    common::go_to(&mut app, "masking");
    while app.tutor().unwrap().focus != MatrixName::Mask {
        update(&mut app, Action::NextMatrix);
    }
    update(&mut app, Action::Move(Direction::Down));
    for _ in 0..3 {
        update(&mut app, Action::Move(Direction::Right));
    }
    update(&mut app, Action::Edit);
    update(&mut app, Action::ClearInput);
    type_text(&mut app, "-inf");
    update(&mut app, Action::Submit);
    assert_eq!(
        app.tutor().unwrap().attention.weights()[(1, 3)],
        0.0,
        "chat no longer sees sleeps"
    );
    update(&mut app, Action::Undo);
    assert!(
        status(&app).contains("mask[chat, sleeps] = -inf → 0"),
        "{}",
        status(&app)
    );
}

#[test]
fn all_heads_maps_have_a_column_per_source_token() {
    let mut app = app();
    common::go_to(&mut app, "all_heads");
    let screen = common::screen(&app, 80, 24);
    // Both heads' maps, four key columns each (numbered: the source's labels are too wide for
    // the cells), and the line under them names the keys by the source's tokens.
    let header = screen
        .lines()
        .find(|line| line.contains("1    2    3    4"))
        .unwrap_or_else(|| panic!("no header of four keys: {screen}"));
    assert_eq!(header.matches("1    2    3    4").count(), 2, "{screen}");
    assert!(screen.contains("4:sleeps"), "{screen}");
}

#[test]
fn practice_on_projection_keeps_every_key_hidden_with_the_focus_row_only() {
    let mut app = app();
    common::go_to(&mut app, "projection");
    update(&mut app, Action::TogglePractice);
    update(&mut app, Action::TogglePracticeRow);
    let tutor = app.tutor().unwrap();
    let hidden = tutor.hidden_cells();
    let keys = hidden
        .iter()
        .filter(|cell| cell.matrix == MatrixName::K)
        .count();
    let queries = hidden
        .iter()
        .filter(|cell| cell.matrix == MatrixName::Q)
        .count();
    // One head of d_k = 1: a column each.
    assert_eq!(
        keys, 4,
        "every source token's key: the focus row's scores need them all"
    );
    assert_eq!(queries, 1, "only the focus row of Q");
}

#[test]
fn an_edit_of_the_source_or_of_w_o_counts_as_changed_numbers() {
    // Saved with changed numbers, a lesson drops its printed figures and narration; an edit of
    // the source's embeddings, a source token or W_o changes them as much as any other.
    for (step, matrix) in [
        ("embedding", MatrixName::SourceEmbeddings),
        ("output_projection", MatrixName::WO),
    ] {
        let mut app = app();
        common::go_to(&mut app, step);
        while app.tutor().unwrap().focus != matrix {
            update(&mut app, Action::NextMatrix);
        }
        assert!(!app.tutor().unwrap().numbers_changed());
        update(&mut app, Action::Edit);
        update(&mut app, Action::ClearInput);
        type_text(&mut app, "7");
        update(&mut app, Action::Submit);
        assert!(
            app.tutor().unwrap().numbers_changed(),
            "{matrix:?}: {}",
            status(&app)
        );
    }
}
