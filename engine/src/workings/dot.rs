//! A dot product, Σ left × right term by term: a projection (`x · W_q[:, 1]`), a score
//! (`q · k`), an output (`weights[cat, :] · V[:, 1]`), and concat · W_o, whose terms come one
//! block per head and which can be written head by head (`Dot::head_parts`).

use super::hint::dot_hints;
use super::landing::{EXTRA_OPERAND_DECIMALS, landing_digits, shown, written};
use super::number::{format_fixed, format_number, number_is, push_number};
use super::{Explanation, Labels, Operand, Words, Worked, Working};
use crate::matrices::{Cell, MatrixName};

/// A dot product: Σ left × right, term by term; the right operands are a row of their matrix
/// when it is transposed (`q · k`), else a column (`x · W_q[:, 1]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Dot {
    pub terms: Vec<(Operand, Operand)>,
    pub transpose_right: bool,
    /// The bias added after the sum (a projection's b_q[c], the output's b_o[c]), when the
    /// lesson gives one.
    pub bias: Option<Operand>,
}

impl Working for Dot {
    fn operands(&self) -> Vec<Cell> {
        self.terms
            .iter()
            .flat_map(|(a, b)| [a.cell, b.cell])
            .chain(self.bias.map(|bias| bias.cell))
            .collect()
    }

    fn source(&self, _: Cell) -> Option<Cell> {
        self.terms.first().map(|(left, _)| left.cell)
    }

    fn words(&self, labels: &dyn Labels, worked: &Worked) -> Words {
        let (cell, decimals, result) = (worked.cell, worked.decimals, &worked.result);
        let terms = &self.terms;
        let operands = match terms.first() {
            Some((left, right)) => format!(
                "{} · {}",
                labels.row_name(left.cell.matrix, left.cell.head, cell.row, left.cell.token),
                if self.transpose_right {
                    labels.row_name(
                        right.cell.matrix,
                        right.cell.head,
                        cell.col,
                        right.cell.token,
                    )
                } else {
                    let symbol = labels.symbol_in(right.cell.matrix, right.cell.head);
                    let col = labels.column_label(right.cell.matrix, cell.col);
                    // In words, not `W_o[3:4, 2]`: a slice reads as one row in numpy.
                    match head_rows(labels, terms) {
                        Some((first, last)) if first == last => {
                            format!("(row {first} of {symbol}, column {col})")
                        }
                        Some((first, last)) => {
                            format!("(rows {first}–{last} of {symbol}, column {col})")
                        }
                        None => format!("{symbol}[:, {col}]"),
                    }
                }
            ),
            None => "an empty sum".to_string(),
        };
        // The bias is named after the dot product: `x̂_cat · W_q[:, 3] + b_q[3]`.
        let operands = match self.bias {
            Some(bias) => format!("{operands} + {}", labels.cell_name(bias.cell)),
            None => operands,
        };
        let worked_terms = |terms: &[(Operand, Operand)], d: usize| {
            terms
                .iter()
                .map(|(a, b)| shown(a.value, d) * shown(b.value, d))
                .sum::<f64>()
        };
        // The whole sum, as its operands are written: the terms, then the bias.
        let worked_all =
            |d: usize| worked_terms(terms, d) + self.bias.map_or(0.0, |bias| shown(bias.value, d));
        let exact_terms = |terms: &[(Operand, Operand)]| -> f64 {
            terms.iter().map(|(a, b)| a.value * b.value).sum()
        };
        let blocks = head_blocks(labels, terms);
        // With several heads, each head's contribution is said too, with the decimals (the
        // lesson's at least) that make the contributions as written add up to the result as
        // written; the operands take the decimals that make every head's block land on its
        // contribution as well as the whole sum.
        let parts: Vec<f64> = blocks.iter().flatten().map(|b| exact_terms(b)).collect();
        let part_sum = |k: usize| parts.iter().map(|part| shown(*part, k)).sum::<f64>();
        let (k, _) = written(landing_digits(decimals, result, part_sum), decimals, result);
        let said: Vec<String> = parts.iter().map(|part| format_number(*part, k)).collect();
        let found = (decimals..=k + EXTRA_OPERAND_DECIMALS).find(|&d| {
            number_is(worked_all(d), decimals, result)
                && blocks
                    .iter()
                    .flatten()
                    .zip(&said)
                    .all(|(block, said)| number_is(worked_terms(block, d), k, said))
        });
        let found = found.or_else(|| landing_digits(decimals, result, worked_all));
        let (d, result) = written(found, decimals, result);
        // The bias as a term of the sum: `(-0.250)` bracketed when negative, like a product.
        let bias_term = self.bias.map(|bias| {
            let number = format_number(bias.value, d);
            if number.starts_with('-') {
                format!("({number})")
            } else {
                number
            }
        });
        // "(a × b)" in one string: a working may have hundreds of terms.
        let product = |(a, b): &(Operand, Operand)| {
            let mut text = String::with_capacity(24);
            text.push('(');
            push_number(&mut text, a.value, d);
            text.push_str(" × ");
            push_number(&mut text, b.value, d);
            text.push(')');
            text
        };
        match blocks {
            // concat · W_o: the terms come in blocks, one per head, and each block is what
            // that head contributes to the output.
            Some(blocks) => {
                let grouped = blocks
                    .iter()
                    .map(|block| {
                        let inner: Vec<String> = block.iter().map(product).collect();
                        format!("[{}]", inner.join(" + "))
                    })
                    .chain(bias_term)
                    .collect();
                let contributions: Vec<String> = blocks
                    .iter()
                    .zip(&said)
                    .enumerate()
                    .map(|(head, (block, said))| {
                        let lands = number_is(worked_terms(block, d), k, said);
                        let about = if lands { "" } else { "≈ " };
                        format!("head {} contributes {about}{said}", head + 1)
                    })
                    .collect();
                Words::worked(
                    vec![vec![operands], grouped, vec![result]],
                    Some(contributions.join(", ")),
                )
            }
            None => Words::worked(
                vec![
                    vec![operands],
                    terms.iter().map(product).chain(bias_term).collect(),
                    vec![result],
                ],
                hidden_key_note(labels, cell),
            ),
        }
    }

    fn redone_from_shown(&self, decimals: usize) -> Option<f64> {
        Some(
            self.terms
                .iter()
                .map(|(left, right)| shown(left.value, decimals) * shown(right.value, decimals))
                .sum::<f64>()
                + self.bias.map_or(0.0, |bias| shown(bias.value, decimals)),
        )
    }

    fn hints(&self, _: &dyn Labels, _: &Worked, explanation: &Explanation) -> (String, String) {
        dot_hints(explanation)
    }
}

impl Dot {
    /// concat · W_o written head by head (see `Derivation::head_parts`); `None` for any other
    /// dot product.
    pub(crate) fn head_parts(&self, labels: &dyn Labels, worked: &Worked) -> Option<HeadParts> {
        // With b_o the heads' parts do not add up to the cell: the working is written whole.
        if self.transpose_right || self.bias.is_some() {
            return None;
        }
        let (cell, value, decimals) = (worked.cell, worked.value, worked.decimals);
        let terms = &self.terms;
        let blocks = head_blocks(labels, terms)?;
        let parts: Vec<f64> = blocks
            .iter()
            .map(|block| block.iter().map(|(a, b)| a.value * b.value).sum())
            .collect();
        let in_a_sum = |text: String| {
            if text.starts_with('-') {
                format!("({text})")
            } else {
                text
            }
        };
        let (left, right) = terms.first()?;
        let row = labels.row_name(left.cell.matrix, left.cell.head, cell.row, left.cell.token);
        let symbol = labels.symbol_in(right.cell.matrix, right.cell.head);
        let col = labels.column_label(right.cell.matrix, cell.col);
        let formula = vec![format!("{row} · {symbol}[:, {col}]")];
        // The numbers summed, each with the decimals that make their sum, as written, land on
        // the result: the parts' decimals and the result as written.
        let landed = |numbers: &[f64]| {
            let result = format_number(value, decimals);
            let found = landing_digits(decimals, &result, |k| {
                numbers.iter().map(|number| shown(*number, k)).sum::<f64>()
            });
            let (k, mut result) = written(found, decimals, &result);
            let fixed = format_fixed(value, decimals);
            if value.fract() != 0.0 && fixed.starts_with(&result) {
                result = fixed;
            }
            (k, result)
        };
        // Each head's sum, and the decimals its own part is written with there.
        let wholes: Vec<(usize, Explanation)> = if parts.len() > 3 {
            (0..parts.len())
                .map(|head| {
                    let others: f64 = parts
                        .iter()
                        .enumerate()
                        .filter(|&(other, _)| other != head)
                        .map(|(_, part)| part)
                        .sum();
                    let (k, result) = landed(&[parts[head], others]);
                    let sum = Explanation {
                        name: labels.cell_name(cell),
                        sides: vec![
                            formula.clone(),
                            vec![
                                format!("head {}'s part", head + 1),
                                format!("the other {} heads' parts", parts.len() - 1),
                            ],
                            vec![
                                in_a_sum(format_number(parts[head], k)),
                                in_a_sum(format_number(others, k)),
                            ],
                            vec![result],
                        ],
                        note: None,
                    };
                    (k, sum)
                })
                .collect()
        } else {
            let (k, result) = landed(&parts);
            let sum = Explanation {
                name: labels.cell_name(cell),
                sides: vec![
                    formula,
                    (1..=parts.len())
                        .map(|head| format!("head {head}'s part"))
                        .collect(),
                    parts
                        .iter()
                        .map(|part| in_a_sum(format_number(*part, k)))
                        .collect(),
                    vec![result],
                ],
                note: None,
            };
            vec![(k, sum); parts.len()]
        };
        let heads = blocks
            .iter()
            .zip(&parts)
            .enumerate()
            .map(|(head, (block, part))| {
                let k = wholes[head].0;
                let part = format_number(*part, k);
                let worked = |d: usize| {
                    block
                        .iter()
                        .map(|(a, b)| shown(a.value, d) * shown(b.value, d))
                        .sum::<f64>()
                };
                // The block's operands land on its part as the sum above writes it.
                let found = (decimals..=k + EXTRA_OPERAND_DECIMALS)
                    .find(|&d| format_number(worked(d), k) == part);
                let (d, part) = written(found, k, &part);
                let ((_, first), (_, last)) = (block.first()?, block.last()?);
                // concat's block of columns is the head's own output, as the header names it.
                let output = match left.cell.matrix {
                    MatrixName::DecodeConcat => MatrixName::DecodeOutput,
                    _ => MatrixName::Output,
                };
                Some(Explanation {
                    name: format!("head {}'s part", head + 1),
                    sides: vec![
                        vec![format!(
                            "{}[{}, :] · (rows {}–{} of {symbol}, column {col})",
                            labels.symbol_in(output, head),
                            labels.row_label_at(left.cell.matrix, cell.row, left.cell.token),
                            first.cell.row + 1,
                            last.cell.row + 1,
                        )],
                        block
                            .iter()
                            .map(|(a, b)| {
                                format!(
                                    "({} × {})",
                                    format_number(a.value, d),
                                    format_number(b.value, d)
                                )
                            })
                            .collect(),
                        vec![part],
                    ],
                    note: None,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let wholes = wholes.into_iter().map(|(_, sum)| sum).collect();
        Some(HeadParts { wholes, heads })
    }
}

/// A cell of concat · W_o written head by head (see `Derivation::head_parts`).
#[derive(Debug, Clone, PartialEq)]
pub struct HeadParts {
    /// Each head's sum of the parts: `output[t1, 1] = concat[t1, :] · W_o[:, 1] = head h's
    /// part + the other 7 heads' parts = p + r = result`; of three heads or fewer every part,
    /// alike for each head.
    pub wholes: Vec<Explanation>,
    /// Each head's part as its own dot product, landing on the part as `whole` writes it.
    pub heads: Vec<Explanation>,
}

/// The rows of the right-hand matrix a dot product reads when they are not all of them: a
/// head's block of W_o's rows (1-based, first and last) for an output-value circuit.
fn head_rows(labels: &dyn Labels, terms: &[(Operand, Operand)]) -> Option<(usize, usize)> {
    let ((_, first), (_, last)) = (terms.first()?, terms.last()?);
    labels
        .matrix_at(first.cell.matrix, first.cell.head, first.cell.token)
        .is_some_and(|matrix| matrix.nrows() != terms.len())
        .then_some((first.cell.row + 1, last.cell.row + 1))
}

/// The terms of concat · W_o split by the head each comes from, when there are several heads.
fn head_blocks<'a>(
    labels: &dyn Labels,
    terms: &'a [(Operand, Operand)],
) -> Option<Vec<&'a [(Operand, Operand)]>> {
    let (left, _) = terms.first()?;
    let output = match left.cell.matrix {
        MatrixName::Concat => MatrixName::Output,
        MatrixName::DecodeConcat => MatrixName::DecodeOutput,
        _ => return None,
    };
    if labels.heads().query < 2 {
        return None;
    }
    let width = labels.matrix_at(output, 0, left.cell.token)?.ncols().max(1);
    Some(terms.chunks(width).collect())
}

/// On the backward pass's d_weights, a key the softmax gave no weight (hidden by the mask): its
/// d_weights is a number like any other, but no gradient passes through it.
fn hidden_key_note(labels: &dyn Labels, cell: Cell) -> Option<String> {
    if cell.matrix != MatrixName::DWeights {
        return None;
    }
    let weight = labels.weights_of(cell.head).get((cell.row, cell.col))?;
    (*weight == 0.0).then(|| {
        "this key's weight is 0 (hidden by the mask): d_weights says how L would change with a \
         weight the softmax never gives it, and dS passes nothing of it back"
            .to_string()
    })
}
