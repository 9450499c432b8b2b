//! Reading a lesson file: TOML with spans, checked key by key, every problem reported.
//!
//! The file is walked as a spanned TOML tree (`toml::de::DeTable`) rather than deserialised with
//! serde, because serde stops at the first problem and a teacher wants to see them all at once.

use std::ops::Range;

use nalgebra::DMatrix;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::diagnostic::Diagnostic;
use super::limits::*;
use super::text::{LABEL_ROOM, Room, TITLE_ROOM, TooLarge, clean_text, printable};
use super::{
    Expected, ExpectedFigure, ExpectedRow, Generator, InputMatrix, Inputs, Lesson, Mask, Narration,
    PrintedNumber, RandomKind,
};
use crate::attention::{MatrixName, Step};

/// The outcome of reading a lesson: the lesson when there is no error, and every diagnostic.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub lesson: Option<Lesson>,
    /// Errors and warnings in the order they appear in the file.
    pub diagnostics: Vec<Diagnostic>,
}

impl Parsed {
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }
}

const TOP_KEYS: [&str; 18] = [
    "format",
    "title",
    "source",
    "summary",
    "tokens",
    "embeddings",
    "w_q",
    "w_k",
    "w_v",
    "q",
    "k",
    "v",
    "scale",
    "mask",
    "focus",
    "decimals",
    "narration",
    "expected",
];

const EXPECTED_FIGURES: [MatrixName; 7] = [
    MatrixName::Q,
    MatrixName::K,
    MatrixName::V,
    MatrixName::Scores,
    MatrixName::Scaled,
    MatrixName::Weights,
    MatrixName::Output,
];

/// More diagnostics than this drown the first ones; the rest are counted instead.
const MAX_DIAGNOSTICS: usize = 50;
/// Problems reported per matrix before the rest of that matrix is summarised.
const MAX_PER_MATRIX: usize = 5;

/// Reads and checks a lesson file's text.
pub fn parse(source: &str) -> Parsed {
    let mut reader = Reader {
        source,
        diagnostics: Vec::new(),
    };
    let lesson = reader.lesson();
    let mut diagnostics = reader.diagnostics;
    // Problems with a place come first, in file order; "missing key" problems (no place) last,
    // so the first error shown is the one a teacher can jump to.
    diagnostics.sort_by_key(|d| (d.span == (0..0), d.span.start, d.severity));
    diagnostics.dedup_by(|a, b| a.span == b.span && a.message == b.message);
    if diagnostics.len() > MAX_DIAGNOSTICS {
        let hidden = diagnostics.len() - MAX_DIAGNOSTICS;
        let last = diagnostics[MAX_DIAGNOSTICS - 1].span.clone();
        diagnostics.truncate(MAX_DIAGNOSTICS);
        diagnostics.push(
            Diagnostic::error(last, format!("{hidden} more problems are not shown"))
                .help("fix the ones above and check again"),
        );
    }
    let has_error = diagnostics.iter().any(Diagnostic::is_error);
    Parsed {
        lesson: if has_error { None } else { lesson },
        diagnostics,
    }
}

type Value<'i> = Spanned<DeValue<'i>>;

/// The top-level keys of a lesson file that are known, with where they stand.
struct Entries<'a, 'i> {
    list: Vec<(&'a str, Range<usize>, &'a Value<'i>)>,
}

impl<'a, 'i> Entries<'a, 'i> {
    fn get(&self, name: &str) -> Option<(Range<usize>, &'a Value<'i>)> {
        self.list
            .iter()
            .find(|(key, ..)| *key == name)
            .map(|(_, span, value)| (span.clone(), *value))
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

/// A matrix read from the file, with where it was written.
struct ReadMatrix {
    /// The key's name (not its text: `"q"` and `q` are the same key).
    key: String,
    input: InputMatrix,
    value_span: Range<usize>,
}

impl ReadMatrix {
    fn rows(&self) -> usize {
        self.input.values.nrows()
    }
    fn cols(&self) -> usize {
        self.input.values.ncols()
    }
}

struct Reader<'s> {
    source: &'s str,
    diagnostics: Vec<Diagnostic>,
}

impl<'s> Reader<'s> {
    fn error(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    fn lesson(&mut self) -> Option<Lesson> {
        if self.source.len() > MAX_FILE_BYTES {
            self.error(
                Diagnostic::error(0..0, format!(
                    "the lesson file is {} bytes; the limit is {MAX_FILE_BYTES} bytes (1 MiB)",
                    self.source.len()
                ))
                .help("use generators such as { random = \"normal\", seed = 1, shape = [512, 64] } for large matrices"),
            );
            return None;
        }
        if let Some(offset) = super::nesting::too_deep(self.source) {
            self.error(
                Diagnostic::error(
                    offset..offset + 1,
                    format!("arrays and tables nested more than {MAX_NESTING} deep"),
                )
                .label("one level too many")
                .help("a matrix is an array of rows, like [[1, 0], [0, 1]]: two levels"),
            );
            return None;
        }
        let (root, syntax_errors) = DeTable::parse_recoverable(self.source);
        if !syntax_errors.is_empty() {
            // A broken file would give confusing follow-up errors (a key lost in a broken line
            // reads as "missing"), so syntax errors are all that is reported.
            self.syntax_errors(&syntax_errors);
            return None;
        }
        let root = root.into_inner();
        self.document(&root)
    }

    /// The parser's errors, without the cascades one mistake sets off: a bracket left open is
    /// reported once, at the bracket; otherwise the first error of each line.
    fn syntax_errors(&mut self, errors: &[toml::de::Error]) {
        let start = |error: &toml::de::Error| error.span().map_or(0, |span| span.start);
        let Some(first) = errors.iter().min_by_key(|error| start(error)) else {
            return;
        };
        let line_start = self.source[..start(first).min(self.source.len())]
            .rfind('\n')
            .map_or(0, |newline| newline + 1);
        if starts_with_a_key(&self.source[line_start..])
            && let Some(&bracket) = super::nesting::open_at(self.source, line_start).last()
        {
            let (what, close) = match self.source.as_bytes()[bracket] {
                b'[' => ("array", ']'),
                _ => ("inline table", '}'),
            };
            let (line, _) = super::diagnostic::line_col(self.source, bracket);
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
            let (line, _) = super::diagnostic::line_col(self.source, span.start);
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

    /// Lesson keys written after a `[narration]` or `[expected]` header belong, by TOML's
    /// rules, to that table: the most common mistake in a lesson file. They are said once, and
    /// read as the lesson keys they were meant to be, so that nothing else is reported about
    /// them (no "missing `embeddings`") but their own problems. Returns their names.
    fn misplaced_keys<'a, 'i>(&mut self, entries: &mut Entries<'a, 'i>) -> Vec<String> {
        let mut misplaced = Vec::new();
        for table_name in ["narration", "expected"] {
            let Some((_, value)) = entries.get(table_name) else {
                continue;
            };
            let DeValue::Table(table) = value.get_ref() else {
                continue;
            };
            let belongs = |key: &str| match table_name {
                "narration" => Step::from_key(key).is_some(),
                _ => {
                    key == "tolerance"
                        || MatrixName::from_key(key).is_some_and(|m| EXPECTED_FIGURES.contains(&m))
                }
            };
            let mut moved: Vec<(&'a str, Range<usize>)> = Vec::new();
            for (key, value) in table.iter() {
                let name = key.get_ref().as_ref();
                let lesson_key = TOP_KEYS.iter().find(|top| **top == name && !belongs(top));
                if let Some(&top) = lesson_key
                    && entries.get(top).is_none()
                {
                    entries.list.push((top, key.span(), value));
                    moved.push((top, key.span()));
                }
            }
            // In the file's order: the table iterates its keys sorted.
            moved.sort_by_key(|(_, span)| span.start);
            let Some((first, span)) = moved.first().cloned() else {
                continue;
            };
            let others: Vec<String> = moved[1..]
                .iter()
                .map(|(key, _)| format!("`{key}`"))
                .collect();
            let also = match others.len() {
                0 => String::new(),
                _ => format!(" (and so are {})", others.join(", ")),
            };
            self.error(
                Diagnostic::error(
                    span,
                    format!(
                        "`{first}` is inside the [{table_name}] table because it comes after that header{also}"
                    ),
                )
                .label(format!("read as part of [{table_name}]"))
                .help("a key belongs to the last [table] header above it: move [narration] and [expected] to the end of the file"),
            );
            misplaced.extend(moved.iter().map(|(key, _)| key.to_string()));
        }
        misplaced
    }

    fn document<'a, 'i>(&mut self, root: &'a DeTable<'i>) -> Option<Lesson> {
        let mut entries = Entries { list: Vec::new() };
        for (key, value) in root.iter() {
            let name = key.get_ref().as_ref();
            if TOP_KEYS.contains(&name) {
                entries.list.push((name, key.span(), value));
            } else {
                self.unknown_key(name, key.span(), &TOP_KEYS, "not a lesson key");
            }
        }
        let misplaced = self.misplaced_keys(&mut entries);
        let find = |name: &str| entries.get(name);

        self.format(find("format"));
        let title = self.text_field(find("title"), "title", Some(TITLE_ROOM), None, true);
        let source = self.text_field(
            find("source"),
            "source",
            None,
            Some(MAX_SOURCE_CHARS),
            false,
        );
        let summary = self.text_field(
            find("summary"),
            "summary",
            None,
            Some(MAX_SUMMARY_CHARS),
            false,
        );
        let tokens = self.tokens(find("tokens"));

        let read = |reader: &mut Self, key: &str| -> Option<ReadMatrix> {
            let (_, value) = find(key)?;
            reader.matrix(key, value, false)
        };
        let embeddings = read(self, "embeddings");
        let w_q = read(self, "w_q");
        let w_k = read(self, "w_k");
        let w_v = read(self, "w_v");
        let q = read(self, "q");
        let k = read(self, "k");
        let v = read(self, "v");
        let given_keys: Vec<&str> = ["embeddings", "w_q", "w_k", "w_v", "q", "k", "v"]
            .into_iter()
            .filter(|key| find(key).is_some())
            .collect();
        let inputs = self.inputs(
            &given_keys,
            &entries,
            tokens
                .as_ref()
                .map(|(tokens, span)| (tokens.len(), span.clone())),
            [embeddings, w_q, w_k, w_v],
            [q, k, v],
        );

        let scale = self.boolean(find("scale"), "scale").unwrap_or(true);
        let seq_len = tokens.as_ref().map(|(tokens, _)| tokens.len());
        let mask = self.mask(find("mask"), seq_len);
        let decimals = self.decimals(find("decimals"));
        let focus = self.focus(find("focus"), tokens.as_ref().map(|(t, _)| t.as_slice()));
        let narration = self.narration(find("narration"), &mask, &misplaced);
        let expected = self.expected(
            find("expected"),
            &misplaced,
            tokens.as_ref().map(|(t, _)| t.as_slice()),
            inputs.as_ref(),
            scale,
        );

        let has_error = self.diagnostics.iter().any(Diagnostic::is_error);
        if has_error {
            return None;
        }
        Some(Lesson {
            title: title?,
            source: source.unwrap_or_default(),
            summary: summary.unwrap_or_default(),
            tokens: tokens?.0,
            inputs: inputs?,
            scale,
            mask: mask?,
            focus: focus?,
            decimals,
            narration,
            expected: expected?,
        })
    }

    fn unknown_key(&mut self, name: &str, span: Range<usize>, known: &[&str], label: &str) {
        let mut diagnostic = Diagnostic::error(
            span,
            format!("unknown key `{}`", shortened(&printable(name))),
        )
        .label(label);
        diagnostic = match did_you_mean(name, known) {
            Some(suggestion) => diagnostic.help(format!("did you mean `{suggestion}`?")),
            None => diagnostic.help(format!("the keys here are: {}", known.join(", "))),
        };
        self.error(diagnostic);
    }

    fn wrong_type(&mut self, value: &Value<'_>, what: &str, expected: &str, example: &str) {
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

    fn format(&mut self, entry: Option<(Range<usize>, &Value<'_>)>) {
        let Some((_, value)) = entry else {
            self.error(
                Diagnostic::error(0..0, "missing `format = 1`")
                    .label("lesson files start with their format version")
                    .help("add `format = 1` as the first line"),
            );
            return;
        };
        match value.get_ref() {
            DeValue::Integer(integer) if integer_value(integer) == Ok(1) => {}
            DeValue::Integer(_) => self.error(
                Diagnostic::error(value.span(), "unsupported lesson format")
                    .label("this attn-tutor reads format 1")
                    .help("write `format = 1`, or use the attn-tutor release that wrote this file"),
            ),
            _ => self.wrong_type(value, "`format`", "an integer", "format = 1"),
        }
    }

    /// A single string field. `room` bounds its width on screen and its size, `max_chars` its
    /// length.
    fn text_field(
        &mut self,
        entry: Option<(Range<usize>, &Value<'_>)>,
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
            && text.chars().count() > max
        {
            self.error(
                Diagnostic::error(
                    value.span(),
                    format!(
                        "`{key}` has {} characters; the limit is {max}",
                        text.chars().count()
                    ),
                )
                .label("too long"),
            );
            return None;
        }
        Some(text)
    }

    /// Refuses control and format characters, pointing at the offending one.
    fn clean(
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

    fn tokens(
        &mut self,
        entry: Option<(Range<usize>, &Value<'_>)>,
    ) -> Option<(Vec<String>, Range<usize>)> {
        let Some((_, value)) = entry else {
            self.error(
                Diagnostic::error(0..0, "missing `tokens`")
                    .label("a lesson needs its tokens")
                    .help("add `tokens = [\"The\", \"cat\", \"sleeps\"]`: one label per row of the embeddings"),
            );
            return None;
        };
        let DeValue::Array(items) = value.get_ref() else {
            self.wrong_type(
                value,
                "`tokens`",
                "an array of strings",
                "tokens = [\"The\", \"cat\"]",
            );
            return None;
        };
        if items.is_empty() {
            self.error(
                Diagnostic::error(value.span(), "`tokens` is empty")
                    .label("no tokens")
                    .help("give at least one token label"),
            );
            return None;
        }
        if items.len() > MAX_TOKENS {
            self.error(
                Diagnostic::error(
                    value.span(),
                    format!("{} tokens; the limit is {MAX_TOKENS}", items.len()),
                )
                .label("too many tokens"),
            );
            return None;
        }
        let mut tokens = Vec::with_capacity(items.len());
        let mut ok = true;
        for (position, item) in items.iter().enumerate() {
            let what = format!("token {}", position + 1);
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
        ok.then_some((tokens, value.span()))
    }

    /// A matrix: an array of equal-length rows of numbers, or a generator table.
    fn matrix(&mut self, key: &str, value: &Value<'_>, allow_neg_inf: bool) -> Option<ReadMatrix> {
        let input = match value.get_ref() {
            DeValue::Table(table) => {
                InputMatrix::generated(self.generator(key, table, value.span())?)
            }
            DeValue::Array(_) => {
                InputMatrix::literal(self.literal_matrix(key, value, allow_neg_inf)?)
            }
            _ => {
                self.wrong_type(
                    value,
                    &format!("`{key}`"),
                    "a matrix (an array of rows) or a generator",
                    &format!("{key} = [[1, 0], [0, 1]]  or  {key} = {{ random = \"normal\", seed = 1, shape = [2, 2] }}"),
                );
                return None;
            }
        };
        Some(ReadMatrix {
            key: key.to_string(),
            input,
            value_span: value.span(),
        })
    }

    fn literal_matrix(
        &mut self,
        key: &str,
        value: &Value<'_>,
        allow_neg_inf: bool,
    ) -> Option<DMatrix<f64>> {
        let DeValue::Array(rows) = value.get_ref() else {
            return None;
        };
        if rows.is_empty() {
            self.error(
                Diagnostic::error(value.span(), format!("`{key}` is empty"))
                    .label("no rows")
                    .help("a matrix has at least one row, like [[1, 0]]"),
            );
            return None;
        }
        let row_limit = if matches!(key, "embeddings" | "q" | "k" | "v" | "mask") {
            MAX_TOKENS
        } else {
            MAX_DIMENSION
        };
        if rows.len() > row_limit {
            self.error(
                Diagnostic::error(
                    value.span(),
                    format!("`{key}` has {} rows; the limit is {row_limit}", rows.len()),
                )
                .label("too many rows"),
            );
            return None;
        }
        let mut problems = 0usize;
        let mut width: Option<(usize, usize)> = None; // (columns, row index that set it)
        let mut values = Vec::new();
        for (r, row) in rows.iter().enumerate() {
            let DeValue::Array(cells) = row.get_ref() else {
                problems += 1;
                if problems <= MAX_PER_MATRIX {
                    self.error(
                        Diagnostic::error(
                            row.span(),
                            format!(
                                "row {} of `{key}` must be an array of numbers, found {}",
                                r + 1,
                                type_name(row.get_ref())
                            ),
                        )
                        .label("expected a row like [1, 0, 2]")
                        .help(format!(
                            "a matrix is an array of rows: {key} = [[1, 0], [0, 1]]"
                        )),
                    );
                }
                continue;
            };
            match width {
                None => {
                    if cells.is_empty() {
                        self.error(
                            Diagnostic::error(
                                row.span(),
                                format!("row {} of `{key}` is empty", r + 1),
                            )
                            .label("no numbers")
                            .help("every row needs at least one number"),
                        );
                        return None;
                    }
                    if cells.len() > MAX_DIMENSION {
                        self.error(
                            Diagnostic::error(row.span(), format!("row {} of `{key}` has {} numbers; the limit is {MAX_DIMENSION}", r + 1, cells.len()))
                                .label("too wide"),
                        );
                        return None;
                    }
                    width = Some((cells.len(), r));
                }
                Some((columns, first)) if columns != cells.len() => {
                    problems += 1;
                    if problems <= MAX_PER_MATRIX {
                        self.error(
                            Diagnostic::error(
                                row.span(),
                                format!(
                                    "row {} of `{key}` has {}, but row {} has {columns}",
                                    r + 1,
                                    plural(cells.len(), "number"),
                                    first + 1
                                ),
                            )
                            .label(plural(cells.len(), "number"))
                            .help("every row of a matrix has the same number of columns"),
                        );
                    }
                    continue;
                }
                Some(_) => {}
            }
            for (c, cell) in cells.iter().enumerate() {
                match self.matrix_number(key, r, c, cell, allow_neg_inf) {
                    Ok(number) => values.push(number),
                    Err(diagnostic) => {
                        problems += 1;
                        values.push(0.0);
                        if problems <= MAX_PER_MATRIX {
                            self.error(diagnostic);
                        }
                    }
                }
            }
        }
        if problems > MAX_PER_MATRIX {
            self.error(
                Diagnostic::error(
                    value.span(),
                    format!("`{key}` has {} more problems", problems - MAX_PER_MATRIX),
                )
                .label("in this matrix"),
            );
        }
        if problems > 0 {
            return None;
        }
        let (columns, _) = width?;
        Some(DMatrix::from_row_slice(rows.len(), columns, &values))
    }

    fn matrix_number(
        &self,
        key: &str,
        row: usize,
        col: usize,
        cell: &Value<'_>,
        allow_neg_inf: bool,
    ) -> Result<f64, Diagnostic> {
        let place = format!("`{key}` row {}, column {}", row + 1, col + 1);
        let number = number_value(cell.get_ref()).map_err(|problem| {
            Diagnostic::error(cell.span(), format!("{place}: {problem}"))
                .label("expected a number")
                .help(if allow_neg_inf {
                    "a mask cell is a bias added to the score: 0 keeps it, -inf hides the key, \
                     any number within ±1e6 shifts it"
                } else {
                    "write a number such as 0.25 or -1"
                })
        })?;
        // A mask cell is an additive bias, as in PyTorch's float masks and ALiBi: -inf hides the
        // key, any finite number within the value limits shifts its score.
        if allow_neg_inf
            && (number == f64::NEG_INFINITY
                || (number.is_finite() && number.abs() <= MAX_ABS_VALUE))
        {
            return Ok(if number == 0.0 { 0.0 } else { number });
        }
        if allow_neg_inf {
            return Err(Diagnostic::error(cell.span(), format!("{place}: a mask cell must be -inf or a number within ±1e6, found {}", self.text_at(cell.span())))
                .label("not -inf or a bias within ±1e6")
                .help("0 lets the query see this key; -inf hides it (a weight of exactly 0); a tutorial's -1e9 is written -1e6 or -inf here"));
        }
        let written = self.source.get(cell.span()).unwrap_or_default();
        if number.is_infinite() && !written.contains("inf") {
            // 1e400 reads as infinity, but the writer meant a (too) large number.
            return Err(Diagnostic::error(
                cell.span(),
                format!("{place}: {} is out of range", self.text_at(cell.span())),
            )
            .label(format!("|value| must be at most {MAX_ABS_VALUE:e}"))
            .help("lesson numbers lie between -1e6 and 1e6"));
        }
        if !number.is_finite() {
            let hint = if number == f64::NEG_INFINITY {
                "-inf is only allowed in `mask`; use a finite number here"
            } else {
                "use a finite number"
            };
            return Err(Diagnostic::error(
                cell.span(),
                format!(
                    "{place}: {} is not a finite number",
                    self.text_at(cell.span())
                ),
            )
            .label("not finite")
            .help(hint));
        }
        if number.abs() > MAX_ABS_VALUE {
            return Err(Diagnostic::error(
                cell.span(),
                format!("{place}: {} is out of range", self.text_at(cell.span())),
            )
            .label(format!("|value| must be at most {MAX_ABS_VALUE:e}"))
            .help("lesson numbers lie between -1e6 and 1e6"));
        }
        Ok(number)
    }

    fn text_at(&self, span: Range<usize>) -> String {
        printable(self.source.get(span).unwrap_or("this value"))
    }

    fn generator(
        &mut self,
        key: &str,
        table: &DeTable<'_>,
        span: Range<usize>,
    ) -> Option<Generator> {
        const KEYS: [&str; 3] = ["random", "seed", "shape"];
        let mut kind = None;
        let mut seed = None;
        let mut shape = None;
        let mut ok = true;
        for (name, value) in table.iter() {
            match name.get_ref().as_ref() {
                "random" => match value.get_ref() {
                    DeValue::String(text) => match RandomKind::from_key(text) {
                        Some(found) => kind = Some(found),
                        None => {
                            let kinds: Vec<&str> =
                                RandomKind::ALL.iter().map(|kind| kind.key()).collect();
                            let mut diagnostic = Diagnostic::error(
                                value.span(),
                                format!("unknown distribution \"{}\"", printable(text)),
                            )
                            .label("not a distribution");
                            diagnostic = match did_you_mean(text, &kinds) {
                                Some(suggestion) => diagnostic.help(format!("did you mean \"{suggestion}\"?")),
                                None => diagnostic.help("use \"normal\" (standard normal, like np.random.randn) or \"uniform\" (0 to 1, like np.random.rand)"),
                            };
                            self.error(diagnostic);
                            ok = false;
                        }
                    },
                    _ => {
                        self.wrong_type(value, "`random`", "a string", "random = \"normal\"");
                        ok = false;
                    }
                },
                "seed" => match value.get_ref() {
                    DeValue::Integer(integer) => match integer_value(integer) {
                        Ok(number) if number >= 0 => seed = Some(number as u64),
                        Err(error) if *error.kind() == std::num::IntErrorKind::PosOverflow => {
                            self.error(
                                Diagnostic::error(value.span(), "this seed is too large")
                                    .label("too large")
                                    .help(format!(
                                        "a seed is a whole number from 0 to {}",
                                        i64::MAX
                                    )),
                            );
                            ok = false;
                        }
                        _ => {
                            self.error(
                                Diagnostic::error(
                                    value.span(),
                                    "a seed is a whole number from 0 up",
                                )
                                .label("invalid seed")
                                .help("for example: seed = 7"),
                            );
                            ok = false;
                        }
                    },
                    _ => {
                        self.wrong_type(value, "`seed`", "an integer", "seed = 7");
                        ok = false;
                    }
                },
                "shape" => match self.shape(key, value) {
                    Some(found) => shape = Some(found),
                    None => ok = false,
                },
                other => {
                    self.unknown_key(other, name.span(), &KEYS, "not a generator key");
                    ok = false;
                }
            }
        }
        for (missing, absent) in [
            ("random", kind.is_none()),
            ("seed", seed.is_none()),
            ("shape", shape.is_none()),
        ] {
            if absent && ok {
                self.error(
                    Diagnostic::error(span.clone(), format!("the generator of `{key}` has no `{missing}`"))
                        .label(format!("`{missing}` missing"))
                        .help(format!("a generator is written {key} = {{ random = \"normal\", seed = 1, shape = [ROWS, COLUMNS] }}")),
                );
                ok = false;
            }
        }
        let (rows, cols) = shape?;
        ok.then_some(Generator {
            kind: kind?,
            seed: seed?,
            rows,
            cols,
        })
    }

    fn shape(&mut self, key: &str, value: &Value<'_>) -> Option<(usize, usize)> {
        let row_limit = if matches!(key, "embeddings" | "q" | "k" | "v") {
            MAX_TOKENS
        } else {
            MAX_DIMENSION
        };
        let bad = |reader: &mut Self| {
            reader.error(
                Diagnostic::error(value.span(), "`shape` must be [ROWS, COLUMNS]")
                    .label("expected two whole numbers")
                    .help(format!("for example shape = [3, 4]; rows at most {row_limit}, columns at most {MAX_DIMENSION}")),
            );
            None
        };
        let DeValue::Array(items) = value.get_ref() else {
            return bad(self);
        };
        let dims: Vec<Option<i64>> = items
            .iter()
            .map(|item| match item.get_ref() {
                DeValue::Integer(integer) => integer_value(integer).ok(),
                _ => None,
            })
            .collect();
        match dims.as_slice() {
            [Some(rows), Some(cols)]
                if (1..=row_limit as i64).contains(rows)
                    && (1..=MAX_DIMENSION as i64).contains(cols) =>
            {
                Some((*rows as usize, *cols as usize))
            }
            _ => bad(self),
        }
    }

    /// Either embeddings with W_q, W_k, W_v, or Q, K, V directly; all shapes agreeing.
    fn inputs(
        &mut self,
        given: &[&str],
        entries: &Entries<'_, '_>,
        tokens: Option<(usize, Range<usize>)>,
        projected: [Option<ReadMatrix>; 4],
        direct: [Option<ReadMatrix>; 3],
    ) -> Option<Inputs> {
        let projected_keys = ["embeddings", "w_q", "w_k", "w_v"];
        let direct_keys = ["q", "k", "v"];
        let gives_projected = given.iter().any(|key| projected_keys.contains(key));
        let gives_direct = given.iter().any(|key| direct_keys.contains(key));
        if gives_projected && gives_direct {
            let (span, _) = entries.get(given.iter().find(|key| direct_keys.contains(key))?)?;
            self.error(
                Diagnostic::error(span, "a lesson gives either embeddings with w_q, w_k, w_v, or q, k, v directly, not both")
                    .label("q, k, v given here")
                    .help("remove q, k, v to project the embeddings, or remove embeddings and w_q, w_k, w_v"),
            );
            return None;
        }
        let (keys, anchor): (&[&str], Option<Range<usize>>) = if gives_direct {
            (
                &direct_keys,
                given
                    .first()
                    .and_then(|key| entries.get(key))
                    .map(|(span, _)| span),
            )
        } else {
            (
                &projected_keys,
                given
                    .first()
                    .and_then(|key| entries.get(key))
                    .map(|(span, _)| span),
            )
        };
        let mut complete = true;
        for key in keys {
            if !given.contains(key) {
                complete = false;
                let shape = match *key {
                    "embeddings" => "seq_len × d_model",
                    "w_q" | "w_k" => "d_model × d_k",
                    "w_v" => "d_model × d_v",
                    "q" | "k" => "seq_len × d_k",
                    _ => "seq_len × d_v",
                };
                let span = anchor.clone().unwrap_or(0..0);
                let label = if anchor.is_some() {
                    format!("`{key}` goes with this")
                } else {
                    "no inputs in this lesson".to_string()
                };
                self.error(
                    Diagnostic::error(span, format!("missing `{key}`"))
                        .label(label)
                        .help(format!("add `{key} = [[...], ...]` ({shape}), or a generator like {key} = {{ random = \"normal\", seed = 1, shape = [ROWS, COLUMNS] }}")),
                );
            }
        }
        if !complete {
            return None;
        }
        if gives_direct {
            let [q, k, v] = direct;
            let (q, k, v) = (q?, k?, v?);
            let mut ok = self.rows_match_tokens(&tokens, &[&q, &k, &v]);
            if k.cols() != q.cols() {
                ok = false;
                self.shape_error(
                    &k,
                    format!("`k` has {} columns, but `q` has {}", k.cols(), q.cols()),
                    "queries and keys have the same width d_k, so that q · k is defined",
                );
            }
            return ok.then_some(Inputs::Direct {
                q: q.input,
                k: k.input,
                v: v.input,
            });
        }
        let [embeddings, w_q, w_k, w_v] = projected;
        let (embeddings, w_q, w_k, w_v) = (embeddings?, w_q?, w_k?, w_v?);
        let mut ok = self.rows_match_tokens(&tokens, &[&embeddings]);
        let d_model = embeddings.cols();
        for (key, weights) in [("w_q", &w_q), ("w_k", &w_k), ("w_v", &w_v)] {
            if weights.rows() != d_model {
                ok = false;
                self.shape_error(
                    weights,
                    format!("`{key}` has {}, but the embeddings have {d_model} columns (d_model)", plural(weights.rows(), "row")),
                    &format!("X·{key} needs one row of `{key}` per embedding column: make it {d_model} × something"),
                );
            }
        }
        if w_k.cols() != w_q.cols() {
            ok = false;
            self.shape_error(
                &w_k,
                format!(
                    "`w_k` has {} columns, but `w_q` has {}",
                    w_k.cols(),
                    w_q.cols()
                ),
                "queries and keys have the same width d_k, so that q · k is defined",
            );
        }
        ok.then_some(Inputs::Projected {
            embeddings: embeddings.input,
            w_q: w_q.input,
            w_k: w_k.input,
            w_v: w_v.input,
        })
    }

    fn rows_match_tokens(
        &mut self,
        tokens: &Option<(usize, Range<usize>)>,
        matrices: &[&ReadMatrix],
    ) -> bool {
        let Some((count, _)) = tokens else {
            return true;
        };
        let mut ok = true;
        for matrix in matrices {
            if matrix.rows() != *count {
                ok = false;
                let key = matrix.key.clone();
                self.shape_error(
                    matrix,
                    format!(
                        "`{key}` has {}, but there are {count} tokens",
                        plural(matrix.rows(), "row")
                    ),
                    "give one row per token, in the order of `tokens`",
                );
            }
        }
        ok
    }

    fn shape_error(&mut self, matrix: &ReadMatrix, message: String, help: &str) {
        self.error(
            Diagnostic::error(matrix.value_span.clone(), message)
                .label(format!("{} × {}", matrix.rows(), matrix.cols()))
                .help(help),
        );
    }

    fn boolean(&mut self, entry: Option<(Range<usize>, &Value<'_>)>, key: &str) -> Option<bool> {
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

    fn mask(
        &mut self,
        entry: Option<(Range<usize>, &Value<'_>)>,
        seq_len: Option<usize>,
    ) -> Option<Mask> {
        let Some((_, value)) = entry else {
            return Some(Mask::None);
        };
        match value.get_ref() {
            DeValue::String(text) => match text.as_ref() {
                "none" => Some(Mask::None),
                "causal" => Some(Mask::Causal),
                other => {
                    let mut diagnostic = Diagnostic::error(
                        value.span(),
                        format!("unknown mask \"{}\"", printable(other)),
                    )
                    .label("not a mask");
                    diagnostic = match did_you_mean(other, &["none", "causal"]) {
                        Some(suggestion) => diagnostic.help(format!("did you mean \"{suggestion}\"?")),
                        None => diagnostic.help("a mask is \"none\", \"causal\", or a seq_len × seq_len matrix of biases (0 keeps, -inf hides)"),
                    };
                    self.error(diagnostic);
                    None
                }
            },
            DeValue::Array(_) => {
                let matrix = self.literal_matrix("mask", value, true)?;
                let seq_len = seq_len?;
                if matrix.nrows() != seq_len || matrix.ncols() != seq_len {
                    self.error(
                        Diagnostic::error(
                            value.span(),
                            format!(
                                "the mask is {} × {}, but there are {seq_len} tokens",
                                matrix.nrows(),
                                matrix.ncols()
                            ),
                        )
                        .label(format!("expected {seq_len} × {seq_len}"))
                        .help("a mask has one row per query and one column per key"),
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

    fn decimals(&mut self, entry: Option<(Range<usize>, &Value<'_>)>) -> usize {
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
    fn focus(
        &mut self,
        entry: Option<(Range<usize>, &Value<'_>)>,
        tokens: Option<&[String]>,
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
                let names: Vec<&str> = tokens.iter().map(String::as_str).collect();
                let mut diagnostic = Diagnostic::error(
                    value.span(),
                    format!(
                        "`focus` names \"{}\", which is not a token",
                        printable(text)
                    ),
                )
                .label("no such token");
                diagnostic = match did_you_mean(text, &names) {
                    Some(suggestion) => {
                        diagnostic.help(format!("did you mean \"{}\"?", printable(suggestion)))
                    }
                    None => diagnostic.help(format!(
                        "use a token label or a position from 1 to {}",
                        tokens.len()
                    )),
                };
                self.error(diagnostic);
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

    fn narration(
        &mut self,
        entry: Option<(Range<usize>, &Value<'_>)>,
        mask: &Option<Mask>,
        misplaced: &[String],
    ) -> Narration {
        let mut narration = Narration::default();
        let Some((_, value)) = entry else {
            return narration;
        };
        let DeValue::Table(table) = value.get_ref() else {
            self.wrong_type(
                value,
                "`narration`",
                "a table",
                "[narration]\nscores = \"...\"",
            );
            return narration;
        };
        let keys: Vec<&str> = Step::ALL.iter().map(|step| step.key()).collect();
        for (name, text) in table.iter() {
            if misplaced.iter().any(|key| key == name.get_ref()) {
                continue;
            }
            let Some(step) = Step::from_key(name.get_ref()) else {
                self.unknown_key(name.get_ref(), name.span(), &keys, "not a step");
                continue;
            };
            let DeValue::String(words) = text.get_ref() else {
                self.wrong_type(
                    text,
                    &format!("narration for {}", step.key()),
                    "a string",
                    "scores = \"Each query meets every key.\"",
                );
                continue;
            };
            let Some(words) = self.clean(
                words,
                text.span(),
                &format!("narration for {}", step.key()),
                true,
            ) else {
                continue;
            };
            if words.chars().count() > MAX_NARRATION_CHARS {
                self.error(
                    Diagnostic::error(text.span(), format!("narration for {} has {} characters; the limit is {MAX_NARRATION_CHARS}", step.key(), words.chars().count()))
                        .label("too long")
                        .help("keep each step's narration to a few short paragraphs"),
                );
                continue;
            }
            if step == Step::Masking && matches!(mask, Some(Mask::None)) {
                self.error(
                    Diagnostic::warning(
                        name.span(),
                        "narration for masking is never shown: this lesson has no mask",
                    )
                    .label("unused")
                    .help("add `mask = \"causal\"` or remove this narration"),
                );
            }
            narration.set(step, words);
        }
        narration
    }

    fn expected(
        &mut self,
        entry: Option<(Range<usize>, &Value<'_>)>,
        misplaced: &[String],
        tokens: Option<&[String]>,
        inputs: Option<&Inputs>,
        scale: bool,
    ) -> Option<Expected> {
        let mut expected = Expected::default();
        let Some((_, value)) = entry else {
            return Some(expected);
        };
        let DeValue::Table(table) = value.get_ref() else {
            self.wrong_type(
                value,
                "`expected`",
                "a table",
                "[expected]\nweights = [[0.5, 0.5]]",
            );
            return None;
        };
        let mut keys: Vec<&str> = vec!["tolerance", "slips"];
        keys.extend(EXPECTED_FIGURES.iter().map(|name| name.key()));
        let mut ok = true;
        for (name, figure) in table.iter() {
            if misplaced.iter().any(|key| key == name.get_ref()) {
                continue;
            }
            if name.get_ref() == "tolerance" {
                match number_value(figure.get_ref()) {
                    Ok(tolerance) if tolerance.is_finite() && tolerance > 0.0 => {
                        expected.tolerance = Some(tolerance)
                    }
                    _ => {
                        ok = false;
                        self.error(
                            Diagnostic::error(
                                figure.span(),
                                "`tolerance` must be a positive number",
                            )
                            .label("invalid tolerance")
                            .help(
                                "for example tolerance = 0.0005 (half a unit of the third decimal)",
                            ),
                        );
                    }
                }
                continue;
            }
            if name.get_ref() == "slips" {
                match self.slips(figure) {
                    Some(slips) => expected.slips = slips,
                    None => ok = false,
                }
                continue;
            }
            let Some(matrix) =
                MatrixName::from_key(name.get_ref()).filter(|m| EXPECTED_FIGURES.contains(m))
            else {
                self.unknown_key(name.get_ref(), name.span(), &keys, "not a figure");
                ok = false;
                continue;
            };
            if matrix == MatrixName::Scaled && !scale {
                ok = false;
                self.error(
                    Diagnostic::error(name.span(), "this lesson does not scale (scale = false), so there is no `scaled` figure")
                        .label("no such figure")
                        .help("compare `scores` instead, or set scale = true"),
                );
                continue;
            }
            match self.figure(matrix, figure, tokens, inputs) {
                Some(figure) => expected.figures.push(figure),
                None => ok = false,
            }
        }
        // Pipeline order reads better in `check` than the file's (alphabetical) table order.
        expected.figures.sort_by_key(|figure| figure.matrix);
        ok.then_some(expected)
    }

    /// `slips = ["…", …]`: the document's mistakes that no printed figure shows, each a line of
    /// text for `check` to print.
    fn slips(&mut self, value: &Value<'_>) -> Option<Vec<String>> {
        let example = "slips = [\"Table 4 writes 0/√1.4142 for 0/1.4142\"]";
        let DeValue::Array(items) = value.get_ref() else {
            self.wrong_type(value, "`slips`", "an array of strings", example);
            return None;
        };
        if items.len() > MAX_SLIPS {
            self.error(
                Diagnostic::error(
                    value.span(),
                    format!(
                        "`slips` has {} entries; the limit is {MAX_SLIPS}",
                        items.len()
                    ),
                )
                .label("too many slips")
                .help("name each slip once; several of one kind fit in one entry"),
            );
            return None;
        }
        let mut slips = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let place = format!("`slips` entry {}", i + 1);
            let DeValue::String(text) = item.get_ref() else {
                self.wrong_type(item, &place, "a string", example);
                return None;
            };
            let text = self.clean(text, item.span(), &place, false)?;
            if text.trim().is_empty() {
                self.error(
                    Diagnostic::error(item.span(), format!("{place} is blank"))
                        .label("nothing to name")
                        .help("say what the document printed wrongly, or remove the entry"),
                );
                return None;
            }
            if text.chars().count() > MAX_SLIP_CHARS {
                self.error(
                    Diagnostic::error(
                        item.span(),
                        format!(
                            "{place} has {} characters; the limit is {MAX_SLIP_CHARS}",
                            text.chars().count()
                        ),
                    )
                    .label("too long"),
                );
                return None;
            }
            slips.push(text);
        }
        Some(slips)
    }

    /// One printed figure: a full matrix, or a table of rows keyed by token label or position.
    fn figure(
        &mut self,
        matrix: MatrixName,
        value: &Value<'_>,
        tokens: Option<&[String]>,
        inputs: Option<&Inputs>,
    ) -> Option<ExpectedFigure> {
        let key = matrix.key();
        let seq_len = tokens.map(<[String]>::len);
        let width = inputs.and_then(|inputs| match (inputs, matrix) {
            (_, MatrixName::Scores | MatrixName::Scaled | MatrixName::Weights) => seq_len,
            (Inputs::Projected { w_q, .. }, MatrixName::Q) => Some(w_q.values.ncols()),
            (Inputs::Projected { w_k, .. }, MatrixName::K) => Some(w_k.values.ncols()),
            (Inputs::Projected { w_v, .. }, MatrixName::V | MatrixName::Output) => {
                Some(w_v.values.ncols())
            }
            (Inputs::Direct { q, .. }, MatrixName::Q) => Some(q.values.ncols()),
            (Inputs::Direct { k, .. }, MatrixName::K) => Some(k.values.ncols()),
            (Inputs::Direct { v, .. }, MatrixName::V | MatrixName::Output) => {
                Some(v.values.ncols())
            }
            _ => None,
        });
        let mut rows: Vec<(usize, &Value<'_>)> = Vec::new();
        match value.get_ref() {
            DeValue::Array(items) => {
                if let Some(seq_len) = seq_len
                    && items.len() != seq_len
                {
                    self.error(
                        Diagnostic::error(value.span(), format!("expected `{key}` has {}, but there are {seq_len} tokens", plural(items.len(), "row")))
                            .label(plural(items.len(), "row"))
                            .help(format!("give all {seq_len} rows, or only some as a table: [expected.{key}] with one line per row, like cat = [0.1, 0.9]")),
                    );
                    return None;
                }
                rows.extend(items.iter().enumerate());
            }
            DeValue::Table(table) => {
                let tokens = tokens?;
                let mut ok = true;
                for (label, row) in table.iter() {
                    let text = label.get_ref().as_ref();
                    let matches = tokens.iter().filter(|token| token.as_str() == text).count();
                    let found = if matches > 1 {
                        self.error(
                            Diagnostic::error(
                                label.span(),
                                format!("\"{}\" names {matches} tokens", printable(text)),
                            )
                            .label("ambiguous")
                            .help("use the token's 1-based position instead, like \"5\" = [...]"),
                        );
                        None
                    } else if matches == 1 {
                        tokens.iter().position(|token| token.as_str() == text)
                    } else {
                        text.parse::<usize>()
                            .ok()
                            .filter(|p| (1..=tokens.len()).contains(p))
                            .map(|p| p - 1)
                    };
                    match found {
                        Some(index) => rows.push((index, row)),
                        None if matches > 1 => ok = false,
                        None => {
                            ok = false;
                            let names: Vec<&str> = tokens.iter().map(String::as_str).collect();
                            let mut diagnostic = Diagnostic::error(
                                label.span(),
                                format!(
                                    "expected `{key}` names row \"{}\", which is not a token",
                                    printable(text)
                                ),
                            )
                            .label("no such token");
                            diagnostic = match did_you_mean(text, &names) {
                                Some(suggestion) => diagnostic
                                    .help(format!("did you mean \"{}\"?", printable(suggestion))),
                                None => diagnostic.help(format!(
                                    "rows are named by token label or by position from 1 to {}",
                                    tokens.len()
                                )),
                            };
                            self.error(diagnostic);
                        }
                    }
                }
                if !ok {
                    return None;
                }
            }
            _ => {
                self.wrong_type(
                    value,
                    &format!("expected `{key}`"),
                    "a matrix or a table of rows",
                    &format!("{key} = [[0.5, 0.5], [0.2, 0.8]]"),
                );
                return None;
            }
        }
        let mut seen = vec![false; seq_len.unwrap_or(0)];
        for (index, row) in &rows {
            if let Some(already) = seen.get_mut(*index) {
                if *already {
                    self.error(
                        Diagnostic::error(
                            row.span(),
                            format!("expected `{key}` gives row {} twice", index + 1),
                        )
                        .label("given again here")
                        .help("a row may be named by its label or its position, but only once"),
                    );
                    return None;
                }
                *already = true;
            }
        }
        let mut figure = ExpectedFigure {
            matrix,
            rows: Vec::new(),
        };
        let mut ok = true;
        for (index, row) in rows {
            let DeValue::Array(cells) = row.get_ref() else {
                self.wrong_type(
                    row,
                    &format!("a row of expected `{key}`"),
                    "an array of numbers",
                    "[0.5, 0.5]",
                );
                ok = false;
                continue;
            };
            if let Some(width) = width
                && cells.len() != width
            {
                self.error(
                    Diagnostic::error(
                        row.span(),
                        format!(
                            "this row of expected `{key}` has {}, but `{key}` has {width} columns",
                            plural(cells.len(), "number")
                        ),
                    )
                    .label(plural(cells.len(), "number"))
                    .help(format!("give all {width} numbers of the row")),
                );
                ok = false;
                continue;
            }
            let mut values = Vec::with_capacity(cells.len());
            for (c, cell) in cells.iter().enumerate() {
                match self.matrix_number(&format!("expected.{key}"), index, c, cell, false) {
                    Ok(number) => values.push(PrintedNumber {
                        value: number,
                        text: self.source.get(cell.span()).unwrap_or_default().to_string(),
                    }),
                    Err(diagnostic) => {
                        self.error(diagnostic);
                        ok = false;
                    }
                }
            }
            figure.rows.push(ExpectedRow { row: index, values });
        }
        ok.then_some(figure)
    }
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
fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// A TOML integer's value (`+1`, `0x10` and `1_000` included).
fn integer_value(integer: &toml::de::DeInteger<'_>) -> Result<i64, std::num::ParseIntError> {
    i64::from_str_radix(integer.as_str(), integer.radix())
}

/// A TOML integer or float as f64, or what is wrong with it.
fn number_value(value: &DeValue<'_>) -> Result<f64, String> {
    match value {
        DeValue::Integer(integer) => integer_value(integer)
            .map(|n| n as f64)
            .map_err(|_| "this integer is too large".to_string()),
        DeValue::Float(float) => float
            .as_str()
            .parse::<f64>()
            .map_err(|_| "this number cannot be read".to_string()),
        other => Err(format!("expected a number, found {}", type_name(other))),
    }
}

fn type_name(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
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
