//! Two cells added, cell by cell (embeddings + positions).

use super::hint::side_hints;
use super::landing::{landing_digits, shown, written};
use super::number::format_number;
use super::{Explanation, Labels, Operand, Words, Worked, Working};
use crate::matrices::Cell;

/// Two cells added (embeddings + positions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Add {
    pub left: Operand,
    pub right: Operand,
}

impl Working for Add {
    fn operands(&self) -> Vec<Cell> {
        vec![self.left.cell, self.right.cell]
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        Some(self.left.cell)
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let (left, right) = (self.left, self.right);
        let at = |d: usize| shown(left.value, d) + shown(right.value, d);
        let found = landing_digits(worked.decimals, &worked.result, at);
        let (d, result) = written(found, worked.decimals, &worked.result);
        Words::worked(
            vec![
                vec![format!(
                    "{} + {}",
                    labels.cell_name(left.cell),
                    labels.cell_name(right.cell)
                )],
                vec![format!(
                    "{} + ({})",
                    format_number(left.value, d),
                    format_number(right.value, d)
                )],
                vec![result],
            ],
            None,
        )
    }

    fn redone_from_shown(&self, decimals: usize) -> Option<f64> {
        Some(shown(self.left.value, decimals) + shown(self.right.value, decimals))
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        side_hints(explanation, None)
    }
}
