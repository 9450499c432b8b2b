//! Two matrices added cell by cell (embeddings + positions).

use nalgebra::DMatrix;

use super::Operation;
use super::{Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings;

/// left + right, cell by cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Add {
    pub left: MatrixName,
    pub right: MatrixName,
}

impl Operation for Add {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.left, self.right]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!("{} + {}", symbol(self.left), symbol(self.right)))
    }

    fn slips(&self) -> &'static [Variant] {
        &[]
    }

    fn evaluate(&self, operands: &Operands, _: Option<Variant>) -> DMatrix<f64> {
        operands.get(self.left) + operands.get(self.right)
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let (row, col) = (site.cell.row, site.cell.col);
        Some(Rule::Add(workings::Add {
            left: site.operand(self.left, row, col)?,
            right: site.operand(self.right, row, col)?,
        }))
    }
}
