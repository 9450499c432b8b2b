//! The shapes of the first two hints a working gives (`Working::hints`), cut from its own
//! explanation so that a hint never disagrees with what the tutor shows once the cell is
//! revealed.

use super::Explanation;

/// A working of sides: the first side, then every side but the last (the result), each with
/// the note when the working needs it (`, where φ = …`).
pub(super) fn side_hints(explanation: &Explanation, note: Option<&str>) -> (String, String) {
    let working_sides = explanation.sides.len().saturating_sub(1).max(1);
    let note = note.map_or_else(String::new, |note| format!(", where {note}"));
    (
        equation(&explanation.name, &explanation.sides[..1]) + &note,
        equation(&explanation.name, &explanation.sides[..working_sides]) + &note,
    )
}

/// A dot product: sides are the operands, the products, and the result.
pub(super) fn dot_hints(explanation: &Explanation) -> (String, String) {
    let operands = explanation
        .sides
        .first()
        .map(|side| side.join(" + "))
        .unwrap_or_default();
    // Products are `(a × b)`, or grouped by head as `[(a × b) + (c × d)]` for concat · W_o.
    let products: Vec<&str> = explanation
        .sides
        .get(1)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .flat_map(|piece| {
            piece
                .trim_start_matches('[')
                .trim_end_matches(']')
                .split(" + ")
        })
        .collect();
    let first_step = match products.first() {
        Some(first) => {
            let first = first
                .strip_prefix('(')
                .and_then(|inner| inner.strip_suffix(')'))
                .unwrap_or(first);
            // A bias written after the products is a term, not a product.
            let count = match products
                .iter()
                .filter(|piece| piece.contains(" × "))
                .count()
            {
                1 => "1 product".to_string(),
                n => format!("{n} products"),
            };
            let bias = if products.iter().any(|piece| !piece.contains(" × ")) {
                ", then a bias"
            } else {
                ""
            };
            format!("{operands} starts with {first} ({count} in all{bias})")
        }
        None => operands.clone(),
    };
    let working = equation(
        &explanation.name,
        &explanation.sides[..explanation.sides.len().min(2)],
    );
    (first_step, working)
}

/// `name = side = side …`, each side a sum of its pieces.
fn equation(name: &str, sides: &[Vec<String>]) -> String {
    let mut text = name.to_string();
    for side in sides {
        text.push_str(" = ");
        text.push_str(&side.join(" + "));
    }
    text
}
