//! Diagnostics for lesson files, written like rustc's: a message, the place, a caret, a help.

use std::ops::Range;

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use super::text::printable;

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
    pub fn error(span: Range<usize>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
            label: String::new(),
            help: None,
        }
    }

    pub fn warning(span: Range<usize>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
    }

    pub fn label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// 1-based line and column (in characters) of the start of the span.
    pub fn line_col(&self, source: &str) -> (usize, usize) {
        line_col(source, self.span.start)
    }

    /// One line, for lists: `lessons/x.toml:3:7: error: unknown key `tokns``.
    pub fn one_line(&self, source: &str, path: &str) -> String {
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
pub fn line_col(source: &str, offset: usize) -> (usize, usize) {
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
/// Messages are made of our words plus `printable` echoes of the file; the source lines are
/// cleaned by annotate-snippets, which replaces control and bidi characters.
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
        let mut group = level.primary_title(diagnostic.message.as_str()).element(
            Snippet::source(source).path(path.as_str()).annotation(
                AnnotationKind::Primary
                    .span(span)
                    .label((!diagnostic.label.is_empty()).then_some(diagnostic.label.as_str())),
            ),
        );
        if let Some(help) = &diagnostic.help {
            group = group.element(Level::HELP.message(help.as_str()));
        }
        out.push_str(&renderer.render(&[group]));
        out.push_str("\n\n");
    }
    out
}

/// A problem with the file as a whole (it cannot be read, it is not UTF-8, it is too large).
pub fn render_without_source(message: &str, help: Option<&str>, color: bool) -> String {
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

fn clamp_span(source: &str, span: &Range<usize>) -> Range<usize> {
    let start = floor_char_boundary(source, span.start.min(source.len()));
    let end = floor_char_boundary(source, span.end.clamp(start, source.len()));
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based_characters() {
        let source = "a = 1\nbé = 2\n";
        assert_eq!(line_col(source, 0), (1, 1));
        assert_eq!(line_col(source, 6), (2, 1));
        assert_eq!(line_col(source, source.find('=').unwrap()), (1, 3));
        assert_eq!(line_col(source, 10), (2, 4));
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
