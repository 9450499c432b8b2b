//! Output projection: the heads' outputs, side by side, times W_o.

use crate::pipeline::{Header, Lit, MatrixName, Part, Piece, SeveralHeads, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::OutputProjection,
    key: "output_projection",
    title: "Output projection",
    narration: |plan| {
        let words: std::borrow::Cow<'static, str> = if plan.shape.heads.query > 1 {
            "W_o mixes what the heads found into one vector per token: output = concat · W_o. \
             Each cell is a dot product of a token's row of concat with a column of W_o, and \
             since concat is the heads side by side, the sum falls into one part per head: \
             head 1's output times its block of W_o's rows, plus head 2's, and so on. That is \
             how the heads, computed apart, are combined: added after each has been projected, \
             not averaged before."
                .into()
        } else {
            "W_o projects the head's output to the model's width: output = head · W_o. Each \
             cell is a dot product of a token's row of the head's output with a column of W_o."
                .into()
        };
        if plan.shape.biases.o {
            // Said after the sum it is added to.
            let projected = if plan.shape.heads.query > 1 {
                "concat"
            } else {
                "head"
            };
            format!(
                "{words} Last, each column's number of the output bias b_o is added: output = \
                 {projected} · W_o + b_o."
            )
            .into()
        } else {
            words
        }
    },
    shown: |plan| plan.has(MatrixName::Projected),
    note: |_| None,
    enable: Some("give the lesson output weights (`w_o`, format 2)"),
    absent: |_| Some("This lesson has no output weights (w_o): the head's output is the answer."),
    views: |plan| vec![View::computed(plan, MatrixName::Projected)],
    header: Header::Attention {
        // One head projected by W_o: the output is the head's, times W_o.
        one_head: |plan| Part {
            after: if plan.shape.biases.o {
                vec![
                    Piece::new("·W_o", Lit::Also(&[Step::Circuits])),
                    Piece::own(" + b_o"),
                ]
            } else {
                vec![Piece::new("·W_o", Lit::Also(&[Step::Circuits]))]
            },
            ..Part::default()
        },
        // The clause is written from the heads alone; b_o is said in the narration and in each
        // cell's working.
        several_heads: SeveralHeads::Clause(|_| "output = concat·W_o".to_string()),
    },
};
