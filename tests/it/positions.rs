//! Positions (format 2): sinusoidal, learned and rotary positions computed, explained, edited,
//! practised, checked and written back, as a lesson writer and a learner meet them.

use crate::common;

use attn_tutor::app::{Action, App, PickerEntry, update};
use attn_tutor::attention::{Attention, Cell, MatrixName, Step, rope_angle};
use attn_tutor::lesson::{Lesson, freeze, lesson_to_toml, load_text, parse};
use attn_tutor::practice::{SlipKind, check};

/// A 3-token lesson with d_model = d_k = 4, positions as given.
fn lesson_text(positions: &str) -> String {
    format!(
        r#"format = 2
title = "Positions"
tokens = ["a", "b", "c"]
embeddings = [[1, 0, 0.5, 0], [0, 1, 0, 0.5], [1, 0, 0.5, 0]]
w_q = [[1, 0, 0, 0.2], [0, 1, 0.3, 0], [0.1, 0, 1, 0], [0, 0.4, 0, 1]]
w_k = [[0.5, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0.2], [0.3, 0, 0, 1]]
w_v = [[1, 0], [0, 1], [1, 1], [0, 2]]
positions = {positions}
decimals = 4
"#
    )
}

fn lesson(positions: &str) -> Lesson {
    let parsed = parse(&lesson_text(positions));
    assert!(
        parsed.lesson.is_some(),
        "{positions}: {:?}",
        parsed.diagnostics
    );
    parsed.lesson.unwrap()
}

fn builtin(name: &str) -> Attention {
    let text = attn_tutor::lesson::builtin(name).unwrap().text;
    Attention::compute(&parse(text).lesson.unwrap())
}

fn cell(attention: &Attention, matrix: MatrixName, row: usize, col: usize) -> f64 {
    attention.matrix(matrix).unwrap()[(row, col)]
}

#[test]
fn sinusoidal_positions_are_sin_and_cos_of_p_over_10000_to_the_2i_over_d_model() {
    let attention = Attention::compute(&lesson("\"sinusoidal\""));
    for p in 0..3 {
        for c in 0..4 {
            let angle = p as f64 / 10000f64.powf(2.0 * (c / 2) as f64 / 4.0);
            let want = if c % 2 == 0 { angle.sin() } else { angle.cos() };
            assert_eq!(cell(&attention, MatrixName::Positions, p, c), want);
            let x = cell(&attention, MatrixName::Embeddings, p, c) + want;
            assert_eq!(cell(&attention, MatrixName::X, p, c), x);
        }
    }
}

#[test]
fn the_projections_are_made_from_x_the_embeddings_plus_positions() {
    let attention = Attention::compute(&lesson("\"sinusoidal\""));
    let x = attention.matrix(MatrixName::X).unwrap();
    let w_q = attention.matrix(MatrixName::WQ).unwrap();
    assert_eq!(attention.matrix(MatrixName::Q).unwrap(), &(x * w_q));
}

#[test]
fn the_same_token_at_two_positions_gets_different_queries_and_weights() {
    let attention = builtin("positions-cat-sat-mat");
    let row = |matrix, r: usize| {
        attention
            .matrix(matrix)
            .unwrap()
            .row(r)
            .iter()
            .copied()
            .collect::<Vec<_>>()
    };
    // "The" (position 0) and "the" (position 4) share an embedding.
    assert_eq!(
        row(MatrixName::Embeddings, 0),
        row(MatrixName::Embeddings, 4)
    );
    assert_ne!(row(MatrixName::Q, 0), row(MatrixName::Q, 4));
    assert_ne!(row(MatrixName::Weights, 0), row(MatrixName::Weights, 4));
}

#[test]
fn with_rope_the_same_pair_one_step_apart_scores_the_same_wherever_it_stands() {
    let attention = builtin("rope-same-distance");
    let near = cell(&attention, MatrixName::Scores, 0, 1);
    let later = cell(&attention, MatrixName::Scores, 3, 4);
    assert!((near - later).abs() < 1e-12, "{near} vs {later}");
    // Unrotated, every the → cat score is 1; rotated, other distances differ.
    assert_ne!(cell(&attention, MatrixName::Scores, 3, 1), near);
}

#[test]
fn rope_rotates_queries_and_keys_but_not_values() {
    let attention = Attention::compute(&lesson("\"rope\""));
    let q = attention.matrix(MatrixName::Q).unwrap();
    let rotated = attention.matrix(MatrixName::QRope).unwrap();
    let (sin, cos) = rope_angle(2, 1, 4, 10000.0).sin_cos();
    assert_eq!(rotated[(2, 2)], q[(2, 2)] * cos - q[(2, 3)] * sin);
    assert_eq!(rotated[(2, 3)], q[(2, 2)] * sin + q[(2, 3)] * cos);
    let scores = attention.matrix(MatrixName::Scores).unwrap();
    let k_rope = attention.matrix(MatrixName::KRope).unwrap();
    assert_eq!(scores, &(rotated * k_rope.transpose()));
    let v = attention.matrix(MatrixName::V).unwrap();
    assert_eq!(
        v,
        &(attention.matrix(MatrixName::Embeddings).unwrap()
            * attention.matrix(MatrixName::WV).unwrap())
    );
}

#[test]
fn a_lesson_walks_through_the_steps_its_positions_need() {
    let steps = |positions: &str| lesson(positions).steps();
    use Step::*;
    assert_eq!(
        steps("\"sinusoidal\""),
        [
            Embedding,
            Positions,
            Projection,
            Scores,
            Scaling,
            Softmax,
            Output,
            OnlineSoftmax
        ]
    );
    assert_eq!(
        steps("\"rope\""),
        [
            Embedding,
            Projection,
            Rotation,
            Scores,
            Scaling,
            Softmax,
            Output,
            OnlineSoftmax
        ]
    );
    assert_eq!(
        steps("\"none\""),
        [
            Embedding,
            Projection,
            Scores,
            Scaling,
            Softmax,
            Output,
            OnlineSoftmax
        ]
    );
}

#[test]
fn every_new_cell_explains_its_arithmetic() {
    let attention = Attention::compute(&lesson("\"sinusoidal\""));
    let explain = |matrix, row, col| {
        attention
            .derive(Cell::new(matrix, row, col))
            .unwrap()
            .explain(&attention, 4)
    };
    let sine = explain(MatrixName::Positions, 2, 2);
    assert!(
        sine.starts_with("P[c, 3] = sin(2 / 10000^(2·1/4)) = sin(2 / 100) = sin(0.02)"),
        "{sine}"
    );
    assert!(sine.contains("position p = 2"), "{sine}");
    let cosine = explain(MatrixName::Positions, 1, 1);
    assert!(cosine.starts_with("P[b, 2] = cos(1 / "), "{cosine}");
    let sum = explain(MatrixName::X, 1, 1);
    assert!(
        sum.starts_with("X[b, 2] = E[b, 2] + P[b, 2] = 1 + (0.5403) = 1.5403"),
        "{sum}"
    );
    let rope = Attention::compute(&lesson("\"rope\""));
    let turned = rope
        .derive(Cell::new(MatrixName::KRope, 1, 0))
        .unwrap()
        .explain(&rope, 4);
    assert!(
        turned.starts_with("K_rope[b, 1] = K[b, 1]·cos φ − K[b, 2]·sin φ = ("),
        "{turned}"
    );
    assert!(
        turned.contains("φ = p · 10000^(−2i/d_k) = 1 · 10000^(−2·0/4) = 1"),
        "{turned}"
    );
}

#[test]
fn practice_names_the_slips_of_sinusoidal_positions() {
    let attention = Attention::compute(&lesson("\"sinusoidal\""));
    let slip = |row: usize, col: usize, answer: f64| {
        check(
            &attention,
            Cell::new(MatrixName::Positions, row, col),
            answer,
            4,
        )
        .unwrap()
        .slip()
        .map(|slip| slip.kind)
    };
    // P[c, 3]: p = 2, i = 1, angle 2 / 100; sin is right.
    assert_eq!(slip(2, 2, 0.02f64.cos()), Some(SlipKind::SinCosSwapped));
    assert_eq!(slip(2, 2, 0.03f64.sin()), Some(SlipKind::PositionsFromOne));
    // The column (2) in the exponent instead of its pair (1): 2 / 10000^(4/4).
    assert_eq!(
        slip(2, 2, (2.0f64 / 10000.0).sin()),
        Some(SlipKind::WrongExponent)
    );
    // Carried to X = E + P.
    let x = check(
        &attention,
        Cell::new(MatrixName::X, 2, 2),
        0.5 + 0.02f64.cos(),
        4,
    )
    .unwrap();
    assert_eq!(
        x.slip().map(|slip| slip.kind),
        Some(SlipKind::SinCosSwapped)
    );
}

#[test]
fn practice_names_a_rotation_turned_the_wrong_way() {
    let attention = Attention::compute(&lesson("\"rope\""));
    let q = attention.matrix(MatrixName::Q).unwrap();
    let (sin, cos) = rope_angle(1, 0, 4, 10000.0).sin_cos();
    let backwards = q[(1, 0)] * cos + q[(1, 1)] * sin;
    let verdict = check(&attention, Cell::new(MatrixName::QRope, 1, 0), backwards, 4).unwrap();
    assert_eq!(
        verdict.slip().map(|slip| slip.kind),
        Some(SlipKind::RotatedBackwards)
    );
}

#[test]
fn practice_asks_for_the_positions_and_the_rotated_queries_and_keys() {
    let targets = |positions: &str, step: Step| {
        let entry = PickerEntry {
            name: "positions".to_string(),
            lesson: load_text("positions", None, lesson_text(positions)),
        };
        let mut app = App::new(vec![entry], Some(0));
        let tutor = app.tutor_mut().unwrap();
        tutor.practice_targets_on(step)
    };
    assert_eq!(
        targets("\"sinusoidal\"", Step::Positions),
        [MatrixName::Positions, MatrixName::X]
    );
    // Learned positions are the lesson's own numbers: only their sum is predicted.
    assert_eq!(
        targets(
            "[[0.1, 0, 0, 0], [0, 0.1, 0, 0], [0, 0, 0.1, 0]]",
            Step::Positions
        ),
        [MatrixName::X]
    );
    assert_eq!(
        targets("\"rope\"", Step::Rotation),
        [MatrixName::QRope, MatrixName::KRope]
    );
}

#[test]
fn editing_a_learned_position_recomputes_everything_after_it_and_undo_restores_it() {
    let entry = PickerEntry {
        name: "learned".to_string(),
        lesson: load_text(
            "learned",
            None,
            lesson_text("[[0.1, 0, 0, 0], [0, 0.1, 0, 0], [0, 0, 0.1, 0]]"),
        ),
    };
    let mut app = App::new(vec![entry], Some(0));
    update(&mut app, Action::GoToStep(2));
    let tutor = app.tutor().unwrap();
    assert_eq!(tutor.step(), Step::Positions);
    assert_eq!(tutor.focus, MatrixName::Positions);
    let before = tutor.attention.clone();
    update(&mut app, Action::Edit);
    update(&mut app, Action::ClearInput);
    for ch in "2".chars() {
        update(&mut app, Action::Type(ch));
    }
    update(&mut app, Action::Submit);
    let after = &app.tutor().unwrap().attention;
    assert_eq!(cell(after, MatrixName::Positions, 0, 0), 2.0);
    assert_eq!(cell(after, MatrixName::X, 0, 0), 3.0);
    assert_ne!(
        cell(after, MatrixName::Weights, 0, 0),
        cell(&before, MatrixName::Weights, 0, 0)
    );
    update(&mut app, Action::Undo);
    let undone = &app.tutor().unwrap().attention;
    assert_eq!(cell(undone, MatrixName::Positions, 0, 0), 0.1);
    assert_eq!(
        undone.matrix(MatrixName::Output),
        before.matrix(MatrixName::Output)
    );
}

/// A lesson with every key format 2 has, for a given kind of positions.
fn every_key(positions: &str) -> String {
    format!(
        r#"format = 2
title = "Every key"
source = "a test"
summary = "every key of format 2"
tokens = ["a", "b", "c"]
embeddings = {{ random = "normal", seed = 3, shape = [3, 4] }}
w_q = {{ random = "normal", seed = 4, shape = [4, 2] }}
w_k = {{ random = "uniform", seed = 5, shape = [4, 2] }}
w_v = [[1, 0], [0, 1], [1, 1], [0, 2]]
positions = {positions}
scale = false
mask = "causal"
focus = "b"
decimals = 3

[narration]
embedding = "e"
positions = "p"
projection = "pr"
rotation = "r"
scores = "s"
scaling = "sc"
masking = "m"
softmax = "so"
output = "o"
"#
    )
}

#[test]
fn a_lesson_with_every_key_survives_a_save_and_a_freeze() {
    for positions in [
        "\"sinusoidal\"",
        "\"rope\"",
        "{ random = \"normal\", seed = 6, shape = [3, 4] }",
    ] {
        let text = every_key(positions);
        let original = parse(&text).lesson.unwrap_or_else(|| panic!("{positions}"));
        let saved = parse(&lesson_to_toml(&original))
            .lesson
            .expect("a saved lesson reads");
        assert_eq!(
            saved,
            original,
            "{positions}: saved as\n{}",
            lesson_to_toml(&original)
        );
        let frozen = parse(&freeze(&text, &original))
            .lesson
            .expect("a frozen lesson reads");
        for (name, input) in original.inputs() {
            assert_eq!(
                frozen.input(name).unwrap().values,
                input.values,
                "{positions}: {name:?} frozen"
            );
        }
        assert_eq!(frozen.positions.kind(), original.positions.kind());
        assert_eq!(frozen.narration, original.narration);
    }
}

#[test]
fn check_compares_printed_positions_and_rotations() {
    let mut text = lesson_text("\"rope\"");
    let attention = Attention::compute(&lesson("\"rope\""));
    let q_rope = cell(&attention, MatrixName::QRope, 1, 0);
    text.push_str(&format!(
        "[expected]\nq_rope = {{ b = [{q_rope:.4}, 0, 0, 0] }}\n"
    ));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rope.toml");
    std::fs::write(&path, text).unwrap();
    let output = common::attn_tutor(&dir)
        .args(["check", path.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The first figure is right; the zeros are not (the other cells of that row are not 0).
    assert!(stdout.contains("q_rope"), "{stdout}");
    assert_eq!(output.status.code(), Some(1), "{stdout}");
}

#[test]
fn the_first_hint_for_a_rotated_cell_gives_its_angle() {
    let attention = Attention::compute(&lesson("\"rope\""));
    let hints =
        attn_tutor::practice::hints(&attention, Cell::new(MatrixName::QRope, 2, 0), 4).unwrap();
    let first = hints.get(attn_tutor::practice::HintLevel::FirstStep);
    assert!(
        first.contains("cos φ") && first.contains("φ = p · 10000^(−2i/d_k) = 2 ·"),
        "{first}"
    );
}

#[test]
fn a_lesson_saved_after_its_learned_positions_were_edited_drops_what_was_written_for_them() {
    let mut text = lesson_text("[[0.1, 0, 0, 0], [0, 0.1, 0, 0], [0, 0, 0.1, 0]]");
    text.push_str("[narration]\npositions = \"The positions are 0.1 on the diagonal.\"\n");
    let entry = PickerEntry {
        name: "learned".to_string(),
        lesson: load_text("learned", None, text),
    };
    let mut app = App::new(vec![entry], Some(0));
    update(&mut app, Action::GoToStep(2));
    update(&mut app, Action::Edit);
    update(&mut app, Action::ClearInput);
    update(&mut app, Action::Type('2'));
    update(&mut app, Action::Submit);
    let saved = app.tutor().unwrap().lesson_to_save();
    assert!(saved.title.ends_with("(edited)"), "{}", saved.title);
    assert_eq!(saved.narration.get(Step::Positions), None);
}

#[test]
fn practice_names_sin_and_cos_swapped_in_a_rotation() {
    let attention = Attention::compute(&lesson("\"rope\""));
    let q = attention.matrix(MatrixName::Q).unwrap();
    let (sin, cos) = rope_angle(2, 0, 4, 10000.0).sin_cos();
    let swapped = q[(2, 0)] * sin - q[(2, 1)] * cos;
    let verdict = check(&attention, Cell::new(MatrixName::QRope, 2, 0), swapped, 4).unwrap();
    assert_eq!(
        verdict.slip().map(|slip| slip.kind),
        Some(SlipKind::SinCosSwapped)
    );
}

#[test]
fn x_can_be_checked_in_any_lesson_with_embeddings() {
    let mut text = lesson_text("\"rope\"");
    text.push_str("[expected]\nx = { a = [1, 0, 0.5, 0] }\n");
    let parsed = parse(&text);
    assert!(parsed.lesson.is_some(), "{:?}", parsed.diagnostics);
}

/// `rope_pairing = "half"` with `rope_theta = 500000` on the 4-wide lesson above.
fn rotate_half() -> Attention {
    let text = lesson_text("\"rope\"\nrope_pairing = \"half\"\nrope_theta = 500000");
    Attention::compute(&parse(&text).lesson.unwrap())
}

#[test]
fn the_rotations_words_say_which_pairs_this_lesson_turns_and_by_what_base() {
    let half = rotate_half();
    let words = Step::Rotation.narration(&half.plan);
    assert!(
        words.contains(
            "column i and column i + d_k/2 make pair i (rotate-half, the pairing Llama, Mistral \
             and Qwen2 checkpoints use; RoFormer pairs columns 2i and 2i+1 side by side), which \
             is rotated by the angle φ = p · 500000^(−2i/d_k), fastest for the first pair"
        ),
        "{words}"
    );
    // The default lesson's words are as they were.
    let plain = Attention::compute(&lesson("\"rope\""));
    let words = Step::Rotation.narration(&plain.plan);
    assert!(
        words.contains(
            "columns 2i and 2i+1 are rotated by the angle φ = p · 10000^(−2i/d_k), fastest for \
             the first pair"
        ),
        "{words}"
    );
    // The backward pass turns the same pairs back.
    let text = format!(
        "{}grad_output = [[1, 0], [0, 1], [1, 1]]\n",
        lesson_text("\"rope\"\nrope_pairing = \"half\"")
    );
    let backward = Attention::compute(&parse(&text).lesson.unwrap());
    let words = Step::BackwardRotation.narration(&backward.plan);
    assert!(
        words.contains("each pair of a query's (and a key's) numbers (column i with column i + d_k/2, rotate-half) by the angle φ"),
        "{words}"
    );
    let derivation = backward.derive(Cell::new(MatrixName::DQ, 1, 3)).unwrap();
    let explained = derivation.explain(&backward, 4);
    assert!(
        explained.starts_with("dQ[b, 4] = dQ_rope[b, 2]·(−sin φ) + dQ_rope[b, 4]·cos φ")
            && explained.contains("turned this pair (columns 2 and 4: rotate-half) by φ = "),
        "{explained}"
    );
}

#[test]
fn practice_names_the_slips_of_a_rotate_half_rotation() {
    let attention = rotate_half();
    let q = attention.matrix(MatrixName::Q).unwrap();
    // Q_rope[c, 3] (0-based column 2) is the second of pair 0, columns 0 and 2: turned by
    // φ = 2 (p = 2, i = 0).
    let (sin, cos) = rope_angle(2, 0, 4, 500_000.0).sin_cos();
    let right = q[(2, 2)] * cos + q[(2, 0)] * sin;
    assert!((attention.matrix(MatrixName::QRope).unwrap()[(2, 2)] - right).abs() < 1e-12);
    let slip = |answer: f64| {
        check(&attention, Cell::new(MatrixName::QRope, 2, 2), answer, 4)
            .unwrap()
            .slip()
            .copied()
    };
    let backwards = slip(q[(2, 2)] * cos - q[(2, 0)] * sin).unwrap();
    assert_eq!(backwards.kind, SlipKind::RotatedBackwards);
    // The column (2) in the exponent instead of the pair's i (0): φ = 2 · 500000^(−4/4).
    let (sin, cos) = rope_angle(2, 2, 4, 500_000.0).sin_cos();
    let by_column = slip(q[(2, 2)] * cos + q[(2, 0)] * sin).unwrap();
    assert_eq!(by_column.kind, SlipKind::WrongExponent);
    assert_eq!(
        by_column.describe(),
        "That puts the column in the exponent: the index i of its pair goes there instead."
    );
}
