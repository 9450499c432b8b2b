//! Concat: every head's output side by side, head 1 first.

use crate::pipeline::{
    Header, MatrixName, Part, SeveralHeads, Step, StepEntry, View, head_superscript,
};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::Concat,
    key: "concat",
    title: "Concat",
    narration: |_| {
        "The heads' outputs are laid side by side, head 1 first: each token's row of concat is \
         its row of head 1's output, then head 2's, and so on. Nothing is added or averaged; \
         every number is copied from the head it came from, so the order of the blocks matters: \
         W_o's rows are in the same order, one block of rows per head."
            .into()
    },
    shown: |plan| plan.has(MatrixName::Concat) && plan.shape.heads.query > 1,
    note: |_| None,
    enable: Some("give the lesson several heads (`heads` with `w_o`, format 2)"),
    absent: |_| {
        Some(
            "This lesson has one head: there is nothing to lay side by side (concat is its output).",
        )
    },
    views: |plan| vec![View::computed(plan, MatrixName::Concat)],
    // A lesson with several heads only, whose header writes its clause.
    header: Header::Attention {
        one_head: |_| Part::default(),
        several_heads: SeveralHeads::Clause(|heads| {
            let last = head_superscript(heads.query.saturating_sub(1));
            if heads.query == 2 {
                format!("concat = [head⁽¹⁾ | head{last}]")
            } else {
                format!("concat = [head⁽¹⁾ | … | head{last}]")
            }
        }),
    },
};
