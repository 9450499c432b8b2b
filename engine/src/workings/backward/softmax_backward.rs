//! The softmax's backward, one cell: its weight times its own gradient minus the row's average
//! gradient.

use super::super::hint::side_hints;
use super::super::landing::{landing_digits, shown, written};
use super::super::number::format_number;
use super::super::{Explanation, Labels, Operand, Words, Worked, Working};
use super::dot;
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
        let inner = |d: usize| dot(row, d);
        let at = |d: usize| shown(weight.value, d) * (shown(grad.value, d) - shown(inner(d), d));
        let found = landing_digits(decimals, result, at);
        let (d, result) = written(found, decimals, result);
        let row_sum = format_number(inner(d), d);
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
                    "{} × ({} − {row_sum})",
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
