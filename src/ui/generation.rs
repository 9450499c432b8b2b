//! What the generation steps say below their matrices, in the tutor and in `show`: whether the
//! step's output row agrees with the whole pass's, the numbers the cache holds, and the
//! multiply-adds reusing it saved.

use crate::attention::{Attention, MultiplyAdds};

/// "The output row equals row 3 of the whole causal pass's output (largest difference 0)."
pub(crate) fn check_words(attention: &Attention, token: usize) -> String {
    let Some(check) = attention.decode_check(token) else {
        return String::new();
    };
    let label = attention.label(crate::pipeline::Axis::Queries, token);
    let difference = if check.largest_difference == 0.0 {
        "exactly".to_string()
    } else {
        format!(
            "to within {:.1e}, a rounding of sums taken in another order",
            check.largest_difference
        )
    };
    if check.agrees {
        format!(
            "Checked: this row and these weights equal row {label} of the whole causal pass, \
             {difference}."
        )
    } else {
        format!(
            "This row differs from row {label} of the whole causal pass by {:.3e}: the cache \
             and the mask disagree.",
            check.largest_difference
        )
    }
}

/// "The cache holds 24 numbers (2 K/V groups for 2 query heads): 3 tokens of keys and values.
/// Generating this token took 100 multiply-adds; recomputing the whole pass over the 3 tokens
/// so far, as a model without a cache does, would take 300: 200 more."
pub(crate) fn cache_words(attention: &Attention, token: usize, counts: MultiplyAdds) -> String {
    let heads = attention.heads();
    let groups = if heads.query > 1 {
        format!(
            " ({} K/V group{} for {} query heads)",
            heads.kv,
            if heads.kv == 1 { "" } else { "s" },
            heads.query
        )
    } else {
        String::new()
    };
    let tokens = format!("{} token{}", token + 1, if token == 0 { "" } else { "s" });
    if token == 0 && counts.saved() == 0 {
        // Nothing is cached before the first token: the step is the whole pass over it.
        return format!(
            "The cache holds {} numbers{groups}: the first token's keys and values. Generating \
             it took {} multiply-adds, as a whole pass over this one token does: nothing was \
             cached before it, so the cache saves nothing yet.",
            grouped(attention.cache_numbers(token)),
            grouped(counts.with_cache),
        );
    }
    format!(
        "The cache holds {} numbers{groups}: {tokens} of keys and values. Generating this \
         token took {} multiply-adds; recomputing the whole pass over the {tokens} so far, as a \
         model without a cache does, would take {}: {} more.",
        grouped(attention.cache_numbers(token)),
        grouped(counts.with_cache),
        grouped(counts.without_cache),
        grouped(counts.saved()),
    )
}

/// The cache step's line under its matrices, short enough to leave room at 80 columns for the
/// note on the other view: "Rows above (new): kept from earlier steps. Cache: 24 numbers. This
/// token: 100 multiply-adds; with no cache, a whole pass over 3 tokens: 300."
pub(crate) fn cache_line(attention: &Attention, token: usize) -> String {
    let counts = attention.decode_multiply_adds(token);
    let kept = if token == 0 {
        "The first token: the cache starts with its row."
    } else {
        "Rows above (new): kept from earlier steps."
    };
    format!(
        "{kept} Cache: {} numbers. This token: {} multiply-adds; with no cache, a whole pass \
         over {} token{}: {}.",
        grouped(attention.cache_numbers(token)),
        grouped(counts.with_cache),
        token + 1,
        if token == 0 { "" } else { "s" },
        grouped(counts.without_cache),
    )
}

/// 12345 as "12,345".
fn grouped(count: usize) -> String {
    let digits = count.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1234567), "1,234,567");
    }
}
