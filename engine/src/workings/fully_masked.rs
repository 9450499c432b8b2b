//! A weight of a row whose every key is masked: 0 by definition, with nothing to work out.

use super::{Explanation, Labels, NoteAfter, Operand, Words, Worked, Working};
use crate::matrices::Cell;

/// Every key of the row is masked: the weight is 0 by definition, never NaN.
#[derive(Debug, Clone, PartialEq)]
pub struct FullyMasked {
    pub row: Vec<Operand>,
}

impl Working for FullyMasked {
    fn operands(&self) -> Vec<Cell> {
        self.row.iter().map(|operand| operand.cell).collect()
    }

    fn source(&self, cell: Cell) -> Option<Cell> {
        self.row
            .iter()
            .find(|operand| operand.cell.col == cell.col)
            .map(|operand| operand.cell)
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let cell = worked.cell;
        let row_token = labels.row_label_at(cell.matrix, cell.row, cell.token);
        Words {
            sides: vec![vec!["0".to_string()]],
            note: Some(format!(
                "every key of row {row_token} is masked (-inf), so there is nothing to \
                 attend to: exp(-inf) / Σ exp(-inf) is 0 / 0. The whole row of weights is 0 \
                 here, as PyTorch's scaled_dot_product_attention gives since version 2.5; \
                 older versions and a plain softmax give NaN, and a tutorial's \
                 masked_fill(…, -1e9) would give every key 1/n"
            )),
            note_after: NoteAfter::Colon,
            lesson_number: false,
        }
    }

    fn redone_from_shown(&self, _: usize) -> Option<f64> {
        // Nothing is worked out: the weight is 0 by definition.
        None
    }

    fn hints(
        &self,
        labels: &dyn Labels,
        _: &Worked,
        explanation: &Explanation,
    ) -> (String, String) {
        // The explanation of a fully hidden row is just "0" and why: nothing to cut from.
        let source = self.row.first().map_or_else(
            || "the row".to_string(),
            |operand| {
                format!(
                    "{}[{}, :]",
                    labels.symbol_in(operand.cell.matrix, operand.cell.head),
                    labels.row_label(operand.cell.matrix, operand.cell.row)
                )
            },
        );
        (
            format!(
                "{}: look at {source}, the row softmax works on",
                explanation.name
            ),
            format!(
                "{}: every value of {source} is -inf, so no key can be attended to",
                explanation.name
            ),
        )
    }
}
