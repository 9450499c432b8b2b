//! Generation, the new token: its query, key and value, made from its row of X alone.

use crate::pipeline::{Header, Lit, MatrixName, Part, Piece, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::NewToken,
    key: "new_token",
    title: "Generation: the new token",
    narration: |plan| {
        if !plan.shape.projected {
            return "A model that generates text makes one token at a time, and each of its \
                    steps sees only the tokens made so far. Now the same attention is worked \
                    out that way, one token t at a time: its query, key and value are its own \
                    rows of the given Q, K and V (a model projects them from the new token's \
                    embedding alone)."
                .into();
        }
        "A model that generates text makes one token at a time, and each of its steps sees only \
         the tokens made so far. Now the same attention is worked out that way, one token t at \
         a time. Only the new token's row of X is projected: q_t = x_t·W_q, k_t = x_t·W_k, \
         v_t = x_t·W_v, one row each. No other token's query is needed, and the earlier \
         tokens' keys and values were made when those tokens were."
            .into()
    },
    shown: |plan| plan.has(MatrixName::QNew),
    note: |_| None,
    enable: Some("add `decode = true` (with `mask = \"causal\"`, format 2)"),
    absent: |_| Some("This lesson has no generation steps: they come with `decode = true`."),
    views: |plan| {
        [
            MatrixName::QNew,
            MatrixName::KNew,
            MatrixName::VNew,
            MatrixName::QNewRope,
            MatrixName::KNewRope,
        ]
        .into_iter()
        .filter(|name| plan.has(*name))
        .map(|name| View::computed(plan, name))
        .collect()
    },
    header: Header::Generation(|plan| Part {
        after: vec![Piece::new(
            if plan.has(MatrixName::QNewRope) {
                "rot(q_t)"
            } else {
                "q_t"
            },
            Lit::Also(&[Step::DecodeWeights]),
        )],
        definitions: vec![Piece::own(if plan.has(MatrixName::XNew) {
            "q_t, k_t, v_t = x_t·W_q, x_t·W_k, x_t·W_v"
        } else {
            "q_t, k_t, v_t = row t of Q, K, V"
        })],
        ..Part::default()
    }),
};
