//! Practice mode, the pure part: checking a learner's prediction of a cell, hints, scoring, and
//! the progress kept between sessions.
//!
//! Nothing here draws or reads keys. The tutor asks `check` for a verdict, `hints` for the next
//! hint, keeps a `CellAttempt` per cell, and hands finished steps to a `ProgressStore`.

pub(crate) mod answer;
pub mod check;
pub mod hints;
pub(crate) mod progress;
pub(crate) mod score;

pub use answer::Answer;
pub use check::{Slip, SlipKind, Verdict, check, check_answer, is_close, tolerance};
pub use hints::{HintLevel, Hints, hints};
pub use progress::{
    LessonProgress, ProgressError, ProgressStore, ProgressWarning, default_path, shown_name,
};
pub use score::{CellAttempt, LessonScore, Outcome, StepScore};
