//! The backward pass's working, cell by cell: how each gradient comes from the gradient after it
//! and the forward pass's numbers (a column dot product, a sum over heads, the softmax's
//! backward, a head's block, a group's sum, a rotation turned back).

use super::landing::{Turned, landing_digits, shown, written};
use super::number::format_number;
use super::{Attention, Cell};
use crate::ops::{BackwardRule, Operand};
use crate::pipeline::Per;

impl BackwardRule {
    /// The cells this one is made from, for highlighting.
    pub(crate) fn operands(&self) -> Vec<Cell> {
        match self {
            BackwardRule::ColumnDot { terms } => {
                terms.iter().flat_map(|(a, b)| [a.cell, b.cell]).collect()
            }
            BackwardRule::HeadsDot { blocks } => blocks
                .iter()
                .flat_map(|(_, terms)| terms.iter().flat_map(|(a, b)| [a.cell, b.cell]))
                .collect(),
            BackwardRule::SoftmaxBackward { row, .. } => {
                row.iter().flat_map(|(p, d)| [p.cell, d.cell]).collect()
            }
            BackwardRule::Sum { terms, .. } => terms.iter().map(|term| term.cell).collect(),
            BackwardRule::Block { from } => vec![from.cell],
            BackwardRule::RotateBack { first, second, .. } => vec![first.cell, second.cell],
        }
    }

    /// Where `e` goes: the softmax's own gradient cell, else the first operand that is itself
    /// a gradient, else the first.
    pub(crate) fn source(&self) -> Option<Cell> {
        if let BackwardRule::SoftmaxBackward { grad, .. } = self {
            return Some(grad.cell);
        }
        let operands = self.operands();
        operands
            .iter()
            .find(|cell| cell.matrix.backward())
            .or(operands.first())
            .copied()
    }

    /// The working as sides of an equation, and a note, as `Derivation::explanation` lays
    /// them out.
    pub(crate) fn explanation(
        &self,
        attention: &Attention,
        decimals: usize,
        result: &str,
    ) -> (Vec<Vec<String>>, Option<String>) {
        let digits = |worked_at: &dyn Fn(usize) -> f64| landing_digits(decimals, result, worked_at);
        let one = |text: String| vec![text];
        let name = |cell: Cell| attention.cell_name(cell);
        let column = |cell: Cell| {
            format!(
                "{}[:, {}]",
                attention.symbol_in(cell.matrix, cell.head),
                attention.column_label(cell.matrix, cell.col)
            )
        };
        let row_of = |cell: Cell| {
            format!(
                "{}[{}, :]",
                attention.symbol_in(cell.matrix, cell.head),
                attention.row_label_at(cell.matrix, cell.row, 0)
            )
        };
        let products = |terms: &[(Operand, Operand)], d: usize| -> Vec<String> {
            terms
                .iter()
                .map(|(a, b)| {
                    format!(
                        "({} × {})",
                        format_number(a.value, d),
                        format_number(b.value, d)
                    )
                })
                .collect()
        };
        let dot = |terms: &[(Operand, Operand)], d: usize| -> f64 {
            terms
                .iter()
                .map(|(a, b)| shown(a.value, d) * shown(b.value, d))
                .sum()
        };
        match self {
            BackwardRule::ColumnDot { terms } => {
                let Some((left, right)) = terms.first() else {
                    return (vec![one(result.to_string())], Some("an empty sum".into()));
                };
                let (d, result) = written(digits(&|d| dot(terms, d)), decimals, result);
                (
                    vec![
                        one(format!("{} · {}", column(left.cell), column(right.cell))),
                        products(terms, d),
                        one(result),
                    ],
                    Some(format!(
                        "the transpose: column {} of {} against column {} of {}, one term per \
                         row",
                        attention.column_label(left.cell.matrix, left.cell.col),
                        attention.symbol_in(left.cell.matrix, left.cell.head),
                        attention.column_label(right.cell.matrix, right.cell.col),
                        attention.symbol_in(right.cell.matrix, right.cell.head),
                    )),
                )
            }
            BackwardRule::HeadsDot { blocks } => {
                let worked = |d: usize| blocks.iter().map(|(_, terms)| dot(terms, d)).sum();
                let (d, result) = written(digits(&worked), decimals, result);
                let several = blocks.len() > 1;
                let named: Vec<String> = blocks
                    .iter()
                    .filter_map(|(_, terms)| {
                        let (left, right) = terms.first()?;
                        Some(format!("{} · {}", row_of(left.cell), row_of(right.cell)))
                    })
                    .collect();
                // One block's products are the side's own terms; several heads' come one
                // bracket per head.
                let grouped: Vec<String> = if several {
                    blocks
                        .iter()
                        .map(|(_, terms)| format!("[{}]", products(terms, d).join(" + ")))
                        .collect()
                } else {
                    blocks
                        .iter()
                        .flat_map(|(_, terms)| products(terms, d))
                        .collect()
                };
                let note = several.then(|| {
                    blocks
                        .iter()
                        .map(|(head, terms)| {
                            let sum: f64 = terms.iter().map(|(a, b)| a.value * b.value).sum();
                            let grouped = terms
                                .first()
                                .is_some_and(|(a, _)| a.cell.matrix.per() == Per::KvGroup);
                            let (word, number) = if grouped {
                                ("group", attention.heads().group_of(*head) + 1)
                            } else {
                                ("head", head + 1)
                            };
                            format!("{word} {number} gives {}", format_number(sum, decimals))
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                });
                (vec![named, grouped, one(result)], note)
            }
            BackwardRule::SoftmaxBackward { weight, grad, row } => {
                let inner = |d: usize| dot(row, d);
                let worked =
                    |d: usize| shown(weight.value, d) * (shown(grad.value, d) - shown(inner(d), d));
                let found = digits(&worked);
                let (d, result) = written(found, decimals, result);
                let row_sum = format_number(inner(d), d);
                let weights_symbol = attention.symbol_in(weight.cell.matrix, weight.cell.head);
                let grads_symbol = attention.symbol_in(grad.cell.matrix, grad.cell.head);
                let token = attention.row_label_at(weight.cell.matrix, weight.cell.row, 0);
                let average = format!(
                    "the row's average gradient, each key's counted by its weight, is \
                     avg[{token}] = Σ_k {weights_symbol}[{token}, k] × \
                     {grads_symbol}[{token}, k] = {row_sum}"
                );
                let note = if weight.value == 0.0 {
                    format!(
                        "this key's weight is 0 (masked, or too small to count), so it passes \
                         no gradient back; {average}"
                    )
                } else {
                    format!(
                        "{average}; this key gets its own gradient minus that average, times \
                         its weight"
                    )
                };
                (
                    vec![
                        one(format!(
                            "{} × ({} − avg[{token}])",
                            name(weight.cell),
                            name(grad.cell)
                        )),
                        one(format!(
                            "{} × ({} − {row_sum})",
                            format_number(weight.value, d),
                            format_number(grad.value, d)
                        )),
                        one(result),
                    ],
                    Some(note),
                )
            }
            BackwardRule::Sum { terms, paths } => {
                let worked = |d: usize| terms.iter().map(|term| shown(term.value, d)).sum();
                let (d, result) = written(digits(&worked), decimals, result);
                let note = if *paths {
                    "X reaches the loss three ways, through Q, K and V: their gradients add"
                        .to_string()
                } else {
                    group_sum_note(attention, terms)
                };
                (
                    vec![
                        terms.iter().map(|term| name(term.cell)).collect(),
                        // A negative term after the first in parentheses, as Add writes
                        // `x + (y)`: never `+ -0.4`.
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
                        one(result),
                    ],
                    Some(note),
                )
            }
            BackwardRule::Block { from } => (
                vec![one(name(from.cell)), one(result.to_string())],
                Some("this head's columns of the gradient of every head side by side".into()),
            ),
            BackwardRule::RotateBack {
                first,
                second,
                position,
                angle,
                lower,
            } => {
                let (sin, cos) = angle.sin_cos();
                // Turned back by −φ: the first of a pair is a·cos φ + b·sin φ, the second
                // −a·sin φ + b·cos φ.
                let (first_factor, second_factor) = if *lower {
                    (("cos φ", cos), ("sin φ", sin))
                } else {
                    (("(−sin φ)", -sin), ("cos φ", cos))
                };
                let turned = Turned {
                    first: (name(first.cell), first.value),
                    second: (name(second.cell), second.value),
                    first_factor,
                    second_factor,
                    minus: false,
                };
                (
                    turned.lines(decimals, result),
                    Some(format!(
                        "the forward pass turned this pair by φ = {} rad at position {position}; \
                         its gradient turns back by −φ (a rotation's inverse is its transpose)",
                        format_number(*angle, decimals + 2)
                    )),
                )
            }
        }
    }
}

/// The note under a K/V group's gradient, the sum of its heads': the same mark ⁽¹⁾ is the
/// group's number on dK_group and a head's on dK, so the note says which is which.
fn group_sum_note(attention: &Attention, terms: &[Operand]) -> String {
    use crate::pipeline::MatrixName;
    let Some(first) = terms.first() else {
        return "the heads of a K/V group all read its keys and values: their gradients add"
            .to_string();
    };
    let (group_matrix, what) = match first.cell.matrix {
        MatrixName::DV => (MatrixName::DVGroup, "values"),
        _ => (MatrixName::DKGroup, "keys"),
    };
    let heads = attention.heads();
    let group = heads.group_of(first.cell.head);
    let members: Vec<usize> = terms.iter().map(|term| term.cell.head + 1).collect();
    let members = match members.as_slice() {
        [one] => format!("head {one}"),
        [a, b] => format!("heads {a} and {b}"),
        [a, .., b] => format!("heads {a}–{b}"),
        [] => String::new(),
    };
    let (group_symbol, head_symbol) = (
        attention.symbol_in(group_matrix, first.cell.head),
        attention.symbol(first.cell.matrix),
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
