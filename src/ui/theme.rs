//! Colors and emphasis: the one place that decides how things look, in color or in monochrome.
//!
//! Highlights put dark text on a light background chosen here, so they read the same on dark and
//! light terminals. Colors are picked in 24-bit and brought down to what the terminal can show.

use ratatui::style::{Color, Modifier, Style};

/// What the terminal can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colors {
    /// NO_COLOR or --no-color: emphasis by reverse, bold and underline only.
    Monochrome,
    Basic16,
    Indexed256,
    TrueColor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub colors: Colors,
}

/// Viridis, sampled at nine points: perceptually even and readable with every common form of
/// color blindness, from dark purple (weight 0) to yellow (weight 1).
const VIRIDIS: [(u8, u8, u8); 9] = [
    (68, 1, 84),
    (71, 44, 122),
    (59, 81, 139),
    (44, 113, 142),
    (33, 144, 141),
    (39, 173, 129),
    (92, 200, 99),
    (170, 220, 50),
    (253, 231, 37),
];

/// The operand highlight: a light amber, dark text on it.
const OPERAND: (u8, u8, u8) = (255, 214, 120);
/// The lit part of the formula: a light sky blue.
const LIT: (u8, u8, u8) = (150, 200, 255);
/// Changed numbers: vermilion, readable on black and on white.
const CHANGED: (u8, u8, u8) = (213, 94, 0);
const ERROR: (u8, u8, u8) = (220, 50, 47);
const MUTED: (u8, u8, u8) = (128, 128, 128);

impl Theme {
    pub fn monochrome() -> Theme {
        Theme {
            colors: Colors::Monochrome,
        }
    }

    /// Picks the colors from the environment: `no_color` (the flag or NO_COLOR), then
    /// COLORTERM and TERM as terminals set them.
    pub fn detect(no_color: bool, colorterm: Option<&str>, term: Option<&str>) -> Theme {
        let colors = if no_color || term == Some("dumb") {
            Colors::Monochrome
        } else if matches!(colorterm, Some("truecolor" | "24bit")) {
            Colors::TrueColor
        } else if term.is_some_and(|term| term.contains("256color")) {
            Colors::Indexed256
        } else {
            Colors::Basic16
        };
        Theme { colors }
    }

    /// Detects from this process's environment.
    pub(crate) fn from_env(no_color_flag: bool) -> Theme {
        let no_color =
            no_color_flag || std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
        let colorterm = std::env::var("COLORTERM").ok();
        let term = std::env::var("TERM").ok();
        Theme::detect(no_color, colorterm.as_deref(), term.as_deref())
    }

    pub(crate) fn is_monochrome(&self) -> bool {
        self.colors == Colors::Monochrome
    }

    /// A 24-bit color as this terminal can show it.
    pub(crate) fn rgb(&self, (r, g, b): (u8, u8, u8)) -> Color {
        match self.colors {
            Colors::TrueColor => Color::Rgb(r, g, b),
            Colors::Indexed256 => Color::Indexed(to_256(r, g, b)),
            Colors::Basic16 => to_16(r, g, b),
            Colors::Monochrome => Color::Reset,
        }
    }

    fn highlight(&self, background: (u8, u8, u8), monochrome: Modifier) -> Style {
        if self.is_monochrome() {
            Style::new().add_modifier(monochrome)
        } else {
            Style::new().bg(self.rgb(background)).fg(Color::Black)
        }
    }

    pub(crate) fn title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    /// The focused matrix's caption.
    pub(crate) fn focused_title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    }

    /// The current step's part of the header's formula. Without color it is bold alone: reverse
    /// video is the cursor's and underline the operands', and the formula must not read as
    /// either.
    pub(crate) fn lit(&self) -> Style {
        self.highlight(LIT, Modifier::BOLD)
            .add_modifier(Modifier::BOLD)
    }

    /// Secondary text: hints, scroll positions.
    pub(crate) fn muted(&self) -> Style {
        if self.is_monochrome() {
            Style::new()
        } else {
            Style::new().fg(self.rgb(MUTED))
        }
    }

    /// The cell cursor: reverse video in every mode, so it is never lost.
    pub(crate) fn cursor(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
    }

    /// The cells the selected cell is computed from.
    pub(crate) fn operand(&self) -> Style {
        self.highlight(OPERAND, Modifier::UNDERLINED | Modifier::BOLD)
    }

    /// The bar beside each number of a column of operands (see `matrix::COLUMN_BAR`): the
    /// operand amber, or bold where there is no color.
    pub(crate) fn operand_bar(&self) -> Style {
        if self.is_monochrome() {
            Style::new().add_modifier(Modifier::BOLD)
        } else {
            Style::new().fg(self.rgb(OPERAND))
        }
    }

    /// Numbers that changed with the last edit.
    pub(crate) fn changed(&self) -> Style {
        let style = Style::new().add_modifier(Modifier::BOLD | Modifier::ITALIC);
        if self.is_monochrome() {
            style
        } else {
            style.fg(self.rgb(CHANGED))
        }
    }

    pub(crate) fn error(&self) -> Style {
        let style = Style::new().add_modifier(Modifier::BOLD);
        if self.is_monochrome() {
            style
        } else {
            style.fg(self.rgb(ERROR))
        }
    }

    /// A cell of the attention heatmap: its weight as a viridis color, the number still legible.
    pub fn heat(&self, weight: f64) -> Style {
        if self.is_monochrome() || !weight.is_finite() {
            return Style::new();
        }
        if self.colors == Colors::Basic16 {
            return heat_16(weight);
        }
        let (r, g, b) = viridis(weight.clamp(0.0, 1.0));
        // Dark text on the light (yellow-green) end, light text on the dark (purple) end.
        let luminance = 0.2126 * f64::from(r) + 0.7152 * f64::from(g) + 0.0722 * f64::from(b);
        let text = if luminance > 120.0 {
            Color::Black
        } else {
            Color::White
        };
        Style::new().bg(self.rgb((r, g, b))).fg(text)
    }

    /// A weight as a shade of a small heatmap too narrow for its number: in color the cell's
    /// background (`heat`) tells it and the glyph is blank; without color, a block glyph as
    /// dark as the weight is large, in fifths.
    pub(crate) fn shade(&self, weight: f64) -> char {
        if !self.is_monochrome() {
            return ' ';
        }
        match weight {
            w if !w.is_finite() || w < 0.2 => ' ',
            w if w < 0.4 => '░',
            w if w < 0.6 => '▒',
            w if w < 0.8 => '▓',
            _ => '█',
        }
    }

    /// The bars of the softmax chart.
    pub(crate) fn bar(&self) -> Style {
        if self.is_monochrome() {
            Style::new()
        } else {
            Style::new().fg(self.rgb(VIRIDIS[4]))
        }
    }
}

/// Viridis in the 16 basic colors, a shade per band of weight. The nearest basic color of each
/// viridis shade would make every weight from 0.05 to 0.3 the same grey, and attention weights
/// mostly lie there: the bands are narrow at the low end so that those differ.
const HEAT_16: [(f64, Color, Color); 7] = [
    (0.1, Color::Magenta, Color::White),
    (0.2, Color::Blue, Color::White),
    (0.3, Color::Cyan, Color::Black),
    (0.45, Color::Green, Color::Black),
    (0.6, Color::LightGreen, Color::Black),
    (0.8, Color::Yellow, Color::Black),
    (f64::INFINITY, Color::LightYellow, Color::Black),
];

fn heat_16(weight: f64) -> Style {
    let (_, background, text) = HEAT_16
        .iter()
        .find(|(below, _, _)| weight < *below)
        .copied()
        .unwrap_or(HEAT_16[HEAT_16.len() - 1]);
    Style::new().bg(background).fg(text)
}

fn viridis(t: f64) -> (u8, u8, u8) {
    let position = t * (VIRIDIS.len() - 1) as f64;
    let low = (position.floor() as usize).min(VIRIDIS.len() - 2);
    let fraction = position - low as f64;
    let mix =
        |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * fraction).round() as u8;
    let (a, b) = (VIRIDIS[low], VIRIDIS[low + 1]);
    (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The nearest color of the xterm 256-color cube or grey ramp.
fn to_256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let nearest_level = |value: u8| {
        (0..6)
            .min_by_key(|index| (i32::from(LEVELS[*index]) - i32::from(value)).abs())
            .unwrap_or(0) as u8
    };
    let (ri, gi, bi) = (nearest_level(r), nearest_level(g), nearest_level(b));
    let cube = (
        LEVELS[ri as usize],
        LEVELS[gi as usize],
        LEVELS[bi as usize],
    );
    let grey_index = ((i32::from(r) + i32::from(g) + i32::from(b)) / 3 - 8).clamp(0, 230) / 10;
    let grey_value = (8 + grey_index * 10) as u8;
    let distance = |(x, y, z): (u8, u8, u8)| {
        let d = |p: u8, q: u8| (i32::from(p) - i32::from(q)).pow(2);
        d(x, r) + d(y, g) + d(z, b)
    };
    if distance((grey_value, grey_value, grey_value)) < distance(cube) {
        232 + grey_index as u8
    } else {
        16 + 36 * ri + 6 * gi + bi
    }
}

/// The nearest of the 16 basic colors, by their usual xterm values.
fn to_16(r: u8, g: u8, b: u8) -> Color {
    const BASIC: [(Color, (u8, u8, u8)); 16] = [
        (Color::Black, (0, 0, 0)),
        (Color::Red, (205, 0, 0)),
        (Color::Green, (0, 205, 0)),
        (Color::Yellow, (205, 205, 0)),
        (Color::Blue, (0, 0, 238)),
        (Color::Magenta, (205, 0, 205)),
        (Color::Cyan, (0, 205, 205)),
        (Color::Gray, (229, 229, 229)),
        (Color::DarkGray, (127, 127, 127)),
        (Color::LightRed, (255, 0, 0)),
        (Color::LightGreen, (0, 255, 0)),
        (Color::LightYellow, (255, 255, 0)),
        (Color::LightBlue, (92, 92, 255)),
        (Color::LightMagenta, (255, 0, 255)),
        (Color::LightCyan, (0, 255, 255)),
        (Color::White, (255, 255, 255)),
    ];
    let distance = |(x, y, z): (u8, u8, u8)| {
        let d = |p: u8, q: u8| (i32::from(p) - i32::from(q)).pow(2);
        d(x, r) + d(y, g) + d(z, b)
    };
    BASIC
        .iter()
        .min_by_key(|(_, rgb)| distance(*rgb))
        .map_or(Color::Reset, |(color, _)| *color)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_wins_over_a_truecolor_terminal() {
        let theme = Theme::detect(true, Some("truecolor"), Some("xterm-256color"));
        assert_eq!(theme.colors, Colors::Monochrome);
    }

    #[test]
    fn colors_follow_what_the_terminal_says_it_can_show() {
        assert_eq!(
            Theme::detect(false, Some("truecolor"), Some("xterm")).colors,
            Colors::TrueColor
        );
        assert_eq!(
            Theme::detect(false, None, Some("screen-256color")).colors,
            Colors::Indexed256
        );
        assert_eq!(
            Theme::detect(false, None, Some("xterm")).colors,
            Colors::Basic16
        );
        assert_eq!(
            Theme::detect(false, None, Some("dumb")).colors,
            Colors::Monochrome
        );
    }

    #[test]
    fn colors_come_down_to_the_nearest_the_terminal_has() {
        assert_eq!(to_256(255, 255, 255), 231);
        assert_eq!(to_256(0, 0, 0), 16);
        assert_eq!(to_256(128, 128, 128), 244);
        assert_eq!(to_16(253, 231, 37), Color::LightYellow);
        assert_eq!(to_16(68, 1, 84), Color::Black);
    }

    #[test]
    fn heatmap_runs_from_dark_purple_to_yellow_with_legible_text() {
        let theme = Theme::detect(false, Some("truecolor"), None);
        assert_eq!(
            theme.heat(0.0),
            Style::new().bg(Color::Rgb(68, 1, 84)).fg(Color::White)
        );
        assert_eq!(
            theme.heat(1.0),
            Style::new().bg(Color::Rgb(253, 231, 37)).fg(Color::Black)
        );
    }
}
