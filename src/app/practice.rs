//! Practice mode in the tutor: the cells a step computes stay hidden ("?") until the learner
//! predicts them, asks for hints up to the answer, or answers wrong and is shown the working.
//! The checking, hints and scores themselves are `crate::practice`; this is the state on screen.

use std::collections::HashMap;

use crate::attention::number::format_number;
use crate::attention::{Cell, MatrixName, Step};
use crate::practice::{Answer, CellAttempt, HintLevel, LessonScore, StepScore, Verdict};

use super::screens;
use super::tutor::Tutor;
use super::{Status, Tokens};
use crate::lesson::text::printable;

/// The learner's practice in the lesson on screen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Practice {
    /// Every cell worked on, with how it went.
    attempts: HashMap<Cell, CellAttempt>,
    /// The last answer and its verdict, shown until the cursor moves on.
    pub feedback: Option<Feedback>,
    /// Steps whose every cell is done, with their scores.
    pub done: LessonScore,
    /// A step just finished, for the caller to keep in the learner's progress.
    pub just_finished: Option<(Step, StepScore)>,
    /// Only the lesson's focus row is hidden (`X`): a 6 × 6 step is 36 cells to predict, and
    /// one row of it teaches the same arithmetic.
    pub focus_row_only: bool,
}

/// How the last cell done was done: the learner's answer and its verdict, or the third hint.
/// Shown (with the cell's working) until the next answer or hint, also once the cursor has
/// moved on to the next `?`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Feedback {
    pub cell: Cell,
    /// The number the learner typed and its verdict; `None` when the third hint showed it.
    pub said: Option<(f64, Verdict)>,
}

impl Practice {
    pub fn attempt(&self, cell: Cell) -> Option<&CellAttempt> {
        self.attempts.get(&cell)
    }

    pub(crate) fn attempt_mut(&mut self, cell: Cell) -> &mut CellAttempt {
        self.attempts.entry(cell).or_default()
    }

    /// Whether the cell has been answered right, revealed or shown after a wrong answer.
    pub(crate) fn is_done(&self, cell: Cell) -> bool {
        self.attempts
            .get(&cell)
            .is_some_and(|attempt| attempt.outcome().is_some())
    }

    /// How the done cells of `matrices` (a step's targets) ended, counted together.
    pub(crate) fn score_of(&self, matrices: &[MatrixName]) -> StepScore {
        self.attempts
            .iter()
            .filter(|(cell, _)| matrices.contains(&cell.matrix))
            .filter_map(|(_, attempt)| attempt.outcome())
            .collect()
    }
}

/// How many steps of a lesson have results to predict: every step but the first, which shows
/// given numbers (the embeddings, or Q, K and V given directly).
pub fn practice_steps(lesson: &crate::lesson::Lesson) -> usize {
    screens::steps(lesson).len().saturating_sub(1)
}

impl Tutor {
    /// The matrices the learner predicts on this step: the ones it computes. The Projection step
    /// of a lesson with embeddings computes Q, K and V, and is done only with all three. Steps
    /// that only show given numbers (the embeddings, Q/K/V given directly) have none.
    pub fn practice_targets(&self) -> Vec<MatrixName> {
        self.practice_targets_on(self.step())
    }

    /// `practice_targets` for any step of the lesson.
    pub fn practice_targets_on(&self, step: Step) -> Vec<MatrixName> {
        screens::computed_on(step, &self.attention, &self.steps)
    }

    /// The target the learner is at: the matrix under the cursor when it is one, else the first
    /// with a `?` left, else the step's first.
    pub(crate) fn practice_target(&self) -> Option<MatrixName> {
        let targets = self.practice_targets();
        if targets.contains(&self.focus) {
            return Some(self.focus);
        }
        self.hidden_cells()
            .first()
            .map(|cell| cell.matrix)
            .or(targets.first().copied())
    }

    /// The row practice hides alone with `X`: the lesson's focus row, as `show` explains it.
    pub fn focus_row(&self) -> usize {
        self.lesson
            .focus
            .unwrap_or(0)
            .min(self.lesson.tokens.len().saturating_sub(1))
    }

    /// Whether a step has anything to predict.
    pub(crate) fn has_practice_on(&self, step: Step) -> bool {
        !self.practice_targets_on(step).is_empty()
    }

    /// Whether a cell is hidden from the learner, waiting for their prediction.
    pub fn is_hidden(&self, cell: Cell) -> bool {
        self.practice.as_ref().is_some_and(|practice| {
            self.practice_targets().contains(&cell.matrix)
                && !practice.is_done(cell)
                // A cache's earlier rows were the new rows of earlier tokens' steps: only the
                // row this step adds is predicted.
                && (!matches!(cell.matrix, MatrixName::KCache | MatrixName::VCache)
                    || cell.row == self.token)
                && (!practice.focus_row_only
                    || cell.row == self.focus_row()
                    // A generation step is one token's already: its one row, and the cache's
                    // new row, are what `X` leaves to predict.
                    || cell.matrix.entry().rows == crate::pipeline::Axis::NewToken
                    || matches!(cell.matrix, MatrixName::KCache | MatrixName::VCache)
                    // The focus is a target token, and its row of scores needs every key: in
                    // cross-attention the source's rows stay hidden whole.
                    || Tokens::of_rows(&self.lesson, cell.matrix) == Some(Tokens::Source))
        })
    }

    /// The cells of the step's targets still hidden, target by target in reading order.
    pub fn hidden_cells(&self) -> Vec<Cell> {
        if self.practice.is_none() {
            return Vec::new();
        }
        self.practice_targets()
            .into_iter()
            .filter_map(|target| Some((target, self.values(target)?.shape())))
            .flat_map(|(target, (rows, cols))| {
                (0..rows).flat_map(move |row| (0..cols).map(move |col| self.cell(target, row, col)))
            })
            .filter(|cell| self.is_hidden(*cell))
            .collect()
    }

    /// How the step's done cells ended, all its targets together.
    pub(crate) fn step_score(&self) -> StepScore {
        self.practice
            .as_ref()
            .map_or_else(StepScore::default, |practice| {
                practice.score_of(&self.practice_targets())
            })
    }

    /// The hint level shown for a cell so far.
    pub(crate) fn hint_level(&self, cell: Cell) -> Option<HintLevel> {
        self.practice
            .as_ref()
            .and_then(|practice| practice.attempt(cell))
            .and_then(CellAttempt::hint_level)
    }
}

/// `x`: practice on (the step's results hidden) or off (everything shown again).
pub(crate) fn toggle(tutor: &mut Tutor) -> Status {
    if let Some(practice) = tutor.practice.take() {
        let total = practice.done.total();
        return Status::info(if total.cells() == 0 {
            "Practice off: every number is shown again".to_string()
        } else {
            format!("Practice off. This lesson so far: {total}")
        });
    }
    tutor.practice = Some(Practice::default());
    let targets = tutor.practice_targets();
    // On a later target than the step's first, the cursor goes to the first's first hidden
    // cell: the later one's operands (weights_t's scores) would be hidden behind ? too.
    if let Some(first) = tutor.hidden_cells().first().copied()
        && targets.contains(&tutor.focus)
        && first.matrix != tutor.focus
    {
        go_to_cell(tutor, first);
    }
    match tutor.practice_target() {
        Some(target) => {
            tutor.focus_on(target);
            Status::info(format!(
                "Practice: predict each hidden cell of {}. Type your answer · t hint · x stop",
                symbols(tutor, &targets)
            ))
        }
        None => Status::info("Practice: nothing to predict on this step; n goes on · x stops"),
    }
}

/// `X`: while practising, hide only the focus row of each step, or the whole step again.
pub(crate) fn toggle_row(tutor: &mut Tutor) -> Status {
    let row = tutor.focus_row();
    let label = printable(&tutor.lesson.tokens[row]);
    let Some(practice) = tutor.practice.as_mut() else {
        return Status::error("X chooses what practice hides: x starts practice first");
    };
    practice.focus_row_only = !practice.focus_row_only;
    let only = practice.focus_row_only;
    if let Some(first) = tutor.hidden_cells().first().copied() {
        go_to_cell(tutor, first);
    }
    Status::info(if only {
        format!("Practice: only the row of {label} is hidden on each step · X: the whole step")
    } else {
        "Practice: the whole step is hidden again · X: only the focus row".to_string()
    })
}

/// "Q", "Q and K", "Q, K and V", each as the screen names it: in the head on screen
/// (`head⁽²⁾`, `scores⁽²⁾`) when the lesson has several.
pub fn symbols(tutor: &Tutor, matrices: &[MatrixName]) -> String {
    let names: Vec<String> = matrices
        .iter()
        .map(|matrix| tutor.attention.symbol_in(*matrix, tutor.head))
        .collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// `t`: the next hint for the hidden cell under the cursor; the third is the answer, and the
/// cursor goes on to the next `?` as after an answer.
pub(crate) fn hint(tutor: &mut Tutor) -> Status {
    if tutor.practice.is_none() {
        return Status::info("t gives a hint for a hidden ? in practice: x starts practice");
    }
    let Some(cell) = tutor.selected_cell().filter(|cell| tutor.is_hidden(*cell)) else {
        // On a cell already done, the hint key goes to the next one to do.
        let hidden = tutor.hidden_cells();
        return match (tutor.selected_cell(), hidden.first()) {
            (Some(cell), Some(_)) if tutor.practice_targets().contains(&cell.matrix) => {
                to_next_hidden(tutor, cell);
                Status::info("On to the next ?: t again for a hint")
            }
            (_, Some(first)) => {
                go_to_cell(tutor, *first);
                Status::info("On to the first ?: t again for a hint")
            }
            (_, None) => Status::info("Nothing left to predict on this step: n goes on"),
        };
    };
    let level = HintLevel::next(tutor.hint_level(cell));
    let name = tutor.attention.cell_name(cell);
    let Some(practice) = tutor.practice.as_mut() else {
        return Status::info("t gives a hint for a hidden ? in practice: x starts practice");
    };
    practice.feedback = None;
    let revealed = practice.attempt_mut(cell).hint(level).is_some();
    if revealed {
        practice.feedback = Some(Feedback { cell, said: None });
        to_next_hidden(tutor, cell);
        step_finished(tutor).unwrap_or_else(|| Status::info(format!("{name}: here is the answer")))
    } else {
        Status::info(format!(
            "Hint {} of 3 for {name}; t again for {}",
            level.number(),
            if level == HintLevel::FirstStep {
                "every term"
            } else {
                "the answer"
            }
        ))
    }
}

/// The learner's answer for a hidden cell: right reveals it; wrong shows the working with
/// their number beside the exact one, naming the slip when it is a common one. Either way the
/// cell is done and the cursor goes on to the next `?`; the verdict and the working stay in the
/// practice panel until the next answer or hint.
pub(crate) fn answer(tutor: &mut Tutor, cell: Cell, typed: &str) -> Result<Status, String> {
    let answer = Answer::parse(typed)?;
    let decimals = tutor.lesson.decimals;
    let verdict = crate::practice::check_answer(&tutor.attention, cell, &answer, decimals)
        .ok_or_else(|| "this cell is not part of the lesson".to_string())?;
    let name = tutor.attention.cell_name(cell);
    let Some(practice) = tutor.practice.as_mut() else {
        return Err("practice is off; x starts it".to_string());
    };
    let attempt = practice.attempt_mut(cell);
    attempt.answer(&verdict);
    if !verdict.is_right() {
        // The working is shown, so the cell counts as revealed.
        attempt.reveal();
    }
    practice.feedback = Some(Feedback {
        cell,
        said: Some((answer.value, verdict)),
    });
    let exact = format_number(verdict.exact(), decimals);
    let said = match verdict {
        Verdict::Right {
            to_decimals: Some(typed_decimals),
            ..
        } => format!("Right to {typed_decimals} decimals: {name} = {exact}"),
        Verdict::Right { .. } => format!("Right: {name} = {exact}"),
        Verdict::Wrong { slip, .. } => {
            let why = slip.map_or(String::new(), |slip| format!(" {}", slip.describe()));
            format!(
                "Not quite: {name} = {exact}, you said {typed}.{why}",
                typed = typed.trim()
            )
        }
    };
    to_next_hidden(tutor, cell);
    Ok(step_finished(tutor).unwrap_or_else(|| Status::info(said)))
}

/// When the last hidden cell of the step is done: its score, every target's cells together,
/// kept with the lesson's.
fn step_finished(tutor: &mut Tutor) -> Option<Status> {
    if tutor.practice_targets().is_empty() || !tutor.hidden_cells().is_empty() {
        return None;
    }
    let step = tutor.step();
    let score = tutor.step_score();
    let practice = tutor.practice.as_mut()?;
    practice.done.record(step, score);
    practice.just_finished = Some((step, score));
    Some(Status::info(format!(
        "{} done: {score}. n goes on to the next step",
        step.title()
    )))
}

/// Moves the cursor to the next hidden cell after `after` in its matrix (in reading order), or
/// else to the first hidden cell of the step, target by target: a matrix is finished before the
/// next, so X = E + P is not asked while a cell of P it needs is still hidden. The Projection
/// screen turns to its projection.
pub(crate) fn to_next_hidden(tutor: &mut Tutor, after: Cell) {
    let hidden = tutor.hidden_cells();
    let next = hidden
        .iter()
        .find(|cell| cell.matrix == after.matrix && (cell.row, cell.col) > (after.row, after.col))
        .or(hidden.first())
        .copied();
    if let Some(next) = next {
        go_to_cell(tutor, next);
    }
}

/// Puts the cursor on `cell` of a matrix on this step's screen.
fn go_to_cell(tutor: &mut Tutor, cell: Cell) {
    if tutor.focus != cell.matrix {
        tutor.focus_on(cell.matrix);
    }
    tutor.set_cursor(
        cell.matrix,
        super::tutor::Cursor {
            row: cell.row,
            col: cell.col,
            on_label: false,
        },
    );
}
