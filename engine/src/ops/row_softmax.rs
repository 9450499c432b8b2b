//! The softmax of each row: e^(s − max) over the row's sum, so each row's weights sum to 1.

use nalgebra::DMatrix;
use std::sync::Arc;

use super::Operation;
use super::kernels::{shifted_exp, shifted_exps, softmax_rows};
use super::{Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings;

/// Softmax of each row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowSoftmax {
    pub of: MatrixName,
}

impl Operation for RowSoftmax {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.of]
    }

    fn formula(&self, _: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some("softmax(rows)".to_string())
    }

    fn slips(&self) -> &'static [Variant] {
        match self.of {
            // One row over the cache: a column softmax of one row is no slip anyone makes.
            MatrixName::DecodeScores | MatrixName::DecodeScaled => &[
                Variant::FutureToken,
                Variant::EveryToken,
                Variant::ExpOnly,
                Variant::ShiftedExpOnly,
                Variant::AveragedHeads,
            ],
            _ => &[
                Variant::ExpOnly,
                Variant::ShiftedExpOnly,
                Variant::ColumnSoftmax,
                Variant::AveragedHeads,
            ],
        }
    }

    fn evaluate(&self, operands: &Operands, slip: Option<Variant>) -> DMatrix<f64> {
        let of = operands.get(self.of);
        match slip {
            Some(Variant::FutureToken) => future_token_weights(operands, of.ncols(), 1),
            Some(Variant::EveryToken) => future_token_weights(operands, of.ncols(), usize::MAX),
            Some(Variant::ExpOnly) => of.map(f64::exp),
            Some(Variant::ShiftedExpOnly) => shifted_exps(of),
            Some(Variant::ColumnSoftmax) => softmax_rows(&of.transpose()).weights.transpose(),
            Some(Variant::AveragedHeads) => {
                let every = operands.every_head(self.of);
                let mut sum = DMatrix::zeros(of.nrows(), of.ncols());
                for input in &every {
                    if input.shape() == sum.shape() {
                        sum += &*softmax_rows(input).weights;
                    }
                }
                sum / every.len().max(1) as f64
            }
            _ => Arc::unwrap_or_clone(softmax_rows(of).weights),
        }
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let cell = site.cell;
        let (row, col, head, token) = (cell.row, cell.col, cell.head, cell.token);
        let input = site.cells.matrix_at(self.of, head, token)?;
        let width = input.ncols();
        let row_operands = (0..width)
            .map(|col| site.operand(self.of, row, col))
            .collect::<Option<Vec<_>>>()?;
        // A step of generation's one row is worked out here; the whole pass keeps its working.
        let own;
        let softmax = if cell.matrix.per_token() {
            own = softmax_rows(&input.into_owned());
            &own
        } else {
            site.cells.softmax_of(head)?
        };
        Some(if *softmax.fully_masked.get(row)? {
            Rule::FullyMasked(workings::FullyMasked { row: row_operands })
        } else {
            let row_max = softmax.row_max[row];
            Rule::Softmax(workings::Softmax {
                shifted_exps: row_operands
                    .iter()
                    .map(|operand| shifted_exp(operand.value, row_max))
                    .collect(),
                row: row_operands,
                selected: col,
                row_max,
                shifted_sum: softmax.shifted_sums[row],
            })
        })
    }
}

/// A step of generation's weights as a learner who lets the new token look `ahead` tokens
/// further than the cache makes them (one, or every one left): the softmax over the cache and
/// those tokens' keys (the whole pass's unmasked scores), of which the cache's `keys` are kept.
/// No matrix for the last token, which has nothing ahead.
fn future_token_weights(operands: &Operands, keys: usize, ahead: usize) -> DMatrix<f64> {
    let unmasked = if operands.matrices[MatrixName::Scaled.index()].is_empty() {
        MatrixName::Scores
    } else {
        MatrixName::Scaled
    };
    let scores = operands.get(unmasked);
    let token = operands.position();
    if token + 1 >= scores.nrows() || keys + 1 > scores.ncols() {
        return DMatrix::zeros(0, 0);
    }
    let seen = (keys + ahead.min(scores.ncols() - keys)).min(scores.ncols());
    let row = scores.view((token, 0), (1, seen)).into_owned();
    softmax_rows(&row).weights.columns(0, keys).into_owned()
}
