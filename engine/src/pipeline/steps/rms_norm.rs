//! RMSNorm (`norm = "rms"`): each row of X divided by its root mean square, then scaled by the
//! gain γ, before the projections read it.

use super::layer_norm::{definition, source_words, views};
use crate::pipeline::{Header, NormKind, SeveralHeads, Step, StepEntry};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::RmsNorm,
    key: "rms_norm",
    title: "RMSNorm",
    narration: |plan| {
        format!(
            "Before the projections read a token's vector, RMSNorm rescales it on its own, as \
             Llama does at the start of every block (pre-norm): the row is divided by its root \
             mean square, x / √(mean(x²) + ε), the mean taken over the row's d_model squares. \
             Unlike LayerNorm it takes no mean off and adds no bias, which costs less and \
             trains as well (Zhang and Sennrich, 2019). ε, a small number, keeps a row of \
             zeros from dividing by zero. Each column is then multiplied by its learned gain γ. \
             Every token thus enters W_q, W_k and W_v at the same scale, whatever the size of \
             its vector.{}",
            source_words(plan)
        )
        .into()
    },
    shown: |plan| plan.shape.norm == Some(NormKind::Rms),
    note: |_| None,
    enable: Some("add `norm = \"rms\"` (with embeddings, format 2)"),
    absent: |plan| {
        Some(if plan.shape.norm == Some(NormKind::Layer) {
            "This lesson's norm is LayerNorm (`norm = \"layer\"`), on the layer_norm step: the \
             projections read its X̂."
        } else {
            "This lesson has no RMSNorm (no `norm = \"rms\"`): the projections read X."
        })
    },
    views,
    header: Header::Attention {
        one_head: |plan| definition(plan, "RMSNorm"),
        several_heads: SeveralHeads::Whole,
    },
};
