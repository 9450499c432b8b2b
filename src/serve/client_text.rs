//! Text a client chose (its user name, terminal type, version string), made fit for the
//! teacher's log and terminal: every control, bidi and invisible character shown visibly (by
//! `printable`), and the length bounded, with a visible mark of what was cut.

use crate::lesson::text::printable;

/// The most characters of a user name shown.
pub(crate) const NAME: usize = 32;

/// The most characters of a terminal type or a client's version string shown: real ones are
/// short (`xterm-256color`, `SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13`).
pub(crate) const LABEL: usize = 64;

/// The most characters of an error shown when it may quote the client.
pub(crate) const ERROR: usize = 200;

/// `text` with its control and invisible characters escaped, cut after `max` characters of the
/// client's text with `…(N more)` saying how many were left out.
pub(crate) fn client_text(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return printable(text);
    }
    let kept: String = text.chars().take(max).collect();
    format!("{}…({} more)", printable(&kept), total - max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_shown_visibly() {
        assert_eq!(
            client_text("xterm\x1b]2;PWNED\x07", LABEL),
            r"xterm\u{001b}]2;PWNED\u{0007}"
        );
        assert_eq!(client_text("a\u{202e}b", LABEL), r"a\u{202e}b");
    }

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(client_text("xterm-256color", LABEL), "xterm-256color");
        assert_eq!(client_text("", NAME), "");
    }

    #[test]
    fn long_text_is_cut_with_a_mark_of_how_much_was_left_out() {
        let shown = client_text(&"x".repeat(100_000), LABEL);
        assert_eq!(shown, format!("{}…(99936 more)", "x".repeat(64)));
        // The mark counts the client's characters, not bytes.
        assert_eq!(client_text("ééé", 2), "éé…(1 more)");
    }

    #[test]
    fn a_cut_never_splits_an_escape() {
        let shown = client_text(&"\x1b".repeat(10), 3);
        assert_eq!(shown, r"\u{001b}\u{001b}\u{001b}…(7 more)");
    }
}
