//! Random lessons of every kind agree with an independent numpy reference to 1e-9 of each value.
//!
//! The lessons (positions sinusoidal, learned, rope or none; causal and written masks with -inf
//! and finite biases; scale off; Q, K and V given directly; 1 to 16 heads in any number of K/V
//! groups that divides them, with W_o; and cross-attention: a target of seq_len tokens reading a
//! source of another length, with 1 to 8 heads and each divisor of them as K/V groups; and
//! generation with a K/V cache, `decode = true`, whose every step the reference makes again one
//! token at a time as a decoder does) are drawn from a fixed seed, shown by the binary as JSON,
//! and compared in one run of `tests/reference/attention.py`, which reads the same files with
//! Python's tomllib and computes every matrix with numpy.
//!
//! The interpreter is `ATTN_PYTHON`, else the first of `python3` and `/usr/bin/python3` that
//! imports numpy; without one the tests are skipped, except under CI where they fail.
//! `ATTN_NUMPY_FORMAT1_ONLY=1` draws format 1 lessons only (no cross-attention) and compares only
//! the keys format 1 has always had, for a binary that predates format 2.

use crate::common;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use tempfile::TempDir;

/// How many random self-attention lessons one run compares.
const SELF_LESSONS: u64 = 200;

/// How many random cross-attention lessons follow them (lessons 200 to 319).
const CROSS_LESSONS: u64 = 120;

/// How many random lessons with `decode = true` follow those (lessons 320 to 399):
/// self-attention with the causal mask, 1 to 8 heads in every number of K/V groups that
/// divides them.
const DECODE_LESSONS: u64 = 80;

/// The first decoding lesson.
const FIRST_DECODE: u64 = SELF_LESSONS + CROSS_LESSONS;

/// The lessons of one run: the cross-attention and decoding ones need format 2.
fn lesson_count() -> u64 {
    if format1_only() {
        SELF_LESSONS
    } else {
        SELF_LESSONS + CROSS_LESSONS + DECODE_LESSONS
    }
}

/// The largest Σ|q·k| a score may gather. Two correct programs may add the terms of a dot
/// product in different orders, which moves the result by up to a few ulps of that sum; kept
/// under 1e5, that is under 1e-10, well inside the 1e-9 agreement even when the terms cancel.
const MAX_SCORE_TERMS: f64 = 1e5;

fn reference() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference/attention.py")
}

fn format1_only() -> bool {
    std::env::var_os("ATTN_NUMPY_FORMAT1_ONLY").is_some_and(|value| !value.is_empty())
}

/// Runs the reference over (lesson, JSON) pairs; returns whether all agree, and its report.
fn run_reference(python: &OsString, pairs: &[(PathBuf, PathBuf)]) -> (bool, String) {
    let mut command = Command::new(python);
    command.arg(reference()).stdin(Stdio::null());
    if format1_only() {
        command.arg("--format1-only");
    }
    for (lesson, json) in pairs {
        command.arg(lesson).arg(json);
    }
    let output = command.output().expect("the reference runs");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), report)
}

/// SplitMix64 (Steele, Lea and Flood 2014): a few lines, the same numbers on every machine
/// and every version of every crate.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A whole number in 0..n.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A number in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn chance(&mut self, probability: f64) -> bool {
        self.unit() < probability
    }
}

/// The spans of magnitude a matrix's cells come from: ±(1 to 10) × 10^e, e in the range.
const MAGNITUDES: [(i32, i32); 4] = [(-6, -3), (-3, -1), (-1, 0), (-4, 1)];

type Matrix = Vec<Vec<f64>>;

/// One cell: mostly ±(1 to 10) × 10^e, sometimes 0 or a small whole number.
fn cell(draw: &mut Draw, (lowest, highest): (i32, i32)) -> f64 {
    match draw.below(20) {
        0 => 0.0,
        1 => draw.below(11) as f64 - 5.0,
        _ => {
            let sign = if draw.chance(0.5) { -1.0 } else { 1.0 };
            let exponent = lowest + draw.below((highest - lowest + 1) as usize) as i32;
            sign * (1.0 + 9.0 * draw.unit()) * 10f64.powi(exponent)
        }
    }
}

fn matrix(draw: &mut Draw, rows: usize, cols: usize) -> Matrix {
    let magnitude = MAGNITUDES[draw.below(MAGNITUDES.len())];
    (0..rows)
        .map(|_| (0..cols).map(|_| cell(draw, magnitude)).collect())
        .collect()
}

/// A number as TOML, exactly the f64: Rust's `{:?}` is the shortest text that reads back as
/// the same f64. Whole numbers are written as TOML integers, which lessons also take.
fn number(value: f64) -> String {
    if value == f64::NEG_INFINITY {
        "-inf".to_string()
    } else if value.fract() == 0.0 && value.abs() < 1e6 {
        format!("{}", value as i64)
    } else {
        format!("{value:?}")
    }
}

/// `"t0", "t1", …`: token labels with a prefix (t for the target, s for the source).
fn labels(prefix: &str, count: usize) -> String {
    (0..count)
        .map(|token| format!("\"{prefix}{token}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

fn toml_matrix(matrix: &Matrix) -> String {
    let rows: Vec<String> = matrix
        .iter()
        .map(|row| {
            let cells: Vec<String> = row.iter().map(|&value| number(value)).collect();
            format!("  [{}],", cells.join(", "))
        })
        .collect();
    format!("[\n{}\n]", rows.join("\n"))
}

fn largest(matrix: &Matrix) -> f64 {
    matrix
        .iter()
        .flatten()
        .fold(0.0, |top, value| top.max(value.abs()))
}

fn divide(matrix: &mut Matrix, by: f64) {
    matrix.iter_mut().flatten().for_each(|value| *value /= by);
}

/// Where a lesson's positions come from.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Positions {
    /// No `positions` key (the default, none).
    Unsaid,
    None,
    Sinusoidal,
    Learned,
    Rope,
}

/// Self-attention's kinds of positions, in the order the lessons cycle through them.
const SELF_POSITIONS: [Positions; 5] = [
    Positions::Unsaid,
    Positions::None,
    Positions::Sinusoidal,
    Positions::Learned,
    Positions::Rope,
];

#[derive(Clone, Copy, PartialEq, Debug)]
enum MaskKind {
    Unsaid,
    None,
    Causal,
    Written,
}

/// One drawn lesson: its file text and what it covers.
struct Drawn {
    text: String,
    format: u32,
    positions: Positions,
    direct: bool,
    mask: MaskKind,
    fully_masked_row: bool,
    /// Whether a written mask hides any key (-inf).
    hides_a_key: bool,
    finite_bias: bool,
    scale: Option<bool>,
    tokens: usize,
    /// The number of source tokens in a cross-attention lesson.
    source: Option<usize>,
    d_model: usize,
    d_k: usize,
    /// Query heads H and K/V groups G (G divides H; both 1 in format 1).
    heads: usize,
    kv_heads: usize,
    /// Whether `kv_heads` is written (unsaid, it is H).
    kv_said: bool,
    w_o: bool,
    /// `decode` as written: `Some(true)` generates with a K/V cache, `Some(false)` says it
    /// does not, `None` leaves it unsaid (it does not).
    decode: Option<bool>,
    /// `tile` as written (format 2): the keys the online softmax takes at a time, sometimes
    /// more than the lesson has; unsaid, 2.
    tile: Option<usize>,
    /// `grad_output` is given (format 2): the backward pass, which numpy works out too.
    backward: bool,
    /// `rope_pairing = "half"` (with RoPE): column i turned with column i + d_k/2.
    rope_half: bool,
    /// `rope_theta` as written (with RoPE); unsaid, 10000.
    rope_theta: Option<f64>,
}

/// The heads H, K/V groups G and whether W_o is given that the decoding lessons take in turn:
/// one head without W_o, then every H from 1 to 8 with every divisor of it as G, with W_o (which
/// several heads need). Their number, 21, has no factor in common with the 5 kinds of
/// positions, so over the 80 lessons every shape comes 3 or 4 times, each time with another
/// kind of positions (and with at least two of the three scales).
fn decoding_shapes() -> Vec<(usize, usize, bool)> {
    let mut shapes = vec![(1, 1, false)];
    for heads in 1..=8 {
        for kv_heads in (1..=heads).filter(|g: &usize| heads.is_multiple_of(*g)) {
            shapes.push((heads, kv_heads, true));
        }
    }
    shapes
}

/// Lesson `index`: positions, mask and scale cycle so every combination comes up; sizes,
/// numbers and direct Q, K, V are drawn from the index's seed. Lessons from `SELF_LESSONS` on
/// are cross-attention, and from `FIRST_DECODE` on self-attention with `decode = true`.
fn draw_lesson(index: u64) -> Drawn {
    let mut draw = Draw(index.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 13);
    let decode = index >= FIRST_DECODE;
    let cross = index >= SELF_LESSONS && !decode;
    let scales = [None, Some(true), Some(false)];
    let (mut positions, mask, scale) = if decode {
        // Generation needs the causal mask; every kind of positions comes with it, each
        // kind with each scale once in 15 lessons.
        let n = index - FIRST_DECODE;
        (
            SELF_POSITIONS[(n % 5) as usize],
            MaskKind::Causal,
            scales[(n / 5 % 3) as usize],
        )
    } else if cross {
        // Cross-attention takes neither learned positions nor a causal mask: the format
        // refuses both.
        let n = index - SELF_LESSONS;
        let position_kinds = [
            Positions::Unsaid,
            Positions::None,
            Positions::Sinusoidal,
            Positions::Rope,
        ];
        let mask_kinds = [MaskKind::Unsaid, MaskKind::None, MaskKind::Written];
        (
            position_kinds[(n % 4) as usize],
            mask_kinds[(n / 4 % 3) as usize],
            scales[(n / 12 % 3) as usize],
        )
    } else {
        let mask_kinds = [
            MaskKind::Unsaid,
            MaskKind::None,
            MaskKind::Causal,
            MaskKind::Written,
        ];
        (
            SELF_POSITIONS[(index % 5) as usize],
            mask_kinds[(index / 5 % 4) as usize],
            scales[(index / 20 % 3) as usize],
        )
    };
    // Generation needs format 2, like cross-attention.
    let format = if !cross
        && !decode
        && (format1_only() || (positions == Positions::Unsaid && draw.chance(0.5)))
    {
        positions = Positions::Unsaid;
        1
    } else {
        2
    };
    // Sinusoidal and learned positions are added to embeddings, so they need them.
    let direct =
        !matches!(positions, Positions::Sinusoidal | Positions::Learned) && draw.chance(0.4);
    let rope = positions == Positions::Rope;
    let tokens = 1 + draw.below(8);
    // A source longer than the target in about half the lessons, shorter in the others, never
    // as long: a square matrix could hide rows and columns swapped.
    let source = cross.then(|| {
        if tokens == 1 || (tokens < 8 && draw.chance(0.5)) {
            tokens + 1 + draw.below(8 - tokens)
        } else {
            1 + draw.below(tokens - 1)
        }
    });
    // K and V have a row per source token in cross-attention, per token otherwise.
    let key_rows = source.unwrap_or(tokens);
    let d_model = 1 + draw.below(8);
    // RoPE turns pairs of coordinates, so it needs an even d_k.
    let d_k = if rope {
        2 * (1 + draw.below(4))
    } else {
        1 + draw.below(8)
    };
    let d_v = 1 + draw.below(8);
    // Heads come with format 2: H from 1 to 16 in two thirds of the self-attention lessons,
    // from 1 to 8 in every cross-attention one; G any divisor of H (1 is multi-query
    // attention, H plain multi-head). W_o is required with several heads and optional with
    // one. The decoding lessons take their heads in turn from `decoding_shapes`.
    let shape = decode.then(|| {
        let shapes = decoding_shapes();
        shapes[((index - FIRST_DECODE) % shapes.len() as u64) as usize]
    });
    let (heads, kv_heads) = if let Some((heads, kv_heads, _)) = shape {
        (heads, kv_heads)
    } else if cross || (format == 2 && !draw.chance(1.0 / 3.0)) {
        let heads = 1 + draw.below(if cross { 8 } else { 16 });
        let divisors: Vec<usize> = (1..=heads).filter(|g| heads.is_multiple_of(*g)).collect();
        (heads, divisors[draw.below(divisors.len())])
    } else {
        (1, 1)
    };
    let w_o = match shape {
        Some((_, _, w_o)) => w_o,
        None => heads > 1 || (format == 2 && draw.chance(0.3)),
    };
    let kv_said = kv_heads != heads || (format == 2 && draw.chance(0.5));
    let heads_said = heads > 1 || kv_said || (format == 2 && draw.chance(0.3));

    let mut text = format!(
        "# Random lesson {index} of tests/numpy_differential.rs\nformat = {format}\n\
         title = \"Random {index}\"\ntokens = [{}]\ndecimals = {}\n",
        labels("t", tokens),
        1 + draw.below(8)
    );
    if let Some(source) = source {
        writeln!(text, "source_tokens = [{}]", labels("s", source)).unwrap();
    }
    // |Q| and |K| bound every |q·k|; rotation can add the two coordinates of a pair.
    let score_terms = |q: f64, k: f64| d_k as f64 * q * k * if rope { 2.0 } else { 1.0 };
    if heads_said {
        writeln!(text, "heads = {heads}").unwrap();
    }
    if kv_said {
        writeln!(text, "kv_heads = {kv_heads}").unwrap();
    }
    // The largest |value| a head's output may have (a weighted average of V's rows).
    let largest_value;
    if direct {
        let (mut q, mut k, v) = (
            matrix(&mut draw, tokens, heads * d_k),
            matrix(&mut draw, key_rows, kv_heads * d_k),
            matrix(&mut draw, key_rows, kv_heads * d_v),
        );
        largest_value = largest(&v);
        while score_terms(largest(&q), largest(&k)) > MAX_SCORE_TERMS {
            divide(&mut q, 10.0);
            divide(&mut k, 10.0);
        }
        for (key, values) in [("q", &q), ("k", &k), ("v", &v)] {
            writeln!(text, "{key} = {}", toml_matrix(values)).unwrap();
        }
    } else {
        let embeddings = matrix(&mut draw, tokens, d_model);
        let source_embeddings = source.map(|source| matrix(&mut draw, source, d_model));
        let learned = (positions == Positions::Learned).then(|| matrix(&mut draw, tokens, d_model));
        let (mut w_q, mut w_k, w_v) = (
            matrix(&mut draw, d_model, heads * d_k),
            matrix(&mut draw, d_model, kv_heads * d_k),
            matrix(&mut draw, d_model, kv_heads * d_v),
        );
        // Sinusoids add at most 1 to a cell; K and V read the source in cross-attention.
        let embedded = source_embeddings
            .as_ref()
            .map_or(largest(&embeddings), |source| {
                largest(source).max(largest(&embeddings))
            });
        let x = embedded + learned.as_ref().map_or(1.0, largest);
        largest_value = d_model as f64 * x * largest(&w_v);
        while score_terms(
            d_model as f64 * x * largest(&w_q),
            d_model as f64 * x * largest(&w_k),
        ) > MAX_SCORE_TERMS
        {
            divide(&mut w_q, 10.0);
            divide(&mut w_k, 10.0);
        }
        writeln!(text, "embeddings = {}", toml_matrix(&embeddings)).unwrap();
        if let Some(source_embeddings) = &source_embeddings {
            writeln!(
                text,
                "source_embeddings = {}",
                toml_matrix(source_embeddings)
            )
            .unwrap();
        }
        if let Some(learned) = &learned {
            writeln!(text, "positions = {}", toml_matrix(learned)).unwrap();
        }
        for (key, values) in [("w_q", &w_q), ("w_k", &w_k), ("w_v", &w_v)] {
            writeln!(text, "{key} = {}", toml_matrix(values)).unwrap();
        }
    }
    let mut d_out = d_v;
    if w_o {
        // concat · W_o adds H · d_v terms: bounded like the scores' terms.
        d_out = 1 + draw.below(8);
        let mut w_o = matrix(&mut draw, heads * d_v, d_out);
        while (heads * d_v) as f64 * largest_value * largest(&w_o) > MAX_SCORE_TERMS {
            divide(&mut w_o, 10.0);
        }
        writeln!(text, "w_o = {}", toml_matrix(&w_o)).unwrap();
    }
    match positions {
        Positions::None => text.push_str("positions = \"none\"\n"),
        Positions::Sinusoidal => text.push_str("positions = \"sinusoidal\"\n"),
        Positions::Rope => text.push_str("positions = \"rope\"\n"),
        Positions::Unsaid | Positions::Learned => {}
    }
    // A stream of its own, as the masks have: RoPE's pairing and base change the rotations
    // and nothing else, and no other lesson's numbers.
    let mut rope_draw = Draw(index.wrapping_mul(0x8ebc_6af0_9c88_c6e3) ^ 31);
    let rope_half = rope && rope_draw.chance(0.5);
    let rope_theta = if rope {
        [
            None,
            None,
            Some(500_000.0),
            Some(100.0),
            Some(2.5),
            Some(1e6),
        ][rope_draw.below(6)]
    } else {
        None
    };
    if rope_half {
        text.push_str("rope_pairing = \"half\"\n");
    } else if rope && rope_draw.chance(0.3) {
        text.push_str("rope_pairing = \"interleaved\"\n");
    }
    if let Some(theta) = rope_theta {
        writeln!(text, "rope_theta = {theta}").unwrap();
    }
    if let Some(scale) = scale {
        writeln!(text, "scale = {scale}").unwrap();
    }
    let (mut fully_masked_row, mut hides_a_key, mut finite_bias) = (false, false, false);
    match mask {
        MaskKind::Unsaid => {}
        MaskKind::None => text.push_str("mask = \"none\"\n"),
        MaskKind::Causal => text.push_str("mask = \"causal\"\n"),
        MaskKind::Written => {
            // A stream of its own, so that how many numbers the matrices above took (more
            // with more heads) does not change which masks come up.
            let mut draw = Draw(index.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 17);
            // One row per query, one column per key: seq_len x src_len in cross-attention.
            let mut cells: Matrix = (0..tokens)
                .map(|_| {
                    (0..key_rows)
                        .map(|_| match draw.below(8) {
                            0..=3 => 0.0,
                            4 | 5 => f64::NEG_INFINITY,
                            6 => cell(&mut draw, (-2, 1)),
                            _ => [-1e6, 1e6, -1e3, 0.5][draw.below(4)],
                        })
                        .collect()
                })
                .collect();
            if draw.chance(0.5) {
                let hidden = draw.below(tokens);
                cells[hidden].fill(f64::NEG_INFINITY);
            }
            fully_masked_row = cells.iter().any(|row| row.iter().all(|v| v.is_infinite()));
            hides_a_key = cells.iter().flatten().any(|v| v.is_infinite());
            finite_bias = cells.iter().flatten().any(|v| v.is_finite() && *v != 0.0);
            writeln!(text, "mask = {}", toml_matrix(&cells)).unwrap();
        }
    }
    // A stream of its own, as the masks have, so that saying `decode = false` in some of the
    // other format 2 lessons changes none of their numbers: said or unsaid, their JSON's
    // "decode" must be null.
    let decode = if decode {
        Some(true)
    } else {
        (format == 2 && Draw(index.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 19).chance(0.2))
            .then_some(false)
    };
    if let Some(decode) = decode {
        writeln!(text, "decode = {decode}").unwrap();
    }
    // A stream of its own: grad_output (format 2) adds the backward pass and changes nothing
    // else.
    let mut grad_draw = Draw(index.wrapping_mul(0xa076_1d64_78bd_642f) ^ 29);
    let backward = format == 2 && grad_draw.chance(0.5);
    if backward {
        let grad_output = matrix(&mut grad_draw, tokens, d_out);
        writeln!(text, "grad_output = {}", toml_matrix(&grad_output)).unwrap();
    }
    // A stream of its own too: the tile changes only the "online" JSON and the last step.
    let keys = source.unwrap_or(tokens);
    let mut tile_draw = Draw(index.wrapping_mul(0xd1b5_4a32_d192_ed03) ^ 23);
    let tile = (format == 2 && tile_draw.chance(0.7)).then(|| 1 + tile_draw.below(keys + 1));
    if let Some(tile) = tile {
        writeln!(text, "tile = {tile}").unwrap();
    }
    Drawn {
        text,
        format,
        positions,
        direct,
        mask,
        fully_masked_row,
        hides_a_key,
        finite_bias,
        scale,
        tokens,
        source,
        d_model,
        d_k,
        heads,
        kv_heads,
        kv_said,
        w_o,
        decode,
        tile,
        backward,
        rope_half,
        rope_theta,
    }
}

#[test]
fn the_numpy_reference_passes_its_hand_computed_checks() {
    let Some(python) = common::numpy_python() else {
        return;
    };
    let output = Command::new(&python)
        .arg(reference())
        .arg("--self-test")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(report.contains("all hand-computed checks pass"), "{report}");
}

#[test]
fn the_random_lessons_cover_every_kind_of_lesson() {
    let lessons: Vec<Drawn> = (0..lesson_count()).map(draw_lesson).collect();
    let count = |covered: &dyn Fn(&Drawn) -> bool| lessons.iter().filter(|l| covered(l)).count();
    let mut missing = Vec::new();
    let mut need = |what: &str, found: usize| {
        if found < 3 {
            missing.push(format!("{what}: {found}"));
        }
    };
    need("format 1", count(&|l| l.format == 1));
    need("1 token", count(&|l| l.tokens == 1));
    need("8 tokens", count(&|l| l.tokens == 8));
    need("d_model 1", count(&|l| l.d_model == 1 && !l.direct));
    need("d_model 8", count(&|l| l.d_model == 8 && !l.direct));
    need("odd d_k", count(&|l| l.d_k % 2 == 1));
    need("even d_k", count(&|l| l.d_k % 2 == 0));
    need("causal", count(&|l| l.mask == MaskKind::Causal));
    need(
        "no mask",
        count(&|l| matches!(l.mask, MaskKind::None | MaskKind::Unsaid)),
    );
    need("scale = false", count(&|l| l.scale == Some(false)));
    need("scale unsaid", count(&|l| l.scale.is_none()));
    need("fully masked row", count(&|l| l.fully_masked_row));
    need("finite bias", count(&|l| l.finite_bias));
    need(
        "a written mask with neither",
        count(&|l| l.mask == MaskKind::Written && !l.fully_masked_row && !l.finite_bias),
    );
    need(
        "direct Q, K, V",
        count(&|l| l.direct && l.positions != Positions::Rope),
    );
    if !format1_only() {
        need("format 2", count(&|l| l.format == 2));
        need(
            "positions unsaid in format 2",
            count(&|l| l.format == 2 && l.positions == Positions::Unsaid),
        );
        need(
            "positions = none",
            count(&|l| l.positions == Positions::None),
        );
        need(
            "sinusoidal",
            count(&|l| l.positions == Positions::Sinusoidal),
        );
        need("learned", count(&|l| l.positions == Positions::Learned));
        need(
            "rope with embeddings",
            count(&|l| l.positions == Positions::Rope && !l.direct),
        );
        need(
            "rope with direct Q, K, V",
            count(&|l| l.positions == Positions::Rope && l.direct),
        );
        need(
            "rope and a causal mask",
            count(&|l| l.positions == Positions::Rope && l.mask == MaskKind::Causal),
        );
        need(
            "sinusoidal without scaling",
            count(&|l| l.positions == Positions::Sinusoidal && l.scale == Some(false)),
        );
        let several = |l: &Drawn| l.heads > 1;
        need("16 heads", count(&|l| l.heads == 16));
        need(
            "several heads, one K/V group (multi-query)",
            count(&|l| several(l) && l.kv_heads == 1),
        );
        need(
            "grouped queries (1 < G < H)",
            count(&|l| l.kv_heads > 1 && l.kv_heads < l.heads),
        );
        need(
            "several heads, a group each",
            count(&|l| several(l) && l.kv_heads == l.heads),
        );
        need(
            "kv_heads unsaid with several heads",
            count(&|l| several(l) && !l.kv_said),
        );
        need("one head with W_o", count(&|l| l.heads == 1 && l.w_o));
        need(
            "several heads with rope",
            count(&|l| several(l) && l.positions == Positions::Rope),
        );
        need(
            "several heads with sinusoidal positions",
            count(&|l| several(l) && l.positions == Positions::Sinusoidal),
        );
        need(
            "several heads with learned positions",
            count(&|l| several(l) && l.positions == Positions::Learned),
        );
        need(
            "several heads given Q, K, V directly",
            count(&|l| several(l) && l.direct),
        );
        need(
            "several heads with a causal mask",
            count(&|l| several(l) && l.mask == MaskKind::Causal),
        );
        need(
            "several heads with a written mask",
            count(&|l| several(l) && l.mask == MaskKind::Written),
        );
        need(
            "several heads, scale = false",
            count(&|l| several(l) && l.scale == Some(false)),
        );
        let cross = |l: &Drawn| l.source.is_some();
        need("cross-attention", count(&cross));
        need(
            "cross, a longer source",
            count(&|l| l.source.is_some_and(|source| source > l.tokens)),
        );
        need(
            "cross, a shorter source",
            count(&|l| l.source.is_some_and(|source| source < l.tokens)),
        );
        need(
            "cross, 1 target token",
            count(&|l| cross(l) && l.tokens == 1),
        );
        need("cross, 1 source token", count(&|l| l.source == Some(1)));
        need("cross, 8 source tokens", count(&|l| l.source == Some(8)));
        need(
            "cross, no positions",
            count(&|l| cross(l) && matches!(l.positions, Positions::Unsaid | Positions::None)),
        );
        need(
            "cross, sinusoidal",
            count(&|l| cross(l) && l.positions == Positions::Sinusoidal),
        );
        need(
            "cross, rope with embeddings",
            count(&|l| cross(l) && l.positions == Positions::Rope && !l.direct),
        );
        need(
            "cross, rope with Q, K, V given",
            count(&|l| cross(l) && l.positions == Positions::Rope && l.direct),
        );
        need(
            "cross, Q, K, V given",
            count(&|l| cross(l) && l.direct && l.positions != Positions::Rope),
        );
        need(
            "cross, no mask",
            count(&|l| cross(l) && matches!(l.mask, MaskKind::None | MaskKind::Unsaid)),
        );
        need(
            "cross, a mask hiding keys",
            count(&|l| cross(l) && l.hides_a_key && !l.fully_masked_row),
        );
        need(
            "cross, a fully masked row",
            count(&|l| cross(l) && l.fully_masked_row),
        );
        need(
            "cross, a finite bias",
            count(&|l| cross(l) && l.finite_bias),
        );
        need(
            "cross, scale = false",
            count(&|l| cross(l) && l.scale == Some(false)),
        );
        need(
            "cross, several heads with rope",
            count(&|l| cross(l) && several(l) && l.positions == Positions::Rope),
        );
        need(
            "cross, several heads with sinusoidal positions",
            count(&|l| cross(l) && several(l) && l.positions == Positions::Sinusoidal),
        );
        need(
            "cross, several heads with a written mask",
            count(&|l| cross(l) && several(l) && l.mask == MaskKind::Written),
        );
        need(
            "cross, several heads given Q, K, V",
            count(&|l| cross(l) && several(l) && l.direct),
        );
        // With d_k = 2 the one pair is (0, 1) in either pairing: rotate-half shows from 4.
        let half = |l: &Drawn| l.rope_half && l.d_k >= 4;
        need("rope_pairing = half, d_k ≥ 4", count(&half));
        need(
            "rope_pairing = half with a rope_theta of its own",
            count(&|l| half(l) && l.rope_theta.is_some()),
        );
        need(
            "interleaved with a rope_theta of its own",
            count(&|l| !l.rope_half && l.rope_theta.is_some() && l.d_k >= 4),
        );
        need(
            "rope_pairing = half, several heads",
            count(&|l| half(l) && several(l)),
        );
        need(
            "rope_pairing = half, cross-attention",
            count(&|l| half(l) && cross(l)),
        );
        need(
            "rope_pairing = half, a backward pass",
            count(&|l| half(l) && l.backward),
        );
        let decoding = |l: &Drawn| l.decode == Some(true);
        need(
            "rope_pairing = half, decoding",
            count(&|l| half(l) && decoding(l)),
        );
        need("decoding", count(&decoding));
        need("decode = false said", count(&|l| l.decode == Some(false)));
        need("tile = 1", count(&|l| l.tile == Some(1)));
        need("a backward pass", count(&|l| l.backward));
        need(
            "a backward pass with grouped queries and RoPE",
            count(&|l| l.backward && l.kv_heads < l.heads && l.positions == Positions::Rope),
        );
        need(
            "a backward pass in cross-attention",
            count(&|l| l.backward && l.source.is_some()),
        );
        need(
            "a backward pass with a fully masked row",
            count(&|l| l.backward && l.fully_masked_row),
        );
        need(
            "a tile of more keys than the lesson has",
            count(&|l| {
                l.tile
                    .is_some_and(|tile| tile > l.source.unwrap_or(l.tokens))
            }),
        );
        need(
            "a tile said with a fully masked row",
            count(&|l| l.tile.is_some() && l.fully_masked_row),
        );
        need(
            "decoding, one head without W_o",
            count(&|l| decoding(l) && l.heads == 1 && !l.w_o),
        );
        need(
            "decoding, one head with W_o",
            count(&|l| decoding(l) && l.heads == 1 && l.w_o),
        );
        need(
            "decoding, several heads",
            count(&|l| decoding(l) && several(l)),
        );
        need(
            "decoding, fewer K/V groups than heads",
            count(&|l| decoding(l) && l.kv_heads < l.heads),
        );
        need(
            "decoding, grouped queries (1 < G < H)",
            count(&|l| decoding(l) && l.kv_heads > 1 && l.kv_heads < l.heads),
        );
        need(
            "decoding, positions none or unsaid",
            count(&|l| decoding(l) && matches!(l.positions, Positions::Unsaid | Positions::None)),
        );
        need(
            "decoding, sinusoidal",
            count(&|l| decoding(l) && l.positions == Positions::Sinusoidal),
        );
        need(
            "decoding, learned",
            count(&|l| decoding(l) && l.positions == Positions::Learned),
        );
        need(
            "decoding, rope with embeddings",
            count(&|l| decoding(l) && l.positions == Positions::Rope && !l.direct),
        );
        need(
            "decoding, rope with Q, K, V given",
            count(&|l| decoding(l) && l.positions == Positions::Rope && l.direct),
        );
        need(
            "decoding, several heads with rope",
            count(&|l| decoding(l) && several(l) && l.positions == Positions::Rope),
        );
        need(
            "decoding, several heads with sinusoidal positions",
            count(&|l| decoding(l) && several(l) && l.positions == Positions::Sinusoidal),
        );
        need(
            "decoding, fewer K/V groups than heads with rope",
            count(&|l| decoding(l) && l.kv_heads < l.heads && l.positions == Positions::Rope),
        );
        need(
            "decoding, Q, K, V given",
            count(&|l| decoding(l) && l.direct && l.positions != Positions::Rope),
        );
        need(
            "decoding, scale = false",
            count(&|l| decoding(l) && l.scale == Some(false)),
        );
        need(
            "decoding, scale unsaid",
            count(&|l| decoding(l) && l.scale.is_none()),
        );
        need(
            "decoding, 1 token",
            count(&|l| decoding(l) && l.tokens == 1),
        );
        need(
            "decoding, 8 tokens",
            count(&|l| decoding(l) && l.tokens == 8),
        );
        // Every H from 1 to 8 with every divisor of it as G, in cross-attention and in
        // generation.
        for heads in 1..=8 {
            for kv_heads in (1..=heads).filter(|g: &usize| heads.is_multiple_of(*g)) {
                let found = count(&|l| cross(l) && l.heads == heads && l.kv_heads == kv_heads);
                if found == 0 {
                    missing.push(format!("cross, {heads} heads in {kv_heads} K/V groups: 0"));
                }
            }
        }
        for heads in 1..=8 {
            for kv_heads in (1..=heads).filter(|g: &usize| heads.is_multiple_of(*g)) {
                let found = count(&|l| decoding(l) && l.heads == heads && l.kv_heads == kv_heads);
                if found == 0 {
                    missing.push(format!(
                        "decoding, {heads} heads in {kv_heads} K/V groups: 0"
                    ));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "too few lessons of these kinds: {missing:?}"
    );
}

#[test]
fn every_random_lesson_written_by_the_tutor_reads_back_as_the_same_lesson() {
    // Every shape the format has (positions of each kind, heads and groups, cross-attention,
    // generation, tiles, a backward pass, written and causal masks, direct Q, K, V): what a
    // save writes, the parser reads back unchanged, key by key of the schema.
    for index in 0..SELF_LESSONS + CROSS_LESSONS + DECODE_LESSONS {
        let drawn = draw_lesson(index);
        let lesson = attn_tutor::lesson::load_text("drawn", None, drawn.text.clone())
            .unwrap_or_else(|error| {
                panic!("lesson {index}: {}\n{}", error.render(false), drawn.text)
            })
            .lesson;
        let written = attn_tutor::lesson::lesson_to_toml(&lesson);
        let again = attn_tutor::lesson::load_text("written", None, written.clone())
            .unwrap_or_else(|error| {
                panic!(
                    "lesson {index} as written: {}\n{written}",
                    error.render(false)
                )
            })
            .lesson;
        assert!(
            again == lesson,
            "lesson {index} changed when written and read back:\n{written}"
        );
        // Writing is a fixed point: the second writing is the first.
        assert_eq!(attn_tutor::lesson::lesson_to_toml(&again), written);
    }
}

#[test]
fn random_lessons_of_every_kind_agree_with_numpy_to_1e_9() {
    let Some(python) = common::numpy_python() else {
        return;
    };
    let dir = TempDir::new().unwrap();
    let mut pairs = Vec::new();
    let mut refused = Vec::new();
    for index in 0..lesson_count() {
        let lesson = dir.path().join(format!("lesson-{index:03}.toml"));
        let json = dir.path().join(format!("lesson-{index:03}.json"));
        std::fs::write(&lesson, draw_lesson(index).text).unwrap();
        let output = common::attn_tutor(&dir)
            .arg("show")
            .arg(&lesson)
            .args(["--format", "json"])
            .output()
            .unwrap();
        if output.status.success() {
            std::fs::write(&json, &output.stdout).unwrap();
            pairs.push((lesson, json));
        } else {
            refused.push(format!(
                "{}: {}",
                lesson.display(),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    let (agree, report) = if pairs.is_empty() {
        (true, String::new())
    } else {
        run_reference(&python, &pairs)
    };
    println!("{report}");
    if !(agree && refused.is_empty()) {
        // Kept for a look by hand: the lessons, their JSON, and the command that compares them.
        let kept = dir.keep();
        panic!(
            "{} of {} lessons refused by show (first: {}); the reference says:\n{report}\n\
             lessons kept in {}",
            refused.len(),
            lesson_count(),
            refused.first().map_or("none", String::as_str),
            kept.display()
        );
    }
}

#[test]
fn built_in_lessons_with_literal_numbers_agree_with_numpy() {
    let Some(python) = common::numpy_python() else {
        return;
    };
    let dir = TempDir::new().unwrap();
    let mut pairs = Vec::new();
    for name in common::BUILT_INS {
        let lesson = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("lessons/{name}.toml"));
        // A generator's numbers are the engine's own stream, which the reference cannot redo.
        if std::fs::read_to_string(&lesson)
            .unwrap()
            .contains("random =")
        {
            continue;
        }
        let json = dir.path().join(format!("{name}.json"));
        std::fs::write(&json, common::show(name, &["--format", "json"])).unwrap();
        pairs.push((lesson, json));
    }
    assert!(
        pairs
            .iter()
            .any(|(lesson, _)| lesson.ends_with("cat-sleeps.toml")),
        "cat-sleeps is compared"
    );
    let (agree, report) = run_reference(&python, &pairs);
    println!("{report}");
    assert!(agree, "{report}");
}

/// Runs `lessons/reference/NAME.py`, which recomputes a built-in lesson's printed figures and
/// quoted numbers and checks its claims; its output must end on `done` having succeeded.
fn lesson_reference(python: &OsString, name: &str, done: &str) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("lessons/reference")
        .join(format!("{name}.py"));
    let output = Command::new(python)
        .arg(script)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{report}");
    assert!(report.contains(done), "{report}");
}

#[test]
fn the_heads_lessons_figures_quotes_and_claims_check_out_in_numpy() {
    let Some(python) = common::numpy_python() else {
        return;
    };
    lesson_reference(&python, "heads", "claims of both lessons check out");
}

#[test]
fn the_translation_lessons_figures_quotes_and_claims_check_out_in_numpy() {
    let Some(python) = common::numpy_python() else {
        return;
    };
    lesson_reference(&python, "translation", "claims of the lesson check out");
}

#[test]
fn the_generation_lessons_figures_quotes_claims_and_steps_check_out_in_numpy() {
    let Some(python) = common::numpy_python() else {
        return;
    };
    lesson_reference(&python, "generation", "claims of the lesson check out");
    // Given the binary's JSON, the script also compares every step of generation with its
    // own token-by-token computation.
    let dir = TempDir::new().unwrap();
    let json = dir.path().join("generation.json");
    std::fs::write(
        &json,
        common::show_bytes("generation", &["--format", "json"]),
    )
    .unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("lessons/reference/generation.py");
    let output = Command::new(&python)
        .arg(script)
        .arg(&json)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(report.contains("agree"), "{report}");
}
