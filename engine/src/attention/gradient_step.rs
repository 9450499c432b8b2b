//! One step of gradient descent on a lesson's learned numbers, from the engine's gradients.
//! It is the lesson's method but lives here, above the lesson: the lesson does not know the
//! engine that computes it, so that the two do not import each other.

use std::sync::Arc;

use super::Attention;
use crate::lesson::Lesson;
use crate::pipeline::{MatrixName, Per};

impl Lesson {
    /// One step of gradient descent on the lesson's learned numbers: each weight matrix (W_q,
    /// W_k, W_v, W_o and the biases; or Q, K, V when the lesson gives them) moved against its gradient,
    /// W ← W − η·dW, with the gradients of `attention`, this lesson's. The numbers become the
    /// lesson's own (a generated matrix is kept as numbers). Nothing changes without a backward
    /// pass.
    pub fn gradient_step(&mut self, attention: &Attention, eta: f64) {
        let heads = self.heads;
        for (input, gradient) in [
            (MatrixName::WQ, MatrixName::DWQ),
            (MatrixName::WK, MatrixName::DWK),
            (MatrixName::WV, MatrixName::DWV),
            (MatrixName::WO, MatrixName::DWO),
            (MatrixName::Q, MatrixName::DQ),
            (MatrixName::K, MatrixName::DKGroup),
            (MatrixName::V, MatrixName::DVGroup),
            (MatrixName::BQ, MatrixName::DBQ),
            (MatrixName::BK, MatrixName::DBK),
            (MatrixName::BV, MatrixName::DBV),
            (MatrixName::BO, MatrixName::DBO),
        ] {
            // Q, K, V given: a group's gradient, or with a group per head the head's.
            let gradient = match gradient {
                MatrixName::DKGroup if !attention.has(gradient) => MatrixName::DK,
                MatrixName::DVGroup if !attention.has(gradient) => MatrixName::DV,
                other => other,
            };
            if !attention.has(gradient) {
                continue;
            }
            let Some(matrix) = self.input_mut(input) else {
                continue;
            };
            let values = Arc::make_mut(&mut matrix.values);
            let width = match gradient.per() {
                Per::Lesson => values.ncols(),
                Per::QueryHead => values.ncols() / heads.query.max(1),
                Per::KvGroup => values.ncols() / heads.kv.max(1),
            };
            for col in 0..values.ncols() {
                let block = col / width.max(1);
                let head = heads.head_of_slot(gradient.per(), block);
                let Some(grad) = attention.matrix_in(gradient, head) else {
                    continue;
                };
                for row in 0..values.nrows() {
                    if let Some(step) = grad.get((row, col % width.max(1))) {
                        values[(row, col)] -= eta * step;
                    }
                }
            }
            matrix.generator = None;
        }
    }
}
