//! The edge where the app meets a terminal: drawing frames to any writer, carrying out Effects,
//! and the local terminal's event loop.

pub mod local;

use std::io::Write;

use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use crate::app::{Action, App, Effect, SaveFailure, update};
use crate::lesson::{WriteError, write_file};
use crate::ui::{Theme, view};

/// Draws one frame inside synchronized-output mode, so the terminal shows it whole. ratatui
/// sends only the cells that differ from the previous frame.
pub fn draw<W: Write>(
    terminal: &mut Terminal<CrosstermBackend<W>>,
    app: &App,
    theme: &Theme,
) -> std::io::Result<()> {
    crossterm::queue!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    terminal.draw(|frame| view(frame, app, theme))?;
    crossterm::queue!(terminal.backend_mut(), EndSynchronizedUpdate)?;
    terminal.backend_mut().flush()
}

/// Applies an Action and carries out the Effects it returns, feeding their outcomes back in.
pub fn dispatch(app: &mut App, action: Action, save: &mut dyn FnMut(&Effect) -> Action) {
    let mut pending = update(app, action);
    while let Some(effect) = pending.pop() {
        let outcome = save(&effect);
        pending.extend(update(app, outcome));
    }
}

/// Saves to the local disk: atomically, never over an existing file unless asked to.
pub fn save_locally(effect: &Effect) -> Action {
    let Effect::Save {
        path,
        contents,
        replace,
    } = effect;
    if path.is_dir() {
        return Action::Saved(Err(SaveFailure::Other(format!(
            "{} is a folder; type a file name in it, like {}",
            path.display(),
            path.join("my-lesson.toml").display()
        ))));
    }
    let result = match write_file(path, contents, *replace) {
        Ok(()) => {
            tracing::info!(path = %path.display(), "saved an edited lesson");
            Ok(path.clone())
        }
        Err(WriteError::Exists(path)) => Err(SaveFailure::Exists(path)),
        Err(error) => {
            tracing::warn!(%error, "save failed");
            Err(SaveFailure::Other(error.to_string()))
        }
    };
    Action::Saved(result)
}
