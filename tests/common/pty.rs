//! A program in a real pseudo-terminal, driven by keystrokes and read back through a vt100
//! screen: the tutor itself, or `ssh -tt` connected to `attn-tutor serve`.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use tempfile::TempDir;
use vt100::MouseProtocolMode;

pub const ROWS: u16 = 24;
pub const COLS: u16 = 80;

/// How long to wait for the screen to show something: a guard against hangs, not a speed check.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// How often to look at the screen while waiting.
pub const POLL: Duration = Duration::from_millis(20);

/// The tutor draws every frame between these two (synchronized output), which vt100 does not
/// implement; the screen is only looked at between frames, never half drawn.
const BEGIN_FRAME: &[u8] = b"\x1b[?2026h";
const END_FRAME: &[u8] = b"\x1b[?2026l";

/// What the child has written so far, as a terminal would show it.
struct Terminal {
    parser: vt100::Parser,
    /// Inside a frame: the screen may be half old, half new.
    mid_frame: bool,
    /// The last bytes seen, for a frame marker split across two reads.
    tail: Vec<u8>,
    /// The child's end of the terminal is closed and everything it wrote has been read.
    ended: bool,
}

impl Terminal {
    fn feed(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
        let mut window = std::mem::take(&mut self.tail);
        window.extend_from_slice(bytes);
        let last = |marker: &[u8]| window.windows(marker.len()).rposition(|w| w == marker);
        match (last(BEGIN_FRAME), last(END_FRAME)) {
            (Some(begin), Some(end)) => self.mid_frame = begin > end,
            (Some(_), None) => self.mid_frame = true,
            (None, Some(_)) => self.mid_frame = false,
            (None, None) => {}
        }
        let keep = window.len().saturating_sub(BEGIN_FRAME.len() - 1);
        self.tail = window.split_off(keep);
    }
}

/// A program running in an 80×24 pseudo-terminal, in an empty temporary folder (so no stray
/// file can shadow a built-in lesson). Dropping it kills the program if it is still running, so
/// a failing test leaves nothing behind.
pub struct PtyChild {
    terminal: Arc<Mutex<Terminal>>,
    child: Box<dyn Child + Send + Sync>,
    keyboard: Box<dyn Write + Send>,
    /// More to print when a wait fails (a server's log, say).
    context: Option<Box<dyn Fn() -> String>>,
    _master: Box<dyn MasterPty + Send>,
    _dir: TempDir,
}

impl PtyChild {
    /// Starts `command` on a new pseudo-terminal, with a data folder of its own (an empty
    /// folder in its scratch folder), whatever `XDG_DATA_HOME` says in the test's environment.
    pub fn spawn(command: CommandBuilder) -> PtyChild {
        PtyChild::spawn_with_data(command, None)
    }

    /// `spawn`, with the data folder (`XDG_DATA_HOME`) the test reads back afterwards, or its
    /// own scratch one with `None`.
    pub fn spawn_with_data(mut command: CommandBuilder, data: Option<&Path>) -> PtyChild {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pseudo-terminal opens");
        let dir = TempDir::new().unwrap();
        command.cwd(dir.path());
        // The user's own data (practice progress, the host key) stays out of the tests, and
        // theirs out of the user's: the command inherits this process's environment, so the
        // variable is always replaced, never only filled in when missing. Parallel tests then
        // never meet each other's progress either (one's last step, another's resume offer).
        let own = dir.path().join("data");
        command.env("XDG_DATA_HOME", data.unwrap_or(&own));
        let shown = format!("{:?}", command.get_argv());
        let child = pair
            .slave
            .spawn_command(command)
            .unwrap_or_else(|error| panic!("{shown} starts: {error}"));
        // Only the child holds the terminal's other end now, so reads end when it exits.
        drop(pair.slave);

        let terminal = Arc::new(Mutex::new(Terminal {
            parser: vt100::Parser::new(ROWS.try_into().unwrap(), COLS.try_into().unwrap(), 0),
            mid_frame: false,
            tail: Vec::new(),
            ended: false,
        }));
        let mut output = pair.master.try_clone_reader().unwrap();
        let screen = Arc::clone(&terminal);
        thread::spawn(move || {
            let mut buffer = [0; 8192];
            // Ends with an error (EIO) or end of file once the child has exited.
            while let Ok(read @ 1..) = output.read(&mut buffer) {
                lock(&screen).feed(&buffer[..read]);
            }
            lock(&screen).ended = true;
        });
        let keyboard = pair.master.take_writer().unwrap();
        PtyChild {
            terminal,
            child,
            keyboard,
            context: None,
            _master: pair.master,
            _dir: dir,
        }
    }

    /// Adds what `context` returns to the message of a wait that fails.
    pub fn explain_failures_with(&mut self, context: impl Fn() -> String + 'static) {
        self.context = Some(Box::new(context));
    }

    fn context(&self) -> String {
        self.context
            .as_ref()
            .map_or_else(String::new, |context| format!("\n{}", context()))
    }

    /// Types `keys` as the learner would; `\r` is Enter.
    pub fn press(&mut self, keys: &str) {
        self.keyboard.write_all(keys.as_bytes()).unwrap();
        self.keyboard.flush().unwrap();
    }

    /// Waits until `ready` finds what it looks for on a whole frame and returns it; panics with
    /// the screen as it is after `timeout`.
    #[track_caller]
    pub fn wait_until<T>(
        &mut self,
        what: &str,
        timeout: Duration,
        mut ready: impl FnMut(&vt100::Screen) -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + timeout;
        loop {
            let shown = {
                let terminal = lock(&self.terminal);
                if !terminal.mid_frame
                    && let Some(found) = ready(terminal.parser.screen())
                {
                    return found;
                }
                describe(terminal.parser.screen())
            };
            if Instant::now() >= deadline {
                let status = self.child.try_wait();
                panic!(
                    "waited {timeout:?} for {what}; the child: {status:?}; the screen:\n{shown}{}",
                    self.context()
                );
            }
            thread::sleep(POLL);
        }
    }

    /// Waits until the screen's text satisfies `ready` and returns that text.
    #[track_caller]
    pub fn wait_for(
        &mut self,
        what: &str,
        ready: impl Fn(&str) -> bool,
        timeout: Duration,
    ) -> String {
        self.wait_until(what, timeout, |screen| {
            let text = screen.contents();
            ready(&text).then_some(text)
        })
    }

    /// Waits for the top line to name `step`, and for the rest of the frame with it.
    #[track_caller]
    pub fn wait_for_step(&mut self, step: &str) -> String {
        let heading = format!("· {step}");
        self.wait_for(
            &format!("the {step} step"),
            |text| top_line(text).contains(&heading),
            PATIENCE,
        )
    }

    /// Waits for the tutor to hand the terminal back as it found it.
    #[track_caller]
    pub fn wait_for_the_terminal_restored(&mut self) {
        self.wait_until(
            "the terminal restored (main screen, cursor shown, no mouse capture, no bracketed paste)",
            PATIENCE,
            |screen| {
                (!screen.alternate_screen()
                    && !screen.hide_cursor()
                    && screen.mouse_protocol_mode() == MouseProtocolMode::None
                    && !screen.bracketed_paste())
                .then_some(())
            },
        );
    }

    /// Waits for the child to exit on its own and returns its status.
    #[track_caller]
    pub fn wait_for_exit(&mut self) -> portable_pty::ExitStatus {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // What it wrote just before exiting (its error, say) may still be on its way
                // to the screen: read to the end, or as long as the patience lasts.
                while !lock(&self.terminal).ended && Instant::now() < deadline {
                    thread::sleep(POLL);
                }
                return status;
            }
            if Instant::now() >= deadline {
                let shown = describe(lock(&self.terminal).parser.screen());
                panic!(
                    "the child did not exit within {PATIENCE:?}; the screen:\n{shown}{}",
                    self.context()
                );
            }
            thread::sleep(POLL);
        }
    }

    pub fn screen_text(&self) -> String {
        lock(&self.terminal).parser.screen().contents()
    }

    /// Tells the program its terminal is now `cols`×`rows`, as a window resize would; the
    /// screen read back keeps its own size.
    pub fn resize(&self, cols: u16, rows: u16) {
        self._master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("the pseudo-terminal takes the new size");
    }

    /// Sends `signal` (a name `kill` knows, like STOP, CONT or KILL) to the program.
    pub fn signal(&self, signal: &str) {
        let sent = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill -{signal} {}", self.pid());
    }

    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("the child has a process id")
    }
}

impl Drop for PtyChild {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn lock(terminal: &Mutex<Terminal>) -> MutexGuard<'_, Terminal> {
    terminal.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The screen for a failure message: its text in a frame, and the modes that matter here.
fn describe(screen: &vt100::Screen) -> String {
    let rule = "-".repeat(usize::from(COLS));
    format!(
        "{rule}\n{}\n{rule}\nalternate screen: {}, cursor hidden: {}, mouse: {:?}, bracketed paste: {}",
        screen.contents(),
        screen.alternate_screen(),
        screen.hide_cursor(),
        screen.mouse_protocol_mode(),
        screen.bracketed_paste(),
    )
}

pub fn top_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// The last line with anything on it: the status line.
pub fn status_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
}
