//! `heads` and `kv_heads` (format 2): how many query heads a lesson has and how many key/value
//! groups they share, and the rules that tie them to `w_o` (required with several heads) and to
//! the format.

use std::ops::Range;

use toml::de::DeValue;

use super::values::{integer_value, type_name};
use super::{Entries, Reader};
use crate::lesson::diagnostic::Diagnostic;
use crate::lesson::limits::MAX_HEADS;
use crate::pipeline::Heads;

/// The keys of format 2 that heads bring.
const HEADS_KEYS: [&str; 3] = ["heads", "kv_heads", "w_o"];

impl Reader<'_> {
    /// H and G: one head by default, as many groups as heads by default. `None` (said) when a
    /// count is not a positive integer within the limit, or G does not divide H, or the keys
    /// are in a format 1 file.
    pub(super) fn heads(
        &mut self,
        entries: &Entries<'_, '_>,
        format: Option<u32>,
    ) -> Option<Heads> {
        let mut ok = true;
        if format == Some(1) {
            for key in HEADS_KEYS {
                if let Some((span, _)) = entries.get(key) {
                    ok = false;
                    self.error(
                        Diagnostic::error(span, format!("`{key}` needs `format = 2`"))
                            .label("a format 1 lesson has one head and no W_o")
                            .help("write `format = 2` at the top of the file; everything else of format 1 stays as it is"),
                    );
                }
            }
        }
        let query = match entries.get("heads") {
            Some((_, value)) => self.head_count(value, "heads"),
            None => Some(1),
        };
        let kv = match entries.get("kv_heads") {
            Some((_, value)) => self
                .head_count(value, "kv_heads")
                .map(|kv| (kv, Some(value.span()))),
            None => query.map(|query| (query, None)),
        };
        let (query, (kv, kv_span)) = (query?, kv?);
        if let Some(span) = kv_span
            && !query.is_multiple_of(kv)
        {
            let heads_said = if entries.get("heads").is_some() {
                format!("heads = {query}")
            } else {
                "heads = 1 (the default)".to_string()
            };
            self.error(
                Diagnostic::error(
                    span,
                    format!("kv_heads = {kv} does not divide {heads_said}"),
                )
                .label(format!("{query} heads cannot share {kv} groups evenly"))
                .help(format!(
                    "each K/V group serves H/G query heads: use a kv_heads that divides {query} ({}), or set heads to a multiple of {kv}",
                    divisors(query)
                )),
            );
            return None;
        }
        ok.then_some(Heads { query, kv })
    }

    /// A count of heads or groups: a positive integer, at most `MAX_HEADS`.
    fn head_count(&mut self, value: &super::Value<'_>, key: &str) -> Option<usize> {
        let DeValue::Integer(integer) = value.get_ref() else {
            let found = type_name(value.get_ref());
            self.count_error(value.span(), key, &format!("found {found}"));
            return None;
        };
        match integer_value(integer) {
            Ok(count) if (1..=MAX_HEADS as i64).contains(&count) => Some(count as usize),
            Ok(count) => {
                self.count_error(value.span(), key, &format!("found {count}"));
                None
            }
            Err(_) => {
                self.count_error(value.span(), key, "found an integer too large");
                None
            }
        }
    }

    fn count_error(&mut self, span: Range<usize>, key: &str, found: &str) {
        let example = if key == "heads" {
            "heads = 4"
        } else {
            "kv_heads = 2 (with heads = 4)"
        };
        self.error(
            Diagnostic::error(
                span,
                format!("`{key}` must be a whole number from 1 to {MAX_HEADS}, {found}"),
            )
            .label("not a count of heads")
            .help(format!("for example {example}")),
        );
    }

    /// With several heads, W_o is what brings their outputs back to one: a lesson without it is
    /// told so at its `heads`.
    /// `d_v` is one head's d_v, when the inputs could be read.
    pub(super) fn w_o_needed(
        &mut self,
        entries: &Entries<'_, '_>,
        heads: Heads,
        d_v: Option<usize>,
    ) -> bool {
        if heads.query == 1 || entries.get("w_o").is_some() {
            return true;
        }
        let Some((_, value)) = entries.get("heads") else {
            return true;
        };
        self.error(
            Diagnostic::error(
                value.span(),
                format!("{} heads need `w_o` to bring their outputs together", heads.query),
            )
            .label("several heads")
            .help(match d_v {
                Some(d_v) => format!(
                    "add `w_o` with H·d_v = {} × {d_v} = {} rows (the heads' outputs side by side) and d_out columns, e.g. w_o = {{ random = \"normal\", seed = 1, shape = [{}, {d_v}] }}",
                    heads.query,
                    heads.query * d_v,
                    heads.query * d_v
                ),
                None => format!(
                    "add `w_o` with H·d_v = {} × d_v rows (the heads' outputs side by side) and d_out columns",
                    heads.query
                ),
            }),
        );
        false
    }
}

/// "1, 2, 4": the divisors of `n`, the group counts its heads can share.
fn divisors(n: usize) -> String {
    let list: Vec<String> = (1..=n)
        .filter(|d| n.is_multiple_of(*d))
        .map(|d| d.to_string())
        .collect();
    list.join(", ")
}
