//! One head's share of the output projection: its values weights times its own block of W_o's
//! rows (the output-value circuit, W_OV = W_v^h · W_o^h).

use nalgebra::DMatrix;

use super::Operation;
use super::{Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings;

/// One head's values weights times that head's rows of W_o: the head's block of W_o's rows,
/// not all of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadRows {
    pub left: MatrixName,
    pub right: MatrixName,
}

impl Operation for HeadRows {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.left, self.right]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!(
            "{}·{}[the head's rows]",
            symbol(self.left),
            symbol(self.right)
        ))
    }

    fn slips(&self) -> &'static [Variant] {
        &[]
    }

    fn evaluate(&self, operands: &Operands, _: Option<Variant>) -> DMatrix<f64> {
        let (left, right) = (operands.get(self.left), operands.get(self.right));
        let start = operands.head * left.ncols();
        if start + left.ncols() > right.nrows() {
            return DMatrix::zeros(0, 0);
        }
        left * right.rows(start, left.ncols())
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let (row, col, head) = (site.cell.row, site.cell.col, site.cell.head);
        let width = site.cells.matrix_in(self.left, head)?.ncols();
        Some(Rule::Dot(workings::Dot {
            bias: None,
            transpose_right: false,
            terms: (0..width)
                .map(|m| {
                    Some((
                        site.operand(self.left, row, m)?,
                        site.operand(self.right, head * width + m, col)?,
                    ))
                })
                .collect::<Option<_>>()?,
        }))
    }
}
