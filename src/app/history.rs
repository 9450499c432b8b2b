//! Undo and redo: each edit is kept as a change that knows its before and after.

use nalgebra::DMatrix;

use crate::attention::MatrixName;
use crate::lesson::{InputMatrix, Lesson, Mask};

/// How many edits can be undone; old ones are forgotten first.
const DEPTH: usize = 200;

/// One reversible change to a lesson.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    Cell {
        matrix: MatrixName,
        row: usize,
        col: usize,
        before: f64,
        after: f64,
    },
    Label {
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
    /// The whole lesson, as a reset replaces it.
    Lesson {
        before: Box<Lesson>,
        after: Box<Lesson>,
    },
}

impl Change {
    /// Applies the change forwards (`redo`) or backwards (`undo`).
    pub fn apply(&self, lesson: &mut Lesson, forwards: bool) {
        match self {
            Change::Cell {
                matrix,
                row,
                col,
                before,
                after,
            } => set_cell(lesson, *matrix, *row, *col, *pick(forwards, before, after)),
            Change::Label { row, before, after } => {
                if let Some(token) = lesson.tokens.get_mut(*row) {
                    token.clone_from(pick(forwards, before, after));
                }
            }
            Change::Matrix {
                matrix,
                before,
                after,
            } => {
                if let Some(input) = lesson.input_mut(*matrix) {
                    *input = (**pick(forwards, before, after)).clone();
                }
            }
            Change::Mask { before, after } => lesson.mask = pick(forwards, before, after).clone(),
            Change::Lesson { before, after } => *lesson = (**pick(forwards, before, after)).clone(),
        }
    }
}

/// The state a change leads to, or the one it came from.
fn pick<'a, T>(forwards: bool, before: &'a T, after: &'a T) -> &'a T {
    if forwards { after } else { before }
}

/// Writes one number of an input matrix or of a mask given as a matrix.
pub fn set_cell(lesson: &mut Lesson, matrix: MatrixName, row: usize, col: usize, value: f64) {
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

/// The undo and redo stacks.
#[derive(Debug, Clone, Default)]
pub struct History {
    undo: Vec<Change>,
    redo: Vec<Change>,
}

impl History {
    /// Records a change just made; a new change forgets what could be redone.
    pub fn record(&mut self, change: Change) {
        self.redo.clear();
        self.undo.push(change);
        if self.undo.len() > DEPTH {
            self.undo.remove(0);
        }
    }

    pub fn undo(&mut self) -> Option<&Change> {
        let change = self.undo.pop()?;
        self.redo.push(change);
        self.redo.last()
    }

    pub fn redo(&mut self) -> Option<&Change> {
        let change = self.redo.pop()?;
        self.undo.push(change);
        self.undo.last()
    }
}
