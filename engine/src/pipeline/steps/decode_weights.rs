//! Generation, one row of weights: the new query against every cached key, then softmax.

use crate::pipeline::{Header, Lit, MatrixName, Part, Piece, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::DecodeWeights,
    key: "decode_weights",
    title: "Generation: one row of weights",
    narration: |plan| {
        if plan.shape.scale {
            "The new query is compared with every key in the cache: one row of scores, \
             scores_t = q_t·K_cacheᵀ, divided by √d_k, then softmax over the cached keys \
             alone. There is no mask: the cache holds exactly the tokens up to this one, so the \
             row is the causal weights' row t, computed from t keys instead of a whole masked \
             matrix."
                .into()
        } else {
            "The new query is compared with every key in the cache: one row of scores, \
             scores_t = q_t·K_cacheᵀ, then softmax over the cached keys alone. There is no \
             mask: the cache holds exactly the tokens up to this one, so the row is the causal \
             weights' row t, computed from t keys instead of a whole masked matrix."
                .into()
        }
    },
    shown: |plan| plan.has(MatrixName::DecodeWeights),
    note: |_| None,
    enable: Some("add `decode = true` (with `mask = \"causal\"`, format 2)"),
    absent: |_| Some("This lesson has no generation steps: they come with `decode = true`."),
    views: |plan| {
        [
            MatrixName::DecodeScores,
            MatrixName::DecodeScaled,
            MatrixName::DecodeWeights,
        ]
        .into_iter()
        .filter(|name| plan.has(*name))
        .map(|name| View::computed(plan, name))
        .collect()
    },
    header: Header::Generation(|plan| Part {
        before: vec![Piece::own("softmax(")],
        after: if plan.has(MatrixName::DecodeScaled) {
            vec![Piece::own(" / √d_k"), Piece::own(")")]
        } else {
            vec![Piece::own(")")]
        },
        definitions: vec![Piece::new("the caches hold tokens 1 … t", Lit::Never)],
        ..Part::default()
    }),
};
