//! The scores divided by √d_k, so that their spread does not grow with d_k.

use nalgebra::DMatrix;

use super::Operation;
use super::{Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings;

/// Divided by √d_k.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    pub of: MatrixName,
}

impl Operation for Scale {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.of]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!("{} / √d_k", symbol(self.of)))
    }

    fn slips(&self) -> &'static [Variant] {
        &[
            Variant::SkipScale,
            Variant::ScaleByModelWidth,
            Variant::ScaleByAllHeadsWidth,
        ]
    }

    fn evaluate(&self, operands: &Operands, slip: Option<Variant>) -> DMatrix<f64> {
        let scores = operands.get(self.of);
        match slip {
            Some(Variant::SkipScale) => scores.clone(),
            Some(Variant::ScaleByModelWidth) => scores / (operands.model_width as f64).sqrt(),
            Some(Variant::ScaleByAllHeadsWidth) => {
                scores / (operands.scale_divisor * (operands.heads.query as f64).sqrt())
            }
            _ => scores / operands.scale_divisor,
        }
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        Some(Rule::Scale(workings::Scale {
            score: site.operand(self.of, site.cell.row, site.cell.col)?,
            d_k: site.cells.d_k(),
            divisor: site.cells.scale_divisor(),
        }))
    }
}
