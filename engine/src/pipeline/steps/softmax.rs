//! Softmax: each row of scores turned into weights that sum to 1.

use crate::pipeline::{Header, MatrixName, Part, Piece, SeveralHeads, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::Softmax,
    key: "softmax",
    title: "Softmax",
    narration: |_| {
        "Softmax turns each row of scores into weights that sum to 1: exp(score) divided by \
         the sum of the exps of its row. Every weight is positive, except where a mask hides \
         the key with -inf: that weight is exactly 0, and a row whose every key is hidden is \
         all 0 here. The workings show exp(score) itself; libraries subtract the row maximum \
         first, which cancels in the quotient (the weights are the same) and keeps exp from \
         overflowing."
            .into()
    },
    shown: |_| true,
    note: |_| None,
    enable: None,
    absent: |_| None,
    views: |plan| vec![View::computed(plan, MatrixName::Weights)],
    header: Header::Attention {
        one_head: |_| Part {
            before: vec![Piece::own("softmax(")],
            after: vec![Piece::own(")")],
            ..Part::default()
        },
        several_heads: SeveralHeads::OneHead,
    },
};
