//! One step of gradient descent on a lesson's learned numbers, from the engine's gradients.
//! It is the lesson's method but lives here, above the lesson: the lesson does not know the
//! engine that computes it, so that the two do not import each other.

use std::sync::Arc;

use super::Attention;
use super::gradient_check::engine_gradients;
use crate::lesson::Lesson;
use crate::pipeline::MatrixName;

impl Lesson {
    /// One step of gradient descent on the lesson's learned numbers: each weight matrix (W_q,
    /// W_k, W_v, W_o and the biases; or Q, K, V when the lesson gives them) moved against its
    /// gradient, W ← W − η·dW, with the gradients of `attention`, this lesson's. The numbers
    /// become the lesson's own (a generated matrix is kept as numbers). Nothing changes without
    /// a backward pass.
    pub fn gradient_step(&mut self, attention: &Attention, eta: f64) {
        // Every input the backward pass differentiates, laid out as the lesson holds it (the
        // gradients `check` compares), but the embeddings and positions: what the lesson
        // reads, not what it learns.
        for (input, _, gradient) in engine_gradients(self, attention) {
            if matches!(
                input,
                MatrixName::Embeddings | MatrixName::Positions | MatrixName::SourceEmbeddings
            ) {
                continue;
            }
            let Some(matrix) = self.input_mut(input) else {
                continue;
            };
            *Arc::make_mut(&mut matrix.values) -= gradient * eta;
            matrix.generator = None;
        }
    }
}
