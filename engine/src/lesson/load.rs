//! Finding a lesson by name or path and reading it, bounded and with clear errors.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::diagnostic::{Diagnostic, render, render_without_source};
use super::limits::{MAX_FILE_BYTES, MAX_FILE_SIZE};
use super::text::{printable, printable_path};
use super::{BUILTIN, Lesson, builtin, parse};

/// A lesson ready to teach, with where it came from.
#[derive(Debug, Clone)]
pub struct LoadedLesson {
    /// Built-in name, or the file's stem.
    pub name: String,
    /// The file, for a lesson read from disk.
    pub path: Option<PathBuf>,
    /// The file text, kept for diagnostics and for `freeze`.
    pub text: String,
    pub lesson: Lesson,
    pub warnings: Vec<Diagnostic>,
}

impl LoadedLesson {
    /// How diagnostics name this lesson: its path, `<built-in NAME>`, or for a lesson made
    /// here and in no file (`import` without -o) `<NAME, not saved as a file>`.
    pub fn display_path(&self) -> String {
        display_path(&self.name, self.path.as_deref())
    }
}

fn display_path(name: &str, path: Option<&Path>) -> String {
    match path {
        Some(path) => printable_path(path),
        None if BUILTIN.iter().any(|lesson| lesson.name == name) => format!("<built-in {name}>"),
        None => format!("<{}, not saved as a file>", printable(name)),
    }
}

#[derive(Debug, Clone)]
pub enum LoadError {
    /// Neither a file nor a built-in lesson.
    UnknownName {
        name: String,
        suggestion: Option<&'static str>,
    },
    Io {
        path: PathBuf,
        message: String,
    },
    NotAFile {
        path: PathBuf,
    },
    TooLarge {
        path: PathBuf,
        bytes: u64,
    },
    NotUtf8 {
        path: PathBuf,
        offset: usize,
    },
    /// The file was read but has errors.
    Invalid {
        path: String,
        text: String,
        diagnostics: Vec<Diagnostic>,
    },
}

impl LoadError {
    /// The error as the command line prints it.
    pub fn render(&self, color: bool) -> String {
        match self {
            LoadError::UnknownName { name, suggestion } => {
                let names: Vec<&str> = BUILTIN.iter().map(|lesson| lesson.name).collect();
                let help = match suggestion {
                    Some(suggestion) => {
                        format!("did you mean `{suggestion}`? (run `attn-tutor list` to see all)")
                    }
                    None => format!(
                        "built-in lessons: {}; or give the path of a .toml file",
                        names.join(", ")
                    ),
                };
                render_without_source(
                    &format!("no lesson named `{}` and no such file", printable(name)),
                    Some(&help),
                    color,
                )
            }
            LoadError::Io { path, message } => render_without_source(
                &format!("cannot read {}: {message}", printable_path(path)),
                None,
                color,
            ),
            LoadError::NotAFile { path } => render_without_source(
                &format!("{} is not a regular file", printable_path(path)),
                Some("give the path of a lesson .toml file"),
                color,
            ),
            LoadError::TooLarge { path, bytes } => render_without_source(
                &format!(
                    "{} is {bytes} bytes; lesson files are at most {MAX_FILE_BYTES} bytes ({MAX_FILE_SIZE})",
                    printable_path(path)
                ),
                Some(
                    "use generators such as { random = \"normal\", seed = 1, shape = [512, 64] } for large matrices",
                ),
                color,
            ),
            LoadError::NotUtf8 { path, offset } => render_without_source(
                &format!(
                    "{} is not UTF-8 text (invalid byte at offset {offset})",
                    printable_path(path)
                ),
                Some("save the lesson as UTF-8"),
                color,
            ),
            LoadError::Invalid {
                path,
                text,
                diagnostics,
            } => render(diagnostics, text, path, color),
        }
    }

    /// The first problem on one line, for the lesson picker.
    pub fn first_line(&self) -> String {
        match self {
            LoadError::Invalid {
                path,
                text,
                diagnostics,
            } => diagnostics
                .iter()
                .find(|d| d.is_error())
                .map(|d| d.one_line(text, path))
                .unwrap_or_default(),
            other => other
                .render(false)
                .lines()
                .next()
                .unwrap_or_default()
                .to_string(),
        }
    }
}

/// Loads a lesson by built-in name or file path. An existing file wins over a built-in name.
pub fn load(spec: &str) -> Result<LoadedLesson, LoadError> {
    let path = Path::new(spec);
    if path.exists() {
        return load_file(path);
    }
    if let Some(lesson) = builtin(spec) {
        return load_text(lesson.name, None, lesson.text.to_string());
    }
    if spec.contains(std::path::MAIN_SEPARATOR) || spec.ends_with(".toml") {
        return Err(LoadError::Io {
            path: path.to_path_buf(),
            message: "no such file".to_string(),
        });
    }
    let names: Vec<&'static str> = BUILTIN.iter().map(|lesson| lesson.name).collect();
    let suggestion = super::parse::did_you_mean(spec, &names);
    Err(LoadError::UnknownName {
        name: spec.to_string(),
        suggestion,
    })
}

/// Reads a lesson file, refusing anything that is not a regular file of at most 1 MiB.
pub fn load_file(path: &Path) -> Result<LoadedLesson, LoadError> {
    let io = |error: std::io::Error| LoadError::Io {
        path: path.to_path_buf(),
        message: error.to_string(),
    };
    // Checked before opening: opening a FIFO would block, and /dev/zero never ends.
    let metadata = std::fs::metadata(path).map_err(io)?;
    if !metadata.is_file() {
        return Err(LoadError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    if metadata.len() > MAX_FILE_BYTES as u64 {
        return Err(LoadError::TooLarge {
            path: path.to_path_buf(),
            bytes: metadata.len(),
        });
    }
    let mut bytes = Vec::new();
    File::open(path)
        .map_err(io)?
        .take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(LoadError::TooLarge {
            path: path.to_path_buf(),
            bytes: bytes.len() as u64,
        });
    }
    let text = String::from_utf8(bytes).map_err(|error| LoadError::NotUtf8 {
        path: path.to_path_buf(),
        offset: error.utf8_error().valid_up_to(),
    })?;
    // The name heads the tutor's screen and check's report: a file name may hold escapes.
    let name = path.file_stem().map_or_else(
        || "lesson".to_string(),
        |stem| printable(&stem.to_string_lossy()),
    );
    load_text(&name, Some(path.to_path_buf()), text)
}

/// Checks lesson text already in memory.
pub fn load_text(
    name: &str,
    path: Option<PathBuf>,
    text: String,
) -> Result<LoadedLesson, LoadError> {
    let parsed = parse(&text);
    match parsed.lesson {
        Some(lesson) => Ok(LoadedLesson {
            name: name.to_string(),
            path,
            text,
            lesson,
            warnings: parsed.diagnostics,
        }),
        None => Err(LoadError::Invalid {
            path: display_path(name, path.as_deref()),
            text,
            diagnostics: parsed.diagnostics,
        }),
    }
}
