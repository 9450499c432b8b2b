//! FlashAttention's online softmax: m, l and acc tile by tile over every head's softmax input,
//! acc / l after the last tile against the head's output (every built-in lesson and random
//! masked lessons, fully masked rows included), the rescale exactly when the maximum rises,
//! the `tile` key, and the `"online"` JSON. Expected numbers are recomputed here from the
//! softmax input directly, never with the tiles under test.

use crate::common;
use common::*;

use attn_tutor::attention::{Attention, MatrixName, Tile};
use attn_tutor::lesson::{
    BUILTIN, Expected, InputMatrix, Inputs, Lesson, Mask, Narration, PositionInputs,
    lesson_to_toml, load_text, parse,
};
use attn_tutor::pipeline::Heads;
use nalgebra::DMatrix;
use proptest::prelude::*;
use serde_json::Value;

/// The tiles every lesson is tried with: 1 to 4 keys, and one more than the lesson's keys
/// (added per lesson).
const TILES: [usize; 4] = [1, 2, 3, 4];

fn tiles_for(keys: usize) -> Vec<usize> {
    let mut tiles = TILES.to_vec();
    tiles.push(keys + 1);
    tiles
}

/// Asserts that, after every tile, m, l and acc are what the keys read so far give when
/// summed directly against their own maximum, that a row was rescaled exactly when its maximum
/// rose (by e^(m_before − m)), and that acc / l after the last tile is the head's output.
fn check_head(attention: &Attention, head: usize, tile: usize) -> Result<(), String> {
    let scores = attention
        .matrix_in(attention.softmax_input(), head)
        .ok_or("no softmax input")?;
    let values = attention
        .matrix_in(MatrixName::V, head)
        .ok_or("no values")?;
    let output = attention
        .matrix_in(MatrixName::Output, head)
        .ok_or("no output")?;
    let online = attention
        .online_softmax(head, tile)
        .ok_or("no online softmax")?;
    let keys = scores.ncols();
    let tiles: Vec<Tile> = online.tiles().collect();
    if tiles.len() != keys.div_ceil(tile) || online.tile_count() != tiles.len() {
        return Err(format!("{} tiles of {tile} for {keys} keys", tiles.len()));
    }
    let mut next = 0;
    for (index, step) in tiles.iter().enumerate() {
        if step.first != next || step.last != (next + tile - 1).min(keys - 1) {
            return Err(format!(
                "tile {index} is keys {}..={}",
                step.first, step.last
            ));
        }
        next = step.last + 1;
        for row in 0..scores.nrows() {
            let seen = (0..=step.last).map(|key| scores[(row, key)]);
            let m = seen.clone().fold(f64::NEG_INFINITY, f64::max);
            if step.max[row] != m {
                return Err(format!("tile {index} row {row}: m {} ≠ {m}", step.max[row]));
            }
            let raised = step.max[row] > step.max_before[row];
            if step.rescaled(row) != raised {
                return Err(format!(
                    "tile {index} row {row}: rescaled {} but m went {} → {}",
                    step.rescaled(row),
                    step.max_before[row],
                    step.max[row]
                ));
            }
            if let Some(factor) = step.rescale[row] {
                let want = (step.max_before[row] - step.max[row]).exp();
                if factor != want || !(0.0..1.0).contains(&factor) {
                    return Err(format!("tile {index} row {row}: factor {factor} ≠ {want}"));
                }
            }
            // l and acc straight from the keys seen, against today's maximum.
            let exps: Vec<f64> = (0..=step.last)
                .map(|key| {
                    let s = scores[(row, key)];
                    if s == f64::NEG_INFINITY {
                        0.0
                    } else {
                        (s - m).exp()
                    }
                })
                .collect();
            let l: f64 = exps.iter().sum();
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            if !close(step.sum[row], l) {
                return Err(format!("tile {index} row {row}: l {} ≠ {l}", step.sum[row]));
            }
            for col in 0..values.ncols() {
                let acc: f64 = exps
                    .iter()
                    .enumerate()
                    .map(|(key, e)| e * values[(key, col)])
                    .sum();
                let got = step.acc[(row, col)];
                if !got.is_finite() || !close(got, acc) {
                    return Err(format!("tile {index} row {row}: acc[{col}] {got} ≠ {acc}"));
                }
            }
        }
    }
    let last = tiles.last().ok_or("no tiles")?;
    for row in 0..scores.nrows() {
        for col in 0..values.ncols() {
            let mine = if last.sum[row] > 0.0 {
                last.acc[(row, col)] / last.sum[row]
            } else {
                0.0
            };
            if (mine - output[(row, col)]).abs() > 1e-9 {
                return Err(format!(
                    "row {row} col {col}: acc / l = {mine}, output {}",
                    output[(row, col)]
                ));
            }
        }
    }
    let check = attention
        .online_check(head, tile)
        .ok_or("no online check")?;
    if !check.agrees || check.largest_difference > 1e-9 {
        return Err(format!("the engine's check: {check:?}"));
    }
    Ok(())
}

#[test]
fn every_built_in_lesson_ends_at_its_output_for_every_head_and_tile() {
    for builtin in BUILTIN {
        let lesson = load_text(builtin.name, None, builtin.text.to_string())
            .unwrap_or_else(|_| panic!("{} loads", builtin.name))
            .lesson;
        let attention = Attention::compute(&lesson);
        for tile in tiles_for(lesson.key_len()) {
            for head in 0..lesson.heads.query {
                if let Err(problem) = check_head(&attention, head, tile) {
                    panic!("{} head {head} tile {tile}: {problem}", builtin.name);
                }
            }
        }
    }
}

/// A lesson giving Q, K and V directly: `heads` query heads over `kv` groups, self-attention
/// or cross-attention (`source` keys), with a mask.
fn direct_lesson(
    (q, k, v, w_o): (DMatrix<f64>, DMatrix<f64>, DMatrix<f64>, DMatrix<f64>),
    heads: Heads,
    source: Option<usize>,
    mask: Mask,
) -> Lesson {
    Lesson {
        title: "online".into(),
        source: String::new(),
        summary: String::new(),
        tokens: (0..q.nrows()).map(|i| format!("t{i}")).collect(),
        source_tokens: source
            .map(|keys| (0..keys).map(|i| format!("s{i}")).collect())
            .unwrap_or_default(),
        source_embeddings: None,
        inputs: Inputs::Direct {
            q: InputMatrix::literal(q),
            k: InputMatrix::literal(k),
            v: InputMatrix::literal(v),
        },
        scale: true,
        mask,
        decode: false,
        norm: None,
        biases: Default::default(),
        tile: 2,
        positions: PositionInputs::None,
        rope_pairing: Default::default(),
        rope_theta: attn_tutor::lesson::DEFAULT_ROPE_THETA,
        token_ids: None,
        format: 2,
        heads,
        w_o: (heads.query > 1).then(|| InputMatrix::literal(w_o)),
        grad_output: None,
        focus: None,
        decimals: 3,
        narration: Narration::default(),
        expected: Expected::default(),
    }
}

fn matrix(rows: usize, cols: usize, range: f64) -> impl Strategy<Value = DMatrix<f64>> {
    proptest::collection::vec(-range..range, rows * cols)
        .prop_map(move |values| DMatrix::from_row_slice(rows, cols, &values))
}

/// Random lessons of 1–7 queries and 1–9 keys (cross-attention half the time), 1, 2 or 4
/// heads over their groups, and a mask of 0 and -inf that hides a third of the keys and,
/// often, every key of one row.
fn masked_lessons() -> impl Strategy<Value = Lesson> {
    (
        1usize..8,
        1usize..10,
        any::<bool>(),
        prop::sample::select(vec![(1, 1), (2, 1), (2, 2), (4, 2)]),
        1usize..4,
        1usize..4,
    )
        .prop_flat_map(|(queries, keys, cross, (query, kv), d_k, d_v)| {
            let keys = if cross { keys } else { queries };
            (
                matrix(queries, query * d_k, 3.0),
                matrix(keys, kv * d_k, 3.0),
                matrix(keys, kv * d_v, 10.0),
                matrix(query * d_v, 2, 1.0),
                proptest::collection::vec(prop::bool::weighted(0.3), queries * keys),
                proptest::option::of(0..queries),
            )
                .prop_map(move |(q, k, v, w_o, hidden, blank)| {
                    let mask = DMatrix::from_fn(queries, keys, |row, col| {
                        if Some(row) == blank || hidden[row * keys + col] {
                            f64::NEG_INFINITY
                        } else {
                            0.0
                        }
                    });
                    direct_lesson(
                        (q, k, v, w_o),
                        Heads { query, kv },
                        cross.then_some(keys),
                        Mask::Matrix(mask),
                    )
                })
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_masked_lessons_end_at_their_output_for_every_head_and_tile(
        lesson in masked_lessons()
    ) {
        let attention = Attention::compute(&lesson);
        for tile in tiles_for(lesson.key_len()) {
            for head in 0..lesson.heads.query {
                if let Err(problem) = check_head(&attention, head, tile) {
                    prop_assert!(false, "head {} tile {}: {}", head, tile, problem);
                }
            }
        }
    }

    #[test]
    fn a_fully_masked_row_keeps_minus_infinity_zero_and_zero_and_outputs_zero(
        lesson in masked_lessons()
    ) {
        let attention = Attention::compute(&lesson);
        for row in attention.fully_masked_rows().collect::<Vec<_>>() {
            for tile in tiles_for(lesson.key_len()) {
                let online = attention.online_softmax(0, tile).unwrap();
                for step in online.tiles() {
                    prop_assert_eq!(step.max[row], f64::NEG_INFINITY);
                    prop_assert_eq!(step.sum[row], 0.0);
                    prop_assert_eq!(step.rescale[row], None);
                    prop_assert!(step.acc.row(row).iter().all(|a| *a == 0.0));
                }
                prop_assert!(online.output().row(row).iter().all(|a| *a == 0.0));
            }
        }
    }
}

/// Q, K and V of three tokens whose scaled scores are, per row, a: [0.7071, 0, 1.4142],
/// b: [0, 0.7071, 1.4142], c: [0.7071, 0.7071, 2.8284].
const THREE_KEYS: &str = r#"format = 2
title = "Three keys, one at a time"
tokens = ["a", "b", "c"]
q = [[1, 0], [0, 1], [1, 1]]
k = [[1, 0], [0, 1], [2, 2]]
v = [[1, 2], [3, 4], [5, 6]]
tile = 1
"#;

#[test]
fn a_row_is_rescaled_in_the_tile_that_raises_its_maximum_and_in_no_other() {
    let lesson = load_text("three", None, THREE_KEYS.to_string())
        .unwrap()
        .lesson;
    assert_eq!(lesson.tile, 1);
    let attention = Attention::compute(&lesson);
    let tiles: Vec<Tile> = attention
        .online_softmax(0, lesson.tile)
        .unwrap()
        .tiles()
        .collect();
    let half = 1.0 / 2f64.sqrt();
    let near = |got: &[f64], want: &[f64]| {
        got.len() == want.len() && got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-12)
    };
    let factors = |tile: &Tile| -> Vec<f64> { tile.rescale.iter().flatten().copied().collect() };
    // Tile 1 (key a): every row's maximum rises from -inf, by a factor e^(−inf) = 0 on l = 0.
    assert_eq!(tiles[0].rescale, vec![Some(0.0); 3]);
    assert!(
        near(&tiles[0].max, &[half, 0.0, half]),
        "{:?}",
        tiles[0].max
    );
    assert_eq!(tiles[0].sum, vec![1.0, 1.0, 1.0]);
    // Tile 2 (key b): only row b's maximum rises, 0 → 1/√2: its l = 1 becomes e^(−1/√2).
    assert!(!tiles[1].rescaled(0) && tiles[1].rescaled(1) && !tiles[1].rescaled(2));
    assert!(near(&factors(&tiles[1]), &[(-half).exp()]));
    assert_eq!(tiles[1].max_before[1], 0.0);
    assert!((tiles[1].sum[1] - ((-half).exp() + 1.0)).abs() < 1e-12);
    // Row a's second key is below its maximum: e^(0 − 1/√2) added, nothing multiplied.
    assert!((tiles[1].sum[0] - (1.0 + (-half).exp())).abs() < 1e-12);
    // Tile 3 (key c): every row's maximum rises, a and b by e^(1/√2 − √2), c by e^(1/√2 − 2√2).
    let (root2, c_max) = (2f64.sqrt(), 2.0 * 2f64.sqrt());
    assert!((0..3).all(|row| tiles[2].rescaled(row)));
    assert!(near(
        &factors(&tiles[2]),
        &[
            (half - root2).exp(),
            (half - root2).exp(),
            (half - c_max).exp()
        ]
    ));
    // acc of row a after key c: (v_a + e^(−1/√2)·v_b)·e^(1/√2 − √2) + v_c.
    let factor = (half - root2).exp();
    let e = (-half).exp();
    let want = [
        (1.0 + e * 3.0) * factor + 5.0,
        (2.0 + e * 4.0) * factor + 6.0,
    ];
    for (col, want) in want.into_iter().enumerate() {
        assert!((tiles[2].acc[(0, col)] - want).abs() < 1e-12);
    }
    let check = attention.online_check(0, 1).unwrap();
    assert!(
        check.agrees && check.largest_difference < 1e-12,
        "{check:?}"
    );
}

#[test]
fn a_tile_larger_than_the_keys_is_one_tile_and_the_last_tile_is_cut_at_the_last_key() {
    let lesson = load_text("three", None, THREE_KEYS.to_string())
        .unwrap()
        .lesson;
    let attention = Attention::compute(&lesson);
    let one = attention.online_softmax(0, 256).unwrap();
    let tiles: Vec<Tile> = one.tiles().collect();
    assert_eq!(tiles.len(), 1);
    assert_eq!(tiles[0].keys(), 0..=2);
    let two: Vec<Tile> = attention.online_softmax(0, 2).unwrap().tiles().collect();
    let keys: Vec<_> = two.iter().map(Tile::keys).collect();
    assert_eq!(keys, vec![0..=1, 2..=2]);
    assert_eq!(
        attention.online_softmax(0, 2).unwrap().tile_at(1),
        Some(two[1].clone())
    );
    assert_eq!(attention.online_softmax(0, 2).unwrap().tile_at(2), None);
    assert!(attention.online_softmax(1, 2).is_none(), "one head only");
}

#[test]
fn the_tile_is_2_when_a_lesson_does_not_say_and_is_kept_when_the_lesson_is_written() {
    let without = THREE_KEYS.replace("tile = 1\n", "");
    let lesson = load_text("three", None, without).unwrap().lesson;
    assert_eq!(lesson.tile, 2);
    assert!(
        !lesson_to_toml(&lesson).contains("tile"),
        "the default is not written"
    );
    for tile in [1, 5, 256] {
        let text = THREE_KEYS.replace("tile = 1", &format!("tile = {tile}"));
        let lesson = load_text("three", None, text).unwrap().lesson;
        assert_eq!(lesson.tile, tile);
        let written = lesson_to_toml(&lesson);
        let again = parse(&written).lesson.expect("the written lesson parses");
        assert_eq!(again.tile, tile, "{written}");
    }
}

#[test]
fn a_bad_tile_is_named_at_its_value_with_what_would_be_right() {
    for (written, says) in [
        ("0", "found 0: a tile holds at least one key"),
        ("-3", "found -3"),
        ("2.5", "found 2.5, which is not a whole number"),
        ("4.0", "found 4.0, a number with a point"),
        ("\"2\"", "found a string"),
        ("257", "found 257, more keys than a lesson can have"),
        ("99999999999999999999", "more keys than a lesson can have"),
    ] {
        let text = THREE_KEYS.replace("tile = 1", &format!("tile = {written}"));
        let parsed = parse(&text);
        assert!(parsed.lesson.is_none(), "tile = {written} is refused");
        let errors: Vec<_> = parsed.errors().collect();
        assert_eq!(errors.len(), 1, "tile = {written}: {errors:?}");
        let error = errors[0];
        assert!(
            error.message.contains("from 1 to 256") && error.message.contains(says),
            "tile = {written}: {}",
            error.message
        );
        let at = text.find("tile = ").unwrap() + "tile = ".len();
        assert_eq!(error.span, at..at + written.len(), "tile = {written}");
    }
    let format_1 = THREE_KEYS.replace("format = 2", "format = 1");
    let parsed = parse(&format_1);
    let errors: Vec<_> = parsed.errors().collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].message, "`tile` needs `format = 2`");
    let at = format_1.find("tile").unwrap();
    assert_eq!(errors[0].span, at..at + "tile".len());
}

/// Every head's `"online"` in the JSON: its keys, one step per tile with the tile's keys, m and
/// l per query row and an acc row of d_v per query row, and acc / l of the last step equal to
/// the head's `"output"`.
fn check_json(json: &Value, tile: usize, keys: usize) {
    let tokens = json["tokens"].as_array().unwrap().len();
    // The tutor's per-tile matrices are in "online" only, never beside the whole-pass ones.
    for kept_apart in ["m", "rescale", "l", "acc"] {
        assert!(json.get(kept_apart).is_none(), "top-level {kept_apart:?}");
        for fields in json["heads"].as_array().unwrap() {
            assert!(fields.get(kept_apart).is_none(), "a head's {kept_apart:?}");
        }
    }
    for (head, fields) in json["heads"].as_array().unwrap().iter().enumerate() {
        let online = fields["online"].as_object().expect("an object");
        let mut names: Vec<&str> = online.keys().map(String::as_str).collect();
        names.sort();
        assert_eq!(names, ["steps", "tile"]);
        assert_eq!(online["tile"], tile);
        let steps = online["steps"].as_array().unwrap();
        assert_eq!(steps.len(), keys.div_ceil(tile), "head {head}");
        let d_v = fields["v"][0].as_array().unwrap().len();
        for (index, step) in steps.iter().enumerate() {
            let mut names: Vec<&str> = step
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            names.sort();
            assert_eq!(names, ["acc", "keys", "l", "m"]);
            let first = index * tile;
            assert_eq!(
                step["keys"],
                serde_json::json!([first, (first + tile - 1).min(keys - 1)])
            );
            assert_eq!(step["m"].as_array().unwrap().len(), tokens);
            assert_eq!(step["l"].as_array().unwrap().len(), tokens);
            let acc = step["acc"].as_array().unwrap();
            assert_eq!(acc.len(), tokens);
            assert!(acc.iter().all(|row| row.as_array().unwrap().len() == d_v));
        }
        let last = steps.last().unwrap();
        for row in 0..tokens {
            let l = last["l"][row].as_f64().unwrap();
            for col in 0..d_v {
                let acc = last["acc"][row][col].as_f64().unwrap();
                let output = fields["output"][row][col].as_f64().unwrap();
                let mine = if l > 0.0 { acc / l } else { 0.0 };
                assert!((mine - output).abs() <= 1e-9, "head {head} [{row}, {col}]");
            }
        }
    }
}

#[test]
fn the_json_of_every_head_has_the_online_softmax_at_the_lessons_tile() {
    for (name, keys) in [
        ("cat-sat-mat", 6),
        ("two-heads", 5),
        ("gqa", 0),
        ("translation", 5),
    ] {
        let json: Value = serde_json::from_str(&show(name, &["--format", "json"])).unwrap();
        let keys = if keys == 0 {
            json["tokens"].as_array().unwrap().len()
        } else {
            keys
        };
        check_json(&json, 2, keys);
    }
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("three.toml");
    for tile in [1, 3, 4] {
        let text = THREE_KEYS.replace("tile = 1", &format!("tile = {tile}"));
        std::fs::write(&path, text).unwrap();
        let json: Value =
            serde_json::from_str(&show(path.to_str().unwrap(), &["--format", "json"])).unwrap();
        check_json(&json, tile, 3);
    }
}

#[test]
fn a_fully_masked_row_is_minus_infinity_in_the_json_and_its_output_is_zero() {
    let text = THREE_KEYS.replace(
        "tile = 1",
        "tile = 2\nmask = [[0, -inf, 0], [-inf, -inf, -inf], [-inf, 0, 0]]",
    );
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("masked.toml");
    std::fs::write(&path, text).unwrap();
    let json: Value =
        serde_json::from_str(&show(path.to_str().unwrap(), &["--format", "json"])).unwrap();
    check_json(&json, 2, 3);
    let steps = json["heads"][0]["online"]["steps"].as_array().unwrap();
    for step in steps {
        assert_eq!(step["m"][1], "-inf");
        assert_eq!(step["l"][1], 0.0);
        assert_eq!(step["acc"][1], serde_json::json!([0.0, 0.0]));
    }
    // Row c's first tile holds a visible key b only: m is b's score, a's -inf adds nothing.
    assert_eq!(steps[0]["l"][2], 1.0);
    assert_eq!(json["heads"][0]["output"][1], serde_json::json!([0.0, 0.0]));
}
