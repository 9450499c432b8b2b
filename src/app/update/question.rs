//! The questions the app asks (resume here? leave with unsaved edits?) and leaving.

use super::edit::jump_to;
use super::leave::{go, leave};
use super::save::{ask_where_to_save, save_effect};
use crate::app::action::{Action, Effect};
use crate::app::history::{Change, WholeLesson};
use crate::app::{App, Leave, Overlay, Question, Status};
use crate::lesson::keep_generators;
use crate::lesson::text::printable_path;
use std::sync::Arc;

/// What a key did to the question on screen.
pub(super) enum Answered {
    /// It answered it (or left it open), and these are what to do outside the app.
    Done(Vec<Effect>),
    /// It was no answer to the offer to resume: it acts as it would with no question open.
    NotAnAnswer(Action),
}

pub(super) fn question_update(app: &mut App, question: Question, action: Action) -> Answered {
    let action_again = action.clone();
    let answer = match action {
        Action::Answer(ch) => Some(ch.to_ascii_lowercase()),
        // Enter accepts the offer to jump; it never replaces a file or discards edits.
        Action::Submit | Action::Open | Action::Edit
            if matches!(question, Question::JumpTo { .. }) =>
        {
            Some('y')
        }
        Action::Submit if matches!(question, Question::Resume { .. }) => Some('y'),
        Action::Cancel => Some('n'),
        Action::Back if !matches!(question, Question::Resume { .. }) => Some('n'),
        // The offer to resume is no barrier: any other key is taken as starting here, and acts.
        _ if matches!(question, Question::Resume { .. }) => Some('?'),
        // A second Ctrl-c means it.
        Action::Quit
            if matches!(
                question,
                Question::LeaveUnsaved(_) | Question::EndClass | Question::StopTraining
            ) =>
        {
            app.overlay = Overlay::None;
            app.quit = true;
            return Answered::Done(Vec::new());
        }
        Action::Quit => {
            app.overlay = Overlay::None;
            leave(app, Leave::Quit);
            return Answered::Done(Vec::new());
        }
        _ => None,
    };
    let Some(answer) = answer else {
        return Answered::Done(Vec::new());
    };
    app.overlay = Overlay::None;
    match (question, answer) {
        // Where saving is off the question does not offer it: the key is taken as "stay".
        (Question::LeaveUnsaved(_), 'w' | 's') if !app.can_save => {}
        (Question::LeaveUnsaved(then), 'w' | 's') => {
            app.after_save = Some(then);
            ask_where_to_save(app);
        }
        (Question::EndClass | Question::StopTraining, 'y') => app.quit = true,
        (Question::StopTraining, _) => {}
        (Question::FollowAgain, 'y') => crate::app::classroom::follow_again(app),
        (Question::FollowAgain, _) => {
            app.status = Some(Status::info(if app.can_save {
                "Still free, your edits kept; w saves them"
            } else {
                "Still free, your edits kept; w shows them as a file to copy"
            }));
        }
        (Question::EndClass, _) => {}
        (Question::LeaveUnsaved(then), 'd' | 'y') => go(app, then),
        (Question::LeaveUnsaved(_), 'n') => {}
        (Question::Replace { path }, 'y') => {
            if let Some(tutor) = app.screen.tutor() {
                app.status = Some(Status::info(format!(
                    "Saving to {}…",
                    printable_path(&path)
                )));
                return Answered::Done(vec![save_effect(tutor, path, true)]);
            }
        }
        (Question::TooLarge { keep }, 'k') => {
            if let Some(tutor) = app.screen.tutor_mut() {
                let (kept, _) = keep_generators(&tutor.lesson);
                tutor.change(Change::Lesson {
                    before: Arc::clone(&tutor.lesson),
                    after: Arc::new(kept),
                    why: WholeLesson::Generators,
                });
            }
            ask_where_to_save(app);
            app.status = Some(Status::info(format!(
                "Your edits to {} are set back to its generator (u brings them back)",
                keep.iter()
                    .map(|name| name.symbol())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        (Question::TooLarge { .. }, 'n') => {
            app.after_save = None;
            app.status = Some(Status::info("Not saved; nothing was written"));
        }
        (Question::Replace { .. }, 'n') => {
            app.after_save = None;
            app.status = Some(Status::info("Not saved; w saves under another name"));
        }
        (Question::JumpTo { to, .. }, 'y') => {
            if let Some(tutor) = app.screen.tutor_mut() {
                jump_to(tutor, to);
            }
        }
        (Question::JumpTo { .. }, 'n') => {}
        (Question::Resume { step_index }, 'y') => {
            if let Some(tutor) = app.screen.tutor_mut() {
                tutor.go_to_step(step_index);
            }
        }
        (Question::Resume { .. }, 'n') => {}
        // Any other key starts here, and does what it does.
        (Question::Resume { .. }, _) => return Answered::NotAnAnswer(action_again),
        // Any other key leaves the question open.
        (question, _) => app.overlay = Overlay::Question(question),
    }
    Answered::Done(Vec::new())
}
