//! Keys and clicks to Actions: the one place that decides the key map. It reads crossterm's
//! events, which a local terminal delivers and an SSH channel's bytes are decoded into
//! (`bytes::Decoder`).

pub mod bytes;

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;

use crate::app::{Action, App, Direction, Overlay, Question};
use crate::ui;

/// The keys of a lesson screen, as the help overlay and the README list them.
pub const KEYS: &[(&str, &str)] = &[
    ("n  p  Tab  PgDn  PgUp", "next step, previous step"),
    ("1 … 7", "go to step (numbered in the header)"),
    ("Home  End", "first step, last step"),
    (
        "← ↓ ↑ →  h j k l",
        "move the cell cursor (← at column 1: the token)",
    ),
    ("[  ]", "previous, next matrix on the screen"),
    ("click", "select a cell or a token"),
    ("e  Enter", "edit the number or token; on a computed"),
    ("", "cell, go to what it is computed from"),
    ("u  Ctrl-r", "undo, redo"),
    ("R  r", "reset the lesson; re-roll a generated matrix"),
    ("w", "save the edited lesson as a new file"),
    ("Shift-↑ Shift-↓  wheel", "scroll the narration"),
    ("x", "practice: predict the hidden ?, typing a number"),
    ("X", "practice: only the focus row (X again: all)"),
    ("t", "practice: a hint (again: more, then the answer)"),
    ("f", "in a classroom: go free, or follow again"),
    ("?", "this help"),
    ("q  Esc", "back to the lessons; q there quits"),
    ("Ctrl-c", "quit"),
];

/// The Action an event asks for in the app's current state, if any. `area` is the terminal's
/// size, for finding what a click landed on.
pub fn action_for(event: &Event, app: &App, area: Rect) -> Option<Action> {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => key_action(*key, app),
        Event::Mouse(mouse) => mouse_action(*mouse, app, area),
        Event::Paste(text) if matches!(app.overlay, Overlay::Prompt(_)) => {
            Some(Action::Paste(text.clone()))
        }
        _ => None,
    }
}

fn key_action(key: KeyEvent, app: &App) -> Option<Action> {
    let control = key.modifiers.contains(KeyModifiers::CONTROL);
    if control && matches!(key.code, KeyCode::Char('c')) {
        return Some(Action::Quit);
    }
    match &app.overlay {
        Overlay::Help => match key.code {
            KeyCode::Char('?' | 'q') | KeyCode::Esc | KeyCode::Enter => Some(Action::ToggleHelp),
            _ => None,
        },
        Overlay::Prompt(_) => match key.code {
            KeyCode::Enter => Some(Action::Submit),
            KeyCode::Esc => Some(Action::Cancel),
            KeyCode::Backspace => Some(Action::Backspace),
            KeyCode::Char('u') if control => Some(Action::ClearInput),
            KeyCode::Char(ch) if !control && !key.modifiers.contains(KeyModifiers::ALT) => {
                Some(Action::Type(ch))
            }
            _ => None,
        },
        // The offer to resume is no barrier: Enter takes it, Esc declines it, and any other key
        // does what it does in the lesson (the update declines the offer, then acts on it).
        Overlay::Question(Question::Resume { .. }) => match key.code {
            KeyCode::Enter => Some(Action::Submit),
            KeyCode::Esc => Some(Action::Cancel),
            _ => lesson_key(key, app, control),
        },
        Overlay::Question(_) => match key.code {
            KeyCode::Enter => Some(Action::Submit),
            KeyCode::Esc => Some(Action::Cancel),
            KeyCode::Char(ch) if !control => Some(Action::Answer(ch)),
            _ => None,
        },
        Overlay::None if app.tutor.is_none() => picker_key(key),
        Overlay::None => lesson_key(key, app, control),
    }
}

/// A key on a lesson's screen with nothing on top of it.
fn lesson_key(key: KeyEvent, app: &App, control: bool) -> Option<Action> {
    // On a hidden cell in practice, a number typed is the learner's answer.
    let predicting = app.tutor.as_ref().is_some_and(|tutor| {
        tutor
            .selected_cell()
            .is_some_and(|cell| tutor.is_hidden(cell))
    });
    match key.code {
        KeyCode::Char(ch @ ('0'..='9' | '-' | '.')) if predicting && !control => {
            Some(Action::StartAnswer(ch))
        }
        _ => tutor_key(key, control),
    }
}

fn picker_key(key: KeyEvent) -> Option<Action> {
    Some(match key.code {
        KeyCode::Up | KeyCode::Char('k') => Action::Move(Direction::Up),
        KeyCode::Down | KeyCode::Char('j') => Action::Move(Direction::Down),
        KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => Action::Open,
        KeyCode::Home => Action::FirstStep,
        KeyCode::End => Action::LastStep,
        KeyCode::Char('q') | KeyCode::Esc => Action::Back,
        KeyCode::Char('?') => Action::ToggleHelp,
        KeyCode::Char('f') => Action::ToggleFollow,
        _ => return None,
    })
}

fn tutor_key(key: KeyEvent, control: bool) -> Option<Action> {
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    Some(match key.code {
        KeyCode::Char('r') if control => Action::Redo,
        _ if control => return None,
        KeyCode::Char('n') | KeyCode::Tab | KeyCode::PageDown => Action::NextStep,
        KeyCode::Char('p') | KeyCode::BackTab | KeyCode::PageUp => Action::PreviousStep,
        KeyCode::Char(digit @ '1'..='9') => {
            Action::GoToStep(digit.to_digit(10).unwrap_or(1) as usize)
        }
        KeyCode::Home => Action::FirstStep,
        KeyCode::End => Action::LastStep,
        KeyCode::Up if shift => Action::ScrollNarration(-1),
        KeyCode::Down if shift => Action::ScrollNarration(1),
        KeyCode::Up | KeyCode::Char('k') => Action::Move(Direction::Up),
        KeyCode::Down | KeyCode::Char('j') => Action::Move(Direction::Down),
        KeyCode::Left | KeyCode::Char('h') => Action::Move(Direction::Left),
        KeyCode::Right | KeyCode::Char('l') => Action::Move(Direction::Right),
        KeyCode::Char(']') => Action::NextMatrix,
        KeyCode::Char('[') => Action::PreviousMatrix,
        KeyCode::Char('e') | KeyCode::Enter => Action::Edit,
        KeyCode::Char('u') => Action::Undo,
        KeyCode::Char('R') => Action::Reset,
        KeyCode::Char('r') => Action::Reroll,
        KeyCode::Char('w') => Action::Save,
        KeyCode::Char('?') => Action::ToggleHelp,
        KeyCode::Char('f') => Action::ToggleFollow,
        KeyCode::Char('x') => Action::TogglePractice,
        KeyCode::Char('X') => Action::TogglePracticeRow,
        KeyCode::Char('t') => Action::Hint,
        KeyCode::Char('q') | KeyCode::Esc => Action::Back,
        _ => return None,
    })
}

fn mouse_action(mouse: MouseEvent, app: &App, area: Rect) -> Option<Action> {
    if app.overlay != Overlay::None || !ui::fits(area) {
        return None;
    }
    match (mouse.kind, &app.tutor) {
        (MouseEventKind::Down(MouseButton::Left), Some(tutor)) => {
            let layout = ui::layout::tutor_layout(tutor, area);
            ui::layout::hit(&layout, mouse.column, mouse.row)
                .map(|(matrix, row, col)| Action::Select { matrix, row, col })
        }
        (MouseEventKind::Down(MouseButton::Left), None) => {
            let (list, first) = ui::picker::list_area(app, area);
            let inside = mouse.row >= list.y && mouse.row < list.bottom();
            let index = first + usize::from(mouse.row.saturating_sub(list.y));
            (inside && index < app.picker.len()).then_some(Action::Pick(index))
        }
        (MouseEventKind::ScrollUp, Some(_)) => Some(Action::ScrollNarration(-1)),
        (MouseEventKind::ScrollDown, Some(_)) => Some(Action::ScrollNarration(1)),
        (MouseEventKind::ScrollUp, None) => Some(Action::Move(Direction::Up)),
        (MouseEventKind::ScrollDown, None) => Some(Action::Move(Direction::Down)),
        _ => None,
    }
}
