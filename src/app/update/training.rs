//! The training screen's keys (Space pauses, ← → and PgUp PgDn scrub the snapshots, ↑ ↓
//! choose a head, Enter opens it as a lesson, t types its text, q quits) and the run's news as
//! it comes in.

use super::leave::go;
use crate::app::action::{Action, Effect};
use crate::app::training::{SCRUB_FAR, opened_tutor};
use crate::app::tutor::Direction;
use crate::app::{App, Leave, Overlay, Prompt, PromptFor, Question, Screen, Status};

/// What the run sent, or the outcome of an Effect it asked for. A message the learner is
/// reading stays: the run's steps come ten times a second.
pub(super) fn news(app: &mut App, news: crate::app::TrainingNews) -> Vec<Effect> {
    use crate::app::TrainingNews;
    let Some(screen) = app.training.as_deref_mut() else {
        return Vec::new();
    };
    match news {
        TrainingNews::Opened(Ok(opened)) => {
            if let Some(text) = screen.trying.take() {
                screen.text = text;
            }
            let (tutor, status) = opened_tutor(screen, &opened);
            app.screen = Screen::Tutor(Box::new(tutor));
            app.overlay = Overlay::None;
            app.status = Some(status);
            Vec::new()
        }
        TrainingNews::Opened(Err(why)) => {
            // A text typed that the model cannot read goes back to its prompt, to be fixed.
            match screen.trying.take() {
                Some(text) => {
                    app.overlay = Overlay::Prompt(Prompt {
                        purpose: PromptFor::HeadText,
                        input: text,
                    });
                    app.status = Some(Status::error(format!("{why} (fix it, or Esc)")));
                }
                None => app.status = Some(Status::error(why)),
            }
            Vec::new()
        }
        TrainingNews::Finished => {
            let (effects, status) = screen.take(TrainingNews::Finished);
            // Quitting no longer stops anything: the question asked is moot.
            if app.overlay == Overlay::Question(Question::StopTraining) {
                app.overlay = Overlay::None;
                app.status = Some(Status::info("Training is done: q quits"));
            }
            if let Some(status) = status {
                app.status = Some(status);
            }
            effects
        }
        TrainingNews::Snapshot(snapshot) => {
            let (effects, status) = screen.take(TrainingNews::Snapshot(snapshot));
            // That the scrubber moved is said where it shows, not over a lesson opened from
            // the run (its status is the lesson's).
            if let Some(status) = status
                && matches!(app.screen, Screen::Training)
            {
                app.status = Some(status);
            }
            effects
        }
        news => {
            let (effects, status) = screen.take(news);
            if let Some(status) = status {
                app.status = Some(status);
            }
            effects
        }
    }
}

/// A key on the training screen. The guards make the change; an arm runs only to say why there
/// was none.
pub(super) fn training_update(app: &mut App, action: Action) -> Vec<Effect> {
    let Some(screen) = app.training.as_deref_mut() else {
        return Vec::new();
    };
    match action {
        Action::TogglePause if screen.finished => {
            app.status = Some(Status::info("Training is done: there is nothing to pause"));
        }
        Action::TogglePause => {
            screen.paused = !screen.paused;
            if !screen.paused {
                screen.paused_at = None;
            }
        }
        Action::Move(direction @ (Direction::Left | Direction::Right))
            if !screen.scrub(direction == Direction::Right, 1) =>
        {
            app.status = Some(Status::info(if direction == Direction::Right {
                newest(screen)
            } else {
                "This is the first snapshot: the weights before any step"
            }));
        }
        Action::Move(direction @ (Direction::Up | Direction::Down))
            if !screen.choose(direction == Direction::Down) =>
        {
            app.status = Some(Status::info(if direction == Direction::Down {
                "This is the last head of layer 1"
            } else {
                "This is the first head of layer 0"
            }));
        }
        Action::NextStep | Action::PreviousStep
            if !screen.scrub(action == Action::NextStep, SCRUB_FAR) =>
        {
            app.status = Some(Status::info(if action == Action::NextStep {
                newest(screen)
            } else {
                "This is the first snapshot: the weights before any step"
            }));
        }
        Action::FirstStep => {
            screen.scrub_to_end(false);
        }
        Action::LastStep => {
            screen.scrub_to_end(true);
            if screen.finished {
                app.status = Some(Status::info(newest(screen)));
            }
        }
        Action::Open | Action::Submit => {
            let text = screen.text.clone();
            return open_head(app, &text);
        }
        Action::TypeText => {
            app.overlay = Overlay::Prompt(Prompt {
                purpose: PromptFor::HeadText,
                input: screen.text.clone(),
            });
        }
        Action::ToggleHelp => {
            app.overlay = Overlay::Help;
            app.help_scroll = 0;
        }
        Action::Back | Action::Quit => go(app, Leave::Quit),
        _ => {}
    }
    // On step 0 every number beside the charts is —: nothing is measured before a step.
    let scrubbed_to_the_start = matches!(
        action,
        Action::Move(Direction::Left) | Action::PreviousStep | Action::FirstStep
    ) && app
        .training()
        .is_some_and(|run| !run.follows_newest() && run.shown_step() == 0);
    if scrubbed_to_the_start && app.status.is_none() {
        app.status = Some(Status::info(AT_STEP_0));
    }
    Vec::new()
}

/// What the screen says on the snapshot of step 0, where the loss and the scores show —.
pub(crate) const AT_STEP_0: &str =
    "Step 0: the weights before any step, so no loss or score yet (—)";

/// What → and End say at the newest snapshot: it is followed while the run goes on; once the
/// run is done it is the trained model.
fn newest(screen: &crate::app::TrainScreen) -> &'static str {
    if screen.finished {
        "This is the last snapshot: the weights the run ended with"
    } else {
        "This is the newest snapshot: the scrubber follows the run"
    }
}

/// Enter, or a text typed: the chosen head at the scrubbed snapshot, made into a lesson at the
/// edge.
pub(super) fn open_head(app: &mut App, text: &str) -> Vec<Effect> {
    let Some(screen) = app.training.as_deref() else {
        return Vec::new();
    };
    match screen.open_effect(text) {
        Some(effect) => vec![effect],
        None => {
            app.status = Some(Status::info(
                "No snapshot yet: the first comes as the run starts",
            ));
            Vec::new()
        }
    }
}

/// The text typed at `t`: tried by opening the chosen head on it; it stays the text if the head
/// opens (`news`), and goes back to the prompt with why if not.
pub(super) fn submit_text(app: &mut App, typed: &str) -> Vec<Effect> {
    let text = typed.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        app.status = Some(Status::error(
            "Type the symbols the head reads, separated by spaces (fix it, or Esc)",
        ));
        app.overlay = Overlay::Prompt(Prompt {
            purpose: PromptFor::HeadText,
            input: typed.to_string(),
        });
        return Vec::new();
    }
    app.overlay = Overlay::None;
    let effects = open_head(app, &text);
    if let Some(screen) = app.training.as_deref_mut() {
        if effects.is_empty() {
            screen.text = text;
        } else {
            screen.trying = Some(text);
        }
    }
    effects
}
