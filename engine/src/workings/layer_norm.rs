//! One cell of a row normalised (layer normalisation, no γ, β): (x − mean) / √(var + ε), the
//! mean and the variance (over n) of its row.

use super::hint::side_hints;
use super::landing::{landing_digits, shown, written};
use super::number::format_number;
use super::{Explanation, Labels, Operand, Words, Worked, Working};
use crate::matrices::Cell;

/// One cell of a row normalised: (x − mean) / √(var + ε), mean and variance (over n) of its row.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerNorm {
    pub row: Vec<Operand>,
    /// Position of this cell's own x within `row`.
    pub selected: usize,
    pub mean: f64,
    pub variance: f64,
    /// Added to the variance so that a constant row does not divide by zero.
    pub epsilon: f64,
}

impl Working for LayerNorm {
    fn operands(&self) -> Vec<Cell> {
        self.row.iter().map(|operand| operand.cell).collect()
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        self.row.get(self.selected).map(|operand| operand.cell)
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let LayerNorm {
            row,
            selected,
            mean,
            variance,
            epsilon,
        } = self;
        let (cell, decimals) = (worked.cell, worked.decimals);
        let num = |value: f64| format_number(value, decimals);
        let row_token = labels.row_label_at(cell.matrix, cell.row, cell.token);
        let x = row[*selected];
        let deviation = (variance + epsilon).sqrt();
        let at = |d: usize| (shown(x.value, d) - shown(*mean, d)) / shown(deviation, d);
        let found = landing_digits(decimals, &worked.result, at);
        let (d, result) = written(found, decimals, &worked.result);
        let n = row.len();
        let source_row = format!(
            "{}[{row_token}, :]",
            labels.symbol_in(x.cell.matrix, x.cell.head)
        );
        let squares: f64 = row
            .iter()
            .map(|operand| (operand.value - mean).powi(2))
            .sum();
        Words::worked(
            vec![
                vec![format!(
                    "({} − mean) / √(var + ε)",
                    labels.cell_name(x.cell)
                )],
                vec![format!(
                    "({} − ({})) / √({} + {epsilon})",
                    format_number(x.value, d),
                    format_number(*mean, d),
                    format_number(*variance, d + 2),
                )],
                vec![format!(
                    "{} / {}",
                    format_number(shown(x.value, d) - shown(*mean, d), d),
                    format_number(deviation, d)
                )],
                vec![result],
            ],
            Some(format!(
                "over the {n} numbers of {source_row}: mean = Σ / {n} = {} / {n} = {}; \
                 var = Σ (x − mean)² / {n} = {} / {n} = {} (divided by n, as \
                 nn.LayerNorm does); ε = {epsilon} keeps a constant row from dividing \
                 by zero",
                num(mean * n as f64),
                format_number(*mean, d),
                format_number(squares, d + 2),
                format_number(*variance, d + 2),
            )),
        )
    }

    fn redone_from_shown(&self, decimals: usize) -> Option<f64> {
        let row: Vec<f64> = self.row.iter().map(|x| shown(x.value, decimals)).collect();
        let n = row.len() as f64;
        let mean = row.iter().sum::<f64>() / n;
        let variance = row.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        Some((row[self.selected] - mean) / (variance + self.epsilon).sqrt())
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        // Its mean and variance, which the note gives, come with the first hint.
        side_hints(explanation, explanation.note.as_deref())
    }
}
