//! Backward through the softmax: each weight's share of its row's gradient.

use crate::pipeline::{Header, MatrixName, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::BackwardSoftmax,
    key: "backward_softmax",
    title: "Backward: softmax",
    narration: |_| {
        "A row's weights always sum to 1, so raising one score takes weight from the others: \
         the softmax's gradient mixes the whole row. dS = weights ⊙ (d_weights − rowsum(weights \
         ⊙ d_weights)): first the row's average gradient, its d_weights averaged by its \
         weights; then each key gets its own gradient minus that average, times its weight. A \
         key with more than the average gradient gains, one with less loses, and a key of \
         weight 0 (a masked key) gets no gradient at all, nor does a row whose every key is \
         masked. Leaving out the average (weights ⊙ d_weights alone) is the common mistake."
            .into()
    },
    shown: |plan| plan.has(MatrixName::DSoftmaxInput),
    note: |_| None,
    enable: Some("add `grad_output` (format 2)"),
    absent: super::without_a_backward_pass,
    views: |plan| vec![View::computed(plan, MatrixName::DSoftmaxInput)],
    header: Header::Backward,
};
