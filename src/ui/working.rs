//! The working panel: how the selected cell is computed, with the real numbers; on the Softmax
//! screen, the whole row's exps, their sum, each quotient and a bar chart of the weights.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::app::{Tokens, Tutor, rows_are_tokens};
use crate::attention::number::{format_fixed, format_number};
use crate::attention::{Cell, MatrixName, Rule, Step, softmax_is_shifted};
use crate::lesson::text::{columns, printable};
use crate::workings::{Dot, FullyMasked, Softmax, WRITTEN_WHOLE_UP_TO};

use super::text::{fit, pad_right, wrap_pieces, wrap_words};
use super::theme::Theme;

/// Lines kept for the selected cell's quotient beside the softmax table.
const QUOTIENT_LINES: usize = 2;

/// Columns the softmax table leaves for the explanation beside it, when there is room.
const ASIDE_MIN: u16 = 26;

/// How the Softmax working is arranged at a width: the table with its bars, and the selected
/// cell's quotient with the aside on the row maximum, beside the table or below it.
pub(crate) struct SoftmaxPlan {
    pub table_width: u16,
    pub bar_width: usize,
    /// `None` when the aside goes below the table.
    pub aside_width: Option<u16>,
    pub aside: Vec<String>,
    /// Where each note of the aside ends (the quotient, the entropy, the aside on the row
    /// maximum): a note that does not fit whole is left off, never cut mid-sentence.
    note_ends: Vec<usize>,
}

impl SoftmaxPlan {
    pub(crate) fn new(tutor: &Tutor, width: u16) -> SoftmaxPlan {
        SoftmaxPlan::at(
            tutor,
            tutor.selected_cell(),
            tutor.cursor(tutor.focus).row,
            width,
        )
    }

    /// The plan with `selected` the selected cell on `row`: the layout asks it of every cell,
    /// so that it can stay put while the cursor moves.
    pub(crate) fn at(tutor: &Tutor, selected: Option<Cell>, row: usize, width: u16) -> SoftmaxPlan {
        let base = softmax_table_base(tutor);
        let spare = width.saturating_sub(base + 2 + 2 + ASIDE_MIN);
        let bar_width = usize::from(spare).clamp(4, BAR_WIDTH);
        let table_width = base + 2 + bar_width as u16;
        let beside = width >= table_width + 2 + ASIDE_MIN;
        let aside_width = if beside {
            width - table_width - 2
        } else {
            width
        };
        let mut aside = softmax_quotient(tutor, selected, aside_width);
        // Beside the table the quotient gets two lines even when it takes one, so that the
        // notes below it keep their place while the cursor moves along the row (one key's
        // quotient wraps where its neighbour's does not).
        if beside && !aside.is_empty() && aside.len() < QUOTIENT_LINES {
            aside.resize(QUOTIENT_LINES, String::new());
        }
        let mut note_ends = vec![aside.len()];
        for note in [
            entropy_note(tutor, row, aside_width),
            stable_softmax_note(tutor, row, aside_width),
        ] {
            aside.extend(note);
            note_ends.push(aside.len());
        }
        SoftmaxPlan {
            table_width: table_width.min(width),
            bar_width,
            aside_width: beside.then_some(aside_width),
            aside,
            note_ends,
        }
    }

    /// The aside's lines that fit in `height` rows: the quotient first (cut at the bottom only
    /// when it alone is taller), then each note that fits whole.
    fn aside_within(&self, height: usize) -> &[String] {
        let whole = self
            .note_ends
            .iter()
            .copied()
            .filter(|end| *end <= height)
            .max()
            .unwrap_or(0);
        &self.aside[..whole.max(height.min(self.note_ends[0]))]
    }

    /// Rows the working needs, its title included.
    pub(crate) fn height(&self, tutor: &Tutor) -> u16 {
        // A line per key: the source's tokens in cross-attention.
        let table = tutor.lesson.key_len() as u16 + 2;
        let aside = self.aside.len() as u16;
        1 + match self.aside_width {
            Some(_) => table.max(aside),
            None => table + aside,
        }
    }
}

pub(crate) fn render(tutor: &Tutor, theme: &Theme, area: Rect, buf: &mut Buffer) {
    if tutor.shows_poll_panel() {
        return super::poll::render(tutor, theme, area, buf);
    }
    if tutor.practice.is_some() {
        return super::practice::render(tutor, theme, area, buf);
    }
    if area.height < 2 {
        return;
    }
    let cursor = tutor.cursor(tutor.focus);
    let softmax = tutor.step() == Step::Softmax && rows_are_tokens(tutor.focus);
    let body = Rect::new(
        area.x + 1,
        area.y + 1,
        area.width.saturating_sub(2),
        area.height - 1,
    );
    let row = cursor.row;
    if !softmax {
        let title = match tutor.selected_cell() {
            Some(cell) => format!("How {} is computed", tutor.attention.cell_name(cell)),
            None => {
                let tokens = Tokens::of_rows(&tutor.lesson, tutor.focus).unwrap_or(Tokens::Target);
                format!(
                    "{} {}",
                    tokens.title(tutor.lesson.is_cross()),
                    cursor.row + 1
                )
            }
        };
        rule_line(&title, theme, area, buf);
        let result = tutor
            .selected_cell()
            .and_then(|cell| result_line(tutor, cell, usize::from(body.width).max(20)));
        let hint = tutor.selected_cell().map_or(0, |cell| {
            key_hint_lines(tutor, cell, usize::from(body.width).max(20)).len()
        });
        draw_lines(
            &derivation_lines(tutor, body.width),
            result,
            hint,
            body,
            theme,
            buf,
        );
        return;
    }
    let plan = SoftmaxPlan::new(tutor, body.width);
    let table_height = (tutor.lesson.key_len() as u16 + 2).min(body.height);
    let (table, aside) = match plan.aside_width {
        Some(aside_width) => (
            Rect::new(body.x, body.y, plan.table_width, body.height),
            Rect::new(
                body.x + plan.table_width + 2,
                body.y,
                aside_width,
                body.height,
            ),
        ),
        // No room beside the table: the quotient and the aside go below it.
        None => (
            Rect::new(body.x, body.y, body.width, table_height),
            Rect::new(
                body.x,
                body.y + table_height,
                body.width,
                body.height - table_height,
            ),
        ),
    };
    // Keys beyond the table's height: it shows the page that holds the selected key, and the
    // title says which page that is.
    let keys = tutor.lesson.key_len();
    let visible = usize::from(table.height.saturating_sub(2)).max(1);
    let selected_key = tutor.selected_cell().map(|cell| cell.col);
    let shown = key_page(selected_key, visible, keys);
    let label = tutor.attention.row_label(MatrixName::Weights, row);
    let title = if shown.len() < keys {
        format!(
            "Softmax of row {label} (keys {}–{} of {keys}; ←→ moves)",
            shown.start + 1,
            shown.end
        )
    } else {
        format!("Softmax of row {label}")
    };
    rule_line(&title, theme, area, buf);
    softmax_table(tutor, theme, row, table, shown, plan.bar_width, buf);
    // No elision here: the quotient comes first, and a note that does not fit is left off.
    for (offset, line) in plan
        .aside_within(usize::from(aside.height))
        .iter()
        .enumerate()
    {
        buf.set_stringn(
            aside.x,
            aside.y + offset as u16,
            line,
            usize::from(aside.width),
            Style::new(),
        );
    }
}

/// The keys of the softmax table on screen when `visible` of `keys` fit: the page that holds
/// the selected key, the last page kept full.
fn key_page(selected: Option<usize>, visible: usize, keys: usize) -> std::ops::Range<usize> {
    if keys <= visible {
        return 0..keys;
    }
    let start = match selected {
        Some(key) => ((key.min(keys - 1) / visible) * visible).min(keys - visible),
        None => 0,
    };
    start..start + visible
}

/// A section title drawn into a horizontal rule: `── How Q[cat, 1] is computed ───`.
pub(crate) fn rule_line(title: &str, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let title = fit(title, usize::from(area.width).saturating_sub(6));
    let rest = usize::from(area.width).saturating_sub(columns(&title) + 4);
    Line::from(vec![
        Span::styled("── ", theme.muted()),
        Span::styled(title, theme.title()),
        Span::styled(format!(" {}", "─".repeat(rest)), theme.muted()),
    ])
    .render(Rect::new(area.x, area.y, area.width, 1), buf);
}

/// The mark that stands where a working's lines are left off: "   … 3 more lines".
fn more_lines(hidden: usize) -> String {
    format!(
        "   … {hidden} more line{}",
        if hidden == 1 { "" } else { "s" }
    )
}

/// Lines that fit the height; when they do not, the key hint (the last `hint` lines) goes
/// first, then the notes after the result, then the middle (the long sum) is elided so the
/// first line, a line of the numbers and the result (line `result`, else the last) stay in
/// view. With too few rows for those, the lines that end at the result show: the numbers the
/// result is made of, never the result alone.
fn draw_lines(
    lines: &[String],
    result: Option<usize>,
    hint: usize,
    area: Rect,
    theme: &Theme,
    buf: &mut Buffer,
) {
    let height = usize::from(area.height);
    let essential = lines.len().saturating_sub(hint);
    if lines.len() > height && essential <= height && essential > 0 {
        // The working whole but its key hint: the hint goes, and says so.
        let width = usize::from(area.width);
        for (offset, line) in lines[..essential].iter().enumerate() {
            buf.set_stringn(
                area.x,
                area.y + offset as u16,
                fit(line, width),
                width,
                Style::new(),
            );
        }
        let hidden = lines.len() - essential;
        let marker = more_lines(hidden);
        let (row, after) = if essential < height {
            (essential, 0)
        } else {
            (essential - 1, columns(&lines[essential - 1]))
        };
        if after + columns(&marker) <= width {
            buf.set_stringn(
                area.x + after as u16,
                area.y + row as u16,
                &marker,
                width - after,
                theme.muted(),
            );
        }
        return;
    }
    let result_at = result.filter(|index| *index < lines.len());
    if lines.len() > height
        && (2..4).contains(&height)
        && let Some(result) = result_at.filter(|result| *result >= 1 && *result + 1 >= height)
    {
        // Too few rows for the first line as well: the lines that end at the result.
        let first = result + 1 - height;
        let width = usize::from(area.width);
        for (offset, line) in lines[first..=result].iter().enumerate() {
            buf.set_stringn(
                area.x,
                area.y + offset as u16,
                fit(line, width),
                width,
                Style::new(),
            );
        }
        let hidden = lines.len() - height;
        let marker = more_lines(hidden);
        let after = columns(&lines[result]);
        if after + columns(&marker) <= width {
            buf.set_stringn(
                area.x + after as u16,
                area.y + height as u16 - 1,
                &marker,
                width - after,
                theme.muted(),
            );
        }
        return;
    }
    // The line kept under the "…": the result, unless it is already above it.
    let last = lines.len().saturating_sub(1);
    let kept = result
        .filter(|index| *index < lines.len() && *index + 2 >= height)
        .unwrap_or(last);
    let shown: Vec<(String, Style)> = if lines.len() <= height {
        lines
            .iter()
            .map(|line| (line.clone(), Style::new()))
            .collect()
    } else if height >= 3 {
        let head = height - 2;
        let mut shown: Vec<(String, Style)> = lines[..head]
            .iter()
            .map(|line| (line.clone(), Style::new()))
            .collect();
        // At least two: a line more than fits hides the result's line and one other.
        let marker = (more_lines(lines.len() - head - 1), theme.muted());
        // The result right after the lines shown: it comes first, the notes after it go.
        if kept == head {
            shown.push((lines[kept].clone(), Style::new()));
            shown.push(marker);
        } else {
            shown.push(marker);
            shown.push((lines[kept].clone(), Style::new()));
        }
        shown
    } else if height == 2 {
        // No room for the "…": the first line and the result.
        [0, kept]
            .iter()
            .map(|index| (lines[*index].clone(), Style::new()))
            .collect()
    } else {
        lines[..height]
            .iter()
            .map(|line| (line.clone(), Style::new()))
            .collect()
    };
    let width = usize::from(area.width);
    for (offset, (line, style)) in shown.into_iter().enumerate() {
        buf.set_stringn(
            area.x,
            area.y + offset as u16,
            fit(&line, width),
            width,
            style,
        );
    }
    // Two rows hide the middle with no row for the "…": it goes after the result, where it
    // fits, so that a learner knows a line is missing.
    if height == 2 && lines.len() > 2 {
        let hidden = lines.len() - 2;
        let marker = more_lines(hidden);
        let after = columns(&lines[kept]);
        if after + columns(&marker) <= width {
            buf.set_stringn(
                area.x + after as u16,
                area.y + 1,
                &marker,
                width - after,
                theme.muted(),
            );
        }
    }
}

/// The arithmetic of the selected cell, laid out over lines: `name = formula`, then each
/// further side of the equation on its own line, a long sum wrapped between its terms.
pub(crate) fn derivation_lines(tutor: &Tutor, width: u16) -> Vec<String> {
    derivation_lines_at(
        tutor,
        tutor.selected_cell(),
        tutor.cursor(tutor.focus).row,
        width,
    )
}

/// The working with `selected` the selected cell on `row` (`None`: the row's token label).
pub(crate) fn derivation_lines_at(
    tutor: &Tutor,
    selected: Option<Cell>,
    row: usize,
    width: u16,
) -> Vec<String> {
    let width = usize::from(width).max(20);
    let Some(cell) = selected else {
        let tokens = Tokens::of_rows(&tutor.lesson, tutor.focus).unwrap_or(Tokens::Target);
        let token = tokens
            .in_lesson(&tutor.lesson)
            .get(row)
            .map_or("", String::as_str);
        let (n, token) = (row + 1, printable(token));
        let text = match (tokens, tutor.lesson.is_cross()) {
            (Tokens::Source, _) => format!(
                "Source token {n} is “{token}”: the label of row {n} of S, K and V, and of \
                 column {n} of the scores and the weights. Press e to rename it."
            ),
            (Tokens::Target, true) => format!(
                "Target token {n} is “{token}”: the label of row {n} of X, Q, the scores, the weights \
                 and the output. Press e to rename it."
            ),
            (Tokens::Target, false) => format!(
                "Token {n} is “{token}”: the label of row {n} of X, Q, K, V, the scores and the \
                 weights, and of column {n} of the scores. Press e to rename it."
            ),
        };
        return wrap_words(&text, width);
    };
    let mut lines = cell_working(tutor, cell, width as u16);
    lines.extend(key_hint_lines(tutor, cell, width));
    lines
}

/// The line (wrapped) after a cell's working saying which key changes it or goes to its
/// source: the first given up when the working does not fit.
pub(crate) fn key_hint_lines(tutor: &Tutor, cell: Cell, width: usize) -> Vec<String> {
    let attention = &tutor.attention;
    let Some(derivation) = attention.derive(cell) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    let mut notes = Vec::new();
    if matches!(derivation.rule, Rule::Input(_)) {
        notes.push(input_note(tutor, cell));
    } else if tutor.is_editable(cell.matrix) {
        notes.push("Press e to type a new value.".to_string());
    } else if let Some(source) = derivation.source() {
        notes.push(format!(
            "Computed from the highlighted cells; e goes to {}.",
            attention.cell_name(source)
        ));
    }
    for note in notes {
        lines.extend(wrap_words(&note, width));
    }
    lines
}

/// The arithmetic of one cell with the engine's note on it, without the keys that go with the
/// cell under the cursor: the practice panel shows it for a cell the cursor has left.
pub(crate) fn cell_working(tutor: &Tutor, cell: Cell, width: u16) -> Vec<String> {
    let width = usize::from(width).max(20);
    let attention = &tutor.attention;
    let Some(derivation) = attention.derive(cell) else {
        return Vec::new();
    };
    let explanation = derivation.explanation(attention, tutor.lesson.decimals);
    let mut lines = sides_lines(&explanation, width);
    if let Some(note) = &explanation.note {
        lines.extend(wrap_words(&capitalized(note), width));
    }
    match by_head(tutor, cell, width) {
        Some(by_head) if by_head.len() < lines.len() || written_as_parts(tutor, cell) => by_head,
        _ => lines,
    }
}

/// Whether the engine writes this concat · W_o whole as the heads' parts alone, too many terms
/// to write out (12 heads of 64): head by head, a head's own terms can be read too.
fn written_as_parts(tutor: &Tutor, cell: Cell) -> bool {
    tutor.attention.derive(cell).is_some_and(
        |derivation| matches!(&derivation.rule, Rule::Dot(dot) if dot.terms.len() > WRITTEN_WHOLE_UP_TO),
    )
}

/// Numbers right-aligned to the widest of them (and at least to `least`).
fn right_aligned(numbers: &[String], least: &[usize]) -> Vec<String> {
    let widest = numbers
        .iter()
        .map(|number| columns(number))
        .chain(least.iter().copied())
        .max()
        .unwrap_or(0);
    numbers
        .iter()
        .map(|number| format!("{number:>widest$}"))
        .collect()
}

/// The widest number each matrix of a dot product (left, right) writes at `decimals`.
fn matrices_widest(tutor: &Tutor, cell: Cell, decimals: usize) -> Option<(usize, usize)> {
    let Rule::Dot(Dot { terms, .. }) = tutor.attention.derive(cell)?.rule else {
        return None;
    };
    let (left, right) = terms.first()?;
    Some((
        widest_number(tutor, left.cell.matrix, decimals)?,
        widest_number(tutor, right.cell.matrix, decimals)?,
    ))
}

/// The widest number a matrix writes at `decimals`: its largest magnitude, and a sign.
fn widest_number(tutor: &Tutor, matrix: MatrixName, decimals: usize) -> Option<usize> {
    let values = tutor.values(matrix)?;
    let largest = values
        .iter()
        .filter(|value| value.is_finite())
        .fold(0.0f64, |most, value| most.max(value.abs()));
    let negative = values.iter().any(|value| *value < 0.0);
    Some(format_fixed(largest, decimals).len() + usize::from(negative))
}

/// Products `(a × b)` with each side right-aligned to the widest number its matrix can write
/// at the decimals shown, so that the products stay in place from cell to cell.
fn aligned_products(tutor: &Tutor, products: &[String], matrices: &[MatrixName]) -> Vec<String> {
    let Some(pairs) = products
        .iter()
        .map(|product| {
            product
                .strip_prefix('(')?
                .strip_suffix(')')?
                .split_once(" × ")
                .map(|(a, b)| (a.to_string(), b.to_string()))
        })
        .collect::<Option<Vec<_>>>()
    else {
        return products.to_vec();
    };
    let decimals = pairs
        .iter()
        .flat_map(|(a, b)| [a, b])
        .filter_map(|number| number.split_once('.').map(|(_, fraction)| fraction.len()))
        .max()
        .unwrap_or(0)
        .max(tutor.lesson.decimals + 3);
    let widest = |matrix: Option<&MatrixName>| widest_number(tutor, *matrix?, decimals);
    let (lefts, rights): (Vec<String>, Vec<String>) = pairs.into_iter().unzip();
    let lefts = right_aligned(
        &lefts,
        &widest(matrices.first()).into_iter().collect::<Vec<_>>(),
    );
    let rights = right_aligned(
        &rights,
        &widest(matrices.get(1)).into_iter().collect::<Vec<_>>(),
    );
    lefts
        .iter()
        .zip(&rights)
        .map(|(a, b)| format!("({a} × {b})"))
        .collect()
}

/// The line of a cell's working that holds its result, kept in view when the working is cut.
fn result_line(tutor: &Tutor, cell: Cell, width: usize) -> Option<usize> {
    let derivation = tutor.attention.derive(cell)?;
    let whole = derivation.explanation(&tutor.attention, tutor.lesson.decimals);
    let mut whole_lines = sides_lines(&whole, width).len();
    let by_head = by_head(tutor, cell, width).map(|lines| lines.len());
    let all_lines = whole_lines
        + whole
            .note
            .map_or(0, |note| wrap_words(&capitalized(&note), width).len());
    if by_head.is_some_and(|lines| lines < all_lines || written_as_parts(tutor, cell)) {
        let parts = derivation.head_parts(&tutor.attention, tutor.lesson.decimals)?;
        let sum = parts.wholes.get(tutor.head.min(parts.wholes.len() - 1))?;
        whole_lines = sides_lines(sum, width).len();
    }
    whole_lines.checked_sub(1)
}

/// concat · W_o written head by head: the cell as the sum of the heads' parts (of more than
/// three heads, the shown head's part plus the other heads'), then the part of the head shown
/// (< and > choose it) term by term. Used where it is shorter than the whole sum
/// (64 terms from 8 heads): every line of that sum changes on a cursor move, and it reads as
/// a wall of products rather than as the heads' parts the step is about.
fn by_head(tutor: &Tutor, cell: Cell, width: usize) -> Option<Vec<String>> {
    let parts = tutor
        .attention
        .derive(cell)?
        .head_parts(&tutor.attention, tutor.lesson.decimals)?;
    let shown = tutor.head.min(parts.heads.len() - 1);
    let mut whole = parts.wholes.get(shown)?.clone();
    let mut head = parts.heads.get(shown)?.clone();
    // In fixed places, so that a move to the next cell rewrites digits, not whole lines.
    if let Some(numbers) = whole.sides.get_mut(2) {
        // A part is at most the head's width times the largest numbers of its two matrices;
        // the other heads' parts, when written as one number, as many times that as they are.
        let heads = parts.heads.len();
        let per_head = tutor
            .values(MatrixName::WO)
            .map_or(1, |w_o| w_o.nrows() / heads.max(1));
        let largest = |matrix| {
            tutor.values(matrix).map_or(0.0, |values| {
                values
                    .iter()
                    .filter(|value| value.is_finite())
                    .fold(0.0f64, |most, value| most.max(value.abs()))
            })
        };
        let bound = per_head as f64 * largest(MatrixName::Concat) * largest(MatrixName::WO);
        let decimals = numbers
            .iter()
            .filter_map(|number| number.trim_end_matches(')').split_once('.'))
            .map(|(_, fraction)| fraction.len())
            .max()
            .unwrap_or(0)
            .max(tutor.lesson.decimals + 1);
        let widest = |bound: f64| format_fixed(bound, decimals).len() + 3;
        // Every head's part, or head h's then the other heads' parts; then b_o's number where
        // the lesson has it (one more number than parts).
        let biased = tutor.values(MatrixName::BO).is_some();
        let mut bounds = if numbers.len() - usize::from(biased) == heads {
            vec![bound; heads]
        } else {
            vec![bound, bound * heads.saturating_sub(1) as f64]
        };
        if biased {
            bounds.push(largest(MatrixName::BO));
        }
        *numbers = numbers
            .iter()
            .zip(bounds)
            .flat_map(|(number, bound)| {
                right_aligned(std::slice::from_ref(number), &[widest(bound)])
            })
            .collect();
    }
    if let (Some(products), Rule::Dot(Dot { terms, .. })) =
        (head.sides.get_mut(1), &tutor.attention.derive(cell)?.rule)
    {
        let matrices: Vec<MatrixName> = terms
            .first()
            .map(|(left, right)| vec![left.cell.matrix, right.cell.matrix])
            .unwrap_or_default();
        *products = aligned_products(tutor, products, &matrices);
    }
    // As many lines from cell to cell: the longest its parts and terms can take (three decimals
    // more than the lesson's, the widest numbers of their matrices), so that a move that needs
    // more digits does not move the panels.
    let lines_at_most = {
        let widest = |pieces: &[String], least: usize| {
            let most = pieces
                .iter()
                .map(|piece| columns(piece))
                .max()
                .unwrap_or(0)
                .max(least);
            vec!["0".repeat(most); pieces.len()]
        };
        let most_decimals = tutor.lesson.decimals + 3;
        let mut whole = whole.clone();
        whole.sides[2] = widest(&whole.sides[2], 0);
        let mut head = head.clone();
        let product = matrices_widest(tutor, cell, most_decimals).map_or(0, |(a, b)| a + b + 5);
        head.sides[1] = widest(&head.sides[1], product);
        sides_lines(&whole, width).len() + sides_lines(&head, width).len()
    };
    let mut lines = sides_lines(&whole, width);
    lines.extend(sides_lines(&head, width));
    lines.resize(lines.len().max(lines_at_most), String::new());
    // Which of a long part's terms are written (its largest, then the others' sum).
    if let Some(note) = &head.note {
        lines.extend(wrap_words(&capitalized(note), width));
    }
    lines.extend(wrap_words(
        &format!(
            "Each head's part is its output times its block of {}'s rows; < and > write out \
             another head's.",
            tutor.attention.symbol(MatrixName::WO)
        ),
        width,
    ));
    Some(lines)
}

/// The equation's lines, `name = formula` then each further side, the last the result.
fn sides_lines(explanation: &crate::attention::Explanation, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let indent = " ".repeat(columns(&explanation.name).min(width / 3));
    for (index, side) in explanation.sides.iter().enumerate() {
        let prefix = if index == 0 {
            format!("{} = ", explanation.name)
        } else {
            format!("{indent} = ")
        };
        lines.extend(wrap_pieces(&prefix, side, " + ", width));
    }
    lines
}

fn input_note(tutor: &Tutor, cell: Cell) -> String {
    let generated = tutor
        .lesson
        .input(cell.matrix)
        .and_then(|input| input.generator.as_ref());
    match generated {
        Some(generator) => format!(
            "Generated ({}, seed {}). Press e to type a new value, r to re-roll the matrix.",
            generator.kind.key(),
            generator.seed
        ),
        None if cell.matrix == MatrixName::Mask => {
            "0 lets this query see the key, -inf hides it. Press e to change it.".to_string()
        }
        None => "Press e to type a new value; everything after it recomputes.".to_string(),
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}

/// Numbers in the softmax table use the lesson's decimals, at least three.
fn table_decimals(tutor: &Tutor) -> usize {
    tutor.lesson.decimals.max(3)
}

/// Columns of a number in the softmax table: the widest exp, at the table's decimals.
fn table_number_width(tutor: &Tutor) -> usize {
    let decimals = table_decimals(tutor);
    let input = tutor.attention.softmax_input();
    // Only the extremes can be the widest: the largest exp, the largest and the most negative
    // score. Formatting every cell would cost more than drawing the frame.
    let (low, high) = tutor.values(input).map_or((0.0, 0.0), |values| {
        values
            .iter()
            .filter(|value| value.is_finite())
            .fold((0.0f64, 0.0f64), |(low, high), value| {
                (low.min(*value), high.max(*value))
            })
    });
    [high.exp().min(1e12), low, high]
        .into_iter()
        .map(|value| format_fixed(value, decimals).len())
        .max()
        .unwrap_or(4)
        .max(6)
}

/// Bar chart columns in the softmax table.
const BAR_WIDTH: usize = 12;

/// Columns of the softmax table's key labels: the widest label as shown (a repeated token
/// with its position, `the₄`), at least "key".
fn table_label_width(tutor: &Tutor) -> usize {
    (0..tutor.lesson.key_len())
        .map(|key| columns(&tutor.attention.column_label(MatrixName::Weights, key)))
        .max()
        .unwrap_or(3)
        .max(3)
}

/// The softmax table's width without its bars: labels and three numbers.
fn softmax_table_base(tutor: &Tutor) -> u16 {
    (table_label_width(tutor) + 3 * (table_number_width(tutor) + 1)) as u16
}

/// The selected row of the softmax, one line per key: the score, its exp, the quotient, a bar.
fn softmax_table(
    tutor: &Tutor,
    theme: &Theme,
    row: usize,
    area: Rect,
    shown: std::ops::Range<usize>,
    bar_width: usize,
    buf: &mut Buffer,
) {
    let attention = &tutor.attention;
    let input = attention.softmax_input();
    let cell = tutor.cell(MatrixName::Weights, row, 0);
    let Some(derivation) = attention.derive(cell) else {
        return;
    };
    let decimals = table_decimals(tutor);
    let label_width = table_label_width(tutor);
    let number_width = table_number_width(tutor);
    let number = |value: f64| format!("{:>number_width$}", format_fixed(value, decimals));
    let selected_key = tutor.selected_cell().map(|cell| cell.col);
    let (scores, exps, sum, shifted): (Vec<f64>, Vec<f64>, f64, bool) = match &derivation.rule {
        Rule::Softmax(Softmax {
            row: operands,
            shifted_exps,
            shifted_sum,
            ..
        }) => {
            let scores: Vec<f64> = operands.iter().map(|o| o.value).collect();
            let raw: Vec<f64> = scores.iter().map(|s| s.exp()).collect();
            let raw_sum: f64 = raw.iter().sum();
            // The same form as the cell's working line above the table.
            if !softmax_is_shifted(raw_sum) {
                (scores, raw, raw_sum, false)
            } else {
                (scores, shifted_exps.clone(), *shifted_sum, true)
            }
        }
        Rule::FullyMasked(FullyMasked { row: operands }) => {
            let scores: Vec<f64> = operands.iter().map(|o| o.value).collect();
            let zeros = vec![0.0; scores.len()];
            (scores, zeros, 0.0, false)
        }
        _ => return,
    };
    let exp_header = if shifted { "exp(x−max)" } else { "exp(x)" };
    let header = format!(
        "{:<label_width$} {:>number_width$} {:>number_width$} {:>number_width$}",
        "key",
        fit(input.symbol(), number_width),
        fit(exp_header, number_width),
        "÷ Σ"
    );
    let width = usize::from(area.width);
    let mut y = area.y;
    let bottom = area.bottom();
    buf.set_stringn(area.x, y, fit(&header, width), width, theme.muted());
    y += 1;
    let bar_room = width
        .saturating_sub(label_width + 3 * (number_width + 1) + 2)
        .min(bar_width);
    let keys = scores.len();
    let paged = shown.len() < keys;
    for key in shown.start..shown.end.min(keys) {
        if y >= bottom {
            break;
        }
        let weight = attention.weights_of(tutor.head)[(row, key)];
        let label = pad_right(
            &attention.column_label(MatrixName::Weights, key),
            label_width,
        );
        let text = format!(
            "{label} {} {} {}",
            number(scores[key]),
            number(exps[key]),
            number(weight)
        );
        let style = if selected_key == Some(key) {
            theme.operand()
        } else {
            Style::new()
        };
        buf.set_stringn(area.x, y, fit(&text, width), width, style);
        let bar = bar(weight, bar_room);
        let bar_x = area.x + (columns(&text) + 2).min(width) as u16;
        buf.set_stringn(bar_x, y, &bar, bar_room, theme.bar());
        y += 1;
    }
    if y < bottom {
        // On a page of the keys, the sum is still over all of them, and says so.
        let sigma = if paged {
            format!("Σ all {keys}")
        } else {
            "Σ".to_string()
        };
        let sum_line = if sum == 0.0 {
            format!("{sigma:<label_width$} every key is hidden: nothing to attend to")
        } else {
            let lead = label_width + 1 + number_width;
            format!("{sigma:<lead$} {} {}", number(sum), number(1.0))
        };
        buf.set_stringn(area.x, y, fit(&sum_line, width), width, theme.title());
    }
}

/// The selected cell as the table's quotient, `weights[cat, sat] = 2.028 / 7.549 = 0.269`; the
/// table beside it already shows each exp.
fn softmax_quotient(tutor: &Tutor, selected: Option<Cell>, width: u16) -> Vec<String> {
    let Some(cell) = selected else {
        return Vec::new();
    };
    let attention = &tutor.attention;
    let Some(derivation) = attention.derive(cell) else {
        return Vec::new();
    };
    let explanation = derivation.explanation(attention, tutor.lesson.decimals);
    // Softmax cells skip the `exp(x) / Σ exp(row)` side; other cells show all of theirs.
    let sides: Vec<String> = match &derivation.rule {
        Rule::Softmax(Softmax { row, .. }) => {
            let mut sides: Vec<String> = explanation
                .sides
                .iter()
                .skip(1)
                .map(|s| s.join(" + "))
                .collect();
            if let [quotient, result] = sides.as_mut_slice()
                && let Some(as_tabled) = quotient_as_tabled(tutor, row, quotient, result)
            {
                *quotient = as_tabled;
            }
            sides
        }
        _ => explanation.sides.iter().map(|s| s.join(" + ")).collect(),
    };
    let text = format!("{} = {}", explanation.name, sides.join(" = "));
    wrap_words(&text, usize::from(width))
}

/// The quotient with the row's Σ written as the table beside it writes it (`1 / 20.0370`, not
/// `1 / 20.037`), when that still lands on `result` as written; `None` for the stable form (its
/// table writes Σ exp(x − max)) or when the table's digits are too few.
fn quotient_as_tabled(
    tutor: &Tutor,
    row: &[crate::attention::Operand],
    quotient: &str,
    result: &str,
) -> Option<String> {
    let sum: f64 = row.iter().map(|operand| operand.value.exp()).sum();
    if softmax_is_shifted(sum) {
        return None;
    }
    let sum = format_fixed(sum, table_decimals(tutor));
    // The exp keeps the digits the working gave it: "1", "4.1133".
    let (exp, _) = quotient.split_once(" / ")?;
    let result_decimals = result
        .split_once('.')
        .map_or(0, |(_, fraction)| fraction.len());
    let redone = exp.parse::<f64>().ok()? / sum.parse::<f64>().ok()?;
    (format_fixed(redone, result_decimals) == result).then(|| format!("{exp} / {sum}"))
}

/// A horizontal bar of `width` columns filled in eighths.
fn bar(weight: f64, width: usize) -> String {
    const EIGHTHS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    let eighths = (weight.clamp(0.0, 1.0) * width as f64 * 8.0).round() as usize;
    format!("{}{}", "█".repeat(eighths / 8), EIGHTHS[eighths % 8])
}

/// How sharp the row is, as a number: its entropy in bits against the most its visible keys
/// allow (log₂ of how many there are): "Entropy: 1.52 of log₂ 6 = 2.58 bits (59 %)".
fn entropy_note(tutor: &Tutor, row: usize, width: u16) -> Vec<String> {
    let Some((entropy, visible)) = tutor.attention.row_entropy(tutor.head, row) else {
        return Vec::new();
    };
    let text = if visible == 1 {
        "Entropy: 0 bits: one visible key takes all the weight.".to_string()
    } else {
        let most = (visible as f64).log2();
        let share = entropy / most;
        let reading = if share >= 0.8 {
            ": a flat row, attention spread out"
        } else if share <= 0.3 {
            ": a sharp row, attention on few keys"
        } else {
            ""
        };
        let most = format_number(most, 2);
        let bits = if most == "1" { "bit" } else { "bits" };
        format!(
            "Entropy: {} of log₂ {visible} = {most} {bits} ({:.0} %){reading}.",
            // As the other rows write theirs: 0.90, not 0.9.
            format_fixed(entropy, 2),
            share * 100.0
        )
    };
    wrap_words(&text, usize::from(width))
}

/// The aside on subtracting the row maximum, with this row's numbers.
fn stable_softmax_note(tutor: &Tutor, row: usize, width: u16) -> Vec<String> {
    let attention = &tutor.attention;
    let decimals = tutor.lesson.decimals;
    let text = match attention
        .derive(tutor.cell(MatrixName::Weights, row, 0))
        .map(|d| d.rule)
    {
        Some(Rule::Softmax(Softmax { row_max, .. })) => {
            let max = format_number(row_max.abs(), decimals);
            // "x − -0.5" and "e^−0" would each make the learner stop and translate.
            if row_max == 0.0 {
                "Aside: libraries subtract the row maximum from each score before exp, so that \
                 exp cannot overflow; this row's maximum is 0, so subtracting it changes \
                 nothing here."
                    .to_string()
            } else {
                let (shifted, factor) = if row_max < 0.0 {
                    (format!("x + {max}"), format!("e^{max}"))
                } else {
                    (format!("x − {max}"), format!("e^−{max}"))
                };
                format!(
                    "Aside: libraries take exp({shifted}), the row maximum subtracted. {factor} \
                     cancels in the quotient, so the weights are the same, and exp cannot \
                     overflow."
                )
            }
        }
        Some(Rule::FullyMasked(_)) => format!(
            "Every key of {} is hidden by the mask: each exp(-inf) is 0 and the sum is 0. 0 / 0 \
             has no value, so the whole row of weights is set to 0 (not NaN): this token attends \
             to nothing and its output is 0.",
            attention.row_label(MatrixName::Weights, row)
        ),
        _ => String::new(),
    };
    wrap_words(&text, usize::from(width))
}

#[cfg(test)]
mod tests {
    use super::{SoftmaxPlan, bar};

    #[test]
    fn a_note_of_the_softmax_aside_that_does_not_fit_whole_is_left_off() {
        let lines = |text: &str| text.split(' ').map(str::to_string).collect::<Vec<_>>();
        let plan = SoftmaxPlan {
            table_width: 30,
            bar_width: 4,
            aside_width: Some(30),
            aside: lines("q1 q2 e1 e2 e3 a1 a2 a3"),
            note_ends: vec![2, 5, 8],
        };
        assert_eq!(plan.aside_within(8), lines("q1 q2 e1 e2 e3 a1 a2 a3"));
        assert_eq!(plan.aside_within(7), lines("q1 q2 e1 e2 e3"));
        assert_eq!(plan.aside_within(4), lines("q1 q2"));
        // The quotient alone taller than the room: it is cut at the bottom.
        assert_eq!(plan.aside_within(1), lines("q1"));
    }

    #[test]
    fn bars_grow_in_eighths_of_a_column() {
        assert_eq!(bar(0.5, 4), "██");
        assert_eq!(bar(1.0 / 32.0, 4), "▏");
        assert_eq!(bar(0.0, 4), "");
    }
}

#[cfg(test)]
mod elision_tests {
    use super::*;

    fn drawn(lines: &[&str], result: Option<usize>, height: u16) -> Vec<String> {
        let lines: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
        let area = Rect::new(0, 0, 30, height);
        let mut buf = Buffer::empty(area);
        draw_lines(&lines, result, 0, area, &Theme::monochrome(), &mut buf);
        (0..height)
            .map(|y| {
                (0..30)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn a_working_too_long_keeps_its_result_and_drops_its_notes_first() {
        let lines = ["a = f", "  = 1 + 2", "  = 3", "note 1", "note 2", "hint"];
        assert_eq!(
            drawn(&lines, Some(2), 4),
            ["a = f", "  = 1 + 2", "  = 3", "   … 3 more lines"]
        );
        // Three rows: the working to its result, the count of the lines left off after it.
        assert_eq!(
            drawn(&lines, Some(2), 3),
            ["a = f", "  = 1 + 2", "  = 3   … 3 more lines"]
        );
        // Without a result to keep, the last line stays, as before.
        assert_eq!(
            drawn(&lines, None, 3),
            ["a = f", "   … 4 more lines", "hint"]
        );
        // Two lines, where the narration took the rest: the numbers and the result, never the
        // result alone, and after it, where it fits, how many lines are hidden.
        assert_eq!(
            drawn(&lines, Some(2), 2),
            ["  = 1 + 2", "  = 3   … 4 more lines"]
        );
        assert_eq!(
            drawn(&lines[..3], Some(2), 2),
            ["  = 1 + 2", "  = 3   … 1 more line"]
        );
    }
}
