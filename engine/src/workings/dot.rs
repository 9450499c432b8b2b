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
        let bias_term = self.bias.map(|bias| in_a_sum(format_number(bias.value, d)));
        let product = |(a, b): &(Operand, Operand)| product_text(a.value, b.value, d);
        match blocks {
            // A real model's concat · W_o (768 terms from 12 heads): the heads' parts, each
            // the sum of its head's block, are what there is to read; each part's own terms
            // are written head by head (`Dot::head_parts`).
            Some(blocks) if terms.len() > WRITTEN_WHOLE_UP_TO => {
                // The output's bias (b_o) after the heads' parts, as written with them.
                let bias = self.bias.map(|bias| bias.value);
                let with_bias = |k: usize| part_sum(k) + bias.map_or(0.0, |b| shown(b, k));
                let landing = landing_digits(decimals, &worked.result, with_bias);
                let (_, result) = written(landing, decimals, &worked.result);
                let k = landing.unwrap_or(k);
                let per_head = blocks.first().map_or(0, |block| block.len());
                let bias_name = self.bias.map(|bias| labels.cell_name(bias.cell));
                Words::worked(
                    vec![
                        vec![operands],
                        parts
                            .iter()
                            .map(|part| in_a_sum(format_number(*part, k)))
                            .chain(bias.map(|b| in_a_sum(format_number(b, k))))
                            .collect(),
                        vec![result],
                    ],
                    Some(format!(
                        "the {} heads' parts, head 1's first; each is the sum of its head's \
                         {per_head} terms{}",
                        blocks.len(),
                        bias_name.map_or(String::new(), |name| format!("; then {name}"))
                    )),
                )
            }
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
            None if terms.len() > WRITTEN_WHOLE_UP_TO => {
                let name = labels.cell_name(cell);
                let bias = self.bias.map(|bias| bias.value);
                let largest = Largest::of(terms, bias, decimals, &worked.result, &name);
                let note = [Some(largest.note()), hidden_key_note(labels, cell)];
                Words::worked(
                    vec![vec![operands], largest.pieces, vec![largest.result]],
                    Some(note.into_iter().flatten().collect::<Vec<_>>().join("; ")),
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

    fn hints(
        &self,
        labels: &dyn Labels,
        _: &Worked,
        explanation: &Explanation,
    ) -> (String, String) {
        let (first, working) = dot_hints(explanation);
        if self.terms.len() <= WRITTEN_WHOLE_UP_TO {
            return (first, working);
        }
        // The products written are the largest, not the first: the nudge says how many there
        // are and which is largest (or, for concat · W_o, that it is the heads' parts).
        let operands = explanation
            .sides
            .first()
            .map(|side| side.join(" + "))
            .unwrap_or_default();
        let first = match (
            head_blocks(labels, &self.terms),
            explanation.sides.get(1).and_then(|side| side.first()),
        ) {
            (Some(blocks), _) => format!(
                "{operands} is the sum of the {} heads' parts, each a sum of {} products",
                blocks.len(),
                blocks.first().map_or(0, |block| block.len())
            ),
            (None, Some(product)) => format!(
                "{operands} is a sum of {} products{}, the largest {}",
                self.terms.len(),
                if self.bias.is_some() {
                    " and a bias"
                } else {
                    ""
                },
                product.trim_start_matches('(').trim_end_matches(')')
            ),
            (None, None) => first,
        };
        (first, working)
    }
}

impl Dot {
    /// concat · W_o written head by head (see `Derivation::head_parts`); `None` for any other
    /// dot product.
    pub(crate) fn head_parts(&self, labels: &dyn Labels, worked: &Worked) -> Option<HeadParts> {
        if self.transpose_right {
            return None;
        }
        // With b_o the heads' parts and the bias add up to the cell: the bias is a term after
        // them, named and written like them.
        let bias = self
            .bias
            .map(|bias| (labels.cell_name(bias.cell), bias.value));
        let (cell, value, decimals) = (worked.cell, worked.value, worked.decimals);
        let terms = &self.terms;
        let blocks = head_blocks(labels, terms)?;
        let parts: Vec<f64> = blocks
            .iter()
            .map(|block| block.iter().map(|(a, b)| a.value * b.value).sum())
            .collect();
        let (left, right) = terms.first()?;
        let row = labels.row_name(left.cell.matrix, left.cell.head, cell.row, left.cell.token);
        let symbol = labels.symbol_in(right.cell.matrix, right.cell.head);
        let col = labels.column_label(right.cell.matrix, cell.col);
        let formula = vec![match &bias {
            Some((name, _)) => format!("{row} · {symbol}[:, {col}] + {name}"),
            None => format!("{row} · {symbol}[:, {col}]"),
        }];
        let bias_name = bias.as_ref().map(|(name, _)| name.clone());
        let bias_value = bias.as_ref().map(|(_, value)| *value);
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
                    let numbers: Vec<f64> = [parts[head], others]
                        .into_iter()
                        .chain(bias_value)
                        .collect();
                    let (k, result) = landed(&numbers);
                    let sum = Explanation {
                        name: labels.cell_name(cell),
                        sides: vec![
                            formula.clone(),
                            [
                                format!("head {}'s part", head + 1),
                                format!("the other {} heads' parts", parts.len() - 1),
                            ]
                            .into_iter()
                            .chain(bias_name.clone())
                            .collect(),
                            numbers
                                .iter()
                                .map(|number| in_a_sum(format_number(*number, k)))
                                .collect(),
                            vec![result],
                        ],
                        note: None,
                    };
                    (k, sum)
                })
                .collect()
        } else {
            let numbers: Vec<f64> = parts.iter().copied().chain(bias_value).collect();
            let (k, result) = landed(&numbers);
            let sum = Explanation {
                name: labels.cell_name(cell),
                sides: vec![
                    formula,
                    (1..=parts.len())
                        .map(|head| format!("head {head}'s part"))
                        .chain(bias_name.clone())
                        .collect(),
                    numbers
                        .iter()
                        .map(|number| in_a_sum(format_number(*number, k)))
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
                if block.len() > WRITTEN_WHOLE_UP_TO {
                    let name = format!("head {}'s part", head + 1);
                    let largest = Largest::of(block, None, k, &part, &name);
                    let ((_, first), (_, last)) = (block.first()?, block.last()?);
                    let note = largest.note();
                    return Some(Explanation {
                        name,
                        sides: vec![
                            vec![format!(
                                "{}[{}, :] · (rows {}–{} of {symbol}, column {col})",
                                labels.symbol_in(output_of(left.cell.matrix), head),
                                labels.row_label_at(left.cell.matrix, cell.row, left.cell.token),
                                first.cell.row + 1,
                                last.cell.row + 1,
                            )],
                            largest.pieces,
                            vec![largest.result],
                        ],
                        note: Some(note),
                    });
                }
                // The block's operands land on its part as the sum above writes it.
                let found = (decimals..=k + EXTRA_OPERAND_DECIMALS)
                    .find(|&d| format_number(worked(d), k) == part);
                let (d, part) = written(found, k, &part);
                let ((_, first), (_, last)) = (block.first()?, block.last()?);
                let output = output_of(left.cell.matrix);
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
                            .map(|(a, b)| product_text(a.value, b.value, d))
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

/// concat's block of columns is the head's own output, as the header names it.
fn output_of(concat: MatrixName) -> MatrixName {
    match concat {
        MatrixName::DecodeConcat => MatrixName::DecodeOutput,
        _ => MatrixName::Output,
    }
}

/// A dot product of more terms than this is written with its largest terms and the sum of the
/// rest: 12 products of four-decimal numbers already fill three lines of 80 columns, and a
/// real model's 64 (a head's width) or 768 (GPT-2 small's embeddings) would fill the screen
/// with numbers read in no order that means anything; 16 tokens' weights · V, most of them
/// 0 under a causal mask, read best as their few largest terms.
pub const WRITTEN_WHOLE_UP_TO: usize = 12;

/// The most products a long dot product writes, largest first.
const LARGEST_AT_MOST: usize = 3;

/// The line the products of a long dot product and the rest's sum are to fit, after the
/// cell's name as a screen indents them (`name = `, the name at most a third of the line): an
/// 80-column screen's working, a column of margin each side.
const LINE_COLUMNS: usize = 78;

/// A long dot product written with its largest terms (by |product|, largest first), then how
/// many more there are and their sum: the terms as written and the rest's sum add up to the
/// result as written.
struct Largest {
    /// `(a × b)` for each term written, then `N more terms (sum s)`.
    pieces: Vec<String>,
    /// How many terms are written.
    shown: usize,
    /// How many terms there are.
    total: usize,
    /// The result as written, `≈ r` when no decimals make the arithmetic land.
    result: String,
    /// Whether a bias is written after the others' sum.
    bias: bool,
}

impl Largest {
    /// `terms` written with their largest ones, landing on `result` (written with `decimals`),
    /// as many (up to three) as fit a line after `name`.
    fn of(
        terms: &[(Operand, Operand)],
        bias: Option<f64>,
        decimals: usize,
        result: &str,
        name: &str,
    ) -> Largest {
        let indent = name.chars().count().min(LINE_COLUMNS / 3) + " = ".len();
        let room = LINE_COLUMNS.saturating_sub(indent);
        let mut order: Vec<usize> = (0..terms.len()).collect();
        let size = |index: &usize| {
            let (a, b) = &terms[*index];
            (a.value * b.value).abs()
        };
        // Stable: of equal products the one first in the column order comes first.
        order.sort_by(|x, y| size(y).total_cmp(&size(x)));
        // A term that is 0 (a masked key's weight) is not worth writing out.
        let nonzero = order.iter().take_while(|index| size(index) != 0.0).count();
        let most = LARGEST_AT_MOST
            .min(nonzero)
            .min(terms.len().saturating_sub(1));
        let fits = |largest: &Largest| {
            let columns: usize = largest
                .pieces
                .iter()
                .map(|piece| piece.chars().count() + 3)
                .sum();
            columns <= room + 3
        };
        for shown in (1..=most.max(1)).rev() {
            let largest =
                Largest::with(terms, &order[..shown], bias, decimals, result, Rest::Terms);
            if fits(&largest) {
                return largest;
            }
        }
        // A long name (`scores⁽¹²⁾[John₁₀, store]`) leaves less than one term and "N more
        // terms (sum s)": the note says what the others are, so "N more (sum s)" is enough.
        let short = Largest::with(terms, &order[..1], bias, decimals, result, Rest::Short);
        if fits(&short) {
            short
        } else {
            Largest::with(terms, &order[..1], bias, decimals, result, Rest::Terms)
        }
    }

    /// The terms at `largest` (indices, largest first) and the sum of the others, with the
    /// fewest decimals that make them land on `result`.
    fn with(
        terms: &[(Operand, Operand)],
        largest: &[usize],
        bias: Option<f64>,
        decimals: usize,
        result: &str,
        rest_as: Rest,
    ) -> Largest {
        let rest: f64 = terms
            .iter()
            .enumerate()
            .filter(|(index, _)| !largest.contains(index))
            .map(|(_, (a, b))| a.value * b.value)
            .sum();
        let shown_sum = |d: usize| {
            largest
                .iter()
                .map(|&index| {
                    let (a, b) = &terms[index];
                    shown(a.value, d) * shown(b.value, d)
                })
                .sum::<f64>()
                + bias.map_or(0.0, |bias| shown(bias, d))
        };
        // The operands' decimals, then the rest's (never more than the operands'): the fewest
        // with which the whole lands.
        let found = (decimals..=decimals + EXTRA_OPERAND_DECIMALS).find_map(|d| {
            let at = shown_sum(d);
            (decimals..=d)
                .find(|&r| number_is(at + shown(rest, r), decimals, result))
                .map(|r| (d, r))
        });
        let (d, r) = found.unwrap_or((
            decimals + EXTRA_OPERAND_DECIMALS,
            decimals + EXTRA_OPERAND_DECIMALS,
        ));
        let (_, result) = written(found.map(|(d, _)| d), decimals, result);
        let mut pieces: Vec<String> = largest
            .iter()
            .map(|&index| {
                let (a, b) = &terms[index];
                product_text(a.value, b.value, d)
            })
            .collect();
        let others = terms.len() - largest.len();
        let term = match (rest_as, others) {
            (Rest::Short, _) => "",
            (Rest::Terms, 1) => " term",
            (Rest::Terms, _) => " terms",
        };
        pieces.push(format!(
            "{others} more{term} (sum {})",
            format_number(rest, r)
        ));
        // The bias last, as the whole working writes it.
        pieces.extend(bias.map(|bias| in_a_sum(format_number(bias, d))));
        Largest {
            pieces,
            shown: largest.len(),
            total: terms.len(),
            result,
            bias: bias.is_some(),
        }
    }

    /// What the working writes and in what order.
    fn note(&self) -> String {
        let then = if self.bias {
            "then the others' sum and the bias"
        } else {
            "then the others' sum"
        };
        match self.shown {
            1 => format!("the largest of the {} terms, {then}", self.total),
            n => format!(
                "the {n} largest of the {} terms, largest first, {then}",
                self.total
            ),
        }
    }
}

/// How the others' sum is written after the largest terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rest {
    /// `63 more terms (sum s)`.
    Terms,
    /// `63 more (sum s)`, where the line has no room for the word.
    Short,
}

/// `(a × b)` with both numbers to `decimals`, written into one string: a working may have
/// hundreds of terms.
fn product_text(a: f64, b: f64, decimals: usize) -> String {
    let mut text = String::with_capacity(24);
    text.push('(');
    push_number(&mut text, a, decimals);
    text.push_str(" × ");
    push_number(&mut text, b, decimals);
    text.push(')');
    text
}

/// A number in a sum, a negative one in parentheses: `1.5 + (-2.25)`.
fn in_a_sum(text: String) -> String {
    if text.starts_with('-') {
        format!("({text})")
    } else {
        text
    }
}
