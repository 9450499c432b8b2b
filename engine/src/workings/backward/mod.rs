//! The backward pass's working, cell by cell: how each gradient comes from the gradient after
//! it and the forward pass's numbers (a column dot product, a sum over heads, the softmax's
//! backward, a head's block, a group's sum, a rotation turned back), one kind per module.

mod block;
mod column_dot;
mod heads_dot;
mod rotate_back;
mod softmax_backward;
mod sum;

pub use block::Block;
pub use column_dot::ColumnDot;
pub use heads_dot::HeadsDot;
pub use rotate_back::RotateBack;
pub use softmax_backward::SoftmaxBackward;
pub use sum::{Sum, Summed};

use super::Operand;
use super::landing::shown;
use super::number::format_number;
use super::workings;
use crate::matrices::Cell;

workings! {
    /// One gradient cell, with what it is made from.
    BackwardRule {
        /// leftᵀ · right: column `row` of left dotted with column `col` of right (Xᵀ·dQ).
        ColumnDot(ColumnDot),
        /// Σ over heads (or K/V groups) of left_h[row, :] · right_h[col, :].
        HeadsDot(HeadsDot),
        /// dS[i, j] = P[i, j] · (dP[i, j] − Σ_k P[i, k]·dP[i, k]).
        SoftmaxBackward(SoftmaxBackward),
        /// The sum of a group's heads' gradients, or of the three paths back to X.
        Sum(Sum),
        /// A head's number taken from its block of every head's gradient (d_concat's).
        Block(Block),
        /// One cell of a pair turned back by −φ: the rotation's transpose.
        RotateBack(RotateBack),
    }
}

/// Where `e` goes from a gradient: the first operand that is itself a gradient, else the
/// first.
fn gradient_first(operands: &[Cell]) -> Option<Cell> {
    operands
        .iter()
        .find(|cell| cell.matrix.backward())
        .or(operands.first())
        .copied()
}

/// Each term written `(a × b)` at `d` decimals.
fn products(terms: &[(Operand, Operand)], d: usize) -> Vec<String> {
    terms
        .iter()
        .map(|(a, b)| {
            format!(
                "({} × {})",
                format_number(a.value, d),
                format_number(b.value, d)
            )
        })
        .collect()
}

/// The terms' sum as written at `d` decimals.
fn dot(terms: &[(Operand, Operand)], d: usize) -> f64 {
    terms
        .iter()
        .map(|(a, b)| shown(a.value, d) * shown(b.value, d))
        .sum()
}
