//! The words every part of the parser shares: an unknown key, a value of the wrong type, a
//! likely typo, a plural, an echo of what was written.

use std::ops::Range;

use super::values::type_name;
use super::{Reader, Value};
use crate::lesson::diagnostic::Diagnostic;
use crate::lesson::text::printable;

impl Reader<'_> {
    /// Says that `name` is no key here, with the key it may have been meant to be, which it
    /// returns.
    pub(super) fn unknown_key<'k>(
        &mut self,
        name: &str,
        span: Range<usize>,
        known: &[&'k str],
        label: &str,
    ) -> Option<&'k str> {
        let mut diagnostic = Diagnostic::error(
            span,
            format!("unknown key `{}`", shortened(&printable(name))),
        )
        .label(label);
        let suggestion = did_you_mean(name, known);
        diagnostic = match suggestion {
            Some(suggestion) => diagnostic.help(format!("did you mean `{suggestion}`?")),
            None => diagnostic.help(format!("the keys here are: {}", known.join(", "))),
        };
        self.error(diagnostic);
        suggestion
    }

    pub(super) fn wrong_type(
        &mut self,
        value: &Value<'_>,
        what: &str,
        expected: &str,
        example: &str,
    ) {
        self.error(
            Diagnostic::error(
                value.span(),
                format!(
                    "{what} must be {expected}, found {}",
                    type_name(value.get_ref())
                ),
            )
            .label(format!("expected {expected}"))
            .help(format!("for example: {example}")),
        );
    }

    /// The text as written at `span`, safe to echo.
    pub(super) fn text_at(&self, span: Range<usize>) -> String {
        printable(self.source.get(span).unwrap_or("this value"))
    }
}

/// A name that is none of `known` (a distribution, a mask): the closest known name when it is
/// likely a typo, else `otherwise`.
pub(super) fn unknown_name(
    span: Range<usize>,
    noun: &str,
    name: &str,
    known: &[&str],
    otherwise: &str,
) -> Diagnostic {
    let diagnostic = Diagnostic::error(span, format!("unknown {noun} \"{}\"", printable(name)))
        .label(format!("not a {noun}"));
    suggest(diagnostic, name, known, otherwise)
}

/// A diagnostic for a name that is not one of `known` (a distribution, a mask, a token): the
/// closest known name when it is likely a typo, else `otherwise`.
fn suggest(
    diagnostic: Diagnostic,
    name: &str,
    known: &[&str],
    otherwise: impl Into<String>,
) -> Diagnostic {
    match did_you_mean(name, known) {
        Some(suggestion) => diagnostic.help(format!("did you mean \"{}\"?", printable(suggestion))),
        None => diagnostic.help(otherwise),
    }
}

/// Text of more characters than its limit: `what` is how the text is named ("`source`",
/// "`slips` entry 2").
pub(super) fn too_long(
    span: Range<usize>,
    what: &str,
    text: &str,
    max: usize,
) -> Option<Diagnostic> {
    let count = text.chars().count();
    (count > max).then(|| {
        Diagnostic::error(
            span,
            format!("{what} has {count} characters; the limit is {max}"),
        )
        .label("too long")
    })
}

/// A label that names none of the tokens (a `focus`, a figure's row): the closest token when
/// it is likely a typo, else `otherwise`.
pub(super) fn not_a_token(
    span: Range<usize>,
    message: String,
    label: &str,
    tokens: &[String],
    otherwise: String,
) -> Diagnostic {
    let names: Vec<&str> = tokens.iter().map(String::as_str).collect();
    let diagnostic = Diagnostic::error(span, message).label("no such token");
    suggest(diagnostic, label, &names, otherwise)
}

/// Echoed text cut to a readable length: a 100,000-character key is not worth printing.
fn shortened(text: &str) -> String {
    const MAX: usize = 40;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(MAX).collect::<String>())
    }
}

/// "1 row", "3 rows".
pub(super) fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// The closest known name, when it is close enough to be a likely typo.
pub(crate) fn did_you_mean<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    // Jaro-Winkler catches most typos; a swap of two letters in a short word ("cta" for "cat")
    // scores low there, so one edit (transpositions included) also counts.
    known
        .iter()
        .map(|candidate| {
            let close =
                strsim::damerau_levenshtein(name, candidate) <= 1 && name.chars().count() >= 2;
            let similarity = strsim::jaro_winkler(name, candidate);
            (
                if close {
                    similarity.max(0.81)
                } else {
                    similarity
                },
                *candidate,
            )
        })
        .filter(|(similarity, _)| *similarity > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}
