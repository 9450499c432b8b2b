//! Terminal input bytes to events, for a terminal we only see as a byte stream (an SSH
//! channel). Incremental: a key, a click or a paste may arrive split across reads, and what is
//! not complete yet waits for the next bytes. Garbage is skipped, never stored without bound.

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

/// The longest control sequence kept while waiting for its end; longer ones are garbage.
const MAX_SEQUENCE: usize = 64;
/// The most pasted text kept from one paste; the rest is dropped.
const MAX_PASTE: usize = 64 * 1024;

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

#[derive(Debug, Default)]
pub struct Decoder {
    pending: Vec<u8>,
    /// Inside a bracketed paste: the text so far.
    paste: Option<Vec<u8>>,
}

/// What the first bytes of the pending input make.
enum Parsed {
    /// An event (or nothing, for a sequence we ignore) and how many bytes it took.
    Done(Option<Event>, usize),
    /// The bytes so far start a sequence that is not complete yet.
    Incomplete,
}

impl Decoder {
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Decodes what can be decoded of `bytes` (after what was left over before).
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Event> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        // What is decoded is dropped from `pending` once, at the end: dropping each key's
        // bytes as it is decoded moves the rest of the packet every time, so a 64 KiB packet
        // of keys cost a second of CPU on the connection's worker and one student's stream of
        // them held up every other connection.
        let mut at = 0;
        loop {
            let rest = &self.pending[at..];
            if let Some(paste) = self.paste.as_mut() {
                match find(rest, PASTE_END) {
                    Some(end) => {
                        extend_bounded(paste, &rest[..end]);
                        let text = String::from_utf8_lossy(paste).into_owned();
                        self.paste = None;
                        at += end + PASTE_END.len();
                        events.push(Event::Paste(text));
                        continue;
                    }
                    None => {
                        // Keep a tail that could be the start of the end marker.
                        let keep = PASTE_END.len() - 1;
                        let cut = rest.len().saturating_sub(keep);
                        extend_bounded(paste, &rest[..cut]);
                        at += cut;
                        break;
                    }
                }
            }
            if rest.is_empty() {
                break;
            }
            if rest.starts_with(PASTE_START) {
                at += PASTE_START.len();
                self.paste = Some(Vec::new());
                continue;
            }
            match parse(rest) {
                Parsed::Done(event, used) => {
                    at += used.max(1);
                    events.extend(event);
                }
                // Not a sequence we know that ever ends: drop its first byte and go on.
                Parsed::Incomplete if rest.len() > MAX_SEQUENCE => at += 1,
                Parsed::Incomplete => break,
            }
        }
        self.pending.drain(..at);
        events
    }

    /// Whether a lone ESC is waiting: the Escape key, unless the rest of a sequence follows.
    pub(crate) fn waiting_on_escape(&self) -> bool {
        self.paste.is_none() && self.pending == b"\x1b"
    }

    /// Called when no bytes came for a moment: a lone ESC waiting to see whether a sequence
    /// follows is the Escape key after all.
    pub fn flush(&mut self) -> Vec<Event> {
        if self.paste.is_none() && self.pending == b"\x1b" {
            self.pending.clear();
            return vec![key(KeyCode::Esc, KeyModifiers::NONE)];
        }
        Vec::new()
    }
}

fn extend_bounded(paste: &mut Vec<u8>, bytes: &[u8]) {
    let room = MAX_PASTE.saturating_sub(paste.len());
    paste.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> Event {
    Event::Key(KeyEvent::new(code, modifiers))
}

fn parse(bytes: &[u8]) -> Parsed {
    match bytes[0] {
        0x1b => parse_escape(bytes),
        b'\r' | b'\n' => Parsed::Done(Some(key(KeyCode::Enter, KeyModifiers::NONE)), 1),
        b'\t' => Parsed::Done(Some(key(KeyCode::Tab, KeyModifiers::NONE)), 1),
        0x7f | 0x08 => Parsed::Done(Some(key(KeyCode::Backspace, KeyModifiers::NONE)), 1),
        byte @ 0x01..=0x1a => {
            let letter = char::from(b'a' + byte - 1);
            Parsed::Done(Some(key(KeyCode::Char(letter), KeyModifiers::CONTROL)), 1)
        }
        0x00 | 0x1c..=0x1f => Parsed::Done(None, 1),
        _ => parse_utf8(bytes),
    }
}

fn parse_utf8(bytes: &[u8]) -> Parsed {
    let length = match bytes[0] {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        // A byte that cannot start a character: skip it.
        _ => return Parsed::Done(None, 1),
    };
    if bytes.len() < length {
        // A continuation byte missing so far may come in the next read; a wrong one is not.
        return if bytes[1..].iter().all(|b| (0x80..=0xbf).contains(b)) {
            Parsed::Incomplete
        } else {
            Parsed::Done(None, 1)
        };
    }
    match std::str::from_utf8(&bytes[..length]) {
        Ok(text) => {
            let ch = text.chars().next().unwrap_or(' ');
            Parsed::Done(Some(key(KeyCode::Char(ch), KeyModifiers::NONE)), length)
        }
        Err(_) => Parsed::Done(None, 1),
    }
}

fn parse_escape(bytes: &[u8]) -> Parsed {
    let Some(&second) = bytes.get(1) else {
        return Parsed::Incomplete;
    };
    match second {
        b'[' => parse_csi(bytes),
        b'O' => match bytes.get(2) {
            None => Parsed::Incomplete,
            Some(&last) => Parsed::Done(cursor_key(last, KeyModifiers::NONE), 3),
        },
        // ESC ESC: the first is the Escape key.
        0x1b => Parsed::Done(Some(key(KeyCode::Esc, KeyModifiers::NONE)), 1),
        // ESC then a key: that key with Alt.
        _ => match parse(&bytes[1..]) {
            Parsed::Done(Some(Event::Key(mut event)), used) => {
                event.modifiers |= KeyModifiers::ALT;
                Parsed::Done(Some(Event::Key(event)), used + 1)
            }
            Parsed::Done(_, used) => Parsed::Done(None, used + 1),
            Parsed::Incomplete => Parsed::Incomplete,
        },
    }
}

/// The keys of `ESC [ … letter` and `ESC O letter`.
fn cursor_key(last: u8, modifiers: KeyModifiers) -> Option<Event> {
    let code = match last {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'Z' => return Some(key(KeyCode::BackTab, modifiers | KeyModifiers::SHIFT)),
        _ => return None,
    };
    Some(key(code, modifiers))
}

/// xterm's modifier parameter: 1 + (Shift 1, Alt 2, Ctrl 4).
fn modifiers(parameter: Option<u16>) -> KeyModifiers {
    let bits = parameter.unwrap_or(1).saturating_sub(1);
    let mut modifiers = KeyModifiers::NONE;
    if bits & 1 != 0 {
        modifiers |= KeyModifiers::SHIFT;
    }
    if bits & 2 != 0 {
        modifiers |= KeyModifiers::ALT;
    }
    if bits & 4 != 0 {
        modifiers |= KeyModifiers::CONTROL;
    }
    modifiers
}

fn parse_csi(bytes: &[u8]) -> Parsed {
    // ESC [ then parameter bytes (0x30–0x3f), intermediates (0x20–0x2f), a final (0x40–0x7e).
    let Some(end) = bytes[2..]
        .iter()
        .position(|b| (0x40..=0x7e).contains(b))
        .map(|offset| offset + 2)
    else {
        return if bytes[2..].iter().all(|b| (0x20..=0x3f).contains(b)) {
            Parsed::Incomplete
        } else {
            // Something that is not a control sequence: skip the ESC.
            Parsed::Done(None, 1)
        };
    };
    let used = end + 1;
    let parameters = &bytes[2..end];
    let last = bytes[end];
    if parameters.first() == Some(&b'<') {
        return Parsed::Done(sgr_mouse(&parameters[1..], last), used);
    }
    let numbers: Vec<Option<u16>> = std::str::from_utf8(parameters)
        .unwrap_or("")
        .split(';')
        .map(|part| part.parse().ok())
        .collect();
    let event = match last {
        b'~' => {
            let code = match numbers.first().copied().flatten() {
                Some(1 | 7) => KeyCode::Home,
                Some(4 | 8) => KeyCode::End,
                Some(2) => KeyCode::Insert,
                Some(3) => KeyCode::Delete,
                Some(5) => KeyCode::PageUp,
                Some(6) => KeyCode::PageDown,
                _ => return Parsed::Done(None, used),
            };
            Some(key(code, modifiers(numbers.get(1).copied().flatten())))
        }
        _ => cursor_key(last, modifiers(numbers.get(1).copied().flatten())),
    };
    Parsed::Done(event, used)
}

/// `ESC [ < button ; column ; row M` (press) or `m` (release), 1-based coordinates.
fn sgr_mouse(parameters: &[u8], last: u8) -> Option<Event> {
    let text = std::str::from_utf8(parameters).ok()?;
    let mut numbers = text.split(';').map(|part| part.parse::<u16>().ok());
    let (button, column, row) = (numbers.next()??, numbers.next()??, numbers.next()??);
    let mut modifiers = KeyModifiers::NONE;
    if button & 4 != 0 {
        modifiers |= KeyModifiers::SHIFT;
    }
    if button & 8 != 0 {
        modifiers |= KeyModifiers::ALT;
    }
    if button & 16 != 0 {
        modifiers |= KeyModifiers::CONTROL;
    }
    let pressed = last == b'M';
    let which = match button & 3 {
        0 => MouseButton::Left,
        1 => MouseButton::Middle,
        _ => MouseButton::Right,
    };
    let kind = match (button & 64 != 0, button & 32 != 0, pressed) {
        (true, _, _) if button & 1 == 0 => MouseEventKind::ScrollUp,
        (true, _, _) => MouseEventKind::ScrollDown,
        (false, true, _) => MouseEventKind::Drag(which),
        (false, false, true) => MouseEventKind::Down(which),
        (false, false, false) => MouseEventKind::Up(which),
    };
    Some(Event::Mouse(MouseEvent {
        kind,
        column: column.saturating_sub(1),
        row: row.saturating_sub(1),
        modifiers,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(events: &[Event]) -> Vec<(KeyCode, KeyModifiers)> {
        events
            .iter()
            .filter_map(|event| match event {
                Event::Key(key) => Some((key.code, key.modifiers)),
                _ => None,
            })
            .collect()
    }

    const NONE: KeyModifiers = KeyModifiers::NONE;

    #[test]
    fn letters_digits_and_control_keys() {
        let mut decoder = Decoder::new();
        let events = decoder.feed(b"n5\r\x7f\t\x03\x12");
        assert_eq!(
            keys(&events),
            vec![
                (KeyCode::Char('n'), NONE),
                (KeyCode::Char('5'), NONE),
                (KeyCode::Enter, NONE),
                (KeyCode::Backspace, NONE),
                (KeyCode::Tab, NONE),
                (KeyCode::Char('c'), KeyModifiers::CONTROL),
                (KeyCode::Char('r'), KeyModifiers::CONTROL),
            ]
        );
    }

    #[test]
    fn arrows_in_both_cursor_modes_and_with_shift() {
        let mut decoder = Decoder::new();
        let events = decoder.feed(b"\x1b[A\x1bOB\x1b[1;2A\x1b[Z\x1b[5~\x1b[6~\x1b[H\x1b[4~");
        assert_eq!(
            keys(&events),
            vec![
                (KeyCode::Up, NONE),
                (KeyCode::Down, NONE),
                (KeyCode::Up, KeyModifiers::SHIFT),
                (KeyCode::BackTab, KeyModifiers::SHIFT),
                (KeyCode::PageUp, NONE),
                (KeyCode::PageDown, NONE),
                (KeyCode::Home, NONE),
                (KeyCode::End, NONE),
            ]
        );
    }

    #[test]
    fn a_sequence_split_across_reads_waits_for_its_end() {
        let mut decoder = Decoder::new();
        assert!(decoder.feed(b"\x1b").is_empty());
        assert!(decoder.feed(b"[").is_empty());
        assert_eq!(keys(&decoder.feed(b"C")), vec![(KeyCode::Right, NONE)]);
        assert!(decoder.feed("é".as_bytes()[..1].as_ref()).is_empty());
        assert_eq!(
            keys(&decoder.feed(&"é".as_bytes()[1..])),
            vec![(KeyCode::Char('é'), NONE)]
        );
    }

    #[test]
    fn a_lone_escape_is_the_escape_key_once_input_pauses() {
        let mut decoder = Decoder::new();
        assert!(decoder.feed(b"\x1b").is_empty());
        assert_eq!(keys(&decoder.flush()), vec![(KeyCode::Esc, NONE)]);
        assert_eq!(keys(&decoder.feed(b"\x1b\x1b")), vec![(KeyCode::Esc, NONE)]);
    }

    #[test]
    fn clicks_and_the_wheel_in_sgr_mouse_mode() {
        let mut decoder = Decoder::new();
        let events = decoder.feed(b"\x1b[<0;10;5M\x1b[<0;10;5m\x1b[<65;1;1M");
        let kinds: Vec<(MouseEventKind, u16, u16)> = events
            .iter()
            .filter_map(|event| match event {
                Event::Mouse(mouse) => Some((mouse.kind, mouse.column, mouse.row)),
                _ => None,
            })
            .collect();
        assert_eq!(
            kinds,
            vec![
                (MouseEventKind::Down(MouseButton::Left), 9, 4),
                (MouseEventKind::Up(MouseButton::Left), 9, 4),
                (MouseEventKind::ScrollDown, 0, 0),
            ]
        );
    }

    #[test]
    fn a_paste_arrives_whole_even_when_split() {
        let mut decoder = Decoder::new();
        assert!(decoder.feed(b"\x1b[200~0.").is_empty());
        assert!(decoder.feed(b"75\x1b[20").is_empty());
        assert_eq!(
            decoder.feed(b"1~q"),
            vec![
                Event::Paste("0.75".to_string()),
                key(KeyCode::Char('q'), NONE)
            ]
        );
    }

    #[test]
    fn garbage_is_skipped_and_never_kept_without_bound() {
        let mut decoder = Decoder::new();
        let mut garbage = b"\x1b[".to_vec();
        garbage.extend(std::iter::repeat_n(b'1', 10_000));
        decoder.feed(&garbage);
        assert!(decoder.pending.len() <= MAX_SEQUENCE + 1);
        let events = decoder.feed(b"\xff\xfe~n");
        assert!(keys(&events).contains(&(KeyCode::Char('n'), NONE)));
    }

    #[test]
    fn a_huge_paste_is_cut_not_stored_whole() {
        let mut decoder = Decoder::new();
        decoder.feed(b"\x1b[200~");
        for _ in 0..100 {
            decoder.feed(&[b'x'; 4096]);
        }
        let events = decoder.feed(PASTE_END);
        match &events[..] {
            [Event::Paste(text)] => assert_eq!(text.len(), MAX_PASTE),
            other => panic!("{other:?}"),
        }
    }
}
