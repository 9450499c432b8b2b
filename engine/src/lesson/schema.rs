//! The lesson file's keys, one table: each key's name, the first format that has it, what the
//! docs say of it, how a lesson writes it and how the parser reads it. The parser's list of
//! known keys and its readers, the writer's order and the docs' "All keys at a glance" table
//! all come from here, so a new key is one entry (with its reader in `parse/keys.rs`, and its
//! place in the order they read in).

use std::fmt;

use super::Lesson;
use super::parse::keys::{self, Read};
use super::write::{
    write_decimals, write_decode, write_expected, write_focus, write_format, write_heads,
    write_input, write_kv_heads, write_mask, write_narration, write_positions, write_scale,
    write_source, write_source_tokens, write_summary, write_tile, write_title, write_tokens,
};
use crate::pipeline::MatrixName;

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
    pub limits: &'static str,
    /// What it is for (the docs' "Meaning").
    pub meaning: &'static str,
    /// Writes the key as a saved lesson has it, or nothing when the lesson leaves it out.
    pub write: fn(&mut dyn fmt::Write, &Lesson) -> fmt::Result,
    /// Reads the key from a lesson file, on its own or with the key it must agree with.
    pub(crate) read: Read,
}

impl Key {
    /// Whether the key is a table (`[narration]`), written after every other key.
    pub(crate) fn is_table(&self) -> bool {
        self.value.starts_with("table")
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
            self.value, self.default, self.limits, self.meaning
        )
    }
}

/// The key named `name`.
pub fn key(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|key| key.name == name)
}

/// Every key, in the order a saved lesson writes them and the docs list them: the tables last,
/// since a key after a `[table]` header belongs to that table.
/// How many keys a lesson file has: `KEYS` and `NAMES` are this long.
const KEY_COUNT: usize = 27;

pub static KEYS: [Key; KEY_COUNT] = [
    Key {
        name: "format",
        since: 1,
        format_1_has_not: None,
        value: "integer",
        default: "required",
        limits: "`1`, or `2` for `source_tokens`, `source_embeddings`, `positions`, `heads`, `kv_heads`, `w_o`, `decode`, `tile` and `grad_output`",
        meaning: "Version of the lesson format.",
        write: write_format,
        read: Read::Own(keys::read_format),
    },
    Key {
        name: "title",
        since: 1,
        format_1_has_not: None,
        value: "string",
        default: "required",
        limits: "one line, not blank, ≤ 60 columns",
        meaning: "Shown at the top of `show` and in `list`/`check`.",
        write: write_title,
        read: Read::Own(keys::read_title),
    },
    Key {
        name: "source",
        since: 1,
        format_1_has_not: None,
        value: "string",
        default: r#"`""`"#,
        limits: "one line, ≤ 200 characters",
        meaning: "Where the example comes from; `show` prints it as `Source: …`.",
        write: write_source,
        read: Read::Own(keys::read_source),
    },
    Key {
        name: "summary",
        since: 1,
        format_1_has_not: None,
        value: "string",
        default: r#"`""`"#,
        limits: "one line, ≤ 300 characters",
        meaning: "One or two sentences about the lesson; shown in `show --format markdown`.",
        write: write_summary,
        read: Read::Own(keys::read_summary),
    },
    Key {
        name: "tokens",
        since: 1,
        format_1_has_not: None,
        value: "array of strings",
        default: "required",
        limits: "1 to 256 labels, each one line, not blank, ≤ 16 columns",
        meaning: "One label per token (row).",
        write: write_tokens,
        read: Read::Own(keys::read_tokens),
    },
    Key {
        name: "source_tokens",
        since: 2,
        format_1_has_not: Some("a format 1 lesson is self-attention"),
        value: "array of strings",
        default: "none (format 2 only)",
        limits: "as `tokens`",
        meaning: "Cross-attention: the source sequence the keys and values come from. See [Format 2: cross-attention](#format-2-cross-attention).",
        write: write_source_tokens,
        read: Read::Own(keys::read_source_tokens),
    },
    Key {
        name: "embeddings",
        since: 1,
        format_1_has_not: None,
        value: "matrix or generator",
        default: "with `w_q`, `w_k`, `w_v`",
        limits: "seq_len × d_model",
        meaning: "X, one row per token.",
        write: |out, lesson| write_input(out, lesson, MatrixName::Embeddings),
        read: Read::Own(keys::read_inputs),
    },
    Key {
        name: "source_embeddings",
        since: 2,
        format_1_has_not: Some("a format 1 lesson is self-attention"),
        value: "matrix or generator",
        default: "with `source_tokens` and `w_q`, `w_k`, `w_v`",
        limits: "src_len × d_model",
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
        limits: "d_model × d_k",
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
        limits: "d_model × d_k (same d_k as `w_q`)",
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
        limits: "d_model × d_v",
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
        limits: "seq_len × d_k",
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
        limits: "seq_len × d_k (same d_k as `q`; src_len rows in cross-attention)",
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
        limits: "seq_len × d_v (src_len rows in cross-attention)",
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
        limits: "matrix or generator: seq_len × d_model",
        meaning: "Where each token stands; see [Format 2](#format-2-positions).",
        write: write_positions,
        read: Read::Own(keys::read_positions),
    },
    Key {
        name: "heads",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has one head and no W_o"),
        value: "integer",
        default: "`1` (format 2 only)",
        limits: "1 to 64",
        meaning: "H query heads; `w_q` (or `q`) is H blocks of d_k columns. See [Format 2: heads](#format-2-heads).",
        write: write_heads,
        read: Read::Own(keys::read_heads),
    },
    Key {
        name: "kv_heads",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has one head and no W_o"),
        value: "integer",
        default: "`heads` (format 2 only)",
        limits: "1 to 64, dividing `heads`",
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
        limits: "(H·d_v) × d_out",
        meaning: "Output weights: the lesson's output is the heads' outputs side by side times W_o.",
        write: |out, lesson| write_input(out, lesson, MatrixName::WO),
        read: Read::With("embeddings"),
    },
    Key {
        name: "scale",
        since: 1,
        format_1_has_not: None,
        value: "boolean",
        default: "`true`",
        limits: "",
        meaning: "Divide the scores by √d_k.",
        write: write_scale,
        read: Read::Own(keys::read_scale),
    },
    Key {
        name: "mask",
        since: 1,
        format_1_has_not: None,
        value: r#"`"none"`, `"causal"` or matrix"#,
        default: r#"`"none"`"#,
        limits: "matrix: seq_len × seq_len (× src_len in cross-attention, never causal) of `-inf` or any finite biases",
        meaning: "Which keys each query may see, and any bias added to a score.",
        write: write_mask,
        read: Read::Own(keys::read_mask),
    },
    Key {
        name: "decode",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no generation steps"),
        value: "boolean",
        default: "`false` (format 2 only)",
        limits: r#"needs `mask = "causal"`, self-attention only"#,
        meaning: "Add the generation steps: the output made again one token at a time with a K/V cache. See [Format 2: generation](#format-2-generation-with-a-kv-cache).",
        write: write_decode,
        read: Read::Own(keys::read_decode),
    },
    Key {
        name: "tile",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no online softmax"),
        value: "integer",
        default: "`2` (format 2 only)",
        limits: "1 to 256",
        meaning: "Keys the online softmax (FlashAttention's) takes at a time. See [Format 2: the online softmax](#format-2-the-online-softmax).",
        write: write_tile,
        read: Read::Own(keys::read_tile),
    },
    Key {
        name: "grad_output",
        since: 2,
        format_1_has_not: Some("a format 1 lesson has no backward pass"),
        value: "matrix or generator",
        default: "none (format 2 only)",
        limits: "seq_len × d_out (W_o's columns, else d_v)",
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
        limits: "a label of `tokens`, or 1 to seq_len",
        meaning: "The row whose cells `show` explains.",
        write: write_focus,
        read: Read::Own(keys::read_focus),
    },
    Key {
        name: "decimals",
        since: 1,
        format_1_has_not: None,
        value: "integer",
        default: "`3`",
        limits: "0 to 8",
        meaning: "Decimals shown; also sets the default tolerance.",
        write: write_decimals,
        read: Read::Own(keys::read_decimals),
    },
    Key {
        name: "narration",
        since: 1,
        format_1_has_not: None,
        value: "table of strings",
        default: "default text per step",
        limits: "keys: `embedding`, `positions`, `projection`, `rotation`, `scores`, `scaling`, `masking`, `softmax`, `all_heads`, `output`, `concat`, `output_projection`, `circuits`, `online_softmax`, `new_token`, `kv_cache`, `decode_weights`, `decode_output`, `backward_output`, `backward_values`, `backward_softmax`, `backward_scaling`, `backward_scores`, `backward_rotation`, `backward_weights`, `backward_input`; ≤ 2000 characters each",
        meaning: "Your own words for each step.",
        write: write_narration,
        read: Read::Own(keys::read_narration),
    },
    Key {
        name: "expected",
        since: 1,
        format_1_has_not: None,
        value: "table",
        default: "none",
        limits: "keys: `tolerance`, `slips`, `q`, `k`, `v`, `scores`, `scaled`, `masked`, `weights`, `output`, the inputs (`embeddings`, `w_q`, `w_k`, `w_v`); format 2 also `positions`, `x`, `q_rope`, `k_rope`, `w_o`, `concat`, `w_qk`, `w_ov`, `[expected.heads.N]`, and with a source `source_embeddings` and `source_x`",
        meaning: "Figures printed by your source, compared by `check`.",
        write: write_expected,
        read: Read::Own(keys::read_expected),
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
                format.limits.contains(&format!("`{}`", key.name)),
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
                narration.limits.contains(&format!("`{}`", step.key())),
                "`narration`'s limits do not name `{}`",
                step.key()
            );
        }
        let expected = key("expected").unwrap();
        for figure in crate::lesson::parse::figure_keys() {
            assert!(
                expected.limits.contains(&format!("`{figure}`")),
                "`expected`'s limits do not name `{figure}`"
            );
        }
    }
}
