//! What a learner gets who redoes a cell from its operands as the matrices on screen show them:
//! practice counts that answer right, since the learner did the arithmetic right and only the
//! screen's rounding moved the last digit.

use super::derivation::Derivation;
use super::landing::shown;
use crate::ops::Rule;

impl Derivation {
    /// The cell's rule worked out from its operands rounded to `decimals`, as the screen shows
    /// them; `None` for a rule whose operands the screen does not show side by side (an input,
    /// the sinusoid's angle, the online softmax's and the backward pass's own workings).
    pub(crate) fn redone_from_shown(&self, decimals: usize) -> Option<f64> {
        let at = |value: f64| shown(value, decimals);
        match &self.rule {
            Rule::Dot { terms, .. } => Some(
                terms
                    .iter()
                    .map(|(left, right)| at(left.value) * at(right.value))
                    .sum(),
            ),
            Rule::Add { left, right } => Some(at(left.value) + at(right.value)),
            Rule::Rotate {
                first,
                second,
                angle,
                lower,
                ..
            } => {
                let (sin, cos) = angle.sin_cos();
                Some(if *lower {
                    at(first.value) * cos - at(second.value) * sin
                } else {
                    at(first.value) * sin + at(second.value) * cos
                })
            }
            Rule::Scale { score, divisor, .. } => Some(at(score.value) / divisor),
            Rule::Mask { score, mask } => Some(at(score.value) + at(mask.value)),
            Rule::Softmax { row, selected, .. } => {
                let scores: Vec<f64> = row.iter().map(|score| at(score.value)).collect();
                let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let exps: Vec<f64> = scores.iter().map(|score| (score - max).exp()).collect();
                let sum: f64 = exps.iter().sum();
                (sum > 0.0).then(|| exps[*selected] / sum)
            }
            Rule::Concat { from } | Rule::TokenRow { from } | Rule::Cached { from, .. } => {
                Some(at(from.value))
            }
            Rule::Input
            | Rule::Sinusoid { .. }
            | Rule::FullyMasked { .. }
            | Rule::Online(_)
            | Rule::Backward(_) => None,
        }
    }
}
