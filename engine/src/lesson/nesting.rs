//! Brackets read lexically (strings and comments skipped), without the TOML parser: a
//! pre-check of nesting, and the bracket a syntax error was really about.
//!
//! The parser recurses once per nested `[` or `{` while recovering from errors, so a file of
//! a hundred thousand `{a=` overflows the stack. A lesson never nests deeper than a few levels,
//! so anything deeper is refused here, with no recursion at all.

use std::ops::ControlFlow;

use super::limits::MAX_NESTING;

/// The byte offset of the first bracket that opens one level too many, if any.
pub(crate) fn too_deep(source: &str) -> Option<usize> {
    let mut depth = 0usize;
    let found = brackets(source, |at, bracket| {
        match bracket {
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return ControlFlow::Break(at);
                }
            }
            _ => depth = depth.saturating_sub(1),
        }
        ControlFlow::Continue(())
    });
    found.break_value()
}

/// The brackets still open at byte `offset` (outermost first): what a line that starts there
/// is inside of.
pub(crate) fn open_at(source: &str, offset: usize) -> Vec<usize> {
    let mut open = Vec::new();
    let _ = brackets(&source[..offset.min(source.len())], |at, bracket| {
        match bracket {
            b'[' | b'{' => open.push(at),
            _ => {
                open.pop();
            }
        }
        ControlFlow::<()>::Continue(())
    });
    open
}

/// Calls `on_bracket` with the offset and byte of every bracket outside strings and comments.
fn brackets<T>(
    source: &str,
    mut on_bracket: impl FnMut(usize, u8) -> ControlFlow<T>,
) -> ControlFlow<T> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Code,
        Comment,
        Basic,
        Literal,
        MultiBasic,
        MultiLiteral,
    }
    let bytes = source.as_bytes();
    let mut state = State::Code;
    let mut i = 0;
    while i < bytes.len() {
        // The bytes that change nothing where they are (most of a lesson: numbers, words) are
        // passed over in one search rather than a turn of the match each.
        let matters = |byte: u8| match state {
            State::Code => matches!(byte, b'#' | b'"' | b'\'' | b'[' | b'{' | b']' | b'}'),
            State::Comment => byte == b'\n',
            State::Basic => matches!(byte, b'\\' | b'"' | b'\n'),
            State::Literal => matches!(byte, b'\'' | b'\n'),
            State::MultiBasic => matches!(byte, b'\\' | b'"'),
            State::MultiLiteral => byte == b'\'',
        };
        match bytes[i..].iter().position(|&byte| matters(byte)) {
            Some(skipped) => i += skipped,
            None => break,
        }
        let rest = &bytes[i..];
        match state {
            State::Code => match bytes[i] {
                b'#' => state = State::Comment,
                b'"' if rest.starts_with(b"\"\"\"") => {
                    state = State::MultiBasic;
                    i += 2;
                }
                b'\'' if rest.starts_with(b"'''") => {
                    state = State::MultiLiteral;
                    i += 2;
                }
                b'"' => state = State::Basic,
                b'\'' => state = State::Literal,
                bracket @ (b'[' | b'{' | b']' | b'}') => on_bracket(i, bracket)?,
                _ => {}
            },
            State::Comment if bytes[i] == b'\n' => state = State::Code,
            // Single-line strings end at their quote, or at the end of the line like the parser's.
            State::Basic if bytes[i] == b'\\' => i += 1,
            State::Basic if bytes[i] == b'"' || bytes[i] == b'\n' => state = State::Code,
            State::Literal if bytes[i] == b'\'' || bytes[i] == b'\n' => state = State::Code,
            State::MultiBasic if bytes[i] == b'\\' => i += 1,
            State::MultiBasic if rest.starts_with(b"\"\"\"") => {
                state = State::Code;
                i += 2;
            }
            State::MultiLiteral if rest.starts_with(b"'''") => {
                state = State::Code;
                i += 2;
            }
            _ => {}
        }
        i += 1;
    }
    ControlFlow::Continue(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lesson_nesting_passes() {
        assert_eq!(
            too_deep("w = { shape = [4, 3] }\nm = [[1, 2], [3, 4]]\n[expected]\n"),
            None
        );
    }

    #[test]
    fn deep_nesting_is_found_at_the_bracket_too_many() {
        let text = format!("x = {}", "[".repeat(MAX_NESTING + 1));
        assert_eq!(too_deep(&text), Some(4 + MAX_NESTING));
    }

    #[test]
    fn the_brackets_open_at_a_line_are_found() {
        let text = "a = [\"x\", \"]\" # ]\nb = {c = [1, 2]}\n";
        let second_line = text.find("b =").unwrap();
        assert_eq!(open_at(text, second_line), vec![4]);
        assert_eq!(open_at(text, text.len()), vec![4]);
        assert_eq!(open_at("a = [1]\n", 8), Vec::<usize>::new());
    }

    /// Every bracket `brackets` reports, with its offset.
    fn all_brackets(source: &str) -> Vec<(usize, u8)> {
        let mut found = Vec::new();
        let _ = brackets(source, |at, bracket| {
            found.push((at, bracket));
            ControlFlow::<()>::Continue(())
        });
        found
    }

    /// The brackets read a byte at a time, as before the bytes that change nothing were
    /// passed over in one search.
    fn brackets_a_byte_at_a_time(source: &str) -> Vec<(usize, u8)> {
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            Code,
            Comment,
            Basic,
            Literal,
            MultiBasic,
            MultiLiteral,
        }
        let bytes = source.as_bytes();
        let (mut state, mut i, mut found) = (State::Code, 0, Vec::new());
        while i < bytes.len() {
            let rest = &bytes[i..];
            match state {
                State::Code => match bytes[i] {
                    b'#' => state = State::Comment,
                    b'"' if rest.starts_with(b"\"\"\"") => {
                        state = State::MultiBasic;
                        i += 2;
                    }
                    b'\'' if rest.starts_with(b"'''") => {
                        state = State::MultiLiteral;
                        i += 2;
                    }
                    b'"' => state = State::Basic,
                    b'\'' => state = State::Literal,
                    bracket @ (b'[' | b'{' | b']' | b'}') => found.push((i, bracket)),
                    _ => {}
                },
                State::Comment if bytes[i] == b'\n' => state = State::Code,
                State::Basic if bytes[i] == b'\\' => i += 1,
                State::Basic if bytes[i] == b'"' || bytes[i] == b'\n' => state = State::Code,
                State::Literal if bytes[i] == b'\'' || bytes[i] == b'\n' => state = State::Code,
                State::MultiBasic if bytes[i] == b'\\' => i += 1,
                State::MultiBasic if rest.starts_with(b"\"\"\"") => {
                    state = State::Code;
                    i += 2;
                }
                State::MultiLiteral if rest.starts_with(b"'''") => {
                    state = State::Code;
                    i += 2;
                }
                _ => {}
            }
            i += 1;
        }
        found
    }

    #[test]
    fn passing_over_plain_bytes_finds_the_brackets_a_byte_at_a_time_finds() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(14);
        let pieces = [
            "a = ", "1.5", ", ", "[", "]", "{", "}", "\"", "\"\"\"", "'", "'''", "#", "\n", "\\",
            "\\\"", "x", "é",
        ];
        for _ in 0..20_000 {
            let text: String = (0..rng.random_range(0..16))
                .map(|_| pieces[rng.random_range(0..pieces.len())])
                .collect();
            assert_eq!(
                all_brackets(&text),
                brackets_a_byte_at_a_time(&text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn brackets_in_strings_and_comments_do_not_count() {
        let text = format!("a = \"{0}\" # {0}\nb = '''{0}'''\n", "[".repeat(50));
        assert_eq!(too_deep(&text), None);
    }
}
