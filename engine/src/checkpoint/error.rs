//! Everything that can be wrong with a checkpoint, each saying the file (and the key or tensor)
//! and what would be right. File names, keys, tensor names and dtypes come from the files, so
//! every one (and every message quoting them) is printed through the project's one rule for
//! untrusted text.

use std::path::{Path, PathBuf};

use crate::lesson::text::{printable, printable_path};

/// The dtypes whose numbers are read, as the safetensors header spells them.
pub(crate) const SUPPORTED_DTYPES: &str = "F32, F16, BF16";

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error(
        "{}: no such file or folder; give the model's folder (config.json beside \
         model.safetensors) or its model.safetensors",
        printable_path(.0)
    )]
    NoSuchPath(PathBuf),
    #[error(
        "{}: no such file; a checkpoint is a folder holding config.json beside model.safetensors \
         (or model.safetensors.index.json and its shards), or the path of a model.safetensors \
         with config.json beside it",
        printable_path(.0)
    )]
    MissingConfig(PathBuf),
    #[error(
        "{}: neither model.safetensors nor model.safetensors.index.json is there; the weights \
         are one of them, beside config.json",
        printable_path(.0)
    )]
    MissingWeights(PathBuf),
    #[error("cannot read {}: {error}", printable_path(.file))]
    Io {
        file: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: not JSON: {}", printable_path(.file), printable(&.error.to_string()))]
    NotJson {
        file: PathBuf,
        error: serde_json::Error,
    },
    #[error(
        "{}: model_type \"{}\" is not one this reads; supported: {supported}",
        printable_path(.file),
        printable(.found)
    )]
    UnknownModelType {
        file: PathBuf,
        found: String,
        supported: &'static str,
    },
    #[error("{}: no `{key}`; it should be {wanted}", printable_path(.file))]
    MissingKey {
        file: PathBuf,
        key: &'static str,
        wanted: &'static str,
    },
    #[error(
        "{}: `{key}` is {}; it should be {wanted}",
        printable_path(.file),
        printable(.found)
    )]
    WrongKey {
        file: PathBuf,
        key: &'static str,
        found: String,
        wanted: &'static str,
    },
    #[error("{}: {}", printable_path(.file), printable(.why))]
    Inconsistent { file: PathBuf, why: String },
    #[error("{}: truncated: {}", printable_path(.file), printable(.why))]
    Truncated { file: PathBuf, why: String },
    #[error("{}: not a safetensors file: {}", printable_path(.file), printable(.why))]
    CorruptHeader { file: PathBuf, why: String },
    #[error("{}: {}", printable_path(.file), printable(.why))]
    BadIndex { file: PathBuf, why: String },
    #[error("{}: no tensor `{}`", printable_path(.file), printable(.tensor))]
    MissingTensor { file: PathBuf, tensor: String },
    #[error(
        "{}: tensor `{}` has shape {found:?}; it should be {wanted:?}",
        printable_path(.file),
        printable(.tensor)
    )]
    WrongShape {
        file: PathBuf,
        tensor: String,
        found: Vec<usize>,
        wanted: Vec<usize>,
    },
    #[error(
        "{}: tensor `{}` is {}; the numbers read are {SUPPORTED_DTYPES}",
        printable_path(.file),
        printable(.tensor),
        printable(.dtype)
    )]
    UnsupportedDtype {
        file: PathBuf,
        tensor: String,
        dtype: String,
    },
    #[error(
        "{}: tensor `{}` holds {value} at {at:?}; a weight is a finite number",
        printable_path(.file),
        printable(.tensor)
    )]
    NotFinite {
        file: PathBuf,
        tensor: String,
        value: f64,
        at: Vec<usize>,
    },
    #[error(
        "{}: tensor `{}` has {rows} rows; row {row} is past them",
        printable_path(.file),
        printable(.tensor)
    )]
    RowOutOfRange {
        file: PathBuf,
        tensor: String,
        row: usize,
        rows: usize,
    },
    #[error(
        "{}: {tokens} tokens are more than the model reads at once ({context}, its context)",
        printable_path(.file)
    )]
    TooManyTokens {
        file: PathBuf,
        tokens: usize,
        context: usize,
    },
    #[error(
        "{}: {tokens} tokens are more than the model's attention window ({window}, its \
         `sliding_window`): past it the window would change the mask, which is not computed here",
        printable_path(.file)
    )]
    PastWindow {
        file: PathBuf,
        tokens: usize,
        window: usize,
    },
    #[error(
        "{}: the residual stream enters layers 0 to {layers} ({layers} being after the model's \
         last layer); {layer} is past them",
        printable_path(.file)
    )]
    StreamOutOfRange {
        file: PathBuf,
        layer: usize,
        layers: usize,
    },
    #[error(
        "{}: layer {layer} is past the model's {layers} layers (0 to {})",
        printable_path(.file),
        .layers.saturating_sub(1)
    )]
    LayerOutOfRange {
        file: PathBuf,
        layer: usize,
        layers: usize,
    },
    #[error(
        "{}: head {head} is past the model's {heads} heads (0 to {}, or all)",
        printable_path(.file),
        .heads.saturating_sub(1)
    )]
    HeadOutOfRange {
        file: PathBuf,
        head: usize,
        heads: usize,
    },
}

impl CheckpointError {
    pub(crate) fn io(file: &Path, error: std::io::Error) -> CheckpointError {
        CheckpointError::Io {
            file: file.to_path_buf(),
            error,
        }
    }
}
