//! What a tutor may hold where its memory is not its own: a classroom server shares one
//! machine among its students, so each lesson a student opens is first reserved against the
//! class's memory, and one the class has no room for is not opened.

use crate::lesson::Lesson;

const MIB: u64 = 1024 * 1024;

/// The room a tutor's lessons take on a shared machine. A tutor holds at most one lesson at a
/// time, so each reservation replaces the one before.
pub trait Allowance: Send + Sync + std::fmt::Debug {
    /// Reserves room for `lesson` in place of what this tutor held, or says how far short the
    /// class is.
    fn reserve(&self, lesson: &Lesson) -> Result<(), NoRoom>;

    /// This tutor holds no lesson of its own now: its room goes back to the class.
    fn release(&self);
}

/// Why a lesson was not given room: what it may take, and what the class has left of its
/// limit, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoRoom {
    pub needed: u64,
    pub left: u64,
    pub limit: u64,
}

impl NoRoom {
    /// What the student reads when the lesson `name` is not opened.
    pub(crate) fn opening(&self, name: &str) -> String {
        format!(
            "{name} is not opened: it may take up to {}; open a smaller lesson, or try again \
             when a classmate has left theirs",
            self.sizes()
        )
    }

    /// What a following student reads when they cannot go free with their own copy of `name`.
    pub(crate) fn going_free(&self, name: &str) -> String {
        format!(
            "Still following the presenter: your own copy of {name} may take up to {}; try \
             again when a classmate has left theirs",
            self.sizes()
        )
    }

    fn sizes(&self) -> String {
        format!(
            "{} MiB of the server's memory, and the class has {} MiB left of its {} MiB",
            self.needed.div_ceil(MIB),
            self.left / MIB,
            self.limit / MIB
        )
    }
}
