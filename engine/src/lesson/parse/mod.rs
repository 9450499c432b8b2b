//! Reading a lesson file: TOML with spans, checked key by key, every problem reported.
//!
//! The file is walked as a spanned TOML tree (`toml::de::DeTable`) rather than deserialised with
//! serde, because serde stops at the first problem and a teacher wants to see them all at once.
//!
//! This file owns the walk over the top-level keys; each kind of key is read by its own file:
//! text fields and tokens (`text`), matrices and generators (`matrices`), the input matrices and
//! the shapes they must share (`inputs`), the small settings (`options`), `[narration]` and
//! `[expected]`. Broken TOML is reported by `syntax`; the words every part shares live in
//! `report` and `values`.

mod expected;
#[cfg(test)]
pub(crate) use expected::figure_keys;
mod heads;
mod inputs;
pub(crate) mod keys;
mod matrices;
mod narration;
mod options;
mod positions;
mod report;
mod syntax;
mod text;
mod values;
mod vectors;

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::Lesson;
use super::diagnostic::Diagnostic;
use super::limits::*;

pub(crate) use report::did_you_mean;

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

/// The keys a lesson may have, from the one table of them.
const TOP_KEYS: &[&str] = &super::schema::NAMES;

/// More diagnostics than this drown the first ones; the rest are counted instead.
const MAX_DIAGNOSTICS: usize = 50;

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
    let lesson = lesson.filter(|_| !has_error).map(|mut lesson| {
        lesson.draw_numbers();
        lesson
    });
    Parsed {
        lesson,
        diagnostics,
    }
}

type Value<'i> = Spanned<DeValue<'i>>;

/// A top-level key as found: where the key stands, and its value.
type Entry<'a, 'i> = Option<(Range<usize>, &'a Value<'i>)>;

/// The top-level keys of a lesson file that are known, with where they stand.
pub(crate) struct Entries<'a, 'i> {
    list: Vec<(&'a str, Range<usize>, &'a Value<'i>)>,
}

impl<'a, 'i> Entries<'a, 'i> {
    fn get(&self, name: &str) -> Entry<'a, 'i> {
        self.list
            .iter()
            .find(|(key, ..)| *key == name)
            .map(|(_, span, value)| (span.clone(), *value))
    }
}

/// The parser's state: the text (for spans and for numbers as written) and what it has found.
/// Each part of the file is read by methods of `Reader` in the file named for that part.
pub(crate) struct Reader<'s> {
    source: &'s str,
    diagnostics: Vec<Diagnostic>,
}

impl<'s> Reader<'s> {
    fn error(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// Whether the key `name`, written at `span`, is of the lesson's format; when it is not,
    /// says so with what the table of keys gives as the reason.
    fn of_its_format(&mut self, name: &str, span: Range<usize>, format: Option<u32>) -> bool {
        let Some(key) = super::schema::key(name) else {
            return true;
        };
        let Some(format) = format.filter(|format| *format < key.since) else {
            return true;
        };
        let mut diagnostic = Diagnostic::error(
            span,
            format!("`{name}` needs `format = {}`", key.since),
        )
        .help(format!(
            "write `format = {}` at the top of the file; everything else of format {format} stays as it is",
            key.since
        ));
        if let Some(why) = key.format_1_has_not {
            diagnostic = diagnostic.label(why);
        }
        self.error(diagnostic);
        false
    }

    fn lesson(&mut self) -> Option<Lesson> {
        if self.source.len() > MAX_FILE_BYTES {
            self.error(
                Diagnostic::error(0..0, format!(
                    "the lesson file is {} bytes; the limit is {MAX_FILE_BYTES} bytes ({MAX_FILE_SIZE})",
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
            // A figure is rows of numbers: `positions = "rope"` below [expected] is the lesson
            // key, though `positions` is also a figure's name.
            let belongs = |key: &str, value: &Value<'_>| match table_name {
                "narration" => narration::is_step_key(key),
                _ => {
                    expected::is_expected_key(key)
                        && matches!(value.get_ref(), DeValue::Array(_) | DeValue::Table(_))
                }
            };
            let mut moved: Vec<(&'a str, Range<usize>)> = Vec::new();
            for (key, value) in table.iter() {
                let name = key.get_ref().as_ref();
                let lesson_key = TOP_KEYS
                    .iter()
                    .find(|top| **top == name && !belongs(top, value));
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

    /// Every top-level key, each by its reader in the table of keys, in the reading order
    /// (`schema::READING_ORDER`): the tokens before the matrices whose rows they count, the mask
    /// and scale before the narration and figures that refer to them.
    fn document<'a, 'i>(&mut self, root: &'a DeTable<'i>) -> Option<Lesson> {
        let mut entries = Entries { list: Vec::new() };
        let mut misspelt = Vec::new();
        for (key, value) in root.iter() {
            let name = key.get_ref().as_ref();
            if TOP_KEYS.contains(&name) {
                entries.list.push((name, key.span(), value));
            } else {
                if let Some(meant) =
                    self.unknown_key(name, key.span(), TOP_KEYS, "not a lesson key")
                {
                    misspelt.push((meant, key.span(), value));
                }
            }
        }
        // A misspelt key is read as the key it was meant to be (when that one is not written
        // too), so that its value's own problems, and what depends on it, are told in the same
        // run as the misspelling, not in the next: no "missing `embeddings`" after
        // `embedings`, and a `kv_head` that does not divide `heads` is said at once. The lesson
        // is still refused for the misspelling.
        misspelt.sort_by_key(|(_, span, _)| span.start);
        for (meant, span, value) in misspelt {
            if entries.get(meant).is_none() {
                entries.list.push((meant, span, value));
            }
        }
        let mut draft = keys::Draft::with_misplaced(self.misplaced_keys(&mut entries));
        for key in &crate::lesson::schema::READING_ORDER {
            if let keys::Read::Own { read, .. } = key.read {
                read(self, &mut entries, &mut draft);
            }
        }
        if self.diagnostics.iter().any(Diagnostic::is_error) {
            return None;
        }
        draft.lesson()
    }
}
