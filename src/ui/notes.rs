//! What a step says about this lesson's own numbers, worded once for the tutor and for `show`.
//! (What depends on the lesson's plan alone is in the step's entry: `Step::note`,
//! `Step::absent`.)

use crate::attention::Attention;

/// The rows whose every key the mask hides, and what that makes of them; `None` when there
/// are none.
pub(crate) fn fully_masked(attention: &Attention) -> Option<String> {
    let hidden: Vec<&str> = attention
        .fully_masked_rows()
        .map(|row| attention.tokens[row].as_str())
        .collect();
    let (rows, own) = match hidden.len() {
        0 => return None,
        1 => ("that row", "its"),
        _ => ("those rows", "their"),
    };
    Some(format!(
        "The mask hides every key from {}: the weights of {rows} are 0, not NaN, and so is {own} \
         output.",
        hidden.join(", ")
    ))
}
