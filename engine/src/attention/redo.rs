//! What a learner gets who redoes a cell from its operands as the matrices on screen show them:
//! practice counts that answer right, since the learner did the arithmetic right and only the
//! screen's rounding moved the last digit.

use super::derivation::Derivation;
use crate::workings::Working;

impl Derivation {
    /// The cell's working redone from its operands rounded to `decimals`, as the screen shows
    /// them; `None` for a working whose operands the screen does not show side by side (an
    /// input, the sinusoid's angle, the online softmax's and the backward pass's own workings).
    pub(crate) fn redone_from_shown(&self, decimals: usize) -> Option<f64> {
        self.rule.redone_from_shown(decimals)
    }
}
