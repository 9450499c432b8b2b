//! The lesson's words: `title`, `source`, `summary` and the `tokens`, checked for what reaches a
//! terminal (control and invisible characters, width on screen, length); and the tokens'
//! `token_ids`, a tokenizer's numbers for them.

use std::ops::Range;

use toml::de::DeValue;

use super::report::{plural, too_long};
use super::values::{integer_value, type_name};
use super::{Entry, Reader, Value};
use crate::lesson::diagnostic::Diagnostic;
use crate::lesson::limits::MAX_TOKENS;
use crate::lesson::text::{LABEL_ROOM, Room, TooLarge, clean_text};

impl Reader<'_> {
    /// A single string field. `room` bounds its width on screen and its size, `max_chars` its
    /// length.
    pub(super) fn text_field(
        &mut self,
        entry: Entry<'_, '_>,
        key: &str,
        room: Option<Room>,
        max_chars: Option<usize>,
        required: bool,
    ) -> Option<String> {
        let Some((_, value)) = entry else {
            if required {
                self.error(
                    Diagnostic::error(0..0, format!("missing `{key}`"))
                        .label(format!("every lesson has a {key}"))
                        .help(format!("add `{key} = \"...\"` near the top of the file")),
                );
            }
            return None;
        };
        let DeValue::String(text) = value.get_ref() else {
            self.wrong_type(
                value,
                &format!("`{key}`"),
                "a string",
                &format!("{key} = \"...\""),
            );
            return None;
        };
        let text = self.clean(text, value.span(), &format!("`{key}`"), false)?;
        if required && text.trim().is_empty() {
            self.error(
                Diagnostic::error(value.span(), format!("`{key}` is blank"))
                    .label("nothing to show")
                    .help(format!("give the lesson a {key} the picker can show")),
            );
            return None;
        }
        if let Some(room) = room
            && let Err(problem) = room.check(&text)
        {
            let help = match problem {
                TooLarge::Columns { .. } => "shorten it; the summary can say more",
                TooLarge::Bytes { .. } => problem.help(),
            };
            self.error(
                Diagnostic::error(value.span(), problem.describe(&format!("`{key}`")))
                    .label("too long")
                    .help(help),
            );
            return None;
        }
        if let Some(max) = max_chars
            && let Some(diagnostic) = too_long(value.span(), &format!("`{key}`"), &text, max)
        {
            self.error(diagnostic);
            return None;
        }
        Some(text)
    }

    /// Refuses control and format characters, pointing at the offending one.
    pub(super) fn clean(
        &mut self,
        text: &str,
        span: Range<usize>,
        what: &str,
        multiline: bool,
    ) -> Option<String> {
        match clean_text(text, multiline) {
            Ok(cleaned) => Some(cleaned),
            Err(problem) => {
                let at = self.char_span_in_string(&span, text, problem.index());
                self.error(
                    Diagnostic::error(at, format!("{what}: {}", problem.describe()))
                        .label("this character")
                        .help("lesson text reaches other people's terminals, so it may not contain control or invisible formatting characters; remove it"),
                );
                None
            }
        }
    }

    /// The span of the `index`-th character of a string value, when the source writes it
    /// literally; otherwise (an escape such as \u001b) the whole string.
    fn char_span_in_string(&self, span: &Range<usize>, text: &str, index: usize) -> Range<usize> {
        let Some(raw) = self.source.get(span.clone()) else {
            return span.clone();
        };
        let Some(ch) = text.chars().nth(index) else {
            return span.clone();
        };
        match raw.find(ch) {
            Some(offset) => span.start + offset..span.start + offset + ch.len_utf8(),
            None => span.clone(),
        }
    }

    pub(super) fn tokens(&mut self, entry: Entry<'_, '_>) -> Option<Vec<String>> {
        let Some((_, value)) = entry else {
            self.error(
                Diagnostic::error(0..0, "missing `tokens`")
                    .label("a lesson needs its tokens")
                    .help("add `tokens = [\"The\", \"cat\", \"sleeps\"]`: one label per row of the embeddings"),
            );
            return None;
        };
        self.token_list(value, "tokens", "token")
    }

    /// The source tokens of cross-attention, which the keys and values come from; `None`
    /// without them (self-attention) or when they cannot be read (said).
    pub(super) fn source_tokens(&mut self, entry: Entry<'_, '_>) -> Option<Vec<String>> {
        let (_, value) = entry?;
        self.token_list(value, "source_tokens", "source token")
    }

    /// An array of token labels under `key`; `noun` names one of them in messages.
    fn token_list(&mut self, value: &Value<'_>, key: &str, noun: &str) -> Option<Vec<String>> {
        let DeValue::Array(items) = value.get_ref() else {
            self.wrong_type(
                value,
                &format!("`{key}`"),
                "an array of strings",
                &format!("{key} = [\"The\", \"cat\"]"),
            );
            return None;
        };
        if items.is_empty() {
            self.error(
                Diagnostic::error(value.span(), format!("`{key}` is empty"))
                    .label("no tokens")
                    .help("give at least one token label"),
            );
            return None;
        }
        if items.len() > MAX_TOKENS {
            self.error(
                Diagnostic::error(
                    value.span(),
                    format!("{} {noun}s; the limit is {MAX_TOKENS}", items.len()),
                )
                .label("too many tokens"),
            );
            return None;
        }
        let mut tokens = Vec::with_capacity(items.len());
        let mut ok = true;
        for (position, item) in items.iter().enumerate() {
            let what = format!("{noun} {}", position + 1);
            let DeValue::String(text) = item.get_ref() else {
                self.wrong_type(item, &what, "a string", "\"cat\"");
                ok = false;
                continue;
            };
            let Some(label) = self.clean(text, item.span(), &what, false) else {
                ok = false;
                continue;
            };
            if label.trim().is_empty() {
                self.error(
                    Diagnostic::error(item.span(), format!("{what} is blank"))
                        .label("empty label")
                        .help("give every token a visible label"),
                );
                ok = false;
            } else if let Err(problem) = LABEL_ROOM.check(&label) {
                let help = match problem {
                    TooLarge::Columns { .. } => {
                        "token labels head table rows and columns; use a shorter label"
                    }
                    TooLarge::Bytes { .. } => problem.help(),
                };
                let label = match problem {
                    TooLarge::Columns { .. } => "too wide",
                    TooLarge::Bytes { .. } => "too large",
                };
                self.error(
                    Diagnostic::error(item.span(), problem.describe(&what))
                        .label(label)
                        .help(help),
                );
                ok = false;
            }
            tokens.push(label);
        }
        ok.then_some(tokens)
    }

    /// `token_ids` (format 2): one whole number ≥ 0 per token, as a model's tokenizer numbers
    /// them. `Some(None)` without the key; `None` when it is given but cannot be (said).
    /// `tokens` is the lesson's count of tokens, when it could be read.
    pub(super) fn token_ids(
        &mut self,
        entry: Entry<'_, '_>,
        format: Option<u32>,
        tokens: Option<usize>,
    ) -> Option<Option<Vec<u64>>> {
        let Some((key_span, value)) = entry else {
            return Some(None);
        };
        if !self.of_its_format("token_ids", key_span, format) {
            return None;
        }
        let DeValue::Array(items) = value.get_ref() else {
            self.wrong_type(
                value,
                "`token_ids`",
                "an array of whole numbers, one per token",
                "token_ids = [464, 3797, 44263]",
            );
            return None;
        };
        // Counted before the numbers are read: an array of a million ids is one problem.
        let wanted = tokens.unwrap_or(items.len().min(MAX_TOKENS));
        if items.len() != wanted {
            let tokens = match tokens {
                Some(count) => format!("the lesson has {}", plural(count, "token")),
                None => format!("a lesson has at most {MAX_TOKENS} tokens"),
            };
            self.error(
                Diagnostic::error(
                    value.span(),
                    format!(
                        "`token_ids` has {}, but {tokens}",
                        plural(items.len(), "id")
                    ),
                )
                .label(plural(items.len(), "id"))
                .help("give one id per token, in the order of `tokens`"),
            );
            return None;
        }
        let mut ids = Vec::with_capacity(items.len());
        for (position, item) in items.iter().enumerate() {
            let found = match item.get_ref() {
                DeValue::Integer(integer) => match integer_value(integer) {
                    Ok(id) if id >= 0 => {
                        ids.push(id as u64);
                        continue;
                    }
                    Ok(id) => format!("found {id}"),
                    Err(_) => format!("found {}, too large", self.text_at(item.span())),
                },
                DeValue::Float(_) => format!(
                    "found {}, a number with a point: write it without one",
                    self.text_at(item.span())
                ),
                other => format!("found {}", type_name(other)),
            };
            self.error(
                Diagnostic::error(
                    item.span(),
                    format!(
                        "`token_ids` entry {} must be a whole number ≥ 0 (a tokenizer's id), {found}",
                        position + 1
                    ),
                )
                .label("not a token id")
                .help("give each token the number its model's tokenizer gives it: for example `token_ids = [464, 3797, 44263]` for GPT-2's \"The cat sleeps\""),
            );
            // One problem said: the rest are likely the same one.
            return None;
        }
        Some(Some(ids))
    }
}
