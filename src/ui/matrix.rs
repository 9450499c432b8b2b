//! A matrix panel: caption, token or dimension headers, the numbers, and the cursor, operand,
//! changed and heatmap styles. Too big a matrix shows the page of rows and columns around the
//! cell that matters, and says where it is ("rows 9–16 of 64").

use std::collections::HashSet;
use std::ops::Range;

use nalgebra::{Dyn, Matrix, RawStorage};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::app::{Tokens, Tutor, rows_are_tokens};
use crate::attention::number::format_fixed;
use crate::attention::{Cell, MatrixName};
use crate::lesson::text::columns;

use super::text::{fit, pad_left, pad_right};
use super::theme::Theme;

/// A matrix's caption in this lesson, as its plan says how the matrix is made; with several
/// heads, in the symbols of the head on screen (`scores⁽²⁾ = Q⁽²⁾·K⁽²⁾ᵀ`).
pub(crate) fn caption(tutor: &Tutor, matrix: MatrixName) -> String {
    super::formula::caption_in(&tutor.attention, matrix, tutor.head)
}

/// The label of a row or column of `matrix` as the panel shows it: a token or a dimension, and
/// in a lesson of several heads, for an axis of every head's d_v side by side, the head and its
/// dimension (`h2.1`: head 2's first), so that concat's blocks and W_o's rows say whose they are.
pub(crate) fn label(tutor: &Tutor, matrix: MatrixName, index: usize, row: bool) -> String {
    let entry = matrix.entry();
    let axis = if row { entry.rows } else { entry.cols };
    let heads = tutor.heads().query;
    if axis == crate::pipeline::Axis::HeadsDV && heads > 1 {
        let total =
            tutor.values(matrix).map_or(
                0,
                |values| {
                    if row { values.nrows() } else { values.ncols() }
                },
            );
        let width = (total / heads).max(1);
        return format!("h{}.{}", index / width + 1, index % width + 1);
    }
    if row {
        let label = tutor.attention.row_label_at(matrix, index, tutor.token);
        // A cache's last row is the one this step of generation adds, said on the cache's
        // own step (where the cache is an operand, its rows are just the keys).
        if is_cache(matrix)
            && index == tutor.token
            && tutor.step() == crate::attention::Step::KvCache
        {
            format!("{label} (new)")
        } else {
            label
        }
    } else {
        tutor.attention.column_label(matrix, index)
    }
}

/// Whether a matrix is a K/V cache, whose rows are kept from earlier steps but the new one.
fn is_cache(matrix: MatrixName) -> bool {
    matches!(matrix, MatrixName::KCache | MatrixName::VCache)
}

/// Rows of a panel above its numbers: the caption and the column headers.
const HEAD_ROWS: u16 = 2;

/// The columns a cell may take for its column label when its numbers are narrower.
const LABEL_ROOM: usize = 5;

/// What a matrix needs on screen, measured once per frame: its size, its widest labels and
/// numbers. The layout tries number formats and arrangements against it without rescanning.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    pub matrix: MatrixName,
    pub total_rows: usize,
    pub total_cols: usize,
    /// The widest row label.
    label_width: usize,
    /// The widest column label.
    header_width: usize,
    /// The fewest decimals that show every number exactly, at most the lesson's.
    exact_decimals: usize,
    largest: f64,
    negative: bool,
    minus_infinity: bool,
    /// Columns the caption needs whole.
    caption_width: usize,
    /// Columns of the caption's formula, its gloss left out: the middle of what it can show.
    formula_width: usize,
    /// Columns of the caption's symbol, the least of it shown.
    symbol_width: usize,
}

impl Shape {
    pub(crate) fn new(tutor: &Tutor, matrix: MatrixName) -> Shape {
        let values = tutor.values(matrix);
        let (total_rows, total_cols) = values.map_or((0, 0), |v| (v.nrows(), v.ncols()));
        let label_width = (0..total_rows)
            .map(|row| columns(&label(tutor, matrix, row, true)))
            .max()
            .unwrap_or(1)
            .max(1);
        let header_width = (0..total_cols)
            .map(|col| columns(&label(tutor, matrix, col, false)))
            .max()
            .unwrap_or(1);
        let exact_decimals =
            values.map_or(0, |values| display_decimals(&values, tutor.lesson.decimals));
        let (largest, negative, minus_infinity) =
            values.map_or((0.0, false, false), |values| extremes(&values));
        Shape {
            matrix,
            total_rows,
            total_cols,
            label_width,
            header_width,
            exact_decimals,
            largest,
            negative,
            minus_infinity,
            caption_width: columns(&caption(tutor, matrix)),
            formula_width: columns(without_gloss(&caption(tutor, matrix))),
            symbol_width: columns(caption_symbol(&caption(tutor, matrix))),
        }
    }

    /// The width that also shows every label whole: each column's ("sleeping" over numbers of
    /// one digit; the columns widen to fill it) and each row's (a panel gives its row labels at
    /// most half its width). Not the caption's: a caption gets its room first, whole or not at
    /// all, and what a long caption would take here is what a neighbour's labels need.
    pub(crate) fn labelled_width(&self, cap: usize) -> u16 {
        let cell = self.cell_width(cap).max(self.header_width);
        let labelled = self.label_width + self.total_cols * (cell + 1);
        (self.whole_width(cap) as usize)
            .max(labelled)
            .max(2 * self.label_width)
            .min(usize::from(u16::MAX / 8)) as u16
    }

    /// Decimals shown when at most `cap` may be: fewer digits let a wide matrix fit whole.
    pub(crate) fn decimals(&self, cap: usize) -> usize {
        self.exact_decimals.min(cap)
    }

    /// Columns of the widest number at `decimals`.
    fn number_width(&self, decimals: usize) -> usize {
        let width = format_fixed(self.largest, decimals).len() + usize::from(self.negative);
        if self.minus_infinity {
            width.max(4)
        } else {
            width
        }
    }

    /// Columns of each cell: the widest number, or a little more for a longer column label
    /// (up to a short word's 5 columns, so that `rain` over numbers of one digit is read whole).
    fn cell_width(&self, cap: usize) -> usize {
        let natural = self.number_width(self.decimals(cap));
        natural.max(self.header_width.min((natural + 2).max(LABEL_ROOM)))
    }

    /// The width that shows every column at `cap` decimals, with room for at least the
    /// matrix's symbol in the caption.
    pub(crate) fn whole_width(&self, cap: usize) -> u16 {
        let needed = self.label_width + self.total_cols * (self.cell_width(cap) + 1);
        // The caption's symbol as shown, head mark and all ("rescale⁽¹⁾"), and the focus mark.
        let caption = self.symbol_width + 4;
        needed.max(caption).min(usize::from(u16::MAX / 8)) as u16
    }

    /// The width that also shows the whole caption.
    pub(crate) fn captioned_width(&self, cap: usize) -> u16 {
        (self.whole_width(cap) as usize)
            .max(self.caption_width + 2)
            .min(usize::from(u16::MAX / 8)) as u16
    }

    /// The width that shows the caption's formula, its gloss left out ("V = X·W_v" of
    /// "V = X·W_v (values)").
    pub(crate) fn formula_width(&self, cap: usize) -> u16 {
        (self.whole_width(cap) as usize)
            .max(self.formula_width + 2)
            .min(usize::from(u16::MAX / 8)) as u16
    }

    /// Rows that show every row: the caption, the column headers, the numbers.
    pub(crate) fn whole_height(&self) -> u16 {
        (self.total_rows + usize::from(HEAD_ROWS)).min(usize::from(u16::MAX / 8)) as u16
    }
}

/// The largest finite magnitude, whether any number is negative, whether any is -inf.
fn extremes<S: RawStorage<f64, Dyn, Dyn>>(values: &Matrix<f64, Dyn, Dyn, S>) -> (f64, bool, bool) {
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
    (largest, negative, minus_infinity)
}

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
    /// Decimals shown: as few as show every number of this matrix exactly, at most the lesson's
    /// (or fewer, when that lets the matrix show whole).
    pub decimals: usize,
    /// Whether some number is shown to fewer decimals than it has (up to the lesson's): the
    /// caption then says so.
    pub rounded: bool,
}

impl Geometry {
    /// Lays out a matrix in `area` with at most `cap` decimals, showing the page of rows and
    /// columns that holds `anchor`.
    pub(crate) fn new(shape: &Shape, area: Rect, anchor: (usize, usize), cap: usize) -> Geometry {
        let label_width = shape
            .label_width
            .clamp(1, usize::from(area.width / 2).max(1)) as u16;
        let room = area.width.saturating_sub(label_width + 1).max(1);
        // A panel given less than a number's width (four panels side by side at 80 columns)
        // shows its numbers to fewer decimals rather than as "…", and its caption says so.
        let cap = (0..=shape.decimals(cap))
            .rev()
            .find(|&decimals| shape.number_width(decimals) <= usize::from(room))
            .unwrap_or(cap);
        // Column labels whole where the area has room for every column at their width.
        let labelled = shape.cell_width(cap).max(shape.header_width);
        let cell = if shape.total_cols * (labelled + 1) <= usize::from(room) + 1 {
            labelled
        } else {
            shape.cell_width(cap)
        };
        let cell_width = (cell.min(usize::from(u16::MAX / 8)) as u16).clamp(1, room);
        let visible_cols = usize::from((room + 1) / (cell_width + 1)).max(1);
        let visible_rows = usize::from(area.height.saturating_sub(HEAD_ROWS)).max(1);
        Geometry {
            matrix: shape.matrix,
            area,
            label_width,
            cell_width,
            rows: page(anchor.0, visible_rows, shape.total_rows),
            cols: page(anchor.1, visible_cols, shape.total_cols),
            total_rows: shape.total_rows,
            total_cols: shape.total_cols,
            decimals: shape.decimals(cap),
            rounded: shape.decimals(cap) < shape.exact_decimals,
        }
    }

    fn cell_x(&self, col: usize) -> u16 {
        let index = (col - self.cols.start) as u16;
        self.area.x + self.label_width + 1 + index * (self.cell_width + 1)
    }

    fn row_y(&self, row: usize) -> u16 {
        self.area.y + HEAD_ROWS + (row - self.rows.start) as u16
    }

    /// The cell at a screen position: `Some((row, None))` is a row's label.
    pub(crate) fn hit(&self, x: u16, y: u16) -> Option<(usize, Option<usize>)> {
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

    /// Where the window is, when the matrix does not fit: "rows 9–16 of 64", or of a window
    /// one wide "col 31 of 64" (not "31–31 of 64").
    fn position(&self) -> String {
        let part = |what: &str, one: &str, range: &Range<usize>, total: usize| {
            (range.len() < total).then(|| match range.len() {
                1 => format!("{one} {} of {total}", range.end),
                _ => format!("{what} {}–{} of {total}", range.start + 1, range.end),
            })
        };
        [
            part("rows", "row", &self.rows, self.total_rows),
            part("cols", "col", &self.cols, self.total_cols),
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
fn display_decimals<S: RawStorage<f64, Dyn, Dyn>>(
    values: &Matrix<f64, Dyn, Dyn, S>,
    lesson_decimals: usize,
) -> usize {
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

/// The caption's note on numbers rounded further than the lesson's decimals, longest first;
/// `{d}` is the decimals shown.
const ROUNDING_NOTES: [&str; 2] = [" (rounded to {d} decimals)", " ({d} decimals)"];

/// The least sign that a matrix's numbers are rounded: always shown beside its symbol.
const ROUNDED_MARK: &str = " ≈";

/// The longest note on rounding that fits in `room` columns.
fn rounding_note(decimals: usize, room: usize) -> Option<String> {
    ROUNDING_NOTES
        .into_iter()
        .map(|note| note.replace("{d}", &decimals.to_string()))
        .find(|note| columns(note) <= room)
}

/// A caption in `room` columns, shortened where it means something: "Q = X·W_q (queries)"
/// becomes "Q = X·W_q", then "Q"; "mask (0 keeps, -inf hides)" becomes "mask". Only a symbol
/// that does not fit either is cut.
fn short_caption(caption: &str, room: usize) -> String {
    let without_note = without_gloss(caption);
    let symbol = caption_symbol(caption);
    [caption, without_note, symbol]
        .into_iter()
        .find(|candidate| columns(candidate) <= room)
        .map_or_else(|| fit(symbol, room), str::to_string)
}

/// A caption without its gloss, the last parenthesis: a formula may hold its own
/// ("weights ⊙ (d_weights − avg)").
fn without_gloss(caption: &str) -> &str {
    caption
        .rsplit_once(" (")
        .map_or(caption, |(formula, _)| formula)
}

/// The symbol a caption starts with: "rescale⁽¹⁾" of "rescale⁽¹⁾ = e^(m_old − m)".
fn caption_symbol(caption: &str) -> &str {
    let formula = without_gloss(caption);
    formula.split(" = ").next().unwrap_or(formula)
}

/// What a panel needs to know beyond the matrix itself.
pub(crate) struct MatrixPanel<'a> {
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
        let Some(values) = self.tutor.values(matrix) else {
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
        let symbol = attention.symbol_in(matrix, self.tutor.head);
        // Numbers shown to fewer decimals than the lesson's, so that the matrix fits whole: the
        // caption says so in the room its formula leaves, else its symbol, and is never left
        // without a mark (the working gives the selected cell at the lesson's decimals).
        let rounding = if geometry.rounded {
            let formula = columns(without_gloss(&caption)).max(columns(&symbol));
            let short = ROUNDING_NOTES[1].replace("{d}", &geometry.decimals.to_string());
            rounding_note(geometry.decimals, room.saturating_sub(formula))
                .or_else(|| (columns(&symbol) + columns(&short) <= room).then_some(short))
                .unwrap_or_else(|| ROUNDED_MARK.to_string())
        } else {
            String::new()
        };
        let room_left = room.saturating_sub(columns(&rounding));
        if columns(&caption) + columns(&position) > room_left {
            position = position.replace("rows ", "").replace("cols ", "");
        }
        // Too narrow for where the window is: still a sign that the matrix is cut.
        if !position.is_empty() && columns(&symbol) + 2 + columns(&position) > room_left {
            position = " (part)".to_string();
        }
        if columns(&symbol) + columns(&position) > room_left {
            position.clear();
        }
        let position = format!("{rounding}{position}");
        let caption_room = room.saturating_sub(columns(&position));
        let caption_style = if self.focused {
            theme.focused_title()
        } else {
            theme.title()
        };
        Line::from(vec![
            Span::raw(marker),
            Span::styled(short_caption(&caption, caption_room), caption_style),
            Span::styled(position, theme.muted()),
        ])
        .render(Rect::new(area.x, area.y, area.width, 1), buf);

        // A column of operands (W_q's column on Projection, V's on Output) is marked by its
        // header and a bar beside each number, its numbers left plain: a cursor move along a
        // row then changes two characters a row, not every digit of two columns (a terminal
        // cannot change a cell's colour without writing it again).
        let column_of_operands = operand_column(self.tutor, matrix, self.operands);
        // Column headers.
        let width = usize::from(geometry.cell_width);
        for col in geometry.cols.clone() {
            let label = pad_left(&label(self.tutor, matrix, col, false), width);
            let style = if self.focused && col == cursor.col && !cursor.on_label {
                theme.title()
            } else if column_of_operands == Some(col) {
                theme.operand()
            } else {
                theme.muted()
            };
            // Only the label takes the column's mark, not the blanks before it: a cursor move
            // then rewrites the label's characters, not the column's whole width.
            let blanks = label.len() - label.trim_start_matches(' ').len();
            let x = geometry.cell_x(col);
            buf.set_stringn(x, area.y + 1, &label[..blanks], blanks, theme.muted());
            buf.set_stringn(
                x + blanks as u16,
                area.y + 1,
                &label[blanks..],
                width - blanks,
                style,
            );
        }

        for row in geometry.rows.clone() {
            let y = geometry.row_y(row);
            let label = pad_right(
                &label(self.tutor, matrix, row, true),
                usize::from(geometry.label_width),
            );
            let label_style = if self.focused && cursor.on_label && cursor.row == row {
                theme.cursor()
            } else if self.tutor.changed_label.is_some_and(|changed| {
                Some(changed)
                    == Tokens::of_rows(&self.tutor.lesson, matrix).map(|tokens| (tokens, row))
            }) {
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
                let cell = self.tutor.cell(matrix, row, col);
                // A cell the learner is predicting shows nothing of its value, not even color.
                let hidden = self.tutor.is_hidden(cell) || self.tutor.is_polled(cell);
                let style =
                    if self.focused && !cursor.on_label && cursor.row == row && cursor.col == col {
                        theme.cursor()
                    } else if self.operands.contains(&cell) && column_of_operands != Some(col) {
                        theme.operand()
                    } else if self.tutor.changed.contains(&cell) {
                        theme.changed()
                    } else if self.heatmap && !hidden {
                        theme.heat(value)
                    } else if is_cache(matrix) && row < self.tutor.token {
                        // Kept from an earlier step, not computed on this one.
                        theme.muted()
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
                if column_of_operands == Some(col) && self.operands.contains(&cell) {
                    buf.set_stringn(
                        geometry.cell_x(col) - 1,
                        y,
                        COLUMN_BAR,
                        1,
                        theme.operand_bar(),
                    );
                }
            }
        }
    }
}

/// Drawn in the gap left of each number of a column of operands, against the number.
pub(crate) const COLUMN_BAR: &str = "▐";

/// The column of `matrix` that holds its operands, when they are two or more cells of a single
/// column (in the head shown).
fn operand_column(tutor: &Tutor, matrix: MatrixName, operands: &HashSet<Cell>) -> Option<usize> {
    let head = tutor.cell(matrix, 0, 0).head;
    let mut mine = operands
        .iter()
        .filter(|cell| cell.matrix == matrix && cell.head == head);
    let first = mine.next()?;
    let mut count = 1;
    for cell in mine {
        if cell.col != first.col {
            return None;
        }
        count += 1;
    }
    (count >= 2).then_some(first.col)
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
    fn captions_are_shortened_at_a_meaningful_place() {
        use super::short_caption;
        assert_eq!(
            short_caption("Q = X·W_q (queries)", 30),
            "Q = X·W_q (queries)"
        );
        assert_eq!(short_caption("Q = X·W_q (queries)", 12), "Q = X·W_q");
        assert_eq!(short_caption("Q = X·W_q (queries)", 5), "Q");
        assert_eq!(short_caption("mask (0 keeps, -inf hides)", 20), "mask");
        assert_eq!(short_caption("weights = softmax(rows)", 20), "weights");
        assert_eq!(short_caption("weights = softmax(rows)", 4), "wei…");
    }

    #[test]
    fn pages_hold_the_anchor_and_the_last_page_is_full() {
        assert_eq!(page(0, 8, 64), 0..8);
        assert_eq!(page(9, 8, 64), 8..16);
        assert_eq!(page(63, 10, 64), 54..64);
        assert_eq!(page(2, 8, 3), 0..3);
    }
}
