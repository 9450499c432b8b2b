//! leftᵀ · right: a weight's gradient (Xᵀ·dQ), or one flowing back through a product
//! (weightsᵀ·d_output).

use nalgebra::DMatrix;

use super::Operation;
use super::{BackwardRule, Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings::backward;

/// leftᵀ · right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransposedProduct {
    pub left: MatrixName,
    pub right: MatrixName,
}

impl Operation for TransposedProduct {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.left, self.right]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!("{}ᵀ·{}", symbol(self.left), symbol(self.right)))
    }

    fn slips(&self) -> &'static [Variant] {
        &[Variant::NotTransposed]
    }

    fn evaluate(&self, operands: &Operands, slip: Option<Variant>) -> DMatrix<f64> {
        let (left, right) = (operands.get(self.left), operands.get(self.right));
        if slip == Some(Variant::NotTransposed) {
            return if left.is_square() && left.ncols() == right.nrows() {
                left * right
            } else {
                DMatrix::zeros(0, 0)
            };
        }
        if left.nrows() != right.nrows() {
            return DMatrix::zeros(0, 0);
        }
        left.transpose() * right
    }

    /// Column `row` of left dotted with column `col` of right.
    fn derive(&self, site: &Site) -> Option<Rule> {
        let (head, row, col) = (site.cell.head, site.cell.row, site.cell.col);
        let rows = site.cells.matrix_in(self.left, head)?.nrows();
        Some(Rule::Backward(BackwardRule::ColumnDot(
            backward::ColumnDot {
                terms: (0..rows)
                    .map(|m| {
                        Some((
                            site.operand_of(self.left, head, m, row)?,
                            site.operand_of(self.right, head, m, col)?,
                        ))
                    })
                    .collect::<Option<_>>()?,
            },
        )))
    }
}
