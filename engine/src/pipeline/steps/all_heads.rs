//! All heads: every head's weights side by side, so the learner sees that heads attend
//! differently; one is picked to open its Softmax step.

use crate::pipeline::{Header, MatrixName, Part, SeveralHeads, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::AllHeads,
    key: "all_heads",
    title: "All heads",
    narration: |plan| {
        let heads = plan.shape.heads;
        // Under grouped-query (or multi-query) attention the heads of a group share its keys:
        // a head's own weights come from its own queries only.
        let (from, sharing) = if heads.kv == 1 && heads.query > 1 {
            (
                "its own queries and the one set of keys every head shares (a single K/V \
                 group)",
                " Sharing the keys, the heads still differ by their queries.",
            )
        } else if heads.kv < heads.query {
            (
                "its own queries and its K/V group's keys",
                " The heads of a group share the keys and differ by their queries.",
            )
        } else {
            ("its own queries and keys", "")
        };
        if plan.shape.cross {
            return format!(
                "Every head computes its own weights from {from}: one head may follow the \
                 word-for-word alignment, another spread its attention over the whole \
                 source.{sharing} Each small map is one head's weights, a row per target \
                 token and a column per source token. The heads run side by side, none sees \
                 another's weights, and nothing here is averaged: each head's weights go on \
                 to its own output. < and > pick a head, Enter opens its Softmax step."
            )
            .into();
        }
        format!(
            "Every head computes its own weights from {from}, over the same tokens: one head \
             may look at the previous word, another at the word itself, a third spread its \
             attention evenly.{sharing} Each small map is one head's weights, a row per query. \
             The heads run side by side, none sees another's weights, and nothing here is \
             averaged: each head's weights go on to its own output. < and > pick a head, Enter \
             opens its Softmax step."
        )
        .into()
    },
    shown: |plan| plan.shape.heads.query > 1,
    // The screen draws every head's weights itself; the cursor stays on the picked head's.
    note: |_| None,
    enable: Some("give the lesson several heads (`heads` with `w_o`, format 2)"),
    absent: |_| Some("This lesson has one head: its weights are the Softmax step's."),
    views: |_| {
        vec![View {
            result: MatrixName::Weights,
            panels: vec![MatrixName::Weights],
        }]
    },
    // A lesson with several heads only, whose header writes its clause.
    header: Header::Attention {
        one_head: |_| Part::default(),
        // Keys and values are named by their K/V group, g for head h's (none with one).
        several_heads: SeveralHeads::Clause(|heads| {
            if heads.kv == 1 {
                "head⁽ʰ⁾ = softmax(Q⁽ʰ⁾Kᵀ / √d_k)V".to_string()
            } else if heads.kv < heads.query {
                "head⁽ʰ⁾ = softmax(Q⁽ʰ⁾K⁽ᵍ⁾ᵀ / √d_k)V⁽ᵍ⁾".to_string()
            } else {
                "head⁽ʰ⁾ = softmax(Q⁽ʰ⁾K⁽ʰ⁾ᵀ / √d_k)V⁽ʰ⁾".to_string()
            }
        }),
    },
};

#[cfg(test)]
mod tests {
    use crate::pipeline::{Heads, Plan, Shape, Step};

    /// Under grouped-query and multi-query attention a head's keys are its group's: the
    /// words may not say each head has its own.
    #[test]
    fn the_words_say_whose_keys_a_head_reads() {
        for shape in Shape::every() {
            for (heads, says) in [
                (Heads { query: 2, kv: 2 }, "its own queries and keys"),
                (
                    Heads { query: 4, kv: 2 },
                    "its own queries and its K/V group's keys",
                ),
                (
                    Heads { query: 4, kv: 1 },
                    "the one set of keys every head shares",
                ),
            ] {
                let plan = Plan::new(Shape { heads, ..shape });
                let words = Step::AllHeads.narration(&plan);
                assert!(words.contains(says), "{heads:?}: {words}");
                if heads.kv < heads.query {
                    assert!(!words.contains("queries and keys"), "{heads:?}: {words}");
                }
            }
        }
    }
}
