//! Positions: a vector per position added to the embeddings, so that order matters.

use crate::pipeline::{
    Header, MatrixName, Part, Piece, Plan, Positions, SeveralHeads, Step, StepEntry, View,
};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::Positions,
    key: "positions",
    title: "Positions",
    narration: |plan| narration(plan).into(),
    shown: |plan| plan.has(MatrixName::X),
    // The cursor starts on the positions; `]` goes on to their sum with the embeddings, and
    // in cross-attention to the source's.
    note: |_| None,
    enable: Some("add `positions = \"sinusoidal\"` (or a matrix) with `format = 2`"),
    absent: |plan| {
        Some(match plan.shape.positions {
            Positions::Rope => {
                "This lesson adds no positions to the embeddings (positions = \"rope\" turns Q \
                 and K instead): X is the embeddings."
            }
            _ if !plan.shape.projected => {
                "This lesson gives Q, K and V directly: it has no embeddings to add positions to."
            }
            _ => "This lesson adds no positions (positions = \"none\"): X is the embeddings.",
        })
    },
    views: |plan| {
        [
            (MatrixName::Positions, MatrixName::X),
            (MatrixName::SourcePositions, MatrixName::SourceX),
        ]
        .into_iter()
        .filter(|(_, sum)| plan.has(*sum))
        .map(|(positions, sum)| View {
            result: positions,
            ..View::computed(plan, sum)
        })
        .collect()
    },
    header: Header::Attention {
        one_head: |plan| Part {
            definitions: [
                (MatrixName::X, "X = E + P; "),
                (MatrixName::SourceX, "S = E_S + P_S; "),
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

fn narration(plan: &Plan) -> &'static str {
    if plan.shape.cross {
        return "Attention alone has no sense of order: a query meets every key the same way \
                wherever it stands. The sinusoidal encoding (Vaswani et al., 2017) gives \
                position p, in columns 2i and 2i+1, sin and cos of the angle \
                p / 10000^(2i/d_model), so every position gets its own pattern. It is added to \
                the target's embeddings, X = E + P, and the source gets the same encoding \
                counted from its own first token, S = E_S + P_S: position 0 of each sentence \
                gets the same vector.";
    }
    match plan.shape.positions {
        Positions::Learned => {
            "Attention alone has no sense of order: a query meets every key the same way \
             wherever it stands, so two tokens with the same embedding get the same query, key \
             and value. Here each position has a vector of its own, learned in training like \
             the weights, and it is added to the embedding of the token at that position: \
             X = E + P. The same token at two positions now enters the projections as two \
             different vectors."
        }
        _ => {
            "Attention alone has no sense of order: a query meets every key the same way \
             wherever it stands, so two tokens with the same embedding get the same query, key \
             and value. The sinusoidal encoding (Vaswani et al., 2017) gives position p, in \
             columns 2i and 2i+1, sin and cos of the angle p / 10000^(2i/d_model): the first \
             pair turns by one radian per position, each later pair more slowly, so every \
             position gets its own pattern. It is added to the embeddings, X = E + P: the same \
             token at two positions now enters the projections as two different vectors."
        }
    }
}
