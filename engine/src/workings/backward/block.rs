//! A head's gradient taken from its block of columns of every head's gradient (d_concat's).

use super::super::hint::side_hints;
use super::super::{Explanation, Labels, Operand, Words, Worked, Working};
use super::gradient_first;
use crate::matrices::Cell;

/// A head's number taken from its block of every head's gradient (d_concat's).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Block {
    pub from: Operand,
}

impl Working for Block {
    fn operands(&self) -> Vec<Cell> {
        vec![self.from.cell]
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        gradient_first(&self.operands())
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        Words::worked(
            vec![
                vec![labels.cell_name(self.from.cell)],
                vec![worked.result.clone()],
            ],
            Some("this head's columns of the gradient of every head side by side".into()),
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
