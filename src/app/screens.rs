//! Which screens a lesson has and which matrices each one shows: the one place that decides it.

use crate::attention::{Attention, MatrixName, Step};
use crate::lesson::Lesson;

/// The steps this lesson walks through, in order. Masking appears only with a mask; Scaling
/// always appears, as a note when the lesson does not scale, so the learner sees it was skipped.
/// A lesson that gives Q, K and V itself has no embeddings: it starts at Projection, which
/// shows the Q, K and V it gives.
pub fn steps(lesson: &Lesson) -> Vec<Step> {
    let projected = lesson.d_model().is_some();
    Step::ALL
        .into_iter()
        .filter(|step| *step != Step::Masking || lesson.has_step(Step::Masking))
        .filter(|step| *step != Step::Embedding || projected)
        .collect()
}

/// The matrices on a step's screen, left to right. On the Projection screen of a lesson with
/// embeddings, `projection` (Q, K or V) says which of the three projections is shown.
pub fn panels(step: Step, attention: &Attention, projection: MatrixName) -> Vec<MatrixName> {
    let projected = attention.embeddings.is_some();
    match step {
        Step::Embedding | Step::Projection if !projected => {
            vec![MatrixName::Q, MatrixName::K, MatrixName::V]
        }
        Step::Embedding => vec![MatrixName::Embeddings],
        Step::Projection => vec![MatrixName::Embeddings, weights_of(projection), projection],
        Step::Scores => vec![MatrixName::Q, MatrixName::K, MatrixName::Scores],
        Step::Scaling if attention.scaled.is_some() => {
            vec![MatrixName::Scores, MatrixName::Scaled]
        }
        Step::Scaling => vec![MatrixName::Scores],
        Step::Masking => {
            let before = if attention.scaled.is_some() {
                MatrixName::Scaled
            } else {
                MatrixName::Scores
            };
            vec![before, MatrixName::Mask, MatrixName::Masked]
        }
        Step::Softmax => vec![attention.softmax_input(), MatrixName::Weights],
        Step::Output => vec![MatrixName::Weights, MatrixName::V, MatrixName::Output],
    }
}

/// The matrix a step computes, where the cursor starts.
pub fn result(step: Step, attention: &Attention, projection: MatrixName) -> MatrixName {
    let projected = attention.embeddings.is_some();
    match step {
        Step::Embedding | Step::Projection if !projected => MatrixName::Q,
        Step::Projection => projection,
        Step::Scaling if attention.scaled.is_none() => MatrixName::Scores,
        _ => step.result(),
    }
}

/// The order `[` and `]` visit matrices on the Projection screen: all three projections, each
/// after the weights it is made from.
pub const PROJECTION_ORDER: [MatrixName; 7] = [
    MatrixName::Embeddings,
    MatrixName::WQ,
    MatrixName::Q,
    MatrixName::WK,
    MatrixName::K,
    MatrixName::WV,
    MatrixName::V,
];

/// The weights a projection is made with: W_q for Q, and so on.
pub fn weights_of(projection: MatrixName) -> MatrixName {
    match projection {
        MatrixName::K => MatrixName::WK,
        MatrixName::V => MatrixName::WV,
        _ => MatrixName::WQ,
    }
}

/// The projection a matrix belongs to on the Projection screen, if it belongs to one.
pub fn projection_of(matrix: MatrixName) -> Option<MatrixName> {
    match matrix {
        MatrixName::WQ | MatrixName::Q => Some(MatrixName::Q),
        MatrixName::WK | MatrixName::K => Some(MatrixName::K),
        MatrixName::WV | MatrixName::V => Some(MatrixName::V),
        _ => None,
    }
}

/// Whether a matrix's rows are tokens (so its row labels can be edited).
pub fn rows_are_tokens(matrix: MatrixName) -> bool {
    !matches!(matrix, MatrixName::WQ | MatrixName::WK | MatrixName::WV)
}
