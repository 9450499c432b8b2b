//! The lesson's settings: `format`, `scale`, `mask`, `decode`, `tile`, `decimals` and `focus`.

use toml::de::DeValue;

use super::inputs::Axis;
use super::report::{not_a_token, unknown_name};
use super::values::integer_value;
use super::{Entry, Reader};
use crate::lesson::Mask;
use crate::lesson::diagnostic::Diagnostic;
use crate::lesson::limits::{DEFAULT_DECIMALS, DEFAULT_TILE, MAX_DECIMALS, MAX_TILE};
use crate::lesson::text::printable;

impl Reader<'_> {
    /// The file's format: 1, or 2 for positions. `None` when it is missing or unknown.
    pub(super) fn format(&mut self, entry: Entry<'_, '_>) -> Option<u32> {
        let Some((_, value)) = entry else {
            self.error(
                Diagnostic::error(0..0, "missing `format = 1`")
                    .label("lesson files start with their format version")
                    .help("add `format = 1` as the first line (`format = 2` for positions)"),
            );
            return None;
        };
        match value.get_ref() {
            DeValue::Integer(integer) => match integer_value(integer) {
                Ok(1) => Some(1),
                Ok(2) => Some(2),
                _ => {
                    self.error(
                        Diagnostic::error(value.span(), "unsupported lesson format")
                            .label("this attn-tutor reads formats 1 and 2")
                            .help("write `format = 1` (or 2 for positions), or use the attn-tutor release that wrote this file"),
                    );
                    None
                }
            },
            _ => {
                self.wrong_type(value, "`format`", "an integer", "format = 1");
                None
            }
        }
    }

    pub(super) fn boolean(&mut self, entry: Entry<'_, '_>, key: &str) -> Option<bool> {
        let (_, value) = entry?;
        match value.get_ref() {
            DeValue::Boolean(flag) => Some(*flag),
            _ => {
                self.wrong_type(
                    value,
                    &format!("`{key}`"),
                    "true or false",
                    &format!("{key} = true"),
                );
                None
            }
        }
    }

    /// `grad_output` (format 2): dL/d(output), as many columns as the output has (W_o's
    /// columns, or d_v without W_o); its rows, one per token, are checked with the other
    /// inputs'. Returns whether it is absent or fits.
    pub(super) fn grad_output_fits(
        &mut self,
        entry: Entry<'_, '_>,
        format: Option<u32>,
        grad_output: Option<&crate::lesson::InputMatrix>,
        (w_o, inputs, heads): (
            Option<&crate::lesson::InputMatrix>,
            Option<&crate::lesson::Inputs>,
            Option<crate::pipeline::Heads>,
        ),
    ) -> bool {
        let Some((key, value)) = entry else {
            return true;
        };
        if !self.of_its_format("grad_output", key.clone(), format) {
            return false;
        }
        // With W_o, its columns are compared with grad_output's by the inputs' rules.
        let (Some(grad_output), Some(inputs), Some(heads), None) =
            (grad_output, inputs, heads, w_o)
        else {
            return true;
        };
        let d_out = inputs.all_groups_d_v() / heads.kv.max(1);
        let found = grad_output.values.ncols();
        if found != d_out {
            let whose = "d_v, the one head's output width";
            self.error(
                Diagnostic::error(
                    value.span(),
                    format!("`grad_output` has {found} columns, the output {d_out}"),
                )
                .label(format!("{found} columns"))
                .help(format!("grad_output is dL/d(output): one row per token and one column per column of the output, {d_out} ({whose})")),
            );
            return false;
        }
        true
    }

    /// `decode = true`: generation with a K/V cache, which only self-attention with the causal
    /// mask has (format 2). False when absent; `None` when it is given but cannot be.
    pub(super) fn decode(
        &mut self,
        entry: Entry<'_, '_>,
        format: Option<u32>,
        mask: Option<&Mask>,
        cross: bool,
    ) -> Option<bool> {
        let Some((key, value)) = entry.clone() else {
            return Some(false);
        };
        let decode = self.boolean(entry, "decode")?;
        if !decode {
            return Some(false);
        }
        if !self.of_its_format("decode", key.clone(), format) {
            return None;
        }
        if cross {
            self.error(
                Diagnostic::error(value.span(), "generation with a K/V cache is self-attention's")
                    .label("this lesson is cross-attention")
                    .help("a decoder's cross-attention reads a source that is whole before generation starts, so nothing about it is cached token by token: remove `decode`, or `source_tokens` and `source_embeddings` for a self-attention lesson"),
            );
            return None;
        }
        match mask {
            Some(Mask::Causal) | None => Some(true),
            // Generation has no mask to read: the cache is the causal mask, so only the
            // causal mask can be said, and it is said by name.
            Some(Mask::Matrix(_)) => {
                self.error(
                    Diagnostic::error(value.span(), "generation needs `mask = \"causal\"`")
                        .label("decode = true with a mask written as a matrix")
                        .help("generation reads no mask: each token sees the cache, the tokens up to it, which is what the causal mask says. A matrix is not taken, even one that is causal: write `mask = \"causal\"`, or remove `decode`"),
                );
                None
            }
            Some(Mask::None) => {
                self.error(
                    Diagnostic::error(value.span(), "generation needs `mask = \"causal\"`")
                        .label("decode = true without the causal mask")
                        .help("a model that generates one token at a time has only the tokens before it, which is what the causal mask says: write `mask = \"causal\"`, or remove `decode`"),
                );
                None
            }
        }
    }

    /// `tile = B` (format 2): how many keys the online softmax takes at a time. `DEFAULT_TILE`
    /// when absent; `None` when it is given but cannot be. A tile larger than the keys is
    /// taken: it is one tile, as FlashAttention's last tile is cut at the last key.
    pub(super) fn tile(&mut self, entry: Entry<'_, '_>, format: Option<u32>) -> Option<usize> {
        let Some((key, value)) = entry else {
            return Some(DEFAULT_TILE);
        };
        if !self.of_its_format("tile", key.clone(), format) {
            return None;
        }
        let found = match value.get_ref() {
            DeValue::Integer(integer) => match integer_value(integer) {
                Ok(tile) if (1..=MAX_TILE as i64).contains(&tile) => return Some(tile as usize),
                Ok(0) => "found 0: a tile holds at least one key".to_string(),
                Ok(tile) if tile < 0 => format!("found {tile}"),
                _ => format!(
                    "found {}, more keys than a lesson can have",
                    self.text_at(value.span())
                ),
            },
            DeValue::Float(float) => {
                let written = self.text_at(value.span());
                match float.as_str().parse::<f64>() {
                    // `tile = 2.0`: the number is right, the point makes it a float.
                    Ok(number) if number.is_finite() && number.fract() == 0.0 => {
                        format!("found {written}, a number with a point: write it without one")
                    }
                    _ => format!("found {written}, which is not a whole number"),
                }
            }
            other => format!("found {}", super::values::type_name(other)),
        };
        self.error(
            Diagnostic::error(
                value.span(),
                format!("`tile` must be a whole number of keys from 1 to {MAX_TILE}, {found}"),
            )
            .label("not a number of keys")
            .help(format!("the online softmax takes the keys B at a time: for example `tile = 2` (the default); a tile of {MAX_TILE} or of more keys than the lesson has takes them all at once")),
        );
        None
    }

    /// The mask: seq_len × seq_len in self-attention; in cross-attention (`cross`, with
    /// `source_len` source tokens when they could be read) seq_len × src_len, and never causal.
    pub(super) fn mask(
        &mut self,
        entry: Entry<'_, '_>,
        seq_len: Option<usize>,
        (cross, source_len): (bool, Option<usize>),
    ) -> Option<Mask> {
        let Some((_, value)) = entry else {
            return Some(Mask::None);
        };
        match value.get_ref() {
            DeValue::String(text) => match text.as_ref() {
                "none" => Some(Mask::None),
                "causal" if cross => {
                    self.error(
                        Diagnostic::error(value.span(), "a causal mask means nothing in cross-attention")
                            .label("the keys are the source's tokens")
                            .help("\"causal\" hides the tokens that come after a query in the same sequence; the source is another sequence, already whole before the target is made, so every target token may look at every source token: remove `mask`, or give a seq_len × src_len matrix of biases"),
                    );
                    None
                }
                "causal" => Some(Mask::Causal),
                other => {
                    self.error(unknown_name(
                        value.span(),
                        "mask",
                        other,
                        &["none", "causal"],
                        "a mask is \"none\", \"causal\", or a seq_len × seq_len matrix of biases (0 keeps, -inf hides; seq_len × src_len in cross-attention)",
                    ));
                    None
                }
            },
            DeValue::Array(_) => {
                // One row per query token; the columns (one per key token) are compared just below.
                let matrix = self.literal_matrix("mask", Axis::SeqLen.limit(), value, true)?;
                let seq_len = seq_len?;
                let keys = if cross { source_len? } else { seq_len };
                if matrix.nrows() != seq_len || matrix.ncols() != keys {
                    let there_are = match source_len {
                        Some(source_len) => {
                            format!("there are {seq_len} tokens and {source_len} source tokens")
                        }
                        None => format!("there are {seq_len} tokens"),
                    };
                    let help = match source_len {
                        Some(_) => {
                            "a mask has one row per query (token) and one column per key (source token)"
                        }
                        None => "a mask has one row per query and one column per key",
                    };
                    self.error(
                        Diagnostic::error(
                            value.span(),
                            format!(
                                "the mask is {} × {}, but {there_are}",
                                matrix.nrows(),
                                matrix.ncols()
                            ),
                        )
                        .label(format!("expected {seq_len} × {keys}"))
                        .help(help),
                    );
                    return None;
                }
                if let DeValue::Array(rows) = value.get_ref() {
                    for (r, row) in rows.iter().enumerate() {
                        if matrix.row(r).iter().all(|cell| *cell == f64::NEG_INFINITY) {
                            self.error(
                                Diagnostic::warning(row.span(), format!("row {} of the mask hides every key", r + 1))
                                    .label("all -inf")
                                    .help("this query has nothing to attend to: its weights and output will be 0; put a 0 where it may look"),
                            );
                        }
                    }
                }
                Some(Mask::Matrix(matrix))
            }
            _ => {
                self.wrong_type(
                    value,
                    "`mask`",
                    "\"none\", \"causal\" or a matrix",
                    "mask = \"causal\"",
                );
                None
            }
        }
    }

    pub(super) fn decimals(&mut self, entry: Entry<'_, '_>) -> usize {
        let Some((_, value)) = entry else {
            return DEFAULT_DECIMALS;
        };
        match value.get_ref() {
            DeValue::Integer(integer) => match integer_value(integer) {
                Ok(n) if (0..=MAX_DECIMALS as i64).contains(&n) => n as usize,
                _ => {
                    self.error(
                        Diagnostic::error(
                            value.span(),
                            format!("`decimals` must be between 0 and {MAX_DECIMALS}"),
                        )
                        .label("out of range")
                        .help("decimals = 3 shows 0.333"),
                    );
                    DEFAULT_DECIMALS
                }
            },
            _ => {
                self.wrong_type(value, "`decimals`", "an integer", "decimals = 3");
                DEFAULT_DECIMALS
            }
        }
    }

    /// `Some(None)` when there is no focus, `None` after an error.
    /// The row the tutor opens on: a token (of the target, in cross-attention, whose
    /// `source_tokens` are given to say so when one of them is named).
    pub(super) fn focus(
        &mut self,
        entry: Entry<'_, '_>,
        tokens: Option<&[String]>,
        source_tokens: Option<&[String]>,
    ) -> Option<Option<usize>> {
        let Some((_, value)) = entry else {
            return Some(None);
        };
        let tokens = tokens?;
        match value.get_ref() {
            DeValue::String(text) => {
                if let Some(row) = tokens.iter().position(|token| token == text.as_ref()) {
                    return Some(Some(row));
                }
                if source_tokens
                    .is_some_and(|source| source.iter().any(|token| token == text.as_ref()))
                {
                    let targets: Vec<String> =
                        tokens.iter().map(|token| printable(token)).collect();
                    self.error(
                        Diagnostic::error(
                            value.span(),
                            format!("`focus` names \"{}\", a source token", printable(text)),
                        )
                        .label("a key, not a query")
                        .help(format!(
                            "the focus is the query whose row is explained: one of `tokens` ({}), or a position from 1 to {}",
                            targets.join(", "),
                            tokens.len()
                        )),
                    );
                    return None;
                }
                self.error(not_a_token(
                    value.span(),
                    format!(
                        "`focus` names \"{}\", which is not a token",
                        printable(text)
                    ),
                    text,
                    tokens,
                    format!("use a token label or a position from 1 to {}", tokens.len()),
                ));
                None
            }
            DeValue::Integer(integer) => match integer_value(integer) {
                Ok(position) if position >= 1 && position as usize <= tokens.len() => {
                    Some(Some(position as usize - 1))
                }
                _ => {
                    self.error(
                        Diagnostic::error(
                            value.span(),
                            format!("`focus` position must be between 1 and {}", tokens.len()),
                        )
                        .label("no such position")
                        .help("positions count tokens from 1"),
                    );
                    None
                }
            },
            _ => {
                self.wrong_type(
                    value,
                    "`focus`",
                    "a token label or a position",
                    "focus = \"cat\"",
                );
                None
            }
        }
    }
}
