//! One weight of a row softmax: exp of its score over the row's Σ exp, written in the shifted
//! (stable) form, exp(x − max), only when the plain one would overflow.

use super::hint::side_hints;
use super::landing::{landing_digits, shown, written};
use super::number::{format_magnitude, format_number, magnitude_rounded, rounded};
use super::words::{digits_written, exponent_digits, own_and_shared_digits, shared_digits};
use super::{Explanation, Labels, Operand, Words, Worked, Working};
use crate::matrices::Cell;

/// exp of one score over the sum of the exps of its row.
#[derive(Debug, Clone, PartialEq)]
pub struct Softmax {
    pub row: Vec<Operand>,
    /// Position of this cell's own score within `row`.
    pub selected: usize,
    /// The row maximum subtracted before exp (the stable form); the result is the same.
    pub row_max: f64,
    pub shifted_exps: Vec<f64>,
    pub shifted_sum: f64,
}

/// Whether a softmax row is written in its shifted form, exp(x − max): only when the plain
/// exponentials overflow (or are all 0), so a learner sees the softmax they know.
pub fn softmax_is_shifted(raw_sum: f64) -> bool {
    !(raw_sum.is_finite() && raw_sum > 0.0)
}

impl Working for Softmax {
    fn operands(&self) -> Vec<Cell> {
        self.row.iter().map(|operand| operand.cell).collect()
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        self.row.get(self.selected).map(|operand| operand.cell)
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let Softmax {
            row,
            selected,
            row_max,
            shifted_exps,
            shifted_sum,
        } = self;
        let (cell, decimals, result) = (worked.cell, worked.decimals, &worked.result);
        let num = |value: f64| format_number(value, decimals);
        let row_token = labels.row_label_at(cell.matrix, cell.row, cell.token);
        let source = row[*selected];
        let source_row = format!(
            "{}[{row_token}, :]",
            labels.symbol_in(source.cell.matrix, source.cell.head)
        );
        // Learners know softmax as exp(x) / Σ exp(x); show that form whenever its numbers are
        // finite, and the shifted (stable) form only when they would overflow.
        let raw: Vec<f64> = row.iter().map(|operand| operand.value.exp()).collect();
        let raw_sum: f64 = raw.iter().sum();
        let magnitude =
            |value: f64, d: usize| -> f64 { format_magnitude(value, d).parse().unwrap_or(value) };
        if !softmax_is_shifted(raw_sum) {
            // Σ is one number for the whole row: every key's cell writes it with the same
            // decimals, and its own exponential with as many as it needs.
            let quotient_lands = |key: usize, shared: usize, own: usize| {
                num(magnitude(raw[key], own) / magnitude(raw_sum, shared))
                    == num(raw[key] / raw_sum)
            };
            let roughly_lands = |key: usize, shared: usize, own: usize| {
                rounded(
                    magnitude_rounded(raw[key], own) / magnitude_rounded(raw_sum, shared),
                    decimals,
                ) == rounded(raw[key] / raw_sum, decimals)
            };
            let shared = shared_digits(decimals, raw.len(), roughly_lands);
            let found = own_and_shared_digits(decimals, shared, |shared, own| {
                quotient_lands(*selected, shared, own)
            });
            let ((own, shared), result) = digits_written(found, decimals, result);
            let numerator = format_magnitude(raw[*selected], own);
            let exponent = exponent_digits(|e| shown(source.value, e), decimals, &numerator, own);
            Words::worked(
                vec![
                    vec![format!(
                        "exp({}) / Σ exp({source_row})",
                        format_number(source.value, exponent)
                    )],
                    vec![format!(
                        "{numerator} / {}",
                        format_magnitude(raw_sum, shared)
                    )],
                    vec![result],
                ],
                None,
            )
        } else {
            let at = |d: usize| magnitude(shifted_exps[*selected], d) / magnitude(*shifted_sum, d);
            let (d, result) = written(landing_digits(decimals, result, at), decimals, result);
            let numerator = format_magnitude(shifted_exps[*selected], d);
            let exponent = exponent_digits(
                |e| shown(source.value, e) - shown(*row_max, e),
                decimals,
                &numerator,
                d,
            );
            Words::worked(
                vec![
                    vec![format!(
                        "exp({} - {}) / Σ exp({source_row} - {})",
                        format_number(source.value, exponent),
                        format_number(*row_max, exponent),
                        format_number(*row_max, exponent)
                    )],
                    vec![format!(
                        "{numerator} / {}",
                        format_magnitude(*shifted_sum, d)
                    )],
                    vec![result],
                ],
                Some(format!(
                    "the row maximum {} is subtracted first so that exp does not overflow",
                    num(*row_max)
                )),
            )
        }
    }

    fn redone_from_shown(&self, decimals: usize) -> Option<f64> {
        let scores: Vec<f64> = self
            .row
            .iter()
            .map(|score| shown(score.value, decimals))
            .collect();
        let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let exps: Vec<f64> = scores.iter().map(|score| (score - max).exp()).collect();
        let sum: f64 = exps.iter().sum();
        (sum > 0.0).then(|| exps[self.selected] / sum)
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        side_hints(explanation, None)
    }
}
