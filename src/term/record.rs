//! `--record FILE.cast`: what the terminal is sent, kept as an asciicast (version 2, the format
//! `asciinema play` and the asciinema web player read): a JSON header, then one
//! `[seconds, "o", text]` line for every frame written and `[seconds, "r", "WxH"]` for every
//! resize. Each line is written and flushed as it comes, so a crash keeps what was recorded.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

/// The cast file and the clock its times are counted on; shared between the writer that
/// records the frames and the loop that records resizes.
pub(crate) type SharedCast = Arc<Mutex<Cast>>;

/// The cast file and the clock its times are counted on.
pub(crate) struct Cast {
    file: BufWriter<File>,
    started: Instant,
}

impl std::fmt::Debug for Cast {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cast").finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct Header<'a> {
    version: u32,
    width: u16,
    height: u16,
    timestamp: u64,
    title: &'a str,
    env: Env,
}

#[derive(Serialize)]
struct Env {
    #[serde(rename = "TERM")]
    term: String,
}

impl Cast {
    /// Creates `path` (never over an existing file) and writes the header for a terminal of
    /// `width` × `height`.
    pub(crate) fn create(
        path: &Path,
        (width, height): (u16, u16),
        title: &str,
    ) -> io::Result<Cast> {
        let file = File::options().write(true).create_new(true).open(path)?;
        let mut cast = Cast {
            file: BufWriter::new(file),
            started: Instant::now(),
        };
        let header = Header {
            version: 2,
            width,
            height,
            timestamp: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.as_secs()),
            title,
            env: Env {
                // A terminal name is whatever the environment says; asciinema and its player
                // show it, and JSON leaves C1 controls such as U+009B as they are.
                term: crate::lesson::text::printable(
                    &std::env::var("TERM").unwrap_or_else(|_| "xterm-256color".to_string()),
                ),
            },
        };
        serde_json::to_writer(&mut cast.file, &header)?;
        cast.file.write_all(b"\n")?;
        cast.file.flush()?;
        Ok(cast)
    }

    /// The cast, ready to share with the tutor's loop.
    pub(crate) fn shared(self) -> SharedCast {
        Arc::new(Mutex::new(self))
    }

    /// One event, written whole as one line and flushed.
    fn event(&mut self, kind: &str, data: &str) -> io::Result<()> {
        let seconds = self.started.elapsed().as_secs_f64();
        let mut line = serde_json::to_string(&(seconds, kind, data))?;
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.flush()
    }

    /// The terminal was resized to `width` × `height`.
    pub(crate) fn resized(&mut self, (width, height): (u16, u16)) -> io::Result<()> {
        self.event("r", &format!("{width}x{height}"))
    }

    /// The tutor took the terminal: the alternate screen, cleared, as the terminal guard
    /// writes it before any frame (a player starting on a screen with text must not show it).
    pub(crate) fn began(&mut self) -> io::Result<()> {
        self.event("o", "\u{1b}[?1049h\u{1b}[H\u{1b}[2J")
    }

    /// The tutor gave the terminal back: the shell's screen again, the cursor shown.
    pub(crate) fn ended(&mut self) -> io::Result<()> {
        self.event("o", "\u{1b}[?1049l\u{1b}[?25h")
    }
}

/// A writer that sends everything to the terminal and, at each flush (a frame), the same
/// bytes to the cast.
pub(crate) struct Recorder<W: Write> {
    terminal: W,
    /// Shared with the event loop, which records resizes.
    cast: Arc<Mutex<Cast>>,
    /// Bytes since the last frame; a character cut by the buffer's end waits for the rest.
    pending: Vec<u8>,
    /// The cast could not be written (a full disk): it stops growing, the tutor goes on.
    failed: bool,
}

impl<W: Write> Recorder<W> {
    pub(crate) fn new(terminal: W, cast: Arc<Mutex<Cast>>) -> Recorder<W> {
        Recorder {
            terminal,
            cast,
            pending: Vec::new(),
            failed: false,
        }
    }
}

impl<W: Write> Write for Recorder<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let written = self.terminal.write(bytes)?;
        self.pending.extend_from_slice(&bytes[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.terminal.flush()?;
        if self.failed {
            self.pending.clear();
            return Ok(());
        }
        if self.pending.is_empty() {
            return Ok(());
        }
        // Whole characters only: an incomplete one at the end stays for the next frame.
        let complete = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(error) if error.error_len().is_none() => error.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        let text = String::from_utf8_lossy(&self.pending[..complete]).into_owned();
        self.pending.drain(..complete);
        let written = match self.cast.lock() {
            Ok(mut cast) => cast.event("o", &text),
            Err(_) => Err(io::Error::other("the recording stopped")),
        };
        // The learner's session matters more than its recording.
        if let Err(error) = written {
            tracing::warn!(%error, "the recording could not be written; it stops here");
            self.failed = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cast_is_a_header_then_a_line_per_frame_and_resize() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("demo.cast");
        let cast = Arc::new(Mutex::new(
            Cast::create(&path, (80, 24), "attn-tutor").unwrap(),
        ));
        let mut recorder = Recorder::new(Vec::new(), Arc::clone(&cast));
        // "é" cut in two by a frame's end: the cast waits for the whole character.
        recorder.write_all(b"a\x1b[1mb\xc3").unwrap();
        recorder.flush().unwrap();
        recorder.write_all(b"\xa9").unwrap();
        recorder.flush().unwrap();
        cast.lock().unwrap().resized((100, 30)).unwrap();
        assert_eq!(recorder.terminal, b"a\x1b[1mb\xc3\xa9");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines[0]["version"], 2);
        assert_eq!(lines[0]["width"], 80);
        assert_eq!(lines[1][1], "o");
        assert_eq!(lines[1][2], "a\u{1b}[1mb");
        assert_eq!(lines[2][2], "é");
        assert_eq!(lines[3][1], "r");
        assert_eq!(lines[3][2], "100x30");
        assert_eq!(lines.len(), 4);
        // Never over a file that is there.
        assert!(Cast::create(&path, (80, 24), "again").is_err());
    }

    #[test]
    fn a_recording_that_cannot_go_on_stops_and_the_terminal_keeps_its_frames() {
        let dir = tempfile::TempDir::new().unwrap();
        let cast = Cast::create(&dir.path().join("lost.cast"), (80, 24), "t")
            .unwrap()
            .shared();
        // A thread that dies holding the cast leaves it unusable, as a failed write would.
        let held = Arc::clone(&cast);
        let _ = std::thread::spawn(move || {
            let _guard = held.lock().unwrap();
            panic!("the cast is lost");
        })
        .join();
        let mut recorder = Recorder::new(Vec::new(), cast);
        recorder.write_all(b"frame 1").unwrap();
        assert!(recorder.flush().is_ok());
        recorder.write_all(b", frame 2").unwrap();
        assert!(recorder.flush().is_ok());
        assert_eq!(recorder.terminal, b"frame 1, frame 2");
        assert!(recorder.failed);
    }
}
