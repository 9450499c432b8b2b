//! End to end: the real `attn-tutor` binary in a pseudo-terminal, driven by keystrokes and read
//! back through a vt100 screen.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use tempfile::TempDir;
use vt100::MouseProtocolMode;

const ROWS: u16 = 24;
const COLS: u16 = 80;

/// How long to wait for the screen to show something: a guard against hangs, not a speed check.
const PATIENCE: Duration = Duration::from_secs(20);

/// How often to look at the screen while waiting.
const POLL: Duration = Duration::from_millis(20);

/// The row for "sleeps" of the cat-sleeps attention weights, as `show --step softmax` prints it.
const SLEEPS_WEIGHTS: [&str; 3] = ["0.346", "0.432", "0.222"];

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

/// `attn-tutor ARGS` running in an 80×24 pseudo-terminal. Dropping it kills the child if it is
/// still running, so a failing test leaves nothing behind.
struct Tutor {
    terminal: Arc<Mutex<Terminal>>,
    child: Box<dyn Child + Send + Sync>,
    keyboard: Box<dyn Write + Send>,
    _master: Box<dyn MasterPty + Send>,
    _dir: TempDir,
}

impl Tutor {
    fn start(args: &[&str]) -> Tutor {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pseudo-terminal opens");
        // An empty folder, so no stray file can shadow a built-in lesson.
        let dir = TempDir::new().unwrap();
        let mut command = CommandBuilder::new(assert_cmd::cargo::cargo_bin!("attn-tutor"));
        command.args(args);
        command.cwd(dir.path());
        command.env("TERM", "xterm-256color");
        command.env_remove("NO_COLOR");
        let child = pair
            .slave
            .spawn_command(command)
            .expect("attn-tutor starts");
        // Only the child holds the terminal's other end now, so reads end when it exits.
        drop(pair.slave);

        let terminal = Arc::new(Mutex::new(Terminal {
            parser: vt100::Parser::new(ROWS.try_into().unwrap(), COLS.try_into().unwrap(), 0),
            mid_frame: false,
            tail: Vec::new(),
        }));
        let mut output = pair.master.try_clone_reader().unwrap();
        let screen = Arc::clone(&terminal);
        thread::spawn(move || {
            let mut buffer = [0; 8192];
            // Ends with an error (EIO) or end of file once the child has exited.
            while let Ok(read @ 1..) = output.read(&mut buffer) {
                lock(&screen).feed(&buffer[..read]);
            }
        });
        let keyboard = pair.master.take_writer().unwrap();
        Tutor {
            terminal,
            child,
            keyboard,
            _master: pair.master,
            _dir: dir,
        }
    }

    /// Types `keys` as the learner would; `\r` is Enter.
    fn press(&mut self, keys: &str) {
        self.keyboard.write_all(keys.as_bytes()).unwrap();
        self.keyboard.flush().unwrap();
    }

    /// Waits until `ready` finds what it looks for on a whole frame and returns it; panics with
    /// the screen as it is after `timeout`.
    fn wait_until<T>(
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
                    "waited {timeout:?} for {what}; the child: {status:?}; the screen:\n{shown}"
                );
            }
            thread::sleep(POLL);
        }
    }

    /// Waits until the screen's text satisfies `ready` and returns that text.
    fn wait_for(&mut self, what: &str, ready: impl Fn(&str) -> bool, timeout: Duration) -> String {
        self.wait_until(what, timeout, |screen| {
            let text = screen.contents();
            ready(&text).then_some(text)
        })
    }

    /// Waits for the top line to name `step`, and for the rest of the frame with it.
    fn wait_for_step(&mut self, step: &str) -> String {
        let heading = format!("· {step}");
        self.wait_for(
            &format!("the {step} step"),
            |text| top_line(text).contains(&heading),
            PATIENCE,
        )
    }

    /// Waits for the Softmax step and returns the row of weights for `token` on it.
    fn wait_for_weights_row(&mut self, token: &str) -> Vec<String> {
        self.wait_until(
            &format!("the weights of {token} on the Softmax step"),
            PATIENCE,
            |screen| {
                let text = screen.contents();
                if !top_line(&text).contains("· Softmax") {
                    return None;
                }
                weights_row(&text, token)
            },
        )
    }

    /// Waits for the tutor to hand the terminal back as it found it.
    fn wait_for_the_terminal_restored(&mut self) {
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
    fn wait_for_exit(&mut self) -> portable_pty::ExitStatus {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() >= deadline {
                let shown = describe(lock(&self.terminal).parser.screen());
                panic!("attn-tutor did not exit within {PATIENCE:?}; the screen:\n{shown}");
            }
            thread::sleep(POLL);
        }
    }

    fn screen_text(&self) -> String {
        lock(&self.terminal).parser.screen().contents()
    }

    fn pid(&self) -> u32 {
        self.child.process_id().expect("the child has a process id")
    }
}

impl Drop for Tutor {
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

fn top_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// The last line with anything on it: the status line.
fn status_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
}

/// The row labelled `token` of a weights matrix on the screen: the token followed by three
/// numbers that add up to 1 (a row of softmax weights), wherever the layout put it. The scaled
/// scores beside it and the softmax working below it have rows for the token too, but theirs
/// do not add up to 1.
fn weights_row(text: &str, token: &str) -> Option<Vec<String>> {
    const TOKENS: usize = 3;
    text.lines().find_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        words.iter().enumerate().find_map(|(at, word)| {
            let cells = words.get(at + 1..at + 1 + TOKENS)?;
            let numbers: Vec<f64> = cells
                .iter()
                .map(|cell| cell.parse().ok())
                .collect::<Option<_>>()?;
            let adds_up = (numbers.iter().sum::<f64>() - 1.0).abs() < 0.01;
            (*word == token && adds_up).then(|| cells.iter().map(|cell| cell.to_string()).collect())
        })
    })
}

#[test]
fn a_learner_edits_an_embedding_and_sees_the_softmax_change() {
    let mut tutor = Tutor::start(&["cat-sleeps"]);
    tutor.wait_for_step("Embedding");

    tutor.press("5");
    let before = tutor.wait_for_weights_row("sleeps");
    assert_eq!(before, SLEEPS_WEIGHTS, "{}", tutor.screen_text());

    tutor.press("1");
    tutor.wait_for_step("Embedding");
    tutor.press("e");
    let prompt = tutor.wait_for(
        "the edit prompt",
        |text| status_line(text).contains("Enter ok"),
        PATIENCE,
    );
    assert!(
        status_line(&prompt).starts_with("X["),
        "the prompt edits a cell of the embeddings X: {:?}",
        status_line(&prompt)
    );
    tutor.press("5");
    tutor.wait_for(
        "the 5 typed into the edit prompt",
        |text| status_line(text).contains("= 5"),
        PATIENCE,
    );
    tutor.press("\r");
    let edited = tutor.wait_for(
        "the status line to report the edit",
        |text| status_line(text).contains("is now 5"),
        PATIENCE,
    );
    assert!(
        status_line(&edited).contains("changed"),
        "the status line says what the edit changed: {:?}",
        status_line(&edited)
    );
    assert!(
        top_line(&edited).contains("edited"),
        "the header marks the lesson edited: {:?}",
        top_line(&edited)
    );

    tutor.press("5");
    let after = tutor.wait_for_weights_row("sleeps");
    assert_ne!(
        after,
        SLEEPS_WEIGHTS,
        "the edit changes the weights of sleeps:\n{}",
        tutor.screen_text()
    );

    tutor.press("q");
    tutor.wait_for(
        "the question about the unsaved edits",
        |text| status_line(text).contains("unsaved edits"),
        PATIENCE,
    );
    tutor.press("d");
    tutor.wait_for(
        "the lesson picker",
        |text| top_line(text).contains("choose a lesson"),
        PATIENCE,
    );
    tutor.press("q");

    tutor.wait_for_the_terminal_restored();
    let status = tutor.wait_for_exit();
    assert!(status.success(), "attn-tutor exited with {status:?}");
    assert_eq!(
        tutor.screen_text().trim(),
        "",
        "nothing is left on the main screen"
    );
}

#[test]
fn sigterm_restores_the_terminal() {
    let mut tutor = Tutor::start(&["cat-sleeps"]);
    tutor.wait_for_step("Embedding");
    tutor.press("5");
    tutor.wait_for_step("Softmax");

    let pid = tutor.pid().to_string();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("the kill command runs");
    assert!(kill.success(), "kill -TERM {pid}: {kill}");

    tutor.wait_for_the_terminal_restored();
    tutor.wait_for_exit();
}
