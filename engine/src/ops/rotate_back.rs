//! RoPE's gradient: each row turned back by −φ, the rotation's inverse (its transpose).

use nalgebra::DMatrix;

use super::Operation;
use super::kernels::{rope_angle, rotate_rows_as};
use super::{BackwardRule, Operands, Rope, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings::backward;

/// Each row turned back by −φ, the rotation's inverse (its transpose): RoPE's gradient, with
/// the forward pass's pairs and θ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RotateBack {
    pub of: MatrixName,
    pub rope: Rope,
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
        rotate_rows_as(
            operands.get(self.of),
            0,
            self.rope,
            Some(Variant::RotatedBackwards),
        )
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let (head, row, col) = (site.cell.head, site.cell.row, site.cell.col);
        let d_k = site.cells.matrix_in(self.of, head)?.ncols();
        let (pair, lower) = self.rope.pairing.pair_of(col, d_k)?;
        let (first, second) = self.rope.pairing.columns(pair, d_k);
        Some(Rule::Backward(BackwardRule::RotateBack(
            backward::RotateBack {
                first: site.operand_of(self.of, head, row, first)?,
                second: site.operand_of(self.of, head, row, second)?,
                position: row,
                angle: rope_angle(row, pair, d_k, self.rope.theta),
                lower,
                pairing: self.rope.pairing,
            },
        )))
    }
}
