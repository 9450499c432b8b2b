//! What a presenter's tutor tells its class: the screen the students follow, and how many
//! students are there to follow it.

use std::sync::Arc;

use super::App;
use super::poll::Poll;
use super::tutor::Tutor;

/// How many students are connected, and how many of them follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Audience {
    pub connected: usize,
    pub following: usize,
    /// Students gone free who have edits of their own not saved: ending the class loses them.
    pub unsaved: usize,
    /// Answers in to the open poll, from students connected now.
    pub answered: usize,
}

/// What the presenter has on screen: the lesson picked, and the lesson being taught with its
/// edits, step and cursor.
#[derive(Debug, Clone)]
pub struct Presented {
    /// Counts up with every change, so a screen is told apart from the next without comparing
    /// whole lessons.
    pub version: u64,
    pub picked: usize,
    pub tutor: Option<Tutor>,
    /// The poll the presenter asked, open or revealed: every student has it, following or
    /// free.
    pub poll: Option<Arc<Poll>>,
}

impl PartialEq for Presented {
    fn eq(&self, other: &Presented) -> bool {
        self.version == other.version
    }
}

impl Presented {
    /// The presenter's screen as students get it. The edit history stays with the presenter:
    /// students cannot undo the presenter's edits, and it would be copied to every student.
    pub fn of(app: &App, version: u64) -> Presented {
        Presented {
            version,
            picked: app.picked,
            tutor: app.screen.tutor().map(|tutor| Tutor {
                history: Default::default(),
                presented: true,
                ..tutor.clone()
            }),
            poll: app.polling.poll.clone(),
        }
    }
}
