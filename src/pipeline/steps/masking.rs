//! Masking: a mask added to the scores, hiding keys with -inf or tilting them with a bias.

use crate::pipeline::{MatrixName, Step, StepEntry, View};

pub const ENTRY: StepEntry = StepEntry {
    step: Step::Masking,
    key: "masking",
    title: "Masking",
    narration: |plan| {
        if plan.shape.cross {
            return "A mask is added to the scores: 0 where a target token may look at a source \
                    token, -inf where it may not, one row per target token and one column per \
                    source token. There is no causal mask here: the source is another sequence, \
                    whole before the target is written, so nothing in it comes \"later\". A \
                    mask in cross-attention hides padding, or source tokens a lesson wants \
                    hidden. exp(-inf) is 0, so a hidden key gets a weight of exactly 0, and a \
                    row whose every key is hidden gets weights and output of 0 here, as \
                    PyTorch's scaled_dot_product_attention gives since version 2.5. A finite \
                    bias within ±1e6 is added to the score and tilts the row.";
        }
        "A mask is added to the scores: 0 where a query may look, -inf where it may not. In a \
         causal mask each token sees only itself and the tokens before it, as when a model \
         writes text one token at a time. exp(-inf) is 0, so a hidden key gets a weight of \
         exactly 0. A row whose every key is hidden is 0 / 0: this tutor gives it weights and \
         output of 0, as PyTorch's scaled_dot_product_attention does since version 2.5 (older \
         versions and a plain softmax give NaN). Many tutorials instead fill hidden scores \
         with -1e9 (masked_fill): a hidden key then gets a tiny weight, or 0 once exp \
         underflows, and a row whose every key is hidden becomes uniform, 1/n for each of its \
         n keys. A mask here may also hold any finite bias within ±1e6, as ALiBi's linear \
         biases do: it is added to the score, not put in its place, so it tilts the row, and \
         the same bias on every key of a row changes nothing."
    },
    shown: |plan| plan.has(MatrixName::Masked),
    views: |plan| vec![View::computed(plan, MatrixName::Masked)],
};
