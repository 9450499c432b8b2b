//! Hints for a cell, from a nudge to the answer, cut from the engine's own explanation of it so
//! that a hint never disagrees with what the tutor shows once the cell is revealed.
//!
//! Level 1 names the operands and gives the first product ("q_cat · k_sat starts with 0 × 1"),
//! level 2 writes out all the working but the result, level 3 is the whole explanation with the
//! answer. The strings are plain text; the screen lays them out.

use crate::attention::{Attention, Cell, Explanation, Rule};

/// How much help has been asked for a cell; levels are ordered, so the highest one counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HintLevel {
    /// Where to start: the operands and the first term.
    FirstStep = 1,
    /// All the working, without the result.
    Working = 2,
    /// The answer itself: the cell counts as revealed.
    Answer = 3,
}

impl HintLevel {
    /// The level after this one, for a "hint" key pressed again; the answer is the last.
    pub fn next(level: Option<HintLevel>) -> HintLevel {
        match level {
            None => HintLevel::FirstStep,
            Some(HintLevel::FirstStep) => HintLevel::Working,
            Some(HintLevel::Working | HintLevel::Answer) => HintLevel::Answer,
        }
    }

    /// 1, 2 or 3, as the learner counts hints.
    pub fn number(self) -> u8 {
        self as u8
    }
}

/// The three hints for one cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hints {
    pub first_step: String,
    pub working: String,
    pub answer: String,
}

impl Hints {
    pub fn get(&self, level: HintLevel) -> &str {
        match level {
            HintLevel::FirstStep => &self.first_step,
            HintLevel::Working => &self.working,
            HintLevel::Answer => &self.answer,
        }
    }
}

/// The hints for `cell` with numbers at `decimals` decimals; `None` when the lesson has no such
/// cell.
pub fn hints(attention: &Attention, cell: Cell, decimals: usize) -> Option<Hints> {
    let derivation = attention.derive(cell)?;
    let explanation = derivation.explanation(attention, decimals);
    let answer = derivation.explain(attention, decimals);
    let (first_step, working) = match &derivation.rule {
        Rule::Dot { .. } => dot_hints(&explanation),
        // A factor of 1 (m did not rise), or a row still fully masked: the only side is the
        // answer, so the hints point at m before and after the tile instead.
        Rule::Online(online) if explanation.sides.len() < 2 => {
            let max = online.max.map_or(derivation.value, |max| max.value);
            (
                format!(
                    "{}: compare this row's m before the tile (m_old) with m after it",
                    explanation.name
                ),
                format!(
                    "{}: m_old = {} and m = {}: did this tile raise the maximum?",
                    explanation.name,
                    crate::attention::number::format_number(online.max_before, decimals),
                    crate::attention::number::format_number(max, decimals)
                ),
            )
        }
        // A position's formula needs its angle, which the note gives: it comes with the first
        // hint.
        Rule::Sinusoid { .. } | Rule::Rotate { .. } => {
            side_hints(&explanation, explanation.note.as_deref())
        }
        Rule::Online(_)
        | Rule::Backward(_)
        | Rule::Scale { .. }
        | Rule::Mask { .. }
        | Rule::Softmax { .. }
        | Rule::Add { .. }
        | Rule::Concat { .. }
        | Rule::TokenRow { .. }
        | Rule::Cached { .. } => side_hints(&explanation, None),
        Rule::FullyMasked { row } => {
            // The explanation of a fully hidden row is just "0" and why: nothing to cut from.
            let source = row.first().map_or_else(
                || "the row".to_string(),
                |operand| {
                    format!(
                        "{}[{}, :]",
                        attention.symbol_in(operand.cell.matrix, operand.cell.head),
                        attention.row_label(operand.cell.matrix, operand.cell.row)
                    )
                },
            );
            (
                format!(
                    "{}: look at {source}, the row softmax works on",
                    explanation.name
                ),
                format!(
                    "{}: every value of {source} is -inf, so no key can be attended to",
                    explanation.name
                ),
            )
        }
        Rule::Input => {
            let given = format!("{} is a number of the lesson itself", explanation.name);
            (given.clone(), given)
        }
    };
    Some(Hints {
        first_step,
        working,
        answer,
    })
}

/// A working of sides: the first side, then every side but the last (the result), each with
/// the note when the working needs it (`, where φ = …`).
fn side_hints(explanation: &Explanation, note: Option<&str>) -> (String, String) {
    let working_sides = explanation.sides.len().saturating_sub(1).max(1);
    let note = note.map_or_else(String::new, |note| format!(", where {note}"));
    (
        equation(&explanation.name, &explanation.sides[..1]) + &note,
        equation(&explanation.name, &explanation.sides[..working_sides]) + &note,
    )
}

/// A dot product: sides are the operands, the products, and the result.
fn dot_hints(explanation: &Explanation) -> (String, String) {
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
            let count = match products.len() {
                1 => "1 product".to_string(),
                n => format!("{n} products"),
            };
            format!("{operands} starts with {first} ({count} in all)")
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
