//! Writing lessons: a whole lesson as TOML, a frozen copy of a file, the `new` template, and the
//! atomic, never-clobbering file write they all go through.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use nalgebra::DMatrix;
use toml::de::{DeTable, DeValue};

use super::text::printable_lines;
use super::{InputMatrix, Lesson, Mask};
use crate::attention::{MatrixName, Step};

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{} already exists; it was left as it is", .0.display())]
    Exists(PathBuf),
    #[error("cannot write {path}: {error}", path = .0.display(), error = .1)]
    Io(PathBuf, std::io::Error),
}

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
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if !directory.is_dir() {
        return Err(WriteError::Io(
            path.to_path_buf(),
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("the folder {} does not exist", directory.display()),
            ),
        ));
    }
    // The temporary file's own name means nothing to the user; errors name `path`.
    let io = |error: std::io::Error| {
        WriteError::Io(
            path.to_path_buf(),
            std::io::Error::new(error.kind(), strip_path(&error)),
        )
    };
    let mut temporary = tempfile::NamedTempFile::new_in(directory).map_err(io)?;
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

/// tempfile's errors append `at path "…/.tmpXXXX"`; the message before it is what matters.
fn strip_path(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" at path ") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

/// A number as TOML: the shortest text that reads back to the same f64.
fn toml_number(value: f64) -> String {
    if value == f64::NEG_INFINITY {
        "-inf".to_string()
    } else {
        // `{}` never writes an exponent and round-trips exactly; lesson numbers are bounded by
        // 1e6, so the text stays short.
        format!("{value}")
    }
}

fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// A matrix as TOML, one row per line.
pub fn matrix_to_toml(matrix: &DMatrix<f64>) -> String {
    let mut out = String::from("[\n");
    for row in matrix.row_iter() {
        let cells: Vec<String> = row.iter().map(|v| toml_number(*v)).collect();
        let _ = writeln!(out, "  [{}],", cells.join(", "));
    }
    out.push(']');
    out
}

fn input_to_toml(input: &InputMatrix) -> String {
    match input.generator {
        // An edited generated matrix is written out literally: its numbers are no longer the
        // recipe's.
        Some(generator) if generator.generate() == input.values => generator.to_toml(),
        _ => matrix_to_toml(&input.values),
    }
}

/// The whole lesson as a lesson file, as the tutor saves an edited lesson.
pub fn lesson_to_toml(lesson: &Lesson) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Written by attn-tutor. The lesson format is described in docs/lesson-format.md."
    );
    let _ = writeln!(out, "format = 1");
    let _ = writeln!(out, "title = {}", toml_string(&lesson.title));
    let _ = writeln!(out, "source = {}", toml_string(&lesson.source));
    let _ = writeln!(out, "summary = {}", toml_string(&lesson.summary));
    let tokens: Vec<String> = lesson.tokens.iter().map(|t| toml_string(t)).collect();
    let _ = writeln!(out, "\ntokens = [{}]", tokens.join(", "));
    for (name, input) in lesson.inputs() {
        let _ = writeln!(out, "{} = {}", name.key(), input_to_toml(input));
    }
    let _ = writeln!(out, "\nscale = {}", lesson.scale);
    match &lesson.mask {
        Mask::None => {
            let _ = writeln!(out, "mask = \"none\"");
        }
        Mask::Causal => {
            let _ = writeln!(out, "mask = \"causal\"");
        }
        Mask::Matrix(matrix) => {
            let _ = writeln!(out, "mask = {}", matrix_to_toml(matrix));
        }
    }
    if let Some(focus) = lesson.focus {
        let label = &lesson.tokens[focus];
        if lesson.tokens.iter().filter(|t| *t == label).count() == 1 {
            let _ = writeln!(out, "focus = {}", toml_string(label));
        } else {
            let _ = writeln!(out, "focus = {}", focus + 1);
        }
    }
    let _ = writeln!(out, "decimals = {}", lesson.decimals);
    if Step::ALL
        .iter()
        .any(|step| lesson.narration.get(*step).is_some())
    {
        let _ = writeln!(out, "\n[narration]");
        for step in Step::ALL {
            if let Some(text) = lesson.narration.get(step) {
                let _ = writeln!(out, "{} = {}", step.key(), toml_string(text));
            }
        }
    }
    if lesson.expected.tolerance.is_some() || !lesson.expected.figures.is_empty() {
        let _ = writeln!(out, "\n[expected]");
        if let Some(tolerance) = lesson.expected.tolerance {
            let _ = writeln!(out, "tolerance = {}", toml_number(tolerance));
        }
        for figure in &lesson.expected.figures {
            let _ = writeln!(out, "\n[expected.{}]", figure.matrix.key());
            for row in &figure.rows {
                let printed: Vec<&str> = row.values.iter().map(|n| n.text.as_str()).collect();
                let _ = writeln!(out, "\"{}\" = [{}]", row.row + 1, printed.join(", "));
            }
        }
    }
    out
}

/// The lesson file with every generator replaced by the numbers it generates, keeping everything
/// else (comments included) as the author wrote it.
pub fn freeze(text: &str, lesson: &Lesson) -> String {
    let Ok(root) = DeTable::parse(text) else {
        return printable_lines(text);
    };
    let mut replacements: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    for (key, value) in root.get_ref().iter() {
        let Some(name) = MatrixName::from_key(key.get_ref()) else {
            continue;
        };
        if let (DeValue::Table(_), Some(input)) = (value.get_ref(), lesson.input(name)) {
            let generator = input.generator.map(|g| g.to_toml()).unwrap_or_default();
            let literal = matrix_to_toml(&input.values);
            replacements.push((
                value.span(),
                format!("{literal}  # generated by {generator}"),
            ));
        }
    }
    replacements.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    let mut frozen = text.to_string();
    for (span, replacement) in replacements {
        frozen.replace_range(span, &replacement);
    }
    // Comments are copied as the author wrote them, but may hold characters that act on a
    // terminal (`freeze -o -` prints them); a lesson's strings cannot, so this changes only
    // comments.
    printable_lines(&frozen)
}

/// The commented lesson `attn-tutor new` writes: small enough to read in one screen, and valid.
pub fn template(title: &str) -> String {
    TEMPLATE.replace("{TITLE}", &toml_string(title))
}

const TEMPLATE: &str = r#"# An attn-tutor lesson. Check it with:  attn-tutor check THIS_FILE
# Open it in the tutor with:           attn-tutor THIS_FILE
# Every key is described in docs/lesson-format.md.
format = 1
title = {TITLE}
source = "Where the example comes from: a book, a paper, a lecture"
summary = "One or two sentences shown in the lesson picker."

# One label per token (at most 16 columns wide each).
tokens = ["I", "like", "tea"]

# The embeddings X: one row per token (seq_len x d_model, here 3 x 4).
embeddings = [
  [1, 0, 1, 0],
  [0, 2, 0, 2],
  [1, 1, 1, 1],
]

# The projections (d_model x d_k). Q = X W_q, K = X W_k, V = X W_v.
w_q = [
  [1, 0, 1],
  [1, 0, 0],
  [0, 0, 1],
  [0, 1, 1],
]
w_k = [
  [0, 0, 1],
  [1, 1, 0],
  [0, 1, 0],
  [1, 1, 0],
]
# Any matrix may be generated instead of typed: standard normal numbers from a seed.
w_v = { random = "normal", seed = 7, shape = [4, 3] }

scale = true       # divide the scores by sqrt(d_k)
mask = "none"      # or "causal", or a 3 x 3 matrix of 0 and -inf
focus = "like"     # the row the tutor opens on
decimals = 3       # digits shown after the point

[narration]
# Optional: your own words for each step (embedding, projection, scores, scaling, masking,
# softmax, output). Steps without narration get a default text.
scores = "Each query meets every key: the dot product says how well they match."

# [expected]
# Figures as your source printed them; `attn-tutor check` compares them with the exact values.
# tolerance = 0.0005
# weights = [[...], [...], [...]]
"#;
