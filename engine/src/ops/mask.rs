//! The mask added to the scores: 0 keeps a key, -inf hides it, another number is a bias.

use nalgebra::DMatrix;

use super::Operation;
use super::{Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings;

/// The mask added: 0 keeps, -inf hides, another number is a bias.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mask {
    pub of: MatrixName,
    pub mask: MatrixName,
}

impl Operation for Mask {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.of, self.mask]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!("{} + {}", symbol(self.of), symbol(self.mask)))
    }

    fn slips(&self) -> &'static [Variant] {
        &[Variant::SkipMask]
    }

    fn evaluate(&self, operands: &Operands, slip: Option<Variant>) -> DMatrix<f64> {
        match slip {
            Some(Variant::SkipMask) => operands.get(self.of).clone(),
            _ => operands.get(self.of) + operands.get(self.mask),
        }
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let (row, col) = (site.cell.row, site.cell.col);
        Some(Rule::Mask(workings::Mask {
            score: site.operand(self.of, row, col)?,
            mask: site.operand(self.mask, row, col)?,
        }))
    }
}
