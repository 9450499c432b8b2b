//! Finding the way around edits: `e` on a computed cell offers the cell it comes from (for an
//! element-wise step, the very same cell of the step before), and undo and redo say which edit
//! they took back or made again.

use attn_tutor::app::{Action, App, Direction, Overlay, Question, update};
use attn_tutor::attention::{Cell, MatrixName, Step};

fn open(name: &str) -> App {
    let entries = App::builtin_entries();
    let index = entries.iter().position(|entry| entry.name == name).unwrap();
    App::new(entries, Some(index))
}

fn go_to(app: &mut App, step: Step) {
    let tutor = app.tutor_mut().unwrap();
    let index = tutor.steps.iter().position(|shown| *shown == step).unwrap();
    tutor.go_to_step(index);
}

fn select(app: &mut App, matrix: MatrixName, row: usize, col: usize) {
    update(
        app,
        Action::Select {
            matrix,
            row,
            col: Some(col),
        },
    );
}

/// Where `e` on the selected computed cell offers to go.
fn offered_jump(app: &mut App) -> Cell {
    update(app, Action::Edit);
    match app.overlay.clone() {
        Overlay::Question(Question::JumpTo { to, .. }) => to,
        other => panic!("no offer to jump: {other:?}"),
    }
}

fn status(app: &App) -> String {
    app.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

/// Edits the selected input cell: e, the text, Enter.
fn edit(app: &mut App, text: &str) {
    update(app, Action::Edit);
    update(app, Action::ClearInput);
    for ch in text.chars() {
        update(app, Action::Type(ch));
    }
    update(app, Action::Submit);
}

#[test]
fn e_on_a_weight_goes_to_the_same_cell_of_the_softmax_input() {
    // cat-sleeps: tokens The, cat, sleeps; weights[sleeps, sleeps] is softmax of scaled row sleeps.
    let mut app = open("cat-sleeps");
    go_to(&mut app, Step::Softmax);
    select(&mut app, MatrixName::Weights, 2, 2);
    assert_eq!(offered_jump(&mut app), Cell::new(MatrixName::Scaled, 2, 2));
}

#[test]
fn e_on_a_scaled_score_goes_to_the_same_score() {
    let mut app = open("cat-sleeps");
    go_to(&mut app, Step::Scaling);
    select(&mut app, MatrixName::Scaled, 1, 2);
    assert_eq!(offered_jump(&mut app), Cell::new(MatrixName::Scores, 1, 2));
}

#[test]
fn undo_says_which_edit_it_undid_and_redo_which_it_redid() {
    let mut app = open("cat-sleeps");
    // The cursor starts on the focus row; go to X[The, 1].
    select(&mut app, MatrixName::Embeddings, 0, 0);
    edit(&mut app, "2");
    update(&mut app, Action::Undo);
    assert!(
        status(&app).starts_with("Undid X[The, 1] = 2 → 1"),
        "{}",
        status(&app)
    );
    update(&mut app, Action::Redo);
    assert!(
        status(&app).starts_with("Redid X[The, 1] = 1 → 2"),
        "{}",
        status(&app)
    );
}

#[test]
fn undo_of_a_renamed_token_names_the_token() {
    let mut app = open("cat-sleeps");
    select(&mut app, MatrixName::Embeddings, 2, 0);
    update(&mut app, Action::Move(Direction::Left));
    edit(&mut app, "naps");
    update(&mut app, Action::Undo);
    assert!(
        status(&app).starts_with("Undid token 3 = naps → sleeps"),
        "{}",
        status(&app)
    );
}

#[test]
fn undo_of_a_causal_mask_cell_names_the_cell() {
    let mut app = open("causal-cat-sat-mat");
    go_to(&mut app, Step::Masking);
    select(&mut app, MatrixName::Mask, 0, 1);
    edit(&mut app, "0");
    update(&mut app, Action::Undo);
    let tutor = app.tutor().unwrap();
    let name = tutor.attention.cell_name(Cell::new(MatrixName::Mask, 0, 1));
    assert!(
        status(&app).starts_with(&format!("Undid {name} = 0 → -inf")),
        "{}",
        status(&app)
    );
}

/// The norm's γ is the lesson's own numbers: `e` edits a cell of it, the norm and everything
/// after it are made again, undo takes it back, and a save writes the edited γ.
#[test]
fn a_cell_of_the_norm_s_gain_is_edited_recomputed_undone_and_saved() {
    use attn_tutor::app::PickerEntry;
    use attn_tutor::lesson::{lesson_to_toml, load_text};
    let text = "format = 2\ntitle = \"Normed\"\ntokens = [\"a\", \"b\", \"c\"]\n\
        embeddings = [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 3, 1]]\n\
        w_q = [[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]]\n\
        w_k = [[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]]\n\
        w_v = [[1, 1, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]]\nnorm = \"layer\"\n";
    let entry = PickerEntry {
        name: "normed".to_string(),
        lesson: load_text("normed", None, text.to_string()),
    };
    let mut app = App::new(vec![entry], Some(0));
    go_to(&mut app, Step::LayerNorm);
    let value = |app: &App, matrix: MatrixName, row: usize, col: usize| {
        let attention = &app.tutor().unwrap().attention;
        attention.value(Cell::new(matrix, row, col)).unwrap()
    };
    let (normed, query) = (
        value(&app, MatrixName::XNorm, 2, 0),
        value(&app, MatrixName::Q, 2, 0),
    );
    select(&mut app, MatrixName::NormGain, 0, 0);
    update(&mut app, Action::Edit);
    update(&mut app, Action::ClearInput);
    update(&mut app, Action::Type('3'));
    update(&mut app, Action::Submit);
    assert_eq!(
        value(&app, MatrixName::NormGain, 0, 0),
        3.0,
        "{}",
        status(&app)
    );
    // β[1] = 0: X̂[c, 1] is three times what it was, and Q[c, 1] = X̂[c, 1] + X̂[c, 2] moves.
    assert!((value(&app, MatrixName::XNorm, 2, 0) - 3.0 * normed).abs() < 1e-12);
    assert!((value(&app, MatrixName::Q, 2, 0) - (query + 2.0 * normed)).abs() < 1e-12);
    let saved = lesson_to_toml(&app.tutor().unwrap().lesson_to_save());
    assert!(saved.contains("norm_gain = [3, 1, 1, 1]\n"), "{saved}");
    update(&mut app, Action::Undo);
    assert_eq!(value(&app, MatrixName::NormGain, 0, 0), 1.0);
    assert_eq!(value(&app, MatrixName::XNorm, 2, 0), normed);
}
