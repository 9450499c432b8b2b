//! The view: a pure function from the app's state to a frame. It draws; it never computes a
//! number (the engine does) and never changes the state.

mod all_heads;
pub mod formula;
pub(crate) mod generation;
mod header;
mod lab;
pub mod layout;
mod matrix;
pub(crate) mod notes;
pub mod online;
pub mod picker;
mod poll;
mod practice;
pub mod svg;
mod text;
pub(crate) mod theme;
mod training;
mod tutor_screen;
pub(crate) use tutor_screen::{query_key_biases, value_biases};
mod working;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

use crate::app::{App, Audience, Classroom, Overlay, PromptFor, Question, Screen};
use crate::keymap::{self, Footer};
use crate::lesson::text::{columns, is_hidden, printable, printable_path};

pub(crate) use layout::{MIN_HEIGHT, MIN_WIDTH};
pub use theme::Theme;
pub use tutor_screen::{narration_lines, narration_text};

use text::fit;

/// Whether the tutor can draw in this area.
pub(crate) fn fits(area: Rect) -> bool {
    area.width >= MIN_WIDTH && area.height >= MIN_HEIGHT
}

/// Draws the whole screen for the app's state.
pub fn view(frame: &mut Frame, app: &App, theme: &Theme) {
    draw(frame.area(), frame.buffer_mut(), app, theme);
    // The last word on what reaches the terminal: text from lessons, file names and students
    // is made printable where it is quoted, and this catches whatever a future screen forgets.
    nothing_hidden(frame.buffer_mut());
}

/// Replaces any cell that would send a control, bidi or invisible character to the terminal
/// with U+FFFD, which shows that something was there.
fn nothing_hidden(buf: &mut Buffer) {
    for cell in &mut buf.content {
        if cell.symbol().chars().any(is_hidden) {
            cell.set_symbol("\u{fffd}");
        }
    }
}

fn draw(area: Rect, buf: &mut Buffer, app: &App, theme: &Theme) {
    if !fits(area) {
        too_small(area, buf);
        // A question asked before the resize (unsaved edits on Ctrl-c) must still be seen.
        if area.height >= 3 && app.overlay != Overlay::None {
            status_line(
                app,
                theme,
                Rect::new(area.x, area.bottom() - 1, area.width, 1),
                buf,
            );
        }
        return;
    }
    let status = Rect::new(area.x, area.bottom() - 1, area.width, 1);
    match &app.screen {
        Screen::Tutor(tutor) => {
            let layout = layout::tutor_layout(tutor, area);
            tutor_screen::render(tutor, &layout, theme, buf);
        }
        Screen::Lab(screen) => lab::render(screen, theme, area, buf),
        Screen::Training => {
            if let Some(screen) = app.training() {
                training::render(screen, theme, area, buf);
            }
        }
        Screen::Picker => picker::render(app, theme, area, buf),
    }
    status_line(app, theme, status, buf);
    if app.overlay == Overlay::Help {
        help(app, theme, area, buf);
    }
}

fn too_small(area: Rect, buf: &mut Buffer) {
    let text = vec![
        Line::from("attn-tutor needs a bigger terminal."),
        Line::from(""),
        Line::from(format!(
            "Make the terminal at least {MIN_WIDTH}×{MIN_HEIGHT}; it is {}×{} now.",
            area.width, area.height
        )),
        Line::from("(A smaller font works too.)  Ctrl-c quits."),
    ];
    let top = area.height.saturating_sub(4) / 2;
    Paragraph::new(text)
        .alignment(Alignment::Center)
        .wrap(Wrap { trim: true })
        .render(
            Rect::new(area.x, area.y + top, area.width, area.height - top),
            buf,
        );
}

/// In a classroom, the start of the bottom line says whether this student follows the
/// presenter, or tells the presenter how many follow.
fn classroom_badge(app: &App) -> Option<String> {
    match app.classroom.as_ref()? {
        Classroom::Student { follow, .. } => Some(format!(" {} ", follow.word())),
        Classroom::Presenter {
            audience:
                Audience {
                    connected,
                    following,
                    ..
                },
            ..
        } => Some(format!(
            " {connected} student{} · {following} following ",
            if *connected == 1 { "" } else { "s" }
        )),
    }
}

/// The bottom line: a prompt or question being answered, else a message, else key hints. In a
/// classroom a badge starts the line. A message or question too long for the line takes the
/// lines above it, broken between words, its end kept together on the bottom line.
fn status_line(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let badge = match classroom_badge(app) {
        Some(badge) if matches!(app.overlay, Overlay::None | Overlay::Help) => {
            let badge = fit(&badge, usize::from(area.width / 2));
            buf.set_stringn(
                area.x,
                area.y,
                &badge,
                usize::from(area.width),
                theme.cursor(),
            );
            columns(&badge) as u16
        }
        _ => 0,
    };
    let width = usize::from(area.width);
    // One column of margin on the left, as the key hints have.
    let room = width.saturating_sub(1);
    let message = app.status.as_ref().map(|status| {
        let style = if status.is_error {
            theme.error()
        } else {
            Style::new()
        };
        (status.text.as_str(), style)
    });
    match (&app.overlay, app.tutor()) {
        (
            Overlay::Prompt(crate::app::Prompt {
                purpose: PromptFor::PollAnswer(_),
                input,
            }),
            _,
        ) => {
            let name = app
                .polling
                .poll
                .as_ref()
                .map_or(String::new(), |poll| poll.name.clone());
            prompt_line(
                &format!("Poll: {name} = "),
                input,
                message,
                theme,
                area,
                buf,
            );
        }
        (
            Overlay::Prompt(crate::app::Prompt {
                purpose: PromptFor::HeadText,
                input,
            }),
            _,
        ) => {
            let symbols: usize = app
                .training()
                .map_or(0, |run| run.config().model.vocabulary);
            let question = format!(
                "Text (symbols {} to {}, spaces between): ",
                crate::train::symbol(0),
                crate::train::symbol(symbols.saturating_sub(1))
            );
            prompt_line(&question, input, message, theme, area, buf);
        }
        (Overlay::Prompt(prompt), Some(tutor)) => {
            let question = match &prompt.purpose {
                PromptFor::Cell(cell) => {
                    let now = tutor.attention.value(*cell).unwrap_or_default();
                    format!(
                        "{} (now {}) = ",
                        tutor.attention.cell_name(*cell),
                        crate::attention::number::format_number(now, 6)
                    )
                }
                PromptFor::Label(tokens, row) => {
                    let now = tokens
                        .in_lesson(&tutor.lesson)
                        .get(*row)
                        .map_or("", String::as_str);
                    let noun = tokens.title(tutor.lesson.is_cross());
                    format!("{noun} {} (now {now}) = ", row + 1)
                }
                PromptFor::SavePath => "Save as: ".to_string(),
                PromptFor::LearningRate => {
                    format!("η (now {}) = ", crate::app::as_typed(tutor.learning_rate))
                }
                PromptFor::Answer(cell) => {
                    format!("Your answer: {} = ", tutor.attention.cell_name(*cell))
                }
                // Drawn above, with or without a lesson.
                PromptFor::PollAnswer(_) | PromptFor::HeadText => String::new(),
            };
            prompt_line(&question, &prompt.input, message, theme, area, buf);
        }
        (Overlay::Question(question), tutor) => {
            let text = match question {
                Question::LeaveUnsaved(_) if !app.can_save => {
                    "You have unsaved edits, which end with this session. d discard them · Esc stay"
                        .to_string()
                }
                Question::LeaveUnsaved(_) => {
                    "You have unsaved edits. w save them · d discard them · Esc stay".to_string()
                }
                Question::EndClass => {
                    let Audience {
                        connected: students,
                        unsaved,
                        ..
                    } = match &app.classroom {
                        Some(Classroom::Presenter { audience, .. }) => *audience,
                        _ => Audience::default(),
                    };
                    let plural = |count: usize, one: &'static str, many: &'static str| {
                        if count == 1 { one } else { many }
                    };
                    // Short enough for one line at 80 columns.
                    match unsaved {
                        0 => format!(
                            "End the class for {students} connected {}? y end it · n stay",
                            plural(students, "student", "students")
                        ),
                        unsaved => format!(
                            "End the class for {students} {} ({unsaved} would lose unsaved \
                             edits)? y end it · n stay",
                            plural(students, "student", "students")
                        ),
                    }
                }
                // Short enough for one line at 80 columns.
                Question::FollowAgain => "Follow the presenter again, losing your unsaved \
                     edits? y follow · n stay free"
                    .to_string(),
                Question::TooLarge { keep } => format!(
                    "k keep the generator of {} (drops your edits to it) · Esc don't save",
                    matrix_list(keep)
                ),
                Question::StopTraining => match app.training() {
                    // One line at 80 columns for runs of up to 99,999 steps.
                    Some(run) => format!(
                        "Quit? Training stops at step {} of {}{}. y quit · n go on",
                        run.steps_done(),
                        run.steps(),
                        if run.output().is_some() {
                            ", no model written"
                        } else {
                            ""
                        }
                    ),
                    None => String::new(),
                },
                Question::Replace { path } => format!(
                    "{} exists. Replace it? y replace · n keep it",
                    printable_path(path)
                ),
                Question::Resume { step_index } => match tutor {
                    Some(tutor) => format!(
                        "Last time you stopped at step {} ({}). Enter: go there · Esc: start here",
                        step_index + 1,
                        tutor.steps[(*step_index).min(tutor.steps.len() - 1)].title()
                    ),
                    None => String::new(),
                },
                Question::JumpTo { from, to } => match tutor {
                    Some(tutor) => format!(
                        "{} is computed, not typed in. Enter: go to {} · Esc stay",
                        tutor.attention.cell_name(*from),
                        tutor.attention.cell_name(*to)
                    ),
                    None => String::new(),
                },
            };
            let lines = text::wrap_to_end(&text, room, room, 2);
            let top = draw_lines(&lines, theme.title(), area.y, area, 0, buf);
            if let Some((text, style)) = message {
                let lines = text::wrap_to_end(text, room, room, 2);
                draw_lines(&lines, style, top.saturating_sub(1), area, 0, buf);
            }
        }
        _ => match message {
            Some((text, style)) => {
                let last_room = room.saturating_sub(usize::from(badge));
                if badge > 0 && columns(text) > last_room {
                    // A message that wraps is read from its top line down, so it does not
                    // go around the badge: it takes the lines above, the badge its own.
                    let lines = text::wrap_to_end(text, room, room, 3);
                    draw_lines(&lines, style, area.y.saturating_sub(1), area, 0, buf);
                } else {
                    let lines = text::wrap_to_end(text, room, last_room, 3);
                    draw_lines(&lines, style, area.y, area, badge, buf);
                }
            }
            None if poll_line(app).is_some() => {
                let line = poll_line(app).unwrap_or_default();
                let room = width.saturating_sub(usize::from(badge) + 1);
                buf.set_stringn(
                    area.x + badge + 1,
                    area.y,
                    fit(&line, room),
                    room,
                    theme.title(),
                );
            }
            None => {
                let hints = fit_hints(
                    &keymap::app_hint_line(app),
                    width.saturating_sub(usize::from(badge)),
                );
                buf.set_stringn(
                    area.x + badge,
                    area.y,
                    hints,
                    width.saturating_sub(usize::from(badge)),
                    theme.muted(),
                );
            }
        },
    }
}

/// A line typed on the status line: the question, what is typed (its end, where the typing
/// happens), the cursor and the keys; a message about it on the lines above.
fn prompt_line(
    question: &str,
    input: &str,
    message: Option<(&str, Style)>,
    theme: &Theme,
    area: Rect,
    buf: &mut Buffer,
) {
    let width = usize::from(area.width);
    let room = width.saturating_sub(1);
    if let Some((text, style)) = message {
        let lines = text::wrap_to_end(text, room, room, 2);
        draw_lines(&lines, style, area.y.saturating_sub(1), area, 0, buf);
    }
    let hint = format!(" {}", keymap::hint_line(Footer::Prompt));
    let room = width.saturating_sub(columns(question) + columns(&hint) + 1);
    let typed: String = {
        let chars: Vec<char> = input.chars().collect();
        let mut shown = String::new();
        for ch in chars.iter().rev() {
            if columns(&shown) + 1 >= room {
                break;
            }
            // A pasted bidi or zero-width character is named, as text quoted elsewhere is:
            // drawn as it is, it would join the character before it, whose cell the screen's
            // last check (`nothing_hidden`) then blanks to U+FFFD.
            shown.insert_str(0, &printable(&ch.to_string()));
        }
        shown
    };
    let line = Line::from(vec![
        Span::styled(question.to_string(), theme.title()),
        Span::raw(typed),
        Span::styled("▏", theme.cursor()),
        Span::styled(hint, theme.muted()),
    ]);
    buf.set_stringn(area.x, area.y, " ".repeat(width), width, Style::new());
    line.render(area, buf);
}

/// The class's poll on the bottom line, where the screen has no poll panel (the lesson list,
/// the lab, another lesson, All heads) and nothing else is said there.
fn poll_line(app: &App) -> Option<String> {
    let poll = app.polling.poll.as_ref()?;
    let tutor = app.tutor();
    if tutor.is_some_and(crate::app::Tutor::shows_poll_panel) {
        return None;
    }
    let presenter = match &app.classroom {
        Some(Classroom::Presenter { audience, .. }) => Some(*audience),
        _ => None,
    };
    Some(match &poll.reveal {
        // On the lesson asked about, its steps say what they say: the reveal is on its cell.
        Some(_) if tutor.is_some_and(|tutor| tutor.name == poll.lesson) => return None,
        Some(reveal) => format!(
            "Poll revealed: {} = {} ({} of {} right; on {} of {})",
            poll.name,
            crate::attention::number::format_number(reveal.truth, poll.decimals),
            reveal.votes.last().map_or(0, |tally| tally.right),
            reveal.votes.last().map_or(0, |tally| tally.answers.len()),
            poll.step,
            poll.lesson
        ),
        None => match presenter {
            Some(audience) => format!(
                "Poll: {} = ? · {} of {} answered · a reveals",
                poll.name, audience.answered, audience.connected
            ),
            None => format!(
                "Poll: {} = ? ({}, {}): type a number",
                poll.name, poll.lesson, poll.step
            ),
        },
    })
}

/// Key hints in `width` columns: whole hints are left out from the end, "? help" kept, rather
/// than one being cut.
fn fit_hints(hints: &str, width: usize) -> String {
    let mut items: Vec<&str> = hints.trim_start().split(" · ").collect();
    while columns(&format!(" {}", items.join(" · "))) > width && items.len() > 1 {
        let drop = items
            .iter()
            .rposition(|item| !item.contains("? help"))
            .unwrap_or(0);
        items.remove(drop);
    }
    fit(&format!(" {}", items.join(" · ")), width)
}

/// `W_q`, `X and W_q`, `X, W_q and W_k`.
fn matrix_list(names: &[crate::attention::MatrixName]) -> String {
    let symbols: Vec<&str> = names.iter().map(|name| name.symbol()).collect();
    match symbols.split_last() {
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Draws `lines` so that the last is on row `bottom`, each above it on the row before; the
/// bottom one starts after the badge. Returns the top row used.
fn draw_lines(
    lines: &[String],
    style: Style,
    bottom: u16,
    area: Rect,
    badge: u16,
    buf: &mut Buffer,
) -> u16 {
    let width = usize::from(area.width);
    let count = lines.len() as u16;
    let top = (bottom + 1).saturating_sub(count).max(buf.area.y);
    for (offset, line) in lines.iter().enumerate() {
        let row = (bottom + 1 + offset as u16).checked_sub(count);
        let Some(row) = row.filter(|row| *row >= buf.area.y) else {
            continue;
        };
        let x = if row == bottom {
            area.x + badge
        } else {
            area.x
        };
        let room = width.saturating_sub(usize::from(x - area.x));
        let text = fit(&format!(" {line}"), room);
        buf.set_stringn(x, row, format!("{text:<room$}"), room, style);
    }
    top
}

fn help(app: &App, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let rows = keymap::help_rows_for(app);
    let key_width = rows
        .iter()
        .map(|(keys, _)| columns(keys))
        .max()
        .unwrap_or(10);
    let width = (area.width - 4).min(96);
    // Inside the border, a row's words wrap under themselves rather than run past it.
    let inner_width = usize::from(width.saturating_sub(2));
    let words_width = inner_width.saturating_sub(key_width + 4).max(10);
    let mut lines: Vec<Line> = rows
        .iter()
        .flat_map(|(keys, what)| {
            text::wrap_words(what, words_width)
                .into_iter()
                .enumerate()
                .map(move |(index, words)| {
                    let keys = if index == 0 { keys.as_str() } else { "" };
                    Line::from(vec![
                        Span::styled(format!(" {keys:<key_width$}  "), theme.title()),
                        Span::raw(words),
                    ])
                })
        })
        .collect();
    if let Some(Classroom::Presenter { join, host_key, .. }) = &app.classroom {
        // One line per way in: the ssh command, the browser page; then the host key students'
        // ssh asks them to check.
        let ways = join
            .lines()
            .enumerate()
            .map(|(index, way)| {
                let lead = if index == 0 {
                    "Students join with:"
                } else {
                    "or open:"
                };
                (lead, way)
            })
            .chain(host_key.as_deref().map(|key| ("ssh host key:", key)))
            .map(|(lead, way)| {
                Line::from(Span::styled(format!(" {lead:>19}  {way}"), theme.title()))
            })
            .collect::<Vec<_>>();
        lines.splice(0..0, ways);
    }
    if app.tutor().is_none() && app.lab().is_none() && app.training_on_screen().is_none() {
        let told = text::wrap_words(&keymap::picker_help(), inner_width.saturating_sub(1));
        lines.splice(
            0..0,
            told.into_iter()
                .map(|line| Line::from(Span::styled(format!(" {line}"), theme.muted()))),
        );
    }
    let height = (lines.len() as u16 + 2).min(area.height - 2);
    let popup = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    );
    // A column cleared beside each side border: what is under the overlay (a lesson's line
    // cut with "…") does not touch it from outside, as if it ran through it.
    let margin = Rect::new(
        popup.x.saturating_sub(1).max(area.x),
        popup.y,
        (popup.width + 2).min(
            area.right()
                .saturating_sub(popup.x.saturating_sub(1).max(area.x)),
        ),
        popup.height,
    );
    Clear.render(margin, buf);
    // Taller than the terminal: the rows scroll, and the border says which are shown.
    let shown = usize::from(height.saturating_sub(2));
    let hidden = lines.len().saturating_sub(shown);
    let first = usize::from(app.help_scroll).min(hidden);
    let bottom = if hidden == 0 {
        format!(" {} closes ", keymap::CLOSE_HELP.short)
    } else {
        format!(
            " {} closes · {} rows {}–{} of {} ",
            keymap::CLOSE_HELP.short,
            keymap::SCROLL_HELP.short,
            first + 1,
            first + shown,
            lines.len()
        )
    };
    let block = Block::new()
        .borders(Borders::ALL)
        .title(Span::styled(" Keys ", theme.title()))
        .title_bottom(Span::styled(bottom, theme.muted()));
    let inner = block.inner(popup);
    block.render(popup, buf);
    Paragraph::new(lines.split_off(first)).render(inner, buf);
}

#[cfg(test)]
mod tests {
    use super::fit_hints;

    #[test]
    fn key_hints_too_long_leave_out_whole_hints_and_keep_help() {
        let hints = " n/p step · ←↓↑→ cell · e edit · ? help · q back";
        assert_eq!(fit_hints(hints, 80), hints);
        assert_eq!(fit_hints(hints, 30), " n/p step · ←↓↑→ cell · ? help");
        assert_eq!(fit_hints(hints, 20), " n/p step · ? help");
    }
}
