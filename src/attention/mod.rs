//! The attention engine: pure math on nalgebra, from a validated lesson to every intermediate
//! matrix, computed by running the lesson's plan (`crate::pipeline::Plan`) one operation at a
//! time.
//!
//! Nothing here knows about terminals or files.

mod derivation;
pub mod number;
mod positions;
pub mod quotes;
mod softmax;
mod variant;

pub use derivation::{Derivation, Explanation, Operand, Rule};
pub use positions::{rope_angle, rotate_rows, sinusoid_angle, sinusoidal};
use positions::{rotate_rows_as, sinusoidal_as};
pub use softmax::{RowSoftmax, softmax_rows};
pub use variant::Variant;

pub use crate::pipeline::{Cell, MatrixName, Step};

use std::sync::Arc;

use nalgebra::DMatrix;

use crate::lesson::{Lesson, Mask};
use crate::pipeline::{Op, Plan};

/// Every matrix of one forward pass of self-attention, kept so that each cell can explain itself.
#[derive(Debug, Clone)]
pub struct Attention {
    /// Which matrices this lesson has and how each is made.
    pub plan: Plan,
    /// Token labels: the row labels of X, Q, K, V, scores, weights and output.
    pub tokens: Vec<String>,
    /// The labels rows and columns are shown with: the tokens, with a repeated token told
    /// apart by its position as a subscript (`the₁`, `the₄`).
    labels: Vec<String>,
    /// One slot per matrix of the table, filled for the matrices of the plan. The lesson's own
    /// matrices are shared with it, not copied: W_q alone may be 8 MB.
    matrices: Vec<Option<Arc<DMatrix<f64>>>>,
    /// Whether the mask is the causal one, so a hidden key is one that comes after its query.
    pub causal: bool,
    /// Row softmax of the last of scores / scaled / masked, with its working (max, exps, sums).
    pub softmax: RowSoftmax,
    /// √d_k, the divisor of the scaling step.
    pub scale_divisor: f64,
}

impl Attention {
    /// Runs the whole pipeline for a validated lesson.
    pub fn compute(lesson: &Lesson) -> Attention {
        let plan = Plan::new(lesson.shape());
        let mut matrices: Vec<Option<Arc<DMatrix<f64>>>> = vec![None; MatrixName::ALL.len()];
        let mut softmax = None;
        let scale_divisor = (lesson.d_k() as f64).sqrt();
        for &name in plan.order() {
            let origin = plan.origin(name).unwrap_or(Op::Input);
            let value = match origin {
                Op::Input | Op::Given => match name {
                    MatrixName::Mask => Arc::new(
                        lesson
                            .mask
                            .additive(lesson.seq_len())
                            .unwrap_or_else(|| DMatrix::zeros(0, 0)),
                    ),
                    _ => lesson.input(name).map_or_else(
                        || Arc::new(DMatrix::zeros(0, 0)),
                        |input| Arc::clone(&input.values),
                    ),
                },
                Op::RowSoftmax { of } => {
                    let rows = softmax_rows(stored(&matrices, of));
                    let weights = Arc::new(rows.weights.clone());
                    softmax = Some(rows);
                    weights
                }
                _ => {
                    let size = (lesson.seq_len(), lesson.d_model().unwrap_or(0));
                    Arc::new(evaluate(origin, size, scale_divisor, None, |operand| {
                        stored(&matrices, operand)
                    }))
                }
            };
            matrices[name.index()] = Some(value);
        }
        Attention {
            plan,
            tokens: lesson.tokens.clone(),
            labels: distinct_labels(&lesson.tokens),
            matrices,
            causal: matches!(lesson.mask, Mask::Causal),
            softmax: softmax.unwrap_or_else(|| softmax_rows(&DMatrix::zeros(0, 0))),
            scale_divisor,
        }
    }

    /// The matrices this lesson's plan gives when `variant` (a learner's slip) replaces the
    /// right way of computing `at`: `at` and everything computed from it are made anew, the
    /// rest shared. `None` when the variant does not apply to that operation.
    pub fn with_variant(
        &self,
        at: MatrixName,
        variant: Variant,
    ) -> Option<Vec<Option<Arc<DMatrix<f64>>>>> {
        let origin = self.plan.origin(at)?;
        if !variant.applies_to(origin) {
            return None;
        }
        let mut matrices = self.matrices.clone();
        let mut redo = vec![at];
        for &name in self.plan.order() {
            let origin = self.plan.origin(name)?;
            if name != at
                && !origin
                    .operands()
                    .iter()
                    .any(|operand| redo.contains(operand))
            {
                continue;
            }
            redo.push(name);
            let size = self.matrix(name).map_or((0, 0), DMatrix::shape);
            let chosen = (name == at).then_some(variant);
            let value = evaluate(origin, size, self.scale_divisor, chosen, |operand| {
                stored(&matrices, operand)
            });
            matrices[name.index()] = Some(Arc::new(value));
        }
        Some(matrices)
    }

    /// The attention weights: each row a probability distribution over the keys.
    pub fn weights(&self) -> &DMatrix<f64> {
        &self.softmax.weights
    }

    /// d_k, the width of queries and keys.
    pub fn d_k(&self) -> usize {
        self.matrix(MatrixName::K).map_or(0, DMatrix::ncols)
    }

    /// The matrix with this name, if this lesson has it.
    pub fn matrix(&self, name: MatrixName) -> Option<&DMatrix<f64>> {
        self.matrices[name.index()].as_deref()
    }

    /// The matrix a printed figure of `name` is compared with: `x`, the matrix that is projected,
    /// is the embeddings themselves when nothing is added to them.
    pub fn figure_source(&self, name: MatrixName) -> MatrixName {
        match name {
            MatrixName::X => self.plan.projected_input().unwrap_or(name),
            _ => name,
        }
    }

    /// Whether this lesson has the matrix.
    pub fn has(&self, name: MatrixName) -> bool {
        self.plan.has(name)
    }

    /// The matrix softmax is taken over: masked, else scaled, else raw scores.
    pub fn softmax_input(&self) -> MatrixName {
        self.plan.softmax_input()
    }

    /// A matrix's symbol in this lesson (`X`, or `E` when positions are added to it).
    pub fn symbol(&self, name: MatrixName) -> &'static str {
        self.plan.symbol(name)
    }

    /// Rows whose every key is masked: their weights and output are zero, never NaN.
    pub fn fully_masked_rows(&self) -> impl Iterator<Item = usize> + '_ {
        self.softmax
            .fully_masked
            .iter()
            .enumerate()
            .filter_map(|(row, hidden)| hidden.then_some(row))
    }

    /// The label of a row of a matrix, in the learner's words: a token, or a 1-based dimension.
    pub fn row_label(&self, name: MatrixName, row: usize) -> String {
        self.label(name.entry().rows.is_tokens(), row)
    }

    /// Column labels: keys (tokens) for the seq_len × seq_len matrices, dimensions for the rest.
    pub fn column_label(&self, name: MatrixName, col: usize) -> String {
        self.label(name.entry().cols.is_tokens(), col)
    }

    fn label(&self, tokens: bool, index: usize) -> String {
        match self.labels.get(index) {
            Some(token) if tokens => token.clone(),
            _ => (index + 1).to_string(),
        }
    }
}

/// Each token as a label, a repeated one with its 1-based position as a subscript so that
/// `scores[the₁, cat₂]` and `scores[the₄, cat₅]` are told apart.
fn distinct_labels(tokens: &[String]) -> Vec<String> {
    const SUBSCRIPTS: [char; 10] = ['₀', '₁', '₂', '₃', '₄', '₅', '₆', '₇', '₈', '₉'];
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for token in tokens {
        *counts.entry(token.as_str()).or_default() += 1;
    }
    tokens
        .iter()
        .enumerate()
        .map(|(index, token)| {
            if counts.get(token.as_str()).copied().unwrap_or(0) < 2 {
                return token.clone();
            }
            let position: String = (index + 1)
                .to_string()
                .chars()
                .map(|digit| SUBSCRIPTS[digit.to_digit(10).unwrap_or(0) as usize])
                .collect();
            format!("{token}{position}")
        })
        .collect()
}

/// A matrix already computed: the plan computes every operand before the matrices made from it.
fn stored(matrices: &[Option<Arc<DMatrix<f64>>>], name: MatrixName) -> &DMatrix<f64> {
    static EMPTY: std::sync::LazyLock<DMatrix<f64>> =
        std::sync::LazyLock::new(|| DMatrix::zeros(0, 0));
    matrices[name.index()].as_deref().unwrap_or(&EMPTY)
}

/// One operation on matrices already computed, the right way or as `variant` does it. `size`
/// is the result's (rows, columns), which only the sinusoid needs; an input is not evaluated.
fn evaluate<'a>(
    origin: Op,
    size: (usize, usize),
    scale_divisor: f64,
    variant: Option<Variant>,
    get: impl Fn(MatrixName) -> &'a DMatrix<f64>,
) -> DMatrix<f64> {
    match origin {
        Op::Input | Op::Given => DMatrix::zeros(0, 0),
        Op::Sinusoid => sinusoidal_as(size.0, size.1, variant),
        Op::Add { left, right } => get(left) + get(right),
        Op::Product {
            left,
            right,
            transpose_right,
        } => match (variant, transpose_right) {
            // Row not column: x · W row c, which fits only a square W.
            (Some(Variant::RowNotColumn), false) if get(right).is_square() => {
                get(left) * get(right).transpose()
            }
            // Query and key swapped: the transposed scores.
            (Some(Variant::Swapped), true) => (get(left) * get(right).transpose()).transpose(),
            (_, true) => get(left) * get(right).transpose(),
            (_, false) => get(left) * get(right),
        },
        Op::Rotate { of } => rotate_rows_as(get(of), variant),
        Op::Scale { of } => match variant {
            Some(Variant::SkipScale) => get(of).clone(),
            _ => get(of) / scale_divisor,
        },
        Op::Mask { of, mask } => match variant {
            Some(Variant::SkipMask) => get(of).clone(),
            _ => get(of) + get(mask),
        },
        Op::RowSoftmax { of } => match variant {
            Some(Variant::ExpOnly) => get(of).map(f64::exp),
            Some(Variant::ShiftedExpOnly) => softmax_rows(get(of)).shifted_exps,
            Some(Variant::ColumnSoftmax) => softmax_rows(&get(of).transpose()).weights.transpose(),
            _ => softmax_rows(get(of)).weights,
        },
    }
}

impl Mask {
    /// The additive mask as a matrix: 0 where a query may look at a key, -inf where it may not,
    /// and for a written mask whatever biases it holds.
    pub fn additive(&self, seq_len: usize) -> Option<DMatrix<f64>> {
        match self {
            Mask::None => None,
            Mask::Causal => Some(DMatrix::from_fn(seq_len, seq_len, |row, col| {
                if col > row { f64::NEG_INFINITY } else { 0.0 }
            })),
            Mask::Matrix(matrix) => Some(matrix.clone()),
        }
    }
}
