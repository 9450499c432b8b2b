//! Backward to the weights: dW_q, dW_k, dW_v, after adding the gradients of a K/V group's heads.

use crate::pipeline::{Header, MatrixName, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::BackwardWeights,
    key: "backward_weights",
    title: "Backward: weights",
    narration: |plan| {
        let grouped = plan.has(MatrixName::DKGroup);
        match (grouped, plan.has(MatrixName::DWQ), plan.shape.cross) {
            (true, false, _) => {
                "The query heads of a K/V group all read the group's keys and values, so the \
                 group's dK and dV are its heads' gradients added up."
                    .into()
            }
            (true, true, false) => {
                "The query heads of a K/V group all read the group's keys and values, so the \
                 group's dK and dV are its heads' gradients added up. Then each weight \
                 matrix's gradient is its input transposed times the gradient of what it made: \
                 dW_q = Xᵀ·dQ, dW_k = Xᵀ·dK, dW_v = Xᵀ·dV, each cell a column of X against a \
                 column of the gradient: one term per token."
                    .into()
            }
            (true, true, true) => {
                "The query heads of a K/V group all read the group's keys and values, so the \
                 group's dK and dV are its heads' gradients added up. Then each weight \
                 matrix's gradient is its input transposed times the gradient of what it made: \
                 dW_q = Xᵀ·dQ from the target, dW_k = Sᵀ·dK and dW_v = Sᵀ·dV from the source, \
                 each cell a column of the input against a column of the gradient: one term per \
                 token."
                    .into()
            }
            (false, _, true) => {
                "Each weight matrix's gradient is its input transposed times the gradient of \
                 what it made: dW_q = Xᵀ·dQ from the target, dW_k = Sᵀ·dK and dW_v = Sᵀ·dV from \
                 the source, each cell a column of the input against a column of the gradient: \
                 one term per token."
                    .into()
            }
            (false, _, false) => {
                "Each weight matrix's gradient is its input transposed times the gradient of \
                 what it made: dW_q = Xᵀ·dQ, dW_k = Xᵀ·dK, dW_v = Xᵀ·dV, each cell a column of \
                 X against a column of the gradient: one term per token. These are the numbers \
                 a training step moves the weights against."
                    .into()
            }
        }
    },
    shown: |plan| plan.has(MatrixName::DWQ) || plan.has(MatrixName::DKGroup),
    note: |_| None,
    enable: Some("give the lesson embeddings with w_q, w_k, w_v and `grad_output` (format 2)"),
    absent: super::without_a_backward_pass,
    views: |plan| {
        [
            MatrixName::DKGroup,
            MatrixName::DVGroup,
            MatrixName::DWQ,
            MatrixName::DWK,
            MatrixName::DWV,
        ]
        .into_iter()
        .filter(|name| plan.has(*name))
        .map(|name| View::computed(plan, name))
        .collect()
    },
    header: Header::Backward,
};
