//! Projection: queries, keys and values, each X times its weights (or given by the lesson).

use crate::pipeline::{MatrixName, Step, StepEntry, View};

pub const ENTRY: StepEntry = StepEntry {
    step: Step::Projection,
    key: "projection",
    title: "Projection",
    narration: |plan| {
        if plan.shape.cross && plan.has(MatrixName::WQ) {
            return "Three learned matrices make three new vectors, from two sequences: a query \
                    from each target token (what it is looking for in the source), and a key \
                    (what it offers) and a value (what it passes on) from each source token. \
                    Q = X·W_q, K = S·W_k, V = S·W_v: each cell is a dot product of a row of X \
                    or S with a column of the weights, so Q has a row per target token and K \
                    and V a row per source token.";
        }
        if plan.shape.cross {
            return "This lesson gives the queries, keys and values directly: a query (what a \
                    token is looking for) for each target token, and a key (what a token \
                    offers) and a value (what it passes on) for each source token. In a model \
                    they are the target's and the source's embeddings times learned weights.";
        }
        "Three learned matrices turn each embedding into three new vectors: a query (what this \
         token is looking for), a key (what it offers to others) and a value (what it passes \
         on). Q = X·W_q, K = X·W_k, V = X·W_v: each cell is a dot product of a row of X with a \
         column of the weights."
    },
    shown: |_| true,
    views: |plan| {
        let projections = [MatrixName::Q, MatrixName::K, MatrixName::V];
        if plan.has(MatrixName::WQ) {
            projections
                .into_iter()
                .map(|projection| View::computed(plan, projection))
                .collect()
        } else {
            // Q, K and V given side by side.
            vec![View {
                result: MatrixName::Q,
                panels: projections.to_vec(),
            }]
        }
    },
};
