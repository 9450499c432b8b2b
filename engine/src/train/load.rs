//! A model `save` wrote, read back through `checkpoint` (the reader `import` uses) to be
//! measured again: the shipped model's scores are computed from its file.

use std::path::Path;

use super::config::{LAYERS, ModelShape};
use super::model::{Model, Real};
use crate::checkpoint::{Architecture, Checkpoint, CheckpointError};

/// The attention-only model in the checkpoint at `path` (a folder, or its model.safetensors),
/// every tensor read by its GPT-2 name with its shape checked against config.json.
pub fn load(path: &Path) -> Result<Model<f32>, CheckpointError> {
    read(&Checkpoint::open(path)?)
}

/// The attention-only model of a checkpoint already open (`import` has one).
pub fn read(checkpoint: &Checkpoint) -> Result<Model<f32>, CheckpointError> {
    let config = checkpoint.config();
    let unfit = |why: String| CheckpointError::Inconsistent {
        file: checkpoint.folder().join("config.json"),
        why,
    };
    if config.architecture != Architecture::AttnOnly {
        return Err(unfit(format!(
            "model_type is \"{}\"; the trained models are \"attn-only\"",
            config.model_type
        )));
    }
    if config.layers != LAYERS {
        return Err(unfit(format!(
            "n_layer is {}; the trained models have {LAYERS}",
            config.layers
        )));
    }
    let shape = ModelShape {
        vocabulary: config.vocabulary,
        d_model: config.d_model,
        heads: config.heads,
        context: config.context,
    };
    let mut model = Model::<f32>::zeros(shape);
    // The file's names and shapes are the model's own: `tensors` lists them.
    let wanted: Vec<(String, Vec<usize>)> = model
        .tensors()
        .into_iter()
        .map(|tensor| (tensor.name, tensor.shape))
        .collect();
    for ((name, tensor_shape), tensor) in wanted.iter().zip(model.tensors_mut()) {
        let read = checkpoint.tensor(name, tensor_shape)?;
        // Stored as F32, read as f64: back to f32 exactly.
        *tensor.values = read.map(f32::of_f64);
    }
    Ok(model)
}
