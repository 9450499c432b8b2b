//! Masking: a mask added to the scores, hiding keys with -inf or tilting them with a bias.

use crate::pipeline::{Header, MatrixName, Part, Piece, SeveralHeads, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
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
                    PyTorch's scaled_dot_product_attention gives since version 2.5. Any finite \
                    bias is added to the score and tilts the row; a fill such as -1e9 hides a \
                    key as -inf does (its exp underflows to 0), but on every key of a row it \
                    shifts the whole row, which softmax ignores."
                .into();
        }
        "A mask is added to the scores: 0 where a query may look, -inf where it may not. In a \
         causal mask each token sees only itself and the tokens before it, as when a model \
         writes text one token at a time. exp(-inf) is 0, so a hidden key gets a weight of \
         exactly 0. A row whose every key is hidden is 0 / 0: this tutor gives it weights and \
         output of 0, as PyTorch's scaled_dot_product_attention does since version 2.5 (older \
         versions and a plain softmax give NaN). Many tutorials instead fill hidden scores \
         with -1e9 (masked_fill, which puts it in the score's place): a hidden key gets a \
         weight of 0 once exp underflows, and a row whose every key is hidden becomes uniform, \
         1/n for each of its n keys. A mask here may hold any finite bias, as ALiBi's linear \
         biases and Hugging Face's finfo.min fill do: it is added to the score, so it tilts \
         the row. -1e9 added to a key hides it as -inf does, but added to every key of a row \
         it changes nothing, since softmax ignores a shift of the whole row: the row is \
         weighted as if unmasked (or evenly, once the bias is so large it swallows the \
         scores)."
            .into()
    },
    shown: |plan| plan.has(MatrixName::Masked),
    note: |_| None,
    enable: Some("add `mask = \"causal\"`"),
    absent: |_| Some("This lesson has no mask: every query sees every key."),
    views: |plan| vec![View::computed(plan, MatrixName::Masked)],
    header: Header::Attention {
        one_head: |_| Part {
            after: vec![Piece::own(" + mask")],
            ..Part::default()
        },
        several_heads: SeveralHeads::OneHead,
    },
};
