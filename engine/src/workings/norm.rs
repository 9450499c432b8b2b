//! One cell of a row normalised before the projections: LayerNorm's (x − mean) / √(var + ε) ·
//! γ + β or RMSNorm's x / √(mean(x²) + ε) · γ, with the row's mean and variance (or mean of
//! squares) said over its n numbers, and the column's gain and bias.

use super::hint::side_hints;
use super::landing::{landing_digits, shown, written};
use super::number::format_number;
use super::{Explanation, Labels, Operand, Words, Worked, Working};
use crate::matrices::{Cell, NormKind};

/// One cell of a row normalised, with what its row and its column give it.
#[derive(Debug, Clone, PartialEq)]
pub struct Norm {
    pub kind: NormKind,
    /// The row's own number in this cell's column.
    pub x: Operand,
    /// The row's cells, which its mean and variance are taken over.
    pub row: Vec<Cell>,
    /// The row's Σ x.
    pub sum: f64,
    /// The row's mean (0 for RMSNorm, which takes none off).
    pub mean: f64,
    /// Σ (x − mean)² for LayerNorm, Σ x² for RMSNorm.
    pub squares: f64,
    /// The variance (LayerNorm) or mean of squares (RMSNorm): `squares` / n.
    pub spread: f64,
    /// Added to `spread` so that a row of zeros does not divide by zero.
    pub epsilon: f64,
    /// γ of this column; `None` where the lesson gives no gain (γ = 1).
    pub gain: Option<Operand>,
    /// β of this column (LayerNorm); `None` where there is none (β = 0).
    pub bias: Option<Operand>,
}

impl Norm {
    fn gain_value(&self) -> f64 {
        self.gain.map_or(1.0, |gain| gain.value)
    }

    fn bias_value(&self) -> f64 {
        self.bias.map_or(0.0, |bias| bias.value)
    }
}

/// ε as a learner types it: 0.00001 for 1e-5, never rounded to the lesson's decimals.
fn epsilon_text(epsilon: f64) -> String {
    let plain = format!("{epsilon}");
    if plain.len() <= 12 {
        plain
    } else {
        format!("{epsilon:e}")
    }
}

impl Working for Norm {
    fn operands(&self) -> Vec<Cell> {
        let mut cells = self.row.clone();
        cells.extend(self.gain.map(|gain| gain.cell));
        cells.extend(self.bias.map(|bias| bias.cell));
        cells
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        Some(self.x.cell)
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let Norm {
            kind,
            x,
            sum,
            mean,
            squares,
            spread,
            epsilon,
            gain,
            bias,
            ..
        } = self;
        let n = self.row.len();
        let (gain_value, bias_value) = (self.gain_value(), self.bias_value());
        let (cell, decimals) = (worked.cell, worked.decimals);
        let divisor = (spread + epsilon).sqrt();
        let at = |d: usize| {
            let centred = shown(x.value, d) - shown(*mean, d);
            centred / shown(divisor, d) * shown(gain_value, d) + shown(bias_value, d)
        };
        let found = landing_digits(decimals, &worked.result, at);
        let (d, result) = written(found, decimals, &worked.result);
        let num = |value: f64| format_number(value, d);
        let eps = epsilon_text(*epsilon);
        let col = labels.column_label(cell.matrix, cell.col);
        let gain_name = format!("γ[{col}]");
        let bias_name = format!("β[{col}]");
        let row_token = labels.row_label_at(x.cell.matrix, x.cell.row, x.cell.token);
        let source_row = format!(
            "{}[{row_token}, :]",
            labels.symbol_in(x.cell.matrix, x.cell.head)
        );
        // A negative number inside a difference is bracketed: 1 − (-0.5).
        let bracketed = |text: String| {
            if text.starts_with('-') {
                format!("({text})")
            } else {
                text
            }
        };
        let (formula, numbers, divided) = match kind {
            NormKind::Layer => (
                format!(
                    "({} − mean) / √(var + ε) · {gain_name} + {bias_name}",
                    labels.cell_name(x.cell)
                ),
                format!(
                    "({} − {}) / √({} + {eps}) · {} + {}",
                    num(x.value),
                    bracketed(num(*mean)),
                    format_number(*spread, d + 2),
                    bracketed(num(gain_value)),
                    bracketed(num(bias_value)),
                ),
                format!(
                    "{} / {} · {} + {}",
                    num(shown(x.value, d) - shown(*mean, d)),
                    num(divisor),
                    bracketed(num(gain_value)),
                    bracketed(num(bias_value)),
                ),
            ),
            NormKind::Rms => (
                format!(
                    "{} / √(mean(x²) + ε) · {gain_name}",
                    labels.cell_name(x.cell)
                ),
                format!(
                    "{} / √({} + {eps}) · {}",
                    num(x.value),
                    format_number(*spread, d + 2),
                    bracketed(num(gain_value)),
                ),
                format!(
                    "{} / {} · {}",
                    num(x.value),
                    num(divisor),
                    bracketed(num(gain_value)),
                ),
            ),
        };
        let given = |operand: &Option<Operand>, name: &str, default: &str| match operand {
            Some(operand) => format!("{name} = {}", format_number(operand.value, d)),
            None => format!("{name} = {default} (the lesson gives none)"),
        };
        let note = match kind {
            NormKind::Layer => format!(
                "over the {n} numbers of {source_row}: Σ = {}, mean = Σ / {n} = {}; \
                 var = Σ (x − mean)² / {n} = {} / {n} = {} (divided by n, as nn.LayerNorm \
                 does, not n − 1); ε = {eps} keeps a constant row from dividing by zero; \
                 {} and {} are column {col}'s gain and bias",
                num(*sum),
                num(*mean),
                format_number(*squares, d + 2),
                format_number(*spread, d + 2),
                given(gain, &gain_name, "1"),
                given(bias, &bias_name, "0"),
            ),
            NormKind::Rms => format!(
                "over the {n} numbers of {source_row}: Σ x² = {}, mean(x²) = Σ x² / {n} = {} \
                 (no mean is taken off, unlike LayerNorm); ε = {eps} keeps a row of zeros \
                 from dividing by zero; {} is column {col}'s gain",
                format_number(*squares, d + 2),
                format_number(*spread, d + 2),
                given(gain, &gain_name, "1"),
            ),
        };
        Words::worked(
            vec![vec![formula], vec![numbers], vec![divided], vec![result]],
            Some(note),
        )
    }

    fn redone_from_shown(&self, decimals: usize) -> Option<f64> {
        let divisor = (self.spread + self.epsilon).sqrt();
        let centred = shown(self.x.value, decimals) - shown(self.mean, decimals);
        Some(
            centred / shown(divisor, decimals) * shown(self.gain_value(), decimals)
                + shown(self.bias_value(), decimals),
        )
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        // The row's mean and variance, which the note gives, come with the first hint.
        side_hints(explanation, explanation.note.as_deref())
    }
}
