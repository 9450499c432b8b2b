//! Backward through RoPE: the gradients turned back by each position's angle.

use crate::ops::RopePairing;
use crate::pipeline::{Header, MatrixName, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::BackwardRotation,
    key: "backward_rotation",
    title: "Backward: rotation",
    narration: |plan| {
        let pairs = match plan.shape.rope.pairing {
            RopePairing::Interleaved => "",
            RopePairing::Half => " (column i with column i + d_k/2, rotate-half)",
        };
        format!(
            "The forward pass turned each pair of a query's (and a key's) numbers{pairs} by the \
             angle φ of its position. A rotation's inverse is its transpose, a turn by −φ, and \
             so is its gradient: dQ is dQ_rope turned back by −φ, and dK is dK_rope turned \
             back, pair by pair and row by row, each row by its own position's angles."
        )
        .into()
    },
    shown: |plan| plan.has(MatrixName::DQRope),
    note: |_| None,
    enable: Some("give the lesson `positions = \"rope\"` and `grad_output` (format 2)"),
    absent: super::without_a_backward_pass,
    views: |plan| {
        vec![
            View::computed(plan, MatrixName::DQ),
            View::computed(plan, MatrixName::DK),
        ]
    },
    header: Header::Backward,
};
