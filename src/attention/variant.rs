//! The wrong ways a learner may compute an operation: each a variant the engine can run in the
//! right way's place, so practice can tell which slip gives a learner's number.

use nalgebra::DMatrix;

use super::positions::{rope_angle, sinusoid_angle};
use crate::pipeline::Op;

/// One common slip in one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// x · W row c instead of column c (only a square W fits).
    RowNotColumn,
    /// Query and key swapped: score[j][i] where score[i][j] belongs.
    Swapped,
    /// Scores not divided by √d_k.
    SkipScale,
    /// The mask left out.
    SkipMask,
    /// exp of each score, not divided by the row's sum.
    ExpOnly,
    /// exp of each score minus the row maximum, not divided by the row's sum.
    ShiftedExpOnly,
    /// Softmax down each column (over queries) instead of along the row.
    ColumnSoftmax,
    /// cos in the even columns and sin in the odd ones.
    SinCosSwapped,
    /// Positions counted from 1, not 0.
    PositionsFromOne,
    /// The column c in the exponent of 10000 where its pair i = ⌊c/2⌋ belongs.
    ExponentByColumn,
    /// Turned by −φ: the sines' signs swapped.
    RotatedBackwards,
}

impl Variant {
    /// The variants of an operation, its own slips nearest first.
    pub fn of(op: Op) -> &'static [Variant] {
        match op {
            Op::Input | Op::Given | Op::Add { .. } => &[],
            Op::Sinusoid => &[
                Variant::SinCosSwapped,
                Variant::PositionsFromOne,
                Variant::ExponentByColumn,
            ],
            Op::Product {
                transpose_right: false,
                ..
            } => &[Variant::RowNotColumn],
            Op::Product {
                transpose_right: true,
                ..
            } => &[Variant::Swapped],
            Op::Rotate { .. } => &[
                Variant::RotatedBackwards,
                Variant::SinCosSwapped,
                Variant::PositionsFromOne,
                Variant::ExponentByColumn,
            ],
            Op::Scale { .. } => &[Variant::SkipScale],
            Op::Mask { .. } => &[Variant::SkipMask],
            Op::RowSoftmax { .. } => &[
                Variant::ExpOnly,
                Variant::ShiftedExpOnly,
                Variant::ColumnSoftmax,
            ],
        }
    }

    pub fn applies_to(self, op: Op) -> bool {
        Variant::of(op).contains(&self)
    }

    /// A sinusoidal encoding made with this slip.
    pub fn sinusoidal(self, seq_len: usize, d_model: usize) -> DMatrix<f64> {
        DMatrix::from_fn(seq_len, d_model, |position, col| {
            let (position, pair) = self.position_and_pair(position, col);
            let angle = sinusoid_angle(position, pair, d_model);
            let sine = (col % 2 == 0) != (self == Variant::SinCosSwapped);
            if sine { angle.sin() } else { angle.cos() }
        })
    }

    /// Rows rotated as RoPE does, with this slip.
    pub fn rotate_rows(self, matrix: &DMatrix<f64>) -> DMatrix<f64> {
        let d_k = matrix.ncols();
        let mut rotated = matrix.clone();
        for row in 0..matrix.nrows() {
            for pair in 0..d_k / 2 {
                let (position, exponent) = self.position_and_pair(row, 2 * pair);
                let (mut sin, mut cos) = rope_angle(position, exponent, d_k).sin_cos();
                if self == Variant::RotatedBackwards {
                    sin = -sin;
                }
                if self == Variant::SinCosSwapped {
                    (sin, cos) = (cos, sin);
                }
                let (a, b) = (matrix[(row, 2 * pair)], matrix[(row, 2 * pair + 1)]);
                rotated[(row, 2 * pair)] = a * cos - b * sin;
                rotated[(row, 2 * pair + 1)] = a * sin + b * cos;
            }
        }
        rotated
    }

    /// The position and the pair index the slip puts into the angle of row `row`, column `col`.
    fn position_and_pair(self, row: usize, col: usize) -> (usize, usize) {
        let position = if self == Variant::PositionsFromOne {
            row + 1
        } else {
            row
        };
        let pair = if self == Variant::ExponentByColumn {
            col
        } else {
            col / 2
        };
        (position, pair)
    }
}
