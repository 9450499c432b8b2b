//! Undo and redo: each edit is kept as a change that knows its before and after.

use std::sync::Arc;

use nalgebra::DMatrix;

use crate::attention::{Attention, Cell, MatrixName};
use crate::lesson::text::printable;
use crate::lesson::{InputMatrix, Lesson, Mask};

use super::Tokens;

/// How many edits can be undone; old ones are forgotten first.
const DEPTH: usize = 200;

/// Most bytes of whole matrices the undo stack keeps (a matrix shared by several changes is
/// counted each time, so it holds less). Each re-roll of a 1024 × 1024 matrix keeps 8 MB: without
/// this, 200 re-rolls would keep 1.6 GB. The newest change is always kept.
const MAX_MATRIX_BYTES: usize = 64 * 1024 * 1024;

/// Where a cell of one head's input matrix is in the lesson's own matrix (row, column): head
/// (or K/V group) h's block of columns, as the file lays the heads side by side. A matrix the
/// lesson does not cut into heads is its own.
pub(crate) fn lesson_place(attention: &Attention, cell: Cell) -> (usize, usize) {
    let heads = attention.heads();
    let per = cell.matrix.per();
    if heads.count(per) < 2 {
        return (cell.row, cell.col);
    }
    let width = attention
        .matrix_in(cell.matrix, cell.head)
        .map_or(0, DMatrix::ncols);
    (cell.row, heads.slot(per, cell.head) * width + cell.col)
}

/// The cell of a head's matrix at (row, column) of the lesson's own matrix: the reverse of
/// `lesson_place`, named by the first query head that reads it.
pub(crate) fn head_cell(attention: &Attention, matrix: MatrixName, row: usize, col: usize) -> Cell {
    let heads = attention.heads();
    let per = matrix.per();
    let width = attention.matrix_in(matrix, 0).map_or(0, DMatrix::ncols);
    if heads.count(per) < 2 || width == 0 {
        return Cell::new(matrix, row, col);
    }
    let slot = col / width;
    Cell::new(matrix, row, col % width).in_head(heads.head_of_slot(per, slot))
}

/// One reversible change to a lesson.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// One number of an input matrix, at its row and column in the lesson's own matrix (all
    /// heads side by side).
    Cell {
        matrix: MatrixName,
        row: usize,
        col: usize,
        before: f64,
        after: f64,
    },
    Label {
        tokens: Tokens,
        row: usize,
        before: String,
        after: String,
    },
    /// A whole input matrix, as a re-roll replaces it.
    Matrix {
        matrix: MatrixName,
        before: Box<InputMatrix>,
        after: Box<InputMatrix>,
    },
    /// The mask as a whole: editing a cell of a causal mask turns it into a matrix.
    Mask { before: Mask, after: Mask },
    /// The keys per tile of the online softmax (`tile`).
    Tile { before: usize, after: usize },
    /// η, the step size of `g` (`G`): the tutor's, not the lesson's, which it leaves as it is.
    LearningRate { before: f64, after: f64 },
    /// The whole lesson, as a reset replaces it; `why` names the change on undo and redo.
    /// Shared, not copied: a reset's `after` is the tutor's original, and `before` the lesson
    /// the tutor had.
    Lesson {
        before: Arc<Lesson>,
        after: Arc<Lesson>,
        why: WholeLesson,
    },
}

/// What replaced the whole lesson.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WholeLesson {
    /// `R`: back to the lesson's own numbers.
    Reset,
    /// Edited numbers set back to their generators, for a save.
    Generators,
    /// `d`: a backward pass added, with a drawn grad_output.
    Backward,
    /// `g`: a step of gradient descent.
    GradientStep,
}

impl Change {
    /// Bytes of whole matrices this change keeps.
    fn matrix_bytes(&self) -> usize {
        let matrix = |values: &DMatrix<f64>| values.len() * size_of::<f64>();
        let lesson = |lesson: &Lesson| {
            lesson
                .inputs()
                .iter()
                .map(|(_, input)| matrix(&input.values))
                .sum::<usize>()
                + mask_bytes(&lesson.mask)
        };
        match self {
            Change::Cell { .. }
            | Change::Label { .. }
            | Change::Tile { .. }
            | Change::LearningRate { .. } => 0,
            Change::Matrix { before, after, .. } => matrix(&before.values) + matrix(&after.values),
            Change::Mask { before, after } => mask_bytes(before) + mask_bytes(after),
            Change::Lesson { before, after, .. } => lesson(before) + lesson(after),
        }
    }

    /// Applies the change forwards (`redo`) or backwards (`undo`).
    /// A lesson shared with others (a follower's copy, the original, the history) is copied
    /// before a change to a part of it; a whole-lesson change only shares the new one.
    pub(crate) fn apply(&self, lesson: &mut Arc<Lesson>, forwards: bool) {
        match self {
            Change::Cell {
                matrix,
                row,
                col,
                before,
                after,
            } => set_cell(
                Arc::make_mut(lesson),
                *matrix,
                *row,
                *col,
                *pick(forwards, before, after),
            ),
            Change::Label {
                tokens,
                row,
                before,
                after,
            } => {
                let lesson = Arc::make_mut(lesson);
                let labels = match tokens {
                    Tokens::Target => &mut lesson.tokens,
                    Tokens::Source => &mut lesson.source_tokens,
                };
                if let Some(token) = labels.get_mut(*row) {
                    token.clone_from(pick(forwards, before, after));
                }
            }
            Change::Matrix {
                matrix,
                before,
                after,
            } => {
                if let Some(input) = Arc::make_mut(lesson).input_mut(*matrix) {
                    *input = (**pick(forwards, before, after)).clone();
                }
            }
            Change::Mask { before, after } => {
                Arc::make_mut(lesson).mask = pick(forwards, before, after).clone();
            }
            Change::Tile { before, after } => {
                Arc::make_mut(lesson).tile = *pick(forwards, before, after);
            }
            Change::LearningRate { .. } => {}
            Change::Lesson { before, after, .. } => {
                *lesson = Arc::clone(pick(forwards, before, after));
            }
        }
    }
}

impl Change {
    /// What the change did, named for the learner, from the state it leaves to the one it
    /// brings (`forwards` as for `apply`): undoing X[The, 1] = 2 gives "X[The, 1] = 2 → 1".
    /// `attention` names the cells by their token labels.
    pub(crate) fn describe(&self, attention: &Attention, forwards: bool) -> String {
        match self {
            Change::Cell {
                matrix,
                row,
                col,
                before,
                after,
            } => {
                let (from, to) = from_to(forwards, *before, *after);
                let name = attention.cell_name(head_cell(attention, *matrix, *row, *col));
                format!("{name} = {} → {}", number(from), number(to))
            }
            Change::Label {
                tokens,
                row,
                before,
                after,
            } => {
                let (from, to) = from_to(forwards, before, after);
                format!(
                    "{} {} = {} → {}",
                    tokens.noun(!attention.source_tokens.is_empty()),
                    row + 1,
                    printable(from),
                    printable(to)
                )
            }
            Change::Matrix {
                matrix,
                before,
                after,
            } => {
                let seed = |input: &InputMatrix| input.generator.map(|generator| generator.seed);
                match (seed(before), seed(after)) {
                    (Some(before), Some(after)) => {
                        let (from, to) = from_to(forwards, before, after);
                        format!("the re-roll of {}: seed {from} → {to}", matrix.symbol())
                    }
                    _ => format!("the change of {}", matrix.symbol()),
                }
            }
            Change::Mask { before, after } => {
                let (from, to) = from_to(forwards, before, after);
                let size = (attention.tokens.len(), attention.key_tokens().len());
                match first_difference(from, to, size) {
                    Some((row, col, was, now)) => {
                        let name = attention.cell_name(Cell::new(MatrixName::Mask, row, col));
                        format!("{name} = {} → {}", number(was), number(now))
                    }
                    None => "the change of the mask".to_string(),
                }
            }
            Change::Tile { before, after } => {
                let (from, to) = from_to(forwards, before, after);
                format!("the tile size B = {from} → {to}")
            }
            Change::LearningRate { before, after } => {
                let (from, to) = from_to(forwards, before, after);
                format!("η = {} → {}", number(*from), number(*to))
            }
            Change::Lesson { why, .. } => match why {
                WholeLesson::Reset => "the reset to the lesson's own numbers",
                WholeLesson::Generators => "the edits set back to their generators",
                WholeLesson::Backward => "the backward pass (a drawn grad_output)",
                WholeLesson::GradientStep => "the step of gradient descent",
            }
            .to_string(),
        }
    }
}

/// From the state on screen before an undo or redo, to the one after it.
fn from_to<T>(forwards: bool, before: T, after: T) -> (T, T) {
    if forwards {
        (before, after)
    } else {
        (after, before)
    }
}

/// A number as the learner typed it: 1e-7 rather than 0, -inf for a hidden key, and 1e-300
/// rather than the 300 zeros `{}` writes before its 1.
pub(crate) fn number(value: f64) -> String {
    if value == f64::NEG_INFINITY {
        "-inf".to_string()
    } else if value != 0.0 && !(1e-6..1e15).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// The first cell where two masks differ, with its value in each. A causal mask is -inf above
/// the diagonal and 0 elsewhere; `(queries, keys)` is its size.
fn first_difference(
    from: &Mask,
    to: &Mask,
    (queries, keys): (usize, usize),
) -> Option<(usize, usize, f64, f64)> {
    let value = |mask: &Mask, row: usize, col: usize| match mask {
        Mask::Matrix(values) => values.get((row, col)).copied().unwrap_or(0.0),
        Mask::Causal if col > row => f64::NEG_INFINITY,
        Mask::Causal | Mask::None => 0.0,
    };
    (0..queries)
        .flat_map(|row| (0..keys).map(move |col| (row, col)))
        .map(|(row, col)| (row, col, value(from, row, col), value(to, row, col)))
        .find(|(_, _, was, now)| was.to_bits() != now.to_bits())
}

/// The state a change leads to, or the one it came from.
fn pick<'a, T>(forwards: bool, before: &'a T, after: &'a T) -> &'a T {
    if forwards { after } else { before }
}

/// Writes one number of an input matrix or of a mask given as a matrix.
pub(crate) fn set_cell(
    lesson: &mut Lesson,
    matrix: MatrixName,
    row: usize,
    col: usize,
    value: f64,
) {
    let target: Option<&mut DMatrix<f64>> = match matrix {
        MatrixName::Mask => match &mut lesson.mask {
            Mask::Matrix(mask) => Some(mask),
            _ => None,
        },
        _ => lesson
            .input_mut(matrix)
            .map(|input| std::sync::Arc::make_mut(&mut input.values)),
    };
    if let Some(values) = target
        && row < values.nrows()
        && col < values.ncols()
    {
        values[(row, col)] = value;
    }
}

fn mask_bytes(mask: &Mask) -> usize {
    match mask {
        Mask::Matrix(values) => values.len() * size_of::<f64>(),
        _ => 0,
    }
}

/// The most bytes of whole matrices the undo and redo stacks can keep between them, when one
/// change holds at most `one_change` bytes of them: `MAX_MATRIX_BYTES` (or `DEPTH` changes, if
/// less), and the newest change, always kept.
pub fn most_kept_bytes(one_change: u64) -> u64 {
    (DEPTH as u64 * one_change).min(MAX_MATRIX_BYTES as u64) + one_change
}

/// The undo and redo stacks.
#[derive(Debug, Clone, Default)]
pub struct History {
    undo: Vec<Change>,
    redo: Vec<Change>,
}

impl History {
    /// Records a change just made; a new change forgets what could be redone.
    pub(crate) fn record(&mut self, change: Change) {
        self.redo.clear();
        self.undo.push(change);
        if self.undo.len() > DEPTH {
            self.undo.remove(0);
        }
        let mut held: usize = self.undo.iter().map(Change::matrix_bytes).sum();
        while held > MAX_MATRIX_BYTES && self.undo.len() > 1 {
            held -= self.undo.remove(0).matrix_bytes();
        }
    }

    /// How many changes can be undone.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.undo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.undo.is_empty()
    }

    pub(crate) fn undo(&mut self) -> Option<&Change> {
        let change = self.undo.pop()?;
        self.redo.push(change);
        self.redo.last()
    }

    pub(crate) fn redo(&mut self) -> Option<&Change> {
        let change = self.redo.pop()?;
        self.undo.push(change);
        self.undo.last()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A re-roll of a 1024 × 1024 matrix: two 8 MB matrices (zeros stand for the numbers).
    fn reroll(seed: u64) -> Change {
        let matrix = |fill| InputMatrix::literal(DMatrix::from_element(1024, 1024, fill));
        Change::Matrix {
            matrix: MatrixName::WQ,
            before: Box::new(matrix(seed as f64)),
            after: Box::new(matrix(seed as f64 + 1.0)),
        }
    }

    #[test]
    fn rerolls_of_a_large_matrix_keep_a_bounded_history() {
        let mut history = History::default();
        for seed in 0..10 {
            history.record(reroll(seed));
        }
        // Each keeps two 8 MB matrices: four fit in 64 MB.
        assert_eq!(history.len(), 4);
        assert!(history.undo().is_some());
    }

    #[test]
    fn small_edits_keep_the_full_depth() {
        let mut history = History::default();
        for step in 0..(DEPTH + 10) {
            history.record(Change::Cell {
                matrix: MatrixName::WQ,
                row: 0,
                col: 0,
                before: step as f64,
                after: step as f64 + 1.0,
            });
        }
        assert_eq!(history.len(), DEPTH);
    }
}
