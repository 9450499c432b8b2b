//! Numbers copied from one place to another, with nothing worked out: a head's output set in
//! its place in concat, a step of generation's row of a matrix of the whole pass, a row of
//! the K/V cache. Each says where its number comes from.

use super::hint::side_hints;
use super::landing::shown;
use super::number::format_number;
use super::words::token_words;
use super::{Explanation, Labels, Operand, Words, Worked, Working};
use crate::matrices::Cell;

/// A head's number set in its place among every head's: concat[i, h·d_v + c] is head h's
/// output[i, c].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Concat {
    pub from: Operand,
}

/// A step of generation's row of a matrix of the whole pass: the new token's row of X (or of
/// the given Q, K, V).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenRow {
    pub from: Operand,
}

/// A row of the K/V cache: the new token's key or value (`new`), or an earlier token's, kept
/// from the step that made it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cached {
    pub from: Operand,
    pub new: bool,
}

/// The copied number's name and its value: the sides of each of these workings.
fn copied_sides(labels: &dyn Labels, from: Operand, decimals: usize) -> Vec<Vec<String>> {
    vec![
        vec![labels.cell_name(from.cell)],
        vec![format_number(from.value, decimals)],
    ]
}

impl Working for Concat {
    fn operands(&self) -> Vec<Cell> {
        vec![self.from.cell]
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        Some(self.from.cell)
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let from = self.from;
        Words::worked(
            copied_sides(labels, from, worked.decimals),
            Some(format!(
                "column {} of concat is column {} of head {}'s output",
                worked.cell.col + 1,
                from.cell.col + 1,
                from.cell.head + 1
            )),
        )
    }

    fn redone_from_shown(&self, decimals: usize) -> Option<f64> {
        Some(shown(self.from.value, decimals))
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        side_hints(explanation, None)
    }
}

impl Working for TokenRow {
    fn operands(&self) -> Vec<Cell> {
        vec![self.from.cell]
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        Some(self.from.cell)
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let from = self.from;
        Words::worked(
            copied_sides(labels, from, worked.decimals),
            Some(format!(
                "the row of {} for the token being generated, {}",
                labels.symbol(from.cell.matrix),
                token_words(labels, worked.cell.token)
            )),
        )
    }

    fn redone_from_shown(&self, decimals: usize) -> Option<f64> {
        Some(shown(self.from.value, decimals))
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        side_hints(explanation, None)
    }
}

impl Working for Cached {
    fn operands(&self) -> Vec<Cell> {
        vec![self.from.cell]
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        Some(self.from.cell)
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let from = self.from;
        Words::worked(
            copied_sides(labels, from, worked.decimals),
            Some(if self.new {
                format!(
                    "new: computed for {}, the token being generated, and added to the cache",
                    token_words(labels, worked.cell.token)
                )
            } else {
                format!(
                    "kept in the cache since it was computed for {}; not computed again",
                    token_words(labels, from.cell.token)
                )
            }),
        )
    }

    fn redone_from_shown(&self, decimals: usize) -> Option<f64> {
        Some(shown(self.from.value, decimals))
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        side_hints(explanation, None)
    }
}
