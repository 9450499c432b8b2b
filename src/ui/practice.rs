//! The practice panel, in place of the working while the learner predicts: what to type, the
//! hints asked for, the verdict on the last answer (their number beside the exact one, and the
//! slip when it is a common one), and the score.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::app::Tutor;
use crate::attention::number::format_number;
use crate::practice::{HintLevel, Verdict, hints};

use super::text::{fit, wrap_words};
use super::theme::Theme;
use super::working::{derivation_lines, rule_line};

/// The panel's title.
pub fn title(tutor: &Tutor) -> String {
    match tutor.selected_cell() {
        Some(cell) if tutor.is_hidden(cell) => {
            format!("Practice: predict {}", tutor.attention.cell_name(cell))
        }
        Some(cell) => format!("Practice: {}", tutor.attention.cell_name(cell)),
        None => "Practice".to_string(),
    }
}

/// The panel's lines at this width, each with whether it is a verdict (drawn bold).
pub fn lines(tutor: &Tutor, width: u16) -> Vec<(String, bool)> {
    let width_chars = usize::from(width).max(20);
    let plain = |text: &str| -> Vec<(String, bool)> {
        wrap_words(text, width_chars)
            .into_iter()
            .map(|line| (line, false))
            .collect()
    };
    let Some(practice) = tutor.practice.as_ref() else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    let Some(target) = tutor.practice_target() else {
        lines.extend(plain(
            "Nothing to predict on this step: its numbers are given. n goes on · x stops \
             practice.",
        ));
        return lines;
    };
    let decimals = tutor.lesson.decimals;
    match tutor.selected_cell() {
        Some(cell) if tutor.is_hidden(cell) => {
            lines.extend(plain(&format!(
                "Work it out from the highlighted cells, type your answer ({decimals} decimals \
                 are enough) and press Enter · t hint · x stop"
            )));
            if let (Some(level), Some(hints)) = (
                tutor.hint_level(cell),
                hints(&tutor.attention, cell, decimals),
            ) {
                lines.extend(plain(&format!("Hint 1: {}", hints.first_step)));
                if level >= HintLevel::Working {
                    for (index, part) in hints.working.lines().enumerate() {
                        let prefix = if index == 0 { "Hint 2: " } else { "        " };
                        lines.extend(plain(&format!("{prefix}{part}")));
                    }
                }
            }
        }
        Some(cell) if cell.matrix == target => {
            if let Some(feedback) = practice.feedback.filter(|feedback| feedback.cell == cell) {
                let exact = format_number(feedback.verdict.exact(), decimals);
                let yours = format_number(feedback.answer, decimals);
                let verdict = match feedback.verdict {
                    Verdict::Right { .. } => format!("Right: you said {yours}, it is {exact}."),
                    Verdict::Wrong { slip, .. } => {
                        let slip =
                            slip.map_or(String::new(), |slip| format!(" {}", slip.describe()));
                        format!("You said {yours}; it is {exact}.{slip}")
                    }
                };
                lines.extend(
                    wrap_words(&verdict, width_chars)
                        .into_iter()
                        .map(|line| (line, true)),
                );
            }
            lines.extend(
                derivation_lines(tutor, width)
                    .into_iter()
                    .map(|line| (line, false)),
            );
        }
        _ => lines.extend(plain(&format!(
            "Move to a ? in {} to predict it; [ ] change matrix.",
            target.symbol()
        ))),
    }
    let left = tutor.hidden_cells().len();
    let step = practice.score_of(target);
    let score = if left == 0 {
        format!("This step is done: {step}")
    } else if step.cells() == 0 {
        format!("{left} to predict on this step")
    } else {
        format!("This step: {step} · {left} to go")
    };
    lines.extend(plain(&score));
    lines
}

/// Draws the panel; the verdict and the score stay in view when the working is long.
pub fn render(tutor: &Tutor, theme: &Theme, area: Rect, buf: &mut Buffer) {
    if area.height < 2 {
        return;
    }
    rule_line(&title(tutor), theme, area, buf);
    let body = Rect::new(
        area.x + 1,
        area.y + 1,
        area.width.saturating_sub(2),
        area.height - 1,
    );
    let mut lines = lines(tutor, body.width);
    let room = usize::from(body.height);
    if lines.len() > room && room >= 2 {
        // Keep the first lines (the verdict) and the last (the score); cut the middle.
        let last = lines.pop();
        lines.truncate(room - 1);
        lines.extend(last);
    }
    for (offset, (line, verdict)) in lines.iter().take(room).enumerate() {
        let style = if *verdict {
            theme.title()
        } else {
            Style::new()
        };
        buf.set_stringn(
            body.x,
            body.y + offset as u16,
            fit(line, usize::from(body.width)),
            usize::from(body.width),
            style,
        );
    }
}
