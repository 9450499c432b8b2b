//! Where a cell comes from: its operand cells and the arithmetic, with the real numbers.
//!
//! This is the heart of the tutor. The UI highlights `Derivation::operands` in their own matrices
//! and prints `Derivation::explain`; the command line prints the same text.

use super::landing::{EXTRA_OPERAND_DECIMALS, Turned, landing_digits, shown, written};
use super::number::{
    format_fixed, format_magnitude, format_number, magnitude_rounded, number_is, push_number,
    rounded, written_alike,
};
use super::{Attention, Cell, MatrixName};
use crate::ops::{Operand, Rule, Site};

/// A cell, its value, and how it was computed.
#[derive(Debug, Clone, PartialEq)]
pub struct Derivation {
    pub cell: Cell,
    pub value: f64,
    pub rule: Rule,
}

impl Attention {
    /// Explains one cell of any matrix of this lesson; `None` when the matrix is absent or the
    /// cell is out of range.
    pub fn derive(&self, cell: Cell) -> Option<Derivation> {
        let cell = cell.in_head(cell.head).at_token(cell.token);
        let token = cell.token;
        let matrix = self.matrix_at(cell.matrix, cell.head, token)?;
        if cell.row >= matrix.nrows() || cell.col >= matrix.ncols() {
            return None;
        }
        let value = matrix[(cell.row, cell.col)];
        let origin = self.plan.origin(cell.matrix)?;
        let site = Site {
            cells: self,
            cell,
            width: matrix.ncols(),
        };
        let rule = origin.operation().derive(&site)?;
        Some(Derivation { cell, value, rule })
    }

    /// How a cell is named to a learner: `scores[cat, sat]`, `Q[cat, 2]`, `W_q[3, 1]`.
    pub fn cell_name(&self, cell: Cell) -> String {
        // Written into one string: every working names its cell and each of its operands.
        let symbol = self.symbol(cell.matrix);
        let mut name = String::with_capacity(symbol.len() + 32);
        name.push_str(symbol);
        self.push_head_mark(&mut name, cell.matrix, cell.head);
        name.push('[');
        self.push_row_label_at(&mut name, cell.matrix, cell.row, cell.token);
        // One number per row (the online softmax's m, l, rescale) has no column: `m[cat]`.
        if cell.matrix.entry().cols != crate::pipeline::Axis::Single {
            name.push_str(", ");
            self.push_label(&mut name, cell.matrix.entry().cols, cell.col);
        }
        name.push(']');
        name
    }

    /// How one row of a matrix is named in a dot product: `q_cat`, or `weights[cat, :]`; a
    /// head's row carries its head when the lesson has several (`q⁽²⁾_cat`). `token` is the
    /// position of the step of generation a one-row matrix of it is.
    pub fn row_name(&self, matrix: MatrixName, head: usize, row: usize, token: usize) -> String {
        let mut name = String::with_capacity(32);
        match self.plan.row_vector(matrix) {
            Some(vector) => {
                name.push_str(vector);
                self.push_head_mark(&mut name, matrix, head);
                name.push('_');
                self.push_row_label_at(&mut name, matrix, row, token);
            }
            None => {
                name.push_str(self.symbol(matrix));
                self.push_head_mark(&mut name, matrix, head);
                name.push('[');
                self.push_row_label_at(&mut name, matrix, row, token);
                name.push_str(", :]");
            }
        }
        name
    }
}

impl Derivation {
    /// The cells this one is computed from, for highlighting.
    pub fn operands(&self) -> Vec<Cell> {
        match &self.rule {
            Rule::Input => Vec::new(),
            Rule::Dot { terms, .. } => terms.iter().flat_map(|(a, b)| [a.cell, b.cell]).collect(),
            Rule::Add { left, right } => vec![left.cell, right.cell],
            Rule::Sinusoid { .. } => Vec::new(),
            Rule::Rotate { first, second, .. } => vec![first.cell, second.cell],
            Rule::Scale { score, .. } => vec![score.cell],
            Rule::Mask { score, mask } => vec![score.cell, mask.cell],
            Rule::Softmax { row, .. } | Rule::FullyMasked { row } => {
                row.iter().map(|operand| operand.cell).collect()
            }
            Rule::Concat { from } | Rule::TokenRow { from } | Rule::Cached { from, .. } => {
                vec![from.cell]
            }
            Rule::Online(online) => online.operands(),
            Rule::Backward(backward) => backward.operands(),
        }
    }

    /// The cell `e` goes to from this one: for a step that works cell by cell (scaling,
    /// masking, softmax) the same cell of the matrix before, which the softmax row holds at
    /// `selected`; for a dot product its first term. `None` for a lesson's own number.
    pub fn source(&self) -> Option<Cell> {
        match &self.rule {
            Rule::Input | Rule::Sinusoid { .. } => None,
            Rule::Dot { terms, .. } => terms.first().map(|(left, _)| left.cell),
            Rule::Add { left, .. } => Some(left.cell),
            Rule::Rotate {
                first,
                second,
                lower,
                ..
            } => Some(if *lower { first.cell } else { second.cell }),
            Rule::Scale { score, .. } | Rule::Mask { score, .. } => Some(score.cell),
            Rule::Softmax { row, selected, .. } => row.get(*selected).map(|operand| operand.cell),
            Rule::FullyMasked { row } => row
                .iter()
                .find(|operand| operand.cell.col == self.cell.col)
                .map(|operand| operand.cell),
            Rule::Concat { from } | Rule::TokenRow { from } | Rule::Cached { from, .. } => {
                Some(from.cell)
            }
            Rule::Online(online) => online.source(),
            Rule::Backward(backward) => backward.source(),
        }
    }

    /// The arithmetic written out with the real numbers, e.g.
    /// `scores[cat, sat] = q_cat · k_sat = (0 × 1) + (1 × 1) = 1`.
    pub fn explain(&self, attention: &Attention, decimals: usize) -> String {
        let explanation = self.explanation(attention, decimals);
        let mut text = explanation.name.clone();
        for side in &explanation.sides {
            text.push_str(" = ");
            text.push_str(&side.join(" + "));
        }
        if let Some(note) = &explanation.note {
            let punctuated = match self.rule {
                Rule::Input => format!(", {note}"),
                Rule::FullyMasked { .. } => format!(": {note}"),
                _ => format!(" ({note})"),
            };
            text.push_str(&punctuated);
        }
        text
    }

    /// The same arithmetic in parts, for a screen that lays it out over several lines.
    pub fn explanation(&self, attention: &Attention, decimals: usize) -> Explanation {
        let num = |value: f64| format_number(value, decimals);
        // The operands are written with as many decimals as it takes for the arithmetic as
        // written to give the result as written: a learner who works it out from the screen
        // (in practice mode, say) must land on the answer, not a unit off.
        let result = num(self.value);
        let digits =
            |worked_at: &dyn Fn(usize) -> f64| landing_digits(decimals, &result, worked_at);
        let name = attention.cell_name(self.cell);
        let row_token = attention.row_label_at(self.cell.matrix, self.cell.row, self.cell.token);
        let one = |text: String| vec![text];
        let (sides, note) = match &self.rule {
            Rule::Online(online) => {
                online.explanation(attention, self.cell, self.value, decimals, &result)
            }
            Rule::Backward(backward) => backward.explanation(attention, decimals, &result),
            Rule::Input => (
                vec![one(num(self.value))],
                Some("a number of the lesson".to_string()),
            ),
            Rule::Dot {
                terms,
                transpose_right,
            } => {
                let operands = match terms.first() {
                    Some((left, right)) => format!(
                        "{} · {}",
                        attention.row_name(
                            left.cell.matrix,
                            left.cell.head,
                            self.cell.row,
                            left.cell.token
                        ),
                        if *transpose_right {
                            attention.row_name(
                                right.cell.matrix,
                                right.cell.head,
                                self.cell.col,
                                right.cell.token,
                            )
                        } else {
                            let symbol = attention.symbol_in(right.cell.matrix, right.cell.head);
                            let col = attention.column_label(right.cell.matrix, self.cell.col);
                            // In words, not `W_o[3:4, 2]`: a slice reads as one row in numpy.
                            match head_rows(attention, terms) {
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
                let worked_terms = |terms: &[(Operand, Operand)], d: usize| {
                    terms
                        .iter()
                        .map(|(a, b)| shown(a.value, d) * shown(b.value, d))
                        .sum::<f64>()
                };
                let exact_terms = |terms: &[(Operand, Operand)]| -> f64 {
                    terms.iter().map(|(a, b)| a.value * b.value).sum()
                };
                let blocks = head_blocks(attention, terms);
                // With several heads, each head's contribution is said too: the operands take
                // the decimals that make every head's block land as well as the whole sum.
                let said: Vec<String> = blocks
                    .iter()
                    .flatten()
                    .map(|block| num(exact_terms(block)))
                    .collect();
                let found =
                    (decimals..=decimals + EXTRA_OPERAND_DECIMALS).find(|&d| {
                        number_is(worked_terms(terms, d), decimals, &result)
                            && blocks.iter().flatten().zip(&said).all(|(block, said)| {
                                number_is(worked_terms(block, d), decimals, said)
                            })
                    });
                let found = found.or_else(|| digits(&|d| worked_terms(terms, d)));
                let (d, result) = written(found, decimals, &result);
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
                    // concat · W_o: the terms come in blocks, one per head, and each block is
                    // what that head contributes to the output.
                    Some(blocks) => {
                        let grouped = blocks
                            .iter()
                            .map(|block| {
                                let inner: Vec<String> = block.iter().map(product).collect();
                                format!("[{}]", inner.join(" + "))
                            })
                            .collect();
                        let contributions: Vec<String> = blocks
                            .iter()
                            .enumerate()
                            .map(|(head, block)| {
                                let said = num(exact_terms(block));
                                let lands = num(worked_terms(block, d)) == said;
                                let about = if lands { "" } else { "≈ " };
                                format!("head {} contributes {about}{said}", head + 1)
                            })
                            .collect();
                        (
                            vec![one(operands), grouped, one(result)],
                            Some(contributions.join(", ")),
                        )
                    }
                    None => (
                        vec![
                            one(operands),
                            terms.iter().map(product).collect(),
                            one(result),
                        ],
                        hidden_key_note(attention, self.cell),
                    ),
                }
            }
            Rule::Add { left, right } => {
                let worked = |d: usize| shown(left.value, d) + shown(right.value, d);
                let (d, result) = written(digits(&worked), decimals, &result);
                (
                    vec![
                        one(format!(
                            "{} + {}",
                            attention.cell_name(left.cell),
                            attention.cell_name(right.cell)
                        )),
                        one(format!(
                            "{} + ({})",
                            format_number(left.value, d),
                            format_number(right.value, d)
                        )),
                        one(result),
                    ],
                    None,
                )
            }
            Rule::Sinusoid {
                position,
                pair,
                d_model,
                angle,
                cosine,
            } => {
                let function = if *cosine { "cos" } else { "sin" };
                let apply = |angle: f64| if *cosine { angle.cos() } else { angle.sin() };
                let (d, result) = written(digits(&|d| apply(shown(*angle, d))), decimals, &result);
                let base = 10000f64.powf(2.0 * *pair as f64 / *d_model as f64);
                (
                    vec![
                        one(format!(
                            "{function}({position} / 10000^(2·{pair}/{d_model}))"
                        )),
                        one(format!(
                            "{function}({position} / {})",
                            format_magnitude(base, decimals)
                        )),
                        one(format!("{function}({})", format_number(*angle, d))),
                        one(result),
                    ],
                    Some(format!(
                        "row {} is {} (positions count from 0{}), and \
                         column {} is c = {} (the formula counts columns from 0), so \
                         i = ⌊c/2⌋ = {pair}, and an {} c takes {function}",
                        self.cell.row + 1,
                        position_words(attention, self.cell.matrix, *position),
                        counted_from(attention, self.cell.matrix),
                        self.cell.col + 1,
                        self.cell.col,
                        if *cosine { "odd" } else { "even" }
                    )),
                )
            }
            Rule::Rotate {
                first,
                second,
                position,
                pair,
                d_k,
                angle,
                lower,
            } => {
                let (sin, cos) = angle.sin_cos();
                // The first of a pair is a·cos φ − b·sin φ, the second a·sin φ + b·cos φ.
                let ((a_trig, a_factor), (b_trig, b_factor)) = if *lower {
                    (("cos φ", cos), ("sin φ", sin))
                } else {
                    (("sin φ", sin), ("cos φ", cos))
                };
                let turned = Turned {
                    first: (attention.cell_name(first.cell), first.value),
                    second: (attention.cell_name(second.cell), second.value),
                    first_factor: (a_trig, a_factor),
                    second_factor: (b_trig, b_factor),
                    minus: *lower,
                };
                (
                    turned.lines(decimals, &result),
                    Some(format!(
                        "the angle φ = p · 10000^(−2i/d_k) = {position} · 10000^(−2·{pair}/{d_k}) \
                         = {} rad: {} {} is {} (positions count from 0{}), and \
                         this is pair i = {pair}",
                        format_number(*angle, decimals + 2),
                        // A generation step's one row is its token's.
                        if self.cell.matrix.per_token() {
                            "token"
                        } else {
                            "row"
                        },
                        position + 1,
                        position_words(attention, self.cell.matrix, *position),
                        counted_from(attention, self.cell.matrix),
                    )),
                )
            }
            Rule::Scale {
                score,
                d_k,
                divisor,
            } => {
                // √d_k is one number for the whole step: every cell writes it with the same
                // decimals, and its score with as many as it needs.
                let quotient_lands = |value: f64, shared: usize, own: usize| {
                    written_alike(
                        shown(value, own) / shown(*divisor, shared),
                        value / divisor,
                        decimals,
                    )
                };
                let step_scores: Vec<f64> = attention
                    .matrix_at(score.cell.matrix, score.cell.head, score.cell.token)
                    .map(|scores| {
                        let rows =
                            if scores.len() > WHOLE_STEP_CELLS && score.cell.row < scores.nrows() {
                                score.cell.row..score.cell.row + 1
                            } else {
                                0..scores.nrows()
                            };
                        rows.flat_map(|row| scores.row(row).iter().copied().collect::<Vec<_>>())
                            .filter(|value| value.is_finite())
                            .collect()
                    })
                    .unwrap_or_default();
                // The step's decimals are chosen with the fast estimate of each written number
                // (a step has up to WHOLE_STEP_CELLS of them); this cell's are checked as written.
                let roughly_lands = |value: f64, shared: usize, own: usize| {
                    rounded(rounded(value, own) / rounded(*divisor, shared), decimals)
                        == rounded(value / divisor, decimals)
                };
                let shared = shared_digits(decimals, step_scores.len(), |cell, shared, own| {
                    roughly_lands(step_scores[cell], shared, own)
                });
                let found = own_and_shared_digits(decimals, shared, |shared, own| {
                    quotient_lands(score.value, shared, own)
                });
                let ((own, shared), result) = digits_written(found, decimals, &result);
                (
                    vec![
                        one(format!("{} / √d_k", attention.cell_name(score.cell))),
                        one(format!("{} / √{d_k}", format_number(score.value, own))),
                        one(format!(
                            "{} / {}",
                            format_number(score.value, own),
                            format_number(*divisor, shared)
                        )),
                        one(result),
                    ],
                    None,
                )
            }
            Rule::Mask { score, mask } => (
                vec![
                    one(format!(
                        "{} + {}",
                        attention.cell_name(score.cell),
                        attention.cell_name(mask.cell)
                    )),
                    one(format!("{} + ({})", num(score.value), num(mask.value))),
                    one(num(self.value)),
                ],
                mask_note(attention, self.cell, mask.value),
            ),
            Rule::Softmax {
                row,
                selected,
                row_max,
                shifted_exps,
                shifted_sum,
            } => {
                let source = row[*selected];
                let source_row = format!(
                    "{}[{row_token}, :]",
                    attention.symbol_in(source.cell.matrix, source.cell.head)
                );
                // Learners know softmax as exp(x) / Σ exp(x); show that form whenever its numbers
                // are finite, and the shifted (stable) form only when they would overflow.
                let raw: Vec<f64> = row.iter().map(|operand| operand.value.exp()).collect();
                let raw_sum: f64 = raw.iter().sum();
                if !softmax_is_shifted(raw_sum) {
                    let magnitude = |value: f64, d: usize| -> f64 {
                        format_magnitude(value, d).parse().unwrap_or(value)
                    };
                    // Σ is one number for the whole row: every key's cell writes it with the
                    // same decimals, and its own exponential with as many as it needs.
                    let quotient_lands = |key: usize, shared: usize, own: usize| {
                        num(magnitude(raw[key], own) / magnitude(raw_sum, shared))
                            == num(raw[key] / raw_sum)
                    };
                    let roughly_lands = |key: usize, shared: usize, own: usize| {
                        rounded(
                            magnitude_rounded(raw[key], own) / magnitude_rounded(raw_sum, shared),
                            decimals,
                        ) == rounded(raw[key] / raw_sum, decimals)
                    };
                    let shared = shared_digits(decimals, raw.len(), roughly_lands);
                    let found = own_and_shared_digits(decimals, shared, |shared, own| {
                        quotient_lands(*selected, shared, own)
                    });
                    let ((own, shared), result) = digits_written(found, decimals, &result);
                    let numerator = format_magnitude(raw[*selected], own);
                    let exponent =
                        exponent_digits(|e| shown(source.value, e), decimals, &numerator, own);
                    (
                        vec![
                            one(format!(
                                "exp({}) / Σ exp({source_row})",
                                format_number(source.value, exponent)
                            )),
                            one(format!(
                                "{numerator} / {}",
                                format_magnitude(raw_sum, shared)
                            )),
                            one(result),
                        ],
                        None,
                    )
                } else {
                    let magnitude = |value: f64, d: usize| -> f64 {
                        format_magnitude(value, d).parse().unwrap_or(value)
                    };
                    let worked = |d: usize| {
                        magnitude(shifted_exps[*selected], d) / magnitude(*shifted_sum, d)
                    };
                    let (d, result) = written(digits(&worked), decimals, &result);
                    let numerator = format_magnitude(shifted_exps[*selected], d);
                    let exponent = exponent_digits(
                        |e| shown(source.value, e) - shown(*row_max, e),
                        decimals,
                        &numerator,
                        d,
                    );
                    (
                        vec![
                            one(format!(
                                "exp({} - {}) / Σ exp({source_row} - {})",
                                format_number(source.value, exponent),
                                format_number(*row_max, exponent),
                                format_number(*row_max, exponent)
                            )),
                            one(format!(
                                "{numerator} / {}",
                                format_magnitude(*shifted_sum, d)
                            )),
                            one(result),
                        ],
                        Some(format!(
                            "the row maximum {} is subtracted first so that exp does not overflow",
                            num(*row_max)
                        )),
                    )
                }
            }
            Rule::FullyMasked { .. } => (
                vec![one("0".to_string())],
                Some(format!(
                    "every key of row {row_token} is masked (-inf), so there is nothing to \
                     attend to: exp(-inf) / Σ exp(-inf) is 0 / 0. The whole row of weights is 0 \
                     here, as PyTorch's scaled_dot_product_attention gives since version 2.5; \
                     older versions and a plain softmax give NaN, and a tutorial's \
                     masked_fill(…, -1e9) would give every key 1/n"
                )),
            ),
            Rule::Concat { from } => (
                vec![one(attention.cell_name(from.cell)), one(num(from.value))],
                Some(format!(
                    "column {} of concat is column {} of head {}'s output",
                    self.cell.col + 1,
                    from.cell.col + 1,
                    from.cell.head + 1
                )),
            ),
            Rule::TokenRow { from } => (
                vec![one(attention.cell_name(from.cell)), one(num(from.value))],
                Some(format!(
                    "the row of {} for the token being generated, {}",
                    attention.symbol(from.cell.matrix),
                    token_words(attention, self.cell.token)
                )),
            ),
            Rule::Cached { from, new } => (
                vec![one(attention.cell_name(from.cell)), one(num(from.value))],
                Some(if *new {
                    format!(
                        "new: computed for {}, the token being generated, and added to the cache",
                        token_words(attention, self.cell.token)
                    )
                } else {
                    format!(
                        "kept in the cache since it was computed for {}; not computed again",
                        token_words(attention, from.cell.token)
                    )
                }),
            ),
        };
        // The result as the step's table writes it, all its decimals (0.050, not 0.05: the
        // same number, read to the same precision); a whole number stays whole, as do the
        // lesson's own numbers, which are exactly as the lesson writes them.
        let mut sides = sides;
        // Written only where it may be used: writing it for every cell was 7 % of a small
        // lesson's workings.
        if self.value.fract() != 0.0
            && !matches!(self.rule, Rule::Input)
            && let fixed = format_fixed(self.value, decimals)
            && fixed != result
            && let Some(last) = sides.last_mut().filter(|last| last.len() == 1)
        {
            if last[0] == result {
                last[0] = fixed;
            } else if last[0] == format!("≈ {result}") {
                last[0] = format!("≈ {fixed}");
            }
        }
        Explanation { name, sides, note }
    }

    /// concat · W_o written head by head, for a sum too long to read whole (64 terms from 8
    /// heads): the cell as the sum of the heads' parts, and each part as its own dot product,
    /// head h's output times its block of W_o's rows. Of more than three heads the sum is
    /// written for each head h as head h's part plus the other heads' parts, so that a learner
    /// reading head h's terms adds two numbers, not eight. `None` for any other working.
    pub fn head_parts(&self, attention: &Attention, decimals: usize) -> Option<HeadParts> {
        let Rule::Dot {
            terms,
            transpose_right: false,
        } = &self.rule
        else {
            return None;
        };
        let blocks = head_blocks(attention, terms)?;
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
        let row = attention.row_name(
            left.cell.matrix,
            left.cell.head,
            self.cell.row,
            left.cell.token,
        );
        let symbol = attention.symbol_in(right.cell.matrix, right.cell.head);
        let col = attention.column_label(right.cell.matrix, self.cell.col);
        let formula = vec![format!("{row} · {symbol}[:, {col}]")];
        // The numbers summed, each with the decimals that make their sum, as written, land on
        // the result: the parts' decimals and the result as written.
        let landed = |numbers: &[f64]| {
            let result = format_number(self.value, decimals);
            let found = landing_digits(decimals, &result, |k| {
                numbers.iter().map(|number| shown(*number, k)).sum::<f64>()
            });
            let (k, mut result) = written(found, decimals, &result);
            let fixed = format_fixed(self.value, decimals);
            if self.value.fract() != 0.0 && fixed.starts_with(&result) {
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
                        name: attention.cell_name(self.cell),
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
                name: attention.cell_name(self.cell),
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
                            attention.symbol_in(output, head),
                            attention.row_label_at(
                                left.cell.matrix,
                                self.cell.row,
                                left.cell.token
                            ),
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

/// The decimals to write a number the cells of a step share with (√d_k, a softmax row's Σ):
/// of the lesson's and up to `SHARED_EXTRA_DECIMALS` more, the fewest with which the most cells
/// land, each cell's own operand taking the decimals it needs. `lands(cell, shared, own)` says
/// whether cell `cell`'s arithmetic lands with the shared number at `shared` decimals and its
/// own operand at `own`.
fn shared_digits(
    decimals: usize,
    cells: usize,
    lands: impl Fn(usize, usize, usize) -> bool,
) -> usize {
    let landing = |shared: usize| {
        (0..cells)
            .filter(|&cell| {
                (decimals..=decimals + EXTRA_OPERAND_DECIMALS).any(|own| lands(cell, shared, own))
            })
            .count()
    };
    let mut best = (decimals, landing(decimals));
    for shared in decimals + 1..=decimals + SHARED_EXTRA_DECIMALS {
        if best.1 == cells {
            break;
        }
        let count = landing(shared);
        if count > best.1 {
            best = (shared, count);
        }
    }
    best.0
}

/// The decimals a cell writes its own operand and the number its step shares with: the shared
/// number's `shared` and the fewest of its own that land; failing that, more of both.
fn own_and_shared_digits(
    decimals: usize,
    shared: usize,
    lands: impl Fn(usize, usize) -> bool,
) -> Option<(usize, usize)> {
    (decimals..=decimals + EXTRA_OPERAND_DECIMALS)
        .find(|&own| lands(shared, own))
        .map(|own| (own, shared))
        .or_else(|| {
            (shared..=decimals + EXTRA_OPERAND_DECIMALS)
                .find(|&d| lands(d, d))
                .map(|d| (d, d))
        })
}

/// The digits of a cell's own operand and of the number its step shares, and its result as
/// written: `≈` and the most digits when none land.
fn digits_written(
    found: Option<(usize, usize)>,
    decimals: usize,
    result: &str,
) -> ((usize, usize), String) {
    match found {
        Some(digits) => (digits, result.to_string()),
        None => {
            let most = decimals + EXTRA_OPERAND_DECIMALS;
            ((most, most), format!("≈ {result}"))
        }
    }
}

/// Decimals a number one step shares (√d_k, a row's Σ) may be given beyond the lesson's for
/// its cells to write it alike. A cell whose result lies a hair from a rounding boundary can
/// need six more; it alone then writes the shared number longer, rather than every cell.
const SHARED_EXTRA_DECIMALS: usize = 2;

/// The most cells a step's working looks over to write every cell alike.
const WHOLE_STEP_CELLS: usize = 1024;

/// The decimals to write x with in `exp(x)` for its exponential, worked out, to be `numerator`
/// as written (at `d` decimals): the lesson's at least, more where e^x rounded differs.
fn exponent_digits(
    x_at: impl Fn(usize) -> f64,
    decimals: usize,
    numerator: &str,
    d: usize,
) -> usize {
    (decimals..=decimals + EXTRA_OPERAND_DECIMALS)
        .find(|&e| format_magnitude(x_at(e).exp(), d) == numerator)
        .unwrap_or(decimals + EXTRA_OPERAND_DECIMALS)
}

/// The rows of the right-hand matrix a dot product reads when they are not all of them: a
/// head's block of W_o's rows (1-based, first and last) for an output-value circuit.
fn head_rows(attention: &Attention, terms: &[(Operand, Operand)]) -> Option<(usize, usize)> {
    let ((_, first), (_, last)) = (terms.first()?, terms.last()?);
    attention
        .matrix_at(first.cell.matrix, first.cell.head, first.cell.token)
        .is_some_and(|matrix| matrix.nrows() != terms.len())
        .then_some((first.cell.row + 1, last.cell.row + 1))
}

/// The terms of concat · W_o split by the head each comes from, when there are several heads.
fn head_blocks<'a>(
    attention: &Attention,
    terms: &'a [(Operand, Operand)],
) -> Option<Vec<&'a [(Operand, Operand)]>> {
    let (left, _) = terms.first()?;
    let output = match left.cell.matrix {
        MatrixName::Concat => MatrixName::Output,
        MatrixName::DecodeConcat => MatrixName::DecodeOutput,
        _ => return None,
    };
    if attention.heads().query < 2 {
        return None;
    }
    let width = attention
        .matrix_at(output, 0, left.cell.token)?
        .ncols()
        .max(1);
    Some(terms.chunks(width).collect())
}

/// Whether a softmax row is written in its shifted form, exp(x − max): only when the plain
/// exponentials overflow (or are all 0), so a learner sees the softmax they know.
pub fn softmax_is_shifted(raw_sum: f64) -> bool {
    !(raw_sum.is_finite() && raw_sum > 0.0)
}

/// On the backward pass's d_weights, a key the softmax gave no weight (hidden by the mask): its
/// d_weights is a number like any other, but no gradient passes through it.
fn hidden_key_note(attention: &Attention, cell: Cell) -> Option<String> {
    if cell.matrix != MatrixName::DWeights {
        return None;
    }
    let weight = attention.weights_of(cell.head).get((cell.row, cell.col))?;
    (*weight == 0.0).then(|| {
        "this key's weight is 0 (hidden by the mask): d_weights says how L would change with a \
         weight the softmax never gives it, and dS passes nothing of it back"
            .to_string()
    })
}

/// What a mask cell did to its score, when it did anything: hid the key, or shifted the score.
fn mask_note(attention: &Attention, cell: Cell, bias: f64) -> Option<String> {
    if bias == 0.0 {
        return None;
    }
    if bias == f64::NEG_INFINITY {
        return Some(if attention.causal {
            "hidden: this key comes after the query".to_string()
        } else {
            "hidden: the mask holds -inf here, so this key's weight is exactly 0".to_string()
        });
    }
    let weight = attention.weights_of(cell.head)[(cell.row, cell.col)];
    let whole_row = attention
        .matrix(MatrixName::Mask)
        .is_some_and(|mask| mask.row(cell.row).iter().all(|other| *other == bias));
    // Written as the screen writes numbers: f32::MIN is not 39 digits.
    let shown = format_number(bias, EXTRA_OPERAND_DECIMALS);
    Some(if whole_row {
        format!(
            "a bias of {shown} added to every score of this row: softmax ignores a shift of the \
             whole row, so unlike -inf it hides nothing here"
        )
    } else if bias > 0.0 {
        format!("a bias of {shown} added to the score; it raises this key's weight")
    } else if weight > 0.0 {
        format!(
            "a bias of {shown} added to the score: unlike -inf it does not hide the key, so \
             its weight shrinks but is not 0"
        )
    } else {
        format!(
            "a bias of {shown} added to the score: unlike -inf it does not hide the key, but \
             this weight is so small that it underflows to 0 in floating point"
        )
    })
}

/// A derivation in parts: `name = side = side = …`, then an optional note. A side with several
/// pieces is a sum, its pieces joined by " + ", so a screen can wrap it between terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    pub name: String,
    pub sides: Vec<Vec<String>>,
    pub note: Option<String>,
}

/// "“sat”, token 3 of 6": a token by its label and its 1-based position.
pub fn token_words(attention: &Attention, token: usize) -> String {
    format!(
        "“{}”, token {} of {}",
        attention.label(crate::pipeline::Axis::Queries, token),
        token + 1,
        attention.seq_len()
    )
}

/// "position p = 3", or in cross-attention, for a row of the source's, "source position p = 3".
fn position_words(attention: &Attention, matrix: MatrixName, position: usize) -> String {
    if is_source_row(attention, matrix) {
        format!("source position p = {position}")
    } else {
        format!("position p = {position}")
    }
}

/// ", in the source" for a row of cross-attention's source, whose positions count from its own
/// first token: empty otherwise.
fn counted_from(attention: &Attention, matrix: MatrixName) -> &'static str {
    if is_source_row(attention, matrix) {
        ", from the source's first token"
    } else {
        ""
    }
}

/// Whether a matrix's rows are cross-attention's source tokens.
fn is_source_row(attention: &Attention, matrix: MatrixName) -> bool {
    attention.plan.shape.cross && matrix.entry().rows == crate::pipeline::Axis::Keys
}
