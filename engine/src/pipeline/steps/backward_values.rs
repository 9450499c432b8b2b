//! Backward through weights·V: the gradients of the attention weights and of the values.

use crate::pipeline::{Header, MatrixName, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::BackwardValues,
    key: "backward_values",
    title: "Backward: weights and values",
    narration: |plan| {
        if plan.has(MatrixName::DConcat) {
            "The head's output is weights·V, so its gradient d_output splits two ways. \
             d_weights = d_output·Vᵀ: how the loss changes with each weight, a row of \
             d_output against a value row. dV = weightsᵀ·d_output: each value row collects \
             the gradient of every query that read it, in proportion to that query's weight on it."
                .into()
        } else {
            "The output is weights·V, so its gradient dO = grad_output splits two ways. \
             d_weights = dO·Vᵀ: how the loss changes with each weight, a row of dO against a \
             value row. dV = weightsᵀ·dO: each value row collects the gradient of every query \
             that read it, in proportion to that query's weight on it."
                .into()
        }
    },
    shown: |plan| plan.has(MatrixName::DWeights),
    note: |_| None,
    enable: Some("add `grad_output` (format 2)"),
    absent: super::without_a_backward_pass,
    views: |plan| {
        vec![
            View::computed(plan, MatrixName::DWeights),
            View::computed(plan, MatrixName::DV),
        ]
    },
    header: Header::Backward,
};
