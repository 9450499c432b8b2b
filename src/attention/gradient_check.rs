//! The backward pass against central finite differences: each input cell nudged by ±h, the
//! loss computed again, (L(+h) − L(−h)) / 2h compared with the gradient the engine worked out.
//! `check` runs it on every lesson with a backward pass.

use std::sync::Arc;

use super::{Attention, Cell, MatrixName};
use crate::lesson::Lesson;

/// More input cells than this are checked a sample of, spread evenly over each matrix: every
/// cell costs two passes.
pub const CHECKED_CELLS: usize = 400;

/// The largest relative difference (to the larger of 1 and the difference quotient) taken as
/// agreement.
pub const AGREEMENT: f64 = 1e-6;

/// How the gradients compared.
#[derive(Debug, Clone, PartialEq)]
pub struct GradientCheck {
    /// Input cells checked, of how many.
    pub checked: usize,
    pub cells: usize,
    /// The largest relative difference, and the gradient cell it was in.
    pub worst: f64,
    pub worst_at: String,
}

impl GradientCheck {
    pub fn agrees(&self) -> bool {
        self.worst <= AGREEMENT
    }
}

/// The inputs whose gradients the backward pass works out, and the gradient matrix of each.
fn inputs(lesson: &Lesson, attention: &Attention) -> Vec<MatrixName> {
    let candidates = [
        MatrixName::Embeddings,
        MatrixName::SourceEmbeddings,
        MatrixName::Positions,
        MatrixName::WQ,
        MatrixName::WK,
        MatrixName::WV,
        MatrixName::WO,
        MatrixName::Q,
        MatrixName::K,
        MatrixName::V,
    ];
    candidates
        .into_iter()
        .filter(|name| {
            lesson.input(*name).is_some() && gradient_cell(attention, lesson, *name, 0, 0).is_some()
        })
        .collect()
}

/// The cell of the gradient that input cell (row, col) has: the head's or group's block for a
/// matrix of every head side by side.
fn gradient_cell(
    attention: &Attention,
    lesson: &Lesson,
    input: MatrixName,
    row: usize,
    col: usize,
) -> Option<Cell> {
    let heads = lesson.heads;
    let (d_k, d_v) = (lesson.d_k().max(1), lesson.d_v().max(1));
    let grouped = attention.has(MatrixName::DKGroup);
    // A block of every head's (or group's) columns: the head whose matrix the column is in.
    let block = |gradient: MatrixName, width: usize| {
        Cell::new(gradient, row, col % width)
            .in_head(heads.head_of_slot(gradient.per(), col / width))
    };
    let cell = match input {
        MatrixName::WQ => block(MatrixName::DWQ, d_k),
        MatrixName::WK => block(MatrixName::DWK, d_k),
        MatrixName::WV => block(MatrixName::DWV, d_v),
        MatrixName::WO => Cell::new(MatrixName::DWO, row, col),
        // X = E + P: both have X's gradient.
        MatrixName::Embeddings | MatrixName::Positions if lesson.is_cross() => {
            Cell::new(MatrixName::DXQ, row, col)
        }
        MatrixName::Embeddings | MatrixName::Positions => Cell::new(MatrixName::DX, row, col),
        MatrixName::SourceEmbeddings => Cell::new(MatrixName::DSource, row, col),
        MatrixName::Q => block(MatrixName::DQ, d_k),
        MatrixName::K if grouped => block(MatrixName::DKGroup, d_k),
        MatrixName::K => block(MatrixName::DK, d_k),
        MatrixName::V if grouped => block(MatrixName::DVGroup, d_v),
        MatrixName::V => block(MatrixName::DV, d_v),
        _ => return None,
    };
    attention.value(cell).map(|_| cell)
}

/// Compares the gradients of a lesson with a backward pass with central finite differences;
/// `None` without one.
pub fn check_gradients(lesson: &Lesson) -> Option<GradientCheck> {
    // Without a backward pass there is nothing to check: a second engine beside the caller's
    // would double what `check` holds (35 MB of a 16-head lesson's matrices).
    if !lesson.shape().backward {
        return None;
    }
    let attention = Attention::compute(lesson);
    attention.loss()?;
    let names = inputs(lesson, &attention);
    let cells: Vec<(MatrixName, usize, usize)> = names
        .iter()
        .flat_map(|name| {
            let shape = lesson
                .input(*name)
                .map_or((0, 0), |input| input.values.shape());
            (0..shape.0).flat_map(move |row| (0..shape.1).map(move |col| (*name, row, col)))
        })
        .collect();
    let stride = cells.len().div_ceil(CHECKED_CELLS).max(1);
    let mut check = GradientCheck {
        checked: 0,
        cells: cells.len(),
        worst: 0.0,
        worst_at: String::new(),
    };
    for &(name, row, col) in cells.iter().step_by(stride) {
        let gradient = gradient_cell(&attention, lesson, name, row, col)?;
        let engine = attention.value(gradient)?;
        let value = lesson.input(name)?.values[(row, col)];
        let h = 1e-5 * value.abs().max(1.0);
        let loss_at = |delta: f64| -> Option<f64> {
            let mut nudged = lesson.clone();
            let input = nudged.input_mut(name)?;
            Arc::make_mut(&mut input.values)[(row, col)] = value + delta;
            Attention::compute(&nudged).loss()
        };
        let numeric = (loss_at(h)? - loss_at(-h)?) / (2.0 * h);
        let difference = (engine - numeric).abs() / numeric.abs().max(1.0);
        // A NaN is the worst there is.
        if difference.is_nan() || difference > check.worst {
            check.worst = if difference.is_nan() {
                f64::INFINITY
            } else {
                difference
            };
            check.worst_at = attention.cell_name(gradient);
        }
        check.checked += 1;
    }
    Some(check)
}
