//! Practice mode in the tutor, without a terminal: hidden cells, answers right and wrong within
//! the lesson's precision, a slip named, hints up to the answer, scores per step, progress kept
//! and the offer to resume.

use crate::common;

use common::status;

use attn_tutor::app::{Action, App, Effect, Overlay, PromptFor, Question, update};
use attn_tutor::attention::{Cell, MatrixName, Step};
use attn_tutor::practice::{Outcome, ProgressStore, StepScore};

/// A built-in lesson open on `step` with practice on.
fn practising(name: &str, step: Step) -> App {
    let entries = App::builtin_entries();
    let index = entries.iter().position(|entry| entry.name == name).unwrap();
    let mut app = App::new(entries, Some(index));
    let tutor = app.tutor_mut().unwrap();
    let at = tutor.steps.iter().position(|shown| *shown == step).unwrap();
    tutor.go_to_step(at);
    update(&mut app, Action::TogglePractice);
    app
}

fn selected(app: &App) -> Cell {
    app.tutor().unwrap().selected_cell().unwrap()
}

fn exact(app: &App, cell: Cell) -> f64 {
    app.tutor().unwrap().attention.matrix(cell.matrix).unwrap()[(cell.row, cell.col)]
}

fn hidden(app: &App, cell: Cell) -> bool {
    app.tutor().unwrap().is_hidden(cell)
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
    let practice = app.tutor().unwrap().practice.as_ref().unwrap();
    practice.attempt(cell).and_then(|attempt| attempt.outcome())
}

#[test]
fn practice_hides_every_cell_the_step_computes_and_nothing_else() {
    let app = practising("cat-sleeps", Step::Scores);
    let tutor = app.tutor().unwrap();
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
    assert!(!hidden(&app, cell));
    assert_eq!(outcome(&app, cell), Some(Outcome::Revealed));
    let feedback = app
        .tutor()
        .unwrap()
        .practice
        .as_ref()
        .unwrap()
        .feedback
        .clone()
        .unwrap();
    assert_eq!(feedback.cell, cell);
    let (said, verdict) = feedback.said.expect("an answer was typed");
    assert_eq!(said, 100.0);
    assert!(!verdict.is_right());
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
    assert!(app.tutor().is_none());
    update(&mut app, Action::Open);
    let Overlay::Question(Question::Resume { step_index }) = app.overlay else {
        panic!("no offer to resume: {:?}", app.overlay);
    };
    update(&mut app, Action::Submit);
    let tutor = app.tutor().unwrap();
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
    assert!(app.tutor().unwrap().hidden_cells().is_empty());
    assert!(app.tutor().unwrap().practice.is_none());
}

/// The screen drawn at 80×24, as text.
fn screen(app: &App) -> String {
    use attn_tutor::ui::{Theme, view};
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).expect("a terminal");
    terminal
        .draw(|frame| view(frame, app, &Theme::monochrome()))
        .expect("drawing never fails on a test terminal");
    let buffer = terminal.backend().buffer();
    buffer
        .content
        .chunks(usize::from(buffer.area.width))
        .map(|cells| cells.iter().map(|cell| cell.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Answers the selected hidden cell right, at the lesson's precision.
fn answer_right(app: &mut App) -> Vec<Effect> {
    let cell = selected(app);
    let typed = format!("{:.4}", exact(app, cell));
    answer(app, &typed)
}

/// The progress handed out to be kept by these effects, if any.
fn kept(effects: Vec<Effect>) -> Option<ProgressStore> {
    effects.into_iter().find_map(|effect| match effect {
        Effect::SaveProgress(store) => Some(store),
        _ => None,
    })
}

// Issue 11, item 3: the Projection step computes Q, K and V, and is done with all three.

#[test]
fn the_projection_step_hides_q_k_and_v_and_goes_on_to_k_after_the_last_q() {
    let mut app = practising("identity-2x2", Step::Projection);
    assert_eq!(app.tutor().unwrap().hidden_cells().len(), 12);
    let shown = screen(&app);
    assert!(
        shown.contains("12 to predict on this step in Q, K and V"),
        "{shown}"
    );
    for _ in 0..4 {
        answer_right(&mut app);
    }
    assert!(!status(&app).contains("done"), "{}", status(&app));
    let next = selected(&app);
    assert_eq!(next, Cell::new(MatrixName::K, 0, 0));
    assert!(hidden(&app, next));
    assert_eq!(app.tutor().unwrap().panels()[2], MatrixName::K);
}

#[test]
fn the_projection_score_counts_every_cell_of_q_k_and_v() {
    let mut app = practising("identity-2x2", Step::Projection);
    // Q[x1, 1] with a hint, Q[x1, 2] revealed by three hints, the ten others first try.
    update(&mut app, Action::Hint);
    answer_right(&mut app);
    for _ in 0..3 {
        update(&mut app, Action::Hint);
    }
    let mut store = None;
    for _ in 0..10 {
        store = kept(answer_right(&mut app)).or(store);
    }
    let store = store.expect("the last cell finishes the step");
    assert_eq!(
        store
            .lesson("identity-2x2")
            .unwrap()
            .score
            .step(Step::Projection),
        Some(&StepScore {
            first_try: 10,
            with_hints: 1,
            revealed: 1,
            ..StepScore::default()
        })
    );
    assert!(
        status(&app).contains("Projection done: 10/12 first try · 1 with hints · 1 revealed"),
        "{}",
        status(&app)
    );
}

// Issue 11, item 4: an answer right to the precision typed is right.

#[test]
fn an_answer_right_to_three_decimals_where_the_lesson_shows_four_is_right() {
    // identity-2x2 shows 4 decimals; scaled[x1, x1] = 1/√2 = 0.70710…
    let mut app = practising("identity-2x2", Step::Scaling);
    let cell = selected(&app);
    assert_eq!(cell, Cell::new(MatrixName::Scaled, 0, 0));
    answer(&mut app, "0.707");
    assert_eq!(outcome(&app, cell), Some(Outcome::FirstTry));
    assert!(
        status(&app).contains("Right to 3 decimals"),
        "{}",
        status(&app)
    );
}

#[test]
fn an_answer_typed_to_fewer_than_two_decimals_is_held_to_the_lessons_precision() {
    let mut app = practising("identity-2x2", Step::Scaling);
    let cell = selected(&app);
    answer(&mut app, "0.7");
    assert_eq!(outcome(&app, cell), Some(Outcome::Revealed));
}

#[test]
fn an_answer_wrong_at_the_precision_typed_is_wrong() {
    let mut app = practising("identity-2x2", Step::Scaling);
    let cell = selected(&app);
    answer(&mut app, "0.708");
    assert_eq!(outcome(&app, cell), Some(Outcome::Revealed));
}

// Issue 11, item 5: after a wrong answer, the next answer goes to the next hidden cell.

#[test]
fn after_a_wrong_answer_the_cursor_moves_to_the_next_hidden_cell_and_takes_the_next_answer() {
    let mut app = practising("cat-sleeps", Step::Scores);
    let first = selected(&app);
    answer(&mut app, "100");
    let next = selected(&app);
    assert_ne!(next, first);
    assert!(hidden(&app, next), "the cursor is on a ? again");
    let typed = format!("{:.3}", exact(&app, next));
    answer(&mut app, &typed);
    assert_eq!(outcome(&app, next), Some(Outcome::FirstTry));
}

#[test]
fn the_working_of_a_wrong_answer_stays_on_screen_after_the_cursor_moves_on() {
    let mut app = practising("cat-sleeps", Step::Scores);
    answer(&mut app, "100");
    let shown = screen(&app);
    assert!(
        shown.contains("scores[sleeps, The]: you said 100; it is"),
        "{shown}"
    );
    assert!(shown.contains("q_sleeps · k_The"), "{shown}");
}

// Issue 11, item 24 (practice part): no stale "e goes to" in the practice panel.

#[test]
fn the_practice_panel_never_offers_e_to_jump_away_from_the_answers() {
    let mut app = practising("identity-2x2", Step::Projection);
    answer(&mut app, "5");
    let shown = screen(&app);
    assert!(shown.contains("Q[x1, 1]: you said 5; it is 1."), "{shown}");
    assert!(!shown.contains("e goes to"), "{shown}");
}

// Issue 11, item 18: the resume offer only where there is something to resume, and the key
// that meets it acts.

#[test]
fn a_lesson_only_looked_at_is_neither_offered_to_resume_nor_kept_in_progress() {
    let entries = App::builtin_entries();
    let index = entries.iter().position(|e| e.name == "cat-sleeps").unwrap();
    let mut app = App::new(entries, Some(index));
    update(&mut app, Action::GoToStep(4));
    update(&mut app, Action::Back);
    update(&mut app, Action::Open);
    assert_eq!(app.overlay, Overlay::None);
    assert!(app.progress.lesson("cat-sleeps").is_none());
}

#[test]
fn the_key_pressed_at_the_resume_offer_does_what_it_does() {
    use attn_tutor::input::action_for;
    use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
    let mut app = practising("identity-2x2", Step::Scores);
    update(&mut app, Action::NextStep);
    update(&mut app, Action::Back);
    update(&mut app, Action::Open);
    assert!(matches!(
        app.overlay,
        Overlay::Question(Question::Resume { .. })
    ));
    let five = Event::Key(KeyEvent::new(KeyCode::Char('5'), KeyModifiers::NONE));
    let area = ratatui::layout::Rect::new(0, 0, 80, 24);
    let action = action_for(&five, &app, area).expect("5 means something");
    update(&mut app, action);
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(app.tutor().unwrap().step(), Step::Softmax);
}

#[test]
fn practice_starting_at_the_step_where_the_learner_stopped_offers_no_resume() {
    let mut app = practising("identity-2x2", Step::Scores);
    update(&mut app, Action::PreviousStep);
    assert_eq!(app.tutor().unwrap().step(), Step::Projection);
    let progress = app.progress.clone();
    let entries = App::builtin_entries();
    let index = entries
        .iter()
        .position(|e| e.name == "identity-2x2")
        .unwrap();
    // As `attn-tutor practice identity-2x2` starts: the progress, the lesson, then practice.
    let mut app = App::new(entries, None);
    app.progress = progress;
    app.picked = index;
    update(&mut app, Action::Open);
    assert!(matches!(
        app.overlay,
        Overlay::Question(Question::Resume { .. })
    ));
    app.start_practice();
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(app.tutor().unwrap().step(), Step::Projection);
}

#[test]
fn x_upper_hides_only_the_focus_row_and_that_row_finishes_the_step() {
    // causal-cat-sat-mat's Softmax step: 6 × 6 weights, 36 cells to predict.
    let mut app = practising("causal-cat-sat-mat", Step::Softmax);
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.hidden_cells().len(), 36);
    update(&mut app, Action::TogglePracticeRow);
    let tutor = app.tutor().unwrap();
    let row = tutor.focus_row();
    let hidden_cells = tutor.hidden_cells();
    assert_eq!(hidden_cells.len(), 6, "{}", status(&app));
    assert!(hidden_cells.iter().all(|cell| cell.row == row));
    assert!(status(&app).contains("only the row of"), "{}", status(&app));
    assert_eq!(selected(&app).row, row, "the cursor goes to the row");
    let mut finished = Vec::new();
    for _ in 0..6 {
        let cell = selected(&app);
        let value = exact(&app, cell);
        let typed = if value == f64::NEG_INFINITY {
            "-inf".to_string()
        } else {
            format!("{value:.4}")
        };
        finished.extend(answer(&mut app, &typed));
    }
    assert!(
        status(&app).contains("done: 6/6 first try"),
        "{}",
        status(&app)
    );
    update(&mut app, Action::TogglePracticeRow);
    assert_eq!(
        app.tutor().unwrap().hidden_cells().len(),
        30,
        "the whole step again"
    );
}

#[test]
fn x_upper_outside_practice_says_to_start_it() {
    let mut app = practising("cat-sleeps", Step::Softmax);
    update(&mut app, Action::TogglePractice);
    update(&mut app, Action::TogglePracticeRow);
    assert!(
        status(&app).contains("x starts practice"),
        "{}",
        status(&app)
    );
}

#[test]
fn every_cell_of_the_positions_is_asked_before_their_sum_x_that_needs_them() {
    let mut app = practising("positions-cat-sat-mat", Step::Positions);
    let mut asked = Vec::new();
    for _ in 0..24 {
        let cell = selected(&app);
        if !hidden(&app, cell) {
            break;
        }
        asked.push(cell.matrix);
        let right = format!("{:.4}", exact(&app, cell));
        answer(&mut app, &right);
    }
    assert_eq!(asked.len(), 24, "P and X are 6 × 2 each: {asked:?}");
    let first_x = asked.iter().position(|m| *m == MatrixName::X).unwrap();
    assert!(
        asked[first_x..].iter().all(|m| *m == MatrixName::X),
        "a cell of P was asked after X: {asked:?}"
    );
}

#[test]
fn a_sinusoidal_position_is_worked_out_from_its_position_not_from_highlighted_cells() {
    let app = practising("positions-cat-sat-mat", Step::Positions);
    let screen = common::screen(&app, 120, 40);
    assert!(screen.contains("Work it out from its position"), "{screen}");
}

#[test]
fn t_outside_practice_says_what_it_does_and_how_to_start_practice() {
    let entries = App::builtin_entries();
    let index = entries
        .iter()
        .position(|entry| entry.name == "generation")
        .unwrap();
    let mut app = App::new(entries, Some(index));
    app.tutor_mut().unwrap().go_to_step(5);
    update(&mut app, Action::Hint);
    let said = status(&app);
    assert!(!said.contains("Nothing left to predict"), "{said}");
    assert!(
        said.contains("t gives a hint for a hidden ? in practice: x starts practice"),
        "{said}"
    );
}

/// Practice started with the cursor on a later result of the step begins at the first, whose
/// operands are on the screen: weights_t is asked after scores_t, not while it is hidden.
#[test]
fn practice_starts_at_the_steps_first_result_whatever_the_cursor_is_on() {
    let entries = App::builtin_entries();
    let index = entries
        .iter()
        .position(|entry| entry.name == "generation")
        .unwrap();
    let mut app = App::new(entries, Some(index));
    let tutor = app.tutor_mut().unwrap();
    let step = tutor
        .steps
        .iter()
        .position(|step| *step == Step::DecodeWeights)
        .unwrap();
    tutor.go_to_step(step);
    tutor.focus_on(MatrixName::DecodeWeights);
    update(&mut app, Action::TogglePractice);
    let cell = selected(&app);
    assert_eq!(cell.matrix, MatrixName::DecodeScores, "{cell:?}");
    assert!(hidden(&app, cell));
}

// Issue 29, tried as a new user: the verdict echoes the answer as it was typed, decimals and
// all ("0.050" is an answer to 3 decimals; "0.05" would be one to 2).

#[test]
fn the_verdict_echoes_the_answer_with_the_decimals_typed() {
    let entries = App::builtin_entries();
    let index = entries.iter().position(|e| e.name == "generation").unwrap();
    let mut app = App::new(entries, Some(index));
    let tutor = app.tutor_mut().unwrap();
    tutor.go_to_step(tutor.steps.len() - 1);
    tutor.set_token(tutor.attention.seq_len() - 1);
    update(&mut app, Action::TogglePractice);
    let cell = selected(&app);
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.attention.cell_name(cell), "output_t[mat, 1]");
    assert_eq!(
        format!("{:.4}", tutor.attention.value(cell).unwrap()),
        "0.0499"
    );
    answer(&mut app, "0.050");
    let shown = screen(&app);
    assert!(
        shown.contains("Right to 3 decimals: output_t[mat, 1] = 0.0499 (you said 0.050)"),
        "{shown}"
    );
    // A wrong answer is echoed as typed too.
    answer(&mut app, "1.500");
    let shown = screen(&app);
    assert!(shown.contains("you said 1.500;"), "{shown}");
}

// Issue 29, tried as a new user: the step to resume is the one last practised, also when
// practice was started on it with x after finishing another; a step practised but not
// finished keeps the lesson in the progress, at that step.

/// Answers every hidden cell on screen by asking for the answer (three hints each).
fn reveal_all_on_screen(app: &mut App) {
    while !app.tutor().unwrap().hidden_cells().is_empty() {
        for _ in 0..3 {
            update(app, Action::Hint);
        }
    }
}

#[test]
fn the_step_to_resume_is_the_one_last_practised_after_x_on_another() {
    let entries = App::builtin_entries();
    let index = entries.iter().position(|e| e.name == "backward").unwrap();
    let mut app = App::new(entries, Some(index));
    update(&mut app, Action::GoToStep(9));
    update(&mut app, Action::TogglePractice);
    reveal_all_on_screen(&mut app);
    let finished = app.tutor().unwrap().step();
    assert!(
        app.progress.lesson("backward").unwrap().is_done(finished),
        "{}",
        status(&app)
    );
    update(&mut app, Action::TogglePractice);
    update(&mut app, Action::GoToStep(8));
    update(&mut app, Action::TogglePractice);
    let practised = app.tutor().unwrap().step();
    assert_ne!(practised, finished);
    answer(&mut app, "1");
    assert_eq!(
        app.progress.lesson("backward").unwrap().last_step,
        Some(practised)
    );
    update(&mut app, Action::TogglePractice);
    update(&mut app, Action::Back);
    update(&mut app, Action::Open);
    assert_eq!(
        app.overlay,
        Overlay::Question(Question::Resume { step_index: 7 })
    );
}

#[test]
fn a_step_practised_but_not_finished_keeps_the_lesson_at_that_step() {
    let entries = App::builtin_entries();
    let index = entries.iter().position(|e| e.name == "backward").unwrap();
    let mut app = App::new(entries, Some(index));
    update(&mut app, Action::GoToStep(8));
    let effects = update(&mut app, Action::TogglePractice);
    let step = app.tutor().unwrap().step();
    let store = kept(effects).expect("starting practice on a step keeps it");
    let progress = store.lesson("backward").expect("the lesson is kept");
    assert_eq!(progress.last_step, Some(step));
    assert_eq!(progress.steps_done().count(), 0, "no step is finished");
}

// Issue 29, tried as a new user: a step of several heads, tokens or tiles shows one at a time;
// it is done when every one of them is, and its count says which one it counts.

fn open(name: &str) -> App {
    let entries = App::builtin_entries();
    let index = entries.iter().position(|e| e.name == name).unwrap();
    App::new(entries, Some(index))
}

fn go_to(app: &mut App, step: Step) {
    let tutor = app.tutor_mut().unwrap();
    let at = tutor.steps.iter().position(|shown| *shown == step).unwrap();
    tutor.go_to_step(at);
}

/// Answers the selected hidden cell right, in the head and token on screen.
fn answer_right_in_head(app: &mut App) {
    let tutor = app.tutor().unwrap();
    let value = tutor.attention.value(selected(app)).unwrap();
    let typed = if value == f64::NEG_INFINITY {
        "-inf".to_string()
    } else {
        format!("{value:.4}")
    };
    answer(app, &typed);
}

#[test]
fn softmax_of_four_heads_is_done_with_the_fourth_head_and_counts_each_head_apart() {
    let mut app = open("gqa");
    go_to(&mut app, Step::Softmax);
    app.tutor_mut().unwrap().set_head(2);
    update(&mut app, Action::TogglePractice);
    // Head 3's 16 cells: 12 right, then 4 revealed.
    for _ in 0..12 {
        answer_right_in_head(&mut app);
    }
    reveal_all_on_screen(&mut app);
    assert!(!status(&app).contains("Softmax done"), "{}", status(&app));
    assert!(
        status(&app).contains("Head 3 done: 12/16 first try · 4 revealed."),
        "{}",
        status(&app)
    );
    let shown = screen(&app);
    assert!(!shown.contains("This step is done"), "{shown}");
    // One line at 80 columns: the part's first tries; the status line has the rest.
    assert!(
        shown.contains("Head 3 is done: 12/16 first try. Heads 1, 2 and 4: 48 to go · < > head"),
        "{shown}"
    );
    assert!(app.progress.lesson("gqa").unwrap().score.steps.is_empty());

    update(&mut app, Action::PreviousHead);
    let shown = screen(&app);
    assert!(shown.contains("Head 2: 16 to predict."), "{shown}");
    assert!(
        !shown.contains("weights⁽³⁾"),
        "head 3's last verdict is gone: {shown}"
    );
    assert!(shown.contains("Heads 1 and 4: 32 to go"), "{shown}");
    // Head 4 part-way: its own count, not head 3's with it.
    update(&mut app, Action::NextHead);
    update(&mut app, Action::NextHead);
    answer_right_in_head(&mut app);
    answer_right_in_head(&mut app);
    update(&mut app, Action::Hint);
    update(&mut app, Action::Hint);
    update(&mut app, Action::Hint);
    let count = app.tutor().unwrap().practice_count();
    assert_eq!(count.here.to_string(), "2/3 first try · 1 revealed");
    // One line at 80 columns: the part's first tries, what is left and where.
    let shown = screen(&app);
    assert!(
        shown.contains("Head 4: 2/3 first try · 13 to go. Heads 1 and 2: 32 to go · < > head"),
        "{shown}"
    );

    reveal_all_on_screen(&mut app);
    for head in [0, 1] {
        app.tutor_mut().unwrap().set_head(head);
        reveal_all_on_screen(&mut app);
    }
    assert!(
        status(&app).contains("Softmax done: 14/64 first try · 50 revealed"),
        "{}",
        status(&app)
    );
    assert_eq!(
        app.progress
            .lesson("gqa")
            .unwrap()
            .score
            .step(Step::Softmax)
            .map(StepScore::cells),
        Some(64)
    );
    assert!(
        screen(&app).contains("This step is done: 14/64 first try · 50 revealed"),
        "{}",
        screen(&app)
    );
}

#[test]
fn a_generation_step_is_done_with_every_token_and_counts_the_token_on_screen() {
    let mut app = open("generation");
    let last = *app.tutor().unwrap().steps.last().unwrap();
    go_to(&mut app, last);
    let tokens = app.tutor().unwrap().attention.seq_len();
    app.tutor_mut().unwrap().set_token(tokens - 1);
    update(&mut app, Action::TogglePractice);
    reveal_all_on_screen(&mut app);
    assert!(
        status(&app).starts_with(&format!("Token {tokens} done:")),
        "{}",
        status(&app)
    );
    let shown = screen(&app);
    assert!(
        shown.contains(&format!("Tokens 1–{}:", tokens - 1)),
        "{shown}"
    );
    assert!(!shown.contains("This step is done"), "{shown}");
    update(&mut app, Action::PreviousToken);
    let shown = screen(&app);
    assert!(
        shown.contains(&format!("Token {}: ", tokens - 1)),
        "{shown}"
    );
    for token in 0..tokens - 1 {
        app.tutor_mut().unwrap().set_token(token);
        reveal_all_on_screen(&mut app);
    }
    assert!(
        status(&app).contains("done:") && status(&app).contains("n goes on"),
        "{}",
        status(&app)
    );
    assert!(app.progress.lesson("generation").unwrap().is_done(last));
}

#[test]
fn the_online_softmax_is_done_with_every_tile_of_every_head() {
    let mut app = open("gqa");
    go_to(&mut app, Step::OnlineSoftmax);
    update(&mut app, Action::TogglePractice);
    reveal_all_on_screen(&mut app);
    assert!(
        status(&app).starts_with("Head 1 at tile 1 done:"),
        "{}",
        status(&app)
    );
    assert!(
        status(&app).contains("Other heads and tiles:"),
        "{}",
        status(&app)
    );
    let tiles = app.tutor().unwrap().attention.tile_count();
    assert!(tiles > 1);
    for head in 0..4 {
        for tile in 0..tiles {
            let tutor = app.tutor_mut().unwrap();
            tutor.set_head(head);
            tutor.set_tile(tile);
            reveal_all_on_screen(&mut app);
        }
    }
    assert!(
        status(&app).starts_with("Online softmax done:"),
        "{}",
        status(&app)
    );
}

#[test]
fn a_k_v_groups_keys_are_predicted_once_for_the_heads_that_share_them() {
    let mut app = open("gqa");
    go_to(&mut app, Step::Projection);
    update(&mut app, Action::TogglePractice);
    reveal_all_on_screen(&mut app);
    update(&mut app, Action::NextHead);
    let hidden = app.tutor().unwrap().hidden_cells();
    assert!(
        hidden.iter().all(|cell| cell.matrix == MatrixName::Q),
        "head 2 shares head 1's keys and values, already predicted: {hidden:?}"
    );
    assert!(!hidden.is_empty());
}

// Issue 29, tried as a new user: a step with nothing to predict (All heads) does not count
// against the learner, who can reach every step.

/// Predicts (reveals) every cell of the step on screen, in every head, token and tile.
fn finish_step(app: &mut App) {
    let tutor = app.tutor().unwrap();
    let parts = if tutor.step_is_per_tile() {
        tutor.attention.tile_count()
    } else if tutor.step_is_per_token() {
        tutor.attention.seq_len()
    } else {
        1
    };
    for head in 0..tutor.attention.heads().query {
        for part in 0..parts {
            let tutor = app.tutor_mut().unwrap();
            tutor.set_head(head);
            if tutor.step_is_per_tile() {
                tutor.set_tile(part);
            } else if tutor.step_is_per_token() {
                tutor.set_token(part);
            }
            reveal_all_on_screen(app);
        }
    }
}

#[test]
fn finishing_every_step_of_gqa_is_every_step_to_practise() {
    let mut app = open("gqa");
    update(&mut app, Action::TogglePractice);
    let steps = app.tutor().unwrap().steps.len();
    for index in 0..steps {
        app.tutor_mut().unwrap().go_to_step(index);
        finish_step(&mut app);
    }
    let lesson = app.tutor().unwrap().lesson.clone();
    let to_practise = attn_tutor::app::practice_steps(&lesson);
    let progress = app.progress.lesson("gqa").unwrap();
    assert_eq!(progress.steps_done().count(), to_practise);
    assert!(
        progress
            .summary(to_practise)
            .starts_with(&format!("{to_practise}/{to_practise} steps")),
        "{}",
        progress.summary(to_practise)
    );
    assert!(!progress.is_done(Step::AllHeads));
}

/// The count's line on screen: the one that says what is left to predict.
fn count_line(app: &App) -> String {
    let shown = screen(app);
    let lines: Vec<&str> = shown
        .lines()
        .filter(|line| line.contains(" to go") || line.contains(" to predict"))
        .collect();
    assert_eq!(lines.len(), 1, "{shown}");
    lines[0].to_string()
}

// Issue 29, tried as a new user: at 80 columns the count of a step of several heads and tiles
// wrapped, once inside its "< >".
#[test]
fn the_count_of_heads_and_tiles_keeps_its_numbers_and_keys_on_one_line_at_80_columns() {
    let mut app = practising("gqa", Step::OnlineSoftmax);
    let fits = |app: &App| {
        let count = app.tutor().unwrap().practice_count();
        assert!(count.here_left > 0 && count.elsewhere_left > 0);
        let line = count_line(app);
        let here = if count.here.cells() == 0 {
            format!("{} to predict", count.here_left)
        } else {
            format!("{} to go", count.here_left)
        };
        for part in [
            here,
            format!("{} to go", count.elsewhere_left),
            "< >".to_string(),
            "( )".to_string(),
        ] {
            assert!(line.contains(&part), "{part} is not on the line:\n{line}");
        }
        line
    };
    let fresh = fits(&app);
    assert!(
        fresh.starts_with(" Head 1 at tile 1: 20 to predict"),
        "{fresh}"
    );
    // A right answer, one after a hint, one revealed and a wrong one: the part's score grows.
    answer_right_in_head(&mut app);
    update(&mut app, Action::Hint);
    answer_right_in_head(&mut app);
    for _ in 0..3 {
        update(&mut app, Action::Hint);
    }
    answer(&mut app, "123");
    fits(&app);
    // Tile 2 of head 2 counts the same way.
    update(&mut app, Action::NextHead);
    update(&mut app, Action::NextToken);
    let other = fits(&app);
    assert!(other.starts_with(" Head 2 at tile 2:"), "{other}");
}
