//! The bytes that turn the frame a terminal shows into the next one: only the cells that
//! differ, each reached by the shortest cursor move (or by writing the few unchanged cells on the
//! way again, when that is shorter), with only the colours and attributes that change.
//!
//! ratatui's own writer addresses the cursor absolutely for every gap and sends both colours
//! whenever either changes. A cursor move on a matrix re-styles a highlighted column: every row
//! of it then cost a cursor address and two full colour codes. Here the changed cells are also
//! tried in a second order, grouped by style, so a column of highlighted cells costs one colour
//! code instead of one a row; whichever order is shorter is sent.

use std::collections::HashSet;
use std::fmt::Write as _;

use ratatui::backend::IntoCrossterm;
use ratatui::buffer::{Buffer, Cell, CellDiffOption};
use ratatui::crossterm::style::Colored;
use ratatui::style::{Color, Modifier};
use unicode_width::UnicodeWidthStr;

/// The colours and attributes a cell is drawn with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pen {
    fg: Color,
    bg: Color,
    modifier: Modifier,
}

/// What the terminal draws with after `ESC[0m`, and what every frame leaves it with.
const PLAIN: Pen = Pen {
    fg: Color::Reset,
    bg: Color::Reset,
    modifier: Modifier::empty(),
};

impl Pen {
    fn of(cell: &Cell) -> Pen {
        Pen {
            fg: cell.fg,
            bg: cell.bg,
            modifier: cell.modifier,
        }
    }
}

/// Each attribute with the SGR parameter that turns it on and the one that turns it off. Bold
/// and dim share their "off" (22), as do the two blinks (25).
const ATTRIBUTES: [(Modifier, u8, u8); 9] = [
    (Modifier::BOLD, 1, 22),
    (Modifier::DIM, 2, 22),
    (Modifier::ITALIC, 3, 23),
    (Modifier::UNDERLINED, 4, 24),
    (Modifier::SLOW_BLINK, 5, 25),
    (Modifier::RAPID_BLINK, 6, 25),
    (Modifier::REVERSED, 7, 27),
    (Modifier::HIDDEN, 8, 28),
    (Modifier::CROSSED_OUT, 9, 29),
];

/// The SGR parameters of a foreground colour, written as crossterm writes them (so NO_COLOR,
/// which crossterm honours, still leaves them out).
fn fg_param(color: Color, out: &mut String) {
    let _ = write!(out, "{}", Colored::ForegroundColor(color.into_crossterm()));
}

fn bg_param(color: Color, out: &mut String) {
    let _ = write!(out, "{}", Colored::BackgroundColor(color.into_crossterm()));
}

/// SGR parameters joined by `;`, leaving out the empty ones (a colour crossterm leaves out).
struct Params(String);

impl Params {
    fn new() -> Params {
        Params(String::new())
    }

    fn push(&mut self, write: impl FnOnce(&mut String)) {
        let mark = self.0.len();
        if mark > 0 {
            self.0.push(';');
        }
        let start = self.0.len();
        write(&mut self.0);
        if self.0.len() == start {
            self.0.truncate(mark);
        }
    }

    fn number(&mut self, n: u8) {
        self.push(|out| {
            let _ = write!(out, "{n}");
        });
    }
}

/// The shortest SGR sequence that changes the pen `from` into `to`: the changes alone, or a
/// reset followed by everything `to` has, whichever is shorter. Empty when they are equal.
fn sgr(from: Pen, to: Pen, out: &mut Vec<u8>) {
    if from == to {
        return;
    }
    // The changes alone.
    let mut changes = Params::new();
    let removed = from.modifier - to.modifier;
    let mut added = to.modifier - from.modifier;
    let mut offs_sent: Vec<u8> = Vec::new();
    for (attribute, _, off) in ATTRIBUTES {
        if removed.contains(attribute) && !offs_sent.contains(&off) {
            offs_sent.push(off);
            changes.number(off);
            // The shared "off" also ended its partner: put it back if `to` keeps it.
            for (partner, _, partner_off) in ATTRIBUTES {
                if partner_off == off && partner != attribute && to.modifier.contains(partner) {
                    added |= partner;
                }
            }
        }
    }
    for (attribute, on, _) in ATTRIBUTES {
        if added.contains(attribute) {
            changes.number(on);
        }
    }
    if from.fg != to.fg {
        changes.push(|out| fg_param(to.fg, out));
    }
    if from.bg != to.bg {
        changes.push(|out| bg_param(to.bg, out));
    }
    // A reset, then everything `to` has.
    let mut fresh = Params::new();
    fresh.number(0);
    for (attribute, on, _) in ATTRIBUTES {
        if to.modifier.contains(attribute) {
            fresh.number(on);
        }
    }
    if to.fg != Color::Reset {
        fresh.push(|out| fg_param(to.fg, out));
    }
    if to.bg != Color::Reset {
        fresh.push(|out| bg_param(to.bg, out));
    }
    let params = if fresh.0.len() < changes.0.len() {
        fresh.0
    } else {
        changes.0
    };
    // Only colours changed and crossterm leaves colours out (NO_COLOR in this process's
    // environment): `ESC[m` would be a reset, so nothing is sent.
    if params.is_empty() {
        return;
    }
    out.extend_from_slice(b"\x1b[");
    out.extend_from_slice(params.as_bytes());
    out.push(b'm');
}

/// A cursor-movement sequence: `ESC[`, the count unless it is 1, the final byte.
fn relative(count: u16, final_byte: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(b"\x1b[");
    if count != 1 {
        out.extend_from_slice(count.to_string().as_bytes());
    }
    out.push(final_byte);
}

/// The shortest way to move the cursor from `from` (unknown: `None`) to `(x, y)`: an absolute
/// address, or moves up or down and along the row.
fn move_cursor(from: Option<(u16, u16)>, (x, y): (u16, u16), out: &mut Vec<u8>) {
    let mut absolute = Vec::with_capacity(10);
    absolute.extend_from_slice(b"\x1b[");
    if (x, y) != (0, 0) {
        absolute.extend_from_slice((y + 1).to_string().as_bytes());
        if x != 0 {
            absolute.push(b';');
            absolute.extend_from_slice((x + 1).to_string().as_bytes());
        }
    }
    absolute.push(b'H');
    let Some((from_x, from_y)) = from else {
        out.extend_from_slice(&absolute);
        return;
    };
    let mut moves = Vec::with_capacity(10);
    if y > from_y && y - from_y <= 3 {
        // Line feeds: a byte a row, shorter than `ESC[nB` up to 3 rows. In raw mode (the
        // tutor's own terminal, and an ssh client's) a line feed only moves down, as in the
        // browser's terminal; it scrolls only on the bottom row, which the cursor is not on.
        moves.extend(std::iter::repeat_n(b'\n', usize::from(y - from_y)));
    } else if y > from_y {
        relative(y - from_y, b'B', &mut moves);
    } else if y + 1 == from_y {
        // Reverse index: up one row, scrolling only on the top row, which the cursor is not on.
        moves.extend_from_slice(b"\x1bM");
    } else if y < from_y {
        relative(from_y - y, b'A', &mut moves);
    }
    if x == 0 && from_x != 0 {
        moves.push(b'\r');
    } else if x > from_x {
        relative(x - from_x, b'C', &mut moves);
    } else if x + 3 >= from_x && x < from_x {
        // Backspaces: a byte a column, shorter than `ESC[nD` up to 3 columns.
        moves.extend(std::iter::repeat_n(b'\x08', usize::from(from_x - x)));
    } else if x < from_x {
        relative(from_x - x, b'D', &mut moves);
    }
    out.extend_from_slice(if moves.len() < absolute.len() {
        &moves
    } else {
        &absolute
    });
}

/// Writes the cells of a frame in a given order, remembering where the cursor is and what it
/// draws with.
struct Writer<'a> {
    next: &'a Buffer,
    out: Vec<u8>,
    /// Where the next character would go; `None` when not known for sure (at the start, after
    /// a character wider than one cell, after the last column, where terminals differ).
    cursor: Option<(u16, u16)>,
    pen: Pen,
}

impl Writer<'_> {
    fn new(next: &Buffer) -> Writer<'_> {
        Writer {
            next,
            out: Vec::new(),
            cursor: None,
            pen: PLAIN,
        }
    }

    /// Whether `cell` can be written again on the way to a later cell: one column wide and
    /// not one the frame leaves alone.
    fn bridgeable(cell: &Cell) -> bool {
        cell.diff_option == CellDiffOption::None && cell.symbol().width() == 1
    }

    /// The bytes that write the cells between the cursor and `x` on its row again (as the next
    /// frame has them), or `None` when they cannot be.
    fn bridge(&self, x: u16, y: u16) -> Option<(Vec<u8>, Pen)> {
        let (from_x, from_y) = self.cursor?;
        if from_y != y || from_x >= x {
            return None;
        }
        let mut bytes = Vec::new();
        let mut pen = self.pen;
        for gap_x in from_x..x {
            let cell = &self.next[(gap_x, y)];
            if !Self::bridgeable(cell) {
                return None;
            }
            sgr(pen, Pen::of(cell), &mut bytes);
            pen = Pen::of(cell);
            bytes.extend_from_slice(cell.symbol().as_bytes());
        }
        Some((bytes, pen))
    }

    fn write(&mut self, x: u16, y: u16, cell: &Cell) {
        let target = Pen::of(cell);
        if self.cursor != Some((x, y)) {
            let mut moved = Vec::new();
            move_cursor(self.cursor, (x, y), &mut moved);
            sgr(self.pen, target, &mut moved);
            let bridged = self.bridge(x, y).map(|(mut bytes, pen)| {
                sgr(pen, target, &mut bytes);
                bytes
            });
            match bridged {
                Some(bytes) if bytes.len() < moved.len() => self.out.extend_from_slice(&bytes),
                _ => self.out.extend_from_slice(&moved),
            }
        } else {
            sgr(self.pen, target, &mut self.out);
        }
        self.pen = target;
        let symbol = cell.symbol();
        self.out.extend_from_slice(symbol.as_bytes());
        self.cursor = (symbol.width() == 1 && x + 1 < self.next.area.right()).then_some((x + 1, y));
    }

    /// The bytes, the terminal left drawing plainly.
    fn finish(mut self) -> Vec<u8> {
        sgr(self.pen, PLAIN, &mut self.out);
        self.out
    }
}

/// Appends to `out` the bytes that change a terminal showing `shown` into showing `next` (both
/// of the same area), starting with the cursor anywhere and the terminal drawing plainly, and
/// leaving it drawing plainly.
pub(crate) fn write_changes(shown: &Buffer, next: &Buffer, out: &mut Vec<u8>) {
    let changed = changed_cells(shown, next);
    if changed.is_empty() {
        return;
    }
    // Reading order: neighbouring changed cells are written without a move.
    let mut in_order = Writer::new(next);
    for &(x, y, cell) in &changed {
        in_order.write(x, y, cell);
    }
    let in_order = in_order.finish();
    // By style, plain first: a column of cells that gain or lose a highlight costs one colour
    // code for the whole column rather than two a row. Only where no wide character is near,
    // whose writing out of reading order could cover a cell written before it.
    let mut pens: Vec<Pen> = Vec::new();
    for (_, _, cell) in &changed {
        if !pens.contains(&Pen::of(cell)) {
            pens.push(Pen::of(cell));
        }
    }
    pens.sort_by_key(|pen| *pen != PLAIN);
    let all_narrow = changed
        .iter()
        .all(|&(x, y, _)| narrow_at(shown, x, y) && narrow_at(next, x, y));
    if pens.len() > 1 && all_narrow {
        let mut by_style = Writer::new(next);
        for pen in &pens {
            for &(x, y, cell) in changed.iter().filter(|(_, _, cell)| Pen::of(cell) == *pen) {
                by_style.write(x, y, cell);
            }
        }
        let by_style = by_style.finish();
        if by_style.len() < in_order.len() {
            out.extend_from_slice(&by_style);
            return;
        }
    }
    out.extend_from_slice(&in_order);
}

/// The cells of `next` that differ from `shown`, in reading order: ratatui's diff, and the rest
/// of every wide character shown that a changed cell writes over part of. A terminal blanks the
/// rest of a wide character partly written over, with the style of what was written (a
/// highlight's background shows); ratatui sends those columns again only when the old
/// character's own style would show on blanks.
fn changed_cells<'a>(shown: &Buffer, next: &'a Buffer) -> Vec<(u16, u16, &'a Cell)> {
    let mut changed = shown.diff(next);
    let width = |cell: &Cell| cell.symbol().width();
    let (left, right) = (next.area.left(), next.area.right());
    // Most frames have no wide character near a change: nothing more to look at.
    let near_wide = |&(x, y, cell): &(u16, u16, &Cell)| {
        let last = (x + width(cell).max(1) as u16).min(right) - 1;
        (x.saturating_sub(3).max(left)..=last).any(|start| width(&shown[(start, y)]) > 1)
    };
    if !changed.iter().any(near_wide) {
        return changed;
    }
    let written: HashSet<(u16, u16)> = changed
        .iter()
        .flat_map(|&(x, y, cell)| {
            (x..(x + width(cell).max(1) as u16).min(right)).map(move |c| (c, y))
        })
        .collect();
    let mut broken = Vec::new();
    for &(column, y) in &written {
        // The wide character shown over `column`, if any: it starts at most 3 columns left.
        let start = (column.saturating_sub(3).max(left)..=column)
            .rev()
            .find(|&start| usize::from(column - start) < width(&shown[(start, y)]));
        let Some(start) = start else { continue };
        let end = (start + width(&shown[(start, y)]) as u16).min(right);
        if end - start < 2 {
            continue;
        }
        for c in start..end {
            let covered = c > left && c != start && width(&next[(c - 1, y)]) > 1;
            if !written.contains(&(c, y)) && !covered {
                broken.push((c, y, &next[(c, y)]));
            }
        }
    }
    if !broken.is_empty() {
        changed.extend(broken);
        changed.sort_by_key(|&(x, y, _)| (y, x));
        changed.dedup_by_key(|&mut (x, y, _)| (x, y));
    }
    changed
}

/// Whether the cell at `(x, y)` of `buffer` is one column wide and not covered by a wide
/// character to its left.
fn narrow_at(buffer: &Buffer, x: u16, y: u16) -> bool {
    let narrow = |x: u16| buffer[(x, y)].symbol().width() <= 1;
    narrow(x) && (x == buffer.area.left() || narrow(x - 1))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    use super::*;

    const WIDTH: u16 = 12;
    const HEIGHT: u16 = 4;

    /// A few styles like the tutor's: plain, bold, a highlight on a 24-bit background, the
    /// cursor's reverse video, a named colour.
    fn style(index: u8) -> Style {
        match index % 5 {
            0 => Style::new(),
            1 => Style::new().add_modifier(Modifier::BOLD),
            2 => Style::new()
                .fg(Color::Black)
                .bg(Color::Rgb(255, 214, 120))
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            3 => Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
            _ => Style::new()
                .fg(Color::LightGreen)
                .add_modifier(Modifier::ITALIC),
        }
    }

    /// A buffer from pieces of text laid one after another, each after a gap, onto the next row
    /// when the row is full: some are wide characters, none overlaps another, as in a frame
    /// ratatui draws.
    fn buffer(pieces: &[(u16, u8, u8)]) -> Buffer {
        let mut buffer = Buffer::empty(Rect::new(0, 0, WIDTH, HEIGHT));
        let words = ["a", "bc", "0.25", "字", "x字y", "─┼─", "  "];
        let (mut x, mut y) = (0, 0);
        for &(gap, word, look) in pieces {
            let word = words[usize::from(word) % words.len()];
            x += gap;
            if x + word.width() as u16 > WIDTH {
                (x, y) = (0, y + 1);
            }
            if y == HEIGHT {
                break;
            }
            buffer.set_string(x, y, word, style(look));
            x += word.width() as u16;
        }
        buffer
    }

    /// Each cell a terminal shows after `bytes`: text, colours, attributes.
    fn shown(bytes: &[u8]) -> Vec<String> {
        let mut terminal =
            vt100::Parser::new(HEIGHT.try_into().unwrap(), WIDTH.try_into().unwrap(), 0);
        terminal.process(bytes);
        let screen = terminal.screen();
        let mut cells = Vec::new();
        for row in 0..HEIGHT {
            for column in 0..WIDTH {
                let cell = screen.cell(row, column).unwrap();
                // What a person sees: a blank's foreground, boldness and slant do not show
                // (nor whether it was ever written).
                let blank = matches!(cell.contents(), "" | " ");
                cells.push(if blank {
                    format!(
                        "{row},{column}: blank {:?} {} {}",
                        cell.bgcolor(),
                        cell.underline(),
                        cell.inverse()
                    )
                } else {
                    format!(
                        "{row},{column}: {:?} {:?} {:?} {} {} {} {}",
                        cell.contents(),
                        cell.fgcolor(),
                        cell.bgcolor(),
                        cell.bold(),
                        cell.italic(),
                        cell.underline(),
                        cell.inverse()
                    )
                });
            }
        }
        cells
    }

    fn changes(shown: &Buffer, next: &Buffer) -> Vec<u8> {
        let mut bytes = Vec::new();
        write_changes(shown, next, &mut bytes);
        bytes
    }

    proptest! {
        #[test]
        fn the_changes_leave_the_terminal_as_a_full_repaint_would(
            before in prop::collection::vec((0..4u16, 0..7u8, 0..5u8), 0..24),
            after in prop::collection::vec((0..4u16, 0..7u8, 0..5u8), 0..24),
        ) {
            let blank = Buffer::empty(Rect::new(0, 0, WIDTH, HEIGHT));
            let (before, after) = (buffer(&before), buffer(&after));
            let mut sent = changes(&blank, &before);
            sent.extend(changes(&before, &after));
            prop_assert_eq!(shown(&sent), shown(&changes(&blank, &after)));
        }
    }

    #[test]
    fn a_highlight_moving_one_column_costs_one_colour_code_each_way() {
        // Two columns of numbers; the highlight moves from the first to the second.
        let mut before = Buffer::empty(Rect::new(0, 0, WIDTH, HEIGHT));
        let mut after = before.clone();
        for y in 0..HEIGHT {
            before.set_string(0, y, "0.25", style(2));
            before.set_string(5, y, "0.75", style(0));
            after.set_string(0, y, "0.25", style(0));
            after.set_string(5, y, "0.75", style(2));
        }
        let bytes = changes(&before, &after);
        let text = String::from_utf8_lossy(&bytes);
        assert_eq!(
            text.matches("48;2;255;214;120").count(),
            1,
            "the highlight's colour is sent once: {text:?}"
        );
    }

    #[test]
    fn only_the_attribute_that_changes_is_sent() {
        let mut out = Vec::new();
        let plain = Pen::of(&Cell::EMPTY);
        let mut bold = Cell::EMPTY;
        bold.modifier = Modifier::BOLD;
        let mut bold_underlined = bold.clone();
        bold_underlined.modifier |= Modifier::UNDERLINED;
        sgr(Pen::of(&bold), Pen::of(&bold_underlined), &mut out);
        assert_eq!(out, b"\x1b[4m");
        out.clear();
        sgr(Pen::of(&bold_underlined), plain, &mut out);
        assert_eq!(out, b"\x1b[0m", "a reset is shorter than 22;24");
        out.clear();
        let mut dim_bold = bold.clone();
        dim_bold.modifier |= Modifier::DIM;
        let mut dim = Cell::EMPTY;
        dim.modifier = Modifier::DIM;
        sgr(Pen::of(&dim_bold), Pen::of(&dim), &mut out);
        assert_eq!(out, b"\x1b[0;2m", "a reset and dim is shorter than 22;2");
    }

    #[test]
    fn the_cursor_takes_the_shortest_way() {
        let moved = |from, to| {
            let mut out = Vec::new();
            move_cursor(from, to, &mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(moved(None, (0, 0)), "\x1b[H");
        assert_eq!(moved(None, (4, 9)), "\x1b[10;5H");
        assert_eq!(moved(Some((2, 9)), (4, 9)), "\x1b[2C");
        assert_eq!(moved(Some((30, 9)), (25, 10)), "\n\x1b[5D");
        assert_eq!(moved(Some((30, 9)), (0, 10)), "\n\r");
        assert_eq!(moved(Some((31, 9)), (30, 12)), "\n\n\n\x08");
        assert_eq!(moved(Some((31, 9)), (30, 13)), "\x1b[4B\x08");
        assert_eq!(moved(Some((3, 30)), (100, 2)), "\x1b[3;101H");
        assert_eq!(moved(Some((9, 5)), (7, 4)), "\x1bM\x08\x08");
    }
}
