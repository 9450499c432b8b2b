//! RoPE's gradient: each row turned back by −φ, the rotation's inverse (its transpose).

use nalgebra::DMatrix;

use super::Operation;
use super::kernels::{rope_angle, rotate_rows_as};
use super::{BackwardRule, Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings::backward;

/// Each row turned back by −φ, the rotation's inverse (its transpose): RoPE's gradient.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RotateBack {
    pub of: MatrixName,
}

impl Operation for RotateBack {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.of]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!("rotate({}, −φ)", symbol(self.of)))
    }

    fn slips(&self) -> &'static [Variant] {
        &[]
    }

    fn evaluate(&self, operands: &Operands, _: Option<Variant>) -> DMatrix<f64> {
        rotate_rows_as(operands.get(self.of), 0, Some(Variant::RotatedBackwards))
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let (head, row, col) = (site.cell.head, site.cell.row, site.cell.col);
        let d_k = site.cells.matrix_in(self.of, head)?.ncols();
        let pair = col / 2;
        Some(Rule::Backward(BackwardRule::RotateBack(
            backward::RotateBack {
                first: site.operand_of(self.of, head, row, 2 * pair)?,
                second: site.operand_of(self.of, head, row, 2 * pair + 1)?,
                position: row,
                angle: rope_angle(row, pair, d_k),
                lower: col % 2 == 0,
            },
        )))
    }
}
