//! The tutor in this process's own terminal: raw mode and the alternate screen for as long as it
//! runs, restored on every way out (quit, Ctrl-c, a panic, SIGTERM, SIGHUP).

use std::io::{Stdout, Write, stdout};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossterm::cursor::Show;
use crossterm::event::{
    self, DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;

use crate::app::App;
use crate::input::action_for;
use crate::ui::Theme;

use super::{dispatch, draw, save_locally};

/// How often the loop wakes without input, to notice a signal.
const TICK: Duration = Duration::from_millis(100);

/// Raw mode and the alternate screen, undone when dropped.
struct TerminalGuard;

impl TerminalGuard {
    fn enter() -> std::io::Result<TerminalGuard> {
        enable_raw_mode()?;
        // From here on, any failure must still restore the terminal: the guard exists first.
        let guard = TerminalGuard;
        crossterm::execute!(
            stdout(),
            EnterAlternateScreen,
            EnableMouseCapture,
            EnableBracketedPaste
        )?;
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Leaves the alternate screen and raw mode, shows the cursor. Safe to call more than once.
fn restore() {
    let _ = crossterm::execute!(
        stdout(),
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        Show
    );
    let _ = disable_raw_mode();
}

/// Runs the tutor until the learner quits or a signal asks it to stop.
pub fn run(mut app: App, theme: Theme) -> anyhow::Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
    ] {
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // The terminal first, so the message is readable and the shell usable.
        restore();
        tracing::error!(%info, "panic");
        previous_hook(info);
    }));

    let _guard = TerminalGuard::enter()?;
    let mut terminal = Terminal::new(CrosstermBackend::new(stdout()))?;
    tracing::info!("tutor started");
    let outcome = event_loop(&mut terminal, &mut app, &theme, &stop);
    if stop.load(Ordering::Relaxed) {
        tracing::info!("stopped by a signal");
    }
    outcome
}

fn event_loop(
    terminal: &mut Terminal<CrosstermBackend<Stdout>>,
    app: &mut App,
    theme: &Theme,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    let mut redraw = true;
    while !app.quit && !stop.load(Ordering::Relaxed) {
        if redraw {
            draw(terminal, app, theme)?;
            redraw = false;
        }
        if !event::poll(TICK)? {
            continue;
        }
        let event = event::read()?;
        let size = terminal.size()?;
        let area = Rect::new(0, 0, size.width, size.height);
        if let event::Event::Resize(..) = event {
            redraw = true;
            continue;
        }
        if let Some(action) = action_for(&event, app, area) {
            tracing::debug!(?action);
            dispatch(app, action, &mut save_locally);
            redraw = true;
        }
    }
    terminal.backend_mut().flush()?;
    Ok(())
}
