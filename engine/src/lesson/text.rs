//! Untrusted text: what may pass from a lesson file to someone else's terminal.
//!
//! Control characters can move the cursor, retitle windows or hide text; bidi and other format
//! characters can make a label read differently from what it is. None of them may pass.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::limits::{
    MAX_LABEL_BYTES, MAX_LABEL_COLUMNS, MAX_TITLE_BYTES, MAX_TITLE_COLUMNS, TAB_WIDTH,
};

/// How much room a one-line text may take: columns on screen, and bytes in memory. Both are
/// needed: combining marks take no column, so columns alone let a label grow without bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Room {
    pub columns: usize,
    pub bytes: usize,
}

/// A token label's room.
pub const LABEL_ROOM: Room = Room {
    columns: MAX_LABEL_COLUMNS,
    bytes: MAX_LABEL_BYTES,
};

/// A title's room.
pub const TITLE_ROOM: Room = Room {
    columns: MAX_TITLE_COLUMNS,
    bytes: MAX_TITLE_BYTES,
};

/// Why a text does not fit its room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TooLarge {
    Columns {
        columns: usize,
        max: usize,
    },
    Bytes {
        bytes: usize,
        columns: usize,
        max: usize,
    },
}

impl TooLarge {
    /// Says what is too large about `what` (e.g. "token 1", "`title`").
    pub fn describe(&self, what: &str) -> String {
        match self {
            TooLarge::Columns { columns, max } => {
                format!("{what} is {columns} columns wide; the limit is {max}")
            }
            TooLarge::Bytes {
                bytes,
                columns,
                max,
            } => format!(
                "{what} takes {bytes} bytes for {columns} {}; the limit is {max} bytes",
                if *columns == 1 { "column" } else { "columns" }
            ),
        }
    }

    /// What would be right.
    pub(crate) fn help(&self) -> &'static str {
        match self {
            TooLarge::Columns { .. } => "shorten it",
            TooLarge::Bytes { .. } => {
                "combining marks (accents stacked on a letter) take no column but still count; keep a few per letter"
            }
        }
    }
}

impl Room {
    /// Whether `text` fits: bytes are checked first, so that a huge text is not measured.
    pub fn check(self, text: &str) -> Result<(), TooLarge> {
        if text.len() > self.bytes {
            let columns = columns(text);
            return Err(TooLarge::Bytes {
                bytes: text.len(),
                columns,
                max: self.bytes,
            });
        }
        let columns = columns(text);
        if columns > self.columns {
            return Err(TooLarge::Columns {
                columns,
                max: self.columns,
            });
        }
        Ok(())
    }
}

/// Why a piece of text was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextProblem {
    /// A control character (other than newline where newlines are allowed).
    Control { ch: char, index: usize },
    /// An invisible format character, such as a bidi override or a zero-width joiner.
    Format { ch: char, index: usize },
    /// A newline in text that must stay on one line.
    Newline { index: usize },
}

impl TextProblem {
    pub fn describe(&self) -> String {
        match self {
            TextProblem::Control { ch, .. } => {
                format!("control character U+{:04X} is not allowed", *ch as u32)
            }
            TextProblem::Format { ch, .. } => format!(
                "invisible format character U+{:04X} ({}) is not allowed",
                *ch as u32,
                format_character_name(*ch)
            ),
            TextProblem::Newline { .. } => "a line break is not allowed here".to_string(),
        }
    }

    /// Character index of the offending character within the text.
    pub(crate) fn index(&self) -> usize {
        match self {
            TextProblem::Control { index, .. }
            | TextProblem::Format { index, .. }
            | TextProblem::Newline { index } => *index,
        }
    }
}

/// Checks lesson text and expands tabs. `multiline` allows newlines (narration); labels and
/// titles are single lines.
pub fn clean_text(text: &str, multiline: bool) -> Result<String, TextProblem> {
    let mut cleaned = String::with_capacity(text.len());
    let mut column = 0;
    // Characters read so far: where a refused one is, counted as the message counts it.
    let mut index = 0;
    let mut rest = text;
    loop {
        // Printable ASCII, nearly all of a lesson's text, passes as it is: copied a run at a
        // time rather than checked and pushed a character at a time, which was a tenth of
        // `show --format json`'s time on a small lesson.
        let plain = rest
            .bytes()
            .position(|byte| !(b' '..=b'~').contains(&byte))
            .unwrap_or(rest.len());
        cleaned.push_str(&rest[..plain]);
        column += plain;
        index += plain;
        rest = &rest[plain..];
        let mut chars = rest.chars();
        let Some(ch) = chars.next() else {
            return Ok(cleaned);
        };
        let after = chars.as_str();
        match ch {
            // A CRLF file's multi-line strings carry \r\n: read it as one line break.
            '\r' if multiline && after.starts_with('\n') => {}
            '\n' if multiline => {
                cleaned.push('\n');
                column = 0;
            }
            '\n' | '\r' | '\u{2028}' | '\u{2029}' => return Err(TextProblem::Newline { index }),
            '\t' => {
                let spaces = TAB_WIDTH - column % TAB_WIDTH;
                cleaned.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            }
            ch if ch.is_control() => return Err(TextProblem::Control { ch, index }),
            ch if is_format_character(ch) => return Err(TextProblem::Format { ch, index }),
            ch => {
                cleaned.push(ch);
                column += 1;
            }
        }
        index += 1;
        rest = after;
    }
}

/// Text safe to print anywhere, for echoing untrusted text in messages: anything that
/// `clean_text` would refuse is written as a visible `\u{…}` escape instead.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if is_hidden(ch) {
            out.push_str(&format!("\\u{{{:04x}}}", ch as u32));
        } else {
            out.push(ch);
        }
    }
    out
}

/// Multi-line text safe to print: as `printable`, but line breaks (LF and CRLF) and tabs stay.
/// For whole files quoted or copied to the terminal, such as a frozen lesson's comments.
pub fn printable_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        if keeps_its_place(ch, chars.peek().copied()) {
            out.push(ch);
        } else {
            out.push_str(&format!("\\u{{{:04x}}}", ch as u32));
        }
    }
    out
}

/// Whether `ch` (followed by `next`) may be printed as it is in multi-line text.
pub fn keeps_its_place(ch: char, next: Option<char>) -> bool {
    match ch {
        '\n' | '\t' => true,
        '\r' => next == Some('\n'),
        ch => !is_hidden(ch),
    }
}

/// A file name, safe to print: file names are chosen by whoever sent the file, and may hold
/// escapes that retitle a window or bidi controls that reverse what follows.
pub fn printable_path(path: &std::path::Path) -> String {
    printable(&path.display().to_string())
}

/// The one rule for text that leaves the program: a character that acts on the terminal (C0
/// and C1 controls, line and paragraph separators) or is invisible (bidi controls, zero-width
/// and other format characters) must not be sent as it is.
pub fn is_hidden(ch: char) -> bool {
    ch.is_control() || is_format_character(ch) || ch == '\u{2028}' || ch == '\u{2029}'
}

/// Width of text in terminal columns.
pub fn columns(text: &str) -> usize {
    text.width()
}

/// `text` cut to `width` terminal columns, ending in "…" when something was cut.
pub fn fit(text: &str, width: usize) -> String {
    if columns(text) <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for ch in text.chars() {
        let w = UnicodeWidthChar::width(ch).unwrap_or(0);
        if used + w > width - 1 {
            break;
        }
        used += w;
        out.push(ch);
    }
    out.push('…');
    out
}

/// Unicode general category Cf (format characters), Unicode 16. Written out because no
/// small, well-kept crate exposes just this category; the list changes rarely.
fn is_format_character(ch: char) -> bool {
    matches!(ch as u32,
        0x00AD | 0x0600..=0x0605 | 0x061C | 0x06DD | 0x070F | 0x0890..=0x0891 | 0x08E2
        | 0x180E | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F
        | 0xFEFF | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F)
}

fn format_character_name(ch: char) -> &'static str {
    match ch as u32 {
        0x202A..=0x202E | 0x2066..=0x2069 | 0x200E | 0x200F | 0x061C => "a bidi control",
        0x200B => "zero width space",
        0x200C => "zero width non-joiner",
        0x200D => "zero width joiner",
        0xFEFF => "zero width no-break space",
        0x00AD => "soft hyphen",
        _ => "a format character",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_passes() {
        assert_eq!(clean_text("The cat", false), Ok("The cat".to_string()));
    }

    #[test]
    fn tabs_expand_to_the_next_stop() {
        assert_eq!(clean_text("a\tb", false), Ok("a   b".to_string()));
    }

    #[test]
    fn escape_sequences_are_refused() {
        assert!(matches!(
            clean_text("red\u{1b}[31m", false),
            Err(TextProblem::Control {
                ch: '\u{1b}',
                index: 3
            })
        ));
    }

    #[test]
    fn bidi_overrides_are_refused() {
        assert!(matches!(
            clean_text("abc\u{202e}def", true),
            Err(TextProblem::Format { ch: '\u{202e}', .. })
        ));
    }

    #[test]
    fn crlf_line_breaks_read_as_newlines_in_multiline_text() {
        assert_eq!(clean_text("one\r\ntwo", true), Ok("one\ntwo".to_string()));
        assert!(
            clean_text("one\rtwo", true).is_err(),
            "a lone carriage return moves the cursor"
        );
    }

    /// `clean_text` a character at a time, as it was before printable ASCII was copied a run
    /// at a time: the same text, and the same refusal at the same character.
    fn cleaned_a_character_at_a_time(text: &str, multiline: bool) -> Result<String, TextProblem> {
        let mut cleaned = String::new();
        let mut column = 0;
        let mut chars = text.chars().enumerate().peekable();
        while let Some((index, ch)) = chars.next() {
            match ch {
                '\r' if multiline && chars.peek().is_some_and(|(_, next)| *next == '\n') => {}
                '\n' if multiline => {
                    cleaned.push('\n');
                    column = 0;
                }
                '\n' | '\r' | '\u{2028}' | '\u{2029}' => {
                    return Err(TextProblem::Newline { index });
                }
                '\t' => {
                    let spaces = TAB_WIDTH - column % TAB_WIDTH;
                    cleaned.extend(std::iter::repeat_n(' ', spaces));
                    column += spaces;
                }
                ch if ch.is_control() => return Err(TextProblem::Control { ch, index }),
                ch if is_format_character(ch) => return Err(TextProblem::Format { ch, index }),
                ch => {
                    cleaned.push(ch);
                    column += 1;
                }
            }
        }
        Ok(cleaned)
    }

    #[test]
    fn runs_of_plain_ascii_are_cleaned_as_a_character_at_a_time() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(14);
        // Plain words beside everything that is not plain ASCII: tabs after runs of every
        // length, line breaks, accents and wide characters, controls, bidi and format
        // characters, DEL and the last printable byte.
        let pieces = [
            "the", " ", "cat", "\t", "\n", "\r\n", "\r", "é", "猫", "\u{301}", "\u{1b}", "\u{7f}",
            "~", "\u{202e}", "\u{200b}", "\u{ad}", "\u{2028}", "\u{85}", "x",
        ];
        for _ in 0..20_000 {
            let text: String = (0..rng.random_range(0..12))
                .map(|_| pieces[rng.random_range(0..pieces.len())])
                .collect();
            for multiline in [false, true] {
                assert_eq!(
                    clean_text(&text, multiline),
                    cleaned_a_character_at_a_time(&text, multiline),
                    "{text:?}, multiline {multiline}"
                );
            }
        }
    }

    #[test]
    fn newlines_only_where_allowed() {
        assert!(clean_text("one\ntwo", true).is_ok());
        assert!(matches!(
            clean_text("one\ntwo", false),
            Err(TextProblem::Newline { index: 3 })
        ));
    }

    #[test]
    fn a_label_is_bounded_by_bytes_as_well_as_columns() {
        let accented = format!("a{}", "\u{301}".repeat(400_000));
        assert_eq!(columns(&accented), 1, "combining accents take no column");
        assert_eq!(
            LABEL_ROOM.check(&accented),
            Err(TooLarge::Bytes {
                bytes: 800_001,
                columns: 1,
                max: 64
            })
        );
        assert_eq!(LABEL_ROOM.check("café"), Ok(()));
        assert_eq!(
            LABEL_ROOM.check("a-very-long-token-label"),
            Err(TooLarge::Columns {
                columns: 23,
                max: 16
            })
        );
    }

    #[test]
    fn file_names_print_without_their_escapes() {
        let name = std::path::Path::new("x\u{1b}]2;PWNED\u{7}\u{202e}.toml");
        assert_eq!(
            printable_path(name),
            "x\\u{001b}]2;PWNED\\u{0007}\\u{202e}.toml"
        );
    }

    #[test]
    fn printable_lines_keep_line_breaks_and_tabs() {
        assert_eq!(
            printable_lines("a\tb\r\n# \u{9b}c\rd\n"),
            "a\tb\r\n# \\u{009b}c\\u{000d}d\n"
        );
    }

    #[test]
    fn printable_escapes_what_is_refused() {
        assert_eq!(printable("a\u{1b}b\u{202e}"), "a\\u{001b}b\\u{202e}");
    }
}
