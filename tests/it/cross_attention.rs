//! Cross-attention: queries from the lesson's tokens, keys and values from `source_tokens`.
//! The engine by hand, the diagnostics a lesson author meets, and the JSON contract.

use crate::common;

use attn_tutor::attention::{Attention, Cell, MatrixName, rotate_rows, sinusoidal};
use attn_tutor::lesson::{Lesson, parse};
use attn_tutor::practice::{Slip, SlipKind, Verdict, check};
use nalgebra::{DMatrix, dmatrix};

/// Two target tokens attending to three source tokens.
const CROSS: &str = r#"
format = 2
title = "Cross"
tokens = ["le", "chat"]
source_tokens = ["the", "black", "cat"]
embeddings = [[1, 0], [0, 1]]
source_embeddings = [[1, 0], [0.5, 0.5], [0, 2]]
w_q = [[1, 0], [0, 1]]
w_k = [[2, 0], [0, 1]]
w_v = [[1, 2], [3, 4]]
"#;

fn lesson(text: &str) -> Lesson {
    common::valid_lesson(text)
}

/// The messages and helps of the lesson's errors, one string each.
fn errors(text: &str) -> Vec<String> {
    parse(text)
        .errors()
        .map(|error| {
            format!(
                "{} | {}",
                error.message,
                error.help.clone().unwrap_or_default()
            )
        })
        .collect()
}

fn with(text: &str, replace: &str, by: &str) -> String {
    assert!(text.contains(replace), "{replace:?} is not in the lesson");
    text.replace(replace, by)
}

fn matrix(attention: &Attention, name: MatrixName) -> DMatrix<f64> {
    attention
        .matrix(name)
        .unwrap_or_else(|| panic!("no {name:?}"))
        .clone()
}

fn close(got: &DMatrix<f64>, want: &DMatrix<f64>) {
    assert_eq!(got.shape(), want.shape());
    assert!((got - want).abs().max() < 1e-12, "got {got}, want {want}");
}

#[test]
fn keys_and_values_come_from_the_source_and_the_scores_are_target_by_source() {
    let attention = Attention::compute(&lesson(CROSS));
    let x = dmatrix![1.0, 0.0; 0.0, 1.0];
    let s = dmatrix![1.0, 0.0; 0.5, 0.5; 0.0, 2.0];
    let q = &x * dmatrix![1.0, 0.0; 0.0, 1.0];
    let k = &s * dmatrix![2.0, 0.0; 0.0, 1.0];
    let v = &s * dmatrix![1.0, 2.0; 3.0, 4.0];
    close(&matrix(&attention, MatrixName::K), &k);
    close(&matrix(&attention, MatrixName::V), &v);
    let scores = &q * k.transpose();
    close(&matrix(&attention, MatrixName::Scores), &scores);
    let scaled = &scores / 2f64.sqrt();
    let mut weights = scaled.clone();
    for mut row in weights.row_iter_mut() {
        let sum: f64 = row.iter().map(|value| value.exp()).sum();
        row.iter_mut().for_each(|value| *value = value.exp() / sum);
    }
    close(&matrix(&attention, MatrixName::Weights), &weights);
    close(&matrix(&attention, MatrixName::Output), &(&weights * &v));
    assert_eq!(
        attention.weights().shape(),
        (2, 3),
        "a row per target token, a column per source token"
    );
}

#[test]
fn rows_are_named_by_the_target_and_keys_by_the_source() {
    let attention = Attention::compute(&lesson(CROSS));
    assert_eq!(attention.row_label(MatrixName::Q, 1), "chat");
    assert_eq!(attention.row_label(MatrixName::K, 1), "black");
    assert_eq!(attention.row_label(MatrixName::V, 2), "cat");
    assert_eq!(attention.column_label(MatrixName::Scores, 2), "cat");
    assert_eq!(attention.row_label(MatrixName::Scores, 0), "le");
    assert_eq!(
        attention.cell_name(Cell::new(MatrixName::Weights, 1, 2)),
        "weights[chat, cat]"
    );
    let derivation = attention
        .derive(Cell::new(MatrixName::K, 1, 0))
        .expect("a K cell");
    let text = derivation.explain(&attention, 3);
    assert!(
        text.starts_with("K[black, 1] = s_black · W_k[:, 1]"),
        "{text}"
    );
}

#[test]
fn the_source_gets_the_sinusoid_counted_from_its_own_first_token() {
    let text = with(CROSS, "w_q =", "positions = \"sinusoidal\"\nw_q =");
    let attention = Attention::compute(&lesson(&text));
    let source_positions = matrix(&attention, MatrixName::SourcePositions);
    close(&source_positions, &sinusoidal(3, 2));
    close(
        &matrix(&attention, MatrixName::Positions),
        &sinusoidal(2, 2),
    );
    let s = dmatrix![1.0, 0.0; 0.5, 0.5; 0.0, 2.0];
    close(
        &matrix(&attention, MatrixName::SourceX),
        &(&s + sinusoidal(3, 2)),
    );
    let k = (&s + sinusoidal(3, 2)) * dmatrix![2.0, 0.0; 0.0, 1.0];
    close(&matrix(&attention, MatrixName::K), &k);
}

#[test]
fn rope_turns_each_key_by_its_position_in_the_source() {
    let text = with(CROSS, "w_q =", "positions = \"rope\"\nw_q =");
    let attention = Attention::compute(&lesson(&text));
    let k = matrix(&attention, MatrixName::K);
    close(
        &matrix(&attention, MatrixName::KRope),
        &rotate_rows(&k, Default::default()),
    );
    assert_eq!(matrix(&attention, MatrixName::KRope).nrows(), 3);
}

#[test]
fn a_mask_is_target_by_source_and_hides_source_tokens() {
    let text = with(CROSS, "w_q =", "mask = [[0, -inf, 0], [-inf, 0, 0]]\nw_q =");
    let attention = Attention::compute(&lesson(&text));
    let weights = attention.weights();
    assert_eq!(weights[(0, 1)], 0.0);
    assert_eq!(weights[(1, 0)], 0.0);
    assert!((weights.row(0).sum() - 1.0).abs() < 1e-12);
}

#[test]
fn q_k_and_v_may_be_given_with_a_row_per_target_and_per_source_token() {
    let text = r#"
format = 2
title = "Given"
tokens = ["le", "chat"]
source_tokens = ["the", "black", "cat"]
q = [[1, 0], [0, 1]]
k = [[1, 0], [0, 1], [1, 1]]
v = [[1], [2], [3]]
"#;
    let attention = Attention::compute(&lesson(text));
    assert_eq!(attention.weights().shape(), (2, 3));
    assert_eq!(matrix(&attention, MatrixName::Output).shape(), (2, 1));
    let too_few = with(text, "k = [[1, 0], [0, 1], [1, 1]]", "k = [[1, 0], [0, 1]]");
    let found = errors(&too_few);
    assert!(
        found.iter().any(
            |error| error.contains("`k` has 2 rows, but there are 3 source tokens")
                && error.contains("one row per source token, in the order of `source_tokens`")
        ),
        "{found:?}"
    );
}

#[test]
fn a_causal_mask_in_cross_attention_is_explained_and_refused() {
    let found = errors(&with(CROSS, "w_q =", "mask = \"causal\"\nw_q ="));
    assert!(
        found.iter().any(|error| error
            .starts_with("a causal mask means nothing in cross-attention")
            && error.contains("every target token may look at every source token")),
        "{found:?}"
    );
}

#[test]
fn a_mask_of_the_wrong_shape_names_both_sequences() {
    let found = errors(&with(CROSS, "w_q =", "mask = [[0, 0], [0, 0]]\nw_q ="));
    assert!(
        found
            .iter()
            .any(|error| error
                .contains("the mask is 2 × 2, but there are 2 tokens and 3 source tokens")),
        "{found:?}"
    );
}

#[test]
fn the_source_embeddings_must_have_a_row_per_source_token_and_the_model_width() {
    let found = errors(&with(
        CROSS,
        "source_embeddings = [[1, 0], [0.5, 0.5], [0, 2]]",
        "source_embeddings = [[1, 0], [0.5, 0.5]]",
    ));
    assert!(
        found
            .iter()
            .any(|error| error
                .contains("`source_embeddings` has 2 rows, but there are 3 source tokens")),
        "{found:?}"
    );
    let found = errors(&with(
        CROSS,
        "source_embeddings = [[1, 0], [0.5, 0.5], [0, 2]]",
        "source_embeddings = [[1, 0, 0], [0.5, 0.5, 0], [0, 2, 0]]",
    ));
    assert!(
        found.iter().any(|error| error.contains(
            "`source_embeddings` has 3 columns, but the embeddings have 2 columns (d_model)"
        )),
        "{found:?}"
    );
}

#[test]
fn the_source_and_its_embeddings_go_together() {
    let missing = errors(&with(
        CROSS,
        "source_embeddings = [[1, 0], [0.5, 0.5], [0, 2]]\n",
        "",
    ));
    assert!(
        missing
            .iter()
            .any(|error| error.starts_with("missing `source_embeddings`")
                && error.contains("(src_len × d_model)")),
        "{missing:?}"
    );
    let alone = errors(&with(
        CROSS,
        "source_tokens = [\"the\", \"black\", \"cat\"]\n",
        "",
    ));
    assert!(
        alone
            .iter()
            .any(|error| error.starts_with("`source_embeddings` without `source_tokens`")),
        "{alone:?}"
    );
    let format_1 = errors(&with(CROSS, "format = 2", "format = 1"));
    assert!(
        format_1
            .iter()
            .any(|error| error.starts_with("`source_tokens` needs `format = 2`")),
        "{format_1:?}"
    );
}

#[test]
fn learned_positions_are_refused_in_cross_attention_with_what_to_do() {
    let found = errors(&with(CROSS, "w_q =", "positions = [[0, 0], [0, 0]]\nw_q ="));
    assert!(
        found.iter().any(|error| error
            .starts_with("learned positions are not supported in cross-attention yet")
            && error.contains("\"sinusoidal\" or \"rope\"")),
        "{found:?}"
    );
}

#[test]
fn source_tokens_follow_the_rules_of_tokens() {
    let found = errors(&with(CROSS, "[\"the\", \"black\", \"cat\"]", "[]"));
    assert!(
        found
            .iter()
            .any(|error| error.starts_with("`source_tokens` is empty")),
        "{found:?}"
    );
    let found = errors(&with(
        CROSS,
        "\"black\", \"cat\"]",
        "\"\u{202e}black\", \"cat\"]",
    ));
    assert!(
        found.iter().any(|error| error.contains("source token 2")),
        "{found:?}"
    );
    // Source tokens that cannot be read are that one problem, not also a missing source or a
    // K of the wrong height.
    assert_eq!(found.len(), 1, "{found:?}");
    let direct = r#"
format = 2
title = "Given"
tokens = ["le", "chat"]
source_tokens = ["the", "bl\u202eack", "cat"]
q = [[1, 0], [0, 1]]
k = [[1, 0], [0, 1], [1, 1]]
v = [[1], [2], [3]]
"#;
    let found = errors(direct);
    assert_eq!(found.len(), 1, "{found:?}");
}

#[test]
fn swapping_queries_and_keys_is_no_slip_when_the_scores_are_not_square() {
    let attention = Attention::compute(&lesson(CROSS));
    // Every cell of every step can be checked without a panic, and a wrong answer is wrong.
    for name in [
        MatrixName::Scores,
        MatrixName::Scaled,
        MatrixName::Weights,
        MatrixName::Output,
    ] {
        let cell = Cell::new(name, 1, 0);
        let verdict = check(&attention, cell, 123.0, 3).expect("a cell to check");
        assert!(
            matches!(verdict, Verdict::Wrong { .. }),
            "{name:?}: {verdict:?}"
        );
    }
}

#[test]
fn the_json_has_the_source_tokens_and_the_matrix_keys_come_from() {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let path = dir.path().join("cross.toml");
    let text = with(CROSS, "w_q =", "positions = \"sinusoidal\"\nw_q =");
    std::fs::write(&path, &text).expect("write");
    let json = common::show(path.to_str().expect("utf-8"), &["--format", "json"]);
    let document: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(
        document["source_tokens"],
        serde_json::json!(["the", "black", "cat"])
    );
    let source_x = document["source_x"].as_array().expect("source_x");
    assert_eq!(source_x.len(), 3);
    let s_plus_p = dmatrix![1.0, 0.0; 0.5, 0.5; 0.0, 2.0] + sinusoidal(3, 2);
    for (row, values) in source_x.iter().enumerate() {
        for (col, value) in values.as_array().expect("a row").iter().enumerate() {
            assert!((value.as_f64().expect("a number") - s_plus_p[(row, col)]).abs() < 1e-12);
        }
    }
    assert_eq!(document["scores"].as_array().map(Vec::len), Some(2));
    assert_eq!(document["scores"][0].as_array().map(Vec::len), Some(3));
    assert_eq!(document["k"].as_array().map(Vec::len), Some(3));
    // A cell is named by a target token and a source token.
    let cell = common::show(
        path.to_str().expect("utf-8"),
        &["--format", "json", "--step", "scores", "--cell", "chat,cat"],
    );
    assert!(
        cell.contains("scores[chat, cat] = q_chat · k_cat"),
        "{cell}"
    );
}

#[test]
fn self_attention_json_says_it_has_no_source() {
    let json = common::show("cat-sleeps", &["--format", "json"]);
    let document: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert!(document["source_tokens"].is_null());
    assert!(document["source_x"].is_null());
}

#[test]
fn a_saved_cross_attention_lesson_reads_back_the_same() {
    for text in [
        CROSS.to_string(),
        with(
            CROSS,
            "w_q =",
            "positions = \"sinusoidal\"\nmask = [[0, -inf, 0], [0, 0, 1.5]]\nw_q =",
        ),
    ] {
        let original = lesson(&text);
        let saved = attn_tutor::lesson::lesson_to_toml(&original);
        let again = lesson(&saved);
        assert_eq!(again.source_tokens, original.source_tokens, "{saved}");
        assert_eq!(again.source_embeddings, original.source_embeddings);
        assert_eq!(again.mask, original.mask);
        assert_eq!(
            Attention::compute(&again).weights(),
            Attention::compute(&original).weights()
        );
    }
}

#[test]
fn a_source_rows_working_says_it_counts_the_source_positions() {
    let sinusoid = with(CROSS, "w_q =", "positions = \"sinusoidal\"\nw_q =");
    let attention = Attention::compute(&lesson(&sinusoid));
    let source = attention
        .derive(Cell::new(MatrixName::SourcePositions, 2, 0))
        .expect("a cell of P_S")
        .explain(&attention, 3);
    assert!(
        source.contains(
            "row 3 is source position p = 2 (positions count from 0, from the source's first token)"
        ),
        "{source}"
    );
    let target = attention
        .derive(Cell::new(MatrixName::Positions, 1, 0))
        .expect("a cell of P")
        .explain(&attention, 3);
    assert!(
        target.contains("row 2 is position p = 1 (positions count from 0)"),
        "{target}"
    );
    let rope = with(CROSS, "w_q =", "positions = \"rope\"\nw_q =");
    let attention = Attention::compute(&lesson(&rope));
    let key = attention
        .derive(Cell::new(MatrixName::KRope, 2, 0))
        .expect("a cell of K rotated")
        .explain(&attention, 3);
    assert!(key.contains("row 3 is source position p = 2"), "{key}");
}

#[test]
fn a_focus_on_a_source_token_says_the_focus_is_a_query() {
    let found = errors(&with(CROSS, "w_q =", "focus = \"cat\"\nw_q ="));
    assert!(
        found.iter().any(
            |error| error.starts_with("`focus` names \"cat\", a source token")
                && error.contains("one of `tokens` (le, chat)")
        ),
        "{found:?}"
    );
    assert_eq!(
        lesson(&with(CROSS, "w_q =", "focus = \"chat\"\nw_q =")).focus,
        Some(1)
    );
}

#[test]
fn a_cell_named_the_wrong_way_round_is_told_which_side_is_which() {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let path = dir.path().join("cross.toml");
    std::fs::write(&path, CROSS).expect("write");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_attn-tutor"))
        .args([
            "show",
            path.to_str().expect("utf-8"),
            "--step",
            "softmax",
            "--cell",
            "cat,chat",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("(or a target token: le, chat) and a column from 1 to 3 (or a source token: the, black, cat)"),
        "{stderr}"
    );
}

#[test]
fn a_key_made_from_a_target_row_is_named_as_that_slip() {
    let attention = Attention::compute(&lesson(CROSS));
    // K[black, 1] = s_black · W_k[:, 1] = 0.5 × 2 = 1; chat's row of X gives 0.
    let cell = Cell::new(MatrixName::K, 1, 0);
    let Some(Verdict::Wrong {
        slip: Some(slip), ..
    }) = check(&attention, cell, 0.0, 3)
    else {
        panic!("no slip named for the target's row");
    };
    assert_eq!(slip.kind, SlipKind::TargetNotSource);
    assert!(
        slip.describe()
            .contains("the keys come from the source's rows"),
        "{}",
        slip.describe()
    );
    // Self-attention has no such slip: its keys are the tokens' own rows.
    let own = Attention::compute(&lesson(&with(
        &with(CROSS, "source_tokens = [\"the\", \"black\", \"cat\"]\n", ""),
        "source_embeddings = [[1, 0], [0.5, 0.5], [0, 2]]\n",
        "",
    )));
    let verdict = check(&own, Cell::new(MatrixName::K, 1, 0), 5.0, 3).expect("a verdict");
    assert!(
        !matches!(
            verdict,
            Verdict::Wrong {
                slip: Some(Slip {
                    kind: SlipKind::TargetNotSource,
                    ..
                }),
                ..
            }
        ),
        "{verdict:?}"
    );
}

#[test]
fn a_key_row_of_a_printed_figure_is_named_by_a_source_token() {
    let text = format!("{CROSS}\n[expected.k]\nchat = [1, 0]\n");
    let found = errors(&text);
    assert!(
        found
            .iter()
            .any(|error| error.contains("names row \"chat\", which is not a source token")),
        "{found:?}"
    );
    let right = format!("{CROSS}\n[expected.k]\nblack = [1, 0.5]\n");
    assert!(errors(&right).is_empty(), "{:?}", errors(&right));
}

#[test]
fn one_source_token_is_said_in_the_singular() {
    let text = r#"
format = 2
title = "One"
tokens = ["le", "chat"]
source_tokens = ["cat"]
q = [[1, 0], [0, 1]]
k = [[1, 0]]
v = [[2]]
"#;
    assert!(
        lesson(text)
            .shape_text()
            .ends_with("attending to 1 source token"),
        "{}",
        lesson(text).shape_text()
    );
}

#[test]
fn a_missing_source_embeddings_is_said_at_the_source_tokens() {
    let text = with(
        CROSS,
        "source_embeddings = [[1, 0], [0.5, 0.5], [0, 2]]\n",
        "",
    );
    let parsed = parse(&text);
    let missing = parsed
        .errors()
        .find(|error| error.message == "missing `source_embeddings`")
        .expect("the missing source is said");
    assert!(
        text[missing.span.clone()].starts_with("source_tokens"),
        "said at {:?}",
        &text[missing.span.clone()]
    );
}
