//! A score divided by √d_k: √d_k is one number for the whole step, written alike in every
//! cell's working.

use super::hint::side_hints;
use super::landing::shown;
use super::number::{format_number, rounded, written_alike};
use super::words::{WHOLE_STEP_CELLS, digits_written, own_and_shared_digits, shared_digits};
use super::{Explanation, Labels, Operand, Words, Worked, Working};
use crate::matrices::Cell;

/// A score divided by √d_k.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub score: Operand,
    pub d_k: usize,
    pub divisor: f64,
}

impl Working for Scale {
    fn operands(&self) -> Vec<Cell> {
        vec![self.score.cell]
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        Some(self.score.cell)
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let Scale {
            score,
            d_k,
            divisor,
        } = *self;
        let decimals = worked.decimals;
        // √d_k is one number for the whole step: every cell writes it with the same decimals,
        // and its score with as many as it needs.
        let quotient_lands = |value: f64, shared: usize, own: usize| {
            written_alike(
                shown(value, own) / shown(divisor, shared),
                value / divisor,
                decimals,
            )
        };
        let step_scores: Vec<f64> = labels
            .matrix_at(score.cell.matrix, score.cell.head, score.cell.token)
            .map(|scores| {
                let rows = if scores.len() > WHOLE_STEP_CELLS && score.cell.row < scores.nrows() {
                    score.cell.row..score.cell.row + 1
                } else {
                    0..scores.nrows()
                };
                rows.flat_map(|row| scores.row(row).iter().copied().collect::<Vec<_>>())
                    .filter(|value| value.is_finite())
                    .collect()
            })
            .unwrap_or_default();
        // The step's decimals are chosen with the fast estimate of each written number (a
        // step has up to WHOLE_STEP_CELLS of them); this cell's are checked as written.
        let roughly_lands = |value: f64, shared: usize, own: usize| {
            rounded(rounded(value, own) / rounded(divisor, shared), decimals)
                == rounded(value / divisor, decimals)
        };
        let shared = shared_digits(decimals, step_scores.len(), |cell, shared, own| {
            roughly_lands(step_scores[cell], shared, own)
        });
        let found = own_and_shared_digits(decimals, shared, |shared, own| {
            quotient_lands(score.value, shared, own)
        });
        let ((own, shared), result) = digits_written(found, decimals, &worked.result);
        Words::worked(
            vec![
                vec![format!("{} / √d_k", labels.cell_name(score.cell))],
                vec![format!("{} / √{d_k}", format_number(score.value, own))],
                vec![format!(
                    "{} / {}",
                    format_number(score.value, own),
                    format_number(divisor, shared)
                )],
                vec![result],
            ],
            None,
        )
    }

    fn redone_from_shown(&self, decimals: usize) -> Option<f64> {
        Some(shown(self.score.value, decimals) / self.divisor)
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        side_hints(explanation, None)
    }
}
