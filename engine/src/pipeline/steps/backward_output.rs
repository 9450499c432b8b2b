//! Backward through W_o: the loss's gradient from the output back to each head's output.

use crate::pipeline::{Header, MatrixName, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::BackwardOutput,
    key: "backward_output",
    title: "Backward: W_o",
    narration: |plan| {
        let biased = plan.has(MatrixName::DBO);
        let mut text = format!(
            "The backward pass starts from dO = grad_output, how much the loss L = Σ output ⊙ \
             grad_output changes per unit of each output number. output = concat·W_o{}, so the \
             gradient goes back through W_o transposed: d_concat = dO·W_oᵀ, and W_o's own \
             gradient is dW_o = concatᵀ·dO, each cell a column of concat against a column of \
             dO.",
            if biased { " + b_o" } else { "" }
        );
        if biased {
            text.push_str(
                " b_o is added to every token's row of the output, so its gradient is dO's \
                 columns summed over the tokens: db_o = Σ dO.",
            );
        }
        text.push_str(
            " Each head then takes its own columns of d_concat, the gradient of its output.",
        );
        text.into()
    },
    shown: |plan| plan.has(MatrixName::DConcat),
    note: |_| None,
    enable: Some("give the lesson `w_o` and `grad_output` (format 2)"),
    absent: super::without_a_backward_pass,
    views: |plan| {
        [
            MatrixName::DConcat,
            MatrixName::DWO,
            MatrixName::DBO,
            MatrixName::DHeadOutput,
        ]
        .into_iter()
        .filter(|name| plan.has(*name))
        .map(|name| View::computed(plan, name))
        .collect()
    },
    header: Header::Backward,
};
