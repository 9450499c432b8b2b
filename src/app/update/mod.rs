//! `update`: how each Action changes the app. The only way the app's state changes. This file
//! routes an Action by what is on screen; each kind of key has its own file below.

use super::Screen;
use super::action::{Action, Effect};
use super::classroom;
use super::tutor::Direction;
use super::tutor::Tutor;
use super::{App, Leave, Overlay, Question, Status};

mod backward;
mod edit;
pub(crate) use edit::MAX_INPUT_CHARS;
mod leave;
mod question;
mod save;
mod training;
mod tutor;

use edit::prompt_update;
use leave::{go, leave};
use question::{Answered, question_update};
use save::saved;
use tutor::tutor_update;

/// Applies one Action. Returns what the caller must do outside the app (save a file, keep the
/// progress) and report back with `Action::Saved` or `Action::ProgressSaved`.
pub fn update(app: &mut App, action: Action) -> Vec<Effect> {
    let step_before = app.screen.tutor().map(|tutor| tutor.step_index);
    let mut effects = apply(app, action);
    keep_progress(app, step_before);
    super::poll::sync(app);
    if std::mem::take(&mut app.progress_changed) {
        effects.push(Effect::SaveProgress(app.progress.clone()));
    }
    effects
}

fn apply(app: &mut App, action: Action) -> Vec<Effect> {
    if let Action::ProgressSaved(result) = action {
        if let Err(why) = result {
            app.status = Some(Status::error(format!("Progress not kept: {why}")));
        }
        return Vec::new();
    }
    if let Action::Poll(reply) = action {
        super::poll::replied(app, reply);
        return Vec::new();
    }
    if let Action::Training(news) = action {
        return training::news(app, news);
    }
    // What others do (a save finishing, the presenter moving) leaves the learner's message.
    if !matches!(
        action,
        Action::Saved(_) | Action::Presenter(_) | Action::Audience(_)
    ) {
        app.status = None;
    }
    match action {
        Action::AskClass => return super::poll::ask(app, false),
        Action::AskClassAgain => return super::poll::ask(app, true),
        Action::StartPollAnswer(first) => {
            super::poll::start_answer(app, &first.to_string());
            return Vec::new();
        }
        Action::Paste(text) if super::poll::takes_paste(app) => {
            super::poll::start_answer(app, &text);
            return Vec::new();
        }
        _ => {}
    }
    let Some(action) = classroom::intercept(app, action) else {
        return Vec::new();
    };
    match app.overlay.clone() {
        Overlay::Help => {
            match action {
                Action::Quit => leave(app, Leave::Quit),
                Action::ToggleHelp | Action::Back | Action::Cancel | Action::Submit => {
                    app.overlay = Overlay::None;
                }
                // Clamped again where it is drawn, to the rows that do not fit.
                Action::ScrollHelp(rows) => {
                    let most = crate::keymap::help_rows_for(app).len() as u16;
                    app.help_scroll = app.help_scroll.saturating_add_signed(rows).min(most);
                }
                _ => {}
            }
            Vec::new()
        }
        Overlay::Prompt(prompt) => prompt_update(app, prompt, action),
        Overlay::Question(question) => match question_update(app, question, action) {
            Answered::Done(effects) => effects,
            Answered::NotAnAnswer(action) => apply(app, action),
        },
        Overlay::None if matches!(action, Action::Saved(_)) => saved(app, action),
        Overlay::None if app.screen.tutor().is_some() => tutor_update(app, action),
        Overlay::None if app.screen.lab().is_some() => {
            lab_update(app, action);
            Vec::new()
        }
        Overlay::None if app.training_on_screen().is_some() => {
            training::training_update(app, action)
        }
        Overlay::None => {
            picker_update(app, action);
            Vec::new()
        }
    }
}

fn picker_update(app: &mut App, action: Action) {
    let last = app.picker.len().saturating_sub(1);
    match action {
        Action::Move(Direction::Up) => app.picked = app.picked.saturating_sub(1),
        Action::Move(Direction::Down) => app.picked = (app.picked + 1).min(last),
        Action::FirstStep => app.picked = 0,
        Action::LastStep => app.picked = last,
        // A click picks a lesson; a click on the lesson already picked opens it.
        Action::Pick(index) if index == app.picked => open(app),
        Action::Pick(index) if index <= last => app.picked = index,
        Action::Open | Action::Submit | Action::Edit | Action::Move(Direction::Right) => open(app),
        Action::Back | Action::Quit => go(app, Leave::Quit),
        Action::ToggleHelp => {
            app.overlay = Overlay::Help;
            app.help_scroll = 0;
        }
        Action::OpenLab => app.screen = Screen::Lab(super::LabScreen::open()),
        _ => {}
    }
}

/// The scaling lab's keys: ← → the d_k, [ ] the keys in a row, r the seed, q back. The guards
/// make the change; an arm runs only to say why there was none (an end of the sweep).
fn lab_update(app: &mut App, action: Action) {
    let Some(lab) = app.screen.lab_mut() else {
        return;
    };
    match action {
        Action::Move(direction @ (Direction::Left | Direction::Right))
            if !lab.choose(direction == Direction::Right) =>
        {
            app.status = Some(Status::info(if direction == Direction::Right {
                "This is the sweep's largest d_k: ← goes back"
            } else {
                "This is the sweep's smallest d_k: → goes on"
            }));
        }
        Action::NextMatrix | Action::PreviousMatrix
            if !lab.change_keys(action == Action::NextMatrix) =>
        {
            app.status = Some(Status::info(format!(
                "A row here has from 2 to {} keys (`attn-tutor lab scaling --keys` takes more)",
                super::SCREEN_MAX_KEYS
            )));
        }
        Action::Reroll => lab.reseed(),
        Action::ToggleHelp => {
            app.overlay = Overlay::Help;
            app.help_scroll = 0;
        }
        Action::Back => app.screen = Screen::Picker,
        Action::Quit => go(app, Leave::Quit),
        _ => {}
    }
}

fn open(app: &mut App) {
    let Some(entry) = app.picker.get(app.picked) else {
        return;
    };
    match &entry.lesson {
        Ok(loaded) => {
            if let Some(allowance) = &app.allowance
                && let Err(no_room) = allowance.reserve(&loaded.lesson)
            {
                app.status = Some(Status::error(no_room.opening(&entry.name)));
                return;
            }
            let warnings = loaded.warnings.len();
            let tutor = Tutor::new(loaded);
            let stopped_at = app
                .progress
                .lesson(&tutor.name)
                .and_then(|progress| progress.last_step)
                .and_then(|step| tutor.steps.iter().position(|shown| *shown == step))
                .filter(|index| *index > 0);
            app.screen = Screen::Tutor(Box::new(tutor));
            if let Some(step_index) = stopped_at {
                app.overlay = Overlay::Question(Question::Resume { step_index });
            }
            if let Some(first) = loaded.warnings.first() {
                let more = if warnings > 1 {
                    format!(" (and {} more; run `attn-tutor check`)", warnings - 1)
                } else {
                    String::new()
                };
                app.status = Some(Status::info(format!("warning: {}{more}", first.message)));
            }
        }
        Err(error) => {
            app.status = Some(Status::error(format!(
                "{} cannot be opened: {}",
                entry.name,
                error.first_line()
            )));
        }
    }
}

/// After any Action: a new step is where the learner now is, and a step just practised to the
/// end goes into their progress.
fn keep_progress(app: &mut App, step_before: Option<usize>) {
    let Some(tutor) = app.screen.tutor_mut() else {
        return;
    };
    // Only practice is kept: a lesson merely looked through has nothing to resume. The step
    // practised on is the one to come back to, whether practice reached it by n, started on
    // it with x, or it was finished before.
    if tutor.practice.is_some()
        && app
            .progress
            .lesson(&tutor.name)
            .is_none_or(|progress| progress.last_step != Some(tutor.step()))
    {
        app.progress.visit(&tutor.name, tutor.step());
        app.progress_changed = true;
    }
    if step_before.is_some_and(|before| before != tutor.step_index) {
        if let Some(practice) = tutor.practice.as_mut() {
            practice.feedback = None;
        }
        if let Some(target) = tutor.practice_target().filter(|_| tutor.practice.is_some()) {
            tutor.focus_on(target);
        }
    }
    if let Some((step, score)) = tutor
        .practice
        .as_mut()
        .and_then(|practice| practice.just_finished.take())
    {
        app.progress.record(&tutor.name, step, score);
        app.progress_changed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::edit::{MAX_REROLLED_SEED, scramble};

    #[test]
    fn rerolled_seeds_are_short_valid_and_new() {
        for seed in [
            0,
            1,
            7,
            999_998,
            999_999,
            1_000_000,
            i64::MAX as u64,
            u64::MAX,
        ] {
            let next = scramble(seed);
            assert!((1..=MAX_REROLLED_SEED).contains(&next), "{seed} → {next}");
            assert_ne!(next, seed);
        }
        let mut seen = std::collections::HashSet::new();
        assert!(
            (1..=5000).all(|seed| seen.insert(scramble(seed))),
            "distinct seeds stay distinct"
        );
    }

    #[test]
    fn rerolled_seeds_do_not_repeat_their_neighbours() {
        let seeds: Vec<u64> = (0..4).map(scramble).collect();
        assert!(seeds.iter().all(|seed| *seed > 3));
        assert_ne!(scramble(1), scramble(2));
    }
}
