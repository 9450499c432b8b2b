//! Layer normalisation: each row of X brought to mean 0 and variance 1 before the projections.

use crate::pipeline::{Header, MatrixName, Part, Piece, SeveralHeads, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::LayerNorm,
    key: "layer_norm",
    title: "Layer norm",
    narration: |_| {
        "Before the projections read a token's vector, layer normalisation (Ba et al., 2016; \
         here before attention, as GPT-2 and most models since place it) rescales it on its \
         own: each row has its mean subtracted and is divided by its standard deviation, \
         X̂ = (x − mean(x)) / √(var(x) + ε), with the variance taken over the row's d_model \
         numbers and ε = 0.00001 so that a constant row does not divide by zero. Every token \
         then enters W_q, W_k and W_v with mean 0 and variance 1, whatever the size of its \
         vector. (A trained model then multiplies by a learned γ and adds a learned β; this \
         lesson leaves them out.)"
            .into()
    },
    shown: |plan| plan.has(MatrixName::XNorm),
    note: |_| None,
    enable: Some("add `layer_norm = true` (with embeddings, format 2)"),
    absent: |_| {
        Some("This lesson does not normalise (layer_norm is not true): the projections read X.")
    },
    views: |plan| {
        [MatrixName::XNorm, MatrixName::SourceXNorm]
            .into_iter()
            .filter(|name| plan.has(*name))
            .map(|name| View::computed(plan, name))
            .collect()
    },
    header: Header::Attention {
        one_head: |plan| Part {
            definitions: [
                (MatrixName::XNorm, "X̂ = LN(X); "),
                (MatrixName::SourceXNorm, "Ŝ = LN(S); "),
            ]
            .into_iter()
            .filter(|(name, _)| plan.has(*name))
            .map(|(_, text)| Piece::own(text))
            .collect(),
            ..Part::default()
        },
        several_heads: SeveralHeads::Whole,
    },
};
