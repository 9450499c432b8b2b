//! The lesson file's keys, one table: each key's name, the first format that has it, what the
//! docs say of it, how a lesson writes it and how the parser reads it. The parser's list of
//! known keys and its readers, the writer's order and the docs' "All keys at a glance" table
//! all come from here, so a new key is one entry (with its reader in `parse/keys.rs`): the
//! entry names the keys its reader is read after, and the parser's reading order is made from
//! those; the docs' limits that name the keys of format 2, the steps or the figures are made
//! from this table, the steps and the matrices.

use std::borrow::Cow;
use std::fmt;

use super::Lesson;
use super::limits::MAX_NARRATION_CHARS;
use super::parse::keys::{self, Read};
use super::write::{
    write_decimals, write_decode, write_expected, write_focus, write_format, write_heads,
    write_input, write_kv_heads, write_mask, write_narration, write_norm, write_norm_epsilon,
    write_positions, write_rope_pairing, write_rope_theta, write_scale, write_source,
    write_source_tokens, write_summary, write_tile, write_title, write_token_ids, write_tokens,
    write_vector,
};
use crate::pipeline::{GivenBy, MatrixName, Step};
use Limits::Words;

/// One key of a lesson file.
pub struct Key {
    /// As written in the file; `narration` and `expected` are tables.
    pub name: &'static str,
    /// The first lesson format that has the key.
    pub since: u32,
    /// Why a format 1 lesson cannot have it, for the error when one does.
    pub format_1_has_not: Option<&'static str>,
    /// What its value is (the docs' "Type").
    pub value: &'static str,
    /// Whether it must be given, or what it is when not (the docs' "Required / default").
    pub default: &'static str,
    /// What values it takes (the docs' "Limits").
    pub limits: Limits,
    /// What it is for (the docs' "Meaning").
    pub meaning: &'static str,
    /// Writes the key as a saved lesson has it, or nothing when the lesson leaves it out.
    pub write: fn(&mut dyn fmt::Write, &Lesson) -> fmt::Result,
    /// Reads the key from a lesson file, on its own or with the key it must agree with.
    pub(crate) read: Read,
}

impl Key {
    /// Whether the key is a table (`[narration]`), written after every other key.
    pub(crate) const fn is_table(&self) -> bool {
        let (value, table) = (self.value.as_bytes(), b"table".as_slice());
        value.len() >= table.len() && same(value.split_at(table.len()).0, table)
    }

    /// The key's row in the docs' table of keys.
    pub fn doc_row(&self) -> String {
        let name = if self.is_table() {
            format!("`[{}]`", self.name)
        } else {
            format!("`{}`", self.name)
        };
        format!(
            "| {name} | {} | {} | {} | {} |",
            self.value,
            self.default,
            self.limits.text(),
            self.meaning
        )
    }
}

/// What values a key takes, as the docs' "Limits" say.
pub enum Limits {
    /// In words.
    Words(&'static str),
    /// Naming what another table holds (the keys of format 2, the steps, the figures), made
    /// from that table so that a new key, step or matrix is named without a word written here.
    Made(fn() -> String),
}

impl Limits {
    /// As the docs' table of keys says them.
    pub fn text(&self) -> Cow<'static, str> {
        match self {
            Limits::Words(words) => Cow::Borrowed(words),
            Limits::Made(make) => Cow::Owned(make()),
        }
    }
}

/// `names` in backticks, separated by commas, and the last by `and` when `and` is set.
fn listed<'a>(names: impl IntoIterator<Item = &'a str>, and: bool) -> String {
    let names: Vec<String> = names.into_iter().map(|name| format!("`{name}`")).collect();
    match names.split_last() {
        Some((last, rest)) if and && !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(", "),
    }
}

/// `format`'s limits: the keys a lesson of format 1 has not got, from this table.
fn format_limits() -> String {
    let format_2 = KEYS.iter().filter(|key| key.since == 2).map(|key| key.name);
    format!("`1`, or `2` for {}", listed(format_2, true))
}

/// `[narration]`'s limits: a text for each step, from the pipeline's steps.
fn narration_limits() -> String {
    let steps = Step::ALL.into_iter().map(Step::key);
    format!(
        "keys: {}; ≤ {MAX_NARRATION_CHARS} characters each",
        listed(steps, false)
    )
}

/// `[expected]`'s limits: the figures of the table of matrices, grouped by which lessons give
/// them.
fn expected_limits() -> String {
    let given_by = |group: GivenBy| {
        let figures = MatrixName::ALL.into_iter().filter(move |name| {
            name.entry()
                .expectable
                .is_some_and(|figure| figure.given_by == group)
        });
        figures.map(MatrixName::key)
    };
    format!(
        "keys: `tolerance`, `slips`, {}, the inputs ({}); format 2 also {}, `[expected.heads.N]`, and with a source {}",
        listed(given_by(GivenBy::EveryLesson), false),
        listed(given_by(GivenBy::Inputs), false),
        listed(given_by(GivenBy::Format2), false),
        listed(given_by(GivenBy::Source), true),
    )
}

/// `a == b`, which a `const fn` cannot write yet.
pub(crate) const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if a[index] != b[index] {
            return false;
        }
        index += 1;
    }
    true
}

/// The key named `name`.
pub fn key(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|key| key.name == name)
}

/// Every key, in the order a saved lesson writes them and the docs list them: the tables last,
/// since a key after a `[table]` header belongs to that table.
/// How many keys a lesson file has: `KEYS` and `NAMES` are this long.
pub(crate) const KEY_COUNT: usize = 38;

pub static KEYS: [Key; KEY_COUNT] = [
    Key {
        name: "format",
        since: 1,
        format_1_has_not: None,
        value: "integer",
        default: "required",
        limits: Limits::Made(format_limits),
        meaning: "Version of the lesson format.",
        write: write_format,
        read: Read::Own {
            read: keys::read_format,
            after: &[],
        },
    },
    Key {
        name: "title",
        since: 1,
        format_1_has_not: None,
        value: "string",
        default: "required",
        limits: Words("one line, not blank, ≤ 60 columns"),
        meaning: "Shown at the top of `show` and in `list`/`check`.",
        write: write_title,
        read: Read::Own {
            read: keys::read_title,
            after: &[],
        },
    },
    Key {
        name: "source",
        since: 1,
        format_1_has_not: None,
        value: "string",
        default: r#"`""`"#,
        limits: Words("one line, ≤ 200 characters"),
        meaning: "Where the example comes from; `show` prints it as `Source: …`.",
        write: write_source,
        read: Read::Own {
            read: keys::read_source,
            after: &[],
        },
    },
    Key {
        name: "summary",
        since: 1,
        format_1_has_not: None,
        value: "string",
        default: r#"`""`"#,
        limits: Words("one line, ≤ 300 characters"),
        meaning: "One or two sentences about the lesson; shown in `show --format markdown`.",
        write: write_summary,
        read: Read::Own {
            read: keys::read_summary,
            after: &[],
        },
    },
    Key {
        name: "tokens",
        since: 1,
        format_1_has_not: None,
        value: "array of strings",
        default: "required",
        limits: Words("1 to 256 labels, each one line, not blank, ≤ 16 columns"),
        meaning: "One label per token (row).",
        write: write_tokens,
        read: Read::Own {
            read: keys::read_tokens,
            after: &[],
        },
    },
    Key {
        name: "token_ids",
        since: 2,
        format_1_has_not: Some("a format 1 lesson's tokens are labels alone"),
        value: "array of integers",
        default: "none (format 2 only)",
        limits: Words("one whole number ≥ 0 per token"),
        meaning: "The id a model's tokenizer gives each token; `show --format json` writes them as `token_ids`.",
        write: write_token_ids,
        read: Read::Own {
            read: keys::read_token_ids,
            after: &["format", "tokens"],
        },
    },
    Key {
        name: "source_tokens",
        since: 2,
        format_1_has_not: Some("a format 1 lesson is self-attention"),
        value: "array of strings",
        default: "none (format 2 only)",
        limits: Words("as `tokens`"),
        meaning: "Cross-attention: the source sequence the keys and values come from. See [Format 2: cross-attention](#format-2-cross-attention).",
        write: write_source_tokens,
        read: Read::Own {
            read: keys::read_source_tokens,
            after: &["format"],
        },
    },
    Key {
        name: "embeddings",
        since: 1,
        format_1_has_not: None,
        value: "matrix or generator",
        default: "with `w_q`, `w_k`, `w_v`",
        limits: Words("seq_len × d_model"),
        meaning: "X, one row per token.",
        write: |out, lesson| write_input(out, lesson, MatrixName::Embeddings),
        read: Read::Own {
            read: keys::read_inputs,
            after: &["format", "tokens", "source_tokens", "heads"],
        },
    },
    Key {
        name: "source_embeddings",
        since: 2,
        format_1_has_not: Some("a format 1 lesson is self-attention"),
        value: "matrix or generator",
        default: "with `source_tokens` and `w_q`, `w_k`, `w_v`",
        limits: Words("src_len × d_model"),
        meaning: "S, one row per source token; K = S·W_k, V = S·W_v.",
        write: |out, lesson| write_input(out, lesson, MatrixName::SourceEmbeddings),
        read: Read::With("embeddings"),
    },
    Key {
        name: "w_q",
        since: 1,
        format_1_has_not: None,
        value: "matrix or generator",
        default: "with `embeddings`",
        limits: Words("d_model × d_k"),
        meaning: "Query weights.",
        write: |out, lesson| write_input(out, lesson, MatrixName::WQ),
        read: Read::With("embeddings"),
    },
    Key {
        name: "w_k",
        since: 1,
        format_1_has_not: None,
        value: "matrix or generator",
        default: "with `embeddings`",
        limits: Words("d_model × d_k (same d_k as `w_q`)"),
        meaning: "Key weights.",
        write: |out, lesson| write_input(out, lesson, MatrixName::WK),
        read: Read::With("embeddings"),
    },
    Key {
        name: "w_v",
        since: 1,
        format_1_has_not: None,
        value: "matrix or generator",
        default: "with `embeddings`",
        limits: Words("d_model × d_v"),
        meaning: "Value weights.",
        write: |out, lesson| write_input(out, lesson, MatrixName::WV),
        read: Read::With("embeddings"),
    },
    Key {
        name: "q",
        since: 1,
        format_1_has_not: None,
        value: "matrix or generator",
        default: "with `k`, `v` (direct form)",
        limits: Words("seq_len × d_k"),
        meaning: "Queries, given directly.",
        write: |out, lesson| write_input(out, lesson, MatrixName::Q),
        read: Read::With("embeddings"),
    },
    Key {
        name: "k",
        since: 1,
        format_1_has_not: None,
        value: "matrix or generator",
        default: "with `q`, `v`",
        limits: Words("seq_len × d_k (same d_k as `q`; src_len rows in cross-attention)"),
        meaning: "Keys, given directly.",
        write: |out, lesson| write_input(out, lesson, MatrixName::K),
        read: Read::With("embeddings"),
    },
    Key {
        name: "v",
        since: 1,
        format_1_has_not: None,
        value: "matrix or generator",
        default: "with `q`, `k`",
        limits: Words("seq_len × d_v (src_len rows in cross-attention)"),
        meaning: "Values, given directly.",
        write: |out, lesson| write_input(out, lesson, MatrixName::V),
        read: Read::With("embeddings"),
    },
    Key {
        name: "positions",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no positions"),
        value: r#"`"none"`, `"sinusoidal"`, `"rope"` or matrix"#,
        default: r#"`"none"` (format 2 only)"#,
        limits: Words("matrix or generator: seq_len × d_model"),
        meaning: "Where each token stands; see [Format 2](#format-2-positions).",
        write: write_positions,
        read: Read::Own {
            read: keys::read_positions,
            after: &["format", "tokens", "source_tokens", "heads", "embeddings"],
        },
    },
    Key {
        name: "rope_pairing",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no positions"),
        value: r#"`"interleaved"` or `"half"`"#,
        default: r#"`"interleaved"` (format 2 only)"#,
        limits: Words(r#"needs `positions = "rope"`"#),
        meaning: "Which columns RoPE turns together: 2i with 2i+1, or i with i + d_k/2 (rotate-half, as Llama-family checkpoints). See [Rotate-half and RoPE's base](#rotate-half-and-ropes-base-rope_pairing-rope_theta).",
        write: write_rope_pairing,
        read: Read::Own {
            read: keys::read_rope_pairing,
            after: &["format", "positions"],
        },
    },
    Key {
        name: "rope_theta",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no positions"),
        value: "number",
        default: "`10000` (format 2 only)",
        limits: Words(r#"1e-6 to 1e12; needs `positions = "rope"`"#),
        meaning: "RoPE's base θ: pair i of the token at position p turns by p · θ^(−2i/d_k).",
        write: write_rope_theta,
        read: Read::Own {
            read: keys::read_rope_theta,
            after: &["format", "positions"],
        },
    },
    Key {
        name: "heads",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has one head and no W_o"),
        value: "integer",
        default: "`1` (format 2 only)",
        limits: Words("1 to 64"),
        meaning: "H query heads; `w_q` (or `q`) is H blocks of d_k columns. See [Format 2: heads](#format-2-heads).",
        write: write_heads,
        read: Read::Own {
            read: keys::read_heads,
            after: &["format"],
        },
    },
    Key {
        name: "kv_heads",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has one head and no W_o"),
        value: "integer",
        default: "`heads` (format 2 only)",
        limits: Words("1 to 64, dividing `heads`"),
        meaning: "G key/value groups the heads share; `w_k`, `w_v` (or `k`, `v`) are G blocks.",
        write: write_kv_heads,
        read: Read::With("heads"),
    },
    Key {
        name: "w_o",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has one head and no W_o"),
        value: "matrix or generator",
        default: "required with `heads` > 1 (format 2 only)",
        limits: Words("(H·d_v) × d_out"),
        meaning: "Output weights: the lesson's output is the heads' outputs side by side times W_o.",
        write: |out, lesson| write_input(out, lesson, MatrixName::WO),
        read: Read::With("embeddings"),
    },
    Key {
        name: "norm",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no norm"),
        value: r#"`"layer"` or `"rms"`"#,
        default: "none (format 2 only)",
        limits: Words("needs `embeddings`; not with `grad_output` (yet)"),
        meaning: "The norm each row of X gets before the projections read it: LayerNorm, (x − mean) / √(var + ε) · γ + β (GPT-2), or RMSNorm, x / √(mean(x²) + ε) · γ (Llama). See [Format 2: norms and biases](#format-2-norms-and-biases).",
        write: write_norm,
        read: Read::Own {
            read: keys::read_norm,
            after: &["format", "embeddings"],
        },
    },
    Key {
        name: "norm_gain",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no norm"),
        value: "array of numbers",
        default: "all 1, with `norm`",
        limits: Words("d_model numbers"),
        meaning: "The norm's gain γ, one number per column of X.",
        write: |out, lesson| write_vector(out, lesson, MatrixName::NormGain),
        read: Read::With("norm"),
    },
    Key {
        name: "norm_bias",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no norm"),
        value: "array of numbers",
        default: "all 0, with `norm`",
        limits: Words("d_model numbers; `norm = \"layer\"` only"),
        meaning: "LayerNorm's bias β, one number per column of X.",
        write: |out, lesson| write_vector(out, lesson, MatrixName::NormBias),
        read: Read::With("norm"),
    },
    Key {
        name: "norm_epsilon",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no norm"),
        value: "number",
        default: "`1e-5`, with `norm`",
        limits: Words("above 0, at most 1"),
        meaning: "ε, added to the variance (or mean of squares) before its square root, so that a constant row does not divide by zero.",
        write: write_norm_epsilon,
        read: Read::With("norm"),
    },
    Key {
        name: "b_q",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no biases"),
        value: "array of numbers",
        default: "none (format 2 only)",
        limits: Words("H·d_k numbers; needs `embeddings`"),
        meaning: "The queries' bias: Q = X·W_q + b_q, each head's d_k numbers side by side as W_q's columns are.",
        write: |out, lesson| write_vector(out, lesson, MatrixName::BQ),
        read: Read::Own {
            read: keys::read_biases,
            after: &["format", "embeddings", "heads"],
        },
    },
    Key {
        name: "b_k",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no biases"),
        value: "array of numbers",
        default: "none (format 2 only)",
        limits: Words("G·d_k numbers"),
        meaning: "The keys' bias: K = X·W_k + b_k, each K/V group's d_k numbers side by side.",
        write: |out, lesson| write_vector(out, lesson, MatrixName::BK),
        read: Read::With("b_q"),
    },
    Key {
        name: "b_v",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no biases"),
        value: "array of numbers",
        default: "none (format 2 only)",
        limits: Words("G·d_v numbers"),
        meaning: "The values' bias: V = X·W_v + b_v, each K/V group's d_v numbers side by side.",
        write: |out, lesson| write_vector(out, lesson, MatrixName::BV),
        read: Read::With("b_q"),
    },
    Key {
        name: "b_o",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no biases"),
        value: "array of numbers",
        default: "none (format 2 only)",
        limits: Words("d_out numbers; needs `w_o`"),
        meaning: "The output's bias: output = concat·W_o + b_o.",
        write: |out, lesson| write_vector(out, lesson, MatrixName::BO),
        read: Read::With("b_q"),
    },
    Key {
        name: "scale",
        since: 1,
        format_1_has_not: None,
        value: "boolean",
        default: "`true`",
        limits: Words(""),
        meaning: "Divide the scores by √d_k.",
        write: write_scale,
        read: Read::Own {
            read: keys::read_scale,
            after: &[],
        },
    },
    Key {
        name: "mask",
        since: 1,
        format_1_has_not: None,
        value: r#"`"none"`, `"causal"` or matrix"#,
        default: r#"`"none"`"#,
        limits: Words(
            "matrix: seq_len × seq_len (× src_len in cross-attention, never causal) of `-inf` or any finite biases",
        ),
        meaning: "Which keys each query may see, and any bias added to a score.",
        write: write_mask,
        read: Read::Own {
            read: keys::read_mask,
            after: &["tokens", "source_tokens"],
        },
    },
    Key {
        name: "decode",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no generation steps"),
        value: "boolean",
        default: "`false` (format 2 only)",
        limits: Words(r#"needs `mask = "causal"`, self-attention only"#),
        meaning: "Add the generation steps: the output made again one token at a time with a K/V cache. See [Format 2: generation](#format-2-generation-with-a-kv-cache).",
        write: write_decode,
        read: Read::Own {
            read: keys::read_decode,
            after: &["format", "source_tokens", "mask"],
        },
    },
    Key {
        name: "tile",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no online softmax"),
        value: "integer",
        default: "`2` (format 2 only)",
        limits: Words("1 to 256"),
        meaning: "Keys the online softmax (FlashAttention's) takes at a time. See [Format 2: the online softmax](#format-2-the-online-softmax).",
        write: write_tile,
        read: Read::Own {
            read: keys::read_tile,
            after: &["format"],
        },
    },
    Key {
        name: "grad_output",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no backward pass"),
        value: "matrix or generator",
        default: "none (format 2 only)",
        limits: Words("seq_len × d_out (W_o's columns, else d_v)"),
        meaning: "dL/d(output) for the backward pass, L = Σ output ⊙ grad_output. See [Format 2: the backward pass](#format-2-the-backward-pass).",
        write: |out, lesson| write_input(out, lesson, MatrixName::DOutput),
        read: Read::With("embeddings"),
    },
    Key {
        name: "focus",
        since: 1,
        format_1_has_not: None,
        value: "string (token label) or integer (position)",
        default: "first token",
        limits: Words("a label of `tokens`, or 1 to seq_len"),
        meaning: "The row whose cells `show` explains.",
        write: write_focus,
        read: Read::Own {
            read: keys::read_focus,
            after: &["tokens", "source_tokens"],
        },
    },
    Key {
        name: "decimals",
        since: 1,
        format_1_has_not: None,
        value: "integer",
        default: "`3`",
        limits: Words("0 to 8"),
        meaning: "Decimals shown; also sets the default tolerance.",
        write: write_decimals,
        read: Read::Own {
            read: keys::read_decimals,
            after: &[],
        },
    },
    Key {
        name: "narration",
        since: 1,
        format_1_has_not: None,
        value: "table of strings",
        default: "default text per step",
        limits: Limits::Made(narration_limits),
        meaning: "Your own words for each step.",
        write: write_narration,
        read: Read::Own {
            read: keys::read_narration,
            after: &[],
        },
    },
    Key {
        name: "expected",
        since: 1,
        format_1_has_not: None,
        value: "table",
        default: "none",
        limits: Limits::Made(expected_limits),
        meaning: "Figures printed by your source, compared by `check`.",
        write: write_expected,
        read: Read::Own {
            read: keys::read_expected,
            after: &[],
        },
    },
];

/// The key names, for the parser's "unknown key" and its suggestions.
pub(crate) static NAMES: [&str; KEY_COUNT] = {
    let mut names = [""; KEY_COUNT];
    let mut index = 0;
    while index < KEYS.len() {
        names[index] = KEYS[index].name;
        index += 1;
    }
    names
};

/// How many keys are read by their own reader: `READING_ORDER` is this long.
const READ_ON_THEIR_OWN: usize = {
    let mut count = 0;
    let mut index = 0;
    while index < KEY_COUNT {
        if matches!(KEYS[index].read, Read::Own { .. }) {
            count += 1;
        }
        index += 1;
    }
    count
};

/// The order the keys are read in, made from the table when the program is compiled: the
/// first key of the table (in the order a saved lesson writes them) whose `after` keys are all
/// read, then the next, so a key is read after the keys its checks depend on and otherwise
/// where the table has it. A key that waits for a key the table has not got, for a key read
/// with another, or for a key that waits for it, does not compile.
pub(crate) static READING_ORDER: [&Key; READ_ON_THEIR_OWN] = {
    let mut order = [&KEYS[0]; READ_ON_THEIR_OWN];
    let mut read = [false; KEY_COUNT];
    let mut placed = 0;
    while placed < READ_ON_THEIR_OWN {
        let mut index = 0;
        while index < KEY_COUNT && !(!read[index] && can_be_read(index, &read)) {
            index += 1;
        }
        assert!(
            index < KEY_COUNT,
            "the keys of lesson::schema::KEYS wait for one another: no order reads each after its `after` keys"
        );
        order[placed] = &KEYS[index];
        read[index] = true;
        placed += 1;
    }
    order
};

/// Whether the key at `index` of the table is read on its own and every key it is read after
/// (`read` says which are) is read: for a table, every key that is not a table.
const fn can_be_read(index: usize, read: &[bool; KEY_COUNT]) -> bool {
    let Read::Own { after, .. } = KEYS[index].read else {
        return false;
    };
    let mut waited = 0;
    while waited < after.len() {
        let Some(other) = index_of(after[waited]) else {
            panic!("a key of lesson::schema::KEYS is read after a key the table has not got");
        };
        assert!(
            matches!(KEYS[other].read, Read::Own { .. }),
            "a key of lesson::schema::KEYS is read after a key that is read with another: name that one"
        );
        waited += 1;
    }
    let mut other = 0;
    while other < KEY_COUNT {
        let before = if KEYS[index].is_table() {
            !KEYS[other].is_table() && matches!(KEYS[other].read, Read::Own { .. })
        } else {
            names(after, KEYS[other].name)
        };
        if before && !read[other] {
            return false;
        }
        other += 1;
    }
    true
}

/// Where the key `name` stands in the table.
const fn index_of(name: &str) -> Option<usize> {
    let mut index = 0;
    while index < KEY_COUNT {
        if same(KEYS[index].name.as_bytes(), name.as_bytes()) {
            return Some(index);
        }
        index += 1;
    }
    None
}

/// Whether `list` has `name`.
const fn names(list: &[&str], name: &str) -> bool {
    let mut index = 0;
    while index < list.len() {
        if same(list[index].as_bytes(), name.as_bytes()) {
            return true;
        }
        index += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_come_last_and_every_key_once() {
        let first_table = KEYS.iter().position(Key::is_table).unwrap();
        assert!(KEYS[first_table..].iter().all(Key::is_table));
        for (index, key) in KEYS.iter().enumerate() {
            assert!(
                KEYS[..index].iter().all(|other| other.name != key.name),
                "{} twice",
                key.name
            );
        }
    }

    #[test]
    fn the_format_key_names_every_key_of_format_2() {
        let format = key("format").unwrap();
        for key in KEYS.iter().filter(|key| key.since == 2) {
            assert!(
                format.limits.text().contains(&format!("`{}`", key.name)),
                "`format`'s limits do not name `{}`",
                key.name
            );
            assert!(key.format_1_has_not.is_some(), "{}", key.name);
        }
    }

    /// The docs' table says which keys `[narration]` and `[expected]` take from these lines:
    /// a new step or a new figure that they leave out fails here.
    #[test]
    fn the_tables_limits_name_every_step_and_every_figure() {
        let narration = key("narration").unwrap();
        for step in crate::pipeline::Step::ALL {
            assert!(
                narration
                    .limits
                    .text()
                    .contains(&format!("`{}`", step.key())),
                "`narration`'s limits do not name `{}`",
                step.key()
            );
        }
        let expected = key("expected").unwrap();
        for figure in crate::lesson::parse::figure_keys() {
            assert!(
                expected.limits.text().contains(&format!("`{figure}`")),
                "`expected`'s limits do not name `{figure}`"
            );
        }
    }

    /// Every key of the table is read: on its own at its one place in the reading order, or
    /// with a key that is.
    #[test]
    fn every_key_is_read_once_in_the_reading_order_or_with_a_key_that_is() {
        for key in &KEYS {
            let places = READING_ORDER
                .iter()
                .filter(|read| read.name == key.name)
                .count();
            match key.read {
                Read::Own { .. } => {
                    assert_eq!(places, 1, "`{}` is read {places} times", key.name);
                }
                Read::With(other) => {
                    assert_eq!(places, 0, "`{}` is read with `{other}`", key.name);
                    assert!(
                        matches!(key_read(other), Some(Read::Own { .. })),
                        "`{}` is read with `{other}`, which is not read on its own",
                        key.name
                    );
                }
            }
        }
    }

    fn key_read(name: &str) -> Option<&'static Read> {
        key(name).map(|key| &key.read)
    }

    /// Each key is read after the keys its entry names, and the tables after every other key.
    #[test]
    fn each_key_is_read_after_the_keys_it_is_checked_against() {
        let place = |name: &str| READING_ORDER.iter().position(|read| read.name == name);
        for (at, key) in READING_ORDER.iter().enumerate() {
            let Read::Own { after, .. } = key.read else {
                panic!(
                    "`{}` is in the reading order but read with another key",
                    key.name
                );
            };
            for before in after {
                assert!(
                    place(before).is_some_and(|before| before < at),
                    "`{}` is read before `{before}`",
                    key.name
                );
            }
            if key.is_table() {
                assert!(
                    READING_ORDER[at..].iter().all(|read| read.is_table()),
                    "`{}` is read before a key that is not a table",
                    key.name
                );
            }
        }
        // The inputs are read with the heads their widths are split by, and the positions
        // with the inputs they are added to: the table writes both before `heads`.
        assert!(place("heads") < place("embeddings"));
        assert!(place("embeddings") < place("positions"));
    }
}
