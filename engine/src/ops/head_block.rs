//! Head h's block of columns of a matrix of every head side by side (d_concat's): the
//! concatenation's gradient handed back to each head.

use nalgebra::DMatrix;

use super::Operation;
use super::{BackwardRule, Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings::backward;

/// Head h's block of columns of a matrix of every head side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadBlock {
    pub of: MatrixName,
}

impl Operation for HeadBlock {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.of]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!("{}[:, the head's columns]", symbol(self.of)))
    }

    fn slips(&self) -> &'static [Variant] {
        &[]
    }

    fn evaluate(&self, operands: &Operands, _: Option<Variant>) -> DMatrix<f64> {
        let whole = operands.get(self.of);
        let width = whole.ncols() / operands.heads.query.max(1);
        let start = operands.head * width;
        if start + width > whole.ncols() {
            return DMatrix::zeros(0, 0);
        }
        whole.columns(start, width).into_owned()
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let cell = site.cell;
        let width = site.cells.matrix_in(cell.matrix, cell.head)?.ncols();
        Some(Rule::Backward(BackwardRule::Block(backward::Block {
            from: site.operand_of(self.of, 0, cell.row, cell.head * width + cell.col)?,
        })))
    }
}
