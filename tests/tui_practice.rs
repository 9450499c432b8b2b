//! Practice mode in the tutor, without a terminal: hidden cells, answers right and wrong within
//! the lesson's precision, a slip named, hints up to the answer, scores per step, progress kept
//! and the offer to resume.

use attn_tutor::app::{Action, App, Effect, Overlay, PromptFor, Question, update};
use attn_tutor::attention::{Cell, MatrixName, Step};
use attn_tutor::practice::{Outcome, ProgressStore, StepScore};

/// A built-in lesson open on `step` with practice on.
fn practising(name: &str, step: Step) -> App {
    let entries = App::builtin_entries();
    let index = entries.iter().position(|entry| entry.name == name).unwrap();
    let mut app = App::new(entries, Some(index));
    let tutor = app.tutor.as_mut().unwrap();
    let at = tutor.steps.iter().position(|shown| *shown == step).unwrap();
    tutor.go_to_step(at);
    update(&mut app, Action::TogglePractice);
    app
}

fn selected(app: &App) -> Cell {
    app.tutor.as_ref().unwrap().selected_cell().unwrap()
}

fn exact(app: &App, cell: Cell) -> f64 {
    app.tutor
        .as_ref()
        .unwrap()
        .attention
        .matrix(cell.matrix)
        .unwrap()[(cell.row, cell.col)]
}

fn hidden(app: &App, cell: Cell) -> bool {
    app.tutor.as_ref().unwrap().is_hidden(cell)
}

fn status(app: &App) -> String {
    app.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

/// Types `text` as the answer for the selected cell and presses Enter.
fn answer(app: &mut App, text: &str) -> Vec<Effect> {
    let mut chars = text.chars();
    update(app, Action::StartAnswer(chars.next().unwrap()));
    for ch in chars {
        update(app, Action::Type(ch));
    }
    update(app, Action::Submit)
}

fn outcome(app: &App, cell: Cell) -> Option<Outcome> {
    let practice = app.tutor.as_ref().unwrap().practice.as_ref().unwrap();
    practice.attempt(cell).and_then(|attempt| attempt.outcome())
}

#[test]
fn practice_hides_every_cell_the_step_computes_and_nothing_else() {
    let app = practising("cat-sleeps", Step::Scores);
    let tutor = app.tutor.as_ref().unwrap();
    assert_eq!(tutor.hidden_cells().len(), 9);
    assert!(!tutor.is_hidden(Cell::new(MatrixName::Q, 0, 0)));
    assert_eq!(tutor.focus, MatrixName::Scores);
}

#[test]
fn a_right_answer_reveals_the_cell_and_moves_to_the_next() {
    let mut app = practising("cat-sleeps", Step::Scores);
    let cell = selected(&app);
    {
        let typed = format!("{:.3}", exact(&app, cell));
        answer(&mut app, &typed)
    };
    assert!(!hidden(&app, cell));
    assert_eq!(outcome(&app, cell), Some(Outcome::FirstTry));
    assert_ne!(selected(&app), cell, "the cursor moves on to the next ?");
    assert!(status(&app).starts_with("Right"), "{}", status(&app));
}

#[test]
fn an_answer_within_half_a_unit_of_the_last_decimal_is_right_and_beyond_it_wrong() {
    // cat-sleeps shows 3 decimals: half a unit is 0.0005.
    let mut app = practising("cat-sleeps", Step::Scores);
    let cell = selected(&app);
    {
        let typed = format!("{}", exact(&app, cell) + 0.0004);
        answer(&mut app, &typed)
    };
    assert_eq!(outcome(&app, cell), Some(Outcome::FirstTry));

    let mut app = practising("cat-sleeps", Step::Scores);
    {
        let typed = format!("{}", exact(&app, cell) + 0.0006);
        answer(&mut app, &typed)
    };
    assert_eq!(outcome(&app, cell), Some(Outcome::Revealed));
}

#[test]
fn a_wrong_answer_shows_the_working_with_the_learners_number_and_counts_as_revealed() {
    let mut app = practising("cat-sleeps", Step::Scores);
    let cell = selected(&app);
    answer(&mut app, "100");
    assert_eq!(selected(&app), cell, "the cursor stays to show the working");
    assert!(!hidden(&app, cell));
    let feedback = app
        .tutor
        .as_ref()
        .unwrap()
        .practice
        .as_ref()
        .unwrap()
        .feedback
        .unwrap();
    assert_eq!(feedback.answer, 100.0);
    assert!(!feedback.verdict.is_right());
    assert!(status(&app).contains("you said 100"), "{}", status(&app));
}

#[test]
fn forgetting_to_divide_by_the_square_root_of_d_k_is_named() {
    let mut app = practising("cat-sleeps", Step::Scaling);
    let cell = selected(&app);
    let score = exact(&app, Cell::new(MatrixName::Scores, cell.row, cell.col));
    answer(&mut app, &format!("{score:.3}"));
    assert!(status(&app).contains("√d_k"), "{}", status(&app));
}

#[test]
fn hints_go_from_the_first_term_to_every_term_to_the_answer() {
    let mut app = practising("cat-sleeps", Step::Scores);
    let cell = selected(&app);
    update(&mut app, Action::Hint);
    assert!(status(&app).contains("Hint 1 of 3"), "{}", status(&app));
    update(&mut app, Action::Hint);
    assert!(status(&app).contains("Hint 2 of 3"), "{}", status(&app));
    assert!(hidden(&app, cell));
    update(&mut app, Action::Hint);
    assert!(!hidden(&app, cell), "the third hint is the answer");
    assert_eq!(outcome(&app, cell), Some(Outcome::Revealed));
}

#[test]
fn a_right_answer_after_a_hint_counts_as_with_hints() {
    let mut app = practising("cat-sleeps", Step::Scores);
    let cell = selected(&app);
    update(&mut app, Action::Hint);
    {
        let typed = format!("{:.3}", exact(&app, cell));
        answer(&mut app, &typed)
    };
    assert_eq!(outcome(&app, cell), Some(Outcome::WithHints));
}

#[test]
fn finishing_a_step_scores_it_and_keeps_the_progress() {
    let mut app = practising("identity-2x2", Step::Scores);
    let mut kept = None;
    for _ in 0..4 {
        let cell = selected(&app);
        let typed = format!("{:.4}", exact(&app, cell));
        let effects = answer(&mut app, &typed);
        kept = effects.into_iter().find_map(|effect| match effect {
            Effect::SaveProgress(store) => Some(store),
            _ => None,
        });
    }
    let store: ProgressStore = kept.expect("finishing the step hands out the progress to keep");
    let progress = store.lesson("identity-2x2").unwrap();
    assert_eq!(
        progress.score.step(Step::Scores),
        Some(&StepScore {
            first_try: 4,
            ..StepScore::default()
        })
    );
    assert!(
        status(&app).contains("done: 4/4 first try"),
        "{}",
        status(&app)
    );
}

#[test]
fn reopening_a_lesson_offers_to_go_back_where_the_learner_stopped() {
    let mut app = practising("identity-2x2", Step::Scores);
    update(&mut app, Action::NextStep);
    update(&mut app, Action::Back);
    assert!(app.tutor.is_none());
    update(&mut app, Action::Open);
    let Overlay::Question(Question::Resume { step_index }) = app.overlay else {
        panic!("no offer to resume: {:?}", app.overlay);
    };
    update(&mut app, Action::Submit);
    let tutor = app.tutor.as_ref().unwrap();
    assert_eq!(tutor.step_index, step_index);
    assert_eq!(tutor.step(), Step::Scaling);
}

#[test]
fn numbers_cannot_change_while_practising() {
    let mut app = practising("cat-sleeps", Step::Projection);
    update(&mut app, Action::PreviousMatrix);
    update(&mut app, Action::Edit);
    assert_eq!(app.overlay, Overlay::None);
    update(&mut app, Action::Reset);
    assert!(
        status(&app).contains("x stops practice"),
        "{}",
        status(&app)
    );
}

#[test]
fn nonsense_typed_as_an_answer_keeps_the_prompt_and_the_cell_hidden() {
    let mut app = practising("cat-sleeps", Step::Scores);
    let cell = selected(&app);
    answer(&mut app, "1.2.3");
    assert!(
        matches!(&app.overlay, Overlay::Prompt(prompt) if prompt.purpose == PromptFor::Answer(cell))
    );
    assert!(hidden(&app, cell));
    assert!(status(&app).contains("not a number"), "{}", status(&app));
}

#[test]
fn x_again_shows_every_number() {
    let mut app = practising("cat-sleeps", Step::Scores);
    update(&mut app, Action::TogglePractice);
    assert!(app.tutor.as_ref().unwrap().hidden_cells().is_empty());
    assert!(app.tutor.as_ref().unwrap().practice.is_none());
}
