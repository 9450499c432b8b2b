//! Generation, the output row: the new weights times the cached values, checked against the
//! whole pass's row.

use crate::pipeline::{Header, Lit, MatrixName, Part, Piece, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::DecodeOutput,
    key: "decode_output",
    title: "Generation: the output row",
    narration: |plan| {
        if plan.has(MatrixName::DecodeProjected) {
            "The new token's output is its weights times the cached values, one row per head, \
             then the heads side by side times W_o. The engine compares it with row t of the \
             whole causal pass (the note by the matrices): they agree, because the causal mask let row t see \
             exactly the tokens the cache holds.".into()
        } else {
            "The new token's output is its weights times the cached values: \
             output_t = weights_t·V_cache. The engine compares it with row t of the \
             whole causal pass (the note by the matrices): they agree, because the causal mask let row t see exactly the \
             tokens the cache holds.".into()
        }
    },
    shown: |plan| plan.has(MatrixName::DecodeOutput),
    note: |_| None,
    enable: Some("add `decode = true` (with `mask = \"causal\"`, format 2)"),
    absent: |_| Some("This lesson has no generation steps: they come with `decode = true`."),
    views: |plan| {
        [
            MatrixName::DecodeOutput,
            MatrixName::DecodeConcat,
            MatrixName::DecodeProjected,
        ]
        .into_iter()
        .filter(|name| plan.has(*name))
        .map(|name| View::computed(plan, name))
        .collect()
    },
    header: Header::Generation(|plan| Part {
        before: vec![Piece::own("output_t = ")],
        after: if plan.has(MatrixName::DecodeProjected) {
            vec![
                Piece::new("·V_cache", Lit::Also(&[Step::KvCache])),
                Piece::own(" …·W_o"),
            ]
        } else {
            vec![Piece::new("·V_cache", Lit::Also(&[Step::KvCache]))]
        },
        definitions: vec![Piece::new("the caches hold tokens 1 … t", Lit::Never)],
        ..Part::default()
    }),
};
