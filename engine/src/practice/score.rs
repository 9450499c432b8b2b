//! Scoring: how each predicted cell ended, and the counts per step and per lesson.
//!
//! A cell ends in one of four ways, the worst help it needed deciding:
//! - first try: right before any wrong answer or hint;
//! - on retry: right after one or more wrong answers, without a hint. The learner found it
//!   themselves once told it was wrong, which is more than "with hints" and less than "first
//!   try"; folding it into either would misreport what happened;
//! - with hints: right after a level 1 or 2 hint;
//! - revealed: the learner gave up, or asked for the level 3 hint, which is the answer.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::check::Verdict;
use super::hints::HintLevel;
use crate::attention::Step;

/// How one cell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    FirstTry,
    OnRetry,
    WithHints,
    Revealed,
}

/// One cell being practised: the wrong answers and hints so far, and how it ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CellAttempt {
    wrong_answers: u32,
    hint: Option<HintLevel>,
    outcome: Option<Outcome>,
}

impl CellAttempt {
    pub fn new() -> CellAttempt {
        CellAttempt::default()
    }

    /// Records an answer; returns the outcome when this answer ends the cell. Once a cell has
    /// ended, further answers change nothing.
    pub fn answer(&mut self, verdict: &Verdict) -> Option<Outcome> {
        if self.outcome.is_some() {
            return None;
        }
        if !verdict.is_right() {
            self.wrong_answers = self.wrong_answers.saturating_add(1);
            return None;
        }
        let outcome = match (self.hint, self.wrong_answers) {
            (Some(_), _) => Outcome::WithHints,
            (None, 0) => Outcome::FirstTry,
            (None, _) => Outcome::OnRetry,
        };
        self.outcome = Some(outcome);
        Some(outcome)
    }

    /// Records a hint shown; the answer hint (level 3) ends the cell as revealed. Asking for a
    /// lower level after a higher one keeps the higher.
    pub fn hint(&mut self, level: HintLevel) -> Option<Outcome> {
        if self.outcome.is_some() {
            return None;
        }
        self.hint = self.hint.max(Some(level));
        (level == HintLevel::Answer).then(|| self.reveal())
    }

    /// The learner gave up, or the cell was shown: it ends as revealed (unless already ended).
    pub fn reveal(&mut self) -> Outcome {
        *self.outcome.get_or_insert(Outcome::Revealed)
    }

    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    /// The highest hint shown so far.
    pub fn hint_level(&self) -> Option<HintLevel> {
        self.hint
    }

    pub fn wrong_answers(&self) -> u32 {
        self.wrong_answers
    }
}

/// How the cells of one step ended, counted. Also the shape kept in the progress file, where a
/// missing count reads as 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StepScore {
    pub first_try: u32,
    pub on_retry: u32,
    pub with_hints: u32,
    pub revealed: u32,
}

impl StepScore {
    pub fn add(&mut self, outcome: Outcome) {
        let count = match outcome {
            Outcome::FirstTry => &mut self.first_try,
            Outcome::OnRetry => &mut self.on_retry,
            Outcome::WithHints => &mut self.with_hints,
            Outcome::Revealed => &mut self.revealed,
        };
        *count = count.saturating_add(1);
    }

    /// Cells ended.
    pub fn cells(&self) -> u32 {
        self.first_try
            .saturating_add(self.on_retry)
            .saturating_add(self.with_hints)
            .saturating_add(self.revealed)
    }

    /// The sum of two scores, for lesson totals.
    pub fn plus(&self, other: &StepScore) -> StepScore {
        StepScore {
            first_try: self.first_try.saturating_add(other.first_try),
            on_retry: self.on_retry.saturating_add(other.on_retry),
            with_hints: self.with_hints.saturating_add(other.with_hints),
            revealed: self.revealed.saturating_add(other.revealed),
        }
    }
}

impl FromIterator<Outcome> for StepScore {
    fn from_iter<I: IntoIterator<Item = Outcome>>(outcomes: I) -> StepScore {
        let mut score = StepScore::default();
        for outcome in outcomes {
            score.add(outcome);
        }
        score
    }
}

/// "5/9 first try · 2 with hints · 2 revealed": first try always, the rest only when not zero,
/// so the common case stays short.
impl fmt::Display for StepScore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{} first try", self.first_try, self.cells())?;
        for (count, what) in [
            (self.on_retry, "on retry"),
            (self.with_hints, "with hints"),
            (self.revealed, "revealed"),
        ] {
            if count > 0 {
                write!(f, " · {count} {what}")?;
            }
        }
        Ok(())
    }
}

/// The scores of the steps of one lesson that have been practised to the end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LessonScore {
    pub steps: BTreeMap<Step, StepScore>,
}

impl LessonScore {
    /// Keeps a step's score; practising a step again replaces its earlier score.
    pub fn record(&mut self, step: Step, score: StepScore) {
        self.steps.insert(step, score);
    }

    pub fn step(&self, step: Step) -> Option<&StepScore> {
        self.steps.get(&step)
    }

    /// All steps added together.
    pub fn total(&self) -> StepScore {
        self.steps
            .values()
            .fold(StepScore::default(), |total, step| total.plus(step))
    }
}

impl fmt::Display for LessonScore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.total().fmt(f)
    }
}
