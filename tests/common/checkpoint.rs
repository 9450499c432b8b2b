//! Small synthetic model checkpoints for `import`'s tests: config.json, model.safetensors
//! (written by hand: an 8-byte header length, a JSON header, the little-endian numbers) and,
//! when asked, a word-level tokenizer.json, under each architecture's real tensor names and
//! shapes. Every tensor's numbers are made from its name, so no two tensors share them.

use std::path::Path;

/// How a tensor is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    F32,
    F16,
    BF16,
}

impl Dtype {
    fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "F32",
            Dtype::F16 => "F16",
            Dtype::BF16 => "BF16",
        }
    }
}

/// A tensor to write: its name, shape and the scale of its numbers (a gain is 1 ± scale).
pub struct Tensor {
    pub name: String,
    pub shape: Vec<usize>,
    pub scale: f64,
    pub around: f64,
}

fn tensor(name: impl Into<String>, shape: &[usize], scale: f64) -> Tensor {
    Tensor {
        name: name.into(),
        shape: shape.to_vec(),
        scale,
        around: 0.0,
    }
}

fn gain(name: impl Into<String>, width: usize) -> Tensor {
    Tensor {
        around: 1.0,
        ..tensor(name, &[width], 0.2)
    }
}

/// The numbers of `name`, before rounding to its dtype.
pub fn values(tensor: &Tensor) -> Vec<f64> {
    let seed = tensor.name.bytes().fold(7u64, |hash, byte| {
        hash.wrapping_mul(31).wrapping_add(byte.into())
    });
    let count: usize = tensor.shape.iter().product();
    (0..count)
        .map(|index| {
            tensor.around + tensor.scale * ((seed % 997) as f64 * 0.017 + index as f64 * 0.61).sin()
        })
        .collect()
}

/// The safetensors file of `tensors`, each stored as `dtype`.
pub fn safetensors(tensors: &[Tensor], dtype: Dtype) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for tensor in tensors {
        let start = data.len();
        for value in values(tensor) {
            match dtype {
                Dtype::F32 => data.extend((value as f32).to_le_bytes()),
                Dtype::F16 => data.extend(f16_bits(value).to_le_bytes()),
                Dtype::BF16 => data.extend(bf16_bits(value).to_le_bytes()),
            }
        }
        header.insert(
            tensor.name.clone(),
            serde_json::json!({
                "dtype": dtype.name(),
                "shape": tensor.shape,
                "data_offsets": [start, data.len()],
            }),
        );
    }
    let mut header = serde_json::to_vec(&header).unwrap();
    while !header.len().is_multiple_of(8) {
        header.push(b' ');
    }
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend(header);
    bytes.extend(data);
    bytes
}

/// bfloat16: the upper half of the f32, rounded to nearest even.
fn bf16_bits(value: f64) -> u16 {
    let bits = (value as f32).to_bits();
    let rounding = 0x7fff + ((bits >> 16) & 1);
    ((bits + rounding) >> 16) as u16
}

/// IEEE half precision, for the small normal numbers these tensors hold (|x| < 65504).
fn f16_bits(value: f64) -> u16 {
    let value = value as f32;
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let magnitude = value.abs();
    if magnitude < 6.103_515_6e-5 {
        // Subnormal halves: multiples of 2^-24.
        return sign | (magnitude / 5.960_464_5e-8).round() as u16;
    }
    let exponent = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let mantissa = bits & 0x7f_ffff;
    let mut half = ((exponent as u32) << 10) | (mantissa >> 13);
    let rest = mantissa & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && half & 1 == 1) {
        half += 1;
    }
    sign | half as u16
}

/// A GPT-2 (GPT2LMHeadModel's names; `prefix` is "" or "transformer.") of `layers` layers of
/// width `d`, `heads` heads, a vocabulary `vocabulary` and a context `context`; every tensor it
/// saves, the causal-mask buffers `attn.bias` and `attn.masked_bias` among them.
pub fn gpt2(
    prefix: &str,
    layers: usize,
    d: usize,
    heads: usize,
    vocabulary: usize,
    context: usize,
) -> (String, Vec<Tensor>) {
    let config = serde_json::json!({
        "model_type": "gpt2",
        "n_layer": layers,
        "n_embd": d,
        "n_head": heads,
        "vocab_size": vocabulary,
        "n_positions": context,
        "layer_norm_epsilon": 1e-5,
        "activation_function": "gelu_new",
        "bos_token_id": 0,
    });
    let mut tensors = vec![
        tensor(format!("{prefix}wte.weight"), &[vocabulary, d], 0.5),
        tensor(format!("{prefix}wpe.weight"), &[context, d], 0.3),
    ];
    for layer in 0..layers {
        let h = format!("{prefix}h.{layer}.");
        tensors.extend([
            gain(format!("{h}ln_1.weight"), d),
            tensor(format!("{h}ln_1.bias"), &[d], 0.1),
            tensor(format!("{h}attn.bias"), &[1, 1, context, context], 1.0),
            tensor(format!("{h}attn.masked_bias"), &[], 1.0),
            tensor(format!("{h}attn.c_attn.weight"), &[d, 3 * d], 0.4),
            tensor(format!("{h}attn.c_attn.bias"), &[3 * d], 0.1),
            tensor(format!("{h}attn.c_proj.weight"), &[d, d], 0.3),
            tensor(format!("{h}attn.c_proj.bias"), &[d], 0.1),
            gain(format!("{h}ln_2.weight"), d),
            tensor(format!("{h}ln_2.bias"), &[d], 0.1),
            tensor(format!("{h}mlp.c_fc.weight"), &[d, 4 * d], 0.3),
            tensor(format!("{h}mlp.c_fc.bias"), &[4 * d], 0.1),
            tensor(format!("{h}mlp.c_proj.weight"), &[4 * d, d], 0.2),
            tensor(format!("{h}mlp.c_proj.bias"), &[d], 0.1),
        ]);
    }
    tensors.extend([
        gain(format!("{prefix}ln_f.weight"), d),
        tensor(format!("{prefix}ln_f.bias"), &[d], 0.1),
    ]);
    (config.to_string(), tensors)
}

/// The project's attention-only model: GPT-2's names without norms and MLPs, and an unembedding.
pub fn attn_only(
    layers: usize,
    d: usize,
    heads: usize,
    vocabulary: usize,
    context: usize,
) -> (String, Vec<Tensor>) {
    let config = serde_json::json!({
        "model_type": "attn-only",
        "n_layer": layers,
        "n_embd": d,
        "n_head": heads,
        "vocab_size": vocabulary,
        "n_positions": context,
    });
    let mut tensors = vec![
        tensor("wte.weight", &[vocabulary, d], 0.5),
        tensor("wpe.weight", &[context, d], 0.3),
        tensor("lm_head.weight", &[vocabulary, d], 0.3),
    ];
    for layer in 0..layers {
        let h = format!("h.{layer}.");
        tensors.extend([
            tensor(format!("{h}attn.c_attn.weight"), &[d, 3 * d], 0.4),
            tensor(format!("{h}attn.c_attn.bias"), &[3 * d], 0.1),
            tensor(format!("{h}attn.c_proj.weight"), &[d, d], 0.3),
            tensor(format!("{h}attn.c_proj.bias"), &[d], 0.1),
        ]);
    }
    (config.to_string(), tensors)
}

/// A Llama-layout model (`model_type` llama, mistral or qwen2): `heads` query heads sharing
/// `kv_heads` K/V heads of `head_dim`, an intermediate size of 3·d; Qwen2 with q/k/v biases.
#[allow(clippy::too_many_arguments)]
pub fn llama(
    model_type: &str,
    layers: usize,
    d: usize,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    vocabulary: usize,
    rope_theta: f64,
) -> (String, Vec<Tensor>) {
    let intermediate = 3 * d;
    let config = serde_json::json!({
        "model_type": model_type,
        "num_hidden_layers": layers,
        "hidden_size": d,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": intermediate,
        "vocab_size": vocabulary,
        "max_position_embeddings": 64,
        "rms_norm_eps": 1e-6,
        "rope_theta": rope_theta,
        "hidden_act": "silu",
        "bos_token_id": 1,
    });
    let mut tensors = vec![tensor("model.embed_tokens.weight", &[vocabulary, d], 0.5)];
    for layer in 0..layers {
        let m = format!("model.layers.{layer}.");
        tensors.extend([
            gain(format!("{m}input_layernorm.weight"), d),
            tensor(
                format!("{m}self_attn.q_proj.weight"),
                &[heads * head_dim, d],
                0.4,
            ),
            tensor(
                format!("{m}self_attn.k_proj.weight"),
                &[kv_heads * head_dim, d],
                0.4,
            ),
            tensor(
                format!("{m}self_attn.v_proj.weight"),
                &[kv_heads * head_dim, d],
                0.4,
            ),
            tensor(
                format!("{m}self_attn.o_proj.weight"),
                &[d, heads * head_dim],
                0.3,
            ),
            gain(format!("{m}post_attention_layernorm.weight"), d),
            tensor(format!("{m}mlp.gate_proj.weight"), &[intermediate, d], 0.3),
            tensor(format!("{m}mlp.up_proj.weight"), &[intermediate, d], 0.3),
            tensor(format!("{m}mlp.down_proj.weight"), &[d, intermediate], 0.2),
        ]);
        if model_type == "qwen2" {
            tensors.extend([
                tensor(
                    format!("{m}self_attn.q_proj.bias"),
                    &[heads * head_dim],
                    0.1,
                ),
                tensor(
                    format!("{m}self_attn.k_proj.bias"),
                    &[kv_heads * head_dim],
                    0.1,
                ),
                tensor(
                    format!("{m}self_attn.v_proj.bias"),
                    &[kv_heads * head_dim],
                    0.1,
                ),
            ]);
        }
    }
    tensors.extend([
        gain("model.norm.weight", d),
        tensor("lm_head.weight", &[vocabulary, d], 0.3),
    ]);
    (config.to_string(), tensors)
}

/// A word-level tokenizer.json: `words` are ids 0, 1, …; text is split at whitespace.
pub fn word_tokenizer(words: &[&str]) -> String {
    let vocab: serde_json::Map<String, serde_json::Value> = words
        .iter()
        .enumerate()
        .map(|(id, word)| (word.to_string(), id.into()))
        .collect();
    serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null,
        "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": words[0]},
    })
    .to_string()
}

/// Writes the checkpoint `(config, tensors)` into `folder` as config.json and model.safetensors.
pub fn write(folder: &Path, (config, tensors): &(String, Vec<Tensor>), dtype: Dtype) {
    std::fs::create_dir_all(folder).unwrap();
    std::fs::write(folder.join("config.json"), config).unwrap();
    std::fs::write(
        folder.join("model.safetensors"),
        safetensors(tensors, dtype),
    )
    .unwrap();
}
