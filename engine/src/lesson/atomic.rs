//! The one way files are written: atomically, never clobbering unless asked, through a temporary
//! file named for the project so that one left by a killed save is recognised and removed by the
//! next save into the same folder.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::text::printable_path;

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{} already exists; it was left as it is", printable_path(&.0))]
    Exists(PathBuf),
    #[error("cannot write {path}: {error}", path = printable_path(&.0), error = .1)]
    Io(PathBuf, std::io::Error),
}

/// What every temporary's name holds: `.NAME.attn-tutor-save.PID.XXXXXX`.
const MARK: &str = ".attn-tutor-save.";

/// A temporary older than this is stale whatever its writer: a save takes well under a second.
const STALE_AFTER: Duration = Duration::from_secs(10 * 60);

/// Most bytes of the target's name kept in a temporary's name (file names are at most 255).
const MAX_NAME_BYTES: usize = 100;

/// Writes `contents` to a new file at `path`: to a temporary file in the same directory, synced,
/// then moved into place only if nothing is there, so a crash never leaves half a lesson and an
/// existing file is never replaced.
pub fn write_new_file(path: &Path, contents: &str) -> Result<(), WriteError> {
    write_file(path, contents, false)
}

/// Like `write_new_file`, and when `replace` is set an existing file is replaced, still
/// atomically: readers see the old file or the new one, never half of either.
pub fn write_file(path: &Path, contents: &str, replace: bool) -> Result<(), WriteError> {
    if !replace && path.exists() {
        return Err(WriteError::Exists(path.to_path_buf()));
    }
    // A file replaced through a symbolic link is the file the link names: renaming over the
    // link would leave the real file with the old contents and the link gone.
    let named = path;
    let resolved;
    let path = if replace {
        resolved =
            through_links(named).map_err(|error| WriteError::Io(named.to_path_buf(), error))?;
        resolved.as_path()
    } else {
        named
    };
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if !directory.is_dir() {
        return Err(WriteError::Io(
            path.to_path_buf(),
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("the folder {} does not exist", printable_path(directory)),
            ),
        ));
    }
    remove_stale_temporaries(directory);
    // The temporary file's own name means nothing to the user; errors name `path`.
    let io = |error: std::io::Error| {
        WriteError::Io(
            path.to_path_buf(),
            std::io::Error::new(error.kind(), strip_path(&error)),
        )
    };
    let mut temporary = tempfile::Builder::new()
        .prefix(&temporary_prefix(path))
        .rand_bytes(6)
        .tempfile_in(directory)
        .map_err(io)?;
    // A temporary file is private (0600); a lesson is for sharing, like any file the user
    // creates, and a replaced file keeps its own permissions.
    let existing = std::fs::metadata(path).ok().filter(|_| replace);
    set_shareable(temporary.as_file(), existing).map_err(io)?;
    temporary.write_all(contents.as_bytes()).map_err(io)?;
    temporary.as_file().sync_all().map_err(io)?;
    if replace {
        temporary
            .persist(path)
            .map_err(|error| WriteError::Io(path.to_path_buf(), error.error))?;
        return Ok(());
    }
    temporary.persist_noclobber(path).map_err(|error| {
        if error.error.kind() == std::io::ErrorKind::AlreadyExists {
            WriteError::Exists(path.to_path_buf())
        } else {
            WriteError::Io(path.to_path_buf(), error.error)
        }
    })?;
    Ok(())
}

/// Where `path` leads when every symbolic link on the way to its last part is followed (a
/// link to a file not yet made leads to where it would be); `path` itself when it is no link.
fn through_links(path: &Path) -> std::io::Result<PathBuf> {
    // As the kernel's own limit on links followed in one lookup.
    const MAX_LINKS: usize = 40;
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&path) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(folder) if target.is_relative() => folder.join(target),
                    _ => target,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("more than {MAX_LINKS} symbolic links, one after another"),
    ))
}

/// `.NAME.attn-tutor-save.PID.`: hidden, says whose and what it is, and which process writes it.
fn temporary_prefix(path: &Path) -> String {
    let name = path
        .file_name()
        .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    let mut end = name.len().min(MAX_NAME_BYTES);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!(".{}{MARK}{}.", &name[..end], std::process::id())
}

/// The writer's process id when `name` is one of our temporaries.
fn temporary_writer(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let (_, after) = rest.rsplit_once(MARK)?;
    let (pid, random) = after.split_once('.')?;
    let well_formed = random.len() == 6 && random.bytes().all(|byte| byte.is_ascii_alphanumeric());
    well_formed.then(|| pid.parse().ok()).flatten()
}

/// Removes temporaries a killed save left in `directory`: ours by name, regular files, and
/// either old or written by a process that is no longer running. Best effort: a folder that
/// cannot be listed, or a file that cannot be removed, does not stop the save.
fn remove_stale_temporaries(directory: &Path) {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temporary_writer) else {
            continue;
        };
        // Not followed: a link of our pattern is removed as a link, never its target.
        let Ok(metadata) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !metadata.is_file() {
            continue;
        }
        let old = metadata
            .modified()
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age > STALE_AFTER);
        if old || writer_is_gone(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether process `pid` has ended. Only answered where /proc lists processes; elsewhere a
/// temporary waits until it is old.
fn writer_is_gone(pid: u32) -> bool {
    if pid == std::process::id() {
        return false;
    }
    let proc = Path::new("/proc");
    proc.join("self").exists() && !proc.join(pid.to_string()).exists()
}

#[cfg(unix)]
fn set_shareable(file: &std::fs::File, existing: Option<std::fs::Metadata>) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let permissions = existing.map_or_else(
        || std::fs::Permissions::from_mode(0o644),
        |existing| existing.permissions(),
    );
    file.set_permissions(permissions)
}

#[cfg(not(unix))]
fn set_shareable(_: &std::fs::File, _: Option<std::fs::Metadata>) -> std::io::Result<()> {
    Ok(())
}

/// tempfile's errors append `at path "…/.NAME.attn-tutor-save…"`; the message before it is what
/// matters.
fn strip_path(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" at path ") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporaries_are_named_for_their_file_and_writer() {
        let prefix = temporary_prefix(Path::new("dir/lesson.toml"));
        assert_eq!(
            prefix,
            format!(".lesson.toml.attn-tutor-save.{}.", std::process::id())
        );
        assert_eq!(
            temporary_writer(&format!("{prefix}aB3dE9")),
            Some(std::process::id())
        );
    }

    #[test]
    fn only_our_exact_pattern_is_recognised() {
        assert_eq!(
            temporary_writer(".x.toml.attn-tutor-save.42.aB3dE9"),
            Some(42)
        );
        for name in [
            ".tmpM10NzW",
            "x.toml.attn-tutor-save.42.aB3dE9",
            ".x.toml.attn-tutor-save.42.aB3dE",
            ".x.toml.attn-tutor-save.42.aB3dE9.toml",
            ".x.toml.attn-tutor-save.pid.aB3dE9",
            ".x.toml.attn-tutor-save.42",
        ] {
            assert_eq!(temporary_writer(name), None, "{name}");
        }
    }

    #[test]
    fn a_long_name_is_cut_on_a_character_boundary() {
        let name = "é".repeat(200);
        let prefix = temporary_prefix(Path::new(&name));
        assert!(prefix.len() < 140, "{}", prefix.len());
        assert!(temporary_writer(&format!("{prefix}aB3dE9")).is_some());
    }
}
