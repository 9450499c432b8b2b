//! Reporting a file that is not valid TOML: one error where a teacher can act on it, not the
//! cascade the TOML parser gives after one mistake.

use super::Reader;
use crate::lesson::diagnostic::{Diagnostic, line_col};
use crate::lesson::nesting;

impl Reader<'_> {
    /// The parser's errors, without the cascades one mistake sets off: a bracket left open is
    /// reported once, at the bracket; otherwise the first error of each line.
    pub(super) fn syntax_errors(&mut self, errors: &[toml::de::Error]) {
        let start = |error: &toml::de::Error| error.span().map_or(0, |span| span.start);
        let Some(first) = errors.iter().min_by_key(|error| start(error)) else {
            return;
        };
        let line_start = self.source[..start(first).min(self.source.len())]
            .rfind('\n')
            .map_or(0, |newline| newline + 1);
        if starts_with_a_key(&self.source[line_start..])
            && let Some(&bracket) = nesting::open_at(self.source, line_start).last()
        {
            let (what, close) = match self.source.as_bytes()[bracket] {
                b'[' => ("array", ']'),
                _ => ("inline table", '}'),
            };
            let (line, _) = line_col(self.source, bracket);
            self.error(
                Diagnostic::error(
                    bracket..bracket + 1,
                    format!("unclosed {what}: this `{}` is never closed", &self.source[bracket..=bracket]),
                )
                .label("opened here")
                .help(format!(
                    "close it with `{close}` at the end of line {line}: the next key starts a new line"
                )),
            );
            return;
        }
        let mut lines_seen = Vec::new();
        let mut sorted: Vec<&toml::de::Error> = errors.iter().collect();
        sorted.sort_by_key(|error| start(error));
        for error in sorted {
            let span = error.span().unwrap_or(0..0);
            let (line, _) = line_col(self.source, span.start);
            if lines_seen.contains(&line) {
                continue;
            }
            lines_seen.push(line);
            self.error(
                Diagnostic::error(span, format!("invalid TOML: {}", error.message().trim()))
                    .label("here")
                    .help("see docs/lesson-format.md for the lesson file format"),
            );
        }
    }
}

/// Whether a line begins a `key = value` pair, which never happens inside an array.
fn starts_with_a_key(line: &str) -> bool {
    let line = line.trim_start_matches([' ', '\t']);
    let key_end = line
        .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '-'))
        .unwrap_or(line.len());
    key_end > 0
        && line[key_end..]
            .trim_start_matches([' ', '\t'])
            .starts_with('=')
}
