//! A trained model written as `import` reads it: `config.json` (model_type `attn-only`),
//! `model.safetensors` (F32, GPT-2's names and shapes, serialised by the format's own crate)
//! and `tokenizer.json` (a word-level vocabulary of the symbols, split at whitespace).
//!
//! Nothing already there is overwritten: the folder must be new or empty, each file is written
//! to a temporary file beside it and then linked to its name only if that name is free.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use safetensors::Dtype;
use safetensors::tensor::TensorView;
use serde::Serialize;

use super::config::{LAYERS, symbol};
use super::model::Model;
use crate::lesson::text::printable_path;

/// The three files, in the order they are written.
pub const CONFIG_FILE: &str = "config.json";
pub const WEIGHTS_FILE: &str = "model.safetensors";
pub const TOKENIZER_FILE: &str = "tokenizer.json";

/// The word the tokenizer gives a piece of text that is none of the symbols. It is not in the
/// vocabulary (the model has no row for it), so such a text is refused rather than read as a
/// symbol it is not.
pub const UNKNOWN_WORD: &str = "[UNK]";

#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("{}: is a file, not a folder; give a new (or empty) folder to write the model into", printable_path(.0))]
    NotAFolder(PathBuf),
    #[error(
        "{}: the folder is not empty (it holds {}); the model is written only into a new or \
         empty folder, so that nothing there is overwritten",
        printable_path(.folder),
        .holds
    )]
    NotEmpty { folder: PathBuf, holds: String },
    #[error("{}: already exists, and is not overwritten", printable_path(.0))]
    FileExists(PathBuf),
    #[error("{}: the folder could not be made: {why}", printable_path(.folder))]
    CannotMake { folder: PathBuf, why: String },
    #[error(
        "{}: nothing can be written into this folder ({error}); give one you may write to",
        printable_path(.folder)
    )]
    NotWritable {
        folder: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot write {}: {error}", printable_path(.path))]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("the model's tensors could not be serialised as safetensors: {0}")]
    Safetensors(String),
}

impl SaveError {
    fn io(path: &Path, error: std::io::Error) -> SaveError {
        SaveError::Io {
            path: path.to_path_buf(),
            error: without_path(error),
        }
    }

    /// Why `folder` could not be made, in the words of where it was to go: the nearest folder
    /// above it that exists is what refused.
    fn cannot_make(folder: &Path, error: std::io::Error) -> SaveError {
        use std::io::ErrorKind;
        let above = folder
            .ancestors()
            .skip(1)
            .find(|above| !above.as_os_str().is_empty() && std::fs::symlink_metadata(above).is_ok())
            .map_or_else(|| ".".to_string(), printable_path);
        let why = match error.kind() {
            ErrorKind::NotADirectory => {
                format!("{above} is a file, not a folder")
            }
            ErrorKind::PermissionDenied => {
                format!("you may not make folders in {above} ({error})")
            }
            ErrorKind::ReadOnlyFilesystem => {
                format!("{above} is on a file system that is only read ({error})")
            }
            // `/proc/x`: the folder above exists, and yet "no such file or directory".
            ErrorKind::NotFound => {
                format!("{above} does not take new folders (the system said: {error})")
            }
            _ => error.to_string(),
        };
        SaveError::CannotMake {
            folder: folder.to_path_buf(),
            why,
        }
    }
}

/// An error from the file system without the path `tempfile` adds to it (`… at path
/// "dir/.attn-model-RTnJ5M"`): the temporary file's name is ours, not the learner's, and the
/// message names the folder instead.
fn without_path(error: std::io::Error) -> std::io::Error {
    if let Some(code) = error.raw_os_error() {
        return std::io::Error::from_raw_os_error(code);
    }
    let text = error.to_string();
    match text.rsplit_once(" at path ") {
        Some((why, _)) => std::io::Error::new(error.kind(), why.to_string()),
        None => error,
    }
}

/// config.json, its keys in the order the issue lists them.
#[derive(Serialize)]
struct ConfigJson {
    model_type: &'static str,
    n_layer: usize,
    n_head: usize,
    n_embd: usize,
    n_positions: usize,
    vocab_size: usize,
}

/// Makes `folder` ready for a model: made if it does not exist, refused if it is a file, holds
/// anything, or cannot be written into (a file is made there and taken away again). `train -o`
/// calls it before training, so that a folder it could not write is said at once, not after
/// the run.
pub fn prepare_folder(folder: &Path) -> Result<(), SaveError> {
    prepare_folder_probed(folder, |folder| temporary_in(folder).map(drop))
}

/// `prepare_folder`, with `probe` the trial write into the folder (a test makes it fail: as
/// root, a folder without write permission is written into all the same).
fn prepare_folder_probed(
    folder: &Path,
    probe: impl FnOnce(&Path) -> Result<(), SaveError>,
) -> Result<(), SaveError> {
    let made = !folder.exists();
    empty_folder(folder)?;
    probe(folder).map_err(|error| {
        if made {
            // The folder was made for this model: it goes with it (only if it is empty).
            let _ = std::fs::remove_dir(folder);
        }
        match error {
            SaveError::Io { error, .. } => SaveError::NotWritable {
                folder: folder.to_path_buf(),
                error,
            },
            other => other,
        }
    })
}

/// `folder`, made if it does not exist; refused if it is a file or holds anything.
fn empty_folder(folder: &Path) -> Result<(), SaveError> {
    match std::fs::metadata(folder) {
        Ok(metadata) if !metadata.is_dir() => Err(SaveError::NotAFolder(folder.to_path_buf())),
        Ok(_) => {
            let mut entries = std::fs::read_dir(folder).map_err(|e| SaveError::io(folder, e))?;
            match entries.next() {
                Some(entry) => {
                    let entry = entry.map_err(|e| SaveError::io(folder, e))?;
                    Err(SaveError::NotEmpty {
                        folder: folder.to_path_buf(),
                        holds: printable_path(Path::new(&entry.file_name())),
                    })
                }
                None => Ok(()),
            }
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(folder).map_err(|e| SaveError::cannot_make(folder, e))
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotADirectory => {
            Err(SaveError::cannot_make(folder, error))
        }
        Err(error) => Err(SaveError::io(folder, error)),
    }
}

/// Writes `model` into `folder` (made if it does not exist; refused if it holds anything).
pub fn save(model: &Model<f32>, folder: &Path) -> Result<(), SaveError> {
    prepare_folder(folder)?;
    let files = [
        (CONFIG_FILE, config_json(model)),
        (WEIGHTS_FILE, safetensors_bytes(model)?),
        (TOKENIZER_FILE, tokenizer_json(model.shape.vocabulary)),
    ];
    // Every file is written whole before any takes its name: a full disk leaves no half model.
    let mut written = Vec::with_capacity(files.len());
    for (name, bytes) in files {
        let mut file = temporary_in(folder)?;
        // Said for the folder: the temporary file's name means nothing to the learner.
        file.write_all(&bytes)
            .and_then(|()| file.as_file().sync_all())
            .map_err(|e| SaveError::io(folder, e))?;
        written.push((name, file));
    }
    for (name, file) in written {
        let path = folder.join(name);
        file.persist_noclobber(&path).map_err(|error| {
            if error.error.kind() == std::io::ErrorKind::AlreadyExists {
                SaveError::FileExists(path.clone())
            } else {
                SaveError::io(&path, error.error)
            }
        })?;
    }
    Ok(())
}

/// A temporary file in `folder`, readable by others as a saved file is (tempfile's own are
/// private to their owner).
fn temporary_in(folder: &Path) -> Result<tempfile::NamedTempFile, SaveError> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".attn-model-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    builder
        .tempfile_in(folder)
        .map_err(|e| SaveError::io(folder, e))
}

fn config_json(model: &Model<f32>) -> Vec<u8> {
    let shape = model.shape;
    let config = ConfigJson {
        model_type: "attn-only",
        n_layer: LAYERS,
        n_head: shape.heads,
        n_embd: shape.d_model,
        n_positions: shape.context,
        vocab_size: shape.vocabulary,
    };
    let mut text = serde_json::to_vec_pretty(&config).unwrap_or_default();
    text.push(b'\n');
    text
}

/// The weights as F32, little-endian, row by row, under GPT-2's names and shapes.
fn safetensors_bytes(model: &Model<f32>) -> Result<Vec<u8>, SaveError> {
    let tensors = model.tensors();
    let bytes: Vec<Vec<u8>> = tensors
        .iter()
        .map(|tensor| {
            tensor
                .row_major()
                .into_iter()
                .flat_map(f32::to_le_bytes)
                .collect()
        })
        .collect();
    let views = tensors
        .iter()
        .zip(&bytes)
        .map(|(tensor, bytes)| {
            TensorView::new(Dtype::F32, tensor.shape.clone(), bytes)
                .map(|view| (tensor.name.clone(), view))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| SaveError::Safetensors(error.to_string()))?;
    // PyTorch's checkpoints say which framework's layout their tensors are in; these are
    // PyTorch's (row-major, [in, out] Conv1D weights).
    let metadata = HashMap::from([("format".to_string(), "pt".to_string())]);
    safetensors::serialize(views, Some(metadata))
        .map_err(|error| SaveError::Safetensors(error.to_string()))
}

/// A tokenizer.json for the `tokenizers` library: each symbol a word, its id the symbol's
/// number, words split at whitespace (and punctuation, as its `Whitespace` pre-tokenizer does).
fn tokenizer_json(vocabulary: usize) -> Vec<u8> {
    let vocab: serde_json::Map<String, serde_json::Value> =
        (0..vocabulary).map(|id| (symbol(id), id.into())).collect();
    let tokenizer = serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null,
        "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": UNKNOWN_WORD},
    });
    let mut text = serde_json::to_vec_pretty(&tokenizer).unwrap_or_default();
    text.push(b'\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probe's failure as `tempfile` reports it: the temporary file's path appended.
    fn refused_as_tempfile_says(folder: &Path) -> SaveError {
        SaveError::io(
            folder,
            std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "Permission denied (os error 13) at path {:?}",
                    folder.join(".attn-model-RTnJ5M")
                ),
            ),
        )
    }

    #[test]
    fn an_empty_folder_that_cannot_be_written_into_is_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut probed = Vec::new();
        let error = prepare_folder_probed(dir.path(), |folder| {
            probed.push(folder.to_path_buf());
            Err(refused_as_tempfile_says(folder))
        })
        .unwrap_err();
        assert_eq!(probed, [dir.path()], "the folder is tried");
        assert!(matches!(error, SaveError::NotWritable { .. }), "{error:?}");
        let message = error.to_string();
        assert_eq!(
            message,
            format!(
                "{}: nothing can be written into this folder (Permission denied (os error \
                 13)); give one you may write to",
                dir.path().display()
            )
        );
        assert!(dir.path().exists(), "a folder that was there stays");

        // A folder made for the model and then refused is taken away again.
        let new = dir.path().join("new");
        let error = prepare_folder_probed(&new, |folder| Err(refused_as_tempfile_says(folder)));
        assert!(matches!(error, Err(SaveError::NotWritable { .. })));
        assert!(!new.exists());

        // The real probe leaves nothing behind.
        prepare_folder(dir.path()).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_temporary_files_name_is_never_in_a_message() {
        // tempfile's own error, which names the file it tried, whoever runs the test.
        let missing = tempfile::tempdir().unwrap().path().join("gone");
        let error = temporary_in(&missing).unwrap_err();
        let message = error.to_string();
        assert!(!message.contains(".attn-model-"), "{message}");
        assert!(
            message.starts_with(&format!("cannot write {}: ", missing.display())),
            "{message}"
        );
        assert!(message.contains("(os error 2)"), "{message}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_folder_that_cannot_be_made_says_why_in_the_folder_above() {
        let error = prepare_folder(Path::new("/proc/attn-tutor-model")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "/proc/attn-tutor-model: the folder could not be made: /proc does not take new \
             folders (the system said: No such file or directory (os error 2))"
        );
    }
}
