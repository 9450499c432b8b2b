//! The attention engine: pure math on nalgebra, from a validated lesson to every intermediate matrix.
//!
//! Nothing here knows about terminals or files. The steps follow the learner's path:
//! embedding → projection (Q, K, V) → scores QKᵀ → scaling ÷√d_k → masking → softmax → output.

mod derivation;
mod names;
pub mod number;
pub mod quotes;
mod softmax;

pub use derivation::{Derivation, Explanation, Operand, Rule};
pub use names::{Cell, MatrixName, Step};
pub use softmax::{RowSoftmax, softmax_rows};

use std::sync::Arc;

use nalgebra::DMatrix;

use crate::lesson::{Inputs, Lesson, Mask};

/// Every matrix of one forward pass of self-attention, kept so that each cell can explain itself.
#[derive(Debug, Clone)]
pub struct Attention {
    /// Token labels: the row labels of X, Q, K, V, scores, weights and output.
    pub tokens: Vec<String>,
    /// X, W_q, W_k, W_v: present when the lesson projects embeddings, absent when it gives Q, K, V.
    /// Shared with the lesson, not copied: W_q alone may be 8 MB.
    pub embeddings: Option<Arc<DMatrix<f64>>>,
    pub w_q: Option<Arc<DMatrix<f64>>>,
    pub w_k: Option<Arc<DMatrix<f64>>>,
    pub w_v: Option<Arc<DMatrix<f64>>>,
    pub q: DMatrix<f64>,
    pub k: DMatrix<f64>,
    pub v: DMatrix<f64>,
    /// QKᵀ, seq_len × seq_len.
    pub scores: DMatrix<f64>,
    /// scores / √d_k, absent when the lesson sets `scale = false`.
    pub scaled: Option<DMatrix<f64>>,
    /// The additive mask (0 keeps, -inf hides, any other number is a bias added to the score),
    /// absent when the lesson has none.
    pub mask: Option<DMatrix<f64>>,
    /// Whether the mask is the causal one, so a hidden key is one that comes after its query.
    pub causal: bool,
    /// (scaled or raw scores) + mask, absent without a mask.
    pub masked: Option<DMatrix<f64>>,
    /// Row softmax of the last of scores / scaled / masked, with its working (max, exps, sums).
    pub softmax: RowSoftmax,
    pub output: DMatrix<f64>,
    /// √d_k, the divisor of the scaling step.
    pub scale_divisor: f64,
}

impl Attention {
    /// Runs the whole pipeline for a validated lesson.
    pub fn compute(lesson: &Lesson) -> Attention {
        let (embeddings, w_q, w_k, w_v, q, k, v) = match &lesson.inputs {
            Inputs::Projected {
                embeddings,
                w_q,
                w_k,
                w_v,
            } => {
                let x = &*embeddings.values;
                let (q, k, v) = (x * &*w_q.values, x * &*w_k.values, x * &*w_v.values);
                (
                    Some(Arc::clone(&embeddings.values)),
                    Some(Arc::clone(&w_q.values)),
                    Some(Arc::clone(&w_k.values)),
                    Some(Arc::clone(&w_v.values)),
                    q,
                    k,
                    v,
                )
            }
            Inputs::Direct { q, k, v } => (
                None,
                None,
                None,
                None,
                (*q.values).clone(),
                (*k.values).clone(),
                (*v.values).clone(),
            ),
        };
        let scores = &q * k.transpose();
        let scale_divisor = (k.ncols() as f64).sqrt();
        let scaled = lesson.scale.then(|| &scores / scale_divisor);
        let mask = lesson.mask.additive(lesson.tokens.len());
        let masked = mask
            .as_ref()
            .map(|mask| scaled.as_ref().unwrap_or(&scores) + mask);
        let softmax_input = masked.as_ref().or(scaled.as_ref()).unwrap_or(&scores);
        let softmax = softmax_rows(softmax_input);
        let output = &softmax.weights * &v;
        Attention {
            tokens: lesson.tokens.clone(),
            embeddings,
            w_q,
            w_k,
            w_v,
            q,
            k,
            v,
            scores,
            scaled,
            mask,
            causal: matches!(lesson.mask, Mask::Causal),
            masked,
            softmax,
            output,
            scale_divisor,
        }
    }

    /// The attention weights: each row a probability distribution over the keys.
    pub fn weights(&self) -> &DMatrix<f64> {
        &self.softmax.weights
    }

    /// d_k, the width of queries and keys.
    pub fn d_k(&self) -> usize {
        self.k.ncols()
    }

    /// The matrix with this name, if this lesson has it.
    pub fn matrix(&self, name: MatrixName) -> Option<&DMatrix<f64>> {
        match name {
            MatrixName::Embeddings => self.embeddings.as_deref(),
            MatrixName::WQ => self.w_q.as_deref(),
            MatrixName::WK => self.w_k.as_deref(),
            MatrixName::WV => self.w_v.as_deref(),
            MatrixName::Q => Some(&self.q),
            MatrixName::K => Some(&self.k),
            MatrixName::V => Some(&self.v),
            MatrixName::Scores => Some(&self.scores),
            MatrixName::Scaled => self.scaled.as_ref(),
            MatrixName::Mask => self.mask.as_ref(),
            MatrixName::Masked => self.masked.as_ref(),
            MatrixName::Weights => Some(&self.softmax.weights),
            MatrixName::Output => Some(&self.output),
        }
    }

    /// The matrix softmax is taken over: masked, else scaled, else raw scores.
    pub fn softmax_input(&self) -> MatrixName {
        if self.masked.is_some() {
            MatrixName::Masked
        } else if self.scaled.is_some() {
            MatrixName::Scaled
        } else {
            MatrixName::Scores
        }
    }

    /// Rows whose every key is masked: their weights and output are zero, never NaN.
    pub fn fully_masked_rows(&self) -> impl Iterator<Item = usize> + '_ {
        self.softmax
            .fully_masked
            .iter()
            .enumerate()
            .filter_map(|(row, hidden)| hidden.then_some(row))
    }

    /// The label of a row or column of a matrix, in the learner's words: a token, or a 1-based dimension.
    pub fn row_label(&self, name: MatrixName, row: usize) -> String {
        match name {
            MatrixName::WQ | MatrixName::WK | MatrixName::WV => (row + 1).to_string(),
            _ => self
                .tokens
                .get(row)
                .cloned()
                .unwrap_or_else(|| (row + 1).to_string()),
        }
    }

    /// Column labels: keys (tokens) for the seq_len × seq_len matrices, dimensions for the rest.
    pub fn column_label(&self, name: MatrixName, col: usize) -> String {
        if name.is_token_by_token() {
            self.tokens
                .get(col)
                .cloned()
                .unwrap_or_else(|| (col + 1).to_string())
        } else {
            (col + 1).to_string()
        }
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
