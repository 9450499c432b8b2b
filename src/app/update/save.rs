//! Saving the lesson: where to, and what the save's result tells the learner.

use super::leave::go;
use crate::app::action::{Action, Effect, SaveFailure};
use crate::app::tutor::Tutor;
use crate::app::{App, Overlay, Prompt, PromptFor, Question, Status};
use crate::lesson::limits::{MAX_FILE_BYTES, MAX_FILE_SIZE};
use crate::lesson::text::printable_path;
use crate::lesson::{keep_generators, lesson_to_toml, lesson_toml_bytes};
use std::path::PathBuf;
use std::sync::Arc;

/// `w`, or saving on the way out: asks for a file name once the lesson is known to fit in a
/// lesson file. An edited generated matrix is written out number by number (a 1024 × 1024 one is
/// over 20 MB), so it may not: then nothing is written, the learner is told how big it would be,
/// and offered what does fit, the generators of the edited matrices.
pub(super) fn ask_where_to_save(app: &mut App) {
    let Some(tutor) = app.screen.tutor() else {
        return;
    };
    if !app.can_save {
        app.after_save = None;
        let showing = app.screen.tutor_mut().map(|tutor| {
            tutor.showing_file = !tutor.showing_file;
            tutor.narration_scroll = 0;
            tutor.showing_file
        });
        app.status = Some(Status::info(if showing == Some(true) {
            format!(
                "{}. Your lesson as a file is shown below to copy (Shift-↑↓ scrolls) · w hides it",
                crate::app::SAVING_OFF
            )
        } else {
            crate::app::SAVING_OFF.to_string()
        }));
        return;
    }
    let lesson = tutor.lesson_to_save();
    let bytes = lesson_toml_bytes(&lesson);
    if bytes <= MAX_FILE_BYTES {
        app.overlay = Overlay::Prompt(Prompt {
            purpose: PromptFor::SavePath,
            input: tutor.default_save_name(),
        });
        return;
    }
    let too_large = format!(
        "as a file this lesson would be {} ({bytes} bytes), and a lesson file is at most \
         {MAX_FILE_SIZE} ({MAX_FILE_BYTES} bytes)",
        size_text(bytes)
    );
    let (kept, keep) = keep_generators(&lesson);
    if !keep.is_empty() && lesson_toml_bytes(&kept) <= MAX_FILE_BYTES {
        app.status = Some(Status::error(format!(
            "Not saved yet: {too_large}; edited generated numbers are written out one by one"
        )));
        app.overlay = Overlay::Question(Question::TooLarge { keep });
    } else {
        app.after_save = None;
        app.status = Some(Status::error(format!(
            "Not saved: {too_large}. Nothing was written; your edits are still here"
        )));
    }
}

/// `21.7 MB`: a file size as a learner reads it.
pub(super) fn size_text(bytes: usize) -> String {
    format!("{:.1} MB", bytes as f64 / 1_000_000.0)
}

pub(super) fn save_effect(tutor: &Tutor, path: PathBuf, replace: bool) -> Effect {
    Effect::Save {
        path,
        contents: lesson_to_toml(&tutor.lesson_to_save()),
        replace,
    }
}

pub(super) fn saved(app: &mut App, action: Action) -> Vec<Effect> {
    let Action::Saved(result) = action else {
        return Vec::new();
    };
    match result {
        Ok(path) => {
            if let Some(tutor) = app.screen.tutor_mut() {
                tutor.saved = Arc::clone(&tutor.lesson);
            }
            let left_out = app.screen.tutor().is_some_and(|tutor| {
                tutor.numbers_changed() && tutor.original.narration != Default::default()
            });
            app.status = Some(Status::info(if left_out {
                format!(
                    "Saved to {}, with the default narration: the lesson's own was written for its original numbers",
                    printable_path(&path)
                )
            } else {
                format!("Saved to {}", printable_path(&path))
            }));
            if let Some(then) = app.after_save.take() {
                go(app, then);
            }
        }
        Err(SaveFailure::Exists(path)) => {
            app.overlay = Overlay::Question(Question::Replace { path });
        }
        Err(SaveFailure::NotAllowed(why) | SaveFailure::Other(why)) => {
            app.after_save = None;
            app.status = Some(Status::error(format!(
                "Not saved: {why}. Your edits are still here"
            )));
        }
    }
    Vec::new()
}
