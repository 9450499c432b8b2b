//! A model checkpoint as model hubs publish it, read offline: `config.json` into a
//! `ModelConfig`, then only the tensors a layer needs, by their published names, each shape
//! checked against the config, into f64 matrices.
//!
//! It computes the residual stream entering a layer (the blocks before it, as Hugging Face
//! defines them); `crate::import` makes the lesson of one layer from it. GPT-2 (`gpt2`), the
//! Llama layout (`llama`, `mistral`,
//! `qwen2`) and the project's own `attn-only` models are read, with F32, F16 and BF16 weights,
//! from one `model.safetensors` or a sharded `model.safetensors.index.json`. Every bad file is a
//! `CheckpointError` naming the file and the key or tensor; none panics.

mod config;
mod error;
mod forward;
mod layer;
mod names;
mod safetensors_file;
mod weights;

use std::path::{Path, PathBuf};

use nalgebra::DMatrix;

pub use config::{Architecture, ModelConfig};
pub use error::CheckpointError;
pub use layer::{AttentionWeights, Norm};

use weights::{INDEX, SINGLE, Weights};

/// A checkpoint whose config and tensor headers have been read; its numbers are read when asked.
#[derive(Debug)]
pub struct Checkpoint {
    config_path: PathBuf,
    config: ModelConfig,
    weights: Weights,
    /// `transformer.` when a GPT-2 checkpoint's names carry it.
    gpt2_prefix: &'static str,
}

impl Checkpoint {
    /// Opens the checkpoint at `path`: a folder holding `config.json` and `model.safetensors`
    /// (or `model.safetensors.index.json` and its shards), or the path of a safetensors file (or
    /// of the index) with `config.json` beside it.
    pub fn open(path: &Path) -> Result<Checkpoint, CheckpointError> {
        // A path that is not there is named as typed, not as the config.json beside it.
        if !path.exists() {
            return Err(CheckpointError::NoSuchPath(path.to_path_buf()));
        }
        let folder = if path.is_dir() {
            path.to_path_buf()
        } else {
            match path.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
                _ => PathBuf::from("."),
            }
        };
        let config_path = folder.join("config.json");
        let config = ModelConfig::read(&config_path)?;
        let weights_path = if path.is_dir() {
            [SINGLE, INDEX]
                .iter()
                .map(|name| folder.join(name))
                .find(|file| file.is_file())
                .ok_or_else(|| CheckpointError::MissingWeights(folder.clone()))?
        } else {
            path.to_path_buf()
        };
        let weights = Weights::open(&weights_path)?;
        let gpt2_prefix = if weights.any_starts_with(names::GPT2_PREFIX) {
            names::GPT2_PREFIX
        } else {
            ""
        };
        Ok(Checkpoint {
            config_path,
            config,
            weights,
            gpt2_prefix,
        })
    }

    /// The folder the checkpoint was read from.
    pub fn folder(&self) -> &Path {
        self.config_path.parent().unwrap_or(Path::new("."))
    }

    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// Layer `layer`'s attention weights (0-based, as the checkpoint numbers its layers).
    pub fn attention_layer(&self, layer: usize) -> Result<AttentionWeights, CheckpointError> {
        layer::read(self, layer)
    }

    /// The residual stream entering block `layer` (0-based) for the token ids `token_ids`
    /// (tokens × d_model): the token embeddings (and GPT-2's learned positions), then blocks 0
    /// to `layer` − 1 computed whole, as Hugging Face's modeling code defines them. `layer` may
    /// be the number of layers: the stream after the last block, before the final norm. Only
    /// the tensors of those blocks are read.
    pub fn residual_stream(
        &self,
        token_ids: &[usize],
        layer: usize,
    ) -> Result<DMatrix<f64>, CheckpointError> {
        forward::residual_stream(self, token_ids, layer)
    }

    /// The model's beginning-of-sequence token, when config.json names one (`bos_token_id`).
    pub fn bos_token_id(&self) -> Option<usize> {
        self.config.bos_token_id
    }

    /// The token embeddings of the token ids `tokens`, a row each (tokens × d_model), from
    /// `wte.weight` or `model.embed_tokens.weight` (vocabulary × d_model): only those rows are
    /// read, not the whole vocabulary.
    pub fn token_embeddings(&self, tokens: &[usize]) -> Result<DMatrix<f64>, CheckpointError> {
        let name = match self.config.architecture {
            Architecture::Gpt2 | Architecture::AttnOnly => {
                names::gpt2_token_embedding(self.gpt2_prefix)
            }
            Architecture::Llama => names::LLAMA_TOKEN_EMBEDDING.to_string(),
        };
        self.check_length(tokens.len())?;
        self.weights
            .read_rows(&name, [self.config.vocabulary, self.config.d_model], tokens)
    }

    /// GPT-2's learned position embeddings of positions 0 … tokens − 1 (tokens × d_model, from
    /// `wpe.weight`); `None` for models whose positions are RoPE.
    pub fn position_embeddings(
        &self,
        tokens: usize,
    ) -> Result<Option<DMatrix<f64>>, CheckpointError> {
        self.check_length(tokens)?;
        match self.config.architecture {
            Architecture::Gpt2 | Architecture::AttnOnly => {
                let positions: Vec<usize> = (0..tokens).collect();
                self.weights
                    .read_rows(
                        &names::gpt2_position_embedding(self.gpt2_prefix),
                        [self.config.context, self.config.d_model],
                        &positions,
                    )
                    .map(Some)
            }
            Architecture::Llama => Ok(None),
        }
    }

    /// A text longer than the model's context is refused: it has no positions past it. So is
    /// one longer than its attention window, which would change the causal mask.
    fn check_length(&self, tokens: usize) -> Result<(), CheckpointError> {
        if tokens > self.config.context {
            return Err(CheckpointError::TooManyTokens {
                file: self.config_path.clone(),
                tokens,
                context: self.config.context,
            });
        }
        if let Some(window) = self.config.sliding_window
            && tokens > window
        {
            return Err(CheckpointError::PastWindow {
                file: self.config_path.clone(),
                tokens,
                window,
            });
        }
        Ok(())
    }

    /// One tensor by its name, of the shape the caller needs ([n] is a 1×n row).
    pub fn tensor(&self, name: &str, shape: &[usize]) -> Result<DMatrix<f64>, CheckpointError> {
        self.weights.read(name, shape)
    }

    pub(crate) fn config_path(&self) -> &Path {
        &self.config_path
    }

    pub(crate) fn weights(&self) -> &Weights {
        &self.weights
    }

    pub(crate) fn gpt2_prefix(&self) -> &'static str {
        self.gpt2_prefix
    }
}
