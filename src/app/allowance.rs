//! What a tutor may hold where its memory is not its own: a classroom server shares one
//! machine among its students, so each lesson a student opens is first reserved against the
//! class's memory, and one the class has no room for is not opened.

use crate::lesson::Lesson;

/// The room a tutor's lessons take on a shared machine. A tutor holds at most one lesson at a
/// time, so each reservation replaces the one before.
pub trait Allowance: Send + Sync + std::fmt::Debug {
    /// Reserves room for `lesson`, named `name`, in place of what this tutor held; when there
    /// is none, the sentence saying so (and what to do) for the status line.
    fn reserve(&self, name: &str, lesson: &Lesson) -> Result<(), String>;

    /// This tutor holds no lesson of its own now: its room goes back to the class.
    fn release(&self);
}
