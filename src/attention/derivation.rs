//! Where a cell comes from: its operand cells and the arithmetic, with the real numbers.
//!
//! This is the heart of the tutor. The UI highlights `Derivation::operands` in their own matrices
//! and prints `Derivation::explain`; the command line prints the same text.

use super::number::{format_magnitude, format_number};
use super::{Attention, Cell, MatrixName};

/// One number that went into a cell, and where it sits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Operand {
    pub cell: Cell,
    pub value: f64,
}

/// How a cell's value was made.
#[derive(Debug, Clone, PartialEq)]
pub enum Rule {
    /// A number of the lesson itself (typed in the file, generated, or edited).
    Input,
    /// A dot product: Σ left × right, term by term.
    Dot { terms: Vec<(Operand, Operand)> },
    /// A score divided by √d_k.
    Scale {
        score: Operand,
        d_k: usize,
        divisor: f64,
    },
    /// A score plus the mask: 0 keeps it, -inf hides it, another number is a bias that shifts it.
    Mask { score: Operand, mask: Operand },
    /// exp of one score over the sum of the exps of its row.
    Softmax {
        row: Vec<Operand>,
        /// Position of this cell's own score within `row`.
        selected: usize,
        /// The row maximum subtracted before exp (the stable form); the result is the same.
        row_max: f64,
        shifted_exps: Vec<f64>,
        shifted_sum: f64,
    },
    /// Every key of the row is masked: the weight is 0 by definition, never NaN.
    FullyMasked { row: Vec<Operand> },
}

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
        let matrix = self.matrix(cell.matrix)?;
        if cell.row >= matrix.nrows() || cell.col >= matrix.ncols() {
            return None;
        }
        let value = matrix[(cell.row, cell.col)];
        let operand = |matrix: MatrixName, row: usize, col: usize| -> Option<Operand> {
            let values = self.matrix(matrix)?;
            Some(Operand {
                cell: Cell::new(matrix, row, col),
                value: values[(row, col)],
            })
        };
        let rule = match cell.matrix {
            MatrixName::Q | MatrixName::K | MatrixName::V => {
                let weights = match cell.matrix {
                    MatrixName::Q => MatrixName::WQ,
                    MatrixName::K => MatrixName::WK,
                    _ => MatrixName::WV,
                };
                match (&self.embeddings, self.matrix(weights)) {
                    (Some(x), Some(_)) => Rule::Dot {
                        terms: (0..x.ncols())
                            .map(|m| {
                                Some((
                                    operand(MatrixName::Embeddings, cell.row, m)?,
                                    operand(weights, m, cell.col)?,
                                ))
                            })
                            .collect::<Option<_>>()?,
                    },
                    // The lesson gave Q, K and V directly.
                    _ => Rule::Input,
                }
            }
            MatrixName::Scores => Rule::Dot {
                terms: (0..self.d_k())
                    .map(|m| {
                        Some((
                            operand(MatrixName::Q, cell.row, m)?,
                            operand(MatrixName::K, cell.col, m)?,
                        ))
                    })
                    .collect::<Option<_>>()?,
            },
            MatrixName::Scaled => Rule::Scale {
                score: operand(MatrixName::Scores, cell.row, cell.col)?,
                d_k: self.d_k(),
                divisor: self.scale_divisor,
            },
            MatrixName::Masked => {
                let before = if self.scaled.is_some() {
                    MatrixName::Scaled
                } else {
                    MatrixName::Scores
                };
                Rule::Mask {
                    score: operand(before, cell.row, cell.col)?,
                    mask: operand(MatrixName::Mask, cell.row, cell.col)?,
                }
            }
            MatrixName::Weights => {
                let input = self.softmax_input();
                let width = self.scores.ncols();
                let row = (0..width)
                    .map(|col| operand(input, cell.row, col))
                    .collect::<Option<Vec<_>>>()?;
                if self.softmax.fully_masked[cell.row] {
                    Rule::FullyMasked { row }
                } else {
                    Rule::Softmax {
                        row,
                        selected: cell.col,
                        row_max: self.softmax.row_max[cell.row],
                        shifted_exps: self
                            .softmax
                            .shifted_exps
                            .row(cell.row)
                            .iter()
                            .copied()
                            .collect(),
                        shifted_sum: self.softmax.shifted_sums[cell.row],
                    }
                }
            }
            MatrixName::Output => Rule::Dot {
                terms: (0..self.v.nrows())
                    .map(|j| {
                        Some((
                            operand(MatrixName::Weights, cell.row, j)?,
                            operand(MatrixName::V, j, cell.col)?,
                        ))
                    })
                    .collect::<Option<_>>()?,
            },
            MatrixName::Embeddings
            | MatrixName::WQ
            | MatrixName::WK
            | MatrixName::WV
            | MatrixName::Mask => Rule::Input,
        };
        Some(Derivation { cell, value, rule })
    }

    /// How a cell is named to a learner: `scores[cat, sat]`, `Q[cat, 2]`, `W_q[3, 1]`.
    pub fn cell_name(&self, cell: Cell) -> String {
        format!(
            "{}[{}, {}]",
            cell.matrix.symbol(),
            self.row_label(cell.matrix, cell.row),
            self.column_label(cell.matrix, cell.col)
        )
    }
}

impl Derivation {
    /// The cells this one is computed from, for highlighting.
    pub fn operands(&self) -> Vec<Cell> {
        match &self.rule {
            Rule::Input => Vec::new(),
            Rule::Dot { terms } => terms.iter().flat_map(|(a, b)| [a.cell, b.cell]).collect(),
            Rule::Scale { score, .. } => vec![score.cell],
            Rule::Mask { score, mask } => vec![score.cell, mask.cell],
            Rule::Softmax { row, .. } | Rule::FullyMasked { row } => {
                row.iter().map(|operand| operand.cell).collect()
            }
        }
    }

    /// The cell `e` goes to from this one: for a step that works cell by cell (scaling,
    /// masking, softmax) the same cell of the matrix before, which the softmax row holds at
    /// `selected`; for a dot product its first term. `None` for a lesson's own number.
    pub fn source(&self) -> Option<Cell> {
        match &self.rule {
            Rule::Input => None,
            Rule::Dot { terms } => terms.first().map(|(left, _)| left.cell),
            Rule::Scale { score, .. } | Rule::Mask { score, .. } => Some(score.cell),
            Rule::Softmax { row, selected, .. } => row.get(*selected).map(|operand| operand.cell),
            Rule::FullyMasked { row } => row
                .iter()
                .find(|operand| operand.cell.col == self.cell.col)
                .map(|operand| operand.cell),
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
        let lands = |worked: f64| format_number(worked, decimals) == result;
        let digits = |worked_at: &dyn Fn(usize) -> f64| {
            (decimals..=decimals + EXTRA_OPERAND_DECIMALS).find(|&d| lands(worked_at(d)))
        };
        let shown =
            |value: f64, d: usize| -> f64 { format_number(value, d).parse().unwrap_or(value) };
        let name = attention.cell_name(self.cell);
        let row_token = attention.row_label(self.cell.matrix, self.cell.row);
        let one = |text: String| vec![text];
        let (sides, note) = match &self.rule {
            Rule::Input => (
                vec![one(num(self.value))],
                Some("a number of the lesson".to_string()),
            ),
            Rule::Dot { terms } => {
                let operands = match self.cell.matrix {
                    MatrixName::Scores => format!(
                        "q_{row_token} · k_{}",
                        attention.column_label(MatrixName::Scores, self.cell.col)
                    ),
                    MatrixName::Output => {
                        format!("weights[{row_token}, :] · V[:, {}]", self.cell.col + 1)
                    }
                    _ => {
                        let weights = terms.first().map_or("W", |(_, w)| w.cell.matrix.symbol());
                        format!("x_{row_token} · {weights}[:, {}]", self.cell.col + 1)
                    }
                };
                let worked = |d: usize| {
                    terms
                        .iter()
                        .map(|(a, b)| shown(a.value, d) * shown(b.value, d))
                        .sum::<f64>()
                };
                let (d, result) = written(digits(&worked), decimals, &result);
                let products = terms
                    .iter()
                    .map(|(a, b)| {
                        format!(
                            "({} × {})",
                            format_number(a.value, d),
                            format_number(b.value, d)
                        )
                    })
                    .collect();
                (vec![one(operands), products, one(result)], None)
            }
            Rule::Scale {
                score,
                d_k,
                divisor,
            } => {
                let worked = |d: usize| shown(score.value, d) / shown(*divisor, d);
                let (d, result) = written(digits(&worked), decimals, &result);
                (
                    vec![
                        one(format!("{} / √d_k", attention.cell_name(score.cell))),
                        one(format!("{} / √{d_k}", format_number(score.value, d))),
                        one(format!(
                            "{} / {}",
                            format_number(score.value, d),
                            format_number(*divisor, d)
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
                let source_row = format!("{}[{row_token}, :]", source.cell.matrix.symbol());
                // Learners know softmax as exp(x) / Σ exp(x); show that form whenever its numbers
                // are finite, and the shifted (stable) form only when they would overflow.
                let raw: Vec<f64> = row.iter().map(|operand| operand.value.exp()).collect();
                let raw_sum: f64 = raw.iter().sum();
                if raw_sum.is_finite() && raw_sum > 0.0 {
                    let magnitude = |value: f64, d: usize| -> f64 {
                        format_magnitude(value, d).parse().unwrap_or(value)
                    };
                    let worked = |d: usize| magnitude(raw[*selected], d) / magnitude(raw_sum, d);
                    let (d, result) = written(digits(&worked), decimals, &result);
                    (
                        vec![
                            one(format!("exp({}) / Σ exp({source_row})", num(source.value))),
                            one(format!(
                                "{} / {}",
                                format_magnitude(raw[*selected], d),
                                format_magnitude(raw_sum, d)
                            )),
                            one(result),
                        ],
                        None,
                    )
                } else {
                    (
                        vec![
                            one(format!(
                                "exp({} - {}) / Σ exp({source_row} - {})",
                                num(source.value),
                                num(*row_max),
                                num(*row_max)
                            )),
                            one(format!(
                                "{} / {}",
                                format_magnitude(shifted_exps[*selected], decimals),
                                format_magnitude(*shifted_sum, decimals)
                            )),
                            one(num(self.value)),
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
        };
        Explanation { name, sides, note }
    }
}

/// Decimals an operand may be given beyond the lesson's, for its arithmetic to land.
const EXTRA_OPERAND_DECIMALS: usize = 6;

/// The operands' decimals and the result as written: with `found` decimals the arithmetic lands
/// on the result; when no number of decimals makes it land (a sum of many rounded terms), the
/// most are shown and the result is marked ≈.
fn written(found: Option<usize>, decimals: usize, result: &str) -> (usize, String) {
    match found {
        Some(d) => (d, result.to_string()),
        None => (decimals + EXTRA_OPERAND_DECIMALS, format!("≈ {result}")),
    }
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
    let weight = attention.softmax.weights[(cell.row, cell.col)];
    Some(if bias > 0.0 {
        format!("a bias of {bias} added to the score; it raises this key's weight")
    } else if weight > 0.0 {
        format!(
            "a bias of {bias} added to the score: unlike -inf it does not hide the key, so \
             its weight shrinks but is not 0"
        )
    } else {
        format!(
            "a bias of {bias} added to the score: unlike -inf it does not hide the key, but \
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
