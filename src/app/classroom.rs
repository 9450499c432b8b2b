//! The app's part in a classroom led by a presenter: what the presenter shows, whether a
//! student follows it, and which keys a following student keeps.

use std::sync::Arc;

use super::Screen;
use super::action::Action;
use super::presented::{Audience, Presented};
use super::tutor::Tutor;
use super::{App, Overlay, Status};

/// Where this app sits in a classroom. A tutor on its own has none.
#[derive(Debug, Clone, PartialEq)]
pub enum Classroom {
    /// The teacher's own tutor, which students follow.
    Presenter {
        audience: Audience,
        /// What students type to join, shown in the help: the ssh command, and the browser
        /// page's address on a line of its own.
        join: String,
        /// The SSH host key's fingerprint (`SHA256:…`), for students whose ssh asks them to
        /// check it: the banner that printed it is under the presenter's tutor. `None` in a
        /// class without SSH.
        host_key: Option<String>,
    },
    /// A student's session in a class led by a presenter.
    Student {
        follow: Follow,
        /// The presenter's latest screen, kept for rejoining when free.
        latest: Option<Arc<Presented>>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// Showing the presenter's screen; `f` goes free.
    Following,
    /// Exploring alone; `f` rejoins the presenter.
    Free,
    /// Kept on the presenter's screen by the presenter (`serve --lock`).
    Locked,
}

impl Follow {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Follow::Following => "following",
            Follow::Free => "free",
            Follow::Locked => "locked",
        }
    }
}

impl App {
    /// How this student follows the presenter; `None` outside a class led by one.
    pub(crate) fn follow(&self) -> Option<Follow> {
        match &self.classroom {
            Some(Classroom::Student { follow, .. }) => Some(*follow),
            _ => None,
        }
    }

    /// Whether this student's screen is the presenter's (following or locked).
    pub(crate) fn is_following(&self) -> bool {
        self.follow().is_some_and(|follow| follow != Follow::Free)
    }
}

/// Handles the Actions that belong to the classroom, and keeps a following student on the
/// presenter's screen. Returns the Action back when the ordinary update should handle it.
pub(crate) fn intercept(app: &mut App, action: Action) -> Option<Action> {
    match action {
        Action::Presenter(presented) => {
            if let Some(Classroom::Student { follow, latest }) = &mut app.classroom {
                *latest = Some(Arc::clone(&presented));
                if *follow != Follow::Free {
                    show(app, &presented);
                }
                // Free students are asked too.
                super::poll::presented(app, presented.poll.as_ref());
            }
            None
        }
        Action::Audience(audience) => {
            if let Some(Classroom::Presenter {
                audience: shown, ..
            }) = &mut app.classroom
            {
                *shown = audience;
            }
            None
        }
        Action::ToggleFollow => {
            toggle_follow(app);
            None
        }
        action if app.is_following() => following_student(app, action),
        action => Some(action),
    }
}

/// Whether a free student's tutor holds edits of their own not saved: a presented tutor comes
/// without a history, so what can be undone is theirs.
fn has_own_edits(tutor: &Tutor) -> bool {
    !tutor.history.is_empty() && tutor.has_unsaved_edits()
}

/// A free student follows the presenter again, their edits given up (they said so).
pub(crate) fn follow_again(app: &mut App) {
    if let Some(Classroom::Student { follow, latest }) = &mut app.classroom
        && *follow == Follow::Free
    {
        *follow = Follow::Following;
        let latest = latest.clone();
        if let Some(presented) = latest {
            show(app, &presented);
        }
        app.status = Some(Status::info(
            "Following the presenter again (your edits are gone); f goes free",
        ));
    }
}

/// Puts the presenter's screen in front of the student, over whatever they had.
fn show(app: &mut App, presented: &Presented) {
    app.picked = presented.picked.min(app.picker.len().saturating_sub(1));
    app.screen = match &presented.tutor {
        Some(tutor) => Screen::Tutor(Box::new(tutor.clone())),
        None => Screen::Picker,
    };
    // The presenter's lesson is the presenter's to hold: the student's own, if any, is gone.
    if let Some(allowance) = &app.allowance {
        allowance.release();
    }
    // Only help and an answer to the class's poll can be open while following; anything else
    // belonged to a screen now gone.
    if app.overlay != Overlay::Help && !answering_poll(app) {
        app.overlay = Overlay::None;
    }
}

/// Whether the student is typing an answer to the class's poll: whatever the presenter does
/// meanwhile, the prompt stays open, and its keys are the student's.
fn answering_poll(app: &App) -> bool {
    matches!(
        &app.overlay,
        Overlay::Prompt(super::Prompt {
            purpose: super::PromptFor::PollAnswer(_),
            ..
        })
    )
}

fn toggle_follow(app: &mut App) {
    // Free, the student's copy of the presenter's lesson grows on its own as they look
    // around: it needs room of its own first.
    let refused = match (&app.classroom, app.screen.tutor(), &app.allowance) {
        (
            Some(Classroom::Student {
                follow: Follow::Following,
                ..
            }),
            Some(tutor),
            Some(allowance),
        ) => allowance
            .reserve(&tutor.lesson)
            .err()
            .map(|no_room| no_room.going_free(&tutor.name)),
        _ => None,
    };
    if let Some(refused) = refused {
        app.status = Some(Status::error(refused));
        return;
    }
    let (status, rejoin) = match &mut app.classroom {
        Some(Classroom::Student { follow, latest }) => match follow {
            Follow::Following => {
                *follow = Follow::Free;
                (
                    Status::info(
                        "Free: explore and edit on your own; f follows the presenter again",
                    ),
                    None,
                )
            }
            // Following again replaces the student's lesson with the presenter's: their own
            // edits (the history a presented tutor starts without) would go unasked.
            Follow::Free if app.screen.tutor().is_some_and(has_own_edits) => {
                app.overlay = Overlay::Question(super::Question::FollowAgain);
                return;
            }
            Follow::Free => {
                *follow = Follow::Following;
                (
                    Status::info("Following the presenter again; f goes free"),
                    latest.clone(),
                )
            }
            Follow::Locked => (
                Status::info(
                    "The presenter keeps the class on their screen; ←↓↑→ still move your cursor",
                ),
                None,
            ),
        },
        Some(Classroom::Presenter { .. }) => (
            Status::info("Students follow you; each of them presses f to go free"),
            None,
        ),
        None => (
            Status::info("f follows a presenter in a classroom; this tutor is your own"),
            None,
        ),
    };
    if let Some(presented) = rejoin {
        show(app, &presented);
    }
    app.status = Some(status);
}

/// What a following student may do on the presenter's screen: look around (move the cursor,
/// change matrix, scroll, help) and leave. Changing the step, the lesson or its numbers would
/// pull them off the presenter's screen, so those keys say how to go free instead.
fn following_student(app: &mut App, action: Action) -> Option<Action> {
    let on_lesson = app.screen.tutor().is_some() && app.overlay == Overlay::None;
    // On All heads ← → pick the head, which is the presenter's to choose, as the step is.
    let picks_head = app
        .tutor()
        .is_some_and(|tutor| tutor.step() == crate::pipeline::Step::AllHeads)
        && matches!(
            action,
            Action::Move(super::Direction::Left | super::Direction::Right)
        );
    match action {
        _ if answering_poll(app) => Some(action),
        _ if picks_head => {
            app.status = Some(Status::info(
                "The presenter picks the head: f goes free to pick your own · Ctrl-c leaves",
            ));
            None
        }
        Action::Move(_)
        | Action::NextMatrix
        | Action::PreviousMatrix
        | Action::Select { .. }
        | Action::ScrollNarration(_)
            if on_lesson =>
        {
            Some(action)
        }
        Action::ToggleHelp | Action::Cancel | Action::Saved(_) | Action::ScrollHelp(_) => {
            Some(action)
        }
        Action::Back | Action::Submit if app.overlay == Overlay::Help => Some(action),
        // Nothing of theirs to save: the edits on screen are the presenter's.
        Action::Quit => {
            app.quit = true;
            None
        }
        _ => {
            let locked = app.follow() == Some(Follow::Locked);
            app.status = Some(Status::info(if locked {
                "You are on the presenter's screen: ←↓↑→ move your cursor · Ctrl-c leaves"
            } else {
                "You are following the presenter: f goes free to explore · Ctrl-c leaves"
            }));
            None
        }
    }
}
