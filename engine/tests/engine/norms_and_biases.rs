//! The norm before the projections (`norm = "layer"` / `"rms"`, with `norm_gain`, `norm_bias`,
//! `norm_epsilon`) and the projections' biases (`b_q`, `b_k`, `b_v`, `b_o`): cells worked out
//! by hand, the workings' words, saving and reading back, and every bad value refused naming
//! its key. Expected numbers come from plain arithmetic written here, not from the engine.

use attn_engine::attention::{Attention, Cell, MatrixName};
use attn_engine::lesson::{Lesson, LoadError, NormKind, lesson_to_toml, load_text};
use attn_engine::practice::{SlipKind, check};

/// Three tokens of d_model 4, W's 4 × 3. Row c = [1, 1, 3, 1]: mean 1.5, variance (0.25 +
/// 0.25 + 2.25 + 0.25) / 4 = 0.75, mean of squares (1 + 1 + 9 + 1) / 4 = 3.
const BASE: &str = "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\", \"c\"]\n\
    embeddings = [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 3, 1]]\n\
    w_q = [[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]]\n\
    w_k = [[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]]\n\
    w_v = [[1, 1, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]]\n";

const GAIN: &str = "norm_gain = [1, 2, 0.5, 1]\n";
const BIAS: &str = "norm_bias = [0, 0.1, 0, -1]\n";

fn lesson(text: &str) -> Lesson {
    load_text("lesson", None, text.to_string())
        .unwrap_or_else(|error| panic!("{}\n{text}", error.render(false)))
        .lesson
}

fn errors(text: &str) -> Vec<String> {
    match load_text("lesson", None, text.to_string()) {
        Ok(_) => Vec::new(),
        Err(LoadError::Invalid { diagnostics, .. }) => diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.is_error())
            .map(|diagnostic| diagnostic.message.clone())
            .collect(),
        Err(other) => vec![other.render(false)],
    }
}

fn value(attention: &Attention, matrix: MatrixName, row: usize, col: usize) -> f64 {
    attention
        .value(Cell::new(matrix, row, col))
        .unwrap_or_else(|| panic!("no {matrix:?}[{row}, {col}]"))
}

fn working(attention: &Attention, matrix: MatrixName, row: usize, col: usize) -> String {
    attention
        .derive(Cell::new(matrix, row, col))
        .unwrap_or_else(|| panic!("no working for {matrix:?}[{row}, {col}]"))
        .explain(attention, 3)
}

fn close(found: f64, wanted: f64) {
    assert!((found - wanted).abs() < 1e-9, "{found} is not {wanted}");
}

#[test]
fn layer_norm_takes_off_the_mean_divides_by_the_population_deviation_then_applies_gain_and_bias() {
    let attention = Attention::compute(&lesson(&format!("{BASE}norm = \"layer\"\n{GAIN}{BIAS}")));
    let deviation = (0.75f64 + 1e-5).sqrt();
    // X̂[c, 2] = (1 − 1.5) / √0.75001 · 2 + 0.1; X̂[c, 3] = (3 − 1.5) / √0.75001 · 0.5 + 0.
    close(
        value(&attention, MatrixName::XNorm, 2, 1),
        -0.5 / deviation * 2.0 + 0.1,
    );
    close(
        value(&attention, MatrixName::XNorm, 2, 2),
        1.5 / deviation * 0.5,
    );
    close(
        value(&attention, MatrixName::XNorm, 2, 3),
        -0.5 / deviation - 1.0,
    );
    // The projections read X̂: Q[c, 1] = X̂[c] · W_q[:, 1] = X̂[c, 1] + X̂[c, 2].
    let q = -0.5 / deviation + (-0.5 / deviation * 2.0 + 0.1);
    close(value(&attention, MatrixName::Q, 2, 0), q);
    assert_eq!(attention.plan.projected_input(), Some(MatrixName::XNorm));
    // `x` in [expected] is still X, not what the projections read.
    assert_eq!(
        attention.figure_source(MatrixName::X),
        MatrixName::Embeddings
    );
}

#[test]
fn rms_norm_divides_by_the_root_mean_square_with_no_mean_taken_off() {
    let attention = Attention::compute(&lesson(&format!(
        "{BASE}norm = \"rms\"\n{GAIN}norm_epsilon = 1e-6\n"
    )));
    let root = (3.0f64 + 1e-6).sqrt();
    close(value(&attention, MatrixName::XNorm, 2, 0), 1.0 / root);
    close(value(&attention, MatrixName::XNorm, 2, 1), 1.0 / root * 2.0);
    close(value(&attention, MatrixName::XNorm, 2, 2), 3.0 / root * 0.5);
    // Row a = [1, 0, 1, 0]: mean of squares 0.5.
    close(
        value(&attention, MatrixName::XNorm, 0, 2),
        1.0 / (0.5f64 + 1e-6).sqrt() * 0.5,
    );
}

#[test]
fn a_norm_without_gain_or_bias_has_gain_one_and_bias_zero() {
    let attention = Attention::compute(&lesson(&format!("{BASE}norm = \"layer\"\n")));
    close(
        value(&attention, MatrixName::XNorm, 2, 2),
        1.5 / (0.75f64 + 1e-5).sqrt(),
    );
    let words = working(&attention, MatrixName::XNorm, 2, 2);
    assert!(
        words.contains("γ[3] = 1 and β[3] = 0 are column 3's gain and bias"),
        "{words}"
    );
    // A lesson made in code (an import) may leave them out altogether: the same numbers.
    let mut bare = lesson(&format!("{BASE}norm = \"layer\"\n"));
    let norm = bare.norm.as_mut().unwrap();
    (norm.gain, norm.bias) = (None, None);
    let attention = Attention::compute(&bare);
    close(
        value(&attention, MatrixName::XNorm, 2, 2),
        1.5 / (0.75f64 + 1e-5).sqrt(),
    );
    let words = working(&attention, MatrixName::XNorm, 2, 2);
    assert!(
        words.contains("γ[3] = 1 (the lesson gives none)"),
        "{words}"
    );
    assert!(
        words.contains("β[3] = 0 (the lesson gives none)"),
        "{words}"
    );
}

#[test]
fn the_norm_working_says_the_row_s_mean_variance_epsilon_gain_and_bias() {
    let attention = Attention::compute(&lesson(&format!("{BASE}norm = \"layer\"\n{GAIN}{BIAS}")));
    let words = working(&attention, MatrixName::XNorm, 2, 1);
    for said in [
        "over the 4 numbers of ",
        "Σ = 6, mean = Σ / 4 = 1.5;",
        "var = Σ (x − mean)² / 4 = 3 / 4 = 0.75 (divided by n, as nn.LayerNorm does, not n − 1)",
        "ε = 0.00001",
        "γ[2] = 2 and β[2] = 0.1 are column 2's gain and bias",
        "= (1 − 1.5) / √(0.75 + 0.00001) · 2 + 0.1 = -0.5 / 0.866 · 2 + 0.1 = -1.055",
        " − mean) / √(var + ε) · γ[2] + β[2]",
        "-1.055",
    ] {
        assert!(words.contains(said), "{said:?} not in\n{words}");
    }
    let attention = Attention::compute(&lesson(&format!("{BASE}norm = \"rms\"\n{GAIN}")));
    let words = working(&attention, MatrixName::XNorm, 2, 2);
    for said in [
        "/ √(mean(x²) + ε) · γ[3]",
        "Σ x² = 12, mean(x²) = Σ x² / 4 = 3",
        "no mean is taken off",
        "γ[3] = 0.5 is column 3's gain",
    ] {
        assert!(words.contains(said), "{said:?} not in\n{words}");
    }
    assert!(!words.contains("β"), "{words}");
}

#[test]
fn a_row_of_768_numbers_is_summed_up_in_the_working_not_listed() {
    let text = "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\n\
        embeddings = { random = \"normal\", seed = 1, shape = [2, 768] }\n\
        w_q = { random = \"normal\", seed = 2, shape = [768, 64] }\n\
        w_k = { random = \"normal\", seed = 3, shape = [768, 64] }\n\
        w_v = { random = \"normal\", seed = 4, shape = [768, 64] }\nnorm = \"layer\"\n";
    let attention = Attention::compute(&lesson(text));
    let words = working(&attention, MatrixName::XNorm, 1, 700);
    assert!(words.contains("over the 768 numbers of "), "{words}");
    // Four short lines and the note: no line lists the row.
    assert!(words.len() < 1200, "{} characters:\n{words}", words.len());
}

#[test]
fn a_bias_is_added_to_its_projection_and_shown_in_the_working() {
    let text = format!("{BASE}b_q = [0.5, -1, 0.25]\nb_v = [0, 0, 2]\n");
    let attention = Attention::compute(&lesson(&text));
    // Q[c, 1] = [1, 1, 3, 1] · W_q[:, 1] + 0.5 = 1 + 1 + 0.5; Q[a, 2] = 0 + -1.
    close(value(&attention, MatrixName::Q, 2, 0), 2.5);
    close(value(&attention, MatrixName::Q, 0, 1), -1.0);
    // K has no bias: K[c, 3] = row c · W_k[:, 3] = 1·1 + 1·0 + 3·0 + 1·0.
    close(value(&attention, MatrixName::K, 2, 2), 1.0);
    // V[b, 3] = [0, 2, 0, 2] · W_v[:, 3] + 2 = 2 + 2.
    close(value(&attention, MatrixName::V, 1, 2), 4.0);
    let words = working(&attention, MatrixName::Q, 2, 1);
    assert!(words.contains("+ b_q[2]"), "{words}");
    assert!(words.contains("(1 × 1) + (-1) = 0"), "{words}");
    assert!(!working(&attention, MatrixName::K, 2, 1).contains("b_k"));
}

#[test]
fn the_output_bias_is_added_after_w_o_and_shown_in_its_working() {
    let text = format!("{BASE}w_o = [[1, 0], [0, 1], [1, 1]]\nb_o = [10, -20]\n");
    let with = Attention::compute(&lesson(&text));
    let without = Attention::compute(&lesson(&format!("{BASE}w_o = [[1, 0], [0, 1], [1, 1]]\n")));
    for row in 0..3 {
        close(
            value(&with, MatrixName::Projected, row, 0),
            value(&without, MatrixName::Projected, row, 0) + 10.0,
        );
        close(
            value(&with, MatrixName::Projected, row, 1),
            value(&without, MatrixName::Projected, row, 1) - 20.0,
        );
    }
    let words = working(&with, MatrixName::Projected, 0, 1);
    assert!(words.contains("+ b_o[2]"), "{words}");
    assert!(words.contains(" + (-20) = "), "{words}");
}

#[test]
fn leaving_the_bias_out_or_dividing_by_n_minus_1_is_named_as_the_slip() {
    let text = format!("{BASE}norm = \"layer\"\n{GAIN}{BIAS}b_q = [0.5, -1, 0.25]\n");
    let attention = Attention::compute(&lesson(&text));
    // Without b_q[1] = 0.5.
    let q = Cell::new(MatrixName::Q, 2, 0);
    let slip = value(&attention, MatrixName::Q, 2, 0) - 0.5;
    let verdict = check(&attention, q, slip, 3).unwrap();
    assert_eq!(
        verdict.slip().map(|slip| slip.kind),
        Some(SlipKind::ForgotBias),
        "{verdict:?}"
    );
    // Row c's variance over n − 1 = 3: 1, so X̂[c, 3] = 1.5 / √1.00001 · 0.5.
    let normed = Cell::new(MatrixName::XNorm, 2, 2);
    let verdict = check(&attention, normed, 1.5 / (1.0f64 + 1e-5).sqrt() * 0.5, 3).unwrap();
    assert_eq!(
        verdict.slip().map(|slip| slip.kind),
        Some(SlipKind::SampleVariance),
        "{verdict:?}"
    );
}

#[test]
fn a_lesson_with_a_norm_and_biases_is_saved_and_read_back_the_same() {
    let text = format!(
        "{BASE}w_o = [[1, 0], [0, 1], [1, 1]]\nnorm = \"layer\"\n{GAIN}{BIAS}norm_epsilon = 1e-6\n\
         b_q = [0.5, -1, 0.25]\nb_k = [1, 2, 3]\nb_v = [0, 0, 2]\nb_o = [10, -20]\n"
    );
    let original = lesson(&text);
    assert_eq!(
        original.norm.as_ref().map(|norm| norm.kind),
        Some(NormKind::Layer)
    );
    let saved = lesson_to_toml(&original);
    for line in [
        "norm = \"layer\"\n",
        "norm_gain = [1, 2, 0.5, 1]\n",
        "norm_bias = [0, 0.1, 0, -1]\n",
        "norm_epsilon = 0.000001\n",
        "b_q = [0.5, -1, 0.25]\n",
        "b_o = [10, -20]\n",
    ] {
        assert!(saved.contains(line), "{line:?} not in\n{saved}");
    }
    assert_eq!(lesson(&saved), original, "{saved}");
    // γ of all 1 and β of all 0, as a lesson without them has, are not written.
    let plain = lesson(&format!("{BASE}norm = \"layer\"\n"));
    let saved = lesson_to_toml(&plain);
    assert!(
        !saved.contains("norm_gain") && !saved.contains("norm_bias"),
        "{saved}"
    );
    assert_eq!(lesson(&saved), plain);
    // RMSNorm with its default ε: no ε written, and read back the same.
    let rms = lesson(&format!("{BASE}norm = \"rms\"\n{GAIN}"));
    let saved = lesson_to_toml(&rms);
    assert!(
        saved.contains("norm = \"rms\"\n") && !saved.contains("norm_epsilon"),
        "{saved}"
    );
    assert_eq!(lesson(&saved), rms);
}

#[test]
fn every_bad_norm_or_bias_value_is_refused_naming_its_key() {
    let given = "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nq = [[1, 0], [0, 1]]\n\
                 k = [[1, 0], [0, 1]]\nv = [[1, 0], [0, 1]]\n";
    let grad = "grad_output = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]\n";
    let cases: Vec<(String, &str)> = vec![
        (
            format!("{BASE}norm = \"batch\"\n"),
            "unknown norm \"batch\"",
        ),
        (
            format!("{BASE}norm = true\n"),
            "`norm` must be \"layer\" or \"rms\", found a boolean",
        ),
        (
            format!("{BASE}norm = \"layer\"\nnorm_gain = [1, 2, 3]\n"),
            "`norm_gain` has 3 numbers; it needs 4",
        ),
        (
            format!("{BASE}norm = \"layer\"\nnorm_bias = [[1, 2, 3, 4]]\n"),
            "`norm_bias` is a vector: one flat array of numbers",
        ),
        (
            format!("{BASE}norm = \"layer\"\nnorm_gain = [1, \"x\", 1, 1]\n"),
            "`norm_gain` number 2: expected a number, found a string",
        ),
        (
            format!("{BASE}norm = \"layer\"\nnorm_gain = [1, 1, 1e7, 1]\n"),
            "`norm_gain` number 3: 1e7 is out of range",
        ),
        (
            format!("{BASE}norm = \"rms\"\nnorm_bias = [0, 0, 0, 0]\n"),
            "`norm_bias` is LayerNorm's: RMSNorm has no bias",
        ),
        (
            format!("{BASE}norm = \"layer\"\nnorm_epsilon = 0\n"),
            "`norm_epsilon` must be above 0 and at most 1, found 0",
        ),
        (
            format!("{BASE}norm = \"layer\"\nnorm_epsilon = \"small\"\n"),
            "`norm_epsilon` must be a number above 0, found a string",
        ),
        (
            format!("{BASE}norm_gain = [1, 1, 1, 1]\n"),
            "`norm_gain` belongs to a norm, and this lesson has no `norm`",
        ),
        (
            format!("{given}norm = \"rms\"\n"),
            "a norm needs embeddings",
        ),
        (
            format!("{BASE}norm = \"layer\"\n{grad}"),
            "the backward pass through a norm is not supported yet",
        ),
        (
            format!("{BASE}b_q = [1, 2]\n"),
            "`b_q` has 2 numbers; it needs 3",
        ),
        (
            format!("{BASE}b_k = 1\n"),
            "`b_k` must be a flat array of numbers, found an integer",
        ),
        (
            format!("{BASE}b_v = [1, 2, 3, 4]\n"),
            "`b_v` has 4 numbers; it needs 3",
        ),
        (
            format!("{BASE}b_o = [1, 2]\n"),
            "`b_o` is added to concat·W_o, and this lesson has no `w_o`",
        ),
        (
            format!("{BASE}w_o = [[1, 0], [0, 1], [1, 1]]\nb_o = [1, 2, 3]\n"),
            "`b_o` has 3 numbers; it needs 2",
        ),
        (
            format!("{given}b_q = [1, 2]\n"),
            "`b_q` is added to a projection, and this lesson gives Q, K and V",
        ),
        (
            format!(
                "{}norm = \"layer\"\n",
                BASE.replace("format = 2", "format = 1")
            ),
            "`norm` needs `format = 2`",
        ),
    ];
    for (text, wanted) in cases {
        let found = errors(&text);
        assert!(
            found.iter().any(|error| error == wanted),
            "{wanted:?} not among {found:#?} for\n{text}"
        );
    }
}

#[test]
fn the_widths_wanted_are_said_with_several_heads() {
    // Two heads of d_k 1 in one K/V group: b_q has H·d_k = 2 numbers, b_k G·d_k = 1.
    let text = "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nheads = 2\nkv_heads = 1\n\
        embeddings = [[1, 0], [0, 1]]\nw_q = [[1, 0], [0, 1]]\nw_k = [[1], [0]]\n\
        w_v = [[1], [1]]\nw_o = [[1], [1]]\nb_q = [1, 2, 3]\nb_k = [1, 2]\n";
    let Err(LoadError::Invalid { diagnostics, .. }) = load_text("lesson", None, text.into()) else {
        panic!("taken");
    };
    let helps: Vec<String> = diagnostics
        .iter()
        .filter_map(|diagnostic| diagnostic.help.clone())
        .collect();
    assert!(
        helps
            .iter()
            .any(|help| help.contains("2 heads × d_k 1 = 2 numbers")),
        "{helps:#?}"
    );
    assert!(
        helps.iter().any(
            |help| help.contains("1 numbers, one per column of W_k (d_k)") || help.contains("d_k")
        ),
        "{helps:#?}"
    );
    // With the right widths each head adds its own block of b_q.
    let right = text
        .replace("b_q = [1, 2, 3]", "b_q = [1, 2]")
        .replace("b_k = [1, 2]", "b_k = [5]");
    let attention = Attention::compute(&lesson(&right));
    // Head 2's Q[a, 1] = [1, 0] · W_q[:, 2] + b_q[2] = 0 + 2.
    close(
        attention
            .value(Cell::new(MatrixName::Q, 0, 0).in_head(1))
            .unwrap(),
        2.0,
    );
}

#[test]
fn generation_with_a_norm_and_biases_gives_the_whole_pass_s_rows() {
    let text = format!(
        "{BASE}w_o = [[1, 0], [0, 1], [1, 1]]\nmask = \"causal\"\ndecode = true\nnorm = \"rms\"\n\
         {GAIN}b_q = [0.5, -1, 0.25]\nb_k = [1, 2, 3]\nb_v = [0, 0, 2]\nb_o = [10, -20]\n"
    );
    let attention = Attention::compute(&lesson(&text));
    for token in 0..3 {
        let check = attention.decode_check(token).unwrap();
        assert!(
            check.agrees && check.largest_difference <= 1e-12,
            "{token}: {check:?}"
        );
    }
    // The new token's query has its bias: q_c[1] = X̂[c] · W_q[:, 1] + 0.5, as Q[c, 1].
    let q = attention
        .matrix_at(MatrixName::QNew, 0, 2)
        .map(|row| row[(0, 0)])
        .unwrap();
    close(q, value(&attention, MatrixName::Q, 2, 0));
    let words = attention
        .derive(Cell::new(MatrixName::QNew, 0, 0).at_token(2))
        .unwrap()
        .explain(&attention, 3);
    assert!(words.contains("+ b_q[1]"), "{words}");
}

#[test]
fn in_cross_attention_only_the_target_is_normalised() {
    let text = "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nsource_tokens = [\"x\", \"y\"]\n\
        embeddings = [[1, 0], [0, 3]]\nsource_embeddings = [[2, 0], [1, 5]]\n\
        w_q = [[1, 0], [0, 1]]\nw_k = [[1, 0], [0, 1]]\nw_v = [[1, 0], [0, 1]]\nnorm = \"layer\"\n";
    let attention = Attention::compute(&lesson(text));
    // Q reads X̂: row a = [1, 0] has mean 0.5 and variance 0.25, so X̂[a, 1] = 0.5 / √0.25001.
    close(
        value(&attention, MatrixName::Q, 0, 0),
        0.5 / (0.25f64 + 1e-5).sqrt(),
    );
    // K and V read the source as it is: K[y, 2] = 5.
    close(value(&attention, MatrixName::K, 1, 1), 5.0);
    assert_eq!(
        attention.plan.projected_source(),
        Some(MatrixName::SourceEmbeddings)
    );
}

#[test]
fn a_lesson_that_gives_q_k_v_may_still_add_the_output_bias() {
    let given = "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\nq = [[1, 0], [0, 1]]\n\
                 k = [[1, 0], [0, 1]]\nv = [[1, 2], [3, 4]]\nw_o = [[1, 0], [0, 1]]\n";
    let with = Attention::compute(&lesson(&format!("{given}b_o = [0.5, -0.5]\n")));
    let without = Attention::compute(&lesson(given));
    close(
        value(&with, MatrixName::Projected, 1, 1),
        value(&without, MatrixName::Projected, 1, 1) - 0.5,
    );
}

#[test]
fn rms_norm_worked_out_as_layer_norm_is_named_as_the_slip() {
    let attention = Attention::compute(&lesson(&format!("{BASE}norm = \"rms\"\n{GAIN}")));
    // Row c's mean 1.5 taken off and its variance 0.75 used: (1 − 1.5) / √0.75001 · 1, where
    // RMSNorm gives 1 / √3.00001 = 0.577.
    let answer = -0.5 / (0.75f64 + 1e-5).sqrt();
    let verdict = check(&attention, Cell::new(MatrixName::XNorm, 2, 0), answer, 3).unwrap();
    assert_eq!(
        verdict.slip().map(|slip| slip.kind),
        Some(SlipKind::MeanTakenOff),
        "{verdict:?}"
    );
}

#[test]
fn the_first_hint_of_a_projection_with_a_bias_counts_its_products_then_the_bias() {
    let text = format!("{BASE}b_q = [0.5, -1, 0.25]\n");
    let attention = Attention::compute(&lesson(&text));
    let hints =
        attn_engine::practice::hints(&attention, Cell::new(MatrixName::Q, 2, 0), 3).unwrap();
    let first = hints.get(attn_engine::practice::HintLevel::FirstStep);
    assert!(
        first.contains("(4 products in all, then a bias)"),
        "{first}"
    );
}

#[test]
fn each_bias_s_gradient_is_its_matrix_s_gradient_summed_over_the_tokens() {
    let text = format!(
        "{BASE}w_o = [[1, 0], [0, 1], [1, 1]]\nb_q = [0.5, -1, 0.25]\nb_k = [0, 1, 0]\n\
         b_v = [0, 0, 2]\nb_o = [10, -20]\ngrad_output = [[1, 0], [0, -1], [0.5, 2]]\n"
    );
    let attention = Attention::compute(&lesson(&text));
    // Against the loss itself, L = Σ output ⊙ grad_output, with one bias number nudged by ±h
    // in a copy of the lesson: a central difference, exact to h² (1e-8) times L's third
    // derivative, far below the tolerance.
    let h = 1e-4;
    for (bias, gradient, width) in [
        (MatrixName::BQ, MatrixName::DBQ, 3),
        (MatrixName::BK, MatrixName::DBK, 3),
        (MatrixName::BV, MatrixName::DBV, 3),
        (MatrixName::BO, MatrixName::DBO, 2),
    ] {
        for col in 0..width {
            let loss_at = |step: f64| {
                let mut nudged = lesson(&text);
                let input = nudged.input_mut(bias).expect("the lesson has the bias");
                std::sync::Arc::make_mut(&mut input.values)[(0, col)] += step;
                Attention::compute(&nudged).loss().expect("a backward pass")
            };
            let numeric = (loss_at(h) - loss_at(-h)) / (2.0 * h);
            let found = value(&attention, gradient, 0, col);
            assert!(
                (found - numeric).abs() < 1e-6 * numeric.abs().max(1.0),
                "{gradient:?}[{col}] = {found}, and the loss's slope is {numeric}"
            );
        }
    }
    // b_o is added to every row of the output, so db_o is grad_output's column sums: 1 + 0 +
    // 0.5 and 0 − 1 + 2.
    close(value(&attention, MatrixName::DBO, 0, 0), 1.5);
    close(value(&attention, MatrixName::DBO, 0, 1), 1.0);
    let words = working(&attention, MatrixName::DBO, 0, 1);
    assert!(words.contains("0 + (-1) + 2 = 1"), "{words}");
    assert!(words.contains("summed over the 3 tokens"), "{words}");
    // A gradient step moves the biases against their gradients, as it moves the weights.
    let mut stepped = lesson(&text);
    stepped.gradient_step(&attention, 0.1);
    let b_o = &stepped.input(MatrixName::BO).unwrap().values;
    close(b_o[(0, 0)], 10.0 - 0.15);
    close(b_o[(0, 1)], -20.0 - 0.1);
}

#[test]
fn a_bias_written_as_rows_is_shown_flat_with_its_own_numbers() {
    let text = format!("{BASE}b_k = [[1, 2], [-1]]\n");
    let Err(error) = load_text("lesson", None, text.clone()) else {
        panic!("a bias of rows is refused:\n{text}");
    };
    let said = error.render(false);
    assert!(said.contains("b_k = [1, 2, -1]"), "{said}");
}
