//! A drawn screen as an SVG picture, for slides and handouts: the same buffer the terminal gets,
//! each run of like cells one `<text>` (selectable, searchable: text, not outlines) over a
//! `<rect>` of its background, in the terminal's colors and with its bold, underline and reverse
//! video.

use std::fmt::Write;

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

/// One cell's width and height in the picture, in pixels: a monospace font of `FONT_SIZE` is
/// about 0.6 em wide, and each run's `textLength` holds it to its cells whatever font is used.
const CELL_WIDTH: u32 = 9;
const CELL_HEIGHT: u32 = 18;
const FONT_SIZE: u32 = 15;
/// The baseline, from the top of a row.
const BASELINE: u32 = 14;

/// The terminal's own colors where the screen leaves them to it: light text on a dark ground.
pub const DEFAULT_FOREGROUND: &str = "#d4d4d4";
pub const DEFAULT_BACKGROUND: &str = "#1e1e1e";

/// Generic monospace fonts, the first one the reader has.
const FONTS: &str =
    "ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, 'Liberation Mono', monospace";

/// The look of one cell, with reverse video resolved into its colors.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Look {
    foreground: String,
    background: Option<String>,
    bold: bool,
    underline: bool,
    crossed_out: bool,
    dim: bool,
    italic: bool,
}

impl Look {
    fn of(cell: &ratatui::buffer::Cell) -> Look {
        let modifier = cell.modifier;
        let mut foreground = color(cell.fg).unwrap_or_else(|| DEFAULT_FOREGROUND.to_string());
        let mut background = color(cell.bg);
        if modifier.contains(Modifier::REVERSED) {
            let ground = background.unwrap_or_else(|| DEFAULT_BACKGROUND.to_string());
            background = Some(foreground);
            foreground = ground;
        }
        Look {
            foreground,
            background,
            bold: modifier.contains(Modifier::BOLD),
            underline: modifier.contains(Modifier::UNDERLINED),
            crossed_out: modifier.contains(Modifier::CROSSED_OUT),
            dim: modifier.contains(Modifier::DIM),
            italic: modifier.contains(Modifier::ITALIC),
        }
    }
}

/// A color as CSS, `None` for the terminal's default.
fn color(color: Color) -> Option<String> {
    let (r, g, b) = match color {
        Color::Reset => return None,
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Indexed(index) => indexed(index),
        // xterm's defaults for the sixteen named colors.
        Color::Black => (0, 0, 0),
        Color::Red => (205, 0, 0),
        Color::Green => (0, 205, 0),
        Color::Yellow => (205, 205, 0),
        Color::Blue => (0, 0, 238),
        Color::Magenta => (205, 0, 205),
        Color::Cyan => (0, 205, 205),
        Color::Gray => (229, 229, 229),
        Color::DarkGray => (127, 127, 127),
        Color::LightRed => (255, 0, 0),
        Color::LightGreen => (0, 255, 0),
        Color::LightYellow => (255, 255, 0),
        Color::LightBlue => (92, 92, 255),
        Color::LightMagenta => (255, 0, 255),
        Color::LightCyan => (0, 255, 255),
        Color::White => (255, 255, 255),
    };
    Some(format!("#{r:02x}{g:02x}{b:02x}"))
}

/// xterm's 256-color palette: the sixteen named colors, a 6 × 6 × 6 cube, 24 grays.
fn indexed(index: u8) -> (u8, u8, u8) {
    const NAMED: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (205, 0, 0),
        (0, 205, 0),
        (205, 205, 0),
        (0, 0, 238),
        (205, 0, 205),
        (0, 205, 205),
        (229, 229, 229),
        (127, 127, 127),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (92, 92, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    match index {
        0..=15 => NAMED[usize::from(index)],
        16..=231 => {
            let cube = index - 16;
            let level = |step: u8| if step == 0 { 0 } else { 55 + step * 40 };
            (level(cube / 36), level(cube / 6 % 6), level(cube % 6))
        }
        _ => {
            let gray = 8 + (index - 232) * 10;
            (gray, gray, gray)
        }
    }
}

/// `&`, `<`, `>` and quotes written as XML entities; the screen's text has been made printable
/// already (no control characters reach a buffer).
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 refuses most control characters, even as entities, and U+FFFE, U+FFFF.
            ch if !is_xml_char(ch) => out.push('\u{fffd}'),
            ch => out.push(ch),
        }
    }
    out
}

/// Whether XML 1.0 allows `ch` in a document: tab, newline, carriage return, and the rest of
/// Unicode but the other control characters, the surrogates and U+FFFE, U+FFFF.
fn is_xml_char(ch: char) -> bool {
    matches!(ch, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
}

/// The picture of a buffer, `title` its `<title>` (what a screen reader says of it).
pub(crate) fn buffer_svg(buffer: &Buffer, title: &str) -> String {
    let area = buffer.area;
    let (width, height) = (
        u32::from(area.width) * CELL_WIDTH,
        u32::from(area.height) * CELL_HEIGHT,
    );
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"{FONTS}\" font-size=\"{FONT_SIZE}\">"
    );
    let _ = writeln!(svg, "<title>{}</title>", escaped(title));
    let _ = writeln!(
        svg,
        "<rect width=\"{width}\" height=\"{height}\" fill=\"{DEFAULT_BACKGROUND}\"/>"
    );
    for row in 0..area.height {
        let y = u32::from(row) * CELL_HEIGHT;
        let mut col = 0;
        while col < area.width {
            let look = Look::of(&buffer[(area.x + col, area.y + row)]);
            // A run of cells that look the same: one rectangle, one text.
            let start = col;
            let mut text = String::new();
            while col < area.width {
                let cell = &buffer[(area.x + col, area.y + row)];
                if Look::of(cell) != look {
                    break;
                }
                text.push_str(cell.symbol());
                // A wide character takes its cell and the next, whatever that one holds.
                col +=
                    u16::try_from(crate::lesson::text::columns(cell.symbol()).max(1)).unwrap_or(1);
            }
            let col_end = col.min(area.width);
            col = col_end;
            let cells = u32::from(col - start);
            let x = u32::from(start) * CELL_WIDTH;
            if let Some(background) = &look.background {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{CELL_HEIGHT}\" \
                     fill=\"{background}\"/>",
                    cells * CELL_WIDTH
                );
            }
            if text.trim().is_empty() && !look.underline && !look.crossed_out {
                continue;
            }
            let mut attributes = format!("fill=\"{}\"", look.foreground);
            if look.bold {
                attributes.push_str(" font-weight=\"bold\"");
            }
            if look.italic {
                attributes.push_str(" font-style=\"italic\"");
            }
            match (look.underline, look.crossed_out) {
                (true, true) => attributes.push_str(" text-decoration=\"underline line-through\""),
                (true, false) => attributes.push_str(" text-decoration=\"underline\""),
                (false, true) => attributes.push_str(" text-decoration=\"line-through\""),
                (false, false) => {}
            }
            if look.dim {
                attributes.push_str(" opacity=\"0.6\"");
            }
            let _ = writeln!(
                svg,
                "<text x=\"{x}\" y=\"{}\" textLength=\"{}\" lengthAdjust=\"spacingAndGlyphs\" \
                 xml:space=\"preserve\" {attributes}>{}</text>",
                y + BASELINE,
                cells * CELL_WIDTH,
                escaped(&text)
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_color_cube_and_the_grays_are_xterms() {
        assert_eq!(indexed(16), (0, 0, 0));
        assert_eq!(indexed(196), (255, 0, 0));
        assert_eq!(indexed(231), (255, 255, 255));
        assert_eq!(indexed(232), (8, 8, 8));
        assert_eq!(indexed(255), (238, 238, 238));
    }

    #[test]
    fn markup_in_the_text_is_escaped() {
        assert_eq!(escaped("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
