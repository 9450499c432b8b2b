//! What the online softmax step says below its matrices, in the tutor and in `show`: which
//! keys the tile holds, what each query row keeps, and after the last tile whether acc / l is
//! the output.

use crate::attention::Attention;

/// "Tile 2 of 3: keys 3–4 (sat, on), B = 2. Each row holds m, l, acc (4 numbers) and B
/// scores, not all 6 scores." After the last tile, the check of acc / l against head `head`'s output follows.
pub(crate) fn tile_line(attention: &Attention, head: usize, tile: usize) -> String {
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
        format!("Each row holds m, l, acc ({held} numbers) and B scores, not all {n} scores.")
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
        line.push_str(&check_words(attention, Some(head)));
    }
    line
}

/// "Last tile: acc / l = head 1's output in every row (to 2.2e-16)": the same numbers, but
/// for the rounding of sums taken in another order. `None` checks every head (for `show`, which
/// writes one note for the step).
pub fn check_words(attention: &Attention, head: Option<usize>) -> String {
    let heads: Vec<usize> = match head {
        Some(head) => vec![head],
        None => (0..attention.heads().query).collect(),
    };
    let checks: Vec<_> = heads
        .iter()
        .filter_map(|head| attention.online_check(*head, attention.tile))
        .collect();
    if checks.len() != heads.len() || checks.is_empty() {
        return String::new();
    }
    let output = match head {
        Some(head) if attention.heads().query > 1 => format!("head {}'s output", head + 1),
        None if attention.heads().query > 1 => "each head's output".to_string(),
        _ => "the output".to_string(),
    };
    let largest = checks
        .iter()
        .map(|check| check.largest_difference)
        .fold(0.0, f64::max);
    if checks.iter().any(|check| !check.agrees) {
        return format!(
            "After the last tile, acc / l differs from {output} by {largest:.3e}: the two \
             computations disagree."
        );
    }
    let difference = if largest == 0.0 {
        "exactly".to_string()
    } else {
        format!("to {largest:.1e}")
    };
    // A row that saw only masked keys has l = 0: its output is 0, not a quotient.
    let blank = attention.fully_masked_rows().count();
    let blank_words = match blank {
        0 => String::new(),
        1 => "; the row whose every key is masked has l = 0 and output 0".to_string(),
        n => format!("; the {n} rows whose every key is masked have l = 0 and output 0"),
    };
    format!("Last tile: acc / l = {output} in every row ({difference}){blank_words}.")
}
