//! Where each tensor of a checkpoint is: one `model.safetensors`, or the shards that
//! `model.safetensors.index.json`'s `weight_map` names, each shard's header read once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nalgebra::DMatrix;
use serde_json::Value;

use super::error::CheckpointError;
use super::safetensors_file::SafetensorsFile;

pub(crate) const SINGLE: &str = "model.safetensors";
pub(crate) const INDEX: &str = "model.safetensors.index.json";

/// A checkpoint's weights, every file's header read and no tensor yet.
#[derive(Debug)]
pub(crate) enum Weights {
    Single(SafetensorsFile),
    Sharded {
        index: PathBuf,
        /// Each tensor's shard, as an index into `shards`.
        shard_of: BTreeMap<String, usize>,
        shards: Vec<SafetensorsFile>,
    },
}

impl Weights {
    /// The weights at `path`: a safetensors file, or an index whose shards are beside it.
    pub(crate) fn open(path: &Path) -> Result<Weights, CheckpointError> {
        if path.file_name().is_some_and(|name| name == INDEX) {
            Weights::sharded(path)
        } else {
            Ok(Weights::Single(SafetensorsFile::open(path)?))
        }
    }

    fn sharded(index: &Path) -> Result<Weights, CheckpointError> {
        let bad = |why: String| CheckpointError::BadIndex {
            file: index.to_path_buf(),
            why,
        };
        let text = std::fs::read(index).map_err(|error| CheckpointError::io(index, error))?;
        let value: Value =
            serde_json::from_slice(&text).map_err(|error| CheckpointError::NotJson {
                file: index.to_path_buf(),
                error,
            })?;
        let Some(Value::Object(map)) = value.get("weight_map") else {
            return Err(bad(
                "no `weight_map` object; a sharded checkpoint's index maps each tensor's name to \
                 its shard's file name"
                    .to_string(),
            ));
        };
        let folder = index.parent().unwrap_or(Path::new("."));
        let mut shard_names: Vec<&str> = Vec::new();
        let mut shard_of = BTreeMap::new();
        for (tensor, shard) in map {
            let Value::String(shard) = shard else {
                return Err(bad(format!(
                    "`weight_map` gives tensor `{tensor}` the shard {shard}; it should be a file \
                     name"
                )));
            };
            // A shard is a file beside the index: a path that leaves the folder is refused.
            if Path::new(shard).file_name() != Some(shard.as_ref()) || shard.contains('\\') {
                return Err(bad(format!(
                    "`weight_map` gives tensor `{tensor}` the shard \"{shard}\"; it should be a \
                     file name in the index's folder, with no folder in it"
                )));
            }
            let position = match shard_names.iter().position(|known| *known == shard) {
                Some(position) => position,
                None => {
                    shard_names.push(shard);
                    shard_names.len() - 1
                }
            };
            shard_of.insert(tensor.clone(), position);
        }
        let shards = shard_names
            .iter()
            .map(|name| SafetensorsFile::open(&folder.join(name)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Weights::Sharded {
            index: index.to_path_buf(),
            shard_of,
            shards,
        })
    }

    /// The file holding `name`, or the error naming where it was looked for.
    fn file_of(&self, name: &str) -> Result<&SafetensorsFile, CheckpointError> {
        match self {
            Weights::Single(file) => Ok(file),
            Weights::Sharded {
                index,
                shard_of,
                shards,
            } => shard_of
                .get(name)
                .and_then(|&shard| shards.get(shard))
                .ok_or_else(|| CheckpointError::MissingTensor {
                    file: index.clone(),
                    tensor: name.to_string(),
                }),
        }
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.file_of(name).is_ok_and(|file| file.has(name))
    }

    /// Whether any tensor's name starts with `prefix`.
    pub(crate) fn any_starts_with(&self, prefix: &str) -> bool {
        match self {
            Weights::Single(file) => file.names().any(|name| name.starts_with(prefix)),
            Weights::Sharded { shard_of, .. } => {
                shard_of.keys().any(|name| name.starts_with(prefix))
            }
        }
    }

    pub(crate) fn read(
        &self,
        name: &str,
        shape: &[usize],
    ) -> Result<DMatrix<f64>, CheckpointError> {
        self.file_of(name)?.read(name, shape)
    }

    pub(crate) fn read_rows(
        &self,
        name: &str,
        shape: [usize; 2],
        rows: &[usize],
    ) -> Result<DMatrix<f64>, CheckpointError> {
        self.file_of(name)?.read_rows(name, shape, rows)
    }
}
