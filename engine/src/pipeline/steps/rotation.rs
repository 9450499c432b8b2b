//! Rotation (RoPE): every query and key turned pairwise by an angle that grows with its position.

use crate::ops::{Rope, RopePairing};
use crate::pipeline::{Header, MatrixName, Part, SeveralHeads, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::Rotation,
    key: "rotation",
    title: "Rotation",
    narration: |plan| {
        let turned = turned(plan.shape.rope);
        if plan.shape.cross {
            return format!(
                "Rotary position embedding (RoPE; Su et al., 2021) adds nothing to the \
                 embeddings. Instead, after projection, each query and key is turned pair by \
                 pair by its position p: {turned}. Here the queries count the target's \
                 positions and the keys the source's, each from 0, so q_m · k_n depends on \
                 m − n, which compares places in two different sentences; a source and its \
                 translation need not line up word for word, which is why models usually leave \
                 positions out of cross-attention. The values are not rotated."
            )
            .into();
        }
        format!(
            "Rotary position embedding (RoPE; Su et al., 2021) adds nothing to the embeddings. \
             Instead, after projection, the query and the key of the token at position p are \
             turned pair by pair: {turned}, fastest for the first pair. Turning q by its \
             position m and k by its position n changes their dot product only through the \
             difference: q_m · k_n depends on m − n, the distance between the tokens, not on \
             where the pair stands. The values are not rotated."
        )
        .into()
    },
    shown: |plan| plan.has(MatrixName::QRope),
    note: |_| None,
    enable: Some("add `positions = \"rope\"` with `format = 2`"),
    absent: |_| Some("This lesson does not rotate (positions is not \"rope\")."),
    views: |plan| {
        [MatrixName::QRope, MatrixName::KRope]
            .into_iter()
            .map(|rotated| View::computed(plan, rotated))
            .collect()
    },
    // It rotates the queries and keys the scores' part writes, which it lights.
    header: Header::Attention {
        one_head: |_| Part::default(),
        several_heads: SeveralHeads::OneHead,
    },
};

/// Which columns this lesson turns together, and by what angle.
fn turned(rope: Rope) -> String {
    let theta = rope.theta;
    match rope.pairing {
        RopePairing::Interleaved => {
            format!("columns 2i and 2i+1 are rotated by the angle φ = p · {theta}^(−2i/d_k)")
        }
        RopePairing::Half => format!(
            "column i and column i + d_k/2 make pair i (rotate-half, the pairing Llama, \
             Mistral and Qwen2 checkpoints use; RoFormer pairs columns 2i and 2i+1 side by \
             side), which is rotated by the angle φ = p · {theta}^(−2i/d_k)"
        ),
    }
}
