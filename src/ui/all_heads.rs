//! The All heads screen: every head's weights as a small heatmap side by side, so the learner
//! sees that heads attend differently. Numbers where they fit, shading otherwise; more heads
//! than fit go on pages, and the screen says which page it shows.

use std::ops::Range;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::app::Tutor;
use crate::attention::MatrixName;
use crate::attention::number::format_fixed;
use crate::lesson::text::columns;

use super::text::{fit, pad_left, pad_right};
use super::theme::Theme;

/// Columns between two maps.
const GAP: u16 = 2;
/// Columns of a number cell ("0.24") and of a shaded cell.
const NUMBER_CELL: u16 = 4;
const SHADE_CELL: u16 = 2;
/// The widest row label a map gives its tokens.
const MOST_LABEL: usize = 6;
/// Maps side by side that a page of keys is cut to make room for.
const MOST_ACROSS: usize = 4;
/// Lines under the maps: which heads are shown, the legend, the picked head's row.
const FOOT_LINES: u16 = 3;

/// How the maps are laid out at a size: measured once, used by the layout and by drawing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grid {
    /// Columns of one cell; numbers are shown when they fit in it.
    pub cell: u16,
    pub numbers: bool,
    pub label: u16,
    /// Maps side by side, and rows of maps.
    pub across: usize,
    pub down: usize,
    /// The heads on this page (the page that holds the picked head).
    pub heads: Range<usize>,
    /// The tokens each map shows: all of them, or the page around the cursor's query and key.
    pub rows: Range<usize>,
    pub cols: Range<usize>,
}

impl Grid {
    /// The grid for `width` columns and at most `height` rows of maps and their foot.
    pub(crate) fn new(tutor: &Tutor, width: u16, height: u16) -> Grid {
        // A row per query and a column per key: the source's tokens in cross-attention.
        let tokens = tutor.lesson.seq_len().max(1);
        let keys = tutor.lesson.key_len().max(1);
        let count = tutor.heads().query.max(1);
        let label = (0..tokens)
            .map(|token| columns(&tutor.attention.row_label(MatrixName::Weights, token)))
            .max()
            .unwrap_or(1)
            .clamp(1, MOST_LABEL) as u16;
        // A map's width with `shown` tokens of `cell` columns (a space before each number; the
        // shading runs on without one, as a heatmap does).
        let map_width = |cell: u16, shown: usize, numbers: bool| {
            label + 1 + shown as u16 * cell + (shown as u16 - 1) * u16::from(numbers)
        };
        let fits = |cell: u16, numbers: bool| {
            let one = map_width(cell, keys, numbers);
            usize::from((width + GAP) / (one + GAP))
        };
        let with_numbers = fits(NUMBER_CELL, true);
        let shaded = fits(SHADE_CELL, false);
        // Query rows beyond the height: the page around the cursor; then how many rows of
        // maps the height holds.
        let cursor = tutor.cursor(MatrixName::Weights);
        let map_height = (height.saturating_sub(FOOT_LINES)).max(3);
        let rows_room = usize::from(map_height.saturating_sub(2)).max(1);
        let rows = page(cursor.row, rows_room, tokens);
        let one_height = rows.len() as u16 + 2;
        let rows_fit = usize::from((map_height + 1) / (one_height + 1)).max(1);
        // Numbers when they show as many heads on a page as shading would (all, or a page).
        let numbers =
            with_numbers > 0 && with_numbers * rows_fit >= count.min(shaded.max(1) * rows_fit);
        let cell = if numbers { NUMBER_CELL } else { SHADE_CELL };
        // Too many keys for even a few shaded maps across (64 tokens): each map shows a page
        // of the keys, so that heads can still be compared side by side.
        let wanted = count.min(MOST_ACROSS);
        let (across, room) = if numbers || shaded >= wanted {
            let room = usize::from(width.saturating_sub(label + 1))
                / usize::from(cell + u16::from(numbers));
            (if numbers { with_numbers } else { shaded }, room)
        } else {
            let share = (width + GAP) / wanted as u16;
            let room = usize::from(share.saturating_sub(GAP + label + 1) / SHADE_CELL);
            (wanted, room.max(MOST_ACROSS))
        };
        let across = across.clamp(1, count);
        let cols = page(cursor.col, room.max(1), keys);
        let down = rows_fit.clamp(1, count.div_ceil(across));
        let per_page = across * down;
        let start = (tutor.head / per_page) * per_page;
        Grid {
            cell,
            numbers,
            label,
            across,
            down,
            heads: start..(start + per_page).min(count),
            rows,
            cols,
        }
    }

    /// Rows the maps and their foot take.
    pub(crate) fn height(&self) -> u16 {
        let rows_of_maps = self.heads.len().div_ceil(self.across).max(1) as u16;
        rows_of_maps * (self.rows.len() as u16 + 2) + (rows_of_maps - 1) + FOOT_LINES
    }

    fn map_width(&self) -> u16 {
        let shown = self.cols.len() as u16;
        self.label + 1 + shown * self.cell + shown.saturating_sub(1) * u16::from(self.numbers)
    }

    /// Whether the maps head their columns with the keys' numbers: some label is wider than a
    /// cell.
    fn numbered_keys(&self, tutor: &Tutor) -> bool {
        self.cols.clone().any(|key| {
            columns(&tutor.attention.column_label(MatrixName::Weights, key))
                > usize::from(self.cell)
        })
    }

    /// Where key `index` of the page starts, from the map's left edge.
    fn cell_x(&self, index: usize) -> u16 {
        self.label + 1 + index as u16 * (self.cell + u16::from(self.numbers))
    }
}

/// The page of `visible` indices out of `total` that holds `anchor`.
fn page(anchor: usize, visible: usize, total: usize) -> Range<usize> {
    if total <= visible {
        return 0..total;
    }
    let start = ((anchor.min(total - 1) / visible) * visible).min(total - visible);
    start..start + visible
}

/// The rows the screen wants for its maps in an area this wide, at most `height`.
pub(crate) fn height(tutor: &Tutor, width: u16, height: u16) -> u16 {
    Grid::new(tutor, width, height).height().min(height)
}

pub(crate) fn render(tutor: &Tutor, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let grid = Grid::new(tutor, area.width, area.height);
    let map_width = grid.map_width();
    let map_height = grid.rows.len() as u16 + 2;
    for (index, head) in grid.heads.clone().enumerate() {
        let (across, down) = (index % grid.across, index / grid.across);
        let x = area.x + across as u16 * (map_width + GAP);
        let y = area.y + down as u16 * (map_height + 1);
        if y + map_height > area.bottom() {
            break;
        }
        map(
            tutor,
            theme,
            &grid,
            head,
            Rect::new(x, y, map_width, map_height),
            buf,
        );
    }
    let rows_of_maps = grid.heads.len().div_ceil(grid.across) as u16;
    let first = area.y + rows_of_maps * (map_height + 1) - 1;
    let width = usize::from(area.width.saturating_sub(1));
    let lines = foot(tutor, theme, &grid)
        .into_iter()
        .flat_map(|(text, style)| {
            wrap_at_dots(&text, width)
                .into_iter()
                .map(move |line| (line, style))
        });
    for (y, (text, style)) in (first..area.bottom()).zip(lines) {
        buf.set_stringn(area.x + 1, y, fit(&text, width), width, style);
    }
}

/// A line too wide for `width` broken where its parts meet (` · `), the parts after the first
/// line indented by two columns: a row of weights is read whole, key by key.
fn wrap_at_dots(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for part in text.split(" · ") {
        let joined = if current.is_empty() {
            part.to_string()
        } else {
            format!("{current} · {part}")
        };
        if columns(&joined) <= width || current.is_empty() {
            current = joined;
        } else {
            lines.push(current);
            current = format!("  {part}");
        }
    }
    lines.push(current);
    lines
}

/// One head's map: its title (the picked head marked), key labels, and a row per query.
fn map(tutor: &Tutor, theme: &Theme, grid: &Grid, head: usize, area: Rect, buf: &mut Buffer) {
    let attention = &tutor.attention;
    let picked = head == tutor.head;
    let heads = tutor.heads();
    let group = if heads.kv < heads.query {
        format!(" · kv {}", heads.group_of(head) + 1)
    } else {
        String::new()
    };
    let title = format!(
        "{}head {}{group}",
        if picked { "▸ " } else { "  " },
        head + 1
    );
    let style = if picked {
        theme.focused_title()
    } else {
        theme.title()
    };
    let width = usize::from(area.width);
    buf.set_stringn(area.x, area.y, fit(&title, width), width, style);
    let cell = usize::from(grid.cell);
    let label = usize::from(grid.label);
    for (index, key) in grid.cols.clone().enumerate() {
        let name = attention.column_label(MatrixName::Weights, key);
        let x = area.x + grid.cell_x(index);
        // Labels too wide for the cells: the keys' numbers, which the line under the maps
        // gives with each label (two columns would leave one letter and an ellipsis). Numbers
        // wider than a cell are written at the first key and every fifth, over the cells after.
        if grid.numbered_keys(tutor) {
            let number = (key + 1).to_string();
            let widest = columns(&grid.cols.end.to_string());
            if widest < cell {
                buf.set_stringn(x, area.y + 1, pad_left(&number, cell), cell, theme.muted());
            } else if index == 0 || (key + 1) % 5 == 0 {
                let room = usize::from(area.right().saturating_sub(x));
                buf.set_stringn(x, area.y + 1, &number, room, theme.muted());
            }
            continue;
        }
        let shown = pad_left(&name, cell);
        buf.set_stringn(x, area.y + 1, shown, cell, theme.muted());
    }
    let weights = attention.weights_of(head);
    let cursor = tutor.cursor(MatrixName::Weights);
    for (index, query) in grid.rows.clone().enumerate() {
        let y = area.y + 2 + index as u16;
        let name = attention.row_label(MatrixName::Weights, query);
        let row_style = if picked && query == cursor.row {
            theme.title()
        } else {
            Style::new()
        };
        buf.set_stringn(
            area.x,
            y,
            pad_right(&fit(&name, label), label),
            label,
            row_style,
        );
        for (column, key) in grid.cols.clone().enumerate() {
            let Some(weight) = weights.get((query, key)).copied() else {
                continue;
            };
            let x = area.x + grid.cell_x(column);
            // The class is asked for this weight: no number, no shade.
            if tutor.is_polled(tutor.cell_of_head(MatrixName::Weights, head, query, key)) {
                buf.set_stringn(x, y, pad_left("?", cell), cell, Style::new());
                continue;
            }
            let text = if grid.numbers {
                pad_left(&format_fixed(weight, 2), cell)
            } else {
                theme.shade(weight).to_string().repeat(cell)
            };
            buf.set_stringn(x, y, text, cell, theme.heat(weight));
        }
    }
}

/// The lines under the maps: the page of heads, how to read the shading, the picked head's
/// row of weights with its numbers.
fn foot(tutor: &Tutor, theme: &Theme, grid: &Grid) -> Vec<(String, Style)> {
    let count = tutor.heads().query;
    let mut lines = Vec::new();
    let shown = if grid.heads.len() < count {
        let more = if grid.heads.end < count {
            " · > for more"
        } else {
            " · < goes back"
        };
        format!(
            "heads {}–{} of {count}{more}",
            grid.heads.start + 1,
            grid.heads.end
        )
    } else {
        format!("all {count} heads")
    };
    let (tokens, keys) = (tutor.lesson.seq_len(), tutor.lesson.key_len());
    let window = if grid.rows.len() < tokens || grid.cols.len() < keys {
        // The two counts differ only in cross-attention.
        let of = if tokens == keys {
            format!("of {tokens}")
        } else {
            format!("of {tokens} and {keys}")
        };
        format!(
            " · queries {}–{}, keys {}–{} {of} (↑↓ move the query)",
            grid.rows.start + 1,
            grid.rows.end,
            grid.cols.start + 1,
            grid.cols.end
        )
    } else {
        String::new()
    };
    let legend = if grid.numbers {
        String::new()
    } else if theme.is_monochrome() {
        " · shading: blank <0.2 ░ <0.4 ▒ <0.6 ▓ <0.8 █ ≥0.8".to_string()
    } else {
        " · brighter = more weight".to_string()
    };
    lines.push((format!("{shown}{window}{legend}"), theme.muted()));
    let attention = &tutor.attention;
    let row = tutor.cursor(MatrixName::Weights).row;
    let weights = attention.weights_of(tutor.head);
    let numbers: Vec<String> = grid
        .cols
        .clone()
        .filter_map(|key| {
            let label = attention.column_label(MatrixName::Weights, key);
            // Keys shown by number above the maps are told by number here too.
            let numbered = if grid.numbered_keys(tutor) {
                format!("{}:{label}", key + 1)
            } else {
                label
            };
            let polled =
                tutor.is_polled(tutor.cell_of_head(MatrixName::Weights, tutor.head, row, key));
            let weight = weights.get((row, key))?;
            Some(if polled {
                format!("{numbered} ?")
            } else {
                format!("{numbered} {}", format_fixed(*weight, 2))
            })
        })
        .collect();
    lines.push((
        format!(
            "{}[{}, :] = {}",
            attention.symbol_in(MatrixName::Weights, tutor.head),
            attention.row_label(MatrixName::Weights, row),
            numbers.join(" · ")
        ),
        Style::new(),
    ));
    lines.push((
        "< > (or ← →) pick a head · ↑↓ a query row · Enter opens the head's Softmax step"
            .to_string(),
        theme.muted(),
    ));
    lines
}
