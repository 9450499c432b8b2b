//! Circuits: each head read as two matrices of the model's width (Elhage et al. 2021): W_QK,
//! which decides where the head looks, and W_OV, which decides what it moves.

use crate::pipeline::{Header, MatrixName, Part, SeveralHeads, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::Circuits,
    key: "circuits",
    title: "Circuits",
    narration: |plan| {
        if plan.shape.cross {
            return "A head does two separate things, and each can be read as one matrix of \
                    the model's width (Elhage et al. 2021, \"A Mathematical Framework for \
                    Transformer Circuits\"). W_QK = W_q · W_kᵀ decides where the head looks: \
                    the scaled score of target token i and source token j is \
                    x_i · W_QK · s_jᵀ / √d_k, without computing Q or K at all. W_OV = W_v · \
                    W_o, with the head's own rows of W_o, decides what the head moves: a \
                    source token attended to with weight 1 adds its s · W_OV to the output. \
                    [ and ] turn between the two."
                .into();
        }
        "A head does two separate things, and each can be read as one matrix of the model's \
         width (Elhage et al. 2021, \"A Mathematical Framework for Transformer Circuits\"). \
         W_QK = W_q · W_kᵀ decides where the head looks: the scaled score of a query token i \
         and a key token j is x_i · W_QK · x_jᵀ / √d_k, without computing Q or K at all. \
         W_OV = W_v · W_o, with the head's own rows of W_o, decides what the head moves: a \
         token attended to with weight 1 adds its x · W_OV to the output. [ and ] turn \
         between the two."
            .into()
    },
    shown: |plan| plan.has(MatrixName::WQK),
    note: |_| None,
    enable: Some("give the lesson embeddings and output weights (`w_o`, format 2)"),
    absent: |plan| {
        Some(if !plan.shape.output_weights {
            "This lesson has no output weights (w_o): the head's output is the answer."
        } else if !plan.shape.projected {
            "This lesson gives Q, K and V directly: the circuits are made from the weights that \
             project the embeddings."
        } else {
            "This lesson's d_model is wider than 128: its circuits, d_model × d_model numbers \
             a head, would be pages no learner reads."
        })
    },
    views: |plan| {
        vec![
            View::computed(plan, MatrixName::WQK),
            View::computed(plan, MatrixName::WOV),
        ]
    },
    // Its circuits are W_o's, which the output projection's part lights.
    header: Header::Attention {
        one_head: |_| Part::default(),
        several_heads: SeveralHeads::OneHead,
    },
};
