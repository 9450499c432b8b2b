//! A gradient as leftᵀ · right, one cell a column of left dotted with a column of right: a
//! weight's gradient (Xᵀ·dQ), or one flowing back through a product.

use super::super::hint::side_hints;
use super::super::landing::{landing_digits, written};
use super::super::{Explanation, Labels, Operand, Words, Worked, Working};
use super::{dot, gradient_first, products};
use crate::matrices::Cell;

/// leftᵀ · right: column `row` of left dotted with column `col` of right (Xᵀ·dQ).
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDot {
    pub terms: Vec<(Operand, Operand)>,
}

impl Working for ColumnDot {
    fn operands(&self) -> Vec<Cell> {
        self.terms
            .iter()
            .flat_map(|(a, b)| [a.cell, b.cell])
            .collect()
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        gradient_first(&self.operands())
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let (decimals, result) = (worked.decimals, &worked.result);
        let terms = &self.terms;
        let column = |cell: Cell| {
            format!(
                "{}[:, {}]",
                labels.symbol_in(cell.matrix, cell.head),
                labels.column_label(cell.matrix, cell.col)
            )
        };
        let Some((left, right)) = terms.first() else {
            return Words::worked(vec![vec![result.to_string()]], Some("an empty sum".into()));
        };
        let found = landing_digits(decimals, result, |d| dot(terms, d));
        let (d, result) = written(found, decimals, result);
        Words::worked(
            vec![
                vec![format!("{} · {}", column(left.cell), column(right.cell))],
                products(terms, d),
                vec![result],
            ],
            Some(format!(
                "the transpose: column {} of {} against column {} of {}, one term per row",
                labels.column_label(left.cell.matrix, left.cell.col),
                labels.symbol_in(left.cell.matrix, left.cell.head),
                labels.column_label(right.cell.matrix, right.cell.col),
                labels.symbol_in(right.cell.matrix, right.cell.head),
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
