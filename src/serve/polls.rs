//! The class's polls on the server: the answers to the poll open, one per student (the last
//! they sent), which no screen sees before the reveal; locked at the reveal, and appended to the
//! polls file (`serve --polls FILE`) as one JSON line. Answers are kept by seat, a number that
//! names no one, and only while the student is connected: "N of M" counts the students there.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use crate::app::{LOCKED, Poll, PollReply};
use crate::lesson::text::printable_path;
use crate::practice::Answer;

/// The polls of one class.
#[derive(Debug, Default)]
pub(crate) struct ClassPolls {
    state: Mutex<State>,
    /// Where each reveal's answers go, when the teacher asked for a file.
    file: Option<PollsFile>,
}

#[derive(Debug, Default)]
struct State {
    /// The poll asked last, open or revealed.
    current: Option<Asked>,
    /// Seats handed out so far.
    seats: u64,
    /// Seats whose student has left: an answer still on its way from one is not counted.
    gone: HashSet<u64>,
}

#[derive(Debug)]
struct Asked {
    poll: Arc<Poll>,
    asked_at: SystemTime,
    answers: HashMap<u64, Answer>,
    locked: bool,
}

/// The file `serve --polls` appends to: opened before the class starts, so that a path that
/// cannot be written is said at once, and only ever appended to.
#[derive(Debug, Clone)]
pub(crate) struct PollsFile {
    path: PathBuf,
    file: Arc<Mutex<File>>,
}

impl PollsFile {
    pub(crate) fn open(path: &Path) -> anyhow::Result<PollsFile> {
        if path.is_dir() {
            anyhow::bail!(
                "--polls {} is a folder: give a file to append the polls to, like {}",
                printable_path(path),
                printable_path(&path.join("polls.jsonl"))
            );
        }
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|error| {
                anyhow::anyhow!(
                    "cannot open the polls file {} to append to: {error}",
                    printable_path(path)
                )
            })?;
        Ok(PollsFile {
            path: path.to_path_buf(),
            file: Arc::new(Mutex::new(file)),
        })
    }

    /// Appends one line, whole, in one write: earlier lines are never touched.
    fn append(&self, line: &str) -> Result<(), String> {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        file.write_all(&bytes)
            .and_then(|()| file.flush())
            .map_err(|error| format!("{}: {error}", printable_path(&self.path)))
    }
}

impl ClassPolls {
    pub(crate) fn new(file: Option<PollsFile>) -> ClassPolls {
        ClassPolls {
            state: Mutex::default(),
            file,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A number for a new student's seat: what their answers are kept under.
    pub(crate) fn seat(&self) -> u64 {
        let mut state = self.state();
        state.seats += 1;
        state.seats
    }

    /// The presenter asks the class: answers to `poll` are taken from now, and any earlier
    /// poll's are gone (they were logged at its reveal).
    pub(crate) fn open(&self, poll: Arc<Poll>) {
        self.state().current = Some(Asked {
            poll,
            asked_at: SystemTime::now(),
            answers: HashMap::new(),
            locked: false,
        });
    }

    /// A student's answer to poll `number`, in place of any they sent before; refused once the
    /// poll is revealed or replaced.
    pub(crate) fn answer(&self, seat: u64, number: u64, answer: Answer) -> Result<(), String> {
        let mut state = self.state();
        if state.gone.contains(&seat) {
            return Err("You have left the class".to_string());
        }
        match &mut state.current {
            Some(asked) if asked.poll.number == number && !asked.locked => {
                asked.answers.insert(seat, answer);
                Ok(())
            }
            Some(asked) if asked.poll.number == number => Err(LOCKED.to_string()),
            _ => Err("That poll is over: the presenter has asked another".to_string()),
        }
    }

    /// Answers in to the open poll (none once it is revealed: the count is of answers to come).
    pub(crate) fn answered(&self) -> usize {
        self.state()
            .current
            .as_ref()
            .filter(|asked| !asked.locked)
            .map_or(0, |asked| asked.answers.len())
    }

    /// The student of `seat` has left: their answer goes with them.
    pub(crate) fn leave(&self, seat: u64) {
        let mut state = self.state();
        state.gone.insert(seat);
        if let Some(asked) = &mut state.current
            && !asked.locked
        {
            asked.answers.remove(&seat);
        }
    }

    /// The reveal of poll `number`: its answers are locked, appended to the polls file, and
    /// handed to the presenter.
    pub(crate) fn lock(&self, number: u64) -> PollReply {
        let mut state = self.state();
        let Some(asked) = state
            .current
            .as_mut()
            .filter(|asked| asked.poll.number == number && !asked.locked)
        else {
            return PollReply::Answers {
                number,
                answers: Vec::new(),
                logged: Err("that poll is not open".to_string()),
            };
        };
        asked.locked = true;
        // In no particular order, so nothing ties an answer to when its student came.
        let mut answers: Vec<Answer> = asked.answers.values().copied().collect();
        answers.sort_by(|a, b| a.value.total_cmp(&b.value));
        // Written only where there is a file to append it to.
        let line = self.file.as_ref().map(|file| {
            (
                file,
                log_line(&asked.poll, asked.asked_at, SystemTime::now(), &answers),
            )
        });
        drop(state);
        let logged = line.map_or(Ok(()), |(file, line)| file.append(&line));
        if let Err(error) = &logged {
            tracing::warn!(%error, "a poll was not written to the polls file");
        }
        tracing::info!(
            poll = number,
            answers = answers.len(),
            "a poll's answers revealed"
        );
        PollReply::Answers {
            number,
            answers,
            logged,
        }
    }
}

/// One reveal as the polls file keeps it (the contract other tools read):
/// `{"lesson", "step", "cell", "truth", "vote", "asked_at", "revealed_at", "answers"}`, the times
/// in RFC 3339 (UTC). JSON has no infinity: a −∞ (a masked score) is written `null`.
fn log_line(
    poll: &Poll,
    asked_at: SystemTime,
    revealed_at: SystemTime,
    answers: &[Answer],
) -> String {
    serde_json::json!({
        "lesson": poll.lesson,
        "step": poll.step,
        "cell": poll.name,
        "truth": poll.truth,
        "vote": poll.vote,
        "asked_at": humantime::format_rfc3339_millis(asked_at).to_string(),
        "revealed_at": humantime::format_rfc3339_millis(revealed_at).to_string(),
        "answers": answers.iter().map(|answer| answer.value).collect::<Vec<f64>>(),
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::{Cell, MatrixName};

    fn poll(number: u64, vote: u8, truth: f64) -> Arc<Poll> {
        Arc::new(Poll {
            number,
            vote,
            lesson: "cat-sleeps".to_string(),
            step: "Softmax".to_string(),
            cell: Cell::new(MatrixName::Weights, 2, 0),
            name: "weights[sleeps, The]".to_string(),
            truth,
            decimals: 3,
            earlier: None,
            reveal: None,
        })
    }

    fn said(value: f64) -> Answer {
        Answer {
            value,
            typed_decimals: None,
        }
    }

    #[test]
    fn a_students_last_answer_counts_once_and_leaves_with_them() {
        let polls = ClassPolls::new(None);
        let (ada, bob) = (polls.seat(), polls.seat());
        polls.open(poll(1, 1, 0.346));
        polls.answer(ada, 1, said(0.2)).unwrap();
        polls.answer(ada, 1, said(0.346)).unwrap();
        polls.answer(bob, 1, said(0.9)).unwrap();
        assert_eq!(polls.answered(), 2);
        polls.leave(bob);
        assert_eq!(polls.answered(), 1);
        // An answer still on its way from a seat that has left is not counted.
        assert!(polls.answer(bob, 1, said(0.9)).is_err());
        let PollReply::Answers { answers, .. } = polls.lock(1) else {
            panic!("answers")
        };
        assert_eq!(answers.iter().map(|a| a.value).collect::<Vec<_>>(), [0.346]);
    }

    #[test]
    fn answers_are_locked_at_the_reveal_and_an_old_polls_are_refused() {
        let polls = ClassPolls::new(None);
        let ada = polls.seat();
        polls.open(poll(1, 1, 0.346));
        polls.lock(1);
        assert_eq!(polls.answer(ada, 1, said(0.3)), Err(LOCKED.to_string()));
        assert_eq!(polls.answered(), 0);
        polls.open(poll(2, 2, 0.346));
        assert!(
            polls
                .answer(ada, 1, said(0.3))
                .unwrap_err()
                .contains("the presenter has asked another")
        );
        polls.answer(ada, 2, said(0.3)).unwrap();
    }

    #[test]
    fn each_reveal_appends_one_json_line_and_earlier_lines_stay() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("polls.jsonl");
        std::fs::write(&path, "{\"kept\":true}\n").unwrap();
        let polls = ClassPolls::new(Some(PollsFile::open(&path).unwrap()));
        let ada = polls.seat();
        polls.open(poll(1, 1, 0.3463922031642192));
        polls.answer(ada, 1, said(0.35)).unwrap();
        assert!(matches!(
            polls.lock(1),
            PollReply::Answers { logged: Ok(()), .. }
        ));
        // A masked score's −∞ has no JSON number: null.
        polls.open(poll(2, 2, f64::NEG_INFINITY));
        polls.answer(ada, 2, said(f64::NEG_INFINITY)).unwrap();
        polls.lock(2);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0], "{\"kept\":true}");
        let first: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
        let mut keys: Vec<&str> = first
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "answers",
                "asked_at",
                "cell",
                "lesson",
                "revealed_at",
                "step",
                "truth",
                "vote"
            ]
        );
        assert_eq!(first["cell"], "weights[sleeps, The]");
        assert_eq!(first["step"], "Softmax");
        assert_eq!(first["truth"], 0.3463922031642192);
        assert_eq!(first["answers"], serde_json::json!([0.35]));
        for time in ["asked_at", "revealed_at"] {
            let written = first[time].as_str().unwrap();
            assert!(humantime::parse_rfc3339(written).is_ok(), "{written}");
        }
        let second: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(second["vote"], 2);
        assert_eq!(second["truth"], serde_json::Value::Null);
        assert_eq!(second["answers"], serde_json::json!([null]));
    }

    #[test]
    fn a_folder_is_no_polls_file() {
        let dir = tempfile::TempDir::new().unwrap();
        let error = PollsFile::open(dir.path()).unwrap_err().to_string();
        assert!(error.contains("is a folder"), "{error}");
    }
}
