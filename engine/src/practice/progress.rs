//! Practice progress kept between sessions: for each lesson, the steps practised to the end with
//! their scores, and the step last seen. Kept as TOML in the user's data folder
//! (`$XDG_DATA_HOME/attn-tutor/progress.toml`, else `~/.local/share/attn-tutor/progress.toml`),
//! or only in memory, as for a student of the SSH classroom, who has no files on the server.
//!
//! The file is the learner's own but may be damaged (a crash of another program, a bad edit, a
//! disk error). A damaged file is never a crash and is never lost silently: it is renamed to
//! `progress.toml.damaged-<UTC time>` and the warning names both files. Lesson names in it are
//! untrusted text; anything shown from it goes through `shown_name`.
//!
//! Two tutors open at once each save their own view, and the last save wins.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::score::{LessonScore, StepScore};
use crate::attention::Step;
use crate::lesson::text::printable;
use crate::lesson::{WriteError, write_file};

/// The only version of the file so far; a file saying otherwise is set aside, not guessed at.
const FORMAT: u32 = 1;

/// Largest progress file read. Even hundreds of lessons take a few kilobytes; anything near this
/// is not a progress file.
const MAX_PROGRESS_BYTES: u64 = 1024 * 1024;

/// Damaged copies set aside within one second before giving up on finding a free name.
const MAX_DAMAGED_COPIES: u32 = 100;

const HEADER: &str = "# attn-tutor practice progress: the steps you practised in each lesson.\n\
                      # Deleting this file starts every lesson afresh.\n";

/// Where progress is kept unless the tutor is told otherwise.
pub fn default_path() -> PathBuf {
    crate::data::data_dir().join("progress.toml")
}

/// A lesson name from the progress file as it may be shown: control and bidi characters are
/// written as visible escapes.
pub fn shown_name(name: &str) -> String {
    printable(name)
}

fn shown_path(path: &Path) -> String {
    printable(&path.display().to_string())
}

/// The progress of one lesson.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LessonProgress {
    /// The step the learner was on last, to reopen the lesson there.
    pub last_step: Option<Step>,
    /// The steps practised to the end, with their scores.
    pub score: LessonScore,
}

impl LessonProgress {
    pub fn is_done(&self, step: Step) -> bool {
        self.score.steps.contains_key(&step)
    }

    /// The steps practised to the end, in the order of the lesson.
    pub fn steps_done(&self) -> impl Iterator<Item = Step> + '_ {
        self.score.steps.keys().copied()
    }

    /// "2/5 steps · 7/9 first try · 2 with hints", for the lesson picker; `practice_steps` is
    /// how many steps of this lesson can be practised.
    pub fn summary(&self, practice_steps: usize) -> String {
        let done = self.score.steps.len();
        if done == 0 {
            return format!("0/{practice_steps} steps");
        }
        format!("{done}/{practice_steps} steps · {}", self.score)
    }
}

/// Why the progress file was not used as it was. The tutor shows it once, and carries on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProgressWarning {
    #[error(
        "the progress file {path} was damaged ({reason}); it was moved to {moved_to} and \
         progress starts afresh",
        path = shown_path(.path),
        moved_to = shown_path(.moved_to)
    )]
    SetAside {
        path: PathBuf,
        moved_to: PathBuf,
        reason: String,
    },
    /// Damaged and could not be renamed: it is left alone, and this session does not save over
    /// it.
    #[error(
        "the progress file {path} is damaged ({reason}) and could not be moved aside \
         ({error}); progress will not be saved this session",
        path = shown_path(.path)
    )]
    Damaged {
        path: PathBuf,
        reason: String,
        error: String,
    },
    /// Could not be read (permissions, a disk error): it may be fine, so it is left alone, and
    /// this session does not save over it.
    #[error(
        "cannot read the progress file {path} ({error}); progress will not be saved this session",
        path = shown_path(.path)
    )]
    Unreadable { path: PathBuf, error: String },
}

#[derive(Debug, thiserror::Error)]
pub enum ProgressError {
    #[error("cannot create the folder {path} for the progress file: {error}", path = shown_path(.path))]
    Folder {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("cannot write the progress as TOML: {0}")]
    Encode(#[from] toml::ser::Error),
}

/// Every lesson's progress, and where it is saved (nowhere for an in-memory store).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProgressStore {
    path: Option<PathBuf>,
    lessons: BTreeMap<String, LessonProgress>,
}

impl ProgressStore {
    /// Reads the progress at `path`. A missing file is empty progress; a damaged one is set
    /// aside and reported; one that cannot be read is left alone, reported, and not saved over.
    pub fn open(path: &Path) -> (ProgressStore, Option<ProgressWarning>) {
        let fresh = |path: Option<PathBuf>| ProgressStore {
            path,
            lessons: BTreeMap::new(),
        };
        match read(path) {
            Ok(lessons) => (
                ProgressStore {
                    path: Some(path.to_path_buf()),
                    lessons,
                },
                None,
            ),
            Err(Problem::Missing) => (fresh(Some(path.to_path_buf())), None),
            Err(Problem::Unreadable(error)) => (
                fresh(None),
                Some(ProgressWarning::Unreadable {
                    path: path.to_path_buf(),
                    error,
                }),
            ),
            Err(Problem::Damaged(reason)) => match set_aside(path) {
                Ok(moved_to) => (
                    fresh(Some(path.to_path_buf())),
                    Some(ProgressWarning::SetAside {
                        path: path.to_path_buf(),
                        moved_to,
                        reason,
                    }),
                ),
                Err(error) => (
                    fresh(None),
                    Some(ProgressWarning::Damaged {
                        path: path.to_path_buf(),
                        reason,
                        error: printable(&error.to_string()),
                    }),
                ),
            },
        }
    }

    /// Progress that lives only as long as the session: `save` writes nothing.
    pub fn in_memory() -> ProgressStore {
        ProgressStore::default()
    }

    /// The file progress is saved to; `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn lesson(&self, name: &str) -> Option<&LessonProgress> {
        self.lessons.get(name)
    }

    /// Every lesson with progress, by name. Show names with `shown_name`.
    pub fn lessons(&self) -> impl Iterator<Item = (&str, &LessonProgress)> {
        self.lessons
            .iter()
            .map(|(name, progress)| (name.as_str(), progress))
    }

    /// A step practised to the end: its score is kept (replacing an earlier one) and it becomes
    /// the lesson's last step.
    pub fn record(&mut self, lesson: &str, step: Step, score: StepScore) {
        let progress = self.lessons.entry(lesson.to_string()).or_default();
        progress.score.record(step, score);
        progress.last_step = Some(step);
    }

    /// The learner moved to `step`: the lesson reopens there.
    pub fn visit(&mut self, lesson: &str, step: Step) {
        self.lessons
            .entry(lesson.to_string())
            .or_default()
            .last_step = Some(step);
    }

    /// Forgets one lesson's progress, or every lesson's with `None`. Saved by the next `save`.
    pub fn reset(&mut self, lesson: Option<&str>) {
        match lesson {
            Some(name) => {
                self.lessons.remove(name);
            }
            None => self.lessons.clear(),
        }
    }

    /// Writes the progress atomically (a crash leaves the old file or the new one), making the
    /// folder if needed. Does nothing for an in-memory store.
    pub fn save(&self) -> Result<(), ProgressError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if let Some(folder) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder).map_err(|error| ProgressError::Folder {
                path: folder.to_path_buf(),
                error,
            })?;
        }
        let file = ProgressFile {
            format: FORMAT,
            lessons: self
                .lessons
                .iter()
                .map(|(name, progress)| (name.clone(), LessonEntry::from(progress)))
                .collect(),
        };
        let text = format!("{HEADER}{}", toml::to_string(&file)?);
        write_file(path, &text, true)?;
        Ok(())
    }
}

/// The file as TOML: `format = 1`, then `[lessons."NAME"]` with `last_step` and a table of
/// step scores keyed by the step's key (`scores`, `softmax`, …).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProgressFile {
    format: u32,
    #[serde(default)]
    lessons: BTreeMap<String, LessonEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LessonEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_step: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    steps: BTreeMap<String, StepScore>,
}

impl From<&LessonProgress> for LessonEntry {
    fn from(progress: &LessonProgress) -> LessonEntry {
        LessonEntry {
            last_step: progress.last_step.map(|step| step.key().to_string()),
            steps: progress
                .score
                .steps
                .iter()
                .map(|(step, score)| (step.key().to_string(), *score))
                .collect(),
        }
    }
}

impl LessonEntry {
    fn into_progress(self, lesson: &str) -> Result<LessonProgress, String> {
        let step = |key: &str| {
            Step::from_key(key).ok_or_else(|| {
                format!(
                    "lesson `{}` names a step `{}` that does not exist",
                    printable(lesson),
                    printable(key)
                )
            })
        };
        let last_step = self.last_step.as_deref().map(step).transpose()?;
        let mut score = LessonScore::default();
        for (key, step_score) in self.steps {
            score.record(step(&key)?, step_score);
        }
        Ok(LessonProgress { last_step, score })
    }
}

enum Problem {
    Missing,
    /// Not progress: set aside. The text is safe to print.
    Damaged(String),
    /// Could not be read at all. The text is safe to print.
    Unreadable(String),
}

fn read(path: &Path) -> Result<BTreeMap<String, LessonProgress>, Problem> {
    let unreadable = |error: std::io::Error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            Problem::Missing
        } else {
            Problem::Unreadable(printable(&error.to_string()))
        }
    };
    // Checked before opening: opening a FIFO would block.
    let metadata = std::fs::metadata(path).map_err(unreadable)?;
    if metadata.is_dir() {
        return Err(Problem::Damaged("it is a folder".to_string()));
    }
    if !metadata.is_file() {
        return Err(Problem::Damaged("it is not a regular file".to_string()));
    }
    if metadata.len() > MAX_PROGRESS_BYTES {
        return Err(Problem::Damaged(format!(
            "it is {} bytes, far more than progress takes",
            metadata.len()
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_PROGRESS_BYTES).read_to_end(&mut bytes))
        .map_err(unreadable)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Problem::Damaged("it is not UTF-8 text".to_string()))?;
    let file: ProgressFile = toml::from_str(&text).map_err(|error| {
        let message = printable(error.message().trim());
        Problem::Damaged(match error.span() {
            Some(span) => {
                let before = &text.as_bytes()[..span.start.min(text.len())];
                let line = before.iter().filter(|byte| **byte == b'\n').count() + 1;
                format!("line {line}: {message}")
            }
            None => message,
        })
    })?;
    if file.format != FORMAT {
        return Err(Problem::Damaged(format!(
            "it is format {}, and this attn-tutor reads format {FORMAT}",
            file.format
        )));
    }
    file.lessons
        .into_iter()
        .map(|(name, entry)| {
            let progress = entry.into_progress(&name).map_err(Problem::Damaged)?;
            Ok((name, progress))
        })
        .collect()
}

/// Renames a damaged file to `NAME.damaged-<UTC time>` beside it (with `-2`, `-3`, … if that is
/// taken), and returns the new name.
fn set_aside(path: &Path) -> std::io::Result<PathBuf> {
    let name = path
        .file_name()
        .map_or_else(|| "progress.toml".into(), OsStr::to_os_string);
    let stamp = utc_stamp(SystemTime::now());
    for attempt in 1..=MAX_DAMAGED_COPIES {
        let mut new_name = name.clone();
        new_name.push(format!(".damaged-{stamp}"));
        if attempt > 1 {
            new_name.push(format!("-{attempt}"));
        }
        let moved_to = path.with_file_name(new_name);
        // symlink_metadata: a dangling link in the way is taken, not followed.
        if std::fs::symlink_metadata(&moved_to).is_ok() {
            continue;
        }
        std::fs::rename(path, &moved_to)?;
        return Ok(moved_to);
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!("{MAX_DAMAGED_COPIES} damaged copies from this second are already beside it"),
    ))
}

/// `20250314T092653Z`: sorts by time, and has no `:` (not allowed in Windows file names).
fn utc_stamp(time: SystemTime) -> String {
    let seconds = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Year, month and day of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`,
/// for days on or after the epoch); no date crate is needed for one file name.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_calendar_times() {
        let at = |seconds: u64| utc_stamp(UNIX_EPOCH + std::time::Duration::from_secs(seconds));
        assert_eq!(at(0), "19700101T000000Z");
        // 2000-02-29 12:34:56 UTC: a leap day of a century leap year.
        assert_eq!(at(951_827_696), "20000229T123456Z");
        // 2024-12-31 23:59:59 UTC.
        assert_eq!(at(1_735_689_599), "20241231T235959Z");
    }
}
