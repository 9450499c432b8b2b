//! The three paths back to X (through Q, K and V) added cell by cell.

use nalgebra::DMatrix;

use super::Operation;
use super::{BackwardRule, Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings::backward;

/// Three matrices added cell by cell: the three paths back to X.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sum3 {
    pub of: [MatrixName; 3],
}

impl Operation for Sum3 {
    fn operands(&self) -> Vec<MatrixName> {
        self.of.to_vec()
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        let [a, b, c] = self.of;
        Some(format!("{} + {} + {}", symbol(a), symbol(b), symbol(c)))
    }

    fn slips(&self) -> &'static [Variant] {
        &[]
    }

    fn evaluate(&self, operands: &Operands, _: Option<Variant>) -> DMatrix<f64> {
        let [a, b, c] = self.of.map(|name| operands.get(name));
        if a.shape() != b.shape() || a.shape() != c.shape() {
            return DMatrix::zeros(0, 0);
        }
        a + b + c
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let (head, row, col) = (site.cell.head, site.cell.row, site.cell.col);
        Some(Rule::Backward(BackwardRule::Sum(backward::Sum {
            terms: self
                .of
                .iter()
                .map(|path| site.operand_of(*path, head, row, col))
                .collect::<Option<_>>()?,
            of: backward::Summed::Paths,
        })))
    }
}
