//! Practice mode: checking a predicted cell (right, wrong, the precision boundary, each common
//! slip), hints, scoring and the progress file. Expected numbers are worked out here by hand or
//! with a few lines of plain arithmetic, never with the code under test.
#![allow(
    clippy::approx_constant,
    reason = "answers are what a learner types: 0.7071 is a typed answer, not 1/√2"
)]

use attn_engine::attention::{Attention, Cell, MatrixName, Step};
use attn_engine::data::data_dir_in;
use attn_engine::lesson::{BUILTIN, load_text};
use attn_engine::practice::{
    Answer, CellAttempt, HintLevel, LessonScore, Outcome, ProgressStore, ProgressWarning, SlipKind,
    StepScore, Verdict, check, check_answer, hints, shown_name,
};

// ---------------------------------------------------------------------------------------------
// Lessons and an independent reference

fn builtin_text(name: &str) -> &'static str {
    BUILTIN
        .iter()
        .find(|lesson| lesson.name == name)
        .unwrap_or_else(|| panic!("no built-in lesson {name}"))
        .text
}

fn attention_of_text(name: &str, text: &str) -> Attention {
    let loaded = load_text(name, None, text.to_string())
        .unwrap_or_else(|error| panic!("{name}: {}", error.render(false)));
    Attention::compute(&loaded.lesson)
}

fn builtin(name: &str) -> Attention {
    attention_of_text(name, builtin_text(name))
}

/// cat-sleeps with a causal mask: a masked lesson whose queries and keys differ, so a swapped
/// query and key gives a different number.
fn causal_cat_sleeps() -> Attention {
    let text = builtin_text("cat-sleeps").replace("mask = \"none\"", "mask = \"causal\"");
    assert!(text.contains("mask = \"causal\""));
    // The printed figures are for the unmasked lesson; they do not matter here.
    let text = text.split("[expected]").next().unwrap().to_string();
    attention_of_text("causal-cat-sleeps", &text)
}

fn cell(attention: &Attention, matrix: MatrixName, row: &str, col: &str) -> Cell {
    let token = |label: &str| attention.tokens.iter().position(|t| t == label);
    let row = token(row).unwrap_or_else(|| panic!("no token {row}"));
    let col = if matrix.is_token_by_token() {
        token(col).unwrap_or_else(|| panic!("no token {col}"))
    } else {
        col.parse::<usize>().expect("a 1-based dimension") - 1
    };
    Cell::new(matrix, row, col)
}

fn verdict(attention: &Attention, cell: Cell, answer: f64, decimals: usize) -> Verdict {
    check(attention, cell, answer, decimals).expect("the cell exists")
}

fn assert_slip(
    attention: &Attention,
    cell: Cell,
    answer: f64,
    decimals: usize,
    kind: SlipKind,
    value: f64,
) {
    match verdict(attention, cell, answer, decimals) {
        Verdict::Wrong {
            slip: Some(slip), ..
        } => {
            assert_eq!(slip.kind, kind, "{cell:?} answered {answer}");
            assert!(
                (slip.value - value).abs() < 1e-9,
                "{kind:?} gives {}, worked out by hand {value}",
                slip.value
            );
            assert!(!slip.describe().is_empty());
        }
        other => panic!("{cell:?} answered {answer}: expected {kind:?}, got {other:?}"),
    }
}

fn assert_no_slip(attention: &Attention, cell: Cell, answer: f64, decimals: usize) {
    match verdict(attention, cell, answer, decimals) {
        Verdict::Wrong { slip: None, .. } => {}
        other => panic!("{cell:?} answered {answer}: expected wrong, no slip; got {other:?}"),
    }
}

type Matrix = Vec<Vec<f64>>;

fn matmul(a: &Matrix, b: &Matrix) -> Matrix {
    a.iter()
        .map(|row| {
            (0..b[0].len())
                .map(|c| row.iter().zip(b).map(|(x, b_row)| x * b_row[c]).sum())
                .collect()
        })
        .collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Textbook softmax, exp over sum; a -inf entry gets exactly 0.
fn softmax(row: &[f64]) -> Vec<f64> {
    let exps: Vec<f64> = row.iter().map(|x| x.exp()).collect();
    let sum: f64 = exps.iter().sum();
    exps.iter().map(|e| e / sum).collect()
}

/// The numbers of the cat-sleeps lesson file, typed in again.
fn cat_sleeps_numbers() -> (Matrix, Matrix, Matrix, Matrix) {
    let x = vec![
        vec![1.0, 0.0, 1.0, 0.0],
        vec![0.0, 1.0, 1.0, 1.0],
        vec![1.0, 1.0, 0.0, 1.0],
    ];
    let w_q = vec![
        vec![0.2, 0.4, 0.6, 0.8],
        vec![0.1, 0.3, 0.5, 0.7],
        vec![0.9, 0.8, 0.7, 0.6],
        vec![0.5, 0.4, 0.3, 0.2],
    ];
    let w_k = vec![
        vec![0.1, 0.3, 0.5, 0.7],
        vec![0.6, 0.4, 0.2, 0.1],
        vec![0.8, 0.9, 0.7, 0.6],
        vec![0.2, 0.1, 0.3, 0.4],
    ];
    let w_v = vec![
        vec![0.3, 0.5, 0.7, 0.9],
        vec![0.6, 0.4, 0.2, 0.1],
        vec![0.8, 0.9, 0.7, 0.6],
        vec![0.5, 0.4, 0.3, 0.2],
    ];
    (x, w_q, w_k, w_v)
}

/// a = 1/√2, the scaled score of the cat-sat-mat lessons.
fn a() -> f64 {
    1.0 / 2f64.sqrt()
}

// ---------------------------------------------------------------------------------------------
// Right and wrong

#[test]
fn a_right_answer_at_the_lessons_precision_is_right() {
    let attention = builtin("cat-sat-mat");
    let scaled = cell(&attention, MatrixName::Scaled, "cat", "sat");
    let verdict = verdict(&attention, scaled, 0.7071, 4);
    assert!(verdict.is_right(), "{verdict:?}");
    assert!((verdict.exact() - a()).abs() < 1e-12);
}

#[test]
fn a_wrong_answer_is_wrong_with_the_exact_value() {
    let attention = builtin("cat-sat-mat");
    let scores = cell(&attention, MatrixName::Scores, "cat", "sat");
    // q_cat · k_sat = (0 × 1) + (1 × 1) = 1.
    let verdict = verdict(&attention, scores, 2.0, 4);
    assert!(!verdict.is_right());
    assert_eq!(verdict.exact(), 1.0);
}

#[test]
fn within_half_a_unit_of_the_last_decimal_is_right_and_outside_is_wrong() {
    let attention = builtin("cat-sat-mat");
    let scaled = cell(&attention, MatrixName::Scaled, "cat", "sat");
    // Exact 0.70710678; half a unit of the 4th decimal is 0.00005.
    assert!(verdict(&attention, scaled, 0.70715, 4).is_right()); // 0.0000432 above
    assert!(verdict(&attention, scaled, 0.70706, 4).is_right()); // 0.0000468 below
    assert!(!verdict(&attention, scaled, 0.7072, 4).is_right()); // 0.0000932 above
    assert!(!verdict(&attention, scaled, 0.70705, 4).is_right()); // 0.0000568 below
}

/// The backward lesson's output[cat, 1] is 0.80443 × 1 + 0.19557 × 3 = 1.39114; from the
/// weights as the screen shows them, 0.8044 × 1 + 0.1956 × 3, a learner gets 1.3912.
#[test]
fn an_answer_worked_from_the_numbers_as_shown_is_right() {
    let attention = builtin("backward");
    let weights = |col: &str| {
        let value = attention
            .value(cell(&attention, MatrixName::Weights, "cat", col))
            .unwrap();
        format!("{value:.4}").parse::<f64>().unwrap()
    };
    let values = attention.matrix(MatrixName::V).unwrap();
    let from_shown = weights("cat") * values[(0, 0)] + weights("sat") * values[(1, 0)];
    assert_eq!(format!("{from_shown:.4}"), "1.3912");
    let output = cell(&attention, MatrixName::Output, "cat", "1");
    assert_eq!(format!("{:.4}", attention.value(output).unwrap()), "1.3911");
    assert!(verdict(&attention, output, 1.3912, 4).is_right());
    assert!(verdict(&attention, output, 1.3911, 4).is_right());
    // Neither the exact value nor the one from the shown numbers.
    assert!(!verdict(&attention, output, 1.3913, 4).is_right());
    assert!(!verdict(&attention, output, 1.3910, 4).is_right());
}

fn typed_verdict(attention: &Attention, cell: Cell, typed: &str, decimals: usize) -> Verdict {
    let answer = Answer::parse(typed).expect("a number");
    check_answer(attention, cell, &answer, decimals).expect("the cell exists")
}

#[test]
fn an_answer_right_to_the_decimals_typed_is_right_and_says_to_how_many() {
    let attention = builtin("cat-sat-mat");
    let scaled = cell(&attention, MatrixName::Scaled, "cat", "sat");
    // Exact 1/√2 = 0.70710678; the lesson shows 0.7071.
    assert_eq!(
        typed_verdict(&attention, scaled, "0.707", 4),
        Verdict::Right {
            exact: a(),
            to_decimals: Some(3)
        }
    );
    assert_eq!(
        typed_verdict(&attention, scaled, "0.71", 4),
        Verdict::Right {
            exact: a(),
            to_decimals: Some(2)
        }
    );
    assert_eq!(
        typed_verdict(&attention, scaled, "0.7071", 4),
        Verdict::Right {
            exact: a(),
            to_decimals: None
        }
    );
}

#[test]
fn an_answer_wrong_to_the_decimals_typed_is_wrong() {
    let attention = builtin("cat-sat-mat");
    let scaled = cell(&attention, MatrixName::Scaled, "cat", "sat");
    assert!(!typed_verdict(&attention, scaled, "0.708", 4).is_right());
    assert!(!typed_verdict(&attention, scaled, "0.70", 4).is_right());
}

#[test]
fn an_answer_too_rough_to_judge_on_its_own_is_held_to_the_lessons_precision() {
    let attention = builtin("cat-sat-mat");
    let scaled = cell(&attention, MatrixName::Scaled, "cat", "sat");
    // One decimal is too few, and a number in exponent form keeps the lesson's precision.
    assert!(!typed_verdict(&attention, scaled, "0.7", 4).is_right());
    assert!(!typed_verdict(&attention, scaled, "7.07e-1", 4).is_right());
    // Two decimals but no significant digit say nothing about a small number: 0.00 for a
    // cell of 0.0031 is wrong at the lesson's 4 decimals.
    let small = one_token_score(0.0124);
    let score = Cell::new(MatrixName::Scores, 0, 0);
    assert!((small.matrix(MatrixName::Scores).unwrap()[(0, 0)] - 0.0031).abs() < 1e-12);
    assert!(!typed_verdict(&small, score, "0.00", 4).is_right());
    assert!(typed_verdict(&small, score, "0.0031", 4).is_right());
}

/// One token whose score q·k = 0.5 × 0.25 is 0.125 exactly (and -0.125 with q = -0.5).
fn one_token_score(q: f64) -> Attention {
    let text = format!(
        "format = 1\ntitle = \"Boundary\"\ntokens = [\"t\"]\nq = [[{q}]]\nk = [[0.25]]\n\
         v = [[1]]\nscale = false\ndecimals = 2\n"
    );
    attention_of_text("boundary", &text)
}

#[test]
fn exactly_half_a_unit_away_is_right_both_ways() {
    // 0.125 at 2 decimals is a tie: 0.13 rounding half up, 0.12 rounding half to even.
    let attention = one_token_score(0.5);
    let score = Cell::new(MatrixName::Scores, 0, 0);
    assert_eq!(attention.matrix(MatrixName::Scores).unwrap()[(0, 0)], 0.125);
    assert!(verdict(&attention, score, 0.13, 2).is_right());
    assert!(verdict(&attention, score, 0.12, 2).is_right());
    assert!(!verdict(&attention, score, 0.1301, 2).is_right());
    assert!(!verdict(&attention, score, 0.1199, 2).is_right());
}

#[test]
fn exactly_half_a_unit_away_is_right_for_negative_numbers_and_zero_decimals() {
    let negative = one_token_score(-0.5);
    let score = Cell::new(MatrixName::Scores, 0, 0);
    assert!(verdict(&negative, score, -0.13, 2).is_right());
    assert!(verdict(&negative, score, -0.12, 2).is_right());
    assert!(!verdict(&negative, score, -0.14, 2).is_right());
    // 0.125 at 0 decimals: anything from -0.375 to 0.625 reads as 0.
    let positive = one_token_score(0.5);
    assert!(verdict(&positive, score, 0.0, 0).is_right());
    assert!(verdict(&positive, score, 0.625, 0).is_right());
    assert!(!verdict(&positive, score, 0.63, 0).is_right());
}

#[test]
fn a_hidden_score_is_right_only_as_minus_infinity() {
    let attention = builtin("causal-cat-sat-mat");
    let hidden = cell(&attention, MatrixName::Masked, "cat", "sat");
    assert!(verdict(&attention, hidden, f64::NEG_INFINITY, 4).is_right());
    assert!(!verdict(&attention, hidden, f64::INFINITY, 4).is_right());
    assert!(!verdict(&attention, hidden, -1e300, 4).is_right());
}

#[test]
fn not_a_number_is_never_right() {
    let attention = builtin("cat-sat-mat");
    let scores = cell(&attention, MatrixName::Scores, "cat", "sat");
    assert_no_slip(&attention, scores, f64::NAN, 4);
}

#[test]
fn a_cell_the_lesson_does_not_have_gives_no_verdict() {
    let attention = builtin("cat-sat-mat");
    assert!(check(&attention, Cell::new(MatrixName::Scores, 6, 0), 0.0, 4).is_none());
    // No mask in this lesson, so no masked matrix.
    assert!(check(&attention, Cell::new(MatrixName::Masked, 0, 0), 0.0, 4).is_none());
}

// ---------------------------------------------------------------------------------------------
// Forgot scaling

#[test]
fn forgot_scaling_on_a_scaled_score_is_the_raw_score() {
    let attention = builtin("cat-sat-mat");
    let scaled = cell(&attention, MatrixName::Scaled, "cat", "sat");
    assert_slip(&attention, scaled, 1.0, 4, SlipKind::ForgotScaling, 1.0);
}

#[test]
fn forgot_scaling_is_described_as_the_score_before_dividing() {
    let attention = builtin("cat-sat-mat");
    let scaled = cell(&attention, MatrixName::Scaled, "cat", "sat");
    let verdict = verdict(&attention, scaled, 1.0, 4);
    assert_eq!(
        verdict.slip().map(|slip| slip.describe()),
        Some("That is the score before dividing by √d_k: remember to scale.")
    );
}

#[test]
fn forgot_scaling_on_a_weight_is_the_softmax_of_the_raw_scores() {
    let attention = builtin("cat-sat-mat");
    let weight = cell(&attention, MatrixName::Weights, "cat", "sat");
    // Raw row of cat: [0, 1, 1, -1, 0, 0].
    let e = 1f64.exp();
    let unscaled = e / (3.0 + 2.0 * e + 1.0 / e); // 0.30874
    assert_slip(
        &attention,
        weight,
        0.3087,
        4,
        SlipKind::ForgotScaling,
        unscaled,
    );
}

#[test]
fn forgot_scaling_on_an_output_uses_the_unscaled_weights() {
    let attention = builtin("cat-sat-mat");
    let output = cell(&attention, MatrixName::Output, "cat", "1");
    // Unscaled weights of cat [1, e, e, 1/e, 1, 1] / S times V column 1 [1, 0, 1, 0, 1, -1].
    let e = 1f64.exp();
    let unscaled = (1.0 + e) / (3.0 + 2.0 * e + 1.0 / e); // 0.42232
    assert_slip(
        &attention,
        output,
        0.4223,
        4,
        SlipKind::ForgotScaling,
        unscaled,
    );
}

#[test]
fn forgot_scaling_on_a_masked_score_keeps_the_mask() {
    let attention = builtin("causal-cat-sat-mat");
    // sat sees cat: q_sat · k_cat = [1, 1] · [0, 1] = 1, masked after scaling = 0.7071.
    let visible = cell(&attention, MatrixName::Masked, "sat", "cat");
    assert_slip(&attention, visible, 1.0, 4, SlipKind::ForgotScaling, 1.0);
}

#[test]
fn forgot_scaling_on_a_masked_weight_is_the_softmax_of_the_visible_raw_scores() {
    let attention = builtin("causal-cat-sat-mat");
    let weight = cell(&attention, MatrixName::Weights, "cat", "cat");
    // cat sees The (raw 0) and itself (raw 1).
    let e = 1f64.exp();
    assert_slip(
        &attention,
        weight,
        0.7311,
        4,
        SlipKind::ForgotScaling,
        e / (1.0 + e),
    );
}

#[test]
fn forgot_scaling_on_a_masked_output() {
    let attention = builtin("causal-cat-sat-mat");
    let output = cell(&attention, MatrixName::Output, "cat", "1");
    // Unscaled weights [1/(1+e), e/(1+e)] on The [1, 0] and cat [0, 1].
    let e = 1f64.exp();
    assert_slip(
        &attention,
        output,
        0.2689,
        4,
        SlipKind::ForgotScaling,
        1.0 / (1.0 + e),
    );
}

// ---------------------------------------------------------------------------------------------
// Forgot the mask

#[test]
fn forgot_mask_on_a_hidden_score_is_the_score_before_masking() {
    let attention = builtin("causal-cat-sat-mat");
    let hidden = cell(&attention, MatrixName::Masked, "cat", "sat");
    assert_slip(&attention, hidden, 0.7071, 4, SlipKind::ForgotMask, a());
}

#[test]
fn forgot_mask_on_a_hidden_weight_is_the_unmasked_weight() {
    let attention = builtin("causal-cat-sat-mat");
    let hidden = cell(&attention, MatrixName::Weights, "cat", "sat");
    // Unmasked scaled row of cat: [0, a, a, -a, 0, 0].
    let unmasked = a().exp() / (3.0 + 2.0 * a().exp() + (-a()).exp()); // 0.268649
    assert_slip(
        &attention,
        hidden,
        0.2686,
        4,
        SlipKind::ForgotMask,
        unmasked,
    );
}

#[test]
fn forgot_mask_on_an_output_is_the_unmasked_output() {
    let attention = builtin("causal-cat-sat-mat");
    let output = cell(&attention, MatrixName::Output, "cat", "1");
    let unmasked = (1.0 + a().exp()) / (3.0 + 2.0 * a().exp() + (-a()).exp()); // 0.401112
    assert_slip(
        &attention,
        output,
        0.4011,
        4,
        SlipKind::ForgotMask,
        unmasked,
    );
}

// ---------------------------------------------------------------------------------------------
// Swapped query and key

/// Q and K of cat-sleeps, from the lesson's numbers.
fn cat_sleeps_q_k() -> (Matrix, Matrix) {
    let (x, w_q, w_k, _) = cat_sleeps_numbers();
    (matmul(&x, &w_q), matmul(&x, &w_k))
}

#[test]
fn swapped_query_and_key_on_a_score() {
    let attention = builtin("cat-sleeps");
    let (q, k) = cat_sleeps_q_k();
    let swapped = dot(&q[1], &k[0]); // q_cat · k_The
    assert!(
        (swapped - dot(&q[0], &k[1])).abs() > 0.01,
        "the swap matters"
    );
    let score = cell(&attention, MatrixName::Scores, "The", "cat");
    assert_slip(
        &attention,
        score,
        swapped,
        3,
        SlipKind::SwappedQueryKey,
        swapped,
    );
}

#[test]
fn swapped_query_and_key_on_a_scaled_score() {
    let attention = builtin("cat-sleeps");
    let (q, k) = cat_sleeps_q_k();
    let swapped = dot(&q[1], &k[0]) / 2.0; // ÷ √4
    let scaled = cell(&attention, MatrixName::Scaled, "The", "cat");
    assert_slip(
        &attention,
        scaled,
        swapped,
        3,
        SlipKind::SwappedQueryKey,
        swapped,
    );
}

#[test]
fn swapped_query_and_key_on_a_weight_goes_through_scaling_and_softmax() {
    let attention = builtin("cat-sleeps");
    let (q, k) = cat_sleeps_q_k();
    // Row The with every query and key swapped: q_j · k_The / 2.
    let row: Vec<f64> = (0..3).map(|j| dot(&q[j], &k[0]) / 2.0).collect();
    let swapped = softmax(&row)[1];
    let weight = cell(&attention, MatrixName::Weights, "The", "cat");
    assert_slip(
        &attention,
        weight,
        swapped,
        3,
        SlipKind::SwappedQueryKey,
        swapped,
    );
}

#[test]
fn swapped_query_and_key_on_a_masked_score_keeps_the_mask_in_place() {
    let attention = causal_cat_sleeps();
    let (q, k) = cat_sleeps_q_k();
    let swapped = dot(&q[0], &k[1]) / 2.0; // q_The · k_cat where q_cat · k_The belongs
    let visible = cell(&attention, MatrixName::Masked, "cat", "The");
    assert_slip(
        &attention,
        visible,
        swapped,
        3,
        SlipKind::SwappedQueryKey,
        swapped,
    );
}

#[test]
fn swapped_query_and_key_on_a_masked_weight() {
    let attention = causal_cat_sleeps();
    let (q, k) = cat_sleeps_q_k();
    // cat sees The and itself; swapped: q_The · k_cat and q_cat · k_cat.
    let row = [dot(&q[0], &k[1]) / 2.0, dot(&q[1], &k[1]) / 2.0];
    let swapped = softmax(&row)[0];
    let weight = cell(&attention, MatrixName::Weights, "cat", "The");
    assert_slip(
        &attention,
        weight,
        swapped,
        3,
        SlipKind::SwappedQueryKey,
        swapped,
    );
}

#[test]
fn swapped_query_and_key_with_q_k_v_given_directly() {
    let attention = builtin("random-qkv");
    let q: Vec<f64> = attention
        .matrix(MatrixName::Q)
        .unwrap()
        .row(1)
        .iter()
        .copied()
        .collect();
    let k: Vec<f64> = attention
        .matrix(MatrixName::K)
        .unwrap()
        .row(0)
        .iter()
        .copied()
        .collect();
    let swapped = dot(&q, &k); // q_word2 · k_word1
    let score = cell(&attention, MatrixName::Scores, "word1", "word2");
    assert_slip(
        &attention,
        score,
        swapped,
        3,
        SlipKind::SwappedQueryKey,
        swapped,
    );
}

// ---------------------------------------------------------------------------------------------
// exp without normalising, the wrong axis

#[test]
fn exp_not_normalised_is_the_exponential_of_the_scaled_score() {
    let attention = builtin("cat-sat-mat");
    let weight = cell(&attention, MatrixName::Weights, "cat", "sat");
    assert_slip(
        &attention,
        weight,
        2.0281,
        4,
        SlipKind::ExpNotNormalised,
        a().exp(),
    );
}

#[test]
fn exp_not_normalised_also_with_the_row_maximum_subtracted() {
    let attention = builtin("cat-sat-mat");
    // cat's row maximum is a; The's scaled score is 0, so exp(0 - a) = 0.4931.
    let weight = cell(&attention, MatrixName::Weights, "cat", "The");
    assert_slip(
        &attention,
        weight,
        0.4931,
        4,
        SlipKind::ExpNotNormalised,
        (-a()).exp(),
    );
}

#[test]
fn exp_not_normalised_on_a_masked_lesson() {
    let attention = builtin("causal-cat-sat-mat");
    let weight = cell(&attention, MatrixName::Weights, "cat", "cat");
    assert_slip(
        &attention,
        weight,
        2.0281,
        4,
        SlipKind::ExpNotNormalised,
        a().exp(),
    );
}

#[test]
fn wrong_axis_is_the_softmax_down_the_column() {
    let attention = builtin("cat-sat-mat");
    let weight = cell(&attention, MatrixName::Weights, "cat", "sat");
    // Column sat of the scaled scores: k_sat = [1, 1] against every query, ÷ √2:
    // [a, a, 2a, -a, a, -a].
    let column = softmax(&[a(), a(), 2.0 * a(), -a(), a(), -a()]);
    assert_slip(
        &attention,
        weight,
        0.1813,
        4,
        SlipKind::WrongAxis,
        column[1],
    );
}

#[test]
fn wrong_axis_on_a_masked_lesson_leaves_hidden_queries_out() {
    let attention = builtin("causal-cat-sat-mat");
    let weight = cell(&attention, MatrixName::Weights, "cat", "cat");
    // Column cat of the masked scores: The cannot see cat (-inf); the others: [a, a, -a, 0, 0].
    let column = softmax(&[f64::NEG_INFINITY, a(), a(), -a(), 0.0, 0.0]);
    assert_slip(
        &attention,
        weight,
        0.3097,
        4,
        SlipKind::WrongAxis,
        column[1],
    );
}

// ---------------------------------------------------------------------------------------------
// A row where a column belongs

#[test]
fn v_row_not_column_on_an_output() {
    let attention = builtin("identity-2x2");
    let output = cell(&attention, MatrixName::Output, "x1", "1");
    // Weights of x1: [w, 1 - w], w = e^a / (e^a + 1); V row 1 is [1, 2], V column 1 is [1, 3].
    let w = a().exp() / (a().exp() + 1.0);
    let row_instead = w * 1.0 + (1.0 - w) * 2.0; // 1.3302
    assert_slip(
        &attention,
        output,
        1.3302,
        4,
        SlipKind::VRowNotColumn,
        row_instead,
    );
}

#[test]
fn w_row_not_column_on_a_projection() {
    let attention = builtin("cat-sleeps");
    let query = cell(&attention, MatrixName::Q, "The", "1");
    // x_The = [1, 0, 1, 0]; W_q row 1 = [0.2, 0.4, 0.6, 0.8] gives 0.2 + 0.6 = 0.8, where
    // column 1 = [0.2, 0.1, 0.9, 0.5] gives 1.1.
    assert_slip(&attention, query, 0.8, 3, SlipKind::WRowNotColumn, 0.8);
}

#[test]
fn w_row_not_column_on_values_too() {
    let attention = builtin("cat-sleeps");
    let (x, _, _, w_v) = cat_sleeps_numbers();
    let value = cell(&attention, MatrixName::V, "cat", "2");
    let row_instead = dot(&x[1], &w_v[1]); // x_cat · W_v row 2 = 0.4 + 0.2 + 0.1 = 0.7
    assert_slip(
        &attention,
        value,
        row_instead,
        3,
        SlipKind::WRowNotColumn,
        row_instead,
    );
}

// ---------------------------------------------------------------------------------------------
// When no slip is named

#[test]
fn an_unrelated_wrong_number_names_no_slip() {
    let attention = builtin("cat-sat-mat");
    let weight = cell(&attention, MatrixName::Weights, "cat", "sat");
    assert_no_slip(&attention, weight, 0.5, 4);
    let output = cell(&attention, MatrixName::Output, "cat", "2");
    assert_no_slip(&attention, output, 0.9, 4);
}

#[test]
fn a_slip_that_would_pass_as_right_is_not_named() {
    let attention = builtin("identity-2x2");
    let scaled = cell(&attention, MatrixName::Scaled, "x1", "x1");
    // At 0 decimals the unscaled score 1 reads like the exact 0.7071 (both within 0.5), so
    // 1.3, which is 0.59 from the exact value but 0.3 from the unscaled one, names nothing.
    assert_no_slip(&attention, scaled, 1.3, 0);
}

#[test]
fn a_given_q_names_no_slip() {
    let attention = builtin("random-qkv");
    let query = cell(&attention, MatrixName::Q, "word1", "1");
    let given = attention.matrix(MatrixName::Q).unwrap()[(0, 0)];
    assert!(verdict(&attention, query, given, 3).is_right());
    assert_no_slip(&attention, query, given + 1.0, 3);
}

/// Two tokens given directly; row b hides every key.
fn fully_masked_lesson() -> Attention {
    attention_of_text(
        "fully-masked",
        "format = 1\ntitle = \"Row b sees nothing\"\ntokens = [\"a\", \"b\"]\n\
         q = [[1, 0], [0, 1]]\nk = [[1, 0], [0, 1]]\nv = [[2, 0], [0, 2]]\n\
         scale = false\nmask = [[0, -inf], [-inf, -inf]]\ndecimals = 4\n",
    )
}

#[test]
fn a_fully_masked_row_has_weight_zero_and_names_the_forgotten_mask() {
    let attention = fully_masked_lesson();
    let weight = Cell::new(MatrixName::Weights, 1, 0);
    assert!(verdict(&attention, weight, 0.0, 4).is_right());
    // Unmasked row b: scores [0, 1], so softmax gives 1 / (1 + e) to a.
    let e = 1f64.exp();
    assert_slip(
        &attention,
        weight,
        0.2689,
        4,
        SlipKind::ForgotMask,
        1.0 / (1.0 + e),
    );
}

/// Two tokens given directly, d_k = 4 (÷ 2), built so that q_a · k_b = 1 and q_b · k_a = 2:
/// forgetting the scale and swapping query and key give the same numbers for row a.
fn tie_lesson() -> Attention {
    attention_of_text(
        "tie",
        "format = 1\ntitle = \"Two slips, one number\"\ntokens = [\"a\", \"b\"]\n\
         q = [[1, 0, 0, 0], [0, 1, 0, 0]]\nk = [[0, 2, 0, 0], [1, 0, 0, 0]]\n\
         v = [[1, 0], [0, 1]]\nscale = true\ndecimals = 3\n",
    )
}

#[test]
fn when_two_slips_give_the_same_number_the_nearest_step_wins() {
    let attention = tie_lesson();
    // scaled[a, b] = 1 / 2. Unscaled: 1. Swapped: q_b · k_a / 2 = 2 / 2 = 1. Scaling is this
    // step's own operation; the swap was made a step earlier.
    let scaled = Cell::new(MatrixName::Scaled, 0, 1);
    assert_slip(&attention, scaled, 1.0, 3, SlipKind::ForgotScaling, 1.0);
    // weights[a, b]: unscaled row [0, 1] and swapped row [0, 2] / 2 are the same, softmax
    // e / (1 + e) = 0.731 for both; forgetting the scale is the later of the two slips.
    let weight = Cell::new(MatrixName::Weights, 0, 1);
    let e = 1f64.exp();
    assert_slip(
        &attention,
        weight,
        0.731,
        3,
        SlipKind::ForgotScaling,
        e / (1.0 + e),
    );
}

// ---------------------------------------------------------------------------------------------
// Hints

#[test]
fn hint_levels_for_a_score_go_from_the_first_product_to_the_answer() {
    let attention = builtin("cat-sat-mat");
    let score = cell(&attention, MatrixName::Scores, "cat", "sat");
    let hints = hints(&attention, score, 4).expect("the cell exists");
    // q_cat = [0, 1], k_sat = [1, 1].
    assert_eq!(
        hints.get(HintLevel::FirstStep),
        "q_cat · k_sat starts with 0 × 1 (2 products in all)"
    );
    assert_eq!(
        hints.get(HintLevel::Working),
        "scores[cat, sat] = q_cat · k_sat = (0 × 1) + (1 × 1)"
    );
    assert_eq!(
        hints.get(HintLevel::Answer),
        "scores[cat, sat] = q_cat · k_sat = (0 × 1) + (1 × 1) = 1"
    );
}

#[test]
fn hint_levels_for_a_weight_hold_back_the_result_until_the_last() {
    let attention = builtin("cat-sat-mat");
    let weight = cell(&attention, MatrixName::Weights, "cat", "sat");
    let hints = hints(&attention, weight, 4).expect("the cell exists");
    assert_eq!(
        hints.first_step,
        "weights[cat, sat] = exp(0.7071) / Σ exp(scaled[cat, :])"
    );
    // e^a = 2.0281; the row sums to 3 + 2e^a + e^-a = 7.5493.
    assert_eq!(
        hints.working,
        "weights[cat, sat] = exp(0.7071) / Σ exp(scaled[cat, :]) = 2.0281 / 7.5493"
    );
    assert!(
        hints.answer.ends_with("= 2.0281 / 7.5493 = 0.2686"),
        "{}",
        hints.answer
    );
}

#[test]
fn hint_levels_for_a_scaled_score() {
    let attention = builtin("cat-sat-mat");
    let scaled = cell(&attention, MatrixName::Scaled, "cat", "sat");
    let hints = hints(&attention, scaled, 4).expect("the cell exists");
    assert_eq!(
        hints.first_step,
        "scaled[cat, sat] = scores[cat, sat] / √d_k"
    );
    assert_eq!(
        hints.working,
        "scaled[cat, sat] = scores[cat, sat] / √d_k = 1 / √2 = 1 / 1.4142"
    );
    assert!(hints.answer.ends_with("= 0.7071"), "{}", hints.answer);
}

#[test]
fn hints_for_a_fully_masked_row_point_at_the_hidden_keys_without_the_answer() {
    let attention = fully_masked_lesson();
    let weight = Cell::new(MatrixName::Weights, 1, 0);
    let hints = hints(&attention, weight, 4).expect("the cell exists");
    assert!(
        hints.first_step.contains("masked[b, :]"),
        "{}",
        hints.first_step
    );
    assert!(hints.working.contains("-inf"), "{}", hints.working);
    assert!(!hints.working.contains('0'), "{}", hints.working);
    assert!(
        hints.answer.starts_with("weights[b, a] = 0"),
        "{}",
        hints.answer
    );
}

#[test]
fn hint_levels_count_up_and_stop_at_the_answer() {
    let first = HintLevel::next(None);
    let second = HintLevel::next(Some(first));
    let third = HintLevel::next(Some(second));
    assert_eq!(
        [first, second, third, HintLevel::next(Some(third))],
        [
            HintLevel::FirstStep,
            HintLevel::Working,
            HintLevel::Answer,
            HintLevel::Answer
        ]
    );
    assert_eq!(third.number(), 3);
}

// ---------------------------------------------------------------------------------------------
// Scoring

const RIGHT: Verdict = Verdict::Right {
    exact: 1.0,
    to_decimals: None,
};
const WRONG: Verdict = Verdict::Wrong {
    exact: 1.0,
    slip: None,
};

#[test]
fn right_at_once_is_first_try() {
    let mut attempt = CellAttempt::new();
    assert_eq!(attempt.answer(&RIGHT), Some(Outcome::FirstTry));
}

#[test]
fn wrong_then_right_without_hints_is_on_retry() {
    let mut attempt = CellAttempt::new();
    assert_eq!(attempt.answer(&WRONG), None);
    assert_eq!(attempt.answer(&WRONG), None);
    assert_eq!(attempt.answer(&RIGHT), Some(Outcome::OnRetry));
    assert_eq!(attempt.wrong_answers(), 2);
}

#[test]
fn right_after_a_hint_is_with_hints() {
    let mut attempt = CellAttempt::new();
    assert_eq!(attempt.answer(&WRONG), None);
    assert_eq!(attempt.hint(HintLevel::Working), None);
    assert_eq!(attempt.hint(HintLevel::FirstStep), None);
    assert_eq!(attempt.hint_level(), Some(HintLevel::Working));
    assert_eq!(attempt.answer(&RIGHT), Some(Outcome::WithHints));
}

#[test]
fn the_answer_hint_or_giving_up_is_revealed() {
    let mut asked = CellAttempt::new();
    assert_eq!(asked.hint(HintLevel::Answer), Some(Outcome::Revealed));
    // Typing the answer once it is shown changes nothing.
    assert_eq!(asked.answer(&RIGHT), None);
    assert_eq!(asked.outcome(), Some(Outcome::Revealed));
    let mut gave_up = CellAttempt::new();
    gave_up.answer(&WRONG);
    assert_eq!(gave_up.reveal(), Outcome::Revealed);
}

#[test]
fn an_ended_cell_keeps_its_outcome() {
    let mut attempt = CellAttempt::new();
    attempt.answer(&RIGHT);
    assert_eq!(attempt.reveal(), Outcome::FirstTry);
    assert_eq!(attempt.hint(HintLevel::Answer), None);
    assert_eq!(attempt.outcome(), Some(Outcome::FirstTry));
}

fn outcomes(first_try: usize, on_retry: usize, with_hints: usize, revealed: usize) -> StepScore {
    std::iter::repeat_n(Outcome::FirstTry, first_try)
        .chain(std::iter::repeat_n(Outcome::OnRetry, on_retry))
        .chain(std::iter::repeat_n(Outcome::WithHints, with_hints))
        .chain(std::iter::repeat_n(Outcome::Revealed, revealed))
        .collect()
}

#[test]
fn a_step_counts_its_cells_by_outcome() {
    let score = outcomes(5, 0, 2, 2);
    assert_eq!(
        (
            score.first_try,
            score.on_retry,
            score.with_hints,
            score.revealed
        ),
        (5, 0, 2, 2)
    );
    assert_eq!(score.cells(), 9);
    assert_eq!(
        score.to_string(),
        "5/9 first try · 2 with hints · 2 revealed"
    );
}

#[test]
fn a_step_summary_leaves_out_what_did_not_happen() {
    assert_eq!(
        outcomes(3, 1, 0, 0).to_string(),
        "3/4 first try · 1 on retry"
    );
    assert_eq!(outcomes(0, 0, 0, 0).to_string(), "0/0 first try");
}

#[test]
fn a_lesson_totals_its_steps_and_a_step_practised_again_replaces_its_score() {
    let mut lesson = LessonScore::default();
    lesson.record(Step::Scores, outcomes(9, 0, 0, 0));
    lesson.record(Step::Softmax, outcomes(1, 1, 1, 1));
    lesson.record(Step::Scores, outcomes(4, 0, 3, 2));
    assert_eq!(lesson.total(), outcomes(5, 1, 4, 3));
    assert_eq!(
        lesson.to_string(),
        "5/13 first try · 1 on retry · 4 with hints · 3 revealed"
    );
}

// ---------------------------------------------------------------------------------------------
// Progress

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("a scratch folder")
}

fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the folder is readable")
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn progress_lives_in_the_xdg_data_folder_or_under_home() {
    use std::ffi::OsStr;
    let xdg = data_dir_in(Some(OsStr::new("/data")), Some(OsStr::new("/home/ada")));
    assert_eq!(xdg, std::path::Path::new("/data/attn-tutor"));
    let home = data_dir_in(Some(OsStr::new("")), Some(OsStr::new("/home/ada")));
    assert_eq!(
        home,
        std::path::Path::new("/home/ada/.local/share/attn-tutor")
    );
    assert_eq!(
        data_dir_in(None, None),
        std::path::Path::new("./attn-tutor")
    );
}

#[test]
fn a_missing_progress_file_is_empty_progress_without_a_warning() {
    let dir = scratch();
    let (store, warning) = ProgressStore::open(&dir.path().join("progress.toml"));
    assert_eq!(warning, None);
    assert_eq!(store.lessons().count(), 0);
    assert!(files_in(dir.path()).is_empty(), "opening writes nothing");
}

#[test]
fn progress_survives_a_save_and_a_reopen() {
    let dir = scratch();
    let path = dir.path().join("nested/folders/progress.toml");
    let (mut store, _) = ProgressStore::open(&path);
    store.record("cat-sat-mat", Step::Scores, outcomes(30, 2, 3, 1));
    store.record("cat-sat-mat", Step::Scaling, outcomes(36, 0, 0, 0));
    store.visit("cat-sat-mat", Step::Softmax);
    store.record("identity-2x2", Step::Output, outcomes(3, 0, 0, 1));
    store.save().expect("saved");

    let (reopened, warning) = ProgressStore::open(&path);
    assert_eq!(warning, None);
    let cat = reopened.lesson("cat-sat-mat").expect("kept");
    assert_eq!(cat.last_step, Some(Step::Softmax));
    assert_eq!(
        cat.steps_done().collect::<Vec<_>>(),
        [Step::Scores, Step::Scaling]
    );
    assert_eq!(cat.score.step(Step::Scores), Some(&outcomes(30, 2, 3, 1)));
    assert_eq!(
        cat.summary(5),
        "2/5 steps · 66/72 first try · 2 on retry · 3 with hints · 1 revealed"
    );
    let identity = reopened.lesson("identity-2x2").expect("kept");
    assert_eq!(identity.last_step, Some(Step::Output));
    assert!(identity.is_done(Step::Output));
    assert_eq!(reopened, store);
}

#[test]
fn the_progress_file_is_plain_toml_keyed_by_lesson_and_step() {
    let dir = scratch();
    let path = dir.path().join("progress.toml");
    let (mut store, _) = ProgressStore::open(&path);
    store.record("cat-sat-mat", Step::Softmax, outcomes(2, 0, 1, 0));
    store.save().expect("saved");
    let text = std::fs::read_to_string(&path).unwrap();
    let value: toml::Table = text.parse().expect("valid TOML");
    assert_eq!(value["format"].as_integer(), Some(1));
    let lesson = &value["lessons"]["cat-sat-mat"];
    assert_eq!(lesson["last_step"].as_str(), Some("softmax"));
    assert_eq!(
        lesson["steps"]["softmax"]["first_try"].as_integer(),
        Some(2)
    );
    assert_eq!(
        lesson["steps"]["softmax"]["with_hints"].as_integer(),
        Some(1)
    );
}

#[test]
fn saving_is_atomic_and_leaves_no_temporary_files() {
    let dir = scratch();
    let path = dir.path().join("progress.toml");
    let (mut store, _) = ProgressStore::open(&path);
    store.record("cat-sleeps", Step::Scores, outcomes(9, 0, 0, 0));
    store.save().expect("first save");
    store.record("cat-sleeps", Step::Scaling, outcomes(9, 0, 0, 0));
    store.save().expect("second save replaces the file");
    assert_eq!(files_in(dir.path()), ["progress.toml"]);
}

#[test]
fn reset_forgets_one_lesson() {
    let dir = scratch();
    let path = dir.path().join("progress.toml");
    let (mut store, _) = ProgressStore::open(&path);
    store.record("cat-sleeps", Step::Scores, outcomes(9, 0, 0, 0));
    store.record("cat-sat-mat", Step::Scores, outcomes(36, 0, 0, 0));
    store.save().unwrap();
    store.reset(Some("cat-sleeps"));
    store.save().unwrap();
    let (reopened, _) = ProgressStore::open(&path);
    assert!(reopened.lesson("cat-sleeps").is_none());
    assert!(reopened.lesson("cat-sat-mat").is_some());
}

#[test]
fn reset_of_everything_forgets_every_lesson() {
    let dir = scratch();
    let path = dir.path().join("progress.toml");
    let (mut store, _) = ProgressStore::open(&path);
    store.record("cat-sleeps", Step::Scores, outcomes(9, 0, 0, 0));
    store.record("cat-sat-mat", Step::Scores, outcomes(36, 0, 0, 0));
    store.save().unwrap();
    store.reset(None);
    store.save().unwrap();
    let (reopened, warning) = ProgressStore::open(&path);
    assert_eq!(warning, None);
    assert_eq!(reopened.lessons().count(), 0);
}

#[test]
fn in_memory_progress_writes_no_file() {
    let mut store = ProgressStore::in_memory();
    store.record("cat-sleeps", Step::Scores, outcomes(9, 0, 0, 0));
    assert!(store.save().is_ok());
    assert_eq!(store.path(), None);
    assert!(store.lesson("cat-sleeps").is_some(), "kept for the session");
}

/// Opens a damaged progress file and checks it was set aside: the warning names both files,
/// the old contents are under the new name, and progress starts empty and saves again.
fn assert_set_aside(dir: &tempfile::TempDir, path: &std::path::Path, reason_part: &str) {
    let (mut store, warning) = ProgressStore::open(path);
    let Some(ProgressWarning::SetAside {
        path: named,
        moved_to,
        reason,
    }) = warning.clone()
    else {
        panic!("expected the file set aside, got {warning:?}");
    };
    assert_eq!(named, path);
    assert!(reason.contains(reason_part), "reason: {reason}");
    let file_name = moved_to.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        file_name.starts_with("progress.toml.damaged-"),
        "{file_name}"
    );
    assert_eq!(moved_to.parent(), path.parent());
    assert!(moved_to.exists() && !path.exists());
    let message = warning.unwrap().to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains(&file_name), "{message}");
    assert_eq!(store.lessons().count(), 0);
    store.record("cat-sleeps", Step::Scores, outcomes(1, 0, 0, 0));
    store.save().expect("a fresh file is written in its place");
    assert_eq!(files_in(dir.path()), ["progress.toml", file_name.as_str()]);
}

#[test]
fn a_progress_file_that_is_not_toml_is_set_aside() {
    let dir = scratch();
    let path = dir.path().join("progress.toml");
    std::fs::write(&path, "format = 1\n[lessons.\"cat\"\nlast_step = ").unwrap();
    assert_set_aside(&dir, &path, "line 2");
    let kept = dir
        .path()
        .read_dir()
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|p| p != &path)
        .unwrap();
    assert!(
        std::fs::read_to_string(kept)
            .unwrap()
            .starts_with("format = 1\n[lessons.")
    );
}

#[test]
fn a_progress_file_of_the_wrong_shape_is_set_aside() {
    let dir = scratch();
    let path = dir.path().join("progress.toml");
    std::fs::write(&path, "format = 1\n[lessons.cat]\nsteps = 3\n").unwrap();
    assert_set_aside(&dir, &path, "line 3");
}

#[test]
fn a_progress_file_naming_an_unknown_step_is_set_aside() {
    let dir = scratch();
    let path = dir.path().join("progress.toml");
    std::fs::write(
        &path,
        "format = 1\n[lessons.cat.steps.attention]\nfirst_try = 1\non_retry = 0\n\
         with_hints = 0\nrevealed = 0\n",
    )
    .unwrap();
    assert_set_aside(&dir, &path, "attention");
}

#[test]
fn a_progress_file_from_another_format_is_set_aside() {
    let dir = scratch();
    let path = dir.path().join("progress.toml");
    std::fs::write(&path, "format = 2\n").unwrap();
    assert_set_aside(&dir, &path, "format 2");
}

#[test]
fn a_progress_file_that_is_not_utf8_is_set_aside() {
    let dir = scratch();
    let path = dir.path().join("progress.toml");
    std::fs::write(&path, b"format = 1\n# \xff\xfe\n").unwrap();
    assert_set_aside(&dir, &path, "UTF-8");
}

#[test]
fn a_folder_in_place_of_the_progress_file_is_set_aside() {
    let dir = scratch();
    let path = dir.path().join("progress.toml");
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("inside"), "kept").unwrap();
    assert_set_aside(&dir, &path, "folder");
}

#[test]
fn lesson_names_from_the_file_are_shown_with_escapes() {
    let dir = scratch();
    let path = dir.path().join("progress.toml");
    let hostile = "red\u{1b}[31m\u{202e}name";
    let (mut store, _) = ProgressStore::open(&path);
    store.record(hostile, Step::Scores, outcomes(1, 0, 0, 0));
    store.save().unwrap();
    let (reopened, warning) = ProgressStore::open(&path);
    assert_eq!(warning, None);
    let (name, _) = reopened.lessons().next().expect("one lesson");
    assert_eq!(name, hostile, "kept exactly, to match the lesson");
    let shown = shown_name(name);
    assert_eq!(shown, "red\\u{001b}[31m\\u{202e}name");
    assert!(!shown.chars().any(char::is_control));
}

#[test]
fn a_second_damaged_file_does_not_replace_the_first_copy() {
    let dir = scratch();
    let path = dir.path().join("progress.toml");
    std::fs::write(&path, "first damaged").unwrap();
    let (_, first) = ProgressStore::open(&path);
    std::fs::write(&path, "second damaged").unwrap();
    let (_, second) = ProgressStore::open(&path);
    let moved = |warning: Option<ProgressWarning>| match warning {
        Some(ProgressWarning::SetAside { moved_to, .. }) => moved_to,
        other => panic!("expected the file set aside, got {other:?}"),
    };
    let (first, second) = (moved(first), moved(second));
    assert_ne!(first, second);
    assert_eq!(std::fs::read_to_string(first).unwrap(), "first damaged");
    assert_eq!(std::fs::read_to_string(second).unwrap(), "second damaged");
}

// Issue 29, tried as a new user: under grouped-query attention, scores made with another K/V
// group's keys are named on every step they carry to, the Softmax's weights above all, not only
// on the Scores step.

#[test]
fn another_groups_keys_are_named_on_the_steps_after_the_scores() {
    let attention = builtin("gqa");
    // Head 3 on screen (2 from 0) reads group 2; group 1's keys are head 1's.
    let head = 2;
    let snow = 3;
    let q = attention.matrix_in(MatrixName::Q, head).unwrap();
    let group_one_keys = attention.matrix_in(MatrixName::K, 0).unwrap();
    let d_k = q.ncols() as f64;
    // snow is the last word: the causal mask hides none of its keys.
    let scaled: Vec<f64> = (0..4)
        .map(|key| {
            (0..q.ncols())
                .map(|c| q[(snow, c)] * group_one_keys[(key, c)])
                .sum::<f64>()
                / d_k.sqrt()
        })
        .collect();
    let total: f64 = scaled.iter().map(|s| s.exp()).sum();
    let rain = 1;
    let weight = scaled[rain].exp() / total;
    assert_eq!(
        format!("{weight:.4}"),
        "0.0502",
        "the number the learner typed"
    );
    for (matrix, slipped) in [
        (MatrixName::Scaled, scaled[rain]),
        (MatrixName::Masked, scaled[rain]),
        (MatrixName::Weights, weight),
    ] {
        let checked = Cell::new(matrix, snow, rain).in_head(head);
        match verdict(&attention, checked, slipped, 4) {
            Verdict::Wrong {
                slip: Some(slip), ..
            } => {
                assert_eq!(slip.kind, SlipKind::WrongGroup, "{matrix:?}");
                assert!(
                    slip.describe().contains("another group's keys"),
                    "{matrix:?}: {}",
                    slip.describe()
                );
            }
            other => panic!("{matrix:?}: {slipped} gives {other:?}"),
        }
    }
}
