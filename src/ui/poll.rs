//! The poll panel, in place of the working while the class's poll is on the lesson shown: the
//! question until the reveal (with the student's answer, or the presenter's count of answers),
//! then the truth, how many were right, the slips, the histogram of the answers (both votes side
//! by side on a second vote) and the cell's working as usual.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::{Bin, Poll, PollOnScreen, Reveal, Tally, Tutor, histogram};
use crate::attention::number::format_number;
use crate::lesson::text::columns;
use crate::practice::tolerance;

use super::practice::{PanelLine, cut_to, draw_panel_lines};
use super::text::{fit, wrap_words};
use super::theme::Theme;
use super::working::{cell_working, rule_line};

/// The most bars a histogram has, where the panel has the rows.
const MOST_BARS: usize = 8;

/// The fewest: a reveal always shows its truth among a few bars.
const FEWEST_BARS: usize = 3;

/// What marks the truth's bar.
const TRUTH_MARK: &str = " ◀ truth";

/// What marks another bar of right answers (right to the decimals typed).
const RIGHT_MARK: &str = " ◀ right";

/// The panel's title.
pub(crate) fn title(shown: &PollOnScreen) -> String {
    let poll = &shown.poll;
    let vote = if poll.vote == 2 { ", second vote" } else { "" };
    match &poll.reveal {
        Some(reveal) => format!(
            "Poll{vote}: {} = {}",
            poll.name,
            format_number(reveal.truth, poll.decimals)
        ),
        None => format!("Poll{vote}: {} = ?", poll.name),
    }
}

/// The panel's lines at this width, with a histogram of at most `bars` bars.
pub(crate) fn lines(tutor: &Tutor, width: u16, bars: usize) -> Vec<PanelLine> {
    let Some(shown) = &tutor.poll else {
        return Vec::new();
    };
    let width = usize::from(width).max(20);
    let (plain, bold) = (PanelLine::plain, PanelLine::bold);
    let wrapped = |text: &str, line: fn(String) -> PanelLine| -> Vec<PanelLine> {
        wrap_words(text, width).into_iter().map(line).collect()
    };
    let poll = &shown.poll;
    let Some(reveal) = &poll.reveal else {
        return match shown.answered {
            Some((answered, connected)) => [
                wrapped(
                    &format!(
                        "Asked the class for {} ({}): {answered} of {connected} answered.",
                        poll.name, poll.step
                    ),
                    bold,
                ),
                wrapped(
                    "Hidden on every screen, this one too, until the reveal. a reveals the \
                     answers.",
                    plain,
                ),
            ]
            .concat(),
            None => [
                wrapped(
                    &format!(
                        "The presenter asks the class: what is {} ({})?",
                        poll.name, poll.step
                    ),
                    bold,
                ),
                wrapped(
                    "Work it out, type your number and press Enter. You may change it until \
                     the reveal.",
                    plain,
                ),
                wrapped(
                    &match &shown.mine {
                        Some(typed) => format!("Your answer: {typed} (in)"),
                        None => "No answer from you yet.".to_string(),
                    },
                    bold,
                ),
            ]
            .concat(),
        };
    };
    let mut lines = wrapped(&right_words(poll, reveal), bold);
    if let Some(last) = reveal.votes.last()
        && !last.slips.is_empty()
    {
        let slips: Vec<String> = last
            .slips
            .iter()
            .map(|(kind, count)| format!("{}: {count}", kind.short()))
            .collect();
        let which = if reveal.votes.len() > 1 {
            " at the second vote"
        } else {
            ""
        };
        lines.extend(wrapped(
            &format!("Slips{which}: {}", slips.join(" · ")),
            plain,
        ));
    }
    let bins = histogram(reveal, poll.decimals, bars.clamp(FEWEST_BARS, MOST_BARS));
    lines.extend(histogram_lines(&bins, reveal.votes.len(), width));
    lines.extend(
        cell_working(tutor, poll.cell, width as u16)
            .into_iter()
            .map(PanelLine::working),
    );
    lines
}

/// "Right: 7 of 12 (…)", or both votes' counts on a second vote. Right is as practice mode
/// judges a prediction: within half a unit of the lesson's last decimal, or of the last decimal
/// typed (0.707 for 1/√2 where the lesson shows 0.7071).
fn right_words(poll: &Poll, reveal: &Reveal) -> String {
    let within = format_number(tolerance(poll.decimals), poll.decimals + 1);
    let judged = format!("within ±{within}, or to the decimals typed");
    let count = |tally: &Tally| format!("{} of {}", tally.right, tally.answers.len());
    match reveal.votes.as_slice() {
        [.., last] if last.answers.is_empty() => "No answers came in.".to_string(),
        [first, second] => format!(
            "Right: {} at the first vote, {} at the second ({judged}).",
            count(first),
            count(second)
        ),
        [only] => format!("Right: {} ({judged}).", count(only)),
        _ => String::new(),
    }
}

/// The histogram's rows: a label, a bar and a count for each vote, the truth's row marked.
fn histogram_lines(bins: &[Bin], votes: usize, width: usize) -> Vec<PanelLine> {
    let label_width = bins
        .iter()
        .map(|bin| columns(&bin.label))
        .max()
        .unwrap_or(0);
    let most = bins
        .iter()
        .flat_map(|bin| bin.counts.iter().copied())
        .max()
        .unwrap_or(0);
    let digits = most.to_string().len();
    let mark = columns(TRUTH_MARK);
    // label, then per vote: space, bar, space, count; a separator between votes; the mark.
    let fixed = label_width + votes * (2 + digits) + (votes - 1) * 2 + mark;
    let bar_width = (width.saturating_sub(fixed) / votes.max(1)).clamp(1, 40);
    let bar = |count: usize| -> String {
        if most == 0 || count == 0 {
            return String::new();
        }
        let length = (count * bar_width).div_ceil(most).max(1);
        "█".repeat(length)
    };
    let mut lines = Vec::new();
    if votes == 2 {
        lines.push(PanelLine::plain(format!(
            "{:label_width$}  {:<w$} │ {}",
            "",
            fit("first vote", bar_width + 1 + digits),
            "second vote",
            w = bar_width + 1 + digits
        )));
    }
    for bin in bins {
        let parts: Vec<String> = bin
            .counts
            .iter()
            .map(|count| format!("{:<bar_width$} {count:>digits$}", bar(*count)))
            .collect();
        let text = format!(
            "{:>label_width$} {}{}",
            bin.label,
            parts.join(" │ "),
            if bin.truth {
                TRUTH_MARK
            } else if bin.right {
                RIGHT_MARK
            } else {
                ""
            }
        );
        lines.push(PanelLine {
            text: text.trim_end().to_string(),
            bold: bin.truth,
            may_cut: false,
        });
    }
    lines
}

/// Draws the panel in the working's place.
pub(crate) fn render(tutor: &Tutor, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let Some(shown) = &tutor.poll else {
        return;
    };
    if area.height < 2 {
        return;
    }
    rule_line(&title(shown), theme, area, buf);
    let body = Rect::new(
        area.x + 1,
        area.y + 1,
        area.width.saturating_sub(2),
        area.height - 1,
    );
    let room = usize::from(body.height);
    // The bars take the rows the words and the working leave, within their limits.
    let words = lines(tutor, body.width, FEWEST_BARS)
        .iter()
        .filter(|line| !line.may_cut)
        .count()
        .saturating_sub(FEWEST_BARS);
    let bars = room.saturating_sub(words).clamp(FEWEST_BARS, MOST_BARS);
    let mut lines = lines(tutor, body.width, bars);
    cut_to(&mut lines, room);
    draw_panel_lines(&lines, theme, body, buf);
}

/// The rows the panel asks for at a width: its title, its words, the most bars and the working.
pub(crate) fn need(tutor: &Tutor, width: u16) -> u16 {
    lines(tutor, width, MOST_BARS).len() as u16 + 1
}
