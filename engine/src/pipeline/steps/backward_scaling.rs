//! Backward through the mask and the scaling: to the raw scores Q·Kᵀ.

use crate::pipeline::{Header, MatrixName, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::BackwardScaling,
    key: "backward_scaling",
    title: "Backward: scaling",
    narration: |plan| {
        if plan.shape.mask {
            "The mask was added to the scaled scores, and adding passes a gradient through \
             unchanged: dS is the gradient of the scaled scores too, already 0 at every hidden \
             key. The scaling divided the raw scores by √d_k, so their gradient is divided by \
             √d_k as well: d_scores = dS / √d_k. Forgetting this division makes the \
             gradients made from d_scores (dQ, dK and the weights' and X's gradients through \
             them) √d_k times too large."
                .into()
        } else {
            "The scaling divided the raw scores by √d_k, so their gradient is divided by √d_k \
             as well: d_scores = dS / √d_k. Forgetting this division makes the gradients made \
             from d_scores (dQ, dK and the weights' and X's gradients through them) √d_k \
             times too large."
                .into()
        }
    },
    shown: |plan| plan.has(MatrixName::DScores),
    note: |_| None,
    enable: Some("the lesson scales and gives `grad_output` (format 2)"),
    absent: super::without_a_backward_pass,
    views: |plan| vec![View::computed(plan, MatrixName::DScores)],
    header: Header::Backward,
};
