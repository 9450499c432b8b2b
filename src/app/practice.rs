//! Practice mode in the tutor: the cells a step computes stay hidden ("?") until the learner
//! predicts them, asks for hints up to the answer, or answers wrong and is shown the working.
//! The checking, hints and scores themselves are `crate::practice`; this is the state on screen.

use std::collections::HashMap;

use crate::attention::number::format_number;
use crate::attention::{Cell, MatrixName, Step};
use crate::practice::{CellAttempt, HintLevel, LessonScore, StepScore, Verdict};

use super::Status;
use super::screens;
use super::tutor::Tutor;

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
}

/// A learner's answer and what it was.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Feedback {
    pub cell: Cell,
    pub answer: f64,
    pub verdict: Verdict,
}

impl Practice {
    pub fn attempt(&self, cell: Cell) -> Option<&CellAttempt> {
        self.attempts.get(&cell)
    }

    pub fn attempt_mut(&mut self, cell: Cell) -> &mut CellAttempt {
        self.attempts.entry(cell).or_default()
    }

    /// Whether the cell has been answered right, revealed or shown after a wrong answer.
    pub fn is_done(&self, cell: Cell) -> bool {
        self.attempts
            .get(&cell)
            .is_some_and(|attempt| attempt.outcome().is_some())
    }

    /// How the done cells of `matrix` ended, counted.
    pub fn score_of(&self, matrix: MatrixName) -> StepScore {
        self.attempts
            .iter()
            .filter(|(cell, _)| cell.matrix == matrix)
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
    /// The matrix the learner predicts on this step: the one it computes. Steps that only show
    /// given numbers (the embeddings, Q/K/V given directly) have none.
    pub fn practice_target(&self) -> Option<MatrixName> {
        self.practice_target_on(self.step())
    }

    /// `practice_target` for any step of the lesson.
    pub fn practice_target_on(&self, step: Step) -> Option<MatrixName> {
        let target = screens::result(step, &self.attention, self.projection);
        let computed = !self.is_editable(target) && target != MatrixName::Mask;
        (step != Step::Embedding && computed).then_some(target)
    }

    /// Whether a cell is hidden from the learner, waiting for their prediction.
    pub fn is_hidden(&self, cell: Cell) -> bool {
        self.practice.as_ref().is_some_and(|practice| {
            self.practice_target() == Some(cell.matrix) && !practice.is_done(cell)
        })
    }

    /// The cells of the target still hidden, in reading order.
    pub fn hidden_cells(&self) -> Vec<Cell> {
        let Some(target) = self.practice_target() else {
            return Vec::new();
        };
        let Some(values) = self.attention.matrix(target) else {
            return Vec::new();
        };
        (0..values.nrows())
            .flat_map(|row| (0..values.ncols()).map(move |col| Cell::new(target, row, col)))
            .filter(|cell| self.is_hidden(*cell))
            .collect()
    }

    /// The hint level shown for a cell so far.
    pub fn hint_level(&self, cell: Cell) -> Option<HintLevel> {
        self.practice
            .as_ref()
            .and_then(|practice| practice.attempt(cell))
            .and_then(CellAttempt::hint_level)
    }
}

/// `x`: practice on (the step's results hidden) or off (everything shown again).
pub fn toggle(tutor: &mut Tutor) -> Status {
    if let Some(practice) = tutor.practice.take() {
        let total = practice.done.total();
        return Status::info(if total.cells() == 0 {
            "Practice off: every number is shown again".to_string()
        } else {
            format!("Practice off. This lesson so far: {total}")
        });
    }
    tutor.practice = Some(Practice::default());
    match tutor.practice_target() {
        Some(target) => {
            tutor.focus_on(target);
            Status::info(format!(
                "Practice: predict each hidden cell of {}. Type your answer · t hint · x stop",
                target.symbol()
            ))
        }
        None => Status::info("Practice: nothing to predict on this step; n goes on · x stops"),
    }
}

/// `t`: the next hint for the hidden cell under the cursor; the third is the answer.
pub fn hint(tutor: &mut Tutor) -> Status {
    let Some(cell) = tutor.selected_cell().filter(|cell| tutor.is_hidden(*cell)) else {
        // On a cell already done, the hint key goes to the next one to do.
        let hidden = tutor.hidden_cells();
        return match (tutor.selected_cell(), hidden.first()) {
            (Some(cell), Some(_)) if tutor.practice_target() == Some(cell.matrix) => {
                to_next_hidden(tutor, cell);
                Status::info("On to the next ?: t again for a hint")
            }
            (_, Some(first)) => {
                let first = *first;
                tutor.focus_on(first.matrix);
                to_next_hidden(tutor, Cell::new(first.matrix, 0, 0));
                Status::info("On to the first ?: t again for a hint")
            }
            (_, None) => Status::info("Nothing left to predict on this step: n goes on"),
        };
    };
    let level = HintLevel::next(tutor.hint_level(cell));
    let name = tutor.attention.cell_name(cell);
    let Some(practice) = tutor.practice.as_mut() else {
        return Status::info("x starts practice");
    };
    practice.feedback = None;
    let revealed = practice.attempt_mut(cell).hint(level).is_some();
    if revealed {
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
/// their number beside the exact one, naming the slip when it is a common one.
pub fn answer(tutor: &mut Tutor, cell: Cell, typed: &str) -> Result<Status, String> {
    let value = answer_value(typed)?;
    let decimals = tutor.lesson.decimals;
    let verdict = crate::practice::check(&tutor.attention, cell, value, decimals)
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
        answer: value,
        verdict,
    });
    let exact = format_number(verdict.exact(), decimals);
    let said = match verdict {
        Verdict::Right { .. } => format!("Right: {name} = {exact}"),
        Verdict::Wrong { slip, .. } => {
            let why = slip.map_or(String::new(), |slip| format!(" {}", slip.describe()));
            format!(
                "Not quite: {name} = {exact}, you said {typed}.{why}",
                typed = typed.trim()
            )
        }
    };
    Ok(step_finished(tutor).unwrap_or_else(|| Status::info(said)))
}

/// When the last hidden cell of the step is done: its score, kept with the lesson's.
fn step_finished(tutor: &mut Tutor) -> Option<Status> {
    let target = tutor.practice_target()?;
    if !tutor.hidden_cells().is_empty() {
        // Moving on to the next hidden cell saves the learner a key.
        return None;
    }
    let step = tutor.step();
    let practice = tutor.practice.as_mut()?;
    let score = practice.score_of(target);
    practice.done.record(step, score);
    practice.just_finished = Some((step, score));
    Some(Status::info(format!(
        "{} done: {score}. n goes on to the next step",
        step.title()
    )))
}

/// Moves the cursor to the next hidden cell after the one just done, if any.
pub fn to_next_hidden(tutor: &mut Tutor, after: Cell) {
    let hidden = tutor.hidden_cells();
    let next = hidden
        .iter()
        .find(|cell| (cell.row, cell.col) > (after.row, after.col))
        .or(hidden.first());
    if let Some(next) = next {
        tutor.set_cursor(
            next.matrix,
            super::tutor::Cursor {
                row: next.row,
                col: next.col,
                on_label: false,
            },
        );
    }
}

/// A typed prediction: a number, or −∞ for a masked cell.
fn answer_value(typed: &str) -> Result<f64, String> {
    let text = typed.trim().replace('−', "-");
    match text.as_str() {
        "" => Err("type a number, or press Esc".to_string()),
        "-inf" | "-∞" | "-infinity" => Ok(f64::NEG_INFINITY),
        _ => text
            .parse::<f64>()
            .ok()
            .filter(|value| value.is_finite())
            .ok_or_else(|| format!("“{}” is not a number (like 0.25 or -1.5)", typed.trim())),
    }
}
