//! What the online softmax step says below its matrices, in the tutor and in `show`: which
//! keys the tile holds, what each query row keeps, and after the last tile whether acc / l is
//! the output.

use crate::attention::Attention;

/// "Tile 2 of 3: keys 3–4 (sat, on), B = 2. A row holds m, l, acc (5 numbers) and at most B
/// scores at a time, never all 6 of its scores." After the last tile, the check of acc / l against head `head`'s output follows.
pub fn tile_line(attention: &Attention, head: usize, tile: usize) -> String {
    let Some(keys) = attention.tile_keys(tile) else {
        return String::new();
    };
    let count = attention.tile_count();
    let labels: Vec<String> = keys
        .clone()
        .map(|key| attention.label(crate::pipeline::Axis::Keys, key))
        .collect();
    let named = if labels.len() <= 4 {
        format!(" ({})", labels.join(", "))
    } else {
        String::new()
    };
    let which = if keys.start() == keys.end() {
        format!("key {}{named}", keys.start() + 1)
    } else {
        format!("keys {}–{}{named}", keys.start() + 1, keys.end() + 1)
    };
    let d_v = attention
        .matrix_in(crate::pipeline::MatrixName::V, head)
        .map_or(0, |v| v.ncols());
    let n = attention.key_tokens().len();
    let held = 2 + d_v;
    let memory = if attention.tile < n {
        format!(
            "A row holds m, l, acc ({held} numbers) and at most B scores at a time, never all \
             {n} of its scores."
        )
    } else {
        format!("B ≥ the {n} keys: one tile, the whole row of scores at once.")
    };
    let mut line = format!(
        "Tile {} of {count}: {which}, B = {}. {memory}",
        tile + 1,
        attention.tile,
    );
    if tile + 1 == count {
        line.push(' ');
        line.push_str(&check_words(attention, head));
    }
    line
}

/// "Last tile: acc / l = head 1's output in every row (to 2.2e-16)": the same numbers, but
/// for the rounding of sums taken in another order.
pub fn check_words(attention: &Attention, head: usize) -> String {
    let Some(check) = attention.online_check(head, attention.tile) else {
        return String::new();
    };
    let output = if attention.heads().query > 1 {
        format!("head {}'s output", head + 1)
    } else {
        "the output".to_string()
    };
    if !check.agrees {
        return format!(
            "After the last tile, acc / l differs from {output} by {:.3e}: the two \
             computations disagree.",
            check.largest_difference
        );
    }
    let difference = if check.largest_difference == 0.0 {
        "exactly".to_string()
    } else {
        format!("to {:.1e}", check.largest_difference)
    };
    format!("Last tile: acc / l = {output} in every row ({difference}).")
}
