//! RoPE's gradient, one cell: the pair turned back by −φ, the rotation's transpose.

use super::super::hint::side_hints;
use super::super::landing::Turned;
use super::super::number::format_number;
use super::super::{Explanation, Labels, Operand, Words, Worked, Working};
use super::gradient_first;
use crate::matrices::{Cell, RopePairing};

/// One cell of a pair turned back by −φ: the rotation's transpose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RotateBack {
    pub first: Operand,
    pub second: Operand,
    pub position: usize,
    pub angle: f64,
    /// This cell is the first one of its pair (the even one when pairs are side by side).
    pub lower: bool,
    /// Which columns make the pair.
    pub pairing: RopePairing,
}

impl Working for RotateBack {
    fn operands(&self) -> Vec<Cell> {
        vec![self.first.cell, self.second.cell]
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        gradient_first(&self.operands())
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let RotateBack {
            first,
            second,
            position,
            angle,
            lower,
            pairing,
        } = *self;
        let (sin, cos) = angle.sin_cos();
        // Turned back by −φ: the first of a pair is a·cos φ + b·sin φ, the second
        // −a·sin φ + b·cos φ.
        let (first_factor, second_factor) = if lower {
            (("cos φ", cos), ("sin φ", sin))
        } else {
            (("(−sin φ)", -sin), ("cos φ", cos))
        };
        let turned = Turned {
            first: (labels.cell_name(first.cell), first.value),
            second: (labels.cell_name(second.cell), second.value),
            first_factor,
            second_factor,
            minus: false,
        };
        Words::worked(
            turned.lines(worked.decimals, &worked.result),
            Some(format!(
                "the forward pass turned this pair{} by φ = {} rad at position {position}; \
                 its gradient turns back by −φ (a rotation's inverse is its transpose)",
                match pairing {
                    RopePairing::Interleaved => String::new(),
                    RopePairing::Half => format!(
                        " (columns {} and {}: rotate-half)",
                        labels.column_label(first.cell.matrix, first.cell.col),
                        labels.column_label(second.cell.matrix, second.cell.col),
                    ),
                },
                format_number(angle, worked.decimals + 2)
            )),
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
