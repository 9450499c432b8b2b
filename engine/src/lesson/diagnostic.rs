//! Diagnostics for lesson files, written like rustc's: a message, the place, a caret, a help.

use std::ops::Range;

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use super::text::{keeps_its_place, printable};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

/// One problem in a lesson file, pointing at the bytes it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    /// Byte range in the lesson text; empty for a problem with the file as a whole.
    pub span: Range<usize>,
    /// A short note under the caret.
    pub label: String,
    /// What would be right, where that can be said.
    pub help: Option<String>,
}

impl Diagnostic {
    pub(crate) fn error(span: Range<usize>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
            label: String::new(),
            help: None,
        }
    }

    pub(crate) fn warning(span: Range<usize>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
    }

    pub(crate) fn label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }

    pub(crate) fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// 1-based line and column (in characters) of the start of the span.
    pub(crate) fn line_col(&self, source: &str) -> (usize, usize) {
        line_col(source, self.span.start)
    }

    /// One line, for lists: `lessons/x.toml:3:7: error: unknown key `tokns``.
    pub(crate) fn one_line(&self, source: &str, path: &str) -> String {
        let (line, col) = self.line_col(source);
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        format!(
            "{}:{line}:{col}: {severity}: {}",
            printable(path),
            self.message
        )
    }
}

/// 1-based line and character column of a byte offset.
pub(crate) fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let offset = floor_char_boundary(source, offset.min(source.len()));
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// Writes diagnostics the way cargo does, with the source line and a caret under the value.
/// Messages are made of our words plus `printable` echoes of the file; the quoted source lines
/// are made printable too (annotate-snippets replaces only some control and bidi characters,
/// and passes C1 controls and zero-width characters through).
pub fn render(diagnostics: &[Diagnostic], source: &str, path: &str, color: bool) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let path = printable(path);
    let mut out = String::new();
    for diagnostic in diagnostics {
        let level = match diagnostic.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
        };
        let span = clamp_span(source, &diagnostic.span);
        let quote = Quote::new(source, &span);
        let quoted = quote.offset(span.start)..quote.offset(span.end);
        let label = (!diagnostic.label.is_empty()).then_some(diagnostic.label.as_str());
        let mut group = level.primary_title(diagnostic.message.as_str()).element(
            Snippet::source(quote.text.as_str())
                .path(path.as_str())
                .line_start(quote.first_line)
                .annotation(AnnotationKind::Primary.span(quoted.clone()).label(label)),
        );
        if let Some(help) = &diagnostic.help {
            group = group.element(Level::HELP.message(help.as_str()));
        }
        // The renderer counts the column in the quote, where escapes and cuts move it; the
        // place it names must be the file's.
        let (line, column) = line_col(source, span.start);
        let (_, quoted_column) = line_col(&quote.text, quoted.start);
        let rendered = renderer.render(&[group]).replacen(
            &format!("{path}:{line}:{quoted_column}"),
            &format!("{path}:{line}:{column}"),
            1,
        );
        out.push_str(&rendered);
        out.push_str("\n\n");
    }
    out
}

/// A problem with the file as a whole (it cannot be read, it is not UTF-8, it is too large).
pub(crate) fn render_without_source(message: &str, help: Option<&str>, color: bool) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut report = vec![Group::with_title(Level::ERROR.primary_title(message))];
    if let Some(help) = help {
        report.push(Group::with_title(Level::HELP.secondary_title(help)));
    }
    format!("{}\n", renderer.render(&report))
}

/// Characters of one line quoted at the most; a longer line is cut around the caret.
const QUOTED_LINE_CHARS: usize = 160;
/// Characters kept before the caret when a long line is cut.
const QUOTED_BEFORE_CARET: usize = 40;

/// The lines a diagnostic points at, as they are quoted: every character that `printable`
/// would escape is written as its `\u{…}` escape (line breaks and tabs stay), and a very long
/// line is cut around the caret, so that a line of 800 KB quotes as a screenful. The offsets of
/// kept characters are remembered so the caret stands under the same character.
struct Quote {
    text: String,
    /// 1-based number of the first quoted line.
    first_line: usize,
    /// (offset in the source, offset in `text`) of every kept character, in order.
    kept: Vec<(usize, usize)>,
}

impl Quote {
    fn new(source: &str, span: &Range<usize>) -> Quote {
        let from = source[..span.start]
            .rfind('\n')
            .map_or(0, |newline| newline + 1);
        let to = source[span.end..]
            .find('\n')
            .map_or(source.len(), |newline| span.end + newline + 1);
        let mut quote = Quote {
            text: String::new(),
            first_line: source[..from].matches('\n').count() + 1,
            kept: Vec::new(),
        };
        let mut line_start = from;
        for line in source[from..to].split_inclusive('\n') {
            quote.push_line(line, line_start, span.start);
            line_start += line.len();
        }
        quote
    }

    /// Quotes one line (which starts at `offset` in the source), cut to a window around
    /// `caret` when it is long.
    fn push_line(&mut self, line: &str, offset: usize, caret: usize) {
        let content = line.strip_suffix('\n').unwrap_or(line);
        let count = content.chars().count();
        let holds_caret = (offset..=offset + content.len()).contains(&caret);
        let skip = if count <= QUOTED_LINE_CHARS || !holds_caret {
            0
        } else {
            let before = content[..caret - offset].chars().count();
            before
                .saturating_sub(QUOTED_BEFORE_CARET)
                .min(count - QUOTED_LINE_CHARS)
        };
        if skip > 0 {
            self.text.push('…');
        }
        let mut end = 0;
        for (at, ch) in content.char_indices().skip(skip).take(QUOTED_LINE_CHARS) {
            self.kept.push((offset + at, self.text.len()));
            end = at + ch.len_utf8();
            if keeps_its_place(ch, line[end..].chars().next()) {
                self.text.push(ch);
            } else {
                self.text.push_str(&printable(ch.encode_utf8(&mut [0; 4])));
            }
        }
        if skip + QUOTED_LINE_CHARS < count {
            self.text
                .push_str(&format!("… ({} more bytes)", content.len() - end));
        }
        if line.len() > content.len() {
            self.kept.push((offset + content.len(), self.text.len()));
            self.text.push('\n');
        }
    }

    /// Where a source offset lands in the quote: at the first kept character from there on.
    fn offset(&self, offset: usize) -> usize {
        let index = self.kept.partition_point(|(source, _)| *source < offset);
        self.kept
            .get(index)
            .map_or(self.text.len(), |(_, quoted)| *quoted)
    }
}

fn clamp_span(source: &str, span: &Range<usize>) -> Range<usize> {
    let start = floor_char_boundary(source, span.start.min(source.len()));
    let end = floor_char_boundary(source, span.end.clamp(start, source.len()));
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::text::is_hidden;

    #[test]
    fn line_and_column_are_one_based_characters() {
        let source = "a = 1\nbé = 2\n";
        assert_eq!(line_col(source, 0), (1, 1));
        assert_eq!(line_col(source, 6), (2, 1));
        assert_eq!(line_col(source, source.find('=').unwrap()), (1, 3));
        assert_eq!(line_col(source, 10), (2, 4));
    }

    #[test]
    fn quoted_lines_show_hidden_characters_as_escapes() {
        for hidden in [
            '\u{9b}', '\u{85}', '\u{90}', '\u{9c}', '\u{9f}', '\u{200b}', '\u{200e}', '\u{200f}',
            '\u{61c}', '\u{202e}', '\u{1b}',
        ] {
            let source = format!("format = 1\ntokns = [\"a\"] # a {hidden} comment\n");
            let start = source.find("tokns").unwrap();
            let diagnostic = Diagnostic::error(start..start + 5, "unknown key `tokns`");
            let text = render(&[diagnostic], &source, "x.toml", false);
            assert!(
                !text.chars().any(is_hidden_but_newline),
                "{hidden:?}: {text:?}"
            );
            assert!(text.contains("^^^^^"), "{text}");
        }
    }

    #[test]
    fn the_caret_stays_under_its_character_after_an_escape() {
        let source = "title = \"a\u{200b}b\" # \u{9b}\nx = 1\n";
        let start = source.find("# ").unwrap();
        let diagnostic = Diagnostic::error(start..start + 1, "here");
        let text = render(&[diagnostic], source, "x.toml", false);
        let quoted = text.lines().find(|line| line.contains("title")).unwrap();
        let caret = text.lines().find(|line| line.contains('^')).unwrap();
        assert_eq!(
            quoted.find('#').unwrap(),
            caret.find('^').unwrap(),
            "{text}"
        );
        assert!(quoted.contains("a\\u{200b}b"), "{text}");
        assert!(
            text.contains("--> x.toml:1:15"),
            "the file's column: {text}"
        );
        assert!(
            text.contains("--> x.toml:1:15"),
            "the file's column: {text}"
        );
    }

    #[test]
    fn a_long_line_is_quoted_around_its_caret() {
        let source = format!("x = [{}\"bad\"]\n", "1, ".repeat(5000));
        let start = source.find("\"bad").unwrap();
        let diagnostic = Diagnostic::error(start..start + 5, "a string").label("here");
        let text = render(&[diagnostic], &source, "x.toml", false);
        assert!(text.len() < 1000, "{} bytes: {text}", text.len());
        assert!(text.contains("--> x.toml:1:15006"), "{text}");
        let quoted = text.lines().find(|line| line.contains("bad")).unwrap();
        let caret = text.lines().find(|line| line.contains("^^^^^")).unwrap();
        assert_eq!(
            quoted.find('"').unwrap(),
            caret.find('^').unwrap(),
            "{text}"
        );
    }

    fn is_hidden_but_newline(ch: char) -> bool {
        ch != '\n' && is_hidden(ch)
    }

    #[test]
    fn rendered_like_rustc() {
        let source = "format = 1\ntokns = [\"a\"]\n";
        let diagnostic = Diagnostic::error(11..16, "unknown key `tokns`")
            .label("not a lesson key")
            .help("did you mean `tokens`?");
        let text = render(&[diagnostic], source, "x.toml", false);
        assert!(text.contains("error: unknown key `tokns`"), "{text}");
        assert!(text.contains("--> x.toml:2:1"), "{text}");
        assert!(text.contains("^^^^^ not a lesson key"), "{text}");
        assert!(text.contains("help: did you mean `tokens`?"), "{text}");
    }
}
