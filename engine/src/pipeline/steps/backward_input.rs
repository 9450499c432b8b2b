//! Backward to the embeddings: dX, the three paths through Q, K and V added.

use crate::pipeline::{Header, MatrixName, Positions, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::BackwardInput,
    key: "backward_input",
    title: "Backward: embeddings",
    narration: |plan| {
        if plan.shape.cross {
            return "The target reaches the loss only through its queries: dX = Σ_h \
                    dQ⁽ʰ⁾·W_q⁽ʰ⁾ᵀ. The source reaches it through its keys and values: d_source \
                    = Σ dK·W_kᵀ + Σ dV·W_vᵀ, the two paths added, every head (or K/V group) \
                    adding its own term."
                .into();
        }
        let paths = "X reaches the loss three ways, through its queries, keys and values, so \
                     its gradient is three paths added: dX = Σ_h dQ⁽ʰ⁾·W_q⁽ʰ⁾ᵀ + Σ dK·W_kᵀ + \
                     Σ dV·W_vᵀ, every head (or K/V group) adding its own term.";
        // Only where the lesson adds positions to its embeddings.
        match plan.shape.positions {
            Positions::Sinusoidal | Positions::Learned => format!(
                "{paths} The positions were added to the embeddings, X = E + P, so E's \
                 gradient is the same dX."
            )
            .into(),
            Positions::None | Positions::Rope => paths.into(),
        }
    },
    shown: |plan| plan.has(MatrixName::DXQ),
    note: |_| None,
    enable: Some("give the lesson embeddings with w_q, w_k, w_v and `grad_output` (format 2)"),
    absent: super::without_a_backward_pass,
    views: |plan| {
        [
            MatrixName::DXQ,
            MatrixName::DXK,
            MatrixName::DXV,
            MatrixName::DX,
            MatrixName::DSource,
        ]
        .into_iter()
        .filter(|name| plan.has(*name))
        .map(|name| View::computed(plan, name))
        .collect()
    },
    header: Header::Backward,
};
