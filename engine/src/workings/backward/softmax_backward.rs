//! The softmax's backward, one cell: its weight times its own gradient minus the row's average
//! gradient, which is one number for the whole row, written alike in every cell of it.

use super::super::hint::side_hints;
use super::super::landing::shown;
use super::super::number::{format_number, rounded, written_alike};
use super::super::words::{digits_written, own_and_shared_digits, shared_digits};
use super::super::{Explanation, Labels, Operand, Words, Worked, Working};
use crate::matrices::Cell;

/// dS[i, j] = P[i, j] · (dP[i, j] − Σ_k P[i, k]·dP[i, k]).
#[derive(Debug, Clone, PartialEq)]
pub struct SoftmaxBackward {
    pub weight: Operand,
    pub grad: Operand,
    pub row: Vec<(Operand, Operand)>,
}

impl Working for SoftmaxBackward {
    fn operands(&self) -> Vec<Cell> {
        self.row
            .iter()
            .flat_map(|(p, d)| [p.cell, d.cell])
            .collect()
    }

    /// Where `e` goes: the softmax's own gradient cell.
    fn source(&self, _: Cell) -> Option<Cell> {
        Some(self.grad.cell)
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let (decimals, result) = (worked.decimals, &worked.result);
        let SoftmaxBackward { weight, grad, row } = self;
        let name = |cell: Cell| labels.cell_name(cell);
        // The row's average is one number for the whole row: every key's cell writes it, the
        // true average rounded, with the same decimals, and its own two numbers with as many
        // as it needs. The decimals are chosen from the row alone, so each cell chooses alike.
        let average: f64 = row.iter().map(|(p, d)| p.value * d.value).sum();
        let roughly_lands = |key: usize, shared: usize, own: usize| {
            let (p, d) = row[key];
            rounded(
                rounded(p.value, own) * (rounded(d.value, own) - rounded(average, shared)),
                decimals,
            ) == rounded(p.value * (d.value - average), decimals)
        };
        let shared = shared_digits(decimals, row.len(), roughly_lands);
        let found = own_and_shared_digits(decimals, shared, |shared, own| {
            written_alike(
                shown(weight.value, own) * (shown(grad.value, own) - shown(average, shared)),
                worked.value,
                decimals,
            )
        });
        let ((d, shared), result) = digits_written(found, decimals, result);
        let row_sum = format_number(average, shared);
        // A negative number subtracted in parentheses, as a sum writes `x + (y)`: never `− -0.4`.
        let subtracted = if row_sum.starts_with('-') {
            format!("({row_sum})")
        } else {
            row_sum.clone()
        };
        let weights_symbol = labels.symbol_in(weight.cell.matrix, weight.cell.head);
        let grads_symbol = labels.symbol_in(grad.cell.matrix, grad.cell.head);
        let token = labels.row_label_at(weight.cell.matrix, weight.cell.row, 0);
        let average = format!(
            "the row's average gradient, each key's counted by its weight, is \
             avg[{token}] = Σ_k {weights_symbol}[{token}, k] × \
             {grads_symbol}[{token}, k] = {row_sum}"
        );
        let note = if weight.value == 0.0 {
            format!(
                "this key's weight is 0 (masked, or too small to count), so it passes \
                 no gradient back; {average}"
            )
        } else {
            format!(
                "{average}; this key gets its own gradient minus that average, times \
                 its weight"
            )
        };
        Words::worked(
            vec![
                vec![format!(
                    "{} × ({} − avg[{token}])",
                    name(weight.cell),
                    name(grad.cell)
                )],
                vec![format!(
                    "{} × ({} − {subtracted})",
                    format_number(weight.value, d),
                    format_number(grad.value, d)
                )],
                vec![result],
            ],
            Some(note),
        )
    }

    fn redone_from_shown(&self, _: usize) -> Option<f64> {
        // The backward pass's workings are checked as the engine writes them.
        None
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        side_hints(explanation, None)
    }
}
