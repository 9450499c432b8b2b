//! `positions` (format 2): how word order enters the lesson. A name ("none", "sinusoidal",
//! "rope") or a seq_len × d_model matrix of learned positions, checked against the inputs it
//! works on; and RoPE's own keys, `rope_pairing` and `rope_theta`.

use toml::de::DeValue;

use super::inputs::{Axis, QueryWidth};
use super::report::unknown_name;
use super::values::number_value;
use super::{Entry, Reader};
use crate::lesson::diagnostic::Diagnostic;
use crate::lesson::limits::{MAX_ROPE_THETA, MIN_ROPE_THETA};
use crate::lesson::{DEFAULT_ROPE_THETA, Inputs, PositionInputs, RopePairing};

/// The names `positions` may have; a matrix is the fourth kind.
const KINDS: [&str; 3] = ["none", "sinusoidal", "rope"];

impl Reader<'_> {
    /// The lesson's positions: none without the key. `format` is the lesson's format (the key
    /// needs 2), `tokens` its token count, `inputs` its matrices when they could be read and
    /// agree, `query_width` the queries' width when W_q (or Q) could be read, and `query_heads`
    /// its count of query heads when it could be read.
    pub(super) fn positions(
        &mut self,
        entry: Entry<'_, '_>,
        format: Option<u32>,
        tokens: Option<usize>,
        (inputs, query_width): (Option<&Inputs>, Option<QueryWidth>),
        query_heads: Option<usize>,
        cross: bool,
    ) -> Option<PositionInputs> {
        let Some((key_span, value)) = entry else {
            return Some(PositionInputs::None);
        };
        if !self.of_its_format("positions", key_span.clone(), format) {
            return None;
        }
        let positions = match value.get_ref() {
            DeValue::String(text) => match text.as_ref() {
                "none" => PositionInputs::None,
                "sinusoidal" => PositionInputs::Sinusoidal,
                "rope" => PositionInputs::Rope,
                other => {
                    self.error(unknown_name(
                        value.span(),
                        "kind of positions",
                        other,
                        &KINDS,
                        "positions are \"none\", \"sinusoidal\", \"rope\", or a seq_len × d_model matrix of learned positions",
                    ));
                    return None;
                }
            },
            DeValue::Array(_) | DeValue::Table(_) if cross => {
                self.error(
                    Diagnostic::error(value.span(), "learned positions are not supported in cross-attention yet")
                        .label("a learned table of the target's positions")
                        .help("a learned table belongs to one sequence and the source would need its own: use \"sinusoidal\" or \"rope\", which count each sequence from position 0, or add the source's positions into `source_embeddings` yourself"),
                );
                return None;
            }
            DeValue::Array(_) | DeValue::Table(_) => {
                PositionInputs::Learned(self.matrix("positions", Axis::SeqLen.limit(), value)?)
            }
            _ => {
                self.wrong_type(
                    value,
                    "`positions`",
                    "\"none\", \"sinusoidal\", \"rope\" or a matrix of learned positions",
                    "positions = \"sinusoidal\"",
                );
                return None;
            }
        };
        // Each head's d_k columns are turned as a vector of their own, so one head's d_k must be
        // even (the whole width of several heads may be even when each is odd). It needs only
        // the queries' width and the heads' count: told even when the other inputs disagree.
        if let (PositionInputs::Rope, Some(width), Some(heads)) =
            (&positions, query_width, query_heads)
            && width.columns.is_multiple_of(heads)
            && (width.columns / heads) % 2 == 1
        {
            let d_k = width.columns / heads;
            let matrices = if width.projected {
                "w_q and w_k"
            } else {
                "q and k"
            };
            let (message, help) = if heads == 1 {
                (
                    format!(
                        "RoPE turns the columns of queries and keys in pairs, and d_k is {d_k}, an odd number"
                    ),
                    format!(
                        "give {matrices} {} or {} columns (or use other positions)",
                        d_k - 1,
                        d_k + 1
                    ),
                )
            } else {
                (
                    format!(
                        "RoPE turns the columns of each head's queries and keys in pairs, and one head's d_k is {d_k}, an odd number"
                    ),
                    format!(
                        "give {matrices} {} or {} columns for each head (or use other positions)",
                        d_k - 1,
                        d_k + 1
                    ),
                )
            };
            self.error(
                Diagnostic::error(value.span(), message)
                    .label("needs an even d_k")
                    .help(help),
            );
            return None;
        }
        let inputs = inputs?;
        let d_model = inputs.d_model();
        match (&positions, d_model) {
            (PositionInputs::Sinusoidal | PositionInputs::Learned(_), None) => {
                self.error(
                    Diagnostic::error(value.span(), "positions are added to embeddings, and this lesson gives q, k, v directly")
                        .label("nothing to add them to")
                        .help("give embeddings with w_q, w_k, w_v, or use positions = \"rope\", which turns the given q and k"),
                );
                return None;
            }
            (PositionInputs::Learned(matrix), Some(d_model)) => {
                let (rows, cols) = matrix.values.shape();
                let seq_len = tokens?;
                if (rows, cols) != (seq_len, d_model) {
                    self.error(
                        Diagnostic::error(
                            value.span(),
                            format!("`positions` is {rows} × {cols}, but it is added to embeddings of {seq_len} × {d_model}"),
                        )
                        .label(format!("{rows} × {cols}"))
                        .help(format!("give one row per token and one column per embedding column: {seq_len} × {d_model}")),
                    );
                    return None;
                }
            }
            _ => {}
        }
        Some(positions)
    }
}

/// The names `rope_pairing` may have.
const PAIRINGS: [&str; 2] = ["interleaved", "half"];

impl Reader<'_> {
    /// `rope_pairing` (format 2, with RoPE): which columns are turned together. Interleaved
    /// without the key; `None` when it is given but cannot be.
    pub(super) fn rope_pairing(
        &mut self,
        entry: Entry<'_, '_>,
        format: Option<u32>,
        positions: Option<&PositionInputs>,
    ) -> Option<RopePairing> {
        let Some((key_span, value)) = entry else {
            return Some(RopePairing::default());
        };
        if !self.of_its_format("rope_pairing", key_span.clone(), format) {
            return None;
        }
        let pairing = match value.get_ref() {
            DeValue::String(text) => match text.as_ref() {
                "interleaved" => RopePairing::Interleaved,
                "half" => RopePairing::Half,
                other => {
                    self.error(unknown_name(
                        value.span(),
                        "RoPE pairing",
                        other,
                        &PAIRINGS,
                        "`rope_pairing` is \"interleaved\" (columns 2i and 2i+1, the default) or \"half\" (column i with i + d_k/2, as Llama, Mistral and Qwen2 checkpoints)",
                    ));
                    return None;
                }
            },
            _ => {
                self.wrong_type(
                    value,
                    "`rope_pairing`",
                    "\"interleaved\" or \"half\"",
                    "rope_pairing = \"half\"",
                );
                return None;
            }
        };
        self.only_with_rope("rope_pairing", key_span, positions)
            .then_some(pairing)
    }

    /// `rope_theta` (format 2, with RoPE): the base θ of the angles p · θ^(−2i/d_k).
    /// `DEFAULT_ROPE_THETA` without the key; `None` when it is given but cannot be.
    pub(super) fn rope_theta(
        &mut self,
        entry: Entry<'_, '_>,
        format: Option<u32>,
        positions: Option<&PositionInputs>,
    ) -> Option<f64> {
        let Some((key_span, value)) = entry else {
            return Some(DEFAULT_ROPE_THETA);
        };
        if !self.of_its_format("rope_theta", key_span.clone(), format) {
            return None;
        }
        let theta = match value.get_ref() {
            DeValue::Integer(_) | DeValue::Float(_) => number_value(value.get_ref()).ok(),
            _ => {
                self.wrong_type(value, "`rope_theta`", "a number", "rope_theta = 500000");
                return None;
            }
        };
        let Some(theta) = theta.filter(|theta| (MIN_ROPE_THETA..=MAX_ROPE_THETA).contains(theta))
        else {
            self.error(
                Diagnostic::error(
                    value.span(),
                    format!(
                        "`rope_theta` must be a number from 1e-6 to 1e12, found {}",
                        self.text_at(value.span())
                    ),
                )
                .label("not a base for RoPE's angles")
                .help("θ is the base of the angles p · θ^(−2i/d_k): 10000 by default (RoFormer, Llama 2), 500000 in Llama 3, 1000000 in Qwen2"),
            );
            return None;
        };
        self.only_with_rope("rope_theta", key_span, positions)
            .then_some(theta)
    }

    /// Whether the lesson's positions are RoPE, which `key` is about; says so when they are
    /// not. Positions that could not be read were said already.
    fn only_with_rope(
        &mut self,
        key: &str,
        key_span: std::ops::Range<usize>,
        positions: Option<&PositionInputs>,
    ) -> bool {
        let kind = match positions {
            None | Some(PositionInputs::Rope) => return true,
            Some(PositionInputs::None) => "this lesson has no positions",
            Some(PositionInputs::Sinusoidal) => "this lesson's positions are \"sinusoidal\"",
            Some(PositionInputs::Learned(_)) => "this lesson's positions are a learned matrix",
        };
        self.error(
            Diagnostic::error(key_span, format!("`{key}` needs `positions = \"rope\"`"))
                .label(kind)
                .help(format!(
                    "only RoPE turns queries and keys pair by pair by angles of base θ: write `positions = \"rope\"`, or remove `{key}`"
                )),
        );
        false
    }
}
