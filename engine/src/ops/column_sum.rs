//! A bias's gradient: its matrix's gradient summed down each column, over the tokens. A bias
//! is added to every token's row (Q = X·W_q + b_q), so every row's gradient reaches it.

use nalgebra::DMatrix;

use super::Operation;
use super::{BackwardRule, Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings::backward;

/// Each column of a matrix summed over its rows: one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnSum {
    pub of: MatrixName,
}

impl Operation for ColumnSum {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.of]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!("Σ {} over the tokens", symbol(self.of)))
    }

    fn slips(&self) -> &'static [Variant] {
        &[]
    }

    fn evaluate(&self, operands: &Operands, _: Option<Variant>) -> DMatrix<f64> {
        let of = operands.get(self.of);
        // Each column added top to bottom, as the working writes its terms.
        DMatrix::from_iterator(
            1,
            of.ncols(),
            of.column_iter()
                .map(|column| column.iter().fold(0.0, |sum, value| sum + value)),
        )
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let (head, col) = (site.cell.head, site.cell.col);
        let rows = site.cells.matrix_in(self.of, head)?.nrows();
        Some(Rule::Backward(BackwardRule::Sum(backward::Sum {
            terms: (0..rows)
                .map(|row| site.operand_of(self.of, head, row, col))
                .collect::<Option<_>>()?,
            of: backward::Summed::Tokens,
        })))
    }
}
