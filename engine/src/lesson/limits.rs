//! The bounds on everything a lesson file may ask for: the one place that decides them.
//!
//! Lessons are untrusted (a classroom server loads files other people wrote), so every size
//! that turns into memory, time or screen space has a ceiling.

/// Largest lesson file read, in bytes. A lesson imported from one head of a real model holds
/// that head's weights written out to 17 digits: 3.7 MB for a head of GPT-2 small (768 × 64 ×
/// 3 numbers). Every head of GPT-2 small would be 52 MB, which takes 2 s and 640 MB to parse:
/// the tutor opens that from memory, and a file stays at a size a classroom can load.
pub const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;
/// `MAX_FILE_BYTES` as messages say it.
pub const MAX_FILE_SIZE: &str = "16 MiB";
/// Most tokens (rows of X, Q, K, V).
pub(crate) const MAX_TOKENS: usize = 256;
/// Largest d_model, d_k or d_v.
pub(crate) const MAX_DIMENSION: usize = 1024;
/// Largest magnitude of any number in a matrix.
pub const MAX_ABS_VALUE: f64 = 1e6;
/// Widest token label, in terminal columns.
pub(crate) const MAX_LABEL_COLUMNS: usize = 16;
/// Largest token label, in bytes. Columns alone do not bound a label: combining marks take no
/// column, and one letter with 400,000 accents is 16 columns or less but 800 KB, copied into
/// every table row, frame and student session. 64 bytes fits 16 columns of any script
/// (4 bytes a character) with room for ordinary accents.
pub(crate) const MAX_LABEL_BYTES: usize = 64;
/// Longest title, in terminal columns.
pub(crate) const MAX_TITLE_COLUMNS: usize = 60;
/// Largest title, in bytes: as for labels, 4 bytes a column.
pub(crate) const MAX_TITLE_BYTES: usize = 4 * MAX_TITLE_COLUMNS;
/// Longest `source` text, in characters.
pub const MAX_SOURCE_CHARS: usize = 200;
/// Longest `summary`, in characters.
pub(crate) const MAX_SUMMARY_CHARS: usize = 300;
/// Longest narration of one step, in characters.
pub(crate) const MAX_NARRATION_CHARS: usize = 2000;
/// Most `slips` a lesson's `[expected]` may list.
pub(crate) const MAX_SLIPS: usize = 16;
/// Longest slip, in characters.
pub(crate) const MAX_SLIP_CHARS: usize = 400;
/// Most decimals shown.
pub(crate) const MAX_DECIMALS: usize = 8;
/// Decimals shown when a lesson does not say.
pub(crate) const DEFAULT_DECIMALS: usize = 3;
/// Keys in a tile of the online softmax when a lesson does not say (`tile = B`).
pub(crate) const DEFAULT_TILE: usize = 2;

/// Largest RoPE base θ (`rope_theta`): checkpoints use 10⁴ to a few 10⁹ (long-context Llama 3
/// variants); a larger θ turns no pair visibly and its digits would crowd a working line.
pub const MAX_ROPE_THETA: f64 = 1e12;
/// Smallest RoPE base θ: the angles p · θ^(−2i/d_k) reach p/θ, which a θ near 0 makes
/// infinite (and 0 · ∞ at the first position is no number).
pub const MIN_ROPE_THETA: f64 = 1e-6;

/// The step size η of one step of gradient descent in the tutor (`g`).
pub const DEFAULT_LEARNING_RATE: f64 = 0.1;
/// Largest `tile`: as many keys as a lesson can have, so one tile may always hold every key.
/// A larger tile would show nothing more, since a tile past the last key is cut at it.
pub const MAX_TILE: usize = MAX_TOKENS;
/// Columns a tab expands to in lesson text.
pub(crate) const TAB_WIDTH: usize = 4;
/// Deepest nesting of arrays and inline tables. A lesson needs 3 (an inline table of rows of
/// numbers); the TOML parser recurses once per level on malformed input, so the text is
/// checked for this before it is parsed.
pub(crate) const MAX_NESTING: usize = 8;
/// Most attention heads (`heads`): every head is a full set of matrices on screen and in JSON,
/// and no lesson needs more than a real model's 64 to show what several heads do.
pub(crate) const MAX_HEADS: usize = 64;
/// Most numbers the matrices of all heads together may hold, as `head_numbers` counts them.
/// Every head has its own seq_len × seq_len scores, scaled, masked and weights (and the
/// softmax's working), and with embeddings and W_o its own d_model × d_model and
/// d_model × d_out circuits: 64 heads of the largest one-head lesson would need over a
/// gigabyte. 8 Mi numbers (64 MB) keeps a lesson of many heads within the memory of the
/// largest one-head lesson, which needs 2.5 Mi of them.
pub(crate) const MAX_HEAD_NUMBERS: usize = 8 * 1024 * 1024;

/// Widest d_model whose circuits a lesson has: a circuit is d_model × d_model per head, which
/// past 128 columns is pages of numbers no learner reads (and 16 heads at d_model 1024 would
/// hold 256 MB of them). A wider lesson has every other step.
pub(crate) const MAX_CIRCUIT_WIDTH: usize = 128;

/// Whether a lesson with these inputs and this W_o has the circuits: embeddings, W_o, and a
/// d_model up to `MAX_CIRCUIT_WIDTH`.
pub(crate) fn has_circuits(d_model: Option<usize>, has_w_o: bool) -> bool {
    has_w_o && d_model.is_some_and(|d_model| d_model <= MAX_CIRCUIT_WIDTH)
}

/// The numbers the matrices of `heads` heads hold: per head, 6 queries × keys matrices
/// (scores, scaled, masked, weights and the softmax's exponentials and their sums, rounded
/// up), and the two circuits when the lesson has them (`circuit_widths` = (d_model, d_out)).
/// The keys are the queries' tokens, or the source's in cross-attention.
pub(crate) fn head_numbers(
    heads: usize,
    queries: usize,
    keys: usize,
    circuit_widths: Option<(usize, usize)>,
) -> usize {
    let circuits = circuit_widths.map_or(0, |(d_model, d_out)| d_model * (d_model + d_out));
    heads.saturating_mul(6 * queries * keys + circuits)
}
