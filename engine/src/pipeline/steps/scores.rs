//! Scores: every query against every key, QKᵀ.

use crate::pipeline::{Header, Lit, MatrixName, Part, Piece, SeveralHeads, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::Scores,
    key: "scores",
    title: "Scores",
    narration: |plan| {
        if plan.shape.cross {
            return "Every query of the target meets every key of the source. The score of row \
                    i, column j is the dot product of query i (target token i) with key j \
                    (source token j): the cosine of the angle between them times both their \
                    lengths, so it grows with how closely they point the same way and with how \
                    long they are, and is negative when they point apart. Together the scores \
                    form QKᵀ, one row per target token and one column per source token: it \
                    need not be square."
                .into();
        }
        "Every query meets every key. The score of row i, column j is the dot product of query \
         i with key j: the cosine of the angle between them times both their lengths, so it \
         grows with how closely they point the same way and with how long they are, and is \
         negative when they point apart. A long key can outscore a better-aligned one. \
         Together the scores form QKᵀ, one row per query and one column per key."
            .into()
    },
    shown: |_| true,
    note: |_| None,
    enable: None,
    absent: |_| None,
    views: |plan| vec![View::computed(plan, MatrixName::Scores)],
    header: Header::Attention {
        one_head: |plan| Part {
            after: vec![if plan.has(MatrixName::QRope) {
                Piece::new("rot(Q)·rot(K)ᵀ", Lit::Also(&[Step::Rotation]))
            } else {
                Piece::own("QKᵀ")
            }],
            ..Part::default()
        },
        several_heads: SeveralHeads::OneHead,
    },
};
