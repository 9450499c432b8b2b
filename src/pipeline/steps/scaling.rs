//! Scaling: scores divided by √d_k.

use crate::pipeline::{MatrixName, Step, StepEntry, View};

pub const ENTRY: StepEntry = StepEntry {
    step: Step::Scaling,
    key: "scaling",
    title: "Scaling",
    narration: |_| {
        "If the entries of queries and keys had mean 0 and variance 1, a dot product of d_k \
         terms would have variance d_k; dividing every score by √d_k brings the variance back \
         to 1. Without it, wide vectors give large scores that push softmax into regions where \
         nearly all the weight goes to one key and its gradients are extremely small, so \
         learning stalls (Vaswani et al., 2017)."
    },
    // Shown even when the lesson does not scale, as a note, so the learner sees it was skipped.
    shown: |_| true,
    views: |plan| {
        if plan.has(MatrixName::Scaled) {
            vec![View::computed(plan, MatrixName::Scaled)]
        } else {
            vec![View {
                result: MatrixName::Scores,
                panels: vec![MatrixName::Scores],
            }]
        }
    },
};
