//! The edge where the app meets a terminal: drawing frames to any writer, carrying out Effects,
//! and the local terminal's event loop.

pub mod channel;
mod diff;
pub(crate) mod local;
pub(crate) mod record;
pub mod training;

use std::io::Write;
use std::sync::Arc;

use crossterm::terminal::{BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate};
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::buffer::Buffer;

use crate::app::{Action, App, Effect, SaveFailure, update};
use crate::attention::Step;
use crate::lesson::text::printable_path;
use crate::lesson::{WriteError, write_file};
use crate::ui::{Theme, view};

/// Which screen is showing, coarsely: when it changes, nearly every cell changes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ScreenId {
    lesson: Option<String>,
    step: Option<Step>,
}

impl ScreenId {
    fn of(app: &App) -> ScreenId {
        ScreenId {
            lesson: app.tutor().map(|tutor| tutor.name.clone()),
            step: app.tutor().map(|tutor| tutor.step()),
        }
    }
}

/// What a terminal shows: a screen drawn for it, or one drawn once and shown by many (a class's
/// followers), which is not copied for each of them.
#[derive(Debug)]
enum Shown {
    Own(Buffer),
    Shared(Arc<Buffer>),
}

impl Shown {
    fn buffer(&self) -> &Buffer {
        match self {
            Shown::Own(buffer) => buffer,
            Shown::Shared(buffer) => buffer,
        }
    }
}

/// Draws frames for one terminal, remembering which screen it showed last and what is on it.
#[derive(Debug, Default)]
pub struct Painter {
    last: Option<ScreenId>,
    /// The terminal's contents as the last frame left them; `None` before the first frame,
    /// which goes to a blank terminal.
    shown: Option<Shown>,
    /// The terminal's own screen, kept when it took a shared one (`adopt`), to be drawn into
    /// again at its next frame of its own: at a step change 500 followers would otherwise each
    /// drop a screen, and allocate a blank one at their next key.
    spare: Option<Buffer>,
    /// Blank screens allocated for ratatui to draw into, counted for the tests.
    blanks: usize,
    /// The bytes of a frame, gathered before they are written.
    bytes: Vec<u8>,
}

impl Painter {
    /// Draws one frame inside synchronized-output mode, so the terminal shows it whole. Only
    /// the cells that differ from what the terminal shows are sent (see `diff`); on a change of
    /// screen (another step or lesson) clearing first and painting the new screen is smaller
    /// than that diff, which must also blank every old cell.
    pub fn draw<B: Backend<Error = std::io::Error> + Write>(
        &mut self,
        terminal: &mut Terminal<B>,
        app: &App,
        theme: &Theme,
    ) -> std::io::Result<()> {
        self.draw_with(terminal, app, |frame| view(frame, app, theme))
    }

    /// Whether the next frame of `app` repaints the whole screen (another step or lesson than
    /// the last frame's): its bytes then do not depend on what the terminal showed before.
    pub(crate) fn repaints(&self, app: &App) -> bool {
        self.last
            .as_ref()
            .is_some_and(|last| *last != ScreenId::of(app))
    }

    /// As `draw`, with the screen of `app` filled in by `fill` (`view`, or a copy of the same
    /// screen drawn for another terminal).
    pub(crate) fn draw_with<B: Backend<Error = std::io::Error> + Write>(
        &mut self,
        terminal: &mut Terminal<B>,
        app: &App,
        fill: impl FnOnce(&mut ratatui::Frame),
    ) -> std::io::Result<()> {
        let changed = self.repaints(app);
        self.last = Some(ScreenId::of(app));
        // ratatui's own draw would diff with its previous frame and write the changes its way;
        // the frame is rendered into its buffer here and the changes written by `diff`.
        terminal.autoresize()?;
        fill(&mut terminal.get_frame());
        let next = terminal.current_buffer_mut();
        let area = next.area;
        crossterm::queue!(&mut self.bytes, BeginSynchronizedUpdate)?;
        let shown = match self.shown.take() {
            // Not `Terminal::clear`: it asks the terminal for the cursor position, a round trip
            // an SSH channel cannot make. A terminal of another size than the last frame's was
            // cleared by the resize, or will be here.
            Some(shown) if !changed && shown.buffer().area == area => shown,
            Some(_) => {
                crossterm::queue!(&mut self.bytes, Clear(ClearType::All))?;
                self.blanks += 1;
                Shown::Own(Buffer::empty(area))
            }
            None => {
                self.blanks += 1;
                Shown::Own(Buffer::empty(area))
            }
        };
        diff::write_changes(shown.buffer(), next, &mut self.bytes);
        // The frame just drawn is what the terminal shows now; ratatui's buffer gets the old
        // one back, to be blanked and drawn into next time (a shared screen stays whole for
        // the others who show it: ratatui gets a blank of its own).
        let old = match shown {
            Shown::Own(buffer) => buffer,
            // ratatui blanks the buffer it is given back before drawing into it.
            Shown::Shared(_) => match self.spare.take() {
                Some(spare) if spare.area == area => spare,
                _ => {
                    self.blanks += 1;
                    Buffer::empty(area)
                }
            },
        };
        self.shown = Some(Shown::Own(std::mem::replace(next, old)));
        terminal.swap_buffers();
        let backend = terminal.backend_mut();
        backend.write_all(&self.bytes)?;
        self.bytes.clear();
        terminal.hide_cursor()?;
        crossterm::queue!(terminal.backend_mut(), EndSynchronizedUpdate)?;
        Write::flush(terminal.backend_mut())
    }

    /// How many blank screens this painter has allocated.
    #[cfg(test)]
    pub(crate) fn blanks(&self) -> usize {
        self.blanks
    }

    /// Takes `screen` (the screen of `app`) as this terminal's last frame without drawing it:
    /// the caller sends the bytes of a whole repaint of it, made for another terminal of the
    /// same size (see `repaints`), so that the next frame's diff starts from what is shown.
    /// The screen is shared, not copied: a class's followers all show it.
    pub(crate) fn adopt(&mut self, app: &App, screen: &Arc<Buffer>) {
        self.last = Some(ScreenId::of(app));
        if let Some(Shown::Own(own)) = self.shown.replace(Shown::Shared(Arc::clone(screen))) {
            self.spare = Some(own);
        }
    }
}

/// Applies an Action and carries out the Effects it returns, feeding their outcomes back in.
pub fn dispatch(app: &mut App, action: Action, save: &mut dyn FnMut(&Effect) -> Action) {
    let mut pending = update(app, action);
    while let Some(effect) = pending.pop() {
        let outcome = save(&effect);
        pending.extend(update(app, outcome));
    }
}

/// Saves to the local disk: atomically, never over an existing file unless asked to. A training
/// run's Effects (a snapshot's head opened, the model written) are carried out here too.
pub fn save_locally(effect: &Effect) -> Action {
    let (path, contents, replace) = match effect {
        Effect::Save {
            path,
            contents,
            replace,
        } => (path, contents, replace),
        Effect::SaveProgress(progress) => {
            return Action::ProgressSaved(progress.save().map_err(|error| error.to_string()));
        }
        Effect::Poll(poll) => return Action::Poll(poll.without_a_class()),
        Effect::OpenHead {
            snapshot,
            layer,
            head,
            text,
        } => return training::opened(snapshot, *layer, *head, text),
        Effect::WriteModel { snapshot, folder } => return training::written(snapshot, folder),
    };
    if path.is_dir() {
        return Action::Saved(Err(SaveFailure::Other(format!(
            "{} is a folder; type a file name in it, like {}",
            printable_path(path),
            printable_path(&path.join("my-lesson.toml"))
        ))));
    }
    let result = match write_file(path, contents, *replace) {
        Ok(()) => {
            tracing::info!(path = %printable_path(path), "saved an edited lesson");
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
