//! A matrix panel: caption, token or dimension headers, the numbers, and the cursor, operand,
//! changed and heatmap styles. Too big a matrix shows the page of rows and columns around the
//! cell that matters, and says where it is ("rows 9–16 of 64").

use std::collections::HashSet;
use std::ops::Range;

use nalgebra::DMatrix;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::app::{Tutor, rows_are_tokens};
use crate::attention::number::format_fixed;
use crate::attention::{Cell, MatrixName};
use crate::lesson::text::columns;

use super::text::{fit, pad_left, pad_right};
use super::theme::Theme;

/// A matrix's caption in this lesson: Q, K and V given by the lesson are not X·W.
pub fn caption(tutor: &Tutor, matrix: MatrixName) -> &'static str {
    match matrix {
        MatrixName::Q if tutor.attention.embeddings.is_none() => "Q (queries, given)",
        MatrixName::K if tutor.attention.embeddings.is_none() => "K (keys, given)",
        MatrixName::V if tutor.attention.embeddings.is_none() => "V (values, given)",
        _ => matrix.caption(),
    }
}

/// Rows of a panel above its numbers: the caption and the column headers.
const HEAD_ROWS: u16 = 2;

/// Where each row and column of a matrix is drawn inside its panel; shared by drawing and by
/// mouse clicks, so a click lands on the cell that is shown there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Geometry {
    pub matrix: MatrixName,
    pub area: Rect,
    pub label_width: u16,
    pub cell_width: u16,
    pub rows: Range<usize>,
    pub cols: Range<usize>,
    pub total_rows: usize,
    pub total_cols: usize,
    /// Decimals shown: as few as show every number of this matrix exactly, at most the lesson's.
    pub decimals: usize,
}

impl Geometry {
    /// Lays out `matrix` in `area`, showing the page of rows and columns that holds `anchor`.
    pub fn new(tutor: &Tutor, matrix: MatrixName, area: Rect, anchor: (usize, usize)) -> Geometry {
        let values = tutor.attention.matrix(matrix);
        let (total_rows, total_cols) = values.map_or((0, 0), |v| (v.nrows(), v.ncols()));
        let label_width = (0..total_rows)
            .map(|row| columns(&tutor.attention.row_label(matrix, row)))
            .max()
            .unwrap_or(1)
            .clamp(1, usize::from(area.width / 2).max(1)) as u16;
        let decimals = values.map_or(0, |values| display_decimals(values, tutor.lesson.decimals));
        let natural = values.map_or(1, |values| number_width(values, decimals));
        let header = (0..total_cols)
            .map(|col| columns(&tutor.attention.column_label(matrix, col)))
            .max()
            .unwrap_or(1);
        let room = area.width.saturating_sub(label_width + 1).max(1);
        let cell_width = (natural.max(header.min(natural + 2)) as u16).clamp(1, room);
        let visible_cols = usize::from((room + 1) / (cell_width + 1)).max(1);
        let visible_rows = usize::from(area.height.saturating_sub(HEAD_ROWS)).max(1);
        Geometry {
            matrix,
            area,
            label_width,
            cell_width,
            rows: page(anchor.0, visible_rows, total_rows),
            cols: page(anchor.1, visible_cols, total_cols),
            total_rows,
            total_cols,
            decimals,
        }
    }

    /// The width the panel would like, with every column shown.
    pub fn natural_width(tutor: &Tutor, matrix: MatrixName) -> u16 {
        let geometry = Geometry::new(tutor, matrix, Rect::new(0, 0, u16::MAX / 4, 100), (0, 0));
        let needed = geometry.label_width as usize
            + geometry.total_cols * (geometry.cell_width as usize + 1);
        let caption = columns(caption(tutor, matrix)) + 2;
        needed.max(caption).min(usize::from(u16::MAX / 8)) as u16
    }

    fn cell_x(&self, col: usize) -> u16 {
        let index = (col - self.cols.start) as u16;
        self.area.x + self.label_width + 1 + index * (self.cell_width + 1)
    }

    fn row_y(&self, row: usize) -> u16 {
        self.area.y + HEAD_ROWS + (row - self.rows.start) as u16
    }

    /// The cell at a screen position: `Some((row, None))` is a row's label.
    pub fn hit(&self, x: u16, y: u16) -> Option<(usize, Option<usize>)> {
        if y < self.area.y + HEAD_ROWS || x < self.area.x || x >= self.area.right() {
            return None;
        }
        let row = self.rows.start + usize::from(y - self.area.y - HEAD_ROWS);
        if !self.rows.contains(&row) {
            return None;
        }
        if x < self.area.x + self.label_width {
            return rows_are_tokens(self.matrix).then_some((row, None));
        }
        let offset = x.checked_sub(self.area.x + self.label_width + 1)?;
        let col = self.cols.start + usize::from(offset / (self.cell_width + 1));
        self.cols.contains(&col).then_some((row, Some(col)))
    }

    /// Where the window is, when the matrix does not fit: "rows 9–16 of 64".
    fn position(&self) -> String {
        let part = |what: &str, range: &Range<usize>, total: usize| {
            (range.len() < total)
                .then(|| format!("{what} {}–{} of {total}", range.start + 1, range.end))
        };
        [
            part("rows", &self.rows, self.total_rows),
            part("cols", &self.cols, self.total_cols),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
    }
}

/// The page of `visible` indices out of `total` that holds `anchor`; the last page is kept full.
fn page(anchor: usize, visible: usize, total: usize) -> Range<usize> {
    if total <= visible {
        return 0..total;
    }
    let start = ((anchor.min(total - 1) / visible) * visible).min(total - visible);
    start..start + visible
}

/// Matrices larger than this show the lesson's decimals without looking for fewer.
const DECIMALS_SCAN_LIMIT: usize = 1 << 16;

/// The fewest decimals (up to the lesson's) that show every number of the matrix as it is:
/// embeddings of 0 and 1 read "1", not "1.000", and take a third of the room.
fn display_decimals(values: &DMatrix<f64>, lesson_decimals: usize) -> usize {
    if values.len() > DECIMALS_SCAN_LIMIT {
        return lesson_decimals;
    }
    let needed = |value: f64| {
        (0..lesson_decimals)
            .find(|decimals| {
                let scale = 10f64.powi(*decimals as i32);
                ((value * scale).round() / scale - value).abs() <= 1e-9 * value.abs().max(1.0)
            })
            .unwrap_or(lesson_decimals)
    };
    let mut most = 0;
    for value in values.iter().filter(|value| value.is_finite()) {
        most = most.max(needed(*value));
        // Random numbers need every decimal at the first cell: no need to look further.
        if most == lesson_decimals {
            break;
        }
    }
    most
}

/// Columns needed for the widest number of a matrix, found from its extremes so that even a
/// 1024 × 1024 matrix costs one pass and no formatting per cell.
fn number_width(values: &DMatrix<f64>, decimals: usize) -> usize {
    let mut largest: f64 = 0.0;
    let mut negative = false;
    let mut minus_infinity = false;
    for value in values.iter() {
        if value.is_finite() {
            largest = largest.max(value.abs());
            negative |= *value < 0.0;
        } else {
            minus_infinity = true;
        }
    }
    let width = format_fixed(largest, decimals).len() + usize::from(negative);
    if minus_infinity { width.max(4) } else { width }
}

/// What a panel needs to know beyond the matrix itself.
pub struct MatrixPanel<'a> {
    pub tutor: &'a Tutor,
    pub geometry: &'a Geometry,
    pub theme: &'a Theme,
    pub focused: bool,
    /// Cells the selected cell is computed from.
    pub operands: &'a HashSet<Cell>,
    /// Color the numbers as an attention heatmap.
    pub heatmap: bool,
}

impl Widget for MatrixPanel<'_> {
    fn render(self, _area: Rect, buf: &mut Buffer) {
        let geometry = self.geometry;
        let area = geometry.area;
        let matrix = geometry.matrix;
        let Some(values) = self.tutor.attention.matrix(matrix) else {
            return;
        };
        let theme = self.theme;
        let attention = &self.tutor.attention;
        let cursor = self.tutor.cursor(matrix);

        // Caption, with where the window is when the matrix does not fit.
        let marker = if self.focused { "▸ " } else { "  " };
        let room = usize::from(area.width).saturating_sub(2);
        // The caption comes first, cut if need be down to the matrix's symbol; where the
        // window is follows it whenever it is cut.
        let mut position = geometry.position();
        if !position.is_empty() {
            position = format!(" {position}");
        }
        let caption = caption(self.tutor, matrix);
        if columns(caption) + columns(&position) > room {
            position = position.replace("rows ", "").replace("cols ", "");
        }
        if columns(matrix.symbol()) + 2 + columns(&position) > room {
            position.clear();
        }
        let caption_room = room.saturating_sub(columns(&position));
        let caption_style = if self.focused {
            theme.focused_title()
        } else {
            theme.title()
        };
        Line::from(vec![
            Span::raw(marker),
            Span::styled(fit(caption, caption_room), caption_style),
            Span::styled(position, theme.muted()),
        ])
        .render(Rect::new(area.x, area.y, area.width, 1), buf);

        // Column headers.
        let width = usize::from(geometry.cell_width);
        for col in geometry.cols.clone() {
            let label = pad_left(&attention.column_label(matrix, col), width);
            let style = if self.focused && col == cursor.col && !cursor.on_label {
                theme.title()
            } else {
                theme.muted()
            };
            buf.set_stringn(geometry.cell_x(col), area.y + 1, label, width, style);
        }

        for row in geometry.rows.clone() {
            let y = geometry.row_y(row);
            let label = pad_right(
                &attention.row_label(matrix, row),
                usize::from(geometry.label_width),
            );
            let label_style = if self.focused && cursor.on_label && cursor.row == row {
                theme.cursor()
            } else if self.tutor.changed_label == Some(row) && rows_are_tokens(matrix) {
                theme.changed()
            } else if self.focused && cursor.row == row {
                theme.title()
            } else {
                Style::new()
            };
            buf.set_stringn(
                area.x,
                y,
                label,
                usize::from(geometry.label_width),
                label_style,
            );
            for col in geometry.cols.clone() {
                let value = values[(row, col)];
                let cell = Cell::new(matrix, row, col);
                // A cell the learner is predicting shows nothing of its value, not even color.
                let hidden = self.tutor.is_hidden(cell);
                let style =
                    if self.focused && !cursor.on_label && cursor.row == row && cursor.col == col {
                        theme.cursor()
                    } else if self.operands.contains(&cell) {
                        theme.operand()
                    } else if self.tutor.changed.contains(&cell) {
                        theme.changed()
                    } else if self.heatmap && !hidden {
                        theme.heat(value)
                    } else {
                        Style::new()
                    };
                let text = if hidden {
                    "?".to_string()
                } else {
                    format_fixed(value, geometry.decimals)
                };
                let shown = if columns(&text) > width {
                    "…".to_string()
                } else {
                    text
                };
                buf.set_stringn(
                    geometry.cell_x(col),
                    y,
                    format!("{shown:>width$}"),
                    width,
                    style,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::page;

    #[test]
    fn numbers_show_as_few_decimals_as_they_need() {
        use super::display_decimals;
        let whole = nalgebra::DMatrix::from_row_slice(1, 2, &[1.0, -2.0]);
        let tenths = nalgebra::DMatrix::from_row_slice(1, 2, &[0.2, 1.0]);
        let long = nalgebra::DMatrix::from_row_slice(1, 1, &[0.123_456_7]);
        assert_eq!(display_decimals(&whole, 3), 0);
        assert_eq!(display_decimals(&tenths, 3), 1);
        assert_eq!(display_decimals(&long, 4), 4);
    }

    #[test]
    fn pages_hold_the_anchor_and_the_last_page_is_full() {
        assert_eq!(page(0, 8, 64), 0..8);
        assert_eq!(page(9, 8, 64), 8..16);
        assert_eq!(page(63, 10, 64), 54..64);
        assert_eq!(page(2, 8, 3), 0..3);
    }
}
