//! Scaling: scores divided by √d_k.

use crate::pipeline::{Header, Lit, MatrixName, Part, Piece, SeveralHeads, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::Scaling,
    key: "scaling",
    title: "Scaling",
    narration: |_| {
        "Why √d_k (Vaswani et al. 2017): if a query's and a key's entries are independent, \
         with mean 0 and variance 1, their dot product, a sum of d_k such products, has mean 0 \
         and variance d_k; dividing every score by √d_k brings the variance back to 1. (A \
         query scored against itself is not such a pair: with normal entries q·q has mean d_k \
         and variance 2·d_k.) Unscaled, wide vectors give large scores that push softmax \
         towards all the weight on one key, “into regions where it has extremely small \
         gradients”, in the paper's words."
            .into()
    },
    // Shown even when the lesson does not scale, as a note, so the learner sees it was skipped.
    shown: |_| true,
    note: |plan| {
        (!plan.shape.scale).then_some(
            "This lesson sets scale = false: the scores go to softmax unscaled, and this step is skipped.",
        )
    },
    enable: None,
    absent: |_| None,
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
    header: Header::Attention {
        one_head: |plan| {
            if plan.has(MatrixName::Scaled) {
                Part {
                    after: vec![Piece::own(" / √d_k")],
                    ..Part::default()
                }
            } else {
                Part {
                    after: vec![Piece::new(" / √d_k", Lit::Skipped)],
                    // Said before the definitions, so that a narrow terminal, which cuts the
                    // line's end, keeps it.
                    aside: vec![Piece::new(" (no scaling)", Lit::Muted)],
                    ..Part::default()
                }
            }
        },
        several_heads: SeveralHeads::OneHead,
    },
};
