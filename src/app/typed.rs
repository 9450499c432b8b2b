//! Reading what the learner typed into the edit prompt: a number for a cell, or a token label.
//! The limits are the lesson format's own, so an edited lesson always saves as a valid file.

use crate::attention::MatrixName;
use crate::lesson::limits::MAX_ABS_VALUE;
use crate::lesson::text::{LABEL_ROOM, TooLarge, clean_text, printable};

/// The number typed for a cell of `matrix`, or what is wrong with it.
pub fn cell_value(matrix: MatrixName, typed: &str) -> Result<f64, String> {
    // A typographic minus, as pasted from a document, means the same as '-'.
    let text = typed.trim().replace('\u{2212}', "-");
    let shown = printable(typed.trim());
    if text.is_empty() {
        return Err("nothing typed; type a number".to_string());
    }
    let lower = text.to_ascii_lowercase();
    // A mask cell is an additive bias: -inf hides the key, a finite number shifts its score.
    if matrix == MatrixName::Mask && matches!(lower.as_str(), "-inf" | "-infinity") {
        return Ok(f64::NEG_INFINITY);
    }
    let mask = matrix == MatrixName::Mask;
    // Kept short: with the prompt's "(old value kept: fix it, or Esc)" it must fit two rows of
    // an 80-column screen.
    let mask_help = if mask {
        ": a mask cell is 0 to keep the score, -inf to hide the key, or a finite bias"
    } else {
        ""
    };
    if lower.contains("nan") {
        return Err(if mask {
            format!("NaN is not a number{mask_help}")
        } else {
            "NaN is not a number a lesson can hold; type a finite number".to_string()
        });
    }
    if lower.contains("inf") {
        return Err(if mask {
            format!("`{shown}` is not -inf{mask_help}")
        } else {
            format!("`{shown}` is infinite; only a mask cell may be -inf. Type a finite number")
        });
    }
    let value: f64 = text.parse().map_err(|_| {
        if mask {
            format!("`{shown}` is not a number{mask_help}")
        } else {
            format!("`{shown}` is not a number; type something like 0.5, -2 or 1e-3")
        }
    })?;
    // A mask's bias is only added to a score: any finite size is allowed, as in -1e9 fills.
    if value.is_infinite() {
        return Err(if mask && value < 0.0 {
            format!("{shown} is too large to be a finite number; type -inf to hide the key")
        } else if mask {
            format!("{shown} is too large to be a finite number; type a finite bias")
        } else {
            format!(
                "{shown} is too large to be a finite number; lesson numbers stay within ±{MAX_ABS_VALUE}"
            )
        });
    }
    // Below about 1e-308 a number reads as 0: say so rather than store 0 unasked.
    let mantissa = lower.split('e').next().unwrap_or("");
    if value == 0.0 && mantissa.bytes().any(|byte| matches!(byte, b'1'..=b'9')) {
        return Err(format!(
            "{shown} is too small to hold: it would be 0. Type 0, or a number of at least 1e-300"
        ));
    }
    if value.abs() > MAX_ABS_VALUE && !mask {
        return Err(format!(
            "{shown} is out of range; lesson numbers stay within ±{MAX_ABS_VALUE}"
        ));
    }
    // -0 would print as "-0" in a saved file for no reason a learner would see.
    Ok(if value == 0.0 { 0.0 } else { value })
}

/// The token label typed, or what is wrong with it.
pub fn token_label(typed: &str) -> Result<String, String> {
    let label = clean_text(typed, false)
        .map_err(|problem| format!("in a token label, {}", problem.describe()))?;
    let label = label.trim().to_string();
    if label.is_empty() {
        return Err("a token label needs at least one visible character".to_string());
    }
    LABEL_ROOM.check(&label).map_err(|problem| match problem {
        // A label that fits in bytes is short enough to echo.
        TooLarge::Columns { .. } => problem.describe(&format!("`{}`", printable(&label))),
        TooLarge::Bytes { .. } => problem.describe("the label"),
    })?;
    Ok(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_the_usual_spellings_are_read() {
        assert_eq!(cell_value(MatrixName::WQ, " 0.5 "), Ok(0.5));
        assert_eq!(cell_value(MatrixName::WQ, "−2"), Ok(-2.0));
        assert_eq!(cell_value(MatrixName::WQ, "1e-3"), Ok(0.001));
        assert_eq!(cell_value(MatrixName::WQ, "-0"), Ok(0.0));
    }

    #[test]
    fn a_number_too_small_to_hold_is_refused_rather_than_stored_as_0() {
        let said = cell_value(MatrixName::Embeddings, "1e-400").unwrap_err();
        assert!(said.contains("too small to hold: it would be 0"), "{said}");
        assert_eq!(cell_value(MatrixName::Embeddings, "0e-400"), Ok(0.0));
        assert_eq!(cell_value(MatrixName::Embeddings, "0.000"), Ok(0.0));
        assert!(cell_value(MatrixName::Embeddings, "1e-300").unwrap() > 0.0);
    }

    #[test]
    fn a_mask_cells_refusals_say_what_a_mask_cell_takes_in_two_rows_of_80_columns() {
        let kept = " (old value kept: fix it, or Esc)";
        for typed in ["inf", "+inf", "abc", "-1e999", "1e999", "nan"] {
            let said = cell_value(MatrixName::Mask, typed).unwrap_err();
            assert!(!said.contains("only mask cells"), "{said}");
            assert!(!said.contains("smaller"), "{said}");
            let line = format!(" mask[snow, sun]: {said}{kept}");
            assert!(
                line.chars().count() <= 2 * 79,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        let said = cell_value(MatrixName::Mask, "-1e999").unwrap_err();
        assert!(said.contains("type -inf to hide the key"), "{said}");
    }

    #[test]
    fn nonsense_nan_infinity_and_huge_numbers_are_refused() {
        for typed in ["abc", "NaN", "inf", "-inf", "2e6", "", "1,5"] {
            assert!(
                cell_value(MatrixName::Embeddings, typed).is_err(),
                "{typed}"
            );
        }
    }

    #[test]
    fn a_mask_cell_takes_minus_infinity_or_any_finite_bias() {
        assert_eq!(cell_value(MatrixName::Mask, "-inf"), Ok(f64::NEG_INFINITY));
        assert_eq!(cell_value(MatrixName::Mask, "0"), Ok(0.0));
        assert_eq!(cell_value(MatrixName::Mask, "1"), Ok(1.0));
        assert_eq!(cell_value(MatrixName::Mask, "-1e6"), Ok(-1e6));
        assert_eq!(cell_value(MatrixName::Mask, "−0.5"), Ok(-0.5));
        // A tutorial's -1e9 and f32::MIN: a mask's bias is only added, so any size is fine.
        assert_eq!(cell_value(MatrixName::Mask, "-1e9"), Ok(-1e9));
        assert_eq!(
            cell_value(MatrixName::Mask, "-3.4028235e38"),
            Ok(-3.4028235e38)
        );
        for typed in ["-1e400", "inf", "nan", "abc", ""] {
            assert!(cell_value(MatrixName::Mask, typed).is_err(), "{typed}");
        }
        assert!(
            cell_value(MatrixName::Mask, "-1e400")
                .unwrap_err()
                .contains("-inf to hide the key")
        );
        // Elsewhere the value limit stands.
        assert!(cell_value(MatrixName::Embeddings, "-1e9").is_err());
    }

    #[test]
    fn labels_with_control_characters_or_too_wide_are_refused() {
        assert_eq!(token_label(" dog "), Ok("dog".to_string()));
        assert!(token_label("a\u{1b}[31m").is_err());
        assert!(token_label("\u{202e}evil").is_err());
        assert!(token_label("a-very-long-token-label").is_err());
        assert!(token_label("   ").is_err());
    }

    #[test]
    fn a_label_heavy_with_combining_marks_is_refused() {
        let error = token_label(&format!("a{}", "\u{301}".repeat(100))).unwrap_err();
        assert!(error.contains("201 bytes"), "{error}");
    }
}
