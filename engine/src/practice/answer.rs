//! A prediction as the learner typed it: its number, and the precision it was typed to, which
//! decides how close it must be (0.707 is right for 1/√2 even where the lesson shows 0.7071).

/// The fewest decimals, and the fewest significant digits, an answer must be typed with to be
/// judged at its own precision rather than the lesson's: "0.7" is too rough for 0.7071, and
/// "0.00" says nothing about 0.0031.
pub(crate) const MIN_TYPED_DECIMALS: usize = 2;
const MIN_SIGNIFICANT_DIGITS: usize = 2;

/// A typed prediction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Answer {
    pub value: f64,
    /// The decimals typed, when there are enough of them (and enough significant digits) for
    /// the answer to be judged at that precision; `None` for "-inf", for numbers in exponent
    /// form, and for rough answers, which are judged at the lesson's precision.
    pub typed_decimals: Option<usize>,
}

impl Answer {
    /// Reads a typed prediction: a number, or −∞ for a masked cell. The error says what would
    /// be right.
    pub fn parse(typed: &str) -> Result<Answer, String> {
        let text = typed.trim().replace('−', "-");
        let value = match text.as_str() {
            "" => return Err("type a number, or press Esc".to_string()),
            "-inf" | "-∞" | "-infinity" => f64::NEG_INFINITY,
            _ => {
                // Made printable: a zero-width or bidi character pasted with a number is what
                // makes it no number, and would not show in the message as it is.
                let shown = crate::lesson::text::printable(typed.trim());
                match text.parse::<f64>() {
                    Ok(value) if value.is_finite() => value,
                    // 1e999 reads as a number, one too large for any cell to be.
                    Ok(value) if !value.is_nan() && !text.to_ascii_lowercase().contains("inf") => {
                        return Err(format!(
                            "“{shown}” is too large to be any cell's value; type a finite number"
                        ));
                    }
                    _ => return Err(format!("“{shown}” is not a number (like 0.25 or -1.5)")),
                }
            }
        };
        Ok(Answer {
            value,
            typed_decimals: value.is_finite().then(|| precision(&text)).flatten(),
        })
    }

    /// A number given directly, judged at the lesson's precision.
    pub(crate) fn exactly(value: f64) -> Answer {
        Answer {
            value,
            typed_decimals: None,
        }
    }
}

/// The decimals in a plain decimal number ("0.707" has 3), when it has at least
/// `MIN_TYPED_DECIMALS` of them and `MIN_SIGNIFICANT_DIGITS` significant digits.
fn precision(text: &str) -> Option<usize> {
    let digits = text.trim_start_matches(['-', '+']);
    if !digits.chars().all(|ch| ch.is_ascii_digit() || ch == '.') {
        // Exponent form ("7.07e-1") says its precision another way; the lesson's is used.
        return None;
    }
    let (_, decimals) = digits.split_once('.')?;
    let significant = digits
        .chars()
        .filter(char::is_ascii_digit)
        .skip_while(|ch| *ch == '0')
        .count();
    (decimals.len() >= MIN_TYPED_DECIMALS && significant >= MIN_SIGNIFICANT_DIGITS)
        .then_some(decimals.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimals(typed: &str) -> Option<usize> {
        Answer::parse(typed).unwrap().typed_decimals
    }

    #[test]
    fn a_number_too_large_is_told_so_and_nonsense_is_told_it_is_no_number() {
        let large = Answer::parse("1e999").unwrap_err();
        assert!(large.contains("too large"), "{large}");
        for typed in ["abc", "nan", "inf", "+inf", "1x"] {
            let said = Answer::parse(typed).unwrap_err();
            assert!(said.contains("is not a number"), "{typed}: {said}");
        }
    }

    #[test]
    fn the_precision_typed_counts_decimals_with_enough_significant_digits() {
        assert_eq!(decimals("0.707"), Some(3));
        assert_eq!(decimals("-1.25"), Some(2));
        assert_eq!(decimals("12.50"), Some(2));
        assert_eq!(decimals("0.0031"), Some(4));
        assert_eq!(decimals("0.7"), None, "one decimal is too rough");
        assert_eq!(decimals("0.00"), None, "no significant digit");
        assert_eq!(decimals("0.003"), None, "one significant digit");
        assert_eq!(decimals("7"), None);
        assert_eq!(decimals("7.07e-1"), None);
        assert_eq!(decimals("-inf"), None);
    }

    #[test]
    fn a_number_refused_for_a_character_that_does_not_show_names_it() {
        assert_eq!(
            Answer::parse("0.346\u{200b}"),
            Err("“0.346\\u{200b}” is not a number (like 0.25 or -1.5)".to_string())
        );
    }
}
