//! Multi-head attention in the engine: each head reads its own block of columns, grouped-query
//! heads share their group's keys and values, the heads' outputs are concatenated and projected
//! by W_o, the circuits W_QK and W_OV, and the slips a learner makes with heads. Expected numbers
//! are worked out by hand here, never with the code under test.

use attn_engine::attention::{Attention, Cell, MatrixName};
use attn_engine::lesson::{Expected, InputMatrix, Inputs, Lesson, Mask, Narration, PositionInputs};
use attn_engine::pipeline::Heads;
use attn_engine::practice::{SlipKind, Verdict, check};
use nalgebra::{DMatrix, dmatrix};

fn lesson(tokens: usize, inputs: Inputs, heads: Heads, w_o: Option<DMatrix<f64>>) -> Lesson {
    Lesson {
        title: "heads".into(),
        source: String::new(),
        summary: String::new(),
        tokens: (0..tokens).map(|i| format!("t{i}")).collect(),
        source_tokens: Vec::new(),
        source_embeddings: None,
        inputs,
        scale: true,
        mask: Mask::None,
        decode: false,
        norm: None,
        biases: Default::default(),
        tile: 2,
        positions: PositionInputs::None,
        rope_pairing: Default::default(),
        rope_theta: attn_engine::lesson::DEFAULT_ROPE_THETA,
        token_ids: None,
        format: 2,
        heads,
        w_o: w_o.map(InputMatrix::literal),
        grad_output: None,
        focus: None,
        decimals: 4,
        narration: Narration::default(),
        expected: Expected::default(),
    }
}

fn direct(q: DMatrix<f64>, k: DMatrix<f64>, v: DMatrix<f64>) -> Inputs {
    Inputs::Direct {
        q: InputMatrix::literal(q),
        k: InputMatrix::literal(k),
        v: InputMatrix::literal(v),
    }
}

/// Two tokens, two heads of d_k = d_v = 1: head 1 reads column 1 of q, k and v, head 2 column 2.
fn two_heads() -> Attention {
    Attention::compute(&lesson(
        2,
        direct(
            dmatrix![1.0, 2.0; 3.0, 4.0],
            dmatrix![1.0, 0.0; 0.0, 1.0],
            dmatrix![1.0, 2.0; 3.0, 4.0],
        ),
        Heads { query: 2, kv: 2 },
        Some(dmatrix![1.0; 10.0]),
    ))
}

/// Two tokens, four query heads of d_k = 1 sharing two K/V groups.
fn grouped() -> Attention {
    Attention::compute(&lesson(
        2,
        direct(
            dmatrix![1.0, 2.0, 3.0, 4.0; 5.0, 6.0, 7.0, 8.0],
            dmatrix![1.0, 0.0; 0.0, 1.0],
            dmatrix![1.0, 2.0; 3.0, 4.0],
        ),
        Heads { query: 4, kv: 2 },
        Some(DMatrix::from_element(4, 1, 1.0)),
    ))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn each_head_reads_its_own_block_of_columns() {
    let attention = two_heads();
    // head 1: q = (1, 3), k = (1, 0) → scores = q·kᵀ; head 2: q = (2, 4), k = (0, 1).
    assert_eq!(
        attention.matrix_in(MatrixName::Scores, 0).unwrap(),
        &dmatrix![1.0, 0.0; 3.0, 0.0]
    );
    assert_eq!(
        attention.matrix_in(MatrixName::Scores, 1).unwrap(),
        &dmatrix![0.0, 2.0; 0.0, 4.0]
    );
}

#[test]
fn scaling_divides_by_the_square_root_of_one_heads_d_k() {
    let attention = two_heads();
    // d_k of a head is 1, so √d_k = 1 although the lesson's q is 2 wide.
    assert_eq!(attention.scale_divisor, 1.0);
    assert_eq!(
        attention.matrix_in(MatrixName::Scaled, 1),
        attention.matrix_in(MatrixName::Scores, 1)
    );
}

#[test]
fn grouped_query_heads_share_their_groups_keys_and_values() {
    let attention = grouped();
    let column = |matrix: &DMatrix<f64>, col: usize| matrix.column(col).into_owned();
    let k = dmatrix![1.0, 0.0; 0.0, 1.0];
    let v = dmatrix![1.0, 2.0; 3.0, 4.0];
    // Heads 1 and 2 read group 1 (column 1), heads 3 and 4 group 2: ⌊h / (H/G)⌋.
    for (head, group) in [(0, 0), (1, 0), (2, 1), (3, 1)] {
        let head_k = attention.matrix_in(MatrixName::K, head).unwrap();
        let head_v = attention.matrix_in(MatrixName::V, head).unwrap();
        assert_eq!(
            head_k.column(0).into_owned(),
            column(&k, group),
            "head {head}"
        );
        assert_eq!(
            head_v.column(0).into_owned(),
            column(&v, group),
            "head {head}"
        );
    }
    // Head 2's scores: its queries (2, 6) against group 1's keys (1, 0).
    assert_eq!(
        attention.matrix_in(MatrixName::Scores, 1).unwrap(),
        &dmatrix![2.0, 0.0; 6.0, 0.0]
    );
}

#[test]
fn concat_places_each_heads_output_in_its_block_and_w_o_projects_it() {
    let attention = two_heads();
    let output = |head| {
        attention
            .matrix_in(MatrixName::Output, head)
            .unwrap()
            .clone()
    };
    let concat = attention.matrix(MatrixName::Concat).unwrap();
    assert_eq!(concat.shape(), (2, 2));
    assert_eq!(concat.column(0), output(0).column(0));
    assert_eq!(concat.column(1), output(1).column(0));
    // W_o = (1, 10)ᵀ: output = head 1 + 10 · head 2.
    let projected = attention.matrix(MatrixName::Projected).unwrap();
    for row in 0..2 {
        let by_hand = output(0)[(row, 0)] + 10.0 * output(1)[(row, 0)];
        assert!(close(projected[(row, 0)], by_hand));
    }
    assert_eq!(
        attention.figure_source(MatrixName::Output),
        MatrixName::Projected
    );
}

#[test]
fn a_concat_cell_says_which_heads_output_it_is() {
    let attention = two_heads();
    let text = attention
        .derive(Cell::new(MatrixName::Concat, 1, 1))
        .unwrap()
        .explain(&attention, 4);
    assert!(text.starts_with("concat[t1, 2] = head⁽²⁾[t1, 1]"), "{text}");
    assert!(text.contains("column 1 of head 2's output"), "{text}");
}

#[test]
fn the_output_projection_says_what_each_head_contributes() {
    let attention = two_heads();
    let output = |head| attention.matrix_in(MatrixName::Output, head).unwrap()[(0, 0)];
    let text = attention
        .derive(Cell::new(MatrixName::Projected, 0, 0))
        .unwrap()
        .explain(&attention, 4);
    let first = format!("head 1 contributes {:.4}", output(0));
    let second = format!("head 2 contributes {:.4}", output(1) * 10.0);
    assert!(text.contains(&first), "{text}\nwants {first}");
    assert!(text.contains(&second), "{text}\nwants {second}");
}

#[test]
fn a_cell_of_a_head_is_named_with_its_head() {
    let attention = two_heads();
    let cell = Cell::new(MatrixName::Scores, 0, 1).in_head(1);
    let text = attention.derive(cell).unwrap().explain(&attention, 4);
    assert!(
        text.starts_with("scores⁽²⁾[t0, t1] = q⁽²⁾_t0 · k⁽²⁾_t1"),
        "{text}"
    );
}

#[test]
fn a_shared_matrix_has_one_name_from_every_head() {
    assert_eq!(Cell::new(MatrixName::Concat, 0, 0).in_head(3).head, 0);
    assert_eq!(Cell::new(MatrixName::Scores, 0, 0).in_head(3).head, 3);
}

/// Three tokens, d_model 2, two heads of d_k = d_v = 1, W_o 2 × 1: the circuits' lesson.
fn projected_two_heads() -> Lesson {
    lesson(
        3,
        Inputs::Projected {
            embeddings: InputMatrix::literal(dmatrix![1.0, 0.0; 0.0, 1.0; 1.0, 1.0]),
            w_q: InputMatrix::literal(dmatrix![1.0, 2.0; 3.0, 4.0]),
            w_k: InputMatrix::literal(dmatrix![0.5, -1.0; 2.0, 1.0]),
            w_v: InputMatrix::literal(dmatrix![1.0, 0.0; 0.0, 2.0]),
        },
        Heads { query: 2, kv: 2 },
        Some(dmatrix![3.0; 5.0]),
    )
}

#[test]
fn the_query_key_circuit_is_w_q_times_w_k_transposed_per_head() {
    let attention = Attention::compute(&projected_two_heads());
    // Head 2: W_q⁽²⁾ = (2, 4)ᵀ, W_k⁽²⁾ = (−1, 1)ᵀ → W_QK = [[−2, 2], [−4, 4]].
    assert_eq!(
        attention.matrix_in(MatrixName::WQK, 1).unwrap(),
        &dmatrix![-2.0, 2.0; -4.0, 4.0]
    );
    // x_i · W_QK · x_jᵀ / √d_k is the scaled score, for every pair.
    for (query, key) in [(0, 1), (2, 0), (1, 2)] {
        let scaled = attention.matrix_in(MatrixName::Scaled, 1).unwrap()[(query, key)];
        let circuit = attention.circuit_score(1, query, key).unwrap();
        assert!(
            close(circuit, scaled),
            "{query},{key}: {circuit} vs {scaled}"
        );
    }
}

#[test]
fn the_output_value_circuit_takes_the_heads_rows_of_w_o() {
    let attention = Attention::compute(&projected_two_heads());
    // Head 2: W_v⁽²⁾ = (0, 2)ᵀ and its row of W_o is 5 → W_OV = (0, 10)ᵀ.
    assert_eq!(
        attention.matrix_in(MatrixName::WOV, 1).unwrap(),
        &dmatrix![0.0; 10.0]
    );
    let text = attention
        .derive(Cell::new(MatrixName::WOV, 1, 0).in_head(1))
        .unwrap()
        .explain(&attention, 4);
    // In words, not `W_o[2:2, 1]`, a slice numpy reads otherwise.
    assert!(text.contains("· (row 2 of W_o, column 1) ="), "{text}");
    assert!(!text.contains("W_o["), "{text}");
}

#[test]
fn a_heads_block_of_w_o_is_named_as_rows_first_to_last_not_as_a_slice() {
    // Two heads of d_v = 2: head 2's block of W_o is its rows 3 and 4 (1-based, both in).
    let loaded = attn_engine::lesson::load_text(
        "two-heads",
        None,
        attn_engine::lesson::BUILTIN
            .iter()
            .find(|builtin| builtin.name == "two-heads")
            .unwrap()
            .text
            .to_string(),
    )
    .unwrap();
    let attention = Attention::compute(&loaded.lesson);
    let text = attention
        .derive(Cell::new(MatrixName::WOV, 0, 1).in_head(1))
        .unwrap()
        .explain(&attention, 4);
    assert!(text.contains("· (rows 3–4 of W_o, column 2) ="), "{text}");
    assert!(!text.contains("3:4"), "{text}");
}

#[test]
fn rope_turns_each_heads_columns_as_its_own_vector() {
    let mut lesson = lesson(
        2,
        direct(
            dmatrix![1.0, 0.0, 1.0, 0.0; 1.0, 0.0, 1.0, 0.0],
            dmatrix![1.0, 0.0, 1.0, 0.0; 1.0, 0.0, 1.0, 0.0],
            dmatrix![1.0, 1.0; 1.0, 1.0],
        ),
        Heads { query: 2, kv: 2 },
        Some(dmatrix![1.0; 1.0]),
    );
    lesson.positions = PositionInputs::Rope;
    let attention = Attention::compute(&lesson);
    // Head 2's first pair is its pair i = 0, turned by φ = p at position 1, the same as head
    // 1's: not pair 1 of a 4-wide vector (φ = 10000^(−1/2)).
    let head_two = attention.matrix_in(MatrixName::QRope, 1).unwrap();
    assert!(close(head_two[(1, 0)], 1f64.cos()));
    assert!(close(head_two[(1, 1)], 1f64.sin()));
}

fn slip_of(attention: &Attention, cell: Cell, answer: f64) -> Option<SlipKind> {
    match check(attention, cell, answer, 4).unwrap() {
        Verdict::Wrong { slip, .. } => slip.map(|slip| slip.kind),
        Verdict::Right { .. } => panic!("{answer} is right for {cell:?}"),
    }
}

#[test]
fn dividing_by_the_square_root_of_d_model_is_named() {
    let attention = Attention::compute(&projected_two_heads());
    let cell = Cell::new(MatrixName::Scaled, 2, 0).in_head(1);
    // d_model is 2, d_k is 1: the slip divides the score by √2.
    let score = attention.matrix_in(MatrixName::Scores, 1).unwrap()[(2, 0)];
    assert_ne!(score, 0.0);
    assert_eq!(
        slip_of(&attention, cell, score / 2f64.sqrt()),
        Some(SlipKind::ScaledByModelWidth)
    );
}

#[test]
fn averaging_the_heads_weights_is_named() {
    let attention = two_heads();
    let cell = Cell::new(MatrixName::Weights, 1, 0).in_head(1);
    let average = (attention.weights_of(0)[(1, 0)] + attention.weights_of(1)[(1, 0)]) / 2.0;
    assert_eq!(
        slip_of(&attention, cell, average),
        Some(SlipKind::AveragedHeads)
    );
}

#[test]
fn using_another_groups_keys_is_named() {
    let attention = grouped();
    // Head 2 (group 1) with group 2's key (0, 1) for key t1: q = 6 at t1 → 6 · 1.
    let cell = Cell::new(MatrixName::Scores, 1, 1).in_head(1);
    assert_eq!(slip_of(&attention, cell, 6.0), Some(SlipKind::WrongGroup));
}

#[test]
fn concatenating_in_the_wrong_order_is_named() {
    let attention = two_heads();
    // Column 1 of concat with the heads reversed is head 2's output.
    let head_two = attention.matrix_in(MatrixName::Output, 1).unwrap()[(0, 0)];
    let cell = Cell::new(MatrixName::Concat, 0, 0);
    assert_eq!(
        slip_of(&attention, cell, head_two),
        Some(SlipKind::ConcatOrder)
    );
}

#[test]
fn the_first_hint_of_the_output_projection_counts_every_product() {
    let attention = two_heads();
    let hints = attn_engine::practice::hints(&attention, Cell::new(MatrixName::Projected, 0, 0), 4)
        .unwrap();
    let first = hints.get(attn_engine::practice::HintLevel::FirstStep);
    assert!(first.contains("(2 products in all)"), "{first}");
    assert!(!first.contains("[("), "{first}");
}

#[test]
fn a_narration_may_quote_any_heads_numbers() {
    let lesson = projected_two_heads();
    let attention = Attention::compute(&lesson);
    let values = attn_engine::attention::quotes::quotable(&lesson, &attention);
    let has = |wanted: f64| values.iter().any(|value| close(*value, wanted));
    let head_two_weight = attention.weights_of(1)[(2, 0)];
    assert!(
        !attention
            .weights_of(0)
            .iter()
            .any(|w| close(*w, head_two_weight))
    );
    assert!(has(head_two_weight), "head 2's weight {head_two_weight}");
    // What head 2 contributes to output[t0, 1]: its output times its row of W_o (5).
    let contribution = attention.matrix_in(MatrixName::Output, 1).unwrap()[(0, 0)] * 5.0;
    assert!(has(contribution), "head 2 contributes {contribution}");
}

#[test]
fn a_large_lessons_heads_computed_together_keep_their_places() {
    use attn_engine::lesson::{Generator, RandomKind};
    let generated = |seed, rows, cols| {
        InputMatrix::generated(Generator {
            kind: RandomKind::Normal,
            seed,
            rows,
            cols,
        })
    };
    // 64 tokens × 1024 is past the size from which heads are computed on every core.
    let lesson = Lesson {
        inputs: Inputs::Projected {
            embeddings: generated(1, 64, 1024),
            w_q: generated(2, 1024, 4 * 8),
            w_k: generated(3, 1024, 2 * 8),
            w_v: generated(4, 1024, 2 * 8),
        },
        ..lesson(
            64,
            direct(
                DMatrix::zeros(1, 1),
                DMatrix::zeros(1, 1),
                DMatrix::zeros(1, 1),
            ),
            Heads { query: 4, kv: 2 },
            Some(generated(5, 4 * 8, 8).values.as_ref().clone()),
        )
    };
    let attention = Attention::compute(&lesson);
    let Inputs::Projected {
        embeddings,
        w_q,
        w_k,
        ..
    } = &lesson.inputs
    else {
        unreachable!()
    };
    for head in 0..4 {
        let q = &*embeddings.values * w_q.values.columns(head * 8, 8);
        let k = &*embeddings.values * w_k.values.columns(head / 2 * 8, 8);
        let scores = q * k.transpose();
        let ours = attention.matrix_in(MatrixName::Scores, head).unwrap();
        assert!((ours - scores).amax() < 1e-9, "head {head}");
    }
}

/// A generated lesson of `tokens` tokens, d_model `width`, `heads` heads of d_k = d_v = 64 over
/// `groups` K/V groups, W_o width × width.
fn generated_lesson_text(tokens: usize, width: usize, heads: usize, groups: usize) -> String {
    let names: Vec<String> = (0..tokens).map(|i| format!("\"t{i}\"")).collect();
    format!(
        "format = 2\ntitle = \"large\"\ntokens = [{}]\nheads = {heads}\nkv_heads = {groups}\n\
         embeddings = {{ random = \"normal\", seed = 1, shape = [{tokens}, {width}] }}\n\
         w_q = {{ random = \"normal\", seed = 2, shape = [{width}, {}] }}\n\
         w_k = {{ random = \"normal\", seed = 3, shape = [{width}, {}] }}\n\
         w_v = {{ random = \"normal\", seed = 4, shape = [{width}, {}] }}\n\
         w_o = {{ random = \"normal\", seed = 5, shape = [{}, {width}] }}\n\
         mask = \"causal\"\npositions = \"rope\"\n",
        names.join(", "),
        heads * 64,
        groups * 64,
        groups * 64,
        heads * 64,
    )
}

#[test]
fn a_lesson_of_sixteen_heads_over_a_1024_wide_model_loads_without_circuits() {
    // Eight tokens, not 256: the circuits alone (16 heads of 1024 × 1024 and 1024 × 1024, 32 Mi
    // numbers) are four times the heads' limit at any length, so a lesson that counted them
    // still fails to load, and a debug build computes it in a fraction of the time.
    let text = generated_lesson_text(8, 1024, 16, 4);
    let loaded = attn_engine::lesson::load_text("large", None, text)
        .unwrap_or_else(|error| panic!("{}", error.render(false)));
    let attention = Attention::compute(&loaded.lesson);
    assert_eq!(attention.heads(), Heads { query: 16, kv: 4 });
    assert_eq!(
        attention.matrix(MatrixName::Projected).unwrap().shape(),
        (8, 1024)
    );
    // d_model 1024 is past the widest whose circuits are taught (a 1024 × 1024 matrix a head).
    assert!(!attention.has(MatrixName::WQK));
}

#[test]
fn a_narrow_lesson_with_w_o_has_circuits() {
    let text = generated_lesson_text(4, 128, 2, 2);
    let loaded = attn_engine::lesson::load_text("narrow", None, text)
        .unwrap_or_else(|error| panic!("{}", error.render(false)));
    let attention = Attention::compute(&loaded.lesson);
    assert!(attention.has(MatrixName::WQK) && attention.has(MatrixName::WOV));
}

#[test]
fn dividing_by_the_square_root_of_every_heads_width_is_named() {
    // two-heads: d_model 5, two heads of d_k 2, so √(H·d_k) = 2 is neither √d_k nor √d_model.
    let builtin = attn_engine::lesson::BUILTIN
        .iter()
        .find(|lesson| lesson.name == "two-heads")
        .unwrap();
    let loaded = attn_engine::lesson::load_text("two-heads", None, builtin.text.to_string())
        .unwrap_or_else(|error| panic!("{}", error.render(false)));
    let attention = Attention::compute(&loaded.lesson);
    let fox = attention
        .tokens
        .iter()
        .position(|token| token == "fox")
        .unwrap();
    let score = attention.matrix_in(MatrixName::Scores, 1).unwrap()[(fox, fox)];
    let cell = Cell::new(MatrixName::Scaled, fox, fox).in_head(1);
    assert_eq!(
        slip_of(&attention, cell, score / 2.0),
        Some(SlipKind::ScaledByAllHeadsWidth)
    );
    assert_eq!(
        slip_of(&attention, cell, score / 5f64.sqrt()),
        Some(SlipKind::ScaledByModelWidth)
    );
}
