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
            error,
        }
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

/// Makes `folder` ready for a model: made if it does not exist, refused if it is a file or
/// holds anything. `train -o` calls it before training, so that a folder it could not write is
/// said at once, not after the run.
pub fn prepare_folder(folder: &Path) -> Result<(), SaveError> {
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
            std::fs::create_dir_all(folder).map_err(|e| SaveError::io(folder, e))
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
        file.write_all(&bytes)
            .and_then(|()| file.as_file().sync_all())
            .map_err(|e| SaveError::io(file.path(), e))?;
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
