//! Backward through scores = Q·Kᵀ: the gradients of the queries and of the keys.

use crate::pipeline::{Header, MatrixName, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry =
    StepEntry {
        step: Step::BackwardScores,
        key: "backward_scores",
        title: "Backward: queries and keys",
        narration: |plan| {
            // Without the scaling the softmax's gradient dS is the scores' own.
            match (plan.has(MatrixName::DQRope), plan.has(MatrixName::DScores)) {
            (true, true) => {
                "The scores were the turned queries times the turned keys transposed, so \
                 dQ_rope = d_scores·K_rope: each query's gradient is the keys it scored, \
                 weighted by the gradient of each score; and dK_rope = d_scoresᵀ·Q_rope: each \
                 key collects the queries that scored it, down a column of d_scores (the \
                 transpose).".into()
            }
            (true, false) => {
                "The scores were the turned queries times the turned keys transposed, and this \
                 lesson does not scale them, so dS is their gradient: dQ_rope = dS·K_rope, each \
                 query's gradient the keys it scored, weighted by the gradient of each score; \
                 and dK_rope = dSᵀ·Q_rope: each key collects the queries that scored it, down a \
                 column of dS (the transpose).".into()
            }
            (false, true) => {
                "The scores were Q·Kᵀ, so dQ = d_scores·K: each query's gradient is the keys it \
                 scored, weighted by the gradient of each score; and dK = d_scoresᵀ·Q: each key \
                 collects the queries that scored it, down a column of d_scores (the transpose: \
                 d_scores·Q would mix up which key is which).".into()
            }
            (false, false) => {
                "The scores were Q·Kᵀ, and this lesson does not scale them, so dS is their \
                 gradient: dQ = dS·K, each query's gradient the keys it scored, weighted by the \
                 gradient of each score; and dK = dSᵀ·Q: each key collects the queries that \
                 scored it, down a column of dS (the transpose: dS·Q would mix up which key is \
                 which).".into()
            }
        }
        },
        shown: |plan| plan.has(MatrixName::DQ),
        note: |_| None,
        enable: Some("add `grad_output` (format 2)"),
        absent: super::without_a_backward_pass,
        views: |plan| {
            let (dq, dk) = if plan.has(MatrixName::DQRope) {
                (MatrixName::DQRope, MatrixName::DKRope)
            } else {
                (MatrixName::DQ, MatrixName::DK)
            };
            vec![View::computed(plan, dq), View::computed(plan, dk)]
        },
        header: Header::Backward,
    };
