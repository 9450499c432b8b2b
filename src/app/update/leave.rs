//! Leaving a lesson or the app: asked first when edits are unsaved, or when students would be
//! left without their presenter.

use crate::app::Screen;
use crate::app::classroom::Classroom;
use crate::app::tutor::Tutor;
use crate::app::{App, Leave, Overlay, Question};

/// Leaving a lesson (or the app) asks first when there are unsaved edits.
pub(super) fn leave(app: &mut App, then: Leave) {
    let unsaved = app.screen.tutor().is_some_and(Tutor::has_unsaved_edits);
    if unsaved {
        app.overlay = Overlay::Question(Question::LeaveUnsaved(then));
    } else {
        go(app, then);
    }
}

pub(super) fn go(app: &mut App, then: Leave) {
    match then {
        // A lesson opened from a training run goes back to the run.
        Leave::ToPicker if app.screen.tutor().is_some() && app.training.is_some() => {
            app.screen = Screen::Training;
        }
        Leave::ToPicker if app.screen.tutor().is_some() => {
            app.screen = Screen::Picker;
            if let Some(allowance) = &app.allowance {
                allowance.release();
            }
        }
        // Quitting in the middle of a run stops it: asked first, as unsaved edits are.
        Leave::ToPicker | Leave::Quit
            if app
                .training()
                .is_some_and(crate::app::TrainScreen::is_running) =>
        {
            app.overlay = Overlay::Question(Question::StopTraining);
        }
        Leave::ToPicker | Leave::Quit => match students_present(app) {
            // A presenter's quit ends the class for everyone: a stray `q q` must not.
            Some(students) if students > 0 => {
                app.overlay = Overlay::Question(Question::EndClass);
            }
            _ => app.quit = true,
        },
    }
}

/// How many students follow this app's lead, when it is a presenter's.
fn students_present(app: &App) -> Option<usize> {
    match &app.classroom {
        Some(Classroom::Presenter { audience, .. }) => Some(audience.connected),
        _ => None,
    }
}
