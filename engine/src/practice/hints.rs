//! Hints for a cell, from a nudge to the answer, cut from the engine's own explanation of it so
//! that a hint never disagrees with what the tutor shows once the cell is revealed.
//!
//! Level 1 names the operands and gives the first product ("q_cat · k_sat starts with 0 × 1"),
//! level 2 writes out all the working but the result, level 3 is the whole explanation with the
//! answer. The strings are plain text; the screen lays them out. Each kind of working cuts its
//! own first two (`crate::workings::Working::hints`).

use crate::attention::{Attention, Cell};

/// How much help has been asked for a cell; levels are ordered, so the highest one counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HintLevel {
    /// Where to start: the operands and the first term.
    FirstStep = 1,
    /// All the working, without the result.
    Working = 2,
    /// The answer itself: the cell counts as revealed.
    Answer = 3,
}

impl HintLevel {
    /// The level after this one, for a "hint" key pressed again; the answer is the last.
    pub fn next(level: Option<HintLevel>) -> HintLevel {
        match level {
            None => HintLevel::FirstStep,
            Some(HintLevel::FirstStep) => HintLevel::Working,
            Some(HintLevel::Working | HintLevel::Answer) => HintLevel::Answer,
        }
    }

    /// 1, 2 or 3, as the learner counts hints.
    pub fn number(self) -> u8 {
        self as u8
    }
}

/// The three hints for one cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hints {
    pub first_step: String,
    pub working: String,
    pub answer: String,
}

impl Hints {
    pub fn get(&self, level: HintLevel) -> &str {
        match level {
            HintLevel::FirstStep => &self.first_step,
            HintLevel::Working => &self.working,
            HintLevel::Answer => &self.answer,
        }
    }
}

/// The hints for `cell` with numbers at `decimals` decimals; `None` when the lesson has no such
/// cell.
pub fn hints(attention: &Attention, cell: Cell, decimals: usize) -> Option<Hints> {
    let derivation = attention.derive(cell)?;
    let explanation = derivation.explanation(attention, decimals);
    let answer = derivation.explain(attention, decimals);
    let (first_step, working) = derivation.hints(attention, &explanation, decimals);
    Some(Hints {
        first_step,
        working,
        answer,
    })
}
