//! A score plus the mask: 0 keeps it, -inf hides the key, another number is a bias.

use super::hint::side_hints;
use super::landing::{EXTRA_OPERAND_DECIMALS, shown};
use super::number::format_number;
use super::{Explanation, Labels, Operand, Words, Worked, Working};
use crate::matrices::{Cell, MatrixName};

/// A score plus the mask: 0 keeps it, -inf hides it, another number is a bias that shifts it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mask {
    pub score: Operand,
    pub mask: Operand,
}

impl Working for Mask {
    fn operands(&self) -> Vec<Cell> {
        vec![self.score.cell, self.mask.cell]
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        Some(self.score.cell)
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let num = |value: f64| format_number(value, worked.decimals);
        let Mask { score, mask } = *self;
        Words::worked(
            vec![
                vec![format!(
                    "{} + {}",
                    labels.cell_name(score.cell),
                    labels.cell_name(mask.cell)
                )],
                vec![format!("{} + ({})", num(score.value), num(mask.value))],
                vec![num(worked.value)],
            ],
            mask_note(labels, worked.cell, mask.value),
        )
    }

    fn redone_from_shown(&self, decimals: usize) -> Option<f64> {
        Some(shown(self.score.value, decimals) + shown(self.mask.value, decimals))
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        side_hints(explanation, None)
    }
}

/// What a mask cell did to its score, when it did anything: hid the key, or shifted the score.
fn mask_note(labels: &dyn Labels, cell: Cell, bias: f64) -> Option<String> {
    if bias == 0.0 {
        return None;
    }
    if bias == f64::NEG_INFINITY {
        return Some(if labels.causal() {
            "hidden: this key comes after the query".to_string()
        } else {
            "hidden: the mask holds -inf here, so this key's weight is exactly 0".to_string()
        });
    }
    let weight = labels.weights_of(cell.head)[(cell.row, cell.col)];
    let whole_row = labels
        .matrix(MatrixName::Mask)
        .is_some_and(|mask| mask.row(cell.row).iter().all(|other| *other == bias));
    // Written as the screen writes numbers: f32::MIN is not 39 digits.
    let shown = format_number(bias, EXTRA_OPERAND_DECIMALS);
    Some(if whole_row {
        format!(
            "a bias of {shown} added to every score of this row: softmax ignores a shift of the \
             whole row, so unlike -inf it hides nothing here"
        )
    } else if bias > 0.0 {
        format!("a bias of {shown} added to the score; it raises this key's weight")
    } else if weight > 0.0 {
        format!(
            "a bias of {shown} added to the score: unlike -inf it does not hide the key, so \
             its weight shrinks but is not 0"
        )
    } else {
        format!(
            "a bias of {shown} added to the score: unlike -inf it does not hide the key, but \
             this weight is so small that it underflows to 0 in floating point"
        )
    })
}
