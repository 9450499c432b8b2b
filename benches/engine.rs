//! Benchmarks of the engine: loading a large lesson, computing it, and explaining a single cell.
//!
//! Run with `cargo bench --bench engine`; the README quotes the figures.

use std::fmt::Write;
use std::hint::black_box;

use attn_tutor::attention::{Attention, Cell, MatrixName};
use attn_tutor::lesson::parse;
use criterion::{Criterion, criterion_group, criterion_main};

/// A 256-token lesson with 512-dimensional embeddings written out literally (about 0.6 MB of
/// TOML, under the 1 MiB limit) and generated 512 × 64 projections.
fn large_lesson_text() -> String {
    let (tokens, d_model, d_k) = (256, 512, 64);
    let mut text = String::from("format = 1\ntitle = \"Large\"\n");
    let labels: Vec<String> = (0..tokens).map(|i| format!("\"t{i}\"")).collect();
    let _ = writeln!(text, "tokens = [{}]", labels.join(", "));
    text.push_str("embeddings = [\n");
    for row in 0..tokens {
        let cells: Vec<&str> = (0..d_model)
            .map(|col| ["1", "0", "0.5", "-1", "0.25"][(row * 7 + col * 3) % 5])
            .collect();
        let _ = writeln!(text, "[{}],", cells.join(","));
    }
    text.push_str("]\n");
    for (key, seed) in [("w_q", 1), ("w_k", 2), ("w_v", 3)] {
        let _ = writeln!(
            text,
            "{key} = {{ random = \"normal\", seed = {seed}, shape = [{d_model}, {d_k}] }}"
        );
    }
    text
}

/// A 256-token lesson with 1024-dimensional generated embeddings, generated 1024 × 64
/// projections and RoPE (format 2): the size issue 13 asks to load and compute in < 100 ms.
fn rope_lesson_text() -> String {
    let (tokens, d_model, d_k) = (256, 1024, 64);
    let mut text = String::from("format = 2\ntitle = \"Large, with RoPE\"\npositions = \"rope\"\n");
    let labels: Vec<String> = (0..tokens).map(|i| format!("\"t{i}\"")).collect();
    let _ = writeln!(text, "tokens = [{}]", labels.join(", "));
    let _ = writeln!(
        text,
        "embeddings = {{ random = \"normal\", seed = 9, shape = [{tokens}, {d_model}] }}"
    );
    for (key, seed) in [("w_q", 1), ("w_k", 2), ("w_v", 3)] {
        let _ = writeln!(
            text,
            "{key} = {{ random = \"normal\", seed = {seed}, shape = [{d_model}, {d_k}] }}"
        );
    }
    text
}

/// A 256-token lesson with 1024-dimensional generated embeddings and 16 heads of d_k = d_v = 64
/// over `kv_heads` K/V groups: W_q and W_o 1024 × 1024, W_k and W_v 1024 × (kv_heads · 64), all
/// generated (format 2). The size issue 14 asks to load and compute in < 150 ms.
fn heads_lesson_text(kv_heads: usize) -> String {
    let (tokens, d_model, heads, d_head) = (256, 1024, 16, 64);
    let mut text = format!(
        "format = 2\ntitle = \"Large, {heads} heads, {kv_heads} K/V groups\"\n\
         heads = {heads}\nkv_heads = {kv_heads}\nmask = \"causal\"\n"
    );
    let labels: Vec<String> = (0..tokens).map(|i| format!("\"t{i}\"")).collect();
    let _ = writeln!(text, "tokens = [{}]", labels.join(", "));
    let _ = writeln!(
        text,
        "embeddings = {{ random = \"normal\", seed = 9, shape = [{tokens}, {d_model}] }}"
    );
    for (key, seed, rows, cols) in [
        ("w_q", 1, d_model, heads * d_head),
        ("w_k", 2, d_model, kv_heads * d_head),
        ("w_v", 3, d_model, kv_heads * d_head),
        ("w_o", 4, heads * d_head, d_model),
    ] {
        let _ = writeln!(
            text,
            "{key} = {{ random = \"normal\", seed = {seed}, shape = [{rows}, {cols}] }}"
        );
    }
    text
}

/// Issue 14's size, with every head its own K/V group and with grouped queries (4 groups):
/// loading (parsing, validating and generating the matrices) and computing apart, then both.
fn heads_benchmarks(c: &mut Criterion) {
    let mut group = c.benchmark_group("16 heads");
    // One pass takes tens of milliseconds: 10 samples keep a run within a minute.
    group.sample_size(10);
    for kv_heads in [16, 4] {
        let text = heads_lesson_text(kv_heads);
        let what = format!("256 tokens x 1024 dims, 16 heads, {kv_heads} K/V groups");
        group.bench_function(format!("load {what}"), |b| {
            b.iter(|| black_box(parse(black_box(&text)).lesson.expect("valid lesson")))
        });
        let lesson = parse(&text).lesson.expect("valid lesson");
        group.bench_function(format!("compute {what}"), |b| {
            b.iter(|| black_box(Attention::compute(black_box(&lesson))))
        });
        group.bench_function(format!("load+compute {what}"), |b| {
            b.iter(|| {
                let lesson = parse(black_box(&text)).lesson.expect("valid lesson");
                black_box(Attention::compute(&lesson))
            })
        });
    }
    group.finish();
}

fn benchmarks(c: &mut Criterion) {
    let rope = rope_lesson_text();
    c.bench_function("load+validate+compute 256 tokens x 1024 dims, rope", |b| {
        b.iter(|| {
            let parsed = parse(black_box(&rope));
            let lesson = parsed.lesson.expect("valid lesson");
            black_box(Attention::compute(&lesson))
        })
    });

    let text = large_lesson_text();
    assert!(
        text.len() < 1024 * 1024,
        "the benchmark lesson must fit the file limit"
    );
    c.bench_function("load+validate+compute 256 tokens x 512 dims", |b| {
        b.iter(|| {
            let parsed = parse(black_box(&text));
            let lesson = parsed.lesson.expect("valid lesson");
            black_box(Attention::compute(&lesson))
        })
    });

    let lesson = parse(&text).lesson.expect("valid lesson");
    let attention = Attention::compute(&lesson);
    // The most expensive cell of each kind: a query (512 terms), an output (256 terms), a
    // weight (a row of 256 scores).
    for (name, cell) in [
        (
            "derive Q cell (512 terms)",
            Cell::new(MatrixName::Q, 255, 63),
        ),
        (
            "derive scores cell (64 terms)",
            Cell::new(MatrixName::Scores, 255, 255),
        ),
        (
            "derive weights cell (row of 256)",
            Cell::new(MatrixName::Weights, 255, 255),
        ),
        (
            "derive output cell (256 terms)",
            Cell::new(MatrixName::Output, 255, 63),
        ),
    ] {
        c.bench_function(name, |b| {
            b.iter(|| black_box(attention.derive(black_box(cell))))
        });
    }
    c.bench_function("explain output cell as text (256 terms)", |b| {
        let derivation = attention
            .derive(Cell::new(MatrixName::Output, 255, 63))
            .expect("cell");
        b.iter(|| black_box(derivation.explain(&attention, 3)))
    });
}

criterion_group!(engine, benchmarks, heads_benchmarks);
criterion_main!(engine);
