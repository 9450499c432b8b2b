//! Embedding: the tokens' vectors, the matrix everything starts from.

use crate::pipeline::{Header, MatrixName, Part, SeveralHeads, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::Embedding,
    key: "embedding",
    title: "Embedding",
    narration: |plan| {
        if plan.shape.cross {
            "Each token starts as a vector of numbers, its embedding. Here there are two \
             sequences: the target's tokens, one row each in X, will ask the questions (the \
             queries); the source's tokens, one row each in S, will be looked at (the keys) and \
             read from (the values)."
                .into()
        } else if plan.has(MatrixName::X) {
            "Each token starts as a vector of numbers, its embedding. Stacked one row per \
             token, they form the matrix E. Everything attention does, it does to these \
             numbers, once their positions are added to them."
                .into()
        } else {
            "Each token starts as a vector of numbers, its embedding. Stacked one row per \
             token, they form the matrix X. Everything attention does, it does to these numbers."
                .into()
        }
    },
    // A lesson that gives Q, K and V itself has no embeddings: it starts at Projection.
    shown: |plan| plan.has(MatrixName::Embeddings),
    // Cross-attention's source has its own embeddings, a second view.
    note: |_| None,
    enable: Some("this lesson gives q, k, v directly: give embeddings with w_q, w_k, w_v"),
    absent: |_| Some("This lesson gives Q, K and V directly; it has no embeddings."),
    views: |plan| {
        [MatrixName::Embeddings, MatrixName::SourceEmbeddings]
            .into_iter()
            .filter(|name| plan.has(*name))
            .map(|name| View {
                result: name,
                panels: vec![name],
            })
            .collect()
    },
    // Its embeddings are the X the projections read, which the projection's part lights.
    header: Header::Attention {
        one_head: |_| Part::default(),
        several_heads: SeveralHeads::Whole,
    },
};
