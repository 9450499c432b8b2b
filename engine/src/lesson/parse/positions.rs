//! `positions` (format 2): how word order enters the lesson. A name ("none", "sinusoidal",
//! "rope") or a seq_len × d_model matrix of learned positions, checked against the inputs it
//! works on.

use toml::de::DeValue;

use super::inputs::{Axis, QueryWidth};
use super::report::unknown_name;
use super::{Entry, Reader};
use crate::lesson::diagnostic::Diagnostic;
use crate::lesson::{Inputs, PositionInputs};

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
