//! A sinusoidal position encoding, one cell: sin or cos of its position over a power of 10000.

use super::hint::side_hints;
use super::landing::{landing_digits, shown, written};
use super::number::{format_magnitude, format_number};
use super::words::{counted_from, position_words};
use super::{Explanation, Labels, Words, Worked, Working};
use crate::matrices::Cell;

/// A sinusoidal position encoding: sin (even column c) or cos (odd c) of
/// p / 10000^(2i/d_model), i = ⌊c/2⌋.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sinusoid {
    pub position: usize,
    pub pair: usize,
    pub d_model: usize,
    pub angle: f64,
    pub cosine: bool,
}

impl Working for Sinusoid {
    fn operands(&self) -> Vec<Cell> {
        Vec::new()
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        None
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let Sinusoid {
            position,
            pair,
            d_model,
            angle,
            cosine,
        } = *self;
        let (cell, decimals) = (worked.cell, worked.decimals);
        let function = if cosine { "cos" } else { "sin" };
        let apply = |angle: f64| if cosine { angle.cos() } else { angle.sin() };
        let found = landing_digits(decimals, &worked.result, |d| apply(shown(angle, d)));
        let (d, result) = written(found, decimals, &worked.result);
        let base = 10000f64.powf(2.0 * pair as f64 / d_model as f64);
        Words::worked(
            vec![
                vec![format!(
                    "{function}({position} / 10000^(2·{pair}/{d_model}))"
                )],
                vec![format!(
                    "{function}({position} / {})",
                    format_magnitude(base, decimals)
                )],
                vec![format!("{function}({})", format_number(angle, d))],
                vec![result],
            ],
            Some(format!(
                "row {} is {} (positions count from 0{}), and \
                 column {} is c = {} (the formula counts columns from 0), so \
                 i = ⌊c/2⌋ = {pair}, and an {} c takes {function}",
                cell.row + 1,
                position_words(labels, cell.matrix, position),
                counted_from(labels, cell.matrix),
                cell.col + 1,
                cell.col,
                if cosine { "odd" } else { "even" }
            )),
        )
    }

    fn redone_from_shown(&self, _: usize) -> Option<f64> {
        // Its operand is an angle the screen does not show.
        None
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        // A position's formula needs its angle, which the note gives: it comes with the first
        // hint.
        side_hints(explanation, explanation.note.as_deref())
    }
}
