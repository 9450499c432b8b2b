//! One cell of a pair of a query or key rotated by its position's angle (RoPE).

use super::hint::side_hints;
use super::landing::{Turned, shown};
use super::number::format_number;
use super::words::{counted_from, position_words};
use super::{Explanation, Labels, Operand, Words, Worked, Working};
use crate::matrices::{Cell, Rope, RopePairing};

/// One cell of a pair rotated by φ = p · θ^(−2i/d_k) (RoPE): the first of the pair is
/// first·cos φ − second·sin φ, the second first·sin φ + second·cos φ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rotate {
    pub first: Operand,
    pub second: Operand,
    pub position: usize,
    pub pair: usize,
    pub d_k: usize,
    pub angle: f64,
    /// This cell is the first one of its pair (the even one when pairs are side by side).
    pub lower: bool,
    /// Which columns make the pair, and the base θ of the angle.
    pub rope: Rope,
}

impl Working for Rotate {
    fn operands(&self) -> Vec<Cell> {
        vec![self.first.cell, self.second.cell]
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        Some(if self.lower {
            self.first.cell
        } else {
            self.second.cell
        })
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let Rotate {
            first,
            second,
            position,
            pair,
            d_k,
            angle,
            lower,
            rope,
        } = *self;
        let (cell, decimals) = (worked.cell, worked.decimals);
        let theta = rope.theta;
        // Side by side the pair is plain from its cells; rotate-half's is said, its columns
        // as the table counts them.
        let columns = match rope.pairing {
            RopePairing::Interleaved => String::new(),
            RopePairing::Half => format!(
                ": columns {} and {}, d_k/2 = {} apart (rotate-half, as Llama-family models \
                 pair them)",
                labels.column_label(first.cell.matrix, first.cell.col),
                labels.column_label(second.cell.matrix, second.cell.col),
                d_k / 2
            ),
        };
        let (sin, cos) = angle.sin_cos();
        // The first of a pair is a·cos φ − b·sin φ, the second a·sin φ + b·cos φ.
        let ((a_trig, a_factor), (b_trig, b_factor)) = if lower {
            (("cos φ", cos), ("sin φ", sin))
        } else {
            (("sin φ", sin), ("cos φ", cos))
        };
        let turned = Turned {
            first: (labels.cell_name(first.cell), first.value),
            second: (labels.cell_name(second.cell), second.value),
            first_factor: (a_trig, a_factor),
            second_factor: (b_trig, b_factor),
            minus: lower,
        };
        Words::worked(
            turned.lines(decimals, &worked.result),
            Some(format!(
                "the angle φ = p · {theta}^(−2i/d_k) = {position} · {theta}^(−2·{pair}/{d_k}) \
                 = {} rad: {} {} is {} (positions count from 0{}), and \
                 this is pair i = {pair}{columns}",
                format_number(angle, decimals + 2),
                // A generation step's one row is its token's.
                if cell.matrix.per_token() {
                    "token"
                } else {
                    "row"
                },
                position + 1,
                position_words(labels, cell.matrix, position),
                counted_from(labels, cell.matrix),
            )),
        )
    }

    fn redone_from_shown(&self, decimals: usize) -> Option<f64> {
        let at = |value: f64| shown(value, decimals);
        let (sin, cos) = self.angle.sin_cos();
        Some(if self.lower {
            at(self.first.value) * cos - at(self.second.value) * sin
        } else {
            at(self.first.value) * sin + at(self.second.value) * cos
        })
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        // A position's formula needs its angle, which the note gives: it comes with the first
        // hint.
        side_hints(explanation, explanation.note.as_deref())
    }
}
