//! The lesson picker: every lesson with its title and shape, the picked one's summary, and the
//! first diagnostic of any lesson that failed to load.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::app::{App, PickerEntry};
use crate::lesson::text::columns;

use super::text::{fit, wrap_words};
use super::theme::Theme;
use super::working::rule_line;

/// Columns of the lesson-name column.
const NAME_WIDTH: usize = 22;

/// Columns a lesson's title keeps in its row (all of a shorter one) before its shape gets them.
const TITLE_KEPT: usize = 30;

/// Columns between a lesson's title and its shape.
const SEPARATOR: usize = 2;

/// The shape's clauses ("6 tokens × 4 → d_k 2", "2 heads", …) that fit `room`, the first always
/// (shortened if it must be), the others whole or not at all; "…" says some were left out.
fn shape_within(shape: &str, room: usize) -> String {
    if columns(shape) <= room {
        return shape.to_string();
    }
    let clauses: Vec<&str> = shape.split(", ").collect();
    let mut kept = clauses[0].to_string();
    for clause in &clauses[1..] {
        let longer = format!("{kept}, {clause}");
        if columns(&longer) + 3 > room {
            break;
        }
        kept = longer;
    }
    if clauses.len() > 1 {
        kept.push_str(", …");
    }
    fit(&kept, room)
}

/// `/long/path/to/lesson.toml:3:9: error: …` as `lesson.toml:3:9: error: …`: the list line is
/// short, and the folder is in the details below.
fn without_folders(line: &str) -> String {
    match line.split_once(": ") {
        Some((place, rest)) if place.contains('/') => {
            let file = place.rsplit('/').next().unwrap_or(place);
            format!("{file}: {rest}")
        }
        _ => line.to_string(),
    }
}

/// The rectangle the list of lessons takes, and the first entry shown; clicks use it too.
pub fn list_area(app: &App, area: Rect) -> (Rect, usize) {
    let height = (area.height.saturating_sub(3) / 2).max(3);
    let rows = usize::from(height);
    // Pages of the list, the last one kept full: the 11th of 11 is shown with the nine before
    // it, not alone above blank rows.
    let first = if app.picker.len() > rows {
        ((app.picked / rows) * rows).min(app.picker.len() - rows)
    } else {
        0
    };
    (Rect::new(area.x, area.y + 2, area.width, height), first)
}

pub(crate) fn render(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) {
    Line::from(vec![
        Span::styled(" attn-tutor", theme.title()),
        Span::raw(" — choose a lesson: softmax(QKᵀ/√d_k)V, one step at a time"),
    ])
    .render(Rect::new(area.x, area.y, area.width, 1), buf);
    let (list, first) = list_area(app, area);
    let count = app.picker.len();
    let shown = usize::from(list.height).min(count);
    let title = if shown < count {
        format!(
            "Lessons {}–{} of {count} · ▸ {} of {count}",
            first + 1,
            first + shown,
            app.picked + 1
        )
    } else {
        format!("Lessons ({count})")
    };
    rule_line(
        &title,
        theme,
        Rect::new(area.x, area.y + 1, area.width, 1),
        buf,
    );
    let width = usize::from(area.width);
    let before = NAME_WIDTH + 2;
    // One column for the titles and one for the shapes, the same on every row: the shapes
    // start where the longest would still fit whole, but never so far left that a title keeps
    // fewer than TITLE_KEPT columns (a long shape then gives up its later clauses instead).
    let texts = |entry: &PickerEntry| match &entry.lesson {
        Ok(loaded) => (loaded.lesson.title.clone(), loaded.lesson.shape_text()),
        Err(error) => (
            format!("✗ {}", without_folders(&error.first_line())),
            String::new(),
        ),
    };
    let (longest_title, longest_shape) =
        app.picker
            .iter()
            .map(texts)
            .fold((0, 0), |(title, shape), (this_title, this_shape)| {
                (
                    title.max(columns(&this_title)),
                    shape.max(columns(&this_shape)),
                )
            });
    let title_column = width
        .saturating_sub(before + SEPARATOR + longest_shape + 1)
        .clamp(TITLE_KEPT.min(longest_title), longest_title.max(TITLE_KEPT));
    let shape_room = width.saturating_sub(before + title_column + SEPARATOR + 1);
    for (offset, (index, entry)) in app
        .picker
        .iter()
        .enumerate()
        .skip(first)
        .take(usize::from(list.height))
        .enumerate()
    {
        let picked = index == app.picked;
        let marker = if picked { "▸ " } else { "  " };
        let name = fit(&entry.name, NAME_WIDTH - 1);
        let (middle, right) = texts(entry);
        let style = if entry.lesson.is_ok() {
            Style::new()
        } else {
            theme.error()
        };
        // A problem has no shape: its message takes the shape's columns too.
        let (middle, right) = if right.is_empty() {
            (fit(&middle, width.saturating_sub(before + 1)), right)
        } else {
            (fit(&middle, title_column), shape_within(&right, shape_room))
        };
        let pad = if right.is_empty() {
            0
        } else {
            title_column.saturating_sub(columns(&middle)) + SEPARATOR
        };
        let text = format!(
            "{marker}{name:<w$}{middle}{}{right}",
            " ".repeat(pad),
            w = NAME_WIDTH
        );
        let line_style = if picked { theme.cursor() } else { style };
        buf.set_stringn(
            area.x,
            list.y + offset as u16,
            fit(&text, width),
            width,
            line_style,
        );
    }

    // The picked lesson in full.
    let details = Rect::new(
        area.x,
        list.bottom(),
        area.width,
        area.bottom().saturating_sub(list.bottom() + 1),
    );
    if details.height < 2 {
        return;
    }
    let Some(entry) = app.picker.get(app.picked) else {
        return;
    };
    rule_line(&entry.name, theme, details, buf);
    let text_width = usize::from(area.width.saturating_sub(2));
    let lines: Vec<(String, Style)> = match &entry.lesson {
        Ok(loaded) => {
            let lesson = &loaded.lesson;
            let mut lines = vec![(lesson.title.clone(), theme.title())];
            if let Some(progress) = app.progress.lesson(&loaded.name) {
                let steps = crate::app::practice_steps(lesson);
                lines.push((
                    format!("Practice: {}", progress.summary(steps)),
                    Style::new(),
                ));
            }
            lines.extend(
                wrap_words(&lesson.summary, text_width)
                    .into_iter()
                    .map(|line| (line, Style::new())),
            );
            lines.push((format!("Shape: {}", lesson.shape_text()), theme.muted()));
            if !lesson.source.is_empty() {
                lines.extend(
                    wrap_words(&format!("Source: {}", lesson.source), text_width)
                        .into_iter()
                        .map(|line| (line, theme.muted())),
                );
            }
            lines.push((loaded.display_path(), theme.muted()));
            lines
        }
        Err(error) => {
            let mut lines = vec![(
                "This lesson cannot be opened. The first problem:".to_string(),
                theme.error(),
            )];
            lines.extend(
                wrap_words(&error.first_line(), text_width)
                    .into_iter()
                    .map(|line| (line, Style::new())),
            );
            let advice = "`attn-tutor check` on this file lists every problem, each with its \
                          line and column.";
            lines.extend(
                wrap_words(advice, text_width)
                    .into_iter()
                    .map(|line| (line, theme.muted())),
            );
            lines
        }
    };
    for (offset, (line, style)) in lines
        .into_iter()
        .take(usize::from(details.height - 1))
        .enumerate()
    {
        buf.set_stringn(
            area.x + 1,
            details.y + 1 + offset as u16,
            line,
            text_width,
            style,
        );
    }
}
