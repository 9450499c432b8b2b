//! Generation, the K/V cache: every key and value so far, the new token's added as the last row.

use crate::pipeline::{Header, Lit, MatrixName, Part, Piece, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::KvCache,
    key: "kv_cache",
    title: "Generation: the K/V cache",
    narration: |plan| {
        if plan.shape.heads.kv < plan.shape.heads.query {
            return "The cache keeps every key and value made so far, one row per token: the \
                    rows of earlier tokens are kept from their own steps, and only the new \
                    token's row is added. With grouped-query attention each K/V group has one \
                    cache, shared by its query heads, so the cache is smaller than with a \
                    group per head. The note by the matrices counts the numbers held and \
                    what reusing them saved."
                .into();
        }
        "The cache keeps every key and value made so far, one row per token: the rows of \
         earlier tokens are kept from their own steps, and only the new token's row is added, \
         so nothing is projected twice. It grows by one row a step, and holds no future token: \
         that is why generation needs no mask. The note by the matrices counts \
         the numbers held and what reusing them saved."
            .into()
    },
    shown: |plan| plan.has(MatrixName::KCache),
    note: |_| None,
    enable: Some("add `decode = true` (with `mask = \"causal\"`, format 2)"),
    absent: |_| Some("This lesson has no generation steps: they come with `decode = true`."),
    views: |plan| {
        [MatrixName::KCache, MatrixName::VCache]
            .into_iter()
            .map(|name| View::computed(plan, name))
            .collect()
    },
    header: Header::Generation(|plan| Part {
        after: vec![Piece::new("·K_cacheᵀ", Lit::Also(&[Step::DecodeWeights]))],
        definitions: vec![Piece::own(if plan.has(MatrixName::QNewRope) {
            "K_cache gains rot(k_t), V_cache gains v_t"
        } else {
            "K_cache gains k_t, V_cache gains v_t"
        })],
        ..Part::default()
    }),
};
