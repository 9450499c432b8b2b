//! The norm before the projections, row by row: LayerNorm, (x − mean) / √(var + ε) · γ + β
//! (GPT-2), or RMSNorm, x / √(mean(x²) + ε) · γ (Llama), so that every token enters the
//! projections at the same scale whatever the size of its vector.

use nalgebra::DMatrix;

use super::Operation;
use super::{Operands, Rule, Site, Variant};
use crate::matrices::{MatrixName, NormKind};
use crate::workings;

/// Each row of `of` normalised, then scaled by the gain γ (and, for LayerNorm, shifted by the
/// bias β), one of each per column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Norm {
    pub of: MatrixName,
    pub kind: NormKind,
}

/// What a row is divided by, before ε: its variance about its mean (LayerNorm) or its mean of
/// squares (RMSNorm), with the mean taken off (0 for RMSNorm). The variance divides by n, as
/// `nn.LayerNorm` does; `sample` divides by n − 1, the slip of `torch.var`'s default.
pub(crate) fn row_stats(row: &[f64], kind: NormKind, sample: bool) -> (f64, f64) {
    let n = row.len().max(1) as f64;
    match kind {
        NormKind::Layer => {
            let mean = row.iter().sum::<f64>() / n;
            let squares = row.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
            let divisor = if sample { (n - 1.0).max(1.0) } else { n };
            (mean, squares / divisor)
        }
        NormKind::Rms => (0.0, row.iter().map(|x| x * x).sum::<f64>() / n),
    }
}

/// Column `col` of a gain or bias vector; `default` where the lesson gives none (γ = 1, β = 0).
fn at(vector: &DMatrix<f64>, col: usize, default: f64) -> f64 {
    if vector.nrows() == 1 && col < vector.ncols() {
        vector[(0, col)]
    } else {
        default
    }
}

impl Operation for Norm {
    fn operands(&self) -> Vec<MatrixName> {
        match self.kind {
            NormKind::Layer => vec![self.of, MatrixName::NormGain, MatrixName::NormBias],
            NormKind::Rms => vec![self.of, MatrixName::NormGain],
        }
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(match self.kind {
            NormKind::Layer => format!("LayerNorm({})", symbol(self.of)),
            NormKind::Rms => format!("RMSNorm({})", symbol(self.of)),
        })
    }

    fn slips(&self) -> &'static [Variant] {
        match self.kind {
            NormKind::Layer => &[Variant::SampleVariance],
            NormKind::Rms => &[Variant::MeanTakenOff],
        }
    }

    fn evaluate(&self, operands: &Operands, slip: Option<Variant>) -> DMatrix<f64> {
        let of = operands.get(self.of);
        let gain = operands.get(MatrixName::NormGain);
        let bias = match self.kind {
            NormKind::Layer => operands.get(MatrixName::NormBias),
            NormKind::Rms => super::empty(),
        };
        let sample = slip == Some(Variant::SampleVariance);
        // LayerNorm's habit: the mean taken off an RMSNorm's row (β stays 0: RMSNorm has none).
        let kind = match slip {
            Some(Variant::MeanTakenOff) => NormKind::Layer,
            _ => self.kind,
        };
        let mut normed = of.clone_owned();
        for (row, mut out) in of.row_iter().zip(normed.row_iter_mut()) {
            let values: Vec<f64> = row.iter().copied().collect();
            let (mean, spread) = row_stats(&values, kind, sample);
            let divisor = (spread + operands.norm_epsilon).sqrt();
            for (col, (cell, x)) in out.iter_mut().zip(values).enumerate() {
                *cell = (x - mean) / divisor * at(gain, col, 1.0) + at(bias, col, 0.0);
            }
        }
        normed
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let (row, col) = (site.cell.row, site.cell.col);
        let values = (0..site.width)
            .map(|c| site.operand(self.of, row, c))
            .collect::<Option<Vec<_>>>()?;
        let numbers: Vec<f64> = values.iter().map(|operand| operand.value).collect();
        let (mean, spread) = row_stats(&numbers, self.kind, false);
        let sum = numbers.iter().sum();
        let squares = match self.kind {
            NormKind::Layer => numbers.iter().map(|x| (x - mean).powi(2)).sum(),
            NormKind::Rms => numbers.iter().map(|x| x * x).sum(),
        };
        Some(Rule::Norm(workings::Norm {
            kind: self.kind,
            x: values.get(col).copied()?,
            row: values.iter().map(|operand| operand.cell).collect(),
            sum,
            mean,
            squares,
            spread,
            epsilon: site.cells.norm_epsilon(),
            gain: site.operand(MatrixName::NormGain, 0, col),
            bias: match self.kind {
                NormKind::Layer => site.operand(MatrixName::NormBias, 0, col),
                NormKind::Rms => None,
            },
        }))
    }
}
