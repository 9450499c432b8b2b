//! RoPE: each row at position p turned pair by pair by the angles p · θ^(−2i/d_k).

use nalgebra::DMatrix;

use super::Operation;
use super::kernels::{rope_angle, rotate_rows_as};
use super::{Operands, Rope, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings;

/// Each row at position p turned pairwise by angles p · θ^(−2i/d_k) (RoPE), its pairs and θ
/// the lesson's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rotate {
    pub of: MatrixName,
    pub rope: Rope,
}

impl Operation for Rotate {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.of]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!("rotate({})", symbol(self.of)))
    }

    fn slips(&self) -> &'static [Variant] {
        &[
            Variant::RotatedBackwards,
            Variant::SinCosSwapped,
            Variant::PositionsFromOne,
            Variant::ExponentByColumn,
        ]
    }

    fn evaluate(&self, operands: &Operands, slip: Option<Variant>) -> DMatrix<f64> {
        // A step of generation's row is at its token's position, not at 0.
        let first = if self.of.per_token() {
            operands.position()
        } else {
            0
        };
        rotate_rows_as(operands.get(self.of), first, self.rope, slip)
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let cell = site.cell;
        let row = cell.row;
        let d_k = site.width;
        let (pair, lower) = self.rope.pairing.pair_of(cell.col, d_k)?;
        let (first, second) = self.rope.pairing.columns(pair, d_k);
        // A step of generation's one row is at its token's position.
        let position = if cell.matrix.per_token() {
            cell.token
        } else {
            row
        };
        Some(Rule::Rotate(workings::Rotate {
            first: site.operand(self.of, row, first)?,
            second: site.operand(self.of, row, second)?,
            position,
            pair,
            d_k,
            angle: rope_angle(position, pair, d_k, self.rope.theta),
            lower,
            rope: self.rope,
        }))
    }
}
