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
    if let Some(text) = written_arithmetically(value, decimals) {
        return text;
    }
    written_by_format(value, decimals)
}

/// `format!`'s exact decimal expansion of `value`, trailing zeros trimmed: what
/// `format_number` writes where rounding arithmetically cannot be trusted.
fn written_by_format(value: f64, decimals: usize) -> String {
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

/// `format_number`'s text made from the rounded integer, where that is the text: `value` ×
/// 10^decimals rounds to the same integer as the exact decimal expansion away from a tie
/// (10^decimals is exact, rounding is monotonic and every k + ½ below 2^52 is a float), so
/// the digits are that integer's. Near a tie only the exact expansion decides: `None`. Writing
/// through `format!` took most of `show --format json`'s time (its exact mode falls back to
/// big-number arithmetic).
fn written_arithmetically(value: f64, decimals: usize) -> Option<String> {
    let mut place = [0u8; DIGITS_ROOM];
    digits_of(value, decimals, true, &mut place).map(str::to_string)
}

/// Room for the most `digits_of` writes: a sign, 16 digits and the point (|scaled| < 1e15 has
/// at most 15 digits; with all `decimals` kept, at most 15 of them and one before the point).
const DIGITS_ROOM: usize = 24;

/// The text of `value` at `decimals` made from the rounded integer (see
/// `written_arithmetically`), into `place`, with no allocation: trailing zeros trimmed and a
/// zero unsigned (`format_number`'s way) when `trim`, else every decimal kept and a zero
/// unsigned (`format_fixed`'s way). `None` near a tie or past the integers f64 holds.
fn digits_of(
    value: f64,
    decimals: usize,
    trim: bool,
    place: &mut [u8; DIGITS_ROOM],
) -> Option<&str> {
    if decimals > 15 {
        return None;
    }
    let scaled = value * power_of_ten(decimals);
    if !scaled.is_finite()
        || scaled.abs() >= 1e15
        || ((scaled - scaled.floor()) - 0.5).abs() <= 1e-6
    {
        return None;
    }
    // Exact: |scaled| < 1e15 < 2^53.
    let mut digits = scaled.abs().round() as u64;
    let negative = value < 0.0 && digits != 0;
    let mut decimals = decimals;
    if trim {
        if digits == 0 {
            place[0] = b'0';
            return std::str::from_utf8(&place[..1]).ok();
        }
        while decimals > 0 && digits.is_multiple_of(10) {
            digits /= 10;
            decimals -= 1;
        }
    }
    // Written from the last digit back, the point after `decimals` of them, and at least one
    // digit before it ("0.05"): one piece of text, without `format!`'s machinery.
    let mut start = place.len();
    let mut written = 0;
    loop {
        if decimals > 0 && written == decimals {
            start -= 1;
            place[start] = b'.';
        }
        start -= 1;
        place[start] = b'0' + (digits % 10) as u8;
        digits /= 10;
        written += 1;
        if digits == 0 && written > decimals {
            break;
        }
    }
    if negative {
        start -= 1;
        place[start] = b'-';
    }
    std::str::from_utf8(&place[start..]).ok()
}

/// Appends `format_number(value, decimals)` to `text`, without a string of its own where the
/// digits can be made arithmetically: a working writes thousands of operands.
pub(crate) fn push_number(text: &mut String, value: f64, decimals: usize) {
    let mut place = [0u8; DIGITS_ROOM];
    if value.abs() < LARGE
        && let Some(digits) = digits_of(value, decimals, true, &mut place)
    {
        text.push_str(digits);
    } else {
        text.push_str(&format_number(value, decimals));
    }
}

/// Whether `format_number(value, decimals)` is `text`, without writing it into a string where
/// the digits can be made arithmetically (a working tries several decimals for its operands).
pub(crate) fn number_is(value: f64, decimals: usize, text: &str) -> bool {
    let mut place = [0u8; DIGITS_ROOM];
    if value.abs() < LARGE
        && let Some(digits) = digits_of(value, decimals, true, &mut place)
    {
        digits == text
    } else {
        format_number(value, decimals) == text
    }
}

/// Writes a quantity that may span many orders of magnitude (an exponential, a sum of them)
/// with `decimals` decimals where that shows its meaning, and in scientific notation with at least
/// 4 significant digits where it would not: a fixed print of e^50 shows 22 digits of which those
/// after the 17th are noise, and e^-9 at 3 decimals shows 0; from 10,000 up a number with a
/// fraction is written so too. 5.185e21, 6.714e9, 1.234e-4.
pub(crate) fn format_magnitude(value: f64, decimals: usize) -> String {
    if !value.is_finite() || value == 0.0 {
        return format_number(value, decimals);
    }
    match scientific_digits(value, decimals) {
        Some(significant) => format!("{value:.*e}", significant - 1),
        None => format_number(value, decimals),
    }
}

/// The significant digits `format_magnitude` writes `value` with in scientific notation, or
/// `None` when it writes it with fixed decimals.
fn scientific_digits(value: f64, decimals: usize) -> Option<usize> {
    if !value.is_finite() || value == 0.0 {
        return None;
    }
    let magnitude = value.abs().log10().floor() as i64;
    // Digits a fixed print shows before the point, plus its decimals: f64 carries about 15
    // meaningful significant digits, and fewer than 2 shown means the value is mostly lost.
    let integer_digits = magnitude.max(0) + 1;
    let shown_significant = magnitude + 1 + decimals as i64;
    // From 10,000 up, a fraction's fixed print has more digits than anyone redoes by hand, and
    // an exponential written that way would need its exponent to as many digits to land.
    let long_fraction = magnitude >= 4 && value.fract() != 0.0;
    (integer_digits + decimals as i64 > 15 || shown_significant < 2 || long_fraction)
        .then_some(decimals.max(4))
}

/// 10^decimals, read from a table up to 10^22 (each exactly an f64, as `powi`'s product is for
/// these) rather than multiplied out: every candidate decimals of every operand asks for one.
fn power_of_ten(decimals: usize) -> f64 {
    const POWERS: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    POWERS
        .get(decimals)
        .copied()
        .unwrap_or_else(|| 10f64.powi(decimals.min(i32::MAX as usize) as i32))
}

/// The number `format_number(value, decimals)` writes, read back, without writing it when that
/// is safe: away from a tie the rounded product is the written number (the division of two
/// exact integers rounds as parsing does); within a hair of one, or past the integers f64 holds,
/// only the written text knows, and it is written. A working searches many candidate decimals
/// per operand, and writing each was most of `show`'s time.
pub(crate) fn shown_number(value: f64, decimals: usize) -> f64 {
    if decimals <= 15 {
        let scale = power_of_ten(decimals);
        let scaled = value * scale;
        if scaled.abs() < 1e15 && ((scaled - scaled.floor()) - 0.5).abs() > 1e-6 {
            return scaled.round() / scale;
        }
    }
    format_number(value, decimals).parse().unwrap_or(value)
}

/// Whether `a` and `b` are written as the same number at `decimals` (`format_number`'s texts
/// are equal), without writing them.
pub(crate) fn written_alike(a: f64, b: f64, decimals: usize) -> bool {
    if a.is_finite() && b.is_finite() {
        shown_number(a, decimals) == shown_number(b, decimals)
    } else {
        format_number(a, decimals) == format_number(b, decimals)
    }
}

/// About the number `format_number(value, decimals)` writes, without writing it: a fast
/// estimate for choosing among many candidate precisions (it can differ on an exact tie, so a
/// choice made with it is checked with the written text).
pub(crate) fn rounded(value: f64, decimals: usize) -> f64 {
    let scale = power_of_ten(decimals);
    let scaled = (value * scale).round_ties_even() / scale;
    if scaled.is_finite() { scaled } else { value }
}

/// About the number `format_magnitude(value, decimals)` writes, as `rounded` is to
/// `format_number`.
pub(crate) fn magnitude_rounded(value: f64, decimals: usize) -> f64 {
    match scientific_digits(value, decimals) {
        Some(significant) => {
            let magnitude = value.abs().log10().floor() as i32;
            let scale = 10f64.powi(significant as i32 - 1 - magnitude);
            let scaled = (value * scale).round_ties_even() / scale;
            if scaled.is_finite() { scaled } else { value }
        }
        None => rounded(value, decimals),
    }
}

/// Writes `value` with exactly `decimals` decimals, for aligned table columns.
pub fn format_fixed(value: f64, decimals: usize) -> String {
    // `format!`'s exact expansion is slow; away from a tie the rounded integer's digits are
    // the same text.
    let mut place = [0u8; DIGITS_ROOM];
    if let Some(digits) = digits_of(value, decimals, false, &mut place) {
        return digits.to_string();
    }
    fixed_by_format(value, decimals)
}

/// `format!`'s exact expansion with exactly `decimals` decimals: what `format_fixed` writes
/// where rounding arithmetically cannot be trusted.
fn fixed_by_format(value: f64, decimals: usize) -> String {
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

    /// The table of powers of ten is the product `powi` makes, so a number is written and
    /// rounded as it was, at every number of decimals.
    #[test]
    fn the_powers_of_ten_are_powis() {
        for decimals in 0..40 {
            assert_eq!(
                power_of_ten(decimals).to_bits(),
                10f64.powi(decimals as i32).to_bits(),
                "10^{decimals}"
            );
        }
    }

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
        assert_eq!(format_magnitude(6713706352.818, 4), "6.714e9");
        assert_eq!(format_magnitude(9999.5, 2), "9999.5");
        assert_eq!(format_magnitude(0.0, 3), "0");
    }

    #[test]
    fn a_shown_number_is_the_written_number_read_back_ties_and_all() {
        let values = [
            0.125,
            0.375,
            2.5,
            -0.125,
            0.0625,
            0.70710679,
            -22.627417,
            1e17,
            1.2341e-4,
            -0.00001,
            0.1 + 0.2,
            1.0 / 3.0,
            123456.789,
        ];
        for value in values {
            for decimals in 0..10 {
                let written = format_number(value, decimals);
                assert_eq!(
                    shown_number(value, decimals),
                    written.parse::<f64>().unwrap(),
                    "{value} {decimals}"
                );
                assert!(written_alike(value, written.parse().unwrap(), decimals));
            }
        }
        assert!(!written_alike(0.1234, 0.1236, 3));
        assert!(written_alike(-0.00001, 0.0, 3));
    }

    #[test]
    fn the_fast_estimates_agree_with_the_written_numbers_away_from_ties() {
        for value in [
            0.70710679,
            -22.627417,
            6713706352.818,
            1.2341e-4,
            3.0,
            -0.00001,
        ] {
            for decimals in 0..8 {
                let written: f64 = format_number(value, decimals).parse().unwrap();
                assert!((rounded(value, decimals) - written).abs() <= 1e-12 * value.abs().max(1.0));
                let written: f64 = format_magnitude(value, decimals).parse().unwrap();
                let estimate = magnitude_rounded(value, decimals);
                assert!(
                    (estimate - written).abs() <= 1e-12 * value.abs().max(1.0),
                    "{value} {decimals}"
                );
            }
        }
    }

    #[test]
    fn rounding_arithmetically_writes_what_the_exact_expansion_writes() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(29);
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            0.125,
            0.375,
            0.05,
            0.15,
            0.25,
            0.35,
            1e-9,
            -1e-9,
            0.1 + 0.2,
            1.0 / 3.0,
            2.0 / 3.0,
            999.9995,
            999999.5,
            123456789.123456,
            1e14 + 0.5,
            9.999999e14,
            -9.999999e14,
            0.6180339,
            -22.627417,
            4.1133,
            1.2649,
            0.0001,
        ];
        for _ in 0..20_000 {
            let mantissa: f64 = rng.random_range(-1.0..1.0);
            let exponent: i32 = rng.random_range(-12..15);
            values.push(mantissa * 10f64.powi(exponent));
            // Numbers written with few decimals, whose neighbours are ties and near-ties.
            let places: i32 = rng.random_range(0..9);
            let whole: i64 = rng.random_range(-1_000_000..1_000_000);
            values.push(whole as f64 / 10f64.powi(places));
            values.push((whole as f64 + 0.5) / 10f64.powi(places));
        }
        values.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e15, -3.4028e38]);
        for value in values {
            for decimals in 0..=16 {
                let by_format = written_by_format(value, decimals);
                if value.is_finite() && value.abs() < LARGE {
                    assert_eq!(
                        format_number(value, decimals),
                        by_format,
                        "{value:e} at {decimals} decimals"
                    );
                }
                // Appended and compared without a string of their own, the same text.
                let number = format_number(value, decimals);
                let mut appended = String::from("(");
                push_number(&mut appended, value, decimals);
                assert_eq!(appended, format!("({number}"), "{value:e} at {decimals}");
                assert!(
                    number_is(value, decimals, &number),
                    "{value:e} at {decimals}"
                );
                assert!(!number_is(value, decimals, &format!("{number}1")));
                assert_eq!(
                    format_fixed(value, decimals),
                    fixed_by_format(value, decimals),
                    "{value:e} at {decimals} decimals, fixed"
                );
            }
        }
    }

    #[test]
    fn fixed_keeps_width_and_drops_negative_zero() {
        assert_eq!(format_fixed(0.5, 3), "0.500");
        assert_eq!(format_fixed(-0.0001, 3), "0.000");
        assert_eq!(format_fixed(-1.25, 2), "-1.25");
    }
}
