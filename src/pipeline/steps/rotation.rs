//! Rotation (RoPE): every query and key turned pairwise by an angle that grows with its position.

use crate::pipeline::{MatrixName, Step, StepEntry, View};

pub const ENTRY: StepEntry = StepEntry {
    step: Step::Rotation,
    key: "rotation",
    title: "Rotation",
    narration: |_| {
        "Rotary position embedding (RoPE; Su et al., 2021) adds nothing to the embeddings. \
         Instead, after projection, the query and the key of the token at position p are turned \
         pair by pair: columns 2i and 2i+1 are rotated by the angle φ = p · 10000^(−2i/d_k), \
         fastest for the first pair. Turning q by its position m and k by its position n \
         changes their dot product only through the difference: q_m · k_n depends on m − n, \
         the distance between the tokens, not on where the pair stands. The values are not \
         rotated."
    },
    shown: |plan| plan.has(MatrixName::QRope),
    views: |plan| {
        [MatrixName::QRope, MatrixName::KRope]
            .into_iter()
            .map(|rotated| View::computed(plan, rotated))
            .collect()
    },
};
