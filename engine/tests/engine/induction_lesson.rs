//! The built-in lesson `induction`: layer 1, head 1 of the shipped model (`models/induction`)
//! on "N G B K D H P N G B K D H", as `attn-tutor import` makes it. Its matrices are the
//! model's, and its narration quotes numbers recomputed here from the model's file (the stripe
//! of the induction head, the previous-token head of layer 0, what the keys lose without it,
//! the model's guess), so the words cannot drift from the numbers. `ATTN_UPDATE_LESSONS=1 cargo test -p
//! attn-engine --test engine induction_lesson` writes the narration into the lesson.

use std::path::{Path, PathBuf};

use attn_engine::attention::{Attention, MatrixName};
use attn_engine::checkpoint::Checkpoint;
use attn_engine::import::{HeadChoice, ImportRequest};
use attn_engine::lesson::{BUILTIN, load_text};
use attn_engine::train::{Model, evaluate, induction_score, load, previous_token_score, symbol};
use nalgebra::DMatrix;

/// The sentence: a half of 7 symbols and its repeat without the last one, as the model
/// reads a training sequence (the last symbol is only what it predicts).
const TEXT: &str = "N G B K D H P N G B K D H";
/// The half's length.
const LENGTH: usize = 7;
/// The layer-1 head the lesson opens, counted from 0 as `--head` counts.
const HEAD: usize = 1;
/// The layer-0 head that looks at the previous token.
const PREVIOUS_TOKEN_HEAD: usize = 0;
/// Fresh sequences the head is measured on besides the sentence, and their seed (not the
/// training run's).
const FRESH_SEQUENCES: usize = 512;
const FRESH_SEED: u64 = 55;

fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/induction")
}

fn lesson_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../lessons/induction.toml")
}

fn ids() -> Vec<usize> {
    let ids: Vec<usize> = TEXT
        .split_whitespace()
        .map(|word| (0..16).find(|&id| symbol(id) == word).unwrap())
        .collect();
    assert_eq!(ids.len(), 2 * LENGTH - 1);
    ids
}

fn builtin_text() -> &'static str {
    BUILTIN
        .iter()
        .find(|lesson| lesson.name == "induction")
        .expect("a built-in lesson named induction")
        .text
}

fn builtin_attention() -> Attention {
    let loaded = load_text("induction", None, builtin_text().to_string())
        .unwrap_or_else(|error| panic!("{}", error.render(false)));
    Attention::compute(&loaded.lesson)
}

/// Causal softmax(Q·Kᵀ / √d_head) of layer 1's head `head`, with the writes of the layer-0 heads
/// `removed` taken out of the stream its keys are computed from (its queries read the whole
/// stream): what the head does without what those heads wrote into the keys.
fn layer_1_pattern(
    model: &Model<f64>,
    ids: &[usize],
    head: usize,
    removed: &[usize],
) -> DMatrix<f64> {
    let forward = model.forward(ids, 1);
    let tokens = ids.len();
    let (d, head_dim) = (model.shape.d_model, model.shape.head_dim());
    let bias_rows = |bias: &DMatrix<f64>, first: usize, width: usize| {
        DMatrix::from_fn(tokens, width, |_, column| bias[(0, first + column)])
    };
    let first = &model.layers[0];
    let values = &forward.streams[0] * first.c_attn_weight.columns(2 * d, d)
        + bias_rows(&first.c_attn_bias, 2 * d, d);
    let mut keys_read = forward.streams[1].clone();
    for &writer in removed {
        // A layer-0 head's write: its output (pattern · its values) through its rows of c_proj.
        let output = forward.pattern(0, 0, writer) * values.columns(writer * head_dim, head_dim);
        keys_read -= output * first.c_proj_weight.rows(writer * head_dim, head_dim);
    }
    let second = &model.layers[1];
    let q = &forward.streams[1] * second.c_attn_weight.columns(head * head_dim, head_dim)
        + bias_rows(&second.c_attn_bias, head * head_dim, head_dim);
    let k = &keys_read * second.c_attn_weight.columns(d + head * head_dim, head_dim)
        + bias_rows(&second.c_attn_bias, d + head * head_dim, head_dim);
    let mut pattern = q * k.transpose() / (head_dim as f64).sqrt();
    for row in 0..tokens {
        let most = (0..=row)
            .map(|key| pattern[(row, key)])
            .fold(f64::MIN, f64::max);
        let total: f64 = (0..=row)
            .map(|key| (pattern[(row, key)] - most).exp())
            .sum();
        for key in 0..tokens {
            pattern[(row, key)] = if key <= row {
                (pattern[(row, key)] - most).exp() / total
            } else {
                0.0
            };
        }
    }
    pattern
}

/// The numbers the narration quotes.
struct Figures {
    /// Each second-half token's weight on the token after its earlier copy: (query, key, weight),
    /// 0-based.
    stripe: Vec<(usize, usize, f64)>,
    /// Their mean: the head's induction score on the sentence.
    induction: f64,
    /// The first half's tokens after the first: their mean weight on the first token.
    resting: f64,
    /// Each layer-0 head's previous-token score on the sentence.
    previous_token: Vec<f64>,
    /// The induction score with each layer-0 head's write taken out of the keys.
    without: Vec<f64>,
    /// Each layer-1 head's induction score on fresh sequences of the same length.
    fresh: Vec<f64>,
    /// The probability the whole model gives the symbol that followed the last token's earlier
    /// copy, as the next one.
    guess: f64,
}

fn figures() -> Figures {
    let attention = builtin_attention();
    let weights = attention.weights_of(0);
    let stripe: Vec<(usize, usize, f64)> = (LENGTH..2 * LENGTH - 1)
        .map(|query| {
            (
                query,
                query - LENGTH + 1,
                weights[(query, query - LENGTH + 1)],
            )
        })
        .collect();
    let induction = induction_score(weights, LENGTH);
    let resting = (1..LENGTH).map(|row| weights[(row, 0)]).sum::<f64>() / (LENGTH - 1) as f64;

    let model = load(&shipped()).unwrap().cast::<f64>();
    let ids = ids();
    let forward = model.forward(&ids, 1);
    let heads = model.shape.heads;
    let previous_token = (0..heads)
        .map(|head| previous_token_score(forward.pattern(0, 0, head)))
        .collect();
    let without = (0..heads)
        .map(|writer| induction_score(&layer_1_pattern(&model, &ids, HEAD, &[writer]), LENGTH))
        .collect();
    let fresh = evaluate(&model, LENGTH, FRESH_SEQUENCES, FRESH_SEED).induction;
    let last = ids.len() - 1;
    let logits = forward.logits.row(last);
    let most = logits.max();
    let total: f64 = logits.iter().map(|logit| (logit - most).exp()).sum();
    let followed = ids[last - LENGTH + 1];
    let guess = (logits[followed] - most).exp() / total;
    Figures {
        stripe,
        induction,
        resting,
        previous_token,
        without,
        fresh,
        guess,
    }
}

/// A token of the sentence as the narration names it: its symbol and its place, from 1.
fn token(ids: &[usize], at: usize) -> String {
    format!("{} ({})", symbol(ids[at]), at + 1)
}

/// A figure that is no cell of the lesson (a mean, another head's, the model's guess), as a
/// whole percentage: `check` holds every decimal a narration quotes to the lesson's own cells,
/// and these are held to the model by this test instead.
fn percent(value: f64) -> String {
    format!("{:.0} %", 100.0 * value)
}

/// The lesson's narration, step by step, written from `figures`: the cells of the lesson as it
/// shows them (3 decimals), every other figure as a percentage.
fn narration(figures: &Figures) -> Vec<(&'static str, String)> {
    let ids = ids();
    let other = 1 - PREVIOUS_TOKEN_HEAD;
    let stripe = figures
        .stripe
        .iter()
        .map(|&(query, key, weight)| {
            format!("{} → {} {weight:.3}", token(&ids, query), token(&ids, key))
        })
        .collect::<Vec<_>>()
        .join(", ");
    let last = ids.len() - 1;
    let repeated = symbol(ids[last]);
    let followed = figures.stripe[figures.stripe.len() - 1].1;
    vec![
        (
            "embedding",
            format!(
                "X is the residual stream entering layer 1 of the model `attn-tutor train \
                 induction` trained (models/induction, 2 layers of attention and nothing else): \
                 each symbol's embedding plus its position's, plus what layer 0's two heads \
                 added, computed in float64 from the checkpoint. Layer 0's head \
                 {PREVIOUS_TOKEN_HEAD} is a previous-token head: on this sentence a token puts \
                 {} of its weight on the token just before it, on average (head {other}: {}). So \
                 each row of X also carries which symbol came before it. A row has 32 numbers; \
                 no single one means anything on its own.",
                percent(figures.previous_token[PREVIOUS_TOKEN_HEAD]),
                percent(figures.previous_token[other])
            ),
        ),
        (
            "projection",
            format!(
                "Each cell of Q, K and V is a dot product of 32 numbers: a row of X times a \
                 column of this head's weights (16 of the layer's 32 columns), plus the \
                 column's bias; a working shows the largest terms and the sum of the rest. The \
                 keys are where the two layers meet (K-composition): W_k reads in each row what \
                 layer 0's head {PREVIOUS_TOKEN_HEAD} wrote there, the symbol before it, so that \
                 the query of the second {repeated} can find the token that came after the \
                 first. Take that head's write out of X for the keys alone (queries and values \
                 as they are) and the stripe of the Softmax step fades: this head's mean weight \
                 on the token after the earlier copy falls from {} to {}. Take out head \
                 {other}'s write instead and it is {}.",
                percent(figures.induction),
                percent(figures.without[PREVIOUS_TOKEN_HEAD]),
                percent(figures.without[other]),
            ),
        ),
        (
            "softmax",
            format!(
                "The stripe of an induction head: each token of the second half looks at the \
                 token that came after its earlier copy, one column right of the diagonal where \
                 it meets that copy: {stripe}; {} on average, this head's induction score on \
                 this sentence. The first half's tokens have no earlier copy and rest on the \
                 first token ({} of their weight on average, tokens 2 to {LENGTH}). Not a lucky \
                 sentence: on {FRESH_SEQUENCES} fresh sequences of {LENGTH} random symbols this \
                 head's score is {}, and layer 1's other head's {}.",
                percent(figures.induction),
                percent(figures.resting),
                percent(figures.fresh[HEAD]),
                percent(figures.fresh[1 - HEAD])
            ),
        ),
        (
            "output",
            format!(
                "Each output row is the values mixed by that row's weights: the last token's \
                 takes {:.3} of the value of {}, the token after the first {repeated}, what came \
                 next last time. Through c_proj and the unembedding the whole model turns this \
                 into its guess of the next symbol: {}, with probability {}.",
                figures.stripe[figures.stripe.len() - 1].2,
                token(&ids, followed),
                symbol(ids[followed]),
                percent(figures.guess)
            ),
        ),
    ]
}

/// The `[narration]` table as the lesson file holds it: the last table of the file.
fn narration_table(steps: &[(&str, String)]) -> String {
    let mut table = "[narration]\n".to_string();
    for (step, text) in steps {
        table.push_str(&format!("{step} = {}\n", toml::Value::String(text.clone())));
    }
    table
}

#[test]
fn the_lessons_narration_quotes_the_shipped_models_numbers() {
    let written = narration_table(&narration(&figures()));
    let path = lesson_path();
    let file = std::fs::read_to_string(&path).unwrap();
    let at = file
        .find("\n[narration]\n")
        .expect("the lesson has a [narration] table")
        + 1;
    if std::env::var_os("ATTN_UPDATE_LESSONS").is_some_and(|value| !value.is_empty()) {
        std::fs::write(&path, format!("{}{written}", &file[..at])).unwrap();
        return;
    }
    assert_eq!(
        file[at..],
        written,
        "lessons/induction.toml's narration is not the model's numbers: \
         ATTN_UPDATE_LESSONS=1 cargo test -p attn-engine --test engine induction_lesson writes \
         it, then read the diff"
    );
}

#[test]
fn the_figures_are_an_induction_head_built_on_a_previous_token_head() {
    // What the narration says in words must stay true of its numbers.
    let figures = figures();
    assert!(figures.induction > 0.5, "{}", figures.induction);
    assert!(figures.stripe.iter().all(|&(_, _, weight)| weight > 0.3));
    assert!(figures.previous_token[PREVIOUS_TOKEN_HEAD] > 0.9);
    assert!(figures.previous_token[1 - PREVIOUS_TOKEN_HEAD] < 0.5);
    // Without the previous-token head's write the stripe is gone; without the other's, not.
    assert!(figures.without[PREVIOUS_TOKEN_HEAD] < 0.5 * figures.induction);
    assert!(figures.without[1 - PREVIOUS_TOKEN_HEAD] > 0.8 * figures.induction);
    assert!(figures.fresh.iter().all(|&score| score > 0.5));
    assert!(figures.guess > 0.5, "{}", figures.guess);
}

#[test]
fn taking_nothing_out_of_the_keys_gives_the_models_own_pattern() {
    // The pattern computed by hand for the ablations is the model's when nothing is removed.
    let model = load(&shipped()).unwrap().cast::<f64>();
    let ids = ids();
    let forward = model.forward(&ids, 1);
    for head in 0..model.shape.heads {
        let gap = (layer_1_pattern(&model, &ids, head, &[]) - forward.pattern(1, 0, head)).amax();
        assert!(gap < 1e-12, "head {head}: {gap}");
    }
}

#[test]
fn the_lesson_is_what_import_makes_of_the_shipped_models_head() {
    let checkpoint = Checkpoint::open(&shipped()).unwrap();
    let ids = ids();
    let request = ImportRequest {
        model: "induction".to_string(),
        text: TEXT.to_string(),
        token_ids: ids.iter().map(|&id| id as u64).collect(),
        labels: ids.iter().map(|&id| symbol(id)).collect(),
        layer: 1,
        heads: HeadChoice::One(HEAD),
        tokenizer: "its tokenizer.json".to_string(),
    };
    let imported = Attention::compute(&attn_engine::import::lesson(&checkpoint, &request).unwrap());
    let lesson = builtin_attention();
    assert_eq!(lesson.tokens, TEXT.split_whitespace().collect::<Vec<_>>());
    // The file holds the numbers import computed, written to read back exactly.
    for name in [MatrixName::X, MatrixName::Q, MatrixName::K, MatrixName::V] {
        assert_eq!(lesson.matrix(name), imported.matrix(name), "{name:?}");
    }
    assert_eq!(lesson.weights(), imported.weights());
    // And they are the model's: its own forward pass, from the file the trainer wrote.
    let model = load(&shipped()).unwrap();
    let ours = model.cast::<f64>().forward(&ids, 1);
    assert!((lesson.weights() - ours.pattern(1, 0, HEAD)).amax() < 1e-12);
    let trained = model.forward(&ids, 1);
    assert!((lesson.weights() - trained.pattern(1, 0, HEAD).map(f64::from)).amax() < 1e-5);
}

#[test]
fn the_readme_quotes_the_lessons_numbers() {
    let figures = figures();
    let ids = ids();
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    let row = readme
        .lines()
        .find(|line| line.starts_with("| `induction` |"))
        .expect("README's table of built-in lessons has induction");
    let &(query, key, weight) = figures.stripe.last().unwrap();
    for quoted in [
        format!("{} → {} {weight:.3}", symbol(ids[query]), symbol(ids[key])),
        format!(
            "from {} to {}",
            percent(figures.induction),
            percent(figures.without[PREVIOUS_TOKEN_HEAD])
        ),
        format!("\"{TEXT}\""),
    ] {
        assert!(
            row.contains(&quoted),
            "README's row does not say {quoted:?}: {row}"
        );
    }
}
