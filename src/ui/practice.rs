//! The practice panel, in place of the working while the learner predicts: what to type, the
//! hints asked for, the verdict on the last answer (their number beside the exact one, and the
//! slip when it is a common one) with its working, kept while the cursor waits on the next `?`,
//! and the score of the step.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::app::{Feedback, PracticeCount, Tutor, capitalised, practice_symbols};
use crate::attention::number::format_number;
use crate::lesson::text::columns;
use crate::practice::{HintLevel, StepScore, Verdict, hints};

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
    pub(crate) fn plain(text: String) -> PanelLine {
        PanelLine {
            text,
            bold: false,
            may_cut: false,
        }
    }

    pub(crate) fn bold(text: String) -> PanelLine {
        PanelLine {
            text,
            bold: true,
            may_cut: false,
        }
    }

    /// A line of working: the first to go where the panel is short.
    pub(crate) fn working(text: String) -> PanelLine {
        PanelLine {
            text,
            bold: false,
            may_cut: true,
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
    // Where the step predicts more than one matrix (Q, K and V), say so: only one is on screen.
    let place = if targets.len() > 1 {
        format!(" in {}", practice_symbols(tutor, &targets))
    } else {
        String::new()
    };
    lines.extend(
        count_lines(&count, &place, width_chars)
            .into_iter()
            .map(PanelLine::plain),
    );
    lines
}

/// How much of the count's words give way to fit one line, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Brevity {
    Whole,
    /// Without the matrices predicted ("in Q, K and V"): the title and the status name them.
    NoPlace,
    /// The keys as the footer writes them ("< > head, ( ) tile").
    ShortKeys,
    /// "Others" for "other heads and tiles" (a list of numbered heads or tokens is kept).
    ShortOthers,
    /// The part's score as its first tries alone ("3/5 first try").
    FirstTries,
    /// Without the part's score: what is left to predict, and where, is what practice needs
    /// next; the whole step's score is given when it is done.
    NoScore,
}

/// The count of the step's practice (what is left here and elsewhere, the keys that get
/// there) in one line of `width` columns where any of its forms fits, the longest that does;
/// else the shortest, wrapped without parting a key pair ("< >").
fn count_lines(count: &PracticeCount, place: &str, width: usize) -> Vec<String> {
    use Brevity::*;
    let forms = [Whole, NoPlace, ShortKeys, ShortOthers, FirstTries, NoScore];
    if let Some(line) = forms
        .iter()
        .map(|brevity| count_text(count, place, *brevity))
        .find(|line| columns(line) <= width)
    {
        return vec![line];
    }
    // A key pair is one word to the wrapping: a no-break space holds it, a space once wrapped.
    let held = count_text(count, place, NoScore)
        .replace("< >", "<\u{a0}>")
        .replace("( )", "(\u{a0})");
    wrap_words(&held, width)
        .into_iter()
        .map(|line| line.replace('\u{a0}', " "))
        .collect()
}

/// The count's words at one brevity: "Head 1 at tile 2: 3/4 first try · 16 to go in m, l and
/// acc. Other heads and tiles: 140 to go · < > change head, ( ) tile".
fn count_text(count: &PracticeCount, place: &str, brevity: Brevity) -> String {
    let left = count.here_left;
    let place = if brevity >= Brevity::NoPlace {
        ""
    } else {
        place
    };
    let score = |score: &StepScore| -> Option<String> {
        match brevity {
            Brevity::NoScore => None,
            Brevity::FirstTries => Some(format!("{}/{} first try", score.first_try, score.cells())),
            _ => Some(score.to_string()),
        }
    };
    // A step of several heads, tokens or tiles shows one: the count says which, and where
    // the rest is.
    match &count.part {
        _ if left == 0 && count.elsewhere_left == 0 => {
            format!("This step is done: {}", count.whole)
        }
        Some(part) => {
            let part = capitalised(part);
            let here = match score(&count.here) {
                _ if count.here.cells() == 0 && left > 0 => {
                    format!("{part}: {left} to predict{place}")
                }
                Some(score) if left == 0 => format!("{part} is done: {score}"),
                None if left == 0 => format!("{part} is done"),
                Some(score) => format!("{part}: {score} · {left} to go{place}"),
                None => format!("{part}: {left} to go{place}"),
            };
            if count.elsewhere_left == 0 {
                return format!("{here}. The rest of the step is done");
            }
            let numbered = count.elsewhere.chars().any(|ch| ch.is_ascii_digit());
            let elsewhere = if brevity >= Brevity::ShortOthers && !numbered {
                "Others".to_string()
            } else {
                capitalised(&count.elsewhere)
            };
            let keys = if brevity >= Brevity::ShortKeys {
                count.keys.replace("change ", "")
            } else {
                count.keys.to_string()
            };
            format!(
                "{here}. {elsewhere}: {} to go · {keys}",
                count.elsewhere_left
            )
        }
        None if count.here.cells() == 0 => format!("{left} to predict on this step{place}"),
        None => match score(&count.here) {
            Some(score) => format!("This step: {score} · {left} to go{place}"),
            None => format!("This step: {left} to go{place}"),
        },
    }
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
    cut_to(&mut lines, room);
    if lines.len() > room && room >= 2 {
        // Still too long: keep the first lines (the verdict) and the last (the score).
        let last = lines.pop();
        lines.truncate(room - 1);
        lines.extend(last);
    }
    draw_panel_lines(&lines, theme, body, buf);
}

/// Leaves out the lines that may be cut (working), the last first, until the panel's lines
/// fit `room` rows or none is left to cut.
pub(crate) fn cut_to(lines: &mut Vec<PanelLine>, room: usize) {
    while lines.len() > room {
        match lines.iter().rposition(|line| line.may_cut) {
            Some(index) => {
                lines.remove(index);
            }
            None => break,
        }
    }
}

/// Draws a panel's lines into `body`, a row each, the bold ones in the title's style.
pub(crate) fn draw_panel_lines(lines: &[PanelLine], theme: &Theme, body: Rect, buf: &mut Buffer) {
    for (offset, line) in lines.iter().take(usize::from(body.height)).enumerate() {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn count() -> PracticeCount {
        PracticeCount {
            part: Some("head 1 at tile 2".to_string()),
            here_left: 16,
            here: StepScore {
                first_try: 1,
                on_retry: 1,
                with_hints: 1,
                revealed: 1,
            },
            elsewhere_left: 140,
            elsewhere: "other heads and tiles".to_string(),
            keys: "< > change head, ( ) tile",
            whole: StepScore::default(),
        }
    }

    #[test]
    fn the_count_gives_up_words_before_numbers_and_keeps_every_form_it_can_whole() {
        let place = " in m, rescale, l and acc";
        let whole = count_lines(&count(), place, 200);
        assert_eq!(
            whole,
            [
                "Head 1 at tile 2: 1/4 first try · 1 on retry · 1 with hints · 1 revealed · 16 to \
              go in m, rescale, l and acc. Other heads and tiles: 140 to go · < > change head, \
              ( ) tile"
            ]
        );
        assert_eq!(
            count_lines(&count(), place, 78),
            ["Head 1 at tile 2: 16 to go. Others: 140 to go · < > head, ( ) tile"]
        );
        // Heads named by number stay named; the part's first tries stay where they fit.
        let mut numbered = count();
        numbered.elsewhere = "heads 2–4".to_string();
        numbered.keys = "< > change head";
        assert_eq!(
            count_lines(&numbered, "", 78),
            ["Head 1 at tile 2: 1/4 first try · 16 to go. Heads 2–4: 140 to go · < > head"]
        );
    }

    #[test]
    fn a_count_too_long_for_any_line_wraps_without_parting_a_key_pair() {
        for width in 20..60 {
            let lines = count_lines(&count(), "", width);
            let joined = lines.join(" ");
            assert!(joined.contains("< > head, ( ) tile"), "{lines:?}");
            assert!(joined.contains("16 to go") && joined.contains("140 to go"));
            for line in &lines {
                assert!(columns(line) <= width, "{line}");
                assert!(!line.ends_with('<') && !line.ends_with('('), "{lines:?}");
            }
        }
    }
}
