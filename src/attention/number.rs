//! How numbers are written for a learner: rounded to the lesson's precision, without noise.

/// Writes `value` with at most `decimals` decimals, trailing zeros trimmed: 0.70710678 → "0.7071"
/// at 4 decimals, 1.0 → "1", -0.00001 → "0". Infinities are written "-inf" / "inf".
pub fn format_number(value: f64, decimals: usize) -> String {
    if value.is_nan() {
        return "NaN".to_string();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    let mut text = format!("{value:.decimals$}");
    if text.contains('.') {
        let trimmed = text.trim_end_matches('0').trim_end_matches('.').len();
        text.truncate(trimmed);
    }
    if text == "-0" {
        text = "0".to_string();
    }
    text
}

/// Writes `value` with exactly `decimals` decimals, for aligned table columns.
pub fn format_fixed(value: f64, decimals: usize) -> String {
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    let text = format!("{value:.decimals$}");
    // "-0.000" reads as a sign error to a learner; the value is zero at this precision.
    if text.starts_with('-') && text[1..].chars().all(|c| c == '0' || c == '.') {
        text[1..].to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_trailing_zeros() {
        assert_eq!(format_number(0.7071239, 4), "0.7071");
        assert_eq!(format_number(1.0, 4), "1");
        assert_eq!(format_number(2.5, 3), "2.5");
        assert_eq!(format_number(-0.00001, 3), "0");
        assert_eq!(format_number(f64::NEG_INFINITY, 3), "-inf");
    }

    #[test]
    fn fixed_keeps_width_and_drops_negative_zero() {
        assert_eq!(format_fixed(0.5, 3), "0.500");
        assert_eq!(format_fixed(-0.0001, 3), "0.000");
        assert_eq!(format_fixed(-1.25, 2), "-1.25");
    }
}
