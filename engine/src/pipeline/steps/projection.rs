//! Projection: queries, keys and values, each X times its weights (or given by the lesson).

use crate::pipeline::{Header, Lit, MatrixName, Part, Piece, SeveralHeads, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::Projection,
    key: "projection",
    title: "Projection",
    // The words name what the plan multiplies by the weights, so a step put before the
    // projections (one that normalises X, say) is named here without an edit.
    narration: |plan| {
        // Q, K and V given: the note says so, and there is no X·W to explain.
        let (Some(x), Some(s)) = (plan.projected_input(), plan.projected_source()) else {
            return "".into();
        };
        let (x, s) = (plan.symbol(x), plan.symbol(s));
        let (bq, bk, bv) = biases(plan);
        let plus = if plan.shape.biases.q || plan.shape.biases.k || plan.shape.biases.v {
            ", plus the bias's number for that column"
        } else {
            ""
        };
        if plan.shape.cross {
            return format!(
                "Three learned matrices make three new vectors, from two sequences: a query \
                 from each target token (what it is looking for in the source), and a key \
                 (what it offers) and a value (what it passes on) from each source token. \
                 Q = {x}·W_q{bq}, K = {s}·W_k{bk}, V = {s}·W_v{bv}: each cell is a dot product \
                 of a row of {x} or {s} with a column of the weights{plus}, so Q has a row per \
                 target token and K and V a row per source token."
            )
            .into();
        }
        format!(
            "Three learned matrices turn each embedding into three new vectors: a query (what \
             this token is looking for), a key (what it offers to others) and a value (what it \
             passes on). Q = {x}·W_q{bq}, K = {x}·W_k{bk}, V = {x}·W_v{bv}: each cell is a dot \
             product of a row of {x} with a column of the weights{plus}."
        )
        .into()
    },
    shown: |_| true,
    note: |plan| match (plan.has(MatrixName::WQ), plan.shape.cross) {
        (true, _) => None,
        (false, true) => Some(
            "This lesson gives Q, K and V directly, as if the projections had already been \
                 done: each row of Q is a target token's query, each row of K and V a source \
                 token's key and value.",
        ),
        (false, false) => Some(
            "This lesson gives Q, K and V directly, as if the projection from embeddings had \
                 already been done: each row is one token's query, key and value.",
        ),
    },
    enable: None,
    absent: |_| None,
    views: |plan| {
        let projections = [MatrixName::Q, MatrixName::K, MatrixName::V];
        if plan.has(MatrixName::WQ) {
            projections
                .into_iter()
                .map(|projection| View::computed(plan, projection))
                .collect()
        } else {
            // Q, K and V given side by side.
            vec![View {
                result: MatrixName::Q,
                panels: projections.to_vec(),
            }]
        }
    },
    header: Header::Attention {
        // What the projections read is lit on every step that makes it.
        one_head: |plan| Part {
            definitions: if let (Some(x), Some(s)) =
                (plan.projected_input(), plan.projected_source())
            {
                let (x, s) = (plan.symbol(x), plan.symbol(s));
                let (bq, bk, bv) = biases(plan);
                if plan.shape.cross {
                    // Queries from the target, keys and values from the source.
                    vec![
                        Piece::own("Q = "),
                        Piece::new(x, Lit::Inputs),
                        Piece::own(format!("·W_q{bq}; K, V = ")),
                        Piece::new(s, Lit::Inputs),
                        Piece::own(format!("·W_k{bk}, {s}·W_v{bv}")),
                    ]
                } else {
                    vec![
                        Piece::own("Q, K, V = "),
                        Piece::new(x, Lit::Inputs),
                        Piece::own(format!("·W_q{bq}, {x}·W_k{bk}, {x}·W_v{bv}")),
                    ]
                }
            } else {
                vec![Piece::new("Q, K, V are given", Lit::Inputs)]
            },
            ..Part::default()
        },
        several_heads: SeveralHeads::OneHead,
    },
};

/// ` + b_q`, ` + b_k`, ` + b_v` for the projections that add a bias, else empty.
fn biases(plan: &crate::pipeline::Plan) -> (&'static str, &'static str, &'static str) {
    let biased = plan.shape.biases;
    let term = |given: bool, term: &'static str| if given { term } else { "" };
    (
        term(biased.q, " + b_q"),
        term(biased.k, " + b_k"),
        term(biased.v, " + b_v"),
    )
}
