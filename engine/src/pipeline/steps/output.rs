//! Output: each token's weighted sum of the values.

use crate::pipeline::{Header, MatrixName, Part, Piece, SeveralHeads, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::Output,
    key: "output",
    title: "Output",
    narration: |plan| {
        if plan.shape.cross {
            return "Each target token's output is the sum of the source's value vectors, each \
                    multiplied by that token's weight for it: a weighted average, since the \
                    weights sum to 1. A source token hidden by the mask has weight 0 and adds \
                    nothing. A target token that attends mostly to one source token ends up \
                    close to that token's value: this is how the source's information reaches \
                    the target, as a translating model reads the sentence it translates."
                .into();
        }
        "Each token's output is the sum of the value vectors, each multiplied by that token's \
         weight for it: a weighted average, since the weights sum to 1. A key hidden by the \
         mask has weight 0 and adds nothing, and a row whose every key is hidden gets an \
         output of 0. A token that attends mostly to one other token ends up close to that \
         token's value: this is how context flows between words."
            .into()
    },
    shown: |_| true,
    note: |_| None,
    enable: None,
    absent: |_| None,
    views: |plan| vec![View::computed(plan, MatrixName::Output)],
    header: Header::Attention {
        one_head: |_| Part {
            after: vec![Piece::own("V")],
            ..Part::default()
        },
        several_heads: SeveralHeads::OneHead,
    },
};
