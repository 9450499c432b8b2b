//! Backward to the weights: dW_q, dW_k, dW_v, after adding the gradients of a K/V group's heads.

use crate::pipeline::{Header, MatrixName, Positions, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::BackwardWeights,
    key: "backward_weights",
    title: "Backward: weights",
    narration: |plan| {
        let grouped = plan.has(MatrixName::DKGroup);
        let weights: String = match (grouped, plan.has(MatrixName::DWQ), plan.shape.cross) {
            (true, false, _) => {
                "The query heads of a K/V group all read the group's keys and values, so the \
                 group's dK and dV are its heads' gradients added up."
                    .into()
            }
            (true, true, false) => {
                "The query heads of a K/V group all read the group's keys and values, so the \
                 group's dK and dV are its heads' gradients added up. Then each weight \
                 matrix's gradient is its input transposed times the gradient of what it made: \
                 dW_q = Xᵀ·dQ, dW_k = Xᵀ·dK, dW_v = Xᵀ·dV, each cell a column of X against a \
                 column of the gradient: one term per token."
                    .into()
            }
            (true, true, true) => {
                "The query heads of a K/V group all read the group's keys and values, so the \
                 group's dK and dV are its heads' gradients added up. Then each weight \
                 matrix's gradient is its input transposed times the gradient of what it made: \
                 dW_q = Xᵀ·dQ from the target, dW_k = Sᵀ·dK and dW_v = Sᵀ·dV from the source, \
                 each cell a column of the input against a column of the gradient: one term per \
                 token."
                    .into()
            }
            (false, _, true) => {
                "Each weight matrix's gradient is its input transposed times the gradient of \
                 what it made: dW_q = Xᵀ·dQ from the target, dW_k = Sᵀ·dK and dW_v = Sᵀ·dV from \
                 the source, each cell a column of the input against a column of the gradient: \
                 one term per token."
                    .into()
            }
            (false, _, false) => {
                "Each weight matrix's gradient is its input transposed times the gradient of \
                 what it made: dW_q = Xᵀ·dQ, dW_k = Xᵀ·dK, dW_v = Xᵀ·dV, each cell a column of \
                 X against a column of the gradient: one term per token. These are the numbers \
                 a training step moves the weights against."
                    .into()
            }
        };
        (weights + &biases(plan)).into()
    },
    shown: |plan| plan.has(MatrixName::DWQ) || plan.has(MatrixName::DKGroup),
    note: |_| None,
    enable: Some("give the lesson embeddings with w_q, w_k, w_v and `grad_output` (format 2)"),
    absent: super::without_a_backward_pass,
    views: |plan| {
        [
            MatrixName::DKGroup,
            MatrixName::DVGroup,
            MatrixName::DWQ,
            MatrixName::DWK,
            MatrixName::DWV,
            MatrixName::DBQ,
            MatrixName::DBK,
            MatrixName::DBV,
        ]
        .into_iter()
        .filter(|name| plan.has(*name))
        .map(|name| View::computed(plan, name))
        .collect()
    },
    header: Header::Backward,
};

/// What the narration adds for the biases the lesson has: each is added to every token's row,
/// so its gradient is the column sums of its matrix's.
fn biases(plan: &crate::pipeline::Plan) -> String {
    let sums: Vec<&str> = [
        (MatrixName::DBQ, "db_q = Σ dQ"),
        (MatrixName::DBK, "db_k = Σ dK"),
        (MatrixName::DBV, "db_v = Σ dV"),
    ]
    .into_iter()
    .filter(|(name, _)| plan.has(*name))
    .map(|(_, sum)| sum)
    .collect();
    if sums.is_empty() {
        return String::new();
    }
    let keys = if plan.has(MatrixName::DBK) && plan.shape.positions != Positions::Rope {
        // Σ_j dS[i, j] = 0 for every query i (the softmax's gradient sums to 0 along a row),
        // so Σ_j dK[j, :] = Σ_i (Σ_j dS[i, j]) q_i = 0.
        " db_k is 0, up to rounding: b_k adds the same amount to every score in a query's row \
         (q·b_k, whichever the key), and the softmax does not change when a whole row moves \
         together."
    } else {
        ""
    };
    format!(
        " A bias is added to every token's row, so every row's gradient reaches it: {}, each \
         column summed over the tokens.{keys}",
        sums.join(", ")
    )
}
