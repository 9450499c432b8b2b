//! A gradient that is a sum of gradients: a K/V group's, of the heads that read its keys or
//! values; X's, of the three paths back through Q, K and V; or a bias's, of its matrix's
//! gradient over the tokens.

use super::super::hint::side_hints;
use super::super::landing::{landing_digits, shown, written};
use super::super::number::format_number;
use super::super::{Explanation, Labels, Operand, Words, Worked, Working};
use super::gradient_first;
use crate::matrices::{Cell, MatrixName};

/// The sum of a group's heads' gradients, of the three paths back to X, or of a column over
/// the tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Sum {
    pub terms: Vec<Operand>,
    pub of: Summed,
}

/// What a gradient's terms are, which its note says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Summed {
    /// The heads of a K/V group.
    GroupHeads,
    /// The three paths back to X, through Q, K and V.
    Paths,
    /// One column of a gradient down its tokens: a bias added to every row has each row's
    /// gradient, added up.
    Tokens,
}

impl Working for Sum {
    fn operands(&self) -> Vec<Cell> {
        self.terms.iter().map(|term| term.cell).collect()
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        gradient_first(&self.operands())
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let (decimals, result) = (worked.decimals, &worked.result);
        let terms = &self.terms;
        let at = |d: usize| terms.iter().map(|term| shown(term.value, d)).sum();
        let (d, result) = written(landing_digits(decimals, result, at), decimals, result);
        let note = match self.of {
            Summed::Paths => {
                "X reaches the loss three ways, through Q, K and V: their gradients add".to_string()
            }
            Summed::GroupHeads => group_sum_note(labels, terms),
            Summed::Tokens => tokens_note(labels, terms),
        };
        // A column over the tokens is named as a column (`Σ dQ[:, 1]`): a name per token would
        // fill the panel before any number.
        let names = match (self.of, terms.first()) {
            (Summed::Tokens, Some(first)) => vec![format!(
                "Σ {}[:, {}]",
                labels.symbol_in(first.cell.matrix, first.cell.head),
                labels.column_label(first.cell.matrix, first.cell.col)
            )],
            _ => terms
                .iter()
                .map(|term| labels.cell_name(term.cell))
                .collect(),
        };
        Words::worked(
            vec![
                names,
                // A negative term after the first in parentheses, as Add writes `x + (y)`:
                // never `+ -0.4`.
                terms
                    .iter()
                    .enumerate()
                    .map(|(index, term)| {
                        let number = format_number(term.value, d);
                        if index > 0 && number.starts_with('-') {
                            format!("({number})")
                        } else {
                            number
                        }
                    })
                    .collect(),
                vec![result],
            ],
            Some(note),
        )
    }

    fn redone_from_shown(&self, _: usize) -> Option<f64> {
        // The backward pass's workings are checked as the engine writes them.
        None
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        side_hints(explanation, None)
    }
}

/// The note under a bias's gradient: the bias is added to every token's row, so each row's
/// gradient reaches it.
fn tokens_note(labels: &dyn Labels, terms: &[Operand]) -> String {
    let Some(first) = terms.first() else {
        return "no token: an empty sum".to_string();
    };
    let (cell, symbol) = (
        first.cell,
        labels.symbol_in(first.cell.matrix, first.cell.head),
    );
    format!(
        "the bias is added to every token's row, so its gradient is column {} of {symbol} \
         summed over the {} tokens",
        labels.column_label(cell.matrix, cell.col),
        terms.len()
    )
}

/// The note under a K/V group's gradient, the sum of its heads': the same mark ⁽¹⁾ is the
/// group's number on dK_group and a head's on dK, so the note says which is which.
fn group_sum_note(labels: &dyn Labels, terms: &[Operand]) -> String {
    let Some(first) = terms.first() else {
        return "the heads of a K/V group all read its keys and values: their gradients add"
            .to_string();
    };
    let (group_matrix, what) = match first.cell.matrix {
        MatrixName::DV => (MatrixName::DVGroup, "values"),
        _ => (MatrixName::DKGroup, "keys"),
    };
    let heads = labels.heads();
    let group = heads.group_of(first.cell.head);
    let members: Vec<usize> = terms.iter().map(|term| term.cell.head + 1).collect();
    let members = match members.as_slice() {
        [one] => format!("head {one}"),
        [a, b] => format!("heads {a} and {b}"),
        [a, .., b] => format!("heads {a}–{b}"),
        [] => String::new(),
    };
    let (group_symbol, head_symbol) = (
        labels.symbol_in(group_matrix, first.cell.head),
        labels.symbol(first.cell.matrix),
    );
    if heads.kv <= 1 {
        format!(
            "{members} share the one K/V group's {what}, so their gradients add: \
             {group_symbol} has no mark, {head_symbol}⁽ʰ⁾ is marked with the head's number"
        )
    } else {
        format!(
            "{members} share K/V group {}'s {what}, so their gradients add: {group_symbol} \
             is marked with the group's number, {head_symbol}⁽ʰ⁾ with the head's",
            group + 1
        )
    }
}
