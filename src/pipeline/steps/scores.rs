//! Scores: every query against every key, QKᵀ.

use crate::pipeline::{MatrixName, Step, StepEntry, View};

pub const ENTRY: StepEntry = StepEntry {
    step: Step::Scores,
    key: "scores",
    title: "Scores",
    narration: |_| {
        "Every query meets every key. The score of row i, column j is the dot product of query \
         i with key j: the cosine of the angle between them times both their lengths, so it \
         grows with how closely they point the same way and with how long they are, and is \
         negative when they point apart. A long key can outscore a better-aligned one. \
         Together the scores form QKᵀ, one row per query and one column per key."
    },
    shown: |_| true,
    views: |plan| vec![View::computed(plan, MatrixName::Scores)],
};
