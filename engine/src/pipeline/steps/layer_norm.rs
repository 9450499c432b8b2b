//! LayerNorm (`norm = "layer"`): each row of X brought to mean 0 and variance 1, then scaled
//! by the gain γ and shifted by the bias β, before the projections read it.

use crate::ops;
use crate::pipeline::{
    Header, MatrixName, NormKind, Op, Part, Piece, Plan, SeveralHeads, Step, StepEntry, View,
};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::LayerNorm,
    key: "layer_norm",
    title: "LayerNorm",
    narration: |plan| {
        format!(
            "Before the projections read a token's vector, LayerNorm rescales it on its own, \
             as GPT-2 does at the start of every block (pre-norm): the row's mean is taken off \
             and it is divided by its standard deviation, (x − mean) / √(var + ε), the \
             variance taken over the row's d_model numbers and divided by d_model, not \
             d_model − 1. ε, a small number, keeps a constant row from dividing by zero. Each \
             column is then multiplied by its learned gain γ and shifted by its learned bias β. \
             Every token thus enters W_q, W_k and W_v at the same scale, whatever the size of \
             its vector.{}",
            source_words(plan)
        )
        .into()
    },
    shown: |plan| plan.shape.norm == Some(NormKind::Layer),
    note: |_| None,
    enable: Some("add `norm = \"layer\"` (with embeddings, format 2)"),
    absent: |plan| {
        Some(if plan.shape.norm == Some(NormKind::Rms) {
            "This lesson's norm is RMSNorm (`norm = \"rms\"`), on the rms_norm step: the \
             projections read its X̂."
        } else {
            "This lesson has no LayerNorm (no `norm = \"layer\"`): the projections read X."
        })
    },
    views: |plan| views(plan),
    header: Header::Attention {
        one_head: |plan| definition(plan, "LayerNorm"),
        several_heads: SeveralHeads::Whole,
    },
};

/// What cross-attention's norm leaves alone, said after the norm's words; empty otherwise.
pub(super) fn source_words(plan: &Plan) -> &'static str {
    if plan.shape.cross {
        " In cross-attention only the target's rows are normalised here: the source is an \
         encoder's output, which the encoder's own last norm has normalised already."
    } else {
        ""
    }
}

/// The norm's screen: the rows it normalises, the gain (and bias), and the result.
pub(super) fn views(plan: &Plan) -> Vec<View> {
    if plan.has(MatrixName::XNorm) {
        vec![View::computed(plan, MatrixName::XNorm)]
    } else {
        Vec::new()
    }
}

/// `X̂ = LayerNorm(X); `, naming what the plan normalises.
pub(super) fn definition(plan: &Plan, name: &'static str) -> Part {
    let definitions = match plan.origin(MatrixName::XNorm) {
        Some(Op::Norm(ops::Norm { of, .. })) => vec![Piece::own(format!(
            "{} = {name}({}); ",
            plan.symbol(MatrixName::XNorm),
            plan.symbol(of)
        ))],
        _ => Vec::new(),
    };
    Part {
        definitions,
        ..Part::default()
    }
}
