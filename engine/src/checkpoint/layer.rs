//! What one attention layer needs from the checkpoint — its norm, W_Q, W_K, W_V, W_O and their
//! biases — read by the architecture's names, every shape checked against config.json, and
//! turned into the orientation the lesson multiplies by: X (tokens × d_model) · W.

use nalgebra::DMatrix;

use super::Checkpoint;
use super::config::Architecture;
use super::error::CheckpointError;
use super::names::{LlamaLayer, gpt2_layer, llama_layer};

/// The norm before Q, K and V, with its ε from config.json.
#[derive(Debug, Clone, PartialEq)]
pub enum Norm {
    /// GPT-2's `ln_1`: each row less its mean, over √(variance + ε), times `gain`, plus `bias`.
    LayerNorm {
        gain: DMatrix<f64>,
        bias: DMatrix<f64>,
        epsilon: f64,
    },
    /// Llama's `input_layernorm`: each row over √(mean of squares + ε), times `gain`.
    RmsNorm { gain: DMatrix<f64>, epsilon: f64 },
}

/// One layer's attention weights. Every weight is d_in × d_out, as X · W uses it: GPT-2's
/// Conv1D weights are stored that way and kept as stored; Llama's Linear weights are stored
/// [out, in] and are transposed (an exact copy). Head h's columns of W_Q are
/// h·head_dim … (h+1)·head_dim − 1, in the checkpoint's order. Vectors (gains, biases) are 1×n
/// rows, as they are added to each row.
#[derive(Debug, Clone, PartialEq)]
pub struct AttentionWeights {
    pub layer: usize,
    /// `None` for attn-only models.
    pub norm: Option<Norm>,
    /// d_model × heads·head_dim.
    pub w_q: DMatrix<f64>,
    /// d_model × kv_heads·head_dim.
    pub w_k: DMatrix<f64>,
    /// d_model × kv_heads·head_dim.
    pub w_v: DMatrix<f64>,
    /// heads·head_dim × d_model.
    pub w_o: DMatrix<f64>,
    /// Each bias when the checkpoint has it: always for GPT-2, for Q, K and V in Qwen2.
    pub b_q: Option<DMatrix<f64>>,
    pub b_k: Option<DMatrix<f64>>,
    pub b_v: Option<DMatrix<f64>>,
    pub b_o: Option<DMatrix<f64>>,
}

pub(crate) fn read(
    checkpoint: &Checkpoint,
    layer: usize,
) -> Result<AttentionWeights, CheckpointError> {
    let config = checkpoint.config();
    if layer >= config.layers {
        return Err(CheckpointError::LayerOutOfRange {
            file: checkpoint.config_path().to_path_buf(),
            layer,
            layers: config.layers,
        });
    }
    match config.architecture {
        Architecture::Gpt2 | Architecture::AttnOnly => read_gpt2(checkpoint, layer),
        Architecture::Llama => read_llama(checkpoint, layer),
    }
}

fn read_gpt2(checkpoint: &Checkpoint, layer: usize) -> Result<AttentionWeights, CheckpointError> {
    let config = checkpoint.config();
    let d = config.d_model;
    let names = gpt2_layer(checkpoint.gpt2_prefix(), layer);
    let weights = checkpoint.weights();
    let norm = match (config.architecture, config.norm_epsilon) {
        (Architecture::Gpt2, Some(epsilon)) => Some(Norm::LayerNorm {
            gain: weights.read(&names.ln_1_weight, &[d])?,
            bias: weights.read(&names.ln_1_bias, &[d])?,
            epsilon,
        }),
        _ => None,
    };
    // A product's size is checked: a config's sizes are the file's, not ours.
    let three_d = d.checked_mul(3).ok_or_else(|| too_large(checkpoint))?;
    let c_attn = weights.read(&names.c_attn_weight, &[d, three_d])?;
    let c_attn_bias = weights.read(&names.c_attn_bias, &[three_d])?;
    Ok(AttentionWeights {
        layer,
        norm,
        w_q: c_attn.columns(0, d).into_owned(),
        w_k: c_attn.columns(d, d).into_owned(),
        w_v: c_attn.columns(2 * d, d).into_owned(),
        w_o: weights.read(&names.c_proj_weight, &[d, d])?,
        b_q: Some(c_attn_bias.columns(0, d).into_owned()),
        b_k: Some(c_attn_bias.columns(d, d).into_owned()),
        b_v: Some(c_attn_bias.columns(2 * d, d).into_owned()),
        b_o: Some(weights.read(&names.c_proj_bias, &[d])?),
    })
}

fn read_llama(checkpoint: &Checkpoint, layer: usize) -> Result<AttentionWeights, CheckpointError> {
    let config = checkpoint.config();
    let d = config.d_model;
    let q_width = config
        .heads
        .checked_mul(config.head_dim)
        .ok_or_else(|| too_large(checkpoint))?;
    let kv_width = config
        .kv_heads
        .checked_mul(config.head_dim)
        .ok_or_else(|| too_large(checkpoint))?;
    let names = llama_layer(layer);
    let weights = checkpoint.weights();
    let bias = |weight: &str, width: usize| {
        let name = LlamaLayer::bias_of(weight);
        if config.attention_bias || weights.has(&name) {
            weights.read(&name, &[width]).map(Some)
        } else {
            Ok(None)
        }
    };
    Ok(AttentionWeights {
        layer,
        norm: Some(Norm::RmsNorm {
            gain: weights.read(&names.input_layernorm, &[d])?,
            epsilon: config.norm_epsilon.unwrap_or_default(),
        }),
        w_q: weights.read(&names.q_proj, &[q_width, d])?.transpose(),
        w_k: weights.read(&names.k_proj, &[kv_width, d])?.transpose(),
        w_v: weights.read(&names.v_proj, &[kv_width, d])?.transpose(),
        w_o: weights.read(&names.o_proj, &[d, q_width])?.transpose(),
        b_q: bias(&names.q_proj, q_width)?,
        b_k: bias(&names.k_proj, kv_width)?,
        b_v: bias(&names.v_proj, kv_width)?,
        b_o: bias(&names.o_proj, d)?,
    })
}

fn too_large(checkpoint: &Checkpoint) -> CheckpointError {
    CheckpointError::Inconsistent {
        file: checkpoint.config_path().to_path_buf(),
        why: "its sizes multiply past what this machine can count".to_string(),
    }
}
