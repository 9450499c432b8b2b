//! What every kind of working is written with: the decimals its operands (`crate::ops::Operand`,
//! a number in its cell) are given so that the arithmetic, redone as written, lands on the
//! result. Forward, online and backward workings all use it; it uses none of them.

use super::number::{format_number, shown_number, written_alike};

/// Decimals an operand may be given beyond the lesson's, for its arithmetic to land.
pub(crate) const EXTRA_OPERAND_DECIMALS: usize = 6;

/// A number as a learner reads it off the screen at `d` decimals.
pub(crate) fn shown(value: f64, d: usize) -> f64 {
    shown_number(value, d)
}

/// The fewest decimals (the lesson's at least) with which the operands, as written, work out to
/// `result` as written; `None` when no number of decimals does.
pub(crate) fn landing_digits(
    decimals: usize,
    result: &str,
    worked_at: impl Fn(usize) -> f64,
) -> Option<usize> {
    match result.parse::<f64>() {
        Ok(target) if target.is_finite() => (decimals..=decimals + EXTRA_OPERAND_DECIMALS)
            .find(|&d| written_alike(worked_at(d), target, decimals)),
        _ => (decimals..=decimals + EXTRA_OPERAND_DECIMALS)
            .find(|&d| format_number(worked_at(d), decimals) == result),
    }
}

/// The operands' decimals and the result as written: with `found` decimals the arithmetic lands
/// on the result; when no number of decimals makes it land (a sum of many rounded terms), the
/// most are shown and the result is marked ≈.
pub(crate) fn written(found: Option<usize>, decimals: usize, result: &str) -> (usize, String) {
    match found {
        Some(d) => (d, result.to_string()),
        None => (decimals + EXTRA_OPERAND_DECIMALS, format!("≈ {result}")),
    }
}

/// One number of a pair turned by an angle (RoPE forward, and its gradient turned back): the
/// pair's two numbers, each with its factor (a sine or cosine, signed) and how the factor is
/// written.
pub(crate) struct Turned<'a> {
    pub first: (String, f64),
    pub second: (String, f64),
    pub first_factor: (&'a str, f64),
    pub second_factor: (&'a str, f64),
    /// The second term is subtracted (its factor is written unsigned).
    pub minus: bool,
}

impl Turned<'_> {
    /// The working's lines: the formula, the numbers, the result, with the operands written
    /// with as many decimals as make the arithmetic land on `result`.
    pub(crate) fn lines(&self, decimals: usize, result: &str) -> Vec<Vec<String>> {
        let sign = if self.minus { "−" } else { "+" };
        let second_sign = if self.minus { -1.0 } else { 1.0 };
        let worked = |d: usize| {
            shown(self.first.1, d) * shown(self.first_factor.1, d)
                + second_sign * shown(self.second.1, d) * shown(self.second_factor.1, d)
        };
        let found = landing_digits(decimals, result, worked);
        let (d, result) = written(found, decimals, result);
        vec![
            vec![format!(
                "{}·{} {sign} {}·{}",
                self.first.0, self.first_factor.0, self.second.0, self.second_factor.0
            )],
            vec![format!(
                "({} × {}) {sign} ({} × {})",
                format_number(self.first.1, d),
                format_number(self.first_factor.1, d),
                format_number(self.second.1, d),
                format_number(self.second_factor.1, d)
            )],
            vec![result],
        ]
    }
}
