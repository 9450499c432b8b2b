//! Embedding: the tokens' vectors, the matrix everything starts from.

use crate::pipeline::{MatrixName, Step, StepEntry, View};

pub const ENTRY: StepEntry = StepEntry {
    step: Step::Embedding,
    key: "embedding",
    title: "Embedding",
    narration: |plan| {
        if plan.has(MatrixName::X) {
            "Each token starts as a vector of numbers, its embedding. Stacked one row per \
             token, they form the matrix E. Everything attention does, it does to these \
             numbers, once their positions are added to them."
        } else {
            "Each token starts as a vector of numbers, its embedding. Stacked one row per \
             token, they form the matrix X. Everything attention does, it does to these numbers."
        }
    },
    // A lesson that gives Q, K and V itself has no embeddings: it starts at Projection.
    shown: |plan| plan.has(MatrixName::Embeddings),
    views: |_| {
        vec![View {
            result: MatrixName::Embeddings,
            panels: vec![MatrixName::Embeddings],
        }]
    },
};
