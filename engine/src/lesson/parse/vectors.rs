//! The norm's keys (`norm`, `norm_gain`, `norm_bias`, `norm_epsilon`) and the projections'
//! biases (`b_q`, `b_k`, `b_v`, `b_o`): a vector is a flat array of numbers, one per column of
//! what it is added to or multiplies, and its length is checked against that width.

use std::sync::Arc;

use nalgebra::DMatrix;
use toml::de::DeValue;

use super::report::unknown_name;
use super::values::number_value;
use super::{Entries, Entry, Reader, Value};
use crate::lesson::diagnostic::Diagnostic;
use crate::lesson::limits::MAX_ABS_VALUE;
use crate::lesson::{Biases, DEFAULT_NORM_EPSILON, InputMatrix, Inputs, NormInputs, NormKind};
use crate::pipeline::Heads;

impl Reader<'_> {
    /// One vector: a flat array of `width` finite numbers (`width` said as `wanted`).
    fn vector(
        &mut self,
        key: &str,
        value: &Value<'_>,
        width: usize,
        wanted: &str,
    ) -> Option<InputMatrix> {
        let DeValue::Array(cells) = value.get_ref() else {
            self.wrong_type(
                value,
                &format!("`{key}`"),
                "a flat array of numbers",
                &format!("{key} = [0.5, -1, 0.25]"),
            );
            return None;
        };
        if cells
            .iter()
            .any(|cell| matches!(cell.get_ref(), DeValue::Array(_)))
        {
            // The learner's own numbers, the inner brackets taken away: what to write.
            let flat: Vec<String> = cells
                .iter()
                .flat_map(|cell| match cell.get_ref() {
                    DeValue::Array(inner) => {
                        inner.iter().map(|item| self.text_at(item.span())).collect()
                    }
                    _ => vec![self.text_at(cell.span())],
                })
                .collect();
            self.error(
                Diagnostic::error(
                    value.span(),
                    format!("`{key}` is a vector: one flat array of numbers"),
                )
                .label("an array of rows")
                .help(format!(
                    "write it without the inner brackets, {wanted}: {key} = [{}]",
                    flat.join(", ")
                )),
            );
            return None;
        }
        if cells.len() != width {
            self.error(
                Diagnostic::error(
                    value.span(),
                    format!("`{key}` has {} numbers; it needs {width}", cells.len()),
                )
                .label(format!("{} numbers", cells.len()))
                .help(format!("one number per column: {wanted}")),
            );
            return None;
        }
        let mut numbers = Vec::with_capacity(width);
        let mut good = true;
        for (index, cell) in cells.iter().enumerate() {
            let place = format!("`{key}` number {}", index + 1);
            match number_value(cell.get_ref()) {
                Ok(number) if number.is_finite() && number.abs() <= MAX_ABS_VALUE => {
                    numbers.push(number)
                }
                Ok(_) => {
                    self.error(
                        Diagnostic::error(
                            cell.span(),
                            format!("{place}: {} is out of range", self.text_at(cell.span())),
                        )
                        .label(format!("|value| must be at most {MAX_ABS_VALUE:e}"))
                        .help("lesson numbers are finite and lie between -1e6 and 1e6"),
                    );
                    good = false;
                }
                Err(problem) => {
                    self.error(
                        Diagnostic::error(cell.span(), format!("{place}: {problem}"))
                            .label("expected a number")
                            .help("write a number such as 0.25 or -1"),
                    );
                    good = false;
                }
            }
        }
        good.then(|| InputMatrix {
            values: Arc::new(DMatrix::from_row_slice(1, width, &numbers)),
            generator: None,
        })
    }

    /// `key` given where the lesson has not got what it belongs to: said, and not read.
    fn stray(&mut self, entry: Entry<'_, '_>, key: &str, why: &str, help: &str) {
        if let Some((span, _)) = entry {
            self.error(Diagnostic::error(span, format!("`{key}` {why}")).help(help.to_string()));
        }
    }

    /// `norm`, with its gain, bias and ε: `Some(None)` for a lesson without a norm, `None`
    /// when something written cannot be read (and was said).
    pub(super) fn norm(
        &mut self,
        entries: &Entries<'_, '_>,
        format: Option<u32>,
        inputs: Option<&Inputs>,
    ) -> Option<Option<NormInputs>> {
        let entry = entries.get("norm");
        let (gain, bias, epsilon) = (
            entries.get("norm_gain"),
            entries.get("norm_bias"),
            entries.get("norm_epsilon"),
        );
        // A key of format 2 in a format 1 lesson is said to be so first, whatever else is wrong.
        let mut of_format = true;
        for (entry, key) in [
            (&entry, "norm"),
            (&gain, "norm_gain"),
            (&bias, "norm_bias"),
            (&epsilon, "norm_epsilon"),
        ] {
            if let Some((span, _)) = entry {
                of_format &= self.of_its_format(key, span.clone(), format);
            }
        }
        if !of_format {
            return None;
        }
        let Some((_, value)) = entry else {
            let any = [&gain, &bias, &epsilon].iter().any(|entry| entry.is_some());
            for (entry, key) in [
                (gain, "norm_gain"),
                (bias, "norm_bias"),
                (epsilon, "norm_epsilon"),
            ] {
                self.stray(
                    entry,
                    key,
                    "belongs to a norm, and this lesson has no `norm`",
                    "add `norm = \"layer\"` (GPT-2's LayerNorm) or `norm = \"rms\"` (Llama's RMSNorm), or remove it",
                );
            }
            return if any { None } else { Some(None) };
        };
        let kind = match value.get_ref() {
            DeValue::String(text) => match text.as_ref() {
                "layer" => NormKind::Layer,
                "rms" => NormKind::Rms,
                other => {
                    self.error(unknown_name(
                        value.span(),
                        "norm",
                        other,
                        &["layer", "rms"],
                        "write `norm = \"layer\"` (LayerNorm, as GPT-2) or `norm = \"rms\"` (RMSNorm, as Llama)",
                    ));
                    return None;
                }
            },
            _ => {
                self.wrong_type(value, "`norm`", "\"layer\" or \"rms\"", "norm = \"layer\"");
                return None;
            }
        };
        let Some(inputs) = inputs else {
            // Without the inputs read there is no d_model to check the vectors against; the
            // inputs' own problems are said where they are read.
            return None;
        };
        let Some(d_model) = inputs.d_model() else {
            self.error(
                Diagnostic::error(value.span(), "a norm needs embeddings")
                    .label("this lesson gives Q, K and V")
                    .help("the norm rescales each row of X before W_q, W_k and W_v read it: give `embeddings`, `w_q`, `w_k`, `w_v` instead of `q`, `k`, `v`, or remove `norm`"),
            );
            return None;
        };
        let wanted = format!("d_model = {d_model} numbers, one per column of X");
        let mut good = true;
        let gain = match gain {
            Some((_, value)) => {
                let read = self.vector("norm_gain", value, d_model, &wanted);
                good &= read.is_some();
                read
            }
            None => None,
        };
        let bias = match (bias, kind) {
            (Some((span, _)), NormKind::Rms) => {
                self.error(
                    Diagnostic::error(span, "`norm_bias` is LayerNorm's: RMSNorm has no bias")
                        .label("with norm = \"rms\"")
                        .help("RMSNorm only divides by the root mean square and multiplies by the gain: remove `norm_bias`, or write `norm = \"layer\"`"),
                );
                good = false;
                None
            }
            (Some((_, value)), NormKind::Layer) => {
                let read = self.vector("norm_bias", value, d_model, &wanted);
                good &= read.is_some();
                read
            }
            (None, _) => None,
        };
        let epsilon = match epsilon {
            None => DEFAULT_NORM_EPSILON,
            Some((_, value)) => match number_value(value.get_ref()) {
                Ok(number) if number > 0.0 && number <= 1.0 => number,
                Ok(_) => {
                    self.error(
                        Diagnostic::error(
                            value.span(),
                            format!("`norm_epsilon` must be above 0 and at most 1, found {}", self.text_at(value.span())),
                        )
                        .label("not a small positive number")
                        .help("ε keeps a constant row from dividing by zero: 1e-5 (GPT-2, nn.LayerNorm's default) or 1e-6 (Llama)"),
                    );
                    return None;
                }
                Err(_) => {
                    self.wrong_type(
                        value,
                        "`norm_epsilon`",
                        "a number above 0",
                        "norm_epsilon = 1e-5",
                    );
                    return None;
                }
            },
        };
        // Not given: γ = 1 and β = 0, held as numbers so that a learner can edit them (the
        // writer leaves them out while they are so).
        let gain =
            gain.or_else(|| Some(InputMatrix::literal(DMatrix::from_element(1, d_model, 1.0))));
        let bias = match kind {
            NormKind::Layer => {
                bias.or_else(|| Some(InputMatrix::literal(DMatrix::zeros(1, d_model))))
            }
            NormKind::Rms => None,
        };
        good.then_some(Some(NormInputs {
            kind,
            gain,
            bias,
            epsilon,
        }))
    }

    /// `b_q`, `b_k`, `b_v` and `b_o`, each as wide as what it is added to; `None` when one
    /// written cannot be read (and was said).
    pub(super) fn biases(
        &mut self,
        entries: &Entries<'_, '_>,
        format: Option<u32>,
        (inputs, heads, w_o): (Option<&Inputs>, Option<Heads>, Option<&InputMatrix>),
    ) -> Option<Biases> {
        let written: Vec<(&str, Entry<'_, '_>)> = ["b_q", "b_k", "b_v", "b_o"]
            .into_iter()
            .map(|key| (key, entries.get(key)))
            .collect();
        if written.iter().all(|(_, entry)| entry.is_none()) {
            return Some(Biases::default());
        }
        let mut good = true;
        for (key, entry) in &written {
            if let Some((span, _)) = entry {
                good &= self.of_its_format(key, span.clone(), format);
            }
        }
        if !good {
            return None;
        }
        let (Some(inputs), Some(heads)) = (inputs, heads) else {
            return None;
        };
        let Inputs::Projected { w_q, w_k, w_v, .. } = inputs else {
            for (key, entry) in &written {
                if key != &"b_o" {
                    self.stray(
                        entry.clone(),
                        key,
                        "is added to a projection, and this lesson gives Q, K and V",
                        "b_q, b_k and b_v are added to X·W_q, X·W_k and X·W_v: give `embeddings`, `w_q`, `w_k`, `w_v` instead of `q`, `k`, `v`, or add the biases to the Q, K and V you give",
                    );
                    good &= entry.is_none();
                }
            }
            if !good {
                return None;
            }
            return self.output_bias(&written, w_o).map(|o| Biases {
                o,
                ..Biases::default()
            });
        };
        let (query, kv) = (heads.query, heads.kv.max(1));
        let per = |whose: &str, count: usize, width: usize| {
            if count == 1 {
                format!("{width} numbers, {whose}")
            } else {
                format!("{} numbers, {whose}", count * width)
            }
        };
        let d_k = w_k.values.ncols() / kv;
        let d_v = w_v.values.ncols() / kv;
        let widths = [
            (
                w_q.values.ncols(),
                if query == 1 {
                    per("one per column of W_q (d_k)", 1, w_q.values.ncols())
                } else {
                    format!(
                        "{query} heads × d_k {} = {} numbers, one per column of W_q",
                        w_q.values.ncols() / query,
                        w_q.values.ncols()
                    )
                },
            ),
            (
                w_k.values.ncols(),
                if kv == 1 {
                    per("one per column of W_k (d_k)", 1, d_k)
                } else {
                    format!(
                        "{kv} K/V groups × d_k {d_k} = {} numbers, one per column of W_k",
                        w_k.values.ncols()
                    )
                },
            ),
            (
                w_v.values.ncols(),
                if kv == 1 {
                    per("one per column of W_v (d_v)", 1, d_v)
                } else {
                    format!(
                        "{kv} K/V groups × d_v {d_v} = {} numbers, one per column of W_v",
                        w_v.values.ncols()
                    )
                },
            ),
        ];
        let mut read = [None, None, None];
        for ((slot, (key, entry)), (width, wanted)) in read.iter_mut().zip(&written).zip(widths) {
            if let Some((_, value)) = entry {
                *slot = self.vector(key, value, width, &wanted);
                good &= slot.is_some();
            }
        }
        let o = self.output_bias(&written, w_o);
        let [q, k, v] = read;
        (good && o.is_some()).then(|| Biases {
            q,
            k,
            v,
            o: o.flatten(),
        })
    }

    /// `b_o`: as wide as W_o's columns, and only with W_o. `Some(None)` when it is not written.
    fn output_bias(
        &mut self,
        written: &[(&str, Entry<'_, '_>)],
        w_o: Option<&InputMatrix>,
    ) -> Option<Option<InputMatrix>> {
        let Some((_, Some((span, value)))) = written.iter().find(|(key, _)| *key == "b_o") else {
            return Some(None);
        };
        let Some(w_o) = w_o else {
            self.error(
                Diagnostic::error(
                    span.clone(),
                    "`b_o` is added to concat·W_o, and this lesson has no `w_o`",
                )
                .help(
                    "give `w_o` (its rows the heads' outputs side by side, H·d_v), or remove `b_o`",
                ),
            );
            return None;
        };
        let d_out = w_o.values.ncols();
        let wanted = format!("d_out = {d_out} numbers, one per column of W_o");
        self.vector("b_o", value, d_out, &wanted).map(Some)
    }
}
