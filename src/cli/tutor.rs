//! Starting the interactive tutor from the command line: gathering the lessons for the picker,
//! opening the one asked for, setting up the log, and handing over to the terminal.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use crate::app::{App, PickerEntry};
use crate::lesson::{load, load_file};
use crate::term;
use crate::ui::Theme;

use super::status;

pub fn run(
    lesson: Option<&str>,
    folders: &[PathBuf],
    log: Option<&Path>,
    no_color: bool,
    color: bool,
    err: &mut dyn Write,
) -> u8 {
    let mut entries = App::builtin_entries();
    for folder in folders {
        match lessons_in(folder) {
            // The picker names a file by its name; its folder is in the details.
            Ok(paths) => entries.extend(paths.into_iter().map(|path| PickerEntry {
                name: path.file_name().map_or_else(
                    || path.display().to_string(),
                    |name| name.to_string_lossy().into_owned(),
                ),
                lesson: load_file(&path),
            })),
            Err(error) => {
                let _ = writeln!(
                    err,
                    "error: cannot read the lesson folder {}: {error}",
                    folder.display()
                );
                return status::INVALID;
            }
        }
    }
    let open = match lesson {
        None => None,
        Some(spec) => match load(spec) {
            Ok(loaded) => {
                // A built-in asked for by name opens from its own picker line.
                let known = entries.iter().position(|entry| {
                    entry
                        .lesson
                        .as_ref()
                        .is_ok_and(|known| known.name == loaded.name && known.path == loaded.path)
                });
                Some(known.unwrap_or_else(|| {
                    entries.push(PickerEntry {
                        name: spec.to_string(),
                        lesson: Ok(loaded),
                    });
                    entries.len() - 1
                }))
            }
            Err(error) => {
                let _ = write!(err, "{}", error.render(color));
                return status::INVALID;
            }
        },
    };
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        let _ = writeln!(
            err,
            "error: the tutor needs a terminal to draw in\n\
             help: for plain text, run `attn-tutor show LESSON`; `attn-tutor list` lists lessons"
        );
        return status::INVALID;
    }
    if let Some(path) = log
        && let Err(error) = start_log(path)
    {
        let _ = writeln!(
            err,
            "error: cannot write the log {}: {error}",
            path.display()
        );
        return status::INVALID;
    }
    let app = App::new(entries, open);
    match term::local::run(app, Theme::from_env(no_color)) {
        Ok(None) => status::OK,
        Ok(Some(signal)) => u8::try_from(128 + signal).unwrap_or(status::INVALID),
        Err(error) => {
            tracing::error!(%error, "the tutor stopped");
            let _ = writeln!(err, "error: {error}");
            status::INVALID
        }
    }
}

/// The `*.toml` files of a folder, sorted by name.
fn lessons_in(folder: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(folder)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    paths.sort();
    Ok(paths)
}

/// Logs go to a file, appended to, never to the screen the tutor draws on.
fn start_log(path: &Path) -> std::io::Result<()> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let _ = tracing_subscriber::fmt()
        .with_writer(std::sync::Mutex::new(file))
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .try_init();
    Ok(())
}
