//! How numbers are written for a learner: rounded to the lesson's precision, without noise.

/// From here on a number is written in scientific notation: 16 digits before the point are
/// more than an f64 holds.
const LARGE: f64 = 1e15;

/// Writes `value` with at most `decimals` decimals, trailing zeros trimmed: 0.70710678 → "0.7071"
/// at 4 decimals, 1.0 → "1", -0.00001 → "0". Infinities are written "-inf" / "inf", and from
/// 1e15 on in scientific notation: -3.4028e38.
pub fn format_number(value: f64, decimals: usize) -> String {
    if value.is_nan() {
        return "NaN".to_string();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    // A mask's bias may be any finite number (f32::MIN, as Hugging Face fills masks): written
    // out it would be 39 digits and more, nearly all of them noise.
    if value.abs() >= LARGE {
        let text = format!("{value:.decimals$e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let mantissa = if mantissa.contains('.') {
            mantissa.trim_end_matches('0').trim_end_matches('.')
        } else {
            mantissa
        };
        return format!("{mantissa}e{exponent}");
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

/// Writes a quantity that may span many orders of magnitude (an exponential, a sum of them)
/// with `decimals` decimals where that shows its meaning, and in scientific notation with at least
/// 4 significant digits where it would not: a fixed print of e^50 shows 22 digits of which those
/// after the 17th are noise, and e^-9 at 3 decimals shows 0. 5.185e21, 1.234e-4.
pub fn format_magnitude(value: f64, decimals: usize) -> String {
    if !value.is_finite() || value == 0.0 {
        return format_number(value, decimals);
    }
    let magnitude = value.abs().log10().floor() as i64;
    // Digits a fixed print shows before the point, plus its decimals: f64 carries about 15
    // meaningful significant digits, and fewer than 2 shown means the value is mostly lost.
    let integer_digits = magnitude.max(0) + 1;
    let shown_significant = magnitude + 1 + decimals as i64;
    if integer_digits + decimals as i64 > 15 || shown_significant < 2 {
        let significant = decimals.max(4);
        format!("{value:.*e}", significant - 1)
    } else {
        format_number(value, decimals)
    }
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
    fn magnitudes_that_fixed_decimals_would_lose_are_written_in_scientific_notation() {
        assert_eq!(format_magnitude(2.0281, 4), "2.0281");
        assert_eq!(format_magnitude(0.0347, 3), "0.035");
        assert_eq!(format_magnitude(1.2341e-4, 3), "1.234e-4");
        assert_eq!(format_magnitude(5.184705528587072e21, 3), "5.185e21");
        assert_eq!(format_magnitude(123456.0, 3), "123456");
        assert_eq!(format_magnitude(0.0, 3), "0");
    }

    #[test]
    fn fixed_keeps_width_and_drops_negative_zero() {
        assert_eq!(format_fixed(0.5, 3), "0.500");
        assert_eq!(format_fixed(-0.0001, 3), "0.000");
        assert_eq!(format_fixed(-1.25, 2), "-1.25");
    }
}
