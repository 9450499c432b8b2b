//! The tutor in this process's own terminal: raw mode and the alternate screen for as long as it
//! runs, restored on every way out (quit, Ctrl-c, a panic, SIGTERM, SIGHUP).

use std::io::{Write, stdout};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
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

use super::record::{Recorder, SharedCast};
use super::{Painter, dispatch};

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

/// How long the event loop has to notice a signal before the signal thread restores the
/// terminal and exits on its own.
const GRACE: Duration = Duration::from_millis(500);

/// How often the terminal is checked for a hang-up that came without a SIGHUP.
const HANGUP_CHECK: Duration = Duration::from_millis(250);

/// Asks the event loop to stop; if it has not within `GRACE`, restores the terminal and exits.
/// A closed terminal can leave the loop reading end-of-file forever inside crossterm, never
/// reaching its check of `stop`.
fn stop_or_exit(stop: &AtomicBool, stopped_by: &AtomicI32, signal: i32) {
    stopped_by.store(signal, Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    std::thread::sleep(GRACE);
    restore();
    tracing::warn!(signal, "the event loop did not stop; exiting");
    std::process::exit(128 + signal);
}

/// Whether the terminal on standard input has gone away (its window closed, the SSH link
/// dropped): poll reports a hang-up rather than data.
fn terminal_hung_up() -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match poll(&mut fds, Some(&now)) {
        Ok(_) => fds[0]
            .revents()
            .intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL),
        Err(_) => true,
    }
}

/// What happens outside the terminal between keys: told whether the learner just did
/// something, it may change the app and returns whether the screen needs drawing again. A
/// presenter's tutor sends its screen to the students here.
pub(crate) type BetweenKeys<'a> = &'a mut dyn FnMut(&mut App, bool) -> bool;

/// Carries out what the app asks of the world (`super::save_locally`, or a presenter's, which
/// also takes the class's polls to the server).
pub(crate) type Effects<'a> = &'a mut dyn FnMut(&crate::app::Effect) -> crate::app::Action;

/// Runs the tutor until the learner quits or a signal asks it to stop, calling `between_keys`
/// after every key and every tick. Returns the signal that stopped it, if one did, so the caller
/// can exit with 128 + its number as shells expect.
pub(crate) fn run_with(
    mut app: App,
    theme: Theme,
    record: Option<SharedCast>,
    between_keys: BetweenKeys,
    effects: Effects,
) -> anyhow::Result<Option<i32>> {
    let stop = Arc::new(AtomicBool::new(false));
    let stopped_by = Arc::new(AtomicI32::new(0));
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
    ])?;
    {
        let (stop, stopped_by) = (Arc::clone(&stop), Arc::clone(&stopped_by));
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                stop_or_exit(&stop, &stopped_by, signal);
            }
        });
    }
    {
        let (stop, stopped_by) = (Arc::clone(&stop), Arc::clone(&stopped_by));
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(HANGUP_CHECK);
                if terminal_hung_up() {
                    stop_or_exit(&stop, &stopped_by, signal_hook::consts::SIGHUP);
                }
            }
        });
    }
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // The terminal first, so the message is readable and the shell usable.
        restore();
        tracing::error!(%info, "panic");
        previous_hook(info);
    }));

    let _guard = TerminalGuard::enter()?;
    tracing::info!("tutor started");
    match record {
        Some(cast) => {
            if let Ok(mut cast) = cast.lock()
                && let Err(error) = cast.began()
            {
                tracing::warn!(%error, "the recording could not be written");
            }
            let recorder = Recorder::new(stdout(), Arc::clone(&cast));
            let mut terminal = Terminal::new(CrosstermBackend::new(recorder))?;
            // A cast that cannot be written stops growing; the tutor goes on.
            let mut resized = |size| match cast.lock() {
                Ok(mut cast) => {
                    if let Err(error) = cast.resized(size) {
                        tracing::warn!(%error, "the recording could not be written");
                    }
                }
                Err(_) => tracing::warn!("the recording stopped"),
            };
            let ran = event_loop(
                &mut terminal,
                &mut app,
                &theme,
                &stop,
                between_keys,
                effects,
                &mut resized,
            );
            if let Ok(mut cast) = cast.lock()
                && let Err(error) = cast.ended()
            {
                tracing::warn!(%error, "the recording could not be written");
            }
            ran?;
        }
        None => {
            let mut terminal = Terminal::new(CrosstermBackend::new(stdout()))?;
            event_loop(
                &mut terminal,
                &mut app,
                &theme,
                &stop,
                between_keys,
                effects,
                &mut |_| {},
            )?;
        }
    }
    let signal = stopped_by.load(Ordering::SeqCst);
    if signal != 0 {
        tracing::info!(signal, "stopped by a signal");
    }
    Ok((signal != 0).then_some(signal))
}

fn event_loop<W: Write>(
    terminal: &mut Terminal<CrosstermBackend<W>>,
    app: &mut App,
    theme: &Theme,
    stop: &AtomicBool,
    between_keys: BetweenKeys,
    effects: Effects,
    resized: &mut dyn FnMut((u16, u16)),
) -> anyhow::Result<()> {
    let mut redraw = true;
    let mut painter = Painter::default();
    while !app.quit && !stop.load(Ordering::Relaxed) {
        if redraw {
            painter.draw(terminal, app, theme)?;
            redraw = false;
        }
        if !event::poll(TICK)? {
            redraw = between_keys(app, false);
            continue;
        }
        let event = event::read()?;
        let size = terminal.size()?;
        let area = Rect::new(0, 0, size.width, size.height);
        if let event::Event::Resize(width, height) = event {
            resized((width, height));
            redraw = true;
            continue;
        }
        if let Some(action) = action_for(&event, app, area) {
            tracing::debug!(action = %action.logged());
            dispatch(app, action, effects);
            between_keys(app, true);
            redraw = true;
        }
    }
    terminal.backend_mut().flush()?;
    Ok(())
}
