//! Properties of attention that hold for every lesson within the bounds, checked with proptest.

use attn_engine::attention::{Attention, MatrixName, softmax_rows};
use attn_engine::lesson::{Expected, InputMatrix, Inputs, Lesson, Mask, Narration, PositionInputs};
use nalgebra::DMatrix;
use proptest::prelude::*;

/// A lesson that gives Q, K and V directly, so every value is drawn freely within the bounds.
fn direct_lesson(q: DMatrix<f64>, k: DMatrix<f64>, v: DMatrix<f64>, mask: Mask) -> Lesson {
    Lesson {
        title: "property".into(),
        source: String::new(),
        summary: String::new(),
        tokens: (0..q.nrows()).map(|i| format!("t{i}")).collect(),
        source_tokens: Vec::new(),
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
        rope_theta: attn_engine::lesson::DEFAULT_ROPE_THETA,
        token_ids: None,
        format: 1,
        heads: attn_engine::pipeline::Heads::ONE,
        w_o: None,
        grad_output: None,
        focus: None,
        decimals: 3,
        narration: Narration::default(),
        expected: Expected::default(),
    }
}

/// Values across the whole allowed range, with extremes and small numbers both likely.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        -1e6..=1e6f64,
        -10.0..10.0f64,
        Just(1e6),
        Just(-1e6),
        Just(0.0)
    ]
}

fn matrix(rows: usize, cols: usize) -> impl Strategy<Value = DMatrix<f64>> {
    proptest::collection::vec(value(), rows * cols)
        .prop_map(move |values| DMatrix::from_row_slice(rows, cols, &values))
}

/// (Q, K, V) of matching shapes.
fn qkv() -> impl Strategy<Value = (DMatrix<f64>, DMatrix<f64>, DMatrix<f64>)> {
    (1usize..7, 1usize..6, 1usize..6).prop_flat_map(|(seq_len, d_k, d_v)| {
        (
            matrix(seq_len, d_k),
            matrix(seq_len, d_k),
            matrix(seq_len, d_v),
        )
    })
}

/// A mask of 0 and -inf, possibly with fully masked rows.
fn mask(seq_len: usize) -> impl Strategy<Value = Mask> {
    proptest::collection::vec(prop::bool::weighted(0.3), seq_len * seq_len).prop_map(
        move |hidden| {
            Mask::Matrix(DMatrix::from_row_slice(
                seq_len,
                seq_len,
                &hidden
                    .iter()
                    .map(|h| if *h { f64::NEG_INFINITY } else { 0.0 })
                    .collect::<Vec<_>>(),
            ))
        },
    )
}

fn masked_lesson() -> impl Strategy<Value = Lesson> {
    qkv().prop_flat_map(|(q, k, v)| {
        let seq_len = q.nrows();
        mask(seq_len).prop_map(move |mask| direct_lesson(q.clone(), k.clone(), v.clone(), mask))
    })
}

proptest! {
    #[test]
    fn each_weights_row_sums_to_one_or_is_zero_when_fully_masked(lesson in masked_lesson()) {
        let attention = Attention::compute(&lesson);
        for row in 0..lesson.seq_len() {
            let sum: f64 = attention.weights().row(row).iter().sum();
            if attention.softmax_of(0).unwrap().fully_masked[row] {
                prop_assert!(attention.weights().row(row).iter().all(|w| *w == 0.0));
            } else {
                prop_assert!((sum - 1.0).abs() < 1e-9, "row {} sums to {}", row, sum);
            }
        }
    }

    #[test]
    fn no_nan_or_infinity_anywhere_for_finite_input(lesson in masked_lesson()) {
        let attention = Attention::compute(&lesson);
        prop_assert!(attention.matrix(MatrixName::Scores).unwrap().iter().all(|v| v.is_finite()));
        prop_assert!(attention.weights().iter().all(|v| v.is_finite() && *v >= 0.0));
        prop_assert!(attention.matrix(MatrixName::Output).unwrap().iter().all(|v| v.is_finite()));
    }

    #[test]
    fn weights_do_not_change_when_a_constant_is_added_to_a_score_row(
        scores in (1usize..6, 1usize..6).prop_flat_map(|(r, c)| matrix(r, c)),
        shift in -1e6..1e6f64,
    ) {
        let shifted = DMatrix::from_fn(scores.nrows(), scores.ncols(), |r, c| {
            scores[(r, c)] + if r == 0 { shift } else { 0.0 }
        });
        let (before, after) = (softmax_rows(&scores).weights, softmax_rows(&shifted).weights);
        for (a, b) in before.iter().zip(after.iter()) {
            // Adding a shift of up to 1e6 to scores of up to 1e6 loses low bits of the scores;
            // the weights agree to what those bits allow.
            prop_assert!((a - b).abs() < 1e-6, "{} vs {}", a, b);
        }
    }

    #[test]
    fn permuting_the_tokens_permutes_the_output(
        (q, k, v) in qkv(),
        seed in any::<u64>(),
    ) {
        let seq_len = q.nrows();
        // A permutation from the seed (Fisher–Yates with a simple LCG).
        let mut order: Vec<usize> = (0..seq_len).collect();
        let mut state = seed;
        for i in (1..seq_len).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            order.swap(i, (state >> 33) as usize % (i + 1));
        }
        let permute = |m: &DMatrix<f64>| DMatrix::from_fn(m.nrows(), m.ncols(), |r, c| m[(order[r], c)]);
        let original = Attention::compute(&direct_lesson(q.clone(), k.clone(), v.clone(), Mask::None));
        let permuted = Attention::compute(&direct_lesson(permute(&q), permute(&k), permute(&v), Mask::None));
        for (r, source) in order.iter().enumerate() {
            for c in 0..v.ncols() {
                let (a, b) = (permuted.matrix(MatrixName::Output).unwrap()[(r, c)], original.matrix(MatrixName::Output).unwrap()[(*source, c)]);
                prop_assert!((a - b).abs() <= 1e-9 * (1.0 + a.abs()), "{} vs {}", a, b);
            }
        }
    }

    #[test]
    fn each_output_lies_within_the_range_of_the_values(lesson in masked_lesson()) {
        let attention = Attention::compute(&lesson);
        let v = attention.matrix(MatrixName::V).unwrap();
        for row in 0..lesson.seq_len() {
            if attention.softmax_of(0).unwrap().fully_masked[row] {
                continue;
            }
            for col in 0..v.ncols() {
                let (low, high) = v.column(col).iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| (l.min(*x), h.max(*x)));
                let out = attention.matrix(MatrixName::Output).unwrap()[(row, col)];
                let slack = 1e-9 * (1.0 + low.abs().max(high.abs()));
                prop_assert!(out >= low - slack && out <= high + slack, "{} not in [{}, {}]", out, low, high);
            }
        }
    }

    #[test]
    fn extreme_scores_of_a_million_give_finite_weights(sign in prop::sample::select(vec![-1.0, 1.0]), seq_len in 1usize..6) {
        let scores = DMatrix::from_fn(seq_len, seq_len, |r, c| sign * 1e6 * ((r + c) % 3) as f64);
        let softmax = softmax_rows(&scores);
        prop_assert!(softmax.weights.iter().all(|w| w.is_finite()));
    }
}

/// A lesson that generates its tokens one at a time with a K/V cache: projected from
/// embeddings, with `heads` query heads sharing `kv` groups, W_o, and positions.
fn decoding_lesson(
    [embeddings, w_q, w_k, w_v, w_o]: [DMatrix<f64>; 5],
    (query, kv): (usize, usize),
    positions: PositionInputs,
    scale: bool,
) -> Lesson {
    Lesson {
        title: "decoding property".into(),
        source: String::new(),
        summary: String::new(),
        tokens: (0..embeddings.nrows()).map(|i| format!("t{i}")).collect(),
        source_tokens: Vec::new(),
        source_embeddings: None,
        inputs: Inputs::Projected {
            embeddings: InputMatrix::literal(embeddings),
            w_q: InputMatrix::literal(w_q),
            w_k: InputMatrix::literal(w_k),
            w_v: InputMatrix::literal(w_v),
        },
        scale,
        mask: Mask::Causal,
        decode: true,
        norm: None,
        biases: Default::default(),
        tile: 2,
        positions,
        rope_pairing: Default::default(),
        rope_theta: attn_engine::lesson::DEFAULT_ROPE_THETA,
        token_ids: None,
        format: 2,
        heads: attn_engine::pipeline::Heads { query, kv },
        w_o: Some(InputMatrix::literal(w_o)),
        grad_output: None,
        focus: None,
        decimals: 3,
        narration: Narration::default(),
        expected: Expected::default(),
    }
}

/// Decoding lessons of 1–7 tokens, 1–4 heads over every divisor of them as K/V groups, with
/// no positions, sinusoidal ones or rope, scaled or not.
fn decoding() -> impl Strategy<Value = Lesson> {
    (
        1usize..8,
        prop::sample::select(vec![(1, 1), (2, 1), (2, 2), (4, 1), (4, 2), (4, 4)]),
        1usize..3,
        prop::sample::select(vec![0, 1, 2]),
        any::<bool>(),
    )
        .prop_flat_map(|(seq_len, (query, kv), half_d_k, positions, scale)| {
            let d_k = 2 * half_d_k;
            let d_model = 4;
            let small = || -3.0..3.0f64;
            let of = move |rows: usize, cols: usize| {
                proptest::collection::vec(small(), rows * cols)
                    .prop_map(move |values| DMatrix::from_row_slice(rows, cols, &values))
            };
            (
                of(seq_len, d_model),
                of(d_model, query * d_k),
                of(d_model, kv * d_k),
                of(d_model, kv * d_k),
                of(query * d_k, 3),
            )
                .prop_map(move |(embeddings, w_q, w_k, w_v, w_o)| {
                    let positions = match positions {
                        0 => PositionInputs::None,
                        1 => PositionInputs::Sinusoidal,
                        _ => PositionInputs::Rope,
                    };
                    let matrices = [embeddings, w_q, w_k, w_v, w_o];
                    decoding_lesson(matrices, (query, kv), positions, scale)
                })
        })
}

proptest! {
    #[test]
    fn every_step_of_generation_gives_the_causal_passs_row(lesson in decoding()) {
        let attention = Attention::compute(&lesson);
        for token in 0..lesson.tokens.len() {
            let check = attention.decode_check(token).expect("a decoding lesson checks each step");
            prop_assert!(check.agrees, "token {token}: {check:?}");
            prop_assert!(check.largest_difference <= 1e-9, "token {token}: {check:?}");
        }
    }

    #[test]
    fn the_cache_after_step_t_holds_t_rows_of_every_groups_keys_and_values(lesson in decoding()) {
        let attention = Attention::compute(&lesson);
        let heads = lesson.heads;
        for token in 0..lesson.tokens.len() {
            let d_k = attention.d_k();
            prop_assert_eq!(attention.cache_numbers(token), (token + 1) * heads.kv * 2 * d_k);
            for head in 0..heads.query {
                let cache = attention.matrix_at(MatrixName::KCache, head, token).unwrap();
                prop_assert_eq!(cache.nrows(), token + 1);
            }
        }
    }
}
