//! `attn-tutor progress`: the practice kept for each lesson, and clearing it.

use std::io::Write;

use crate::lesson::BUILTIN;
use crate::lesson::text::printable_path;
use crate::practice::{ProgressStore, ProgressWarning, default_path, shown_name};

use super::status;

pub(crate) fn run(
    reset: bool,
    lesson: Option<&str>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let path = default_path();
    let (mut store, warning) = ProgressStore::open(&path);
    // A store without a file is one that could not be read (or was damaged and could not be
    // moved aside): clearing it would clear nothing, and listing it would list nothing, so
    // both say so instead.
    if store.path().is_none() {
        let why = match &warning {
            Some(ProgressWarning::Unreadable { error, .. }) => {
                format!("it cannot be read ({error})")
            }
            Some(ProgressWarning::Damaged { reason, error, .. }) => {
                format!("it is damaged ({reason}) and could not be moved aside ({error})")
            }
            _ => "it cannot be used".to_string(),
        };
        let what = if reset {
            "nothing was reset in"
        } else {
            "cannot tell what practice is kept in"
        };
        let _ = writeln!(
            err,
            "error: {what} {}: {why}\nhelp: fix or remove the file, then try again",
            printable_path(&path)
        );
        return status::INVALID;
    }
    if let Some(warning) = warning {
        let _ = writeln!(err, "warning: {warning}");
    }
    if let Some(name) = lesson
        && store.lesson(name).is_none()
    {
        let _ = writeln!(
            err,
            "error: no practice is kept for {}\nhelp: `attn-tutor progress` lists the lessons \
             practised",
            shown_name(name)
        );
        return status::INVALID;
    }
    if reset {
        // Nothing kept means nothing to clear, and nothing to write: a reset must not make a
        // file, least of all where a dangling link named progress.toml points.
        if store.lessons().next().is_none() {
            let _ = writeln!(
                out,
                "No practice kept yet ({}); nothing to clear.",
                printable_path(&path)
            );
            return status::OK;
        }
        store.reset(lesson);
        if let Err(error) = store.save() {
            let _ = writeln!(err, "error: {error}");
            return status::INVALID;
        }
        let what = lesson.map_or("every lesson".to_string(), shown_name);
        let _ = writeln!(
            out,
            "Cleared the practice of {what} ({}).",
            printable_path(&path)
        );
        return status::OK;
    }
    let mut any = false;
    for (name, progress) in store.lessons() {
        if lesson.is_some_and(|only| only != name) {
            continue;
        }
        any = true;
        let steps = practice_steps(name).map_or(String::new(), |steps| {
            format!("  {}", progress.summary(steps))
        });
        let last = progress.last_step.map_or(String::new(), |step| {
            format!("  (last at {})", step.title())
        });
        let _ = writeln!(out, "{}{steps}{last}", shown_name(name));
    }
    if !any {
        let _ = writeln!(
            out,
            "No practice kept yet. In a lesson, press x to predict the results yourself."
        );
    }
    let _ = writeln!(out, "Kept in {}", printable_path(&path));
    status::OK
}

/// How many steps a built-in lesson has to practise; other lessons are known only by name
/// here, so their count is not shown.
fn practice_steps(name: &str) -> Option<usize> {
    let builtin = BUILTIN.iter().find(|builtin| builtin.name == name)?;
    let loaded = crate::lesson::load_text(builtin.name, None, builtin.text.to_string()).ok()?;
    Some(crate::app::practice_steps(&loaded.lesson))
}
