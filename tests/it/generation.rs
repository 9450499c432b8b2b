//! Generation with a K/V cache (`decode = true`): the steps a lesson gains, each step's
//! matrices at its token, the check against the whole causal pass, the counts, practice, the
//! diagnostics a lesson author meets, and `show --token` with the JSON contract.

use crate::common;

use attn_tutor::attention::{Attention, Cell, MatrixName, Rule, Step};
use attn_tutor::lesson::{Lesson, parse};
use attn_tutor::practice::{SlipKind, Verdict, check};
use attn_tutor::workings::Cached;

/// Three tokens, one head, d_model 2, d_k = d_v = 2: small enough to count by hand.
const SMALL: &str = r#"
format = 2
title = "Generating three tokens"
tokens = ["a", "b", "c"]
embeddings = [[1, 0], [0, 1], [1, 1]]
w_q = [[1, 0], [0, 1]]
w_k = [[2, 0], [0, 1]]
w_v = [[1, 2], [3, 4]]
mask = "causal"
decode = true
"#;

fn lesson(text: &str) -> Lesson {
    common::valid_lesson(text)
}

/// Each error as `line: message | help`.
fn errors(text: &str) -> Vec<String> {
    parse(text)
        .errors()
        .map(|error| {
            let line = text[..error.span.start].matches('\n').count() + 1;
            format!(
                "{line}: {} | {}",
                error.message,
                error.help.clone().unwrap_or_default()
            )
        })
        .collect()
}

/// The two-heads lesson with `decode = true`, by path for the binary.
const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/decode-two-heads.toml"
);

fn two_heads() -> Lesson {
    lesson(include_str!("../fixtures/decode-two-heads.toml"))
}

#[test]
fn decode_adds_the_four_generation_steps_after_the_whole_pass() {
    let steps = lesson(SMALL).steps();
    assert_eq!(
        steps[steps.len() - 4..],
        [
            Step::NewToken,
            Step::KvCache,
            Step::DecodeWeights,
            Step::DecodeOutput
        ]
    );
    let without = lesson(&SMALL.replace("decode = true\n", "")).steps();
    assert!(!without.contains(&Step::NewToken));
}

#[test]
fn decode_without_the_causal_mask_is_refused_at_the_decode_line() {
    let text = SMALL.replace("mask = \"causal\"", "mask = \"none\"");
    let found = errors(&text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("10: generation needs `mask = \"causal\"`"),
        "{found:?}"
    );
    // No mask at all is the same mistake.
    let text = SMALL.replace("mask = \"causal\"\n", "");
    assert!(errors(&text)[0].contains("generation needs `mask = \"causal\"`"));
}

#[test]
fn decode_in_cross_attention_or_format_1_is_refused() {
    let cross = SMALL
        .replace("mask = \"causal\"\n", "")
        .replace(
            "tokens = [\"a\", \"b\", \"c\"]",
            "tokens = [\"a\", \"b\", \"c\"]\nsource_tokens = [\"x\", \"y\"]\nsource_embeddings = [[1, 0], [0, 1]]",
        );
    assert!(
        errors(&cross)
            .iter()
            .any(|error| error.contains("generation with a K/V cache is self-attention's")),
        "{:?}",
        errors(&cross)
    );
    let format1 = SMALL.replace("format = 2", "format = 1");
    assert!(
        errors(&format1)
            .iter()
            .any(|error| error.contains("`decode` needs `format = 2`")),
        "{:?}",
        errors(&format1)
    );
    assert!(errors(&SMALL.replace("decode = true", "decode = 1"))[0].contains("decode"));
}

#[test]
fn the_new_tokens_query_is_its_row_of_x_times_w_q_and_nothing_else() {
    let attention = Attention::compute(&lesson(SMALL));
    for token in 0..3 {
        let q = attention.matrix_at(MatrixName::QNew, 0, token).unwrap();
        assert_eq!(q.shape(), (1, 2));
        let whole = attention.matrix(MatrixName::Q).unwrap();
        assert_eq!(q.row(0), whole.row(token), "token {token}");
    }
}

#[test]
fn the_cache_grows_by_one_row_a_step_and_keeps_the_earlier_rows() {
    let attention = Attention::compute(&lesson(SMALL));
    let keys = attention.matrix(MatrixName::K).unwrap().clone();
    for token in 0..3 {
        let cache = attention.matrix_at(MatrixName::KCache, 0, token).unwrap();
        assert_eq!(cache.nrows(), token + 1);
        assert_eq!(cache.rows(0, token + 1), keys.rows(0, token + 1));
    }
    // The last row is new at its step; an earlier one names the step that made it.
    let new = attention
        .derive(Cell::new(MatrixName::KCache, 2, 0).at_token(2))
        .unwrap();
    assert!(matches!(new.rule, Rule::Cached(Cached { new: true, .. })));
    let kept = attention
        .derive(Cell::new(MatrixName::KCache, 0, 1).at_token(2))
        .unwrap();
    let Rule::Cached(Cached { from, new: false }) = kept.rule else {
        panic!("{:?}", kept.rule);
    };
    assert_eq!((from.cell.matrix, from.cell.token), (MatrixName::KNew, 0));
    let text = kept.explain(&attention, 4);
    assert!(
        text.contains("kept in the cache since it was computed for “a”, token 1 of 3"),
        "{text}"
    );
}

#[test]
fn every_steps_cache_is_the_first_rows_of_its_groups_one_cache() {
    // A copy per step would hold n²/2 rows a group: 539 MB at 256 tokens × 16 groups.
    let attention = Attention::compute(&two_heads());
    for name in [MatrixName::KCache, MatrixName::VCache] {
        for head in 0..2 {
            let last = attention.matrix_at(name, head, 4).unwrap();
            assert_eq!(last.nrows(), 5);
            for token in 0..5 {
                let cache = attention.matrix_at(name, head, token).unwrap();
                assert_eq!(cache.nrows(), token + 1);
                assert_eq!(
                    cache.as_ptr(),
                    last.as_ptr(),
                    "{name:?} of head {head} at token {token} is a copy"
                );
                assert_eq!(cache.rows(0, token + 1), last.rows(0, token + 1));
            }
        }
        // Each group has its own.
        assert_ne!(
            attention.matrix_at(name, 0, 4).unwrap().as_ptr(),
            attention.matrix_at(name, 1, 4).unwrap().as_ptr()
        );
    }
}

/// 40 tokens, two heads over two K/V groups, d_model 16 with RoPE and W_o: every side of the
/// whole pass's products longer than 5, so that nalgebra would hand them to matrixmultiply,
/// which sums otherwise than a step sums its row.
fn forty_tokens() -> Lesson {
    let tokens: Vec<String> = (1..=40).map(|i| format!("\"t{i}\"")).collect();
    lesson(&format!(
        r#"
format = 2
title = "Forty tokens"
heads = 2
positions = "rope"
mask = "causal"
decode = true
tokens = [{}]
embeddings = {{ random = "normal", seed = 1, shape = [40, 16] }}
w_q = {{ random = "normal", seed = 2, shape = [16, 16] }}
w_k = {{ random = "normal", seed = 3, shape = [16, 16] }}
w_v = {{ random = "normal", seed = 4, shape = [16, 16] }}
w_o = {{ random = "normal", seed = 5, shape = [16, 16] }}
"#,
        tokens.join(", ")
    ))
}

#[test]
fn opening_the_output_row_at_the_last_token_makes_no_cache_it_reads_the_whole_pass() {
    // Each group's caches were made anew from the steps' keys and values when first looked at:
    // at the last token 537 million multiply-adds at 256 tokens × 16 groups, most of the time
    // opening the output row took. The whole pass's keys and values are those rows already.
    let attention = Attention::compute(&forty_tokens());
    let output = attention.plan.final_decode_output();
    assert!(attention.matrix_at(output, 0, 39).is_some());
    for head in 0..2 {
        for (cache, new, whole) in [
            (MatrixName::KCache, MatrixName::KNewRope, MatrixName::KRope),
            (MatrixName::VCache, MatrixName::VNew, MatrixName::V),
        ] {
            // No step's own key or value was made for the cache (the step opened may make its
            // own).
            let made = attention.made_so_far(new, head);
            assert!(made <= 1, "{new:?} of head {head}: {made} steps' rows made");
            assert_eq!(attention.made_so_far(cache, head), 40, "{cache:?} {head}");
            assert_eq!(
                attention.matrix_at(cache, head, 39).unwrap().as_ptr(),
                attention.matrix_in(whole, head).unwrap().as_ptr(),
                "{cache:?} of head {head} is not the whole pass's {whole:?}"
            );
        }
    }
}

#[test]
fn a_cache_holds_the_rows_each_step_makes_alone_to_the_bit() {
    let lesson = forty_tokens();
    // Each step's key and value made on its own, before any cache.
    let alone = Attention::compute(&lesson);
    let bits = |row: nalgebra::DMatrixView<'_, f64>| -> Vec<u64> {
        row.iter().map(|value| value.to_bits()).collect()
    };
    let mut rows = Vec::new();
    for head in 0..2 {
        for token in 0..40 {
            for name in [MatrixName::KNewRope, MatrixName::VNew] {
                rows.push(bits(alone.matrix_at(name, head, token).unwrap()));
            }
        }
    }
    // The caches first, at the last token then at every other: the whole pass's rows.
    let together = Attention::compute(&lesson);
    let mut index = 0;
    for head in 0..2 {
        let keys = together.matrix_at(MatrixName::KCache, head, 39).unwrap();
        let values = together.matrix_at(MatrixName::VCache, head, 39).unwrap();
        for token in 0..40 {
            assert_eq!(bits(keys.rows(token, 1)), rows[index], "k, {head}, {token}");
            assert_eq!(
                bits(values.rows(token, 1)),
                rows[index + 1],
                "v, {head}, {token}"
            );
            for (name, whole) in [(MatrixName::KCache, &keys), (MatrixName::VCache, &values)] {
                let cache = together.matrix_at(name, head, token).unwrap();
                assert_eq!(cache.nrows(), token + 1);
                assert_eq!(cache, whole.rows(0, token + 1), "{name:?} {head} {token}");
            }
            index += 2;
        }
    }
    for token in 0..40 {
        let check = together.decode_check(token).unwrap();
        assert!(check.agrees, "token {token}: {check:?}");
    }
}

#[test]
fn every_step_of_a_lesson_of_heads_agrees_with_the_causal_pass() {
    let attention = Attention::compute(&two_heads());
    for token in 0..5 {
        let check = attention.decode_check(token).unwrap();
        assert!(check.agrees, "token {token}: {check:?}");
        let weights = attention
            .matrix_at(MatrixName::DecodeWeights, 1, token)
            .unwrap();
        assert_eq!(weights.ncols(), token + 1);
    }
    assert_eq!(attention.decode_check(5), None);
}

#[test]
fn the_multiply_adds_are_counted_for_the_step_and_for_a_whole_pass() {
    let attention = Attention::compute(&lesson(SMALL));
    // Step t = 3 (token 2): q, k, v of one row (3 × 1·2·2), 3 scores of 2 terms, an output
    // row of 2 values over 3 keys.
    let counts = attention.decode_multiply_adds(2);
    assert_eq!(counts.with_cache, 3 * 4 + 3 * 2 + 3 * 2);
    // The whole pass over 3 tokens: Q, K, V of 3 rows (3 × 3·2·2), 3 × 3 scores of 2 terms,
    // 3 output rows of 2 values over 3 keys.
    assert_eq!(counts.without_cache, 3 * 12 + 9 * 2 + 3 * 2 * 3);
    assert_eq!(counts.saved(), counts.without_cache - counts.with_cache);
    // One token's keys and values, 2 numbers each, per step so far.
    assert_eq!(attention.cache_numbers(2), 3 * (2 + 2));
}

#[test]
fn attending_to_the_next_token_is_a_slip_the_practice_names() {
    let attention = Attention::compute(&two_heads());
    // Head 2 scores each later token higher: at "red" (token 2) the next token, "fox", would
    // take most of the weight from it.
    let cell = Cell {
        matrix: MatrixName::DecodeWeights,
        head: 1,
        row: 0,
        col: 1,
        token: 1,
    };
    let exact = attention.value(cell).unwrap();
    let scaled = attention.matrix_in(MatrixName::Scaled, 1).unwrap();
    let ahead: Vec<f64> = (0..3).map(|key| scaled[(1, key)].exp()).collect();
    let slip = ahead[1] / ahead.iter().sum::<f64>();
    assert!((slip - exact).abs() > 0.1, "{slip} vs {exact}");
    let Some(Verdict::Wrong {
        slip: Some(named), ..
    }) = check(&attention, cell, slip, 4)
    else {
        panic!("not named");
    };
    assert_eq!(named.kind, SlipKind::FutureToken);
    assert!(named.describe().contains("tokens after this one"));
    // The last token has no next one to slip to.
    let last = Cell {
        token: 4,
        col: 4,
        ..cell
    };
    let verdict = check(&attention, last, 0.5, 4).unwrap();
    assert!(
        verdict
            .slip()
            .is_none_or(|slip| slip.kind != SlipKind::FutureToken)
    );
}

#[test]
fn show_prints_a_generation_step_at_the_token_asked_for() {
    let fixture = FIXTURE;
    let text = common::show(fixture, &["--step", "kv_cache", "--token", "fox"]);
    assert!(text.contains("At “fox”, token 3 of 5."), "{text}");
    assert!(text.contains("The cache holds 24 numbers"), "{text}");
    let by_number = common::show(fixture, &["--step", "kv_cache", "--token", "3"]);
    assert_eq!(text, by_number);
    // Without --token, the lesson's focus ("fox"), where the tutor opens too; a label as
    // shown, with its position's subscript, names a repeated token.
    let output = common::show(fixture, &["--step", "decode_output"]);
    assert!(output.contains("At “fox”, token 3 of 5."), "{output}");
    assert!(output.contains("Checked: this row and these weights equal row fox"));
    let generation = common::show("generation", &["--step", "new_token", "--token", "the₅"]);
    assert!(
        generation.contains("At “the₅”, token 5 of 6"),
        "{generation}"
    );
    // The new token's one row is named by its position in the sentence too.
    let cell = common::show(
        "generation",
        &["--step", "new_token", "--token", "3", "--cell", "3,1"],
    );
    assert!(cell.contains("q_t[sat, 1] = x_sat · W_q[:, 1]"), "{cell}");
}

#[test]
fn show_refuses_a_token_that_is_not_there() {
    let dir = tempfile::TempDir::new().unwrap();
    let output = common::attn_tutor(&dir)
        .args(["show", FIXTURE, "--token", "9"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("expected a position from 1 to 5"), "{error}");
    let output = common::attn_tutor(&dir)
        .args(["show", "cat-sat-mat", "--token", "1"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("no generation steps"));
}

#[test]
fn the_json_has_one_decode_object_per_token_with_heads_and_groups_nested() {
    let json: serde_json::Value =
        serde_json::from_str(&common::show(FIXTURE, &["--format", "json"])).unwrap();
    let decode = json["decode"].as_array().unwrap();
    assert_eq!(decode.len(), 5);
    let third = &decode[2];
    let mut keys: Vec<&str> = third
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["k_cache", "output", "q", "v_cache", "weights"]);
    // Two heads: q and weights per head; the caches per K/V group, three rows each.
    assert_eq!(third["q"].as_array().unwrap().len(), 2);
    assert_eq!(third["weights"][1].as_array().unwrap().len(), 3);
    assert_eq!(third["k_cache"][0].as_array().unwrap().len(), 3);
    // The output row is the whole pass's row 3, after W_o.
    assert_eq!(third["output"], json["output"][2]);
    // One head: rows, not lists of them.
    let small = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(small.path(), SMALL).unwrap();
    let json: serde_json::Value = serde_json::from_str(&common::show(
        small.path().to_str().unwrap(),
        &["--format", "json"],
    ))
    .unwrap();
    assert_eq!(json["decode"][1]["q"].as_array().unwrap().len(), 2);
    assert!(json["decode"][1]["q"][0].is_number());
    assert_eq!(json["decode"][1]["k_cache"].as_array().unwrap().len(), 2);
    let plain: serde_json::Value =
        serde_json::from_str(&common::show("cat-sat-mat", &["--format", "json"])).unwrap();
    assert!(plain["decode"].is_null());
}

/// What the practice names for `answer` in `cell`, if anything.
fn named(attention: &Attention, cell: Cell, answer: f64) -> Option<SlipKind> {
    match check(attention, cell, answer, 4) {
        Some(Verdict::Wrong { slip, .. }) => slip.map(|slip| slip.kind),
        _ => None,
    }
}

/// Head 2's softmax of row `token` of the whole pass's scaled scores over its first `keys`
/// keys, those `kept` of them.
fn softmax_over(attention: &Attention, token: usize, keys: usize) -> Vec<f64> {
    let scaled = attention.matrix_in(MatrixName::Scaled, 1).unwrap();
    let exps: Vec<f64> = (0..keys).map(|key| scaled[(token, key)].exp()).collect();
    let sum: f64 = exps.iter().sum();
    exps.iter().map(|exp| exp / sum).collect()
}

#[test]
fn forgetting_the_scale_on_a_generation_step_is_named() {
    let attention = Attention::compute(&two_heads());
    let cell = Cell {
        matrix: MatrixName::DecodeWeights,
        head: 1,
        row: 0,
        col: 1,
        token: 2,
    };
    let raw = attention.matrix_at(MatrixName::DecodeScores, 1, 2).unwrap();
    let exps: Vec<f64> = raw.row(0).iter().map(|score| score.exp()).collect();
    let unscaled = exps[1] / exps.iter().sum::<f64>();
    assert!((unscaled - attention.value(cell).unwrap()).abs() > 0.01);
    assert_eq!(
        named(&attention, cell, unscaled),
        Some(SlipKind::ForgotScaling)
    );
}

#[test]
fn attending_to_every_token_of_the_sentence_is_named_as_looking_ahead() {
    let attention = Attention::compute(&two_heads());
    // At "red" (token 2 of 5), weights over all five words, of which red's is typed.
    let every = softmax_over(&attention, 1, 5);
    let cell = Cell {
        matrix: MatrixName::DecodeWeights,
        head: 1,
        row: 0,
        col: 1,
        token: 1,
    };
    assert_eq!(
        named(&attention, cell, every[1]),
        Some(SlipKind::FutureToken)
    );
}

#[test]
fn looking_ahead_is_named_in_the_output_row_too() {
    let attention = Attention::compute(&two_heads());
    // Head 2's output at "red" from weights that gave "fox", the next word, its share.
    let ahead = softmax_over(&attention, 1, 3);
    let values = attention.matrix_at(MatrixName::VCache, 1, 1).unwrap();
    let output: f64 = (0..2).map(|key| ahead[key] * values[(key, 1)]).sum();
    let cell = Cell {
        matrix: MatrixName::DecodeOutput,
        head: 1,
        row: 0,
        col: 1,
        token: 1,
    };
    assert!((output - attention.value(cell).unwrap()).abs() > 0.01);
    assert_eq!(named(&attention, cell, output), Some(SlipKind::FutureToken));
}

#[test]
fn a_saved_lesson_keeps_its_generation_steps() {
    let text = attn_tutor::lesson::lesson_to_toml(&two_heads());
    assert!(text.contains("decode = true"), "{text}");
    let saved = lesson(&text);
    assert!(saved.decode);
    assert_eq!(saved.steps(), two_heads().steps());
}

#[test]
fn a_rotated_new_query_says_its_token_is_at_its_position() {
    let rope = SMALL.replace("format = 2", "format = 2\npositions = \"rope\"");
    let attention = Attention::compute(&lesson(&rope));
    let text = attention
        .derive(Cell::new(MatrixName::QNewRope, 0, 0).at_token(2))
        .unwrap()
        .explain(&attention, 4);
    assert!(text.contains("token 3 is position p = 2"), "{text}");
}

#[test]
fn the_cache_saving_counts_the_forward_pass_alone_with_a_backward_pass_on() {
    // A backward pass is training's work: a model generating with or without a cache does
    // not do it, so it is in neither count.
    let note = |text: &str| {
        text.lines()
            .find(|line| line.contains("multiply-adds"))
            .unwrap_or_else(|| panic!("no count: {text}"))
            .to_string()
    };
    let third = common::show("generation", &["--step", "kv_cache", "--token", "3"]);
    let third_trained = common::show(
        "generation",
        &["--step", "kv_cache", "--token", "3", "--grad-seed", "1"],
    );
    assert!(note(&third).contains("would take 108: 72 more"), "{third}");
    assert_eq!(note(&third), note(&third_trained));
    // At the first token nothing was cached: the cache saves nothing, whatever is trained.
    let first = common::show(
        "generation",
        &["--step", "kv_cache", "--token", "1", "--grad-seed", "1"],
    );
    assert!(
        note(&first).contains("the cache saves nothing yet"),
        "{first}"
    );
    assert!(!note(&first).contains("more"), "{first}");
    // The engine's counts, which the tutor shows after `d`, at every token.
    let mut trained = lesson(SMALL);
    trained.seed_grad_output(1);
    let (plain, trained) = (
        Attention::compute(&lesson(SMALL)),
        Attention::compute(&trained),
    );
    assert!(trained.loss().is_some());
    for token in 0..3 {
        assert_eq!(
            plain.decode_multiply_adds(token),
            trained.decode_multiply_adds(token),
            "token {token}"
        );
    }
    assert_eq!(trained.decode_multiply_adds(0).saved(), 0);
}
