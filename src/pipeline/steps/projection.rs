//! Projection: queries, keys and values, each X times its weights (or given by the lesson).

use crate::pipeline::{MatrixName, Step, StepEntry, View};

pub const ENTRY: StepEntry = StepEntry {
    step: Step::Projection,
    key: "projection",
    title: "Projection",
    narration: |_| {
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
