//! Starting the interactive tutor from the command line: gathering the lessons for the picker,
//! opening the one asked for, setting up the log, and handing over to the terminal.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use crate::app::{Action, App, PickerEntry, Status, update};
use crate::lesson::text::{printable, printable_lines, printable_path};
use crate::lesson::{LoadedLesson, load, load_file};
use crate::practice::{ProgressStore, ProgressWarning, default_path};
use crate::serve::{Access, ServeOptions};
use crate::term;
use crate::ui::Theme;

use super::{ServeArgs, status};

/// What the tutor opens on.
pub(crate) enum Opening<'a> {
    /// The picker.
    Picker,
    /// A built-in name or a lesson file.
    Named(&'a str),
    /// A lesson made in memory (`import`).
    Loaded(Box<LoadedLesson>),
}

pub(crate) fn run(
    opening: Opening<'_>,
    practice: bool,
    folders: &[PathBuf],
    // `--log` and `--record`: the files the tutor writes besides the lesson's.
    (log, record): (Option<&Path>, Option<&Path>),
    no_color: bool,
    color: bool,
    err: &mut dyn Write,
) -> u8 {
    let Some(mut entries) = picker_entries(folders, err) else {
        return status::INVALID;
    };
    let lesson = match &opening {
        Opening::Named(spec) => Some(*spec),
        _ => None,
    };
    let open = match opening {
        Opening::Picker => None,
        Opening::Loaded(loaded) => {
            entries.push(PickerEntry {
                name: loaded.name.clone(),
                lesson: Ok(*loaded),
            });
            Some(entries.len() - 1)
        }
        Opening::Named(spec) => match load(spec) {
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
            printable_path(path)
        );
        return status::INVALID;
    }
    let cast = match record.map(|path| start_recording(path, lesson)) {
        Some(Ok(cast)) => Some(cast.shared()),
        Some(Err(problem)) => {
            let _ = writeln!(err, "error: {problem}");
            return status::INVALID;
        }
        None => None,
    };
    let mut app = App::new(entries, None);
    let (progress, warning) = ProgressStore::open(&default_path());
    app.progress = progress;
    if let Some(index) = open {
        app.picked = index;
        update(&mut app, Action::Open);
        if practice {
            app.start_practice();
        }
    }
    if let Some(warning) = warning {
        tracing::warn!(%warning, "progress file");
        app.status = Some(Status::error(progress_warning_words(&warning)));
    }
    match term::local::run_with(
        app,
        Theme::from_env(no_color),
        cast,
        &mut |_, _| false,
        &mut term::save_locally,
    ) {
        Ok(None) => status::OK,
        Ok(Some(signal)) => u8::try_from(128 + signal).unwrap_or(status::INVALID),
        Err(error) => {
            tracing::error!(%error, "the tutor stopped");
            let _ = writeln!(err, "error: {error}");
            status::INVALID
        }
    }
}

/// The built-in lessons and every lesson of the folders, for the picker; `None` (after saying
/// why) when a folder cannot be read.
fn picker_entries(folders: &[PathBuf], err: &mut dyn Write) -> Option<Vec<PickerEntry>> {
    let mut entries = App::builtin_entries();
    for folder in folders {
        match lessons_in(folder) {
            // The picker names a file by its name; its folder is in the details.
            Ok(paths) => entries.extend(paths.into_iter().map(|path| PickerEntry {
                name: path.file_name().map_or_else(
                    || printable_path(&path),
                    |name| printable(&name.to_string_lossy()),
                ),
                lesson: load_file(&path),
            })),
            Err(error) => {
                let _ = writeln!(
                    err,
                    "error: cannot read the lesson folder {}: {error}",
                    printable_path(folder)
                );
                return None;
            }
        }
    }
    Some(entries)
}

pub(crate) fn serve(
    args: ServeArgs,
    no_color: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let Some(entries) = picker_entries(&args.lessons, err) else {
        return status::INVALID;
    };
    if args.present && (!std::io::stdout().is_terminal() || !std::io::stdin().is_terminal()) {
        let _ = writeln!(
            err,
            "error: --present runs the tutor in this terminal, and this is not a terminal\n\
             help: leave out --present to serve students only"
        );
        return status::INVALID;
    }
    let access = match (&args.password_file, &args.authorized_keys) {
        (Some(file), _) => Access::password_file(file),
        (None, Some(file)) => Access::authorized_keys(file),
        (None, None) => Ok(Access::Open),
    };
    let access = match access {
        Ok(access) => access,
        Err(error) => {
            let _ = writeln!(err, "error: {}", printable_lines(&format!("{error:#}")));
            return status::INVALID;
        }
    };
    if args.web.is_some() && matches!(access, Access::Keys(_)) {
        let _ = writeln!(
            err,
            "error: --authorized-keys is for SSH only: a browser has no SSH key to show\n\
             help: give the class a join code with --password-file (or use --open) to add --web"
        );
        return status::INVALID;
    }
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => match crate::serve::tls_config(cert, key) {
            Ok(config) => Some(config),
            Err(error) => {
                let _ = writeln!(err, "error: {}", printable_lines(&format!("{error:#}")));
                return status::INVALID;
            }
        },
        _ => None,
    };
    let logged = match &args.log {
        Some(path) => start_log(path),
        // The presenter's terminal shows the tutor: a log there would scribble over it.
        None if args.present => Ok(()),
        None => {
            let _ = tracing_subscriber::fmt()
                .with_writer(std::io::stderr)
                .with_ansi(false)
                .with_max_level(tracing::Level::INFO)
                .try_init();
            Ok(())
        }
    };
    if let Err(error) = logged {
        let _ = writeln!(err, "error: cannot write the log: {error}");
        return status::INVALID;
    }
    // Before the recording starts: a class that cannot start leaves no file behind.
    let polls = match args.polls.as_deref().map(crate::serve::PollsFile::open) {
        Some(Ok(file)) => Some(file),
        Some(Err(error)) => {
            let _ = writeln!(err, "error: {}", printable_lines(&format!("{error:#}")));
            return status::INVALID;
        }
        None => None,
    };
    let args_record = args.record.clone();
    let record = match args
        .record
        .as_deref()
        .map(|path| start_recording(path, None))
    {
        Some(Ok(cast)) => Some(cast.shared()),
        Some(Err(problem)) => {
            let _ = writeln!(err, "error: {problem}");
            return status::INVALID;
        }
        None => None,
    };
    let options = ServeOptions {
        listen: (!args.no_ssh).then_some(args.listen),
        web: args
            .web
            .map(|listen| crate::serve::WebOptions { listen, tls }),
        entries,
        host_key: args.host_key,
        access,
        max_sessions: args.max_sessions.max(1),
        max_memory: args
            .max_memory
            .unwrap_or_else(crate::serve::default_memory_limit),
        per_address: args.per_address.max(1),
        login_deadline: std::time::Duration::from_secs(args.login_seconds.max(1)),
        idle_timeout: std::time::Duration::from_secs(args.idle_minutes.max(1) * 60),
        keepalive: std::time::Duration::from_secs(args.keepalive_seconds.max(1)),
        present: args.present.then(|| Theme::from_env(no_color)),
        lock: args.lock,
        record,
        polls,
    };
    match crate::serve::run(options, out) {
        Ok(None) => status::OK,
        Ok(Some(signal)) => u8::try_from(128 + signal).unwrap_or(status::INVALID),
        Err(error) => {
            let _ = writeln!(err, "error: {}", printable_lines(&format!("{error:#}")));
            // A class that never started leaves no recording (its header alone) to stand in
            // the way of the next; one that recorded anything keeps it.
            if let Some(path) = &args_record
                && std::fs::read_to_string(path).is_ok_and(|cast| cast.lines().count() <= 1)
            {
                let _ = std::fs::remove_file(path);
            }
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

/// `--record FILE.cast`: the cast's file, made before the terminal is taken, for a terminal of
/// the size this one has now.
pub(crate) fn start_recording(
    path: &Path,
    lesson: Option<&str>,
) -> Result<crate::term::record::Cast, String> {
    let size = crossterm::terminal::size().unwrap_or((80, 24));
    let title = match lesson {
        Some(lesson) => format!("attn-tutor {}", printable(lesson)),
        None => "attn-tutor".to_string(),
    };
    if path.is_dir() {
        return Err(format!(
            "--record {}: that is a folder; give a file name, like demo.cast",
            printable_path(path)
        ));
    }
    crate::term::record::Cast::create(path, size, &title).map_err(|error| {
        if error.kind() == std::io::ErrorKind::AlreadyExists {
            format!(
                "--record {}: the file is there already; --record never writes over a file",
                printable_path(path)
            )
        } else {
            format!("--record {}: {error}", printable_path(path))
        }
    })
}

/// The status line for a progress file that could not be read. Two lines of status at 80
/// columns: the new name first, so it is never cut off.
fn progress_warning_words(warning: &ProgressWarning) -> String {
    match warning {
        ProgressWarning::SetAside {
            moved_to, reason, ..
        } => format!(
            "warning: the practice progress file was damaged and is kept as {}; progress \
             starts afresh ({reason})",
            crate::lesson::text::printable(&moved_to.display().to_string())
        ),
        other => format!("warning: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_damaged_progress_warning_reads_as_one_sentence_without_runs_of_spaces() {
        let words = progress_warning_words(&ProgressWarning::SetAside {
            path: "progress.toml".into(),
            moved_to: "progress.toml.damaged-1".into(),
            reason: "line 1: expected `=`".into(),
        });
        assert_eq!(
            words,
            "warning: the practice progress file was damaged and is kept as \
             progress.toml.damaged-1; progress starts afresh (line 1: expected `=`)"
        );
    }
}
