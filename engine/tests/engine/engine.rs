//! The attention engine against hand-computed values and every source document's numbers.

use attn_engine::attention::{Attention, Cell, MatrixName, Rule};
use attn_engine::lesson::{Lesson, load};

fn lesson(name: &str) -> Lesson {
    load(name)
        .unwrap_or_else(|e| panic!("{name}: {}", e.render(false)))
        .lesson
}

fn assert_close(got: f64, want: f64, tolerance: f64, what: &str) {
    assert!(
        (got - want).abs() <= tolerance,
        "{what}: got {got}, want {want} (±{tolerance})"
    );
}

fn assert_matrix(attention: &Attention, name: MatrixName, want: &[&[f64]], tolerance: f64) {
    let matrix = attention.matrix(name).expect("matrix present");
    assert_eq!(matrix.nrows(), want.len(), "{name} rows");
    for (r, row) in want.iter().enumerate() {
        for (c, value) in row.iter().enumerate() {
            assert_close(
                matrix[(r, c)],
                *value,
                tolerance,
                &format!("{name}[{r},{c}]"),
            );
        }
    }
}

#[test]
fn queries_are_embeddings_times_w_q_by_hand() {
    // "The" = [1, 0, 1, 0], so its query is row 1 + row 3 of W_q.
    let attention = Attention::compute(&lesson("cat-sleeps"));
    for (col, want) in [1.1, 1.2, 1.3, 1.4].into_iter().enumerate() {
        assert_close(
            attention.matrix(MatrixName::Q).unwrap()[(0, col)],
            want,
            1e-12,
            "Q[The]",
        );
    }
}

#[test]
fn cat_sleeps_matches_the_documents_weights_and_output() {
    let attention = Attention::compute(&lesson("cat-sleeps"));
    assert_matrix(
        &attention,
        MatrixName::Weights,
        &[
            &[0.324, 0.467, 0.209],
            &[0.305, 0.515, 0.180],
            &[0.346, 0.432, 0.222],
        ],
        0.0005,
    );
    assert_matrix(
        &attention,
        MatrixName::Output,
        &[
            &[1.536, 1.519, 1.265, 1.157],
            &[1.566, 1.536, 1.261, 1.137],
            &[1.512, 1.507, 1.269, 1.174],
        ],
        0.0005,
    );
}

#[test]
fn cat_sleeps_divides_by_the_square_root_of_four() {
    let attention = Attention::compute(&lesson("cat-sleeps"));
    assert_eq!(attention.scale_divisor, 2.0);
}

#[test]
fn cat_sat_mat_scores_for_cat_are_the_documents_table_3() {
    let attention = Attention::compute(&lesson("cat-sat-mat"));
    let row: Vec<f64> = attention
        .matrix(MatrixName::Scores)
        .unwrap()
        .row(1)
        .iter()
        .copied()
        .collect();
    assert_eq!(row, vec![0.0, 1.0, 1.0, -1.0, 0.0, 0.0]);
}

#[test]
fn cat_sat_mat_weights_for_cat_are_exact_where_the_document_rounded() {
    let attention = Attention::compute(&lesson("cat-sat-mat"));
    let e = (1.0f64 / 2f64.sqrt()).exp();
    let sum = 3.0 + 2.0 * e + 1.0 / e;
    let want = [
        1.0 / sum,
        e / sum,
        e / sum,
        (1.0 / e) / sum,
        1.0 / sum,
        1.0 / sum,
    ];
    for (col, value) in want.iter().enumerate() {
        assert_close(attention.weights()[(1, col)], *value, 1e-12, "weights[cat]");
    }
    // The document prints 0.2687; the exact value is 0.26865 (rounds to 0.2686).
    assert_close(
        attention.weights()[(1, 1)],
        0.268649,
        1e-6,
        "weights[cat, cat]",
    );
}

#[test]
fn cat_sat_mat_output_for_cat_is_0_4011_and_0_4720() {
    let attention = Attention::compute(&lesson("cat-sat-mat"));
    assert_close(
        attention.matrix(MatrixName::Output).unwrap()[(1, 0)],
        0.401112,
        1e-6,
        "output[cat, 1]",
    );
    assert_close(
        attention.matrix(MatrixName::Output).unwrap()[(1, 1)],
        0.471986,
        1e-6,
        "output[cat, 2]",
    );
}

#[test]
fn identity_2x2_weights_are_a_sigmoid_of_one_over_root_two() {
    let attention = Attention::compute(&lesson("identity-2x2"));
    let w = 1.0 / (1.0 + (-(0.5f64.sqrt())).exp());
    assert_matrix(
        &attention,
        MatrixName::Weights,
        &[&[w, 1.0 - w], &[1.0 - w, w]],
        1e-12,
    );
    assert_matrix(
        &attention,
        MatrixName::Output,
        &[
            &[w + 3.0 * (1.0 - w), 2.0 * w + 4.0 * (1.0 - w)],
            &[(1.0 - w) + 3.0 * w, 2.0 * (1.0 - w) + 4.0 * w],
        ],
        1e-12,
    );
}

#[test]
fn causal_mask_gives_no_weight_to_later_tokens() {
    let attention = Attention::compute(&lesson("causal-cat-sat-mat"));
    let weights = attention.weights();
    for row in 0..6 {
        for col in row + 1..6 {
            assert_eq!(weights[(row, col)], 0.0, "weights[{row},{col}]");
        }
    }
    assert_eq!(weights[(0, 0)], 1.0, "the first token can only see itself");
}

#[test]
fn lessons_with_direct_q_k_v_have_no_embeddings() {
    let attention = Attention::compute(&lesson("random-qkv"));
    assert!(!attention.has(MatrixName::Embeddings) && !attention.has(MatrixName::WQ));
    assert_eq!(attention.matrix(MatrixName::Q).unwrap().shape(), (3, 4));
}

#[test]
fn scores_cell_explains_itself_as_a_dot_product() {
    let attention = Attention::compute(&lesson("cat-sat-mat"));
    let derivation = attention
        .derive(Cell::new(MatrixName::Scores, 1, 2))
        .unwrap();
    assert_eq!(
        derivation.explain(&attention, 4),
        "scores[cat, sat] = q_cat · k_sat = (0 × 1) + (1 × 1) = 1"
    );
}

#[test]
fn scores_cell_operands_are_the_query_row_and_the_key_row() {
    let attention = Attention::compute(&lesson("cat-sat-mat"));
    let operands = attention
        .derive(Cell::new(MatrixName::Scores, 1, 2))
        .unwrap()
        .operands();
    assert_eq!(
        operands,
        vec![
            Cell::new(MatrixName::Q, 1, 0),
            Cell::new(MatrixName::K, 2, 0),
            Cell::new(MatrixName::Q, 1, 1),
            Cell::new(MatrixName::K, 2, 1),
        ]
    );
}

#[test]
fn query_cell_operands_are_a_row_of_x_and_a_column_of_w_q() {
    let attention = Attention::compute(&lesson("cat-sleeps"));
    let operands = attention
        .derive(Cell::new(MatrixName::Q, 2, 1))
        .unwrap()
        .operands();
    let from_x: Vec<Cell> = (0..4)
        .map(|m| Cell::new(MatrixName::Embeddings, 2, m))
        .collect();
    let from_w: Vec<Cell> = (0..4).map(|m| Cell::new(MatrixName::WQ, m, 1)).collect();
    assert_eq!(
        operands.iter().step_by(2).copied().collect::<Vec<_>>(),
        from_x
    );
    assert_eq!(
        operands
            .iter()
            .skip(1)
            .step_by(2)
            .copied()
            .collect::<Vec<_>>(),
        from_w
    );
}

#[test]
fn output_cell_operands_are_a_row_of_weights_and_a_column_of_v() {
    let attention = Attention::compute(&lesson("cat-sat-mat"));
    let operands = attention
        .derive(Cell::new(MatrixName::Output, 1, 0))
        .unwrap()
        .operands();
    assert_eq!(operands.len(), 12);
    assert_eq!(operands[0], Cell::new(MatrixName::Weights, 1, 0));
    assert_eq!(operands[1], Cell::new(MatrixName::V, 0, 0));
    assert_eq!(operands[11], Cell::new(MatrixName::V, 5, 0));
}

#[test]
fn softmax_cell_explains_exp_over_the_row_sum() {
    let attention = Attention::compute(&lesson("cat-sat-mat"));
    let derivation = attention
        .derive(Cell::new(MatrixName::Weights, 1, 2))
        .unwrap();
    assert_eq!(
        derivation.explain(&attention, 4),
        "weights[cat, sat] = exp(0.7071) / Σ exp(scaled[cat, :]) = 2.0281 / 7.5493 = 0.2686"
    );
}

#[test]
fn scaling_cell_explains_the_division_by_root_d_k() {
    let attention = Attention::compute(&lesson("cat-sat-mat"));
    let derivation = attention
        .derive(Cell::new(MatrixName::Scaled, 1, 2))
        .unwrap();
    assert_eq!(
        derivation.explain(&attention, 4),
        "scaled[cat, sat] = scores[cat, sat] / √d_k = 1 / √2 = 1 / 1.4142 = 0.7071"
    );
}

#[test]
fn masked_cell_explains_that_it_is_hidden() {
    let attention = Attention::compute(&lesson("causal-cat-sat-mat"));
    let text = attention
        .derive(Cell::new(MatrixName::Masked, 0, 1))
        .unwrap()
        .explain(&attention, 4);
    assert!(
        text.starts_with(
            "masked[The, cat] = scaled[The, cat] + mask[The, cat] = 0 + (-inf) = -inf"
        ),
        "{text}"
    );
}

#[test]
fn input_cells_say_they_are_numbers_of_the_lesson() {
    let attention = Attention::compute(&lesson("cat-sleeps"));
    let derivation = attention
        .derive(Cell::new(MatrixName::Embeddings, 0, 0))
        .unwrap();
    assert!(matches!(derivation.rule, Rule::Input(_)));
}

#[test]
fn cells_outside_a_matrix_have_no_derivation() {
    let attention = Attention::compute(&lesson("cat-sleeps"));
    assert!(
        attention
            .derive(Cell::new(MatrixName::Scores, 3, 0))
            .is_none()
    );
    assert!(
        attention
            .derive(Cell::new(MatrixName::Masked, 0, 0))
            .is_none(),
        "no mask in this lesson"
    );
}

/// `rope_pairing = "half"` with `rope_theta = 100`, by hand. Row 1 (position p = 1) of Q is
/// (2, 3, 5, 7), d_k = 4: pair 0 is columns 0 and 2, turned by φ₀ = 1 · 100^(−0/4) = 1; pair 1
/// is columns 1 and 3, turned by φ₁ = 1 · 100^(−2/4) = 0.1 (Llama's rotate-half:
/// q'[i] = q[i] cos φᵢ − q[i + 2] sin φᵢ, q'[i + 2] = q[i + 2] cos φᵢ + q[i] sin φᵢ).
#[test]
fn a_rotate_half_cell_is_its_pair_i_and_i_plus_half_turned_by_theta() {
    let lesson = attn_engine::lesson::load_text(
        "half",
        None,
        "format = 2\ntitle = \"half\"\ntokens = [\"a\", \"b\"]\n\
         q = [[1, 1, 1, 1], [2, 3, 5, 7]]\nk = [[1, 0, 0, 0], [0, 1, 0, 0]]\nv = [[1], [2]]\n\
         positions = \"rope\"\nrope_pairing = \"half\"\nrope_theta = 100\n"
            .to_string(),
    )
    .unwrap_or_else(|error| panic!("{}", error.render(false)))
    .lesson;
    let attention = Attention::compute(&lesson);
    let q_rope = attention.matrix(MatrixName::QRope).unwrap();
    let (c1, s1) = (1f64.cos(), 1f64.sin());
    let (c01, s01) = (0.1f64.cos(), 0.1f64.sin());
    let by_hand = [
        2.0 * c1 - 5.0 * s1,
        3.0 * c01 - 7.0 * s01,
        5.0 * c1 + 2.0 * s1,
        7.0 * c01 + 3.0 * s01,
    ];
    for (col, want) in by_hand.into_iter().enumerate() {
        assert_close(q_rope[(1, col)], want, 1e-15, &format!("q_rope[1, {col}]"));
    }
    // Position 0 is not turned.
    assert_eq!(q_rope.row(0).iter().copied().collect::<Vec<_>>(), [1.0; 4]);
    // The working of cell [1, 3] reads its pair, columns 1 and 3, and its angle, base 100.
    let derivation = attention
        .derive(Cell::new(MatrixName::QRope, 1, 3))
        .unwrap();
    let Rule::Rotate(rotate) = derivation.rule else {
        panic!("{:?}", derivation.rule);
    };
    assert_eq!((rotate.first.cell.col, rotate.second.cell.col), (1, 3));
    assert_eq!((rotate.pair, rotate.lower), (1, false));
    assert_close(rotate.angle, 0.1, 1e-15, "φ₁");
    // Its columns as the table counts them, from 1: Q[b, 2] and Q[b, 4].
    let text = derivation.explain(&attention, 4);
    assert!(
        text.starts_with("Q_rope[b, 4] = Q[b, 2]·sin φ + Q[b, 4]·cos φ = ")
            && text.contains("φ = p · 100^(−2i/d_k) = 1 · 100^(−2·1/4) = 0.1 rad")
            && text.contains(
                "this is pair i = 1: columns 2 and 4, d_k/2 = 2 apart (rotate-half, as \
                 Llama-family models pair them)"
            ),
        "{text}"
    );
}
