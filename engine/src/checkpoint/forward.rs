//! The residual stream entering a layer, computed as Hugging Face's modeling_gpt2 and
//! modeling_llama define it, in f64: the embeddings, then each earlier block whole (its norms,
//! its attention and its MLP). The lesson opens on the layer after them and does not step
//! through them; tests/reference/checkpoint.py computes the same numbers with numpy. No
//! lm_head is read, so `tie_word_embeddings` does not matter here.

use nalgebra::DMatrix;

use super::Checkpoint;
use super::config::{Architecture, ModelConfig};
use super::error::CheckpointError;
use super::layer::{AttentionWeights, Norm};
use super::names::{LlamaLayer, gpt2_mlp, llama_mlp};

/// The residual stream entering block `layer` (tokens × d_model); `layer` may be the model's
/// number of layers, the stream after its last block (before the final norm).
pub(crate) fn residual_stream(
    checkpoint: &Checkpoint,
    token_ids: &[usize],
    layer: usize,
) -> Result<DMatrix<f64>, CheckpointError> {
    let config = checkpoint.config();
    if layer > config.layers {
        return Err(CheckpointError::StreamOutOfRange {
            file: checkpoint.config_path().to_path_buf(),
            layer,
            layers: config.layers,
        });
    }
    let mut x = checkpoint.token_embeddings(token_ids)?;
    if let Some(positions) = checkpoint.position_embeddings(token_ids.len())? {
        x += positions;
    }
    for block in 0..layer {
        let weights = checkpoint.attention_layer(block)?;
        let attended = match &weights.norm {
            Some(norm) => attention(config, &weights, &normalise(norm, &x)),
            None => attention(config, &weights, &x),
        };
        x += attended;
        let mlp = match config.architecture {
            Architecture::Gpt2 => Some(gpt2_block_mlp(checkpoint, block, &x)?),
            Architecture::Llama => Some(llama_block_mlp(checkpoint, block, &x)?),
            Architecture::AttnOnly => None,
        };
        if let Some(mlp) = mlp {
            x += mlp;
        }
    }
    Ok(x)
}

/// Each row normalised: LayerNorm (population variance) or RMSNorm, then its gain (and bias).
fn normalise(norm: &Norm, x: &DMatrix<f64>) -> DMatrix<f64> {
    let width = x.ncols() as f64;
    let mut out = x.clone();
    for mut row in out.row_iter_mut() {
        match norm {
            Norm::LayerNorm {
                gain,
                bias,
                epsilon,
            } => {
                let mean = row.sum() / width;
                row.add_scalar_mut(-mean);
                let variance = row.iter().map(|value| value * value).sum::<f64>() / width;
                row /= (variance + epsilon).sqrt();
                row.component_mul_assign(gain);
                row += bias;
            }
            Norm::RmsNorm { gain, epsilon } => {
                let mean_square = row.iter().map(|value| value * value).sum::<f64>() / width;
                row /= (mean_square + epsilon).sqrt();
                row.component_mul_assign(gain);
            }
        }
    }
    out
}

/// `m` with the 1×n row `bias` added to each of its rows, when there is one.
fn with_bias(mut m: DMatrix<f64>, bias: Option<&DMatrix<f64>>) -> DMatrix<f64> {
    if let Some(bias) = bias {
        for mut row in m.row_iter_mut() {
            row += bias;
        }
    }
    m
}

/// The attention sublayer's output (tokens × d_model): every query head over its K/V group,
/// causal, scores ÷ √head_dim, RoPE (rotate-half) for the Llama layout, then W_O and its bias.
fn attention(
    config: &ModelConfig,
    weights: &AttentionWeights,
    normed: &DMatrix<f64>,
) -> DMatrix<f64> {
    let q = with_bias(normed * &weights.w_q, weights.b_q.as_ref());
    let k = with_bias(normed * &weights.w_k, weights.b_k.as_ref());
    let v = with_bias(normed * &weights.w_v, weights.b_v.as_ref());
    let head_dim = config.head_dim;
    let per_group = config.heads / config.kv_heads;
    let tokens = normed.nrows();
    let mut concat = DMatrix::zeros(tokens, config.heads * head_dim);
    for head in 0..config.heads {
        let group = head / per_group;
        let mut q_head = q.columns(head * head_dim, head_dim).into_owned();
        let mut k_group = k.columns(group * head_dim, head_dim).into_owned();
        if let Some(theta) = config.rope_theta {
            rotate_half(&mut q_head, theta);
            rotate_half(&mut k_group, theta);
        }
        let mut weights_of = (&q_head * k_group.transpose()) / (head_dim as f64).sqrt();
        causal_softmax(&mut weights_of);
        let v_group = v.columns(group * head_dim, head_dim);
        concat
            .columns_mut(head * head_dim, head_dim)
            .copy_from(&(&weights_of * v_group));
    }
    with_bias(concat * &weights.w_o, weights.b_o.as_ref())
}

/// RoPE as Llama-family checkpoints apply it (Hugging Face's `rotate_half`): row p's column i
/// and column i + d/2 turn together by p·θ^(−2i/d).
fn rotate_half(m: &mut DMatrix<f64>, theta: f64) {
    let half = m.ncols() / 2;
    let d = m.ncols() as f64;
    for p in 0..m.nrows() {
        for i in 0..half {
            let angle = p as f64 * theta.powf(-2.0 * i as f64 / d);
            let (sin, cos) = angle.sin_cos();
            let (a, b) = (m[(p, i)], m[(p, i + half)]);
            m[(p, i)] = a * cos - b * sin;
            m[(p, i + half)] = b * cos + a * sin;
        }
    }
}

/// Each row's softmax over the keys at or before its token; the keys after it weigh 0.
fn causal_softmax(scores: &mut DMatrix<f64>) {
    for row in 0..scores.nrows() {
        let seen = (row + 1).min(scores.ncols());
        let most = (0..seen)
            .map(|col| scores[(row, col)])
            .fold(f64::NEG_INFINITY, f64::max);
        let mut total = 0.0;
        for col in 0..scores.ncols() {
            let weight = if col < seen {
                (scores[(row, col)] - most).exp()
            } else {
                0.0
            };
            scores[(row, col)] = weight;
            total += weight;
        }
        for col in 0..seen {
            scores[(row, col)] /= total;
        }
    }
}

/// GPT-2's `gelu_new`, GELU's tanh form.
fn gelu_new(x: f64) -> f64 {
    let c = (2.0 / std::f64::consts::PI).sqrt();
    0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())
}

fn silu(x: f64) -> f64 {
    x / (1.0 + (-x).exp())
}

/// GPT-2's MLP sublayer on the stream `x`: c_proj(gelu_new(c_fc(ln_2(x)))).
fn gpt2_block_mlp(
    checkpoint: &Checkpoint,
    layer: usize,
    x: &DMatrix<f64>,
) -> Result<DMatrix<f64>, CheckpointError> {
    let config = checkpoint.config();
    let (d, width) = (config.d_model, config.mlp_width.unwrap_or_default());
    let names = gpt2_mlp(checkpoint.gpt2_prefix(), layer);
    let weights = checkpoint.weights();
    let norm = Norm::LayerNorm {
        gain: weights.read(&names.ln_2_weight, &[d])?,
        bias: weights.read(&names.ln_2_bias, &[d])?,
        epsilon: config.norm_epsilon.unwrap_or_default(),
    };
    let c_fc = weights.read(&names.c_fc_weight, &[d, width])?;
    let c_fc_bias = weights.read(&names.c_fc_bias, &[width])?;
    let c_proj = weights.read(&names.c_proj_weight, &[width, d])?;
    let c_proj_bias = weights.read(&names.c_proj_bias, &[d])?;
    let hidden = with_bias(normalise(&norm, x) * c_fc, Some(&c_fc_bias)).map(gelu_new);
    Ok(with_bias(hidden * c_proj, Some(&c_proj_bias)))
}

/// The Llama layout's MLP sublayer on the stream `x`: with y = post_attention_layernorm(x),
/// down_proj(silu(gate_proj(y)) ⊙ up_proj(y)).
fn llama_block_mlp(
    checkpoint: &Checkpoint,
    layer: usize,
    x: &DMatrix<f64>,
) -> Result<DMatrix<f64>, CheckpointError> {
    let config = checkpoint.config();
    let (d, width) = (config.d_model, config.mlp_width.unwrap_or_default());
    let names = llama_mlp(layer);
    let weights = checkpoint.weights();
    let norm = Norm::RmsNorm {
        gain: weights.read(&names.post_attention_layernorm, &[d])?,
        epsilon: config.norm_epsilon.unwrap_or_default(),
    };
    let y = normalise(&norm, x);
    let gate = linear(checkpoint, &names.gate_proj, [width, d], &y)?.map(silu);
    let up = linear(checkpoint, &names.up_proj, [width, d], &y)?;
    linear(
        checkpoint,
        &names.down_proj,
        [d, width],
        &gate.component_mul(&up),
    )
}

/// A Linear layer of the Llama layout on the rows of `y`: its weight is stored [out, in], and
/// y · Wᵀ is computed as (W · yᵀ)ᵀ, which copies the few rows of y rather than the large
/// weight; its bias is read when config.json's `mlp_bias` says it has one.
fn linear(
    checkpoint: &Checkpoint,
    name: &str,
    shape: [usize; 2],
    y: &DMatrix<f64>,
) -> Result<DMatrix<f64>, CheckpointError> {
    let weights = checkpoint.weights();
    let weight = weights.read(name, &shape)?;
    let bias = if checkpoint.config().mlp_bias {
        Some(weights.read(&LlamaLayer::bias_of(name), &shape[..1])?)
    } else {
        None
    };
    Ok(with_bias(
        (weight * y.transpose()).transpose(),
        bias.as_ref(),
    ))
}
