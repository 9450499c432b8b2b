//! The practice panel, in place of the working while the learner predicts: what to type, the
//! hints asked for, the verdict on the last answer (their number beside the exact one, and the
//! slip when it is a common one) with its working, kept while the cursor waits on the next `?`,
//! and the score of the step.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::app::{Feedback, Tutor, capitalised, practice_symbols};
use crate::attention::number::format_number;
use crate::practice::{HintLevel, Verdict, hints};

use super::text::{fit, wrap_words};
use super::theme::Theme;
use super::working::{cell_working, rule_line};

/// One line of the panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PanelLine {
    pub text: String,
    /// A verdict, drawn bold.
    pub bold: bool,
    /// Working that may be left out when the panel is short: the verdict, what to do next and
    /// the score always stay.
    pub may_cut: bool,
}

impl PanelLine {
    fn plain(text: String) -> PanelLine {
        PanelLine {
            text,
            bold: false,
            may_cut: false,
        }
    }
}

/// The panel's title.
pub(crate) fn title(tutor: &Tutor) -> String {
    match tutor.selected_cell() {
        Some(cell) if tutor.is_hidden(cell) => {
            format!("Practice: predict {}", tutor.attention.cell_name(cell))
        }
        Some(cell) => format!("Practice: {}", tutor.attention.cell_name(cell)),
        None => "Practice".to_string(),
    }
}

/// The verdict on the last cell done, for the panel: "You said 5; it is 0.8. …".
fn verdict_text(tutor: &Tutor, feedback: &Feedback) -> String {
    let decimals = tutor.lesson.decimals;
    let name = tutor.attention.cell_name(feedback.cell);
    let Some((_, verdict)) = feedback.said else {
        let exact = tutor
            .attention
            .derive(feedback.cell)
            .map_or(String::new(), |derivation| {
                format_number(derivation.value, decimals)
            });
        return format!("The third hint showed {name} = {exact}.");
    };
    let exact = format_number(verdict.exact(), decimals);
    // As typed: "0.050" says the learner worked to 3 decimals, which "0.05" would not.
    let yours = &feedback.typed;
    match verdict {
        Verdict::Right {
            to_decimals: Some(typed),
            ..
        } => format!("Right to {typed} decimals: {name} = {exact} (you said {yours})."),
        Verdict::Right { .. } => format!("Right: {name} = {exact} (you said {yours})."),
        Verdict::Wrong { slip, .. } => {
            let slip = slip.map_or(String::new(), |slip| format!(" {}", slip.describe()));
            format!("{name}: you said {yours}; it is {exact}.{slip}")
        }
    }
}

/// The panel's lines at this width.
pub(crate) fn lines(tutor: &Tutor, width: u16) -> Vec<PanelLine> {
    let width_chars = usize::from(width).max(20);
    let plain = |text: &str| -> Vec<PanelLine> {
        wrap_words(text, width_chars)
            .into_iter()
            .map(PanelLine::plain)
            .collect()
    };
    let Some(practice) = tutor.practice.as_ref() else {
        return Vec::new();
    };
    let targets = tutor.practice_targets();
    if targets.is_empty() && tutor.step() == crate::attention::Step::AllHeads {
        // Its maps are computed, but on the Softmax step, where they are predicted.
        return plain(
            "Nothing to predict on this step: it shows every head's weights again, computed \
             on the Softmax step. n goes on · x stops practice.",
        );
    }
    if targets.is_empty() {
        return plain(
            "Nothing to predict on this step: its numbers are given. n goes on · x stops \
             practice.",
        );
    }
    let decimals = tutor.lesson.decimals;
    let mut lines = Vec::new();
    // The last cell done: its verdict and working, also while the cursor waits on the next ?.
    let selected = tutor.selected_cell();
    let shown = practice.feedback.as_ref().filter(|feedback| {
        selected.is_none_or(|cell| cell == feedback.cell || tutor.is_hidden(cell))
    });
    if let Some(feedback) = shown {
        lines.extend(
            wrap_words(&verdict_text(tutor, feedback), width_chars)
                .into_iter()
                .map(|text| PanelLine {
                    text,
                    bold: true,
                    may_cut: false,
                }),
        );
        lines.extend(
            cell_working(tutor, feedback.cell, width)
                .into_iter()
                .map(|text| PanelLine {
                    text,
                    bold: false,
                    may_cut: true,
                }),
        );
    }
    match selected {
        Some(cell) if tutor.is_hidden(cell) => {
            let name = tutor.attention.cell_name(cell);
            lines.extend(plain(&if shown.is_some() {
                format!("Next: {name}. Type your answer and press Enter · t hint · x stop")
            } else {
                // A sinusoidal position has no operands to highlight: its formula is the hint.
                let from = match tutor.attention.derive(cell) {
                    Some(derivation) if derivation.operands().is_empty() => {
                        "from its position (t shows the formula)"
                    }
                    _ => "from the highlighted cells",
                };
                format!(
                    "Work it out {from}, type your answer ({decimals} decimals are enough) and \
                     press Enter · t hint · x stop"
                )
            }));
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
        Some(cell) if targets.contains(&cell.matrix) => {
            if shown.is_none() {
                lines.extend(
                    cell_working(tutor, cell, width)
                        .into_iter()
                        .map(|text| PanelLine {
                            text,
                            bold: false,
                            may_cut: true,
                        }),
                );
            }
        }
        _ => lines.extend(plain(&format!(
            "Move to a ? in {} to predict it; [ ] change matrix.",
            practice_symbols(tutor, &targets)
        ))),
    }
    let count = tutor.practice_count();
    let left = count.here_left;
    // Where the step predicts more than one matrix (Q, K and V), say so: only one is on screen.
    let place = if targets.len() > 1 {
        format!(" in {}", practice_symbols(tutor, &targets))
    } else {
        String::new()
    };
    // A step of several heads, tokens or tiles shows one: the count says which, and where
    // the rest is.
    let score = match &count.part {
        _ if left == 0 && count.elsewhere_left == 0 => {
            format!("This step is done: {}", count.whole)
        }
        Some(part) => {
            let here = if left == 0 {
                format!("{} is done: {}", capitalised(part), count.here)
            } else if count.here.cells() == 0 {
                format!("{}: {left} to predict{place}", capitalised(part))
            } else {
                format!(
                    "{}: {} · {left} to go{place}",
                    capitalised(part),
                    count.here
                )
            };
            if count.elsewhere_left == 0 {
                format!("{here}. The rest of the step is done")
            } else {
                format!("{here}. {}", count.elsewhere_text())
            }
        }
        None if count.here.cells() == 0 => format!("{left} to predict on this step{place}"),
        None => format!("This step: {} · {left} to go{place}", count.here),
    };
    lines.extend(plain(&score));
    lines
}

/// Draws the panel; when the working is too long for it, its last lines are left out so that
/// the verdict, what to do next and the score stay in view.
pub(crate) fn render(tutor: &Tutor, theme: &Theme, area: Rect, buf: &mut Buffer) {
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
    while lines.len() > room {
        match lines.iter().rposition(|line| line.may_cut) {
            Some(index) => {
                lines.remove(index);
            }
            None => break,
        }
    }
    if lines.len() > room && room >= 2 {
        // Still too long: keep the first lines (the verdict) and the last (the score).
        let last = lines.pop();
        lines.truncate(room - 1);
        lines.extend(last);
    }
    for (offset, line) in lines.iter().take(room).enumerate() {
        let style = if line.bold {
            theme.title()
        } else {
            Style::new()
        };
        buf.set_stringn(
            body.x,
            body.y + offset as u16,
            fit(&line.text, usize::from(body.width)),
            usize::from(body.width),
            style,
        );
    }
}
