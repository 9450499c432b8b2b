//! Layer normalisation of each row (no γ, β): x̂ = (x − mean(x)) / √(var(x) + ε), so every
//! token enters the projections with mean 0 and variance 1 whatever the scale of its vector.

use nalgebra::DMatrix;

use super::Operation;
use super::{Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings;

/// PyTorch's `nn.LayerNorm` default: keeps a constant row from dividing by zero.
pub(crate) const EPSILON: f64 = 1e-5;

/// Each row normalised to mean 0 and variance 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerNorm {
    pub of: MatrixName,
}

/// The mean and the variance (divided by n, not n − 1) of a row, as `nn.LayerNorm` takes them;
/// `sample` divides by n − 1, the slip of `torch.var`'s default.
pub(crate) fn row_stats(row: &[f64], sample: bool) -> (f64, f64) {
    let n = row.len().max(1) as f64;
    let mean = row.iter().sum::<f64>() / n;
    let squares = row.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
    let divisor = if sample { (n - 1.0).max(1.0) } else { n };
    (mean, squares / divisor)
}

impl Operation for LayerNorm {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.of]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!("LN({})", symbol(self.of)))
    }

    fn slips(&self) -> &'static [Variant] {
        &[Variant::SampleVariance]
    }

    fn evaluate(&self, operands: &Operands, slip: Option<Variant>) -> DMatrix<f64> {
        let of = operands.get(self.of);
        let sample = slip == Some(Variant::SampleVariance);
        let mut normed = of.clone_owned();
        for (row, mut out) in of.row_iter().zip(normed.row_iter_mut()) {
            let values: Vec<f64> = row.iter().copied().collect();
            let (mean, variance) = row_stats(&values, sample);
            let deviation = (variance + EPSILON).sqrt();
            for (cell, x) in out.iter_mut().zip(values) {
                *cell = (x - mean) / deviation;
            }
        }
        normed
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let row = (0..site.width)
            .map(|col| site.operand(self.of, site.cell.row, col))
            .collect::<Option<Vec<_>>>()?;
        let values: Vec<f64> = row.iter().map(|operand| operand.value).collect();
        let (mean, variance) = row_stats(&values, false);
        Some(Rule::LayerNorm(workings::LayerNorm {
            row,
            selected: site.cell.col,
            mean,
            variance,
            epsilon: EPSILON,
        }))
    }
}
