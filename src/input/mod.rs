//! Keys and clicks to Actions, by the one key map (`crate::keymap`). It reads crossterm's events, which
//! a local terminal delivers and an SSH channel's bytes are decoded into (`bytes::Decoder`).

pub mod bytes;

use crossterm::event::{Event, KeyEventKind, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use crate::app::{Action, App, Overlay};
use crate::keymap::{self, Code, Does};
use crate::ui;

/// The Action an event asks for in the app's current state, if any. `area` is the terminal's
/// size, for finding what a click landed on.
pub fn action_for(event: &Event, app: &App, area: Rect) -> Option<Action> {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => keymap::key_action(*key, app),
        Event::Mouse(mouse) => mouse_action(*mouse, app, area),
        Event::Paste(text) if matches!(app.overlay, Overlay::Prompt(_)) => {
            Some(Action::Paste(text.clone()))
        }
        _ => None,
    }
}

fn mouse_action(mouse: MouseEvent, app: &App, area: Rect) -> Option<Action> {
    if app.overlay != Overlay::None || !ui::fits(area) {
        return None;
    }
    let code = match mouse.kind {
        MouseEventKind::Down(MouseButton::Left) => Code::Click,
        MouseEventKind::ScrollUp => Code::WheelUp,
        MouseEventKind::ScrollDown => Code::WheelDown,
        _ => return None,
    };
    match keymap::gesture(code, app)? {
        Does::Act(action) => Some(action('\0')),
        Does::ByPosition => clicked(mouse, app, area),
    }
}

/// What a click at the mouse's place selects: a cell or token label, or a lesson in the list.
fn clicked(mouse: MouseEvent, app: &App, area: Rect) -> Option<Action> {
    match app.tutor() {
        Some(tutor) => {
            let layout = ui::layout::tutor_layout(tutor, area);
            ui::layout::hit(&layout, mouse.column, mouse.row)
                .map(|(matrix, row, col)| Action::Select { matrix, row, col })
        }
        None => {
            let (list, first) = ui::picker::list_area(app, area);
            let inside = mouse.row >= list.y && mouse.row < list.bottom();
            let index = first + usize::from(mouse.row.saturating_sub(list.y));
            (inside && index < app.picker.len()).then_some(Action::Pick(index))
        }
    }
}
