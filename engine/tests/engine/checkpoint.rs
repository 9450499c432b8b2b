//! Reading checkpoints: small synthetic GPT-2, Llama, Qwen2 and attn-only checkpoints, written
//! here under the real tensor names and shapes, read back exactly (F32, F16, BF16), whole or
//! sharded; and every bad file refused with a message naming the file and the key or tensor.

use std::path::{Path, PathBuf};

use attn_engine::checkpoint::{Architecture, Checkpoint, CheckpointError, Norm};
use nalgebra::DMatrix;
use safetensors::Dtype;
use safetensors::tensor::TensorView;

/// A tensor to write: its numbers are made from its name, so two tensors never share them and
/// a tensor read in place of another is seen.
struct Tensor {
    name: String,
    shape: Vec<usize>,
    dtype: Dtype,
}

fn tensor(name: &str, shape: &[usize], dtype: Dtype) -> Tensor {
    Tensor {
        name: name.to_string(),
        shape: shape.to_vec(),
        dtype,
    }
}

/// The numbers `name` holds as written, before rounding to its dtype.
fn raw_values(name: &str, count: usize) -> Vec<f64> {
    let seed = name.bytes().fold(7u64, |hash, byte| {
        hash.wrapping_mul(31).wrapping_add(byte.into())
    });
    (0..count)
        .map(|index| ((seed % 1000) as f64 * 0.013 + index as f64 * 0.71).sin() * 1.9)
        .collect()
}

/// What a reader must give back for `name`: the written numbers rounded to the dtype, widened
/// through `half` (or f32) to f64.
fn stored(name: &str, count: usize, dtype: Dtype) -> Vec<f64> {
    raw_values(name, count)
        .into_iter()
        .map(|value| match dtype {
            Dtype::F32 => f64::from(value as f32),
            Dtype::F16 => half::f16::from_f64(value).to_f64(),
            Dtype::BF16 => half::bf16::from_f64(value).to_f64(),
            other => panic!("no test values for {other}"),
        })
        .collect()
}

fn bytes_of(tensor: &Tensor) -> Vec<u8> {
    let count = tensor.shape.iter().product();
    let values = raw_values(&tensor.name, count);
    match tensor.dtype {
        Dtype::F32 => values
            .iter()
            .flat_map(|&value| (value as f32).to_le_bytes())
            .collect(),
        Dtype::F16 => values
            .iter()
            .flat_map(|&value| half::f16::from_f64(value).to_le_bytes())
            .collect(),
        Dtype::BF16 => values
            .iter()
            .flat_map(|&value| half::bf16::from_f64(value).to_le_bytes())
            .collect(),
        Dtype::I32 => (0..count as i32).flat_map(i32::to_le_bytes).collect(),
        other => panic!("no test bytes for {other}"),
    }
}

fn safetensors_bytes(tensors: &[Tensor]) -> Vec<u8> {
    let data: Vec<Vec<u8>> = tensors.iter().map(bytes_of).collect();
    let views: Vec<(String, TensorView<'_>)> = tensors
        .iter()
        .zip(&data)
        .map(|(tensor, bytes)| {
            (
                tensor.name.clone(),
                TensorView::new(tensor.dtype, tensor.shape.clone(), bytes).unwrap(),
            )
        })
        .collect();
    safetensors::serialize(views, None).unwrap()
}

/// The stored tensor `name` as the matrix a reader should give: [r, c] as r×c, [n] as 1×n.
fn expected(name: &str, shape: &[usize], dtype: Dtype) -> DMatrix<f64> {
    let (rows, columns) = match *shape {
        [n] => (1, n),
        [rows, columns] => (rows, columns),
        _ => panic!("vectors and matrices only"),
    };
    DMatrix::from_row_slice(rows, columns, &stored(name, rows * columns, dtype))
}

/// A GPT-2 (`model_type` gpt2 or attn-only) of width 8, 2 heads, 2 layers, a vocabulary of 11
/// and a context of 6: every tensor GPT2LMHeadModel saves, the mask buffers among them.
fn gpt2_tensors(prefix: &str, dtype: Dtype, norms: bool) -> Vec<Tensor> {
    let (d, vocabulary, context) = (8, 11, 6);
    let mut tensors = vec![
        tensor(&format!("{prefix}wte.weight"), &[vocabulary, d], dtype),
        tensor(&format!("{prefix}wpe.weight"), &[context, d], dtype),
    ];
    for layer in 0..2 {
        let at = |rest: &str| format!("{prefix}h.{layer}.{rest}");
        if norms {
            tensors.push(tensor(&at("ln_1.weight"), &[d], dtype));
            tensors.push(tensor(&at("ln_1.bias"), &[d], dtype));
            tensors.push(tensor(&at("ln_2.weight"), &[d], dtype));
            tensors.push(tensor(&at("ln_2.bias"), &[d], dtype));
            tensors.push(tensor(&at("mlp.c_fc.weight"), &[d, 4 * d], dtype));
            tensors.push(tensor(&at("mlp.c_fc.bias"), &[4 * d], dtype));
            tensors.push(tensor(&at("mlp.c_proj.weight"), &[4 * d, d], dtype));
            tensors.push(tensor(&at("mlp.c_proj.bias"), &[d], dtype));
        }
        // The causal mask and its fill, saved as buffers: not biases.
        tensors.push(tensor(
            &at("attn.bias"),
            &[1, 1, context, context],
            Dtype::F32,
        ));
        tensors.push(tensor(&at("attn.masked_bias"), &[], Dtype::F32));
        tensors.push(tensor(&at("attn.c_attn.weight"), &[d, 3 * d], dtype));
        tensors.push(tensor(&at("attn.c_attn.bias"), &[3 * d], dtype));
        tensors.push(tensor(&at("attn.c_proj.weight"), &[d, d], dtype));
        tensors.push(tensor(&at("attn.c_proj.bias"), &[d], dtype));
    }
    if norms {
        tensors.push(tensor(&format!("{prefix}ln_f.weight"), &[d], dtype));
        tensors.push(tensor(&format!("{prefix}ln_f.bias"), &[d], dtype));
    } else {
        tensors.push(tensor("lm_head.weight", &[vocabulary, d], dtype));
    }
    tensors
}

const GPT2_CONFIG: &str = r#"{"model_type": "gpt2", "n_embd": 8, "n_head": 2, "n_layer": 2,
  "n_positions": 6, "n_ctx": 6, "vocab_size": 11, "layer_norm_epsilon": 1e-05,
  "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"]}"#;

/// A Llama-layout model of width 8, 4 query heads sharing 2 K/V heads, head_dim 4 (given, not
/// 8 / 4), 2 layers, a vocabulary of 13.
fn llama_tensors(dtype: Dtype, qkv_biases: bool) -> Vec<Tensor> {
    let (d, q, kv, vocabulary) = (8, 16, 8, 13);
    let mut tensors = vec![
        tensor("model.embed_tokens.weight", &[vocabulary, d], dtype),
        tensor("model.norm.weight", &[d], dtype),
        tensor("lm_head.weight", &[vocabulary, d], dtype),
    ];
    for layer in 0..2 {
        let at = |rest: &str| format!("model.layers.{layer}.{rest}");
        tensors.push(tensor(&at("input_layernorm.weight"), &[d], dtype));
        tensors.push(tensor(&at("post_attention_layernorm.weight"), &[d], dtype));
        tensors.push(tensor(&at("self_attn.q_proj.weight"), &[q, d], dtype));
        tensors.push(tensor(&at("self_attn.k_proj.weight"), &[kv, d], dtype));
        tensors.push(tensor(&at("self_attn.v_proj.weight"), &[kv, d], dtype));
        tensors.push(tensor(&at("self_attn.o_proj.weight"), &[d, q], dtype));
        if qkv_biases {
            tensors.push(tensor(&at("self_attn.q_proj.bias"), &[q], dtype));
            tensors.push(tensor(&at("self_attn.k_proj.bias"), &[kv], dtype));
            tensors.push(tensor(&at("self_attn.v_proj.bias"), &[kv], dtype));
        }
        tensors.push(tensor(&at("mlp.gate_proj.weight"), &[16, d], dtype));
        tensors.push(tensor(&at("mlp.up_proj.weight"), &[16, d], dtype));
        tensors.push(tensor(&at("mlp.down_proj.weight"), &[d, 16], dtype));
    }
    tensors
}

fn llama_config(model_type: &str) -> String {
    format!(
        r#"{{"model_type": "{model_type}", "hidden_size": 8, "num_attention_heads": 4,
  "num_key_value_heads": 2, "head_dim": 4, "num_hidden_layers": 2, "rms_norm_eps": 1e-05,
  "rope_theta": 500000.0, "vocab_size": 13, "max_position_embeddings": 32,
  "intermediate_size": 16, "hidden_act": "silu"}}"#
    )
}

/// A folder holding `config` as config.json and `tensors` as model.safetensors.
fn checkpoint_folder(config: &str, tensors: &[Tensor]) -> tempfile::TempDir {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("config.json"), config).unwrap();
    std::fs::write(
        folder.path().join("model.safetensors"),
        safetensors_bytes(tensors),
    )
    .unwrap();
    folder
}

fn open(folder: &Path) -> Checkpoint {
    Checkpoint::open(folder).unwrap_or_else(|error| panic!("{error}"))
}

fn error_of<T>(result: Result<T, CheckpointError>) -> String {
    match result {
        Ok(_) => panic!("an error was expected"),
        Err(error) => error.to_string(),
    }
}

fn assert_says(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "«{part}» in «{message}»");
    }
}

/// Layer `layer` of a GPT-2 written by `gpt2_tensors` read as the lesson uses it.
fn assert_gpt2_layer(checkpoint: &Checkpoint, prefix: &str, layer: usize, dtype: Dtype) {
    let weights = checkpoint.attention_layer(layer).unwrap();
    let at = |rest: &str| format!("{prefix}h.{layer}.{rest}");
    let c_attn = expected(&at("attn.c_attn.weight"), &[8, 24], dtype);
    let c_attn_bias = expected(&at("attn.c_attn.bias"), &[24], dtype);
    assert_eq!(weights.layer, layer);
    // Conv1D is [in, out] and used as stored: Q, K and V are its column thirds.
    assert_eq!(weights.w_q, c_attn.columns(0, 8).into_owned());
    assert_eq!(weights.w_k, c_attn.columns(8, 8).into_owned());
    assert_eq!(weights.w_v, c_attn.columns(16, 8).into_owned());
    assert_eq!(weights.b_q, Some(c_attn_bias.columns(0, 8).into_owned()));
    assert_eq!(weights.b_k, Some(c_attn_bias.columns(8, 8).into_owned()));
    assert_eq!(weights.b_v, Some(c_attn_bias.columns(16, 8).into_owned()));
    assert_eq!(
        weights.w_o,
        expected(&at("attn.c_proj.weight"), &[8, 8], dtype)
    );
    assert_eq!(
        weights.b_o,
        Some(expected(&at("attn.c_proj.bias"), &[8], dtype))
    );
    assert_eq!(
        weights.norm,
        Some(Norm::LayerNorm {
            gain: expected(&at("ln_1.weight"), &[8], dtype),
            bias: expected(&at("ln_1.bias"), &[8], dtype),
            epsilon: 1e-5,
        })
    );
}

#[test]
fn a_gpt2_checkpoint_saved_with_the_transformer_prefix_is_read_exactly() {
    let folder = checkpoint_folder(GPT2_CONFIG, &gpt2_tensors("transformer.", Dtype::F32, true));
    let checkpoint = open(folder.path());
    let config = checkpoint.config();
    assert_eq!(config.architecture, Architecture::Gpt2);
    assert_eq!(
        (config.layers, config.d_model, config.heads, config.kv_heads),
        (2, 8, 2, 2)
    );
    assert_eq!(
        (config.head_dim, config.vocabulary, config.context),
        (4, 11, 6)
    );
    assert_eq!((config.norm_epsilon, config.rope_theta), (Some(1e-5), None));
    for layer in 0..2 {
        assert_gpt2_layer(&checkpoint, "transformer.", layer, Dtype::F32);
    }
    // Only the rows of the text's tokens, in its order, repeats kept.
    let wte = expected("transformer.wte.weight", &[11, 8], Dtype::F32);
    let rows = checkpoint.token_embeddings(&[3, 0, 3, 10]).unwrap();
    assert_eq!(rows, wte.select_rows(&[3, 0, 3, 10]));
    assert_eq!(
        checkpoint
            .token_embeddings(&(0..6).collect::<Vec<_>>())
            .unwrap(),
        wte.rows(0, 6).into_owned()
    );
    let wpe = expected("transformer.wpe.weight", &[6, 8], Dtype::F32);
    assert_eq!(
        checkpoint.position_embeddings(4).unwrap(),
        Some(wpe.rows(0, 4).into_owned())
    );
    assert_eq!(checkpoint.position_embeddings(6).unwrap(), Some(wpe));
}

#[test]
fn a_gpt2_checkpoint_without_the_prefix_in_f16_is_read_exactly_and_so_is_its_file_path() {
    let folder = checkpoint_folder(GPT2_CONFIG, &gpt2_tensors("", Dtype::F16, true));
    // F16 keeps 11 bits of each number: the written values are not what is read back.
    let rounded = stored("h.1.attn.c_attn.weight", 24, Dtype::F16);
    assert_ne!(rounded, raw_values("h.1.attn.c_attn.weight", 24));
    // The folder, or the safetensors file with config.json beside it.
    for path in [
        folder.path().to_path_buf(),
        folder.path().join("model.safetensors"),
    ] {
        let checkpoint = open(&path);
        assert_gpt2_layer(&checkpoint, "", 1, Dtype::F16);
        assert_eq!(
            checkpoint.token_embeddings(&[10, 1]).unwrap(),
            expected("wte.weight", &[11, 8], Dtype::F16).select_rows(&[10, 1])
        );
    }
}

#[test]
fn a_tensor_is_read_by_name_with_its_shape_checked() {
    let folder = checkpoint_folder(GPT2_CONFIG, &gpt2_tensors("", Dtype::BF16, true));
    let checkpoint = open(folder.path());
    assert_eq!(
        checkpoint.tensor("h.0.mlp.c_fc.weight", &[8, 32]).unwrap(),
        expected("h.0.mlp.c_fc.weight", &[8, 32], Dtype::BF16)
    );
    let message = error_of(checkpoint.tensor("h.0.mlp.c_fc.weight", &[32, 8]));
    assert_says(&message, &["h.0.mlp.c_fc.weight", "[8, 32]", "[32, 8]"]);
}

#[test]
fn a_matrix_wider_and_taller_than_the_copys_tiles_is_read_exactly() {
    // The reader copies rows to columns 32 × 32 at a time: 37 × 70 ends inside a tile both ways.
    let tensors = [
        tensor("tall", &[70, 37], Dtype::F32),
        tensor("wide", &[37, 70], Dtype::BF16),
    ];
    let folder = checkpoint_folder(GPT2_CONFIG, &tensors);
    let checkpoint = open(folder.path());
    assert_eq!(
        checkpoint.tensor("tall", &[70, 37]).unwrap(),
        expected("tall", &[70, 37], Dtype::F32)
    );
    assert_eq!(
        checkpoint.tensor("wide", &[37, 70]).unwrap(),
        expected("wide", &[37, 70], Dtype::BF16)
    );
}

#[test]
fn an_attn_only_checkpoint_has_no_norm() {
    let config = r#"{"model_type": "attn-only", "n_layer": 2, "n_head": 2, "n_embd": 8,
      "n_positions": 6, "vocab_size": 11}"#;
    let folder = checkpoint_folder(config, &gpt2_tensors("", Dtype::F32, false));
    let checkpoint = open(folder.path());
    assert_eq!(checkpoint.config().architecture, Architecture::AttnOnly);
    assert_eq!(checkpoint.config().norm_epsilon, None);
    let weights = checkpoint.attention_layer(1).unwrap();
    assert_eq!(weights.norm, None);
    assert_eq!(
        weights.w_o,
        expected("h.1.attn.c_proj.weight", &[8, 8], Dtype::F32)
    );
}

#[test]
fn a_llama_checkpoint_with_grouped_kv_heads_in_bf16_is_read_transposed_and_exactly() {
    let folder = checkpoint_folder(&llama_config("llama"), &llama_tensors(Dtype::BF16, false));
    let checkpoint = open(folder.path());
    let config = checkpoint.config();
    assert_eq!(config.architecture, Architecture::Llama);
    assert_eq!((config.heads, config.kv_heads, config.head_dim), (4, 2, 4));
    assert_eq!(
        (config.norm_epsilon, config.rope_theta),
        (Some(1e-5), Some(500000.0))
    );
    assert_eq!(config.context, 32);
    let weights = checkpoint.attention_layer(1).unwrap();
    let at = |rest: &str| format!("model.layers.1.self_attn.{rest}");
    // Linear weights are [out, in]: the lesson's d_in × d_out is their transpose.
    assert_eq!(
        weights.w_q,
        expected(&at("q_proj.weight"), &[16, 8], Dtype::BF16).transpose()
    );
    assert_eq!(weights.w_k.shape(), (8, 8));
    assert_eq!(
        weights.w_k,
        expected(&at("k_proj.weight"), &[8, 8], Dtype::BF16).transpose()
    );
    assert_eq!(
        weights.w_v,
        expected(&at("v_proj.weight"), &[8, 8], Dtype::BF16).transpose()
    );
    assert_eq!(weights.w_o.shape(), (16, 8));
    assert_eq!(
        weights.w_o,
        expected(&at("o_proj.weight"), &[8, 16], Dtype::BF16).transpose()
    );
    assert_eq!(
        (weights.b_q, weights.b_k, weights.b_v, weights.b_o),
        (None, None, None, None)
    );
    assert_eq!(
        weights.norm,
        Some(Norm::RmsNorm {
            gain: expected("model.layers.1.input_layernorm.weight", &[8], Dtype::BF16),
            epsilon: 1e-5,
        })
    );
    assert_eq!(
        checkpoint.token_embeddings(&[12, 5]).unwrap(),
        expected("model.embed_tokens.weight", &[13, 8], Dtype::BF16).select_rows(&[12, 5])
    );
    assert_eq!(checkpoint.position_embeddings(3).unwrap(), None);
}

#[test]
fn a_qwen2_checkpoint_reads_its_q_k_v_biases() {
    let folder = checkpoint_folder(&llama_config("qwen2"), &llama_tensors(Dtype::F32, true));
    let weights = open(folder.path()).attention_layer(0).unwrap();
    let at = |rest: &str| format!("model.layers.0.self_attn.{rest}");
    assert_eq!(
        weights.b_q,
        Some(expected(&at("q_proj.bias"), &[16], Dtype::F32))
    );
    assert_eq!(
        weights.b_k,
        Some(expected(&at("k_proj.bias"), &[8], Dtype::F32))
    );
    assert_eq!(
        weights.b_v,
        Some(expected(&at("v_proj.bias"), &[8], Dtype::F32))
    );
    assert_eq!(weights.b_o, None);
}

#[test]
fn a_llama_config_without_the_optional_keys_takes_hugging_faces_defaults() {
    let config = r#"{"model_type": "mistral", "hidden_size": 8, "num_attention_heads": 2,
      "num_hidden_layers": 1, "vocab_size": 5, "max_position_embeddings": 4, "head_dim": null}"#;
    let folder = checkpoint_folder(config, &[tensor("x", &[1], Dtype::F32)]);
    let config = open(folder.path()).config().clone();
    assert_eq!((config.kv_heads, config.head_dim), (2, 4));
    assert_eq!(
        (config.norm_epsilon, config.rope_theta),
        (Some(1e-6), Some(10000.0))
    );
    assert_eq!(config.model_type, "mistral");
}

#[test]
fn a_gpt2_config_with_n_ctx_only_takes_its_context_from_it() {
    let config = GPT2_CONFIG.replace("\"n_positions\": 6, ", "");
    let folder = checkpoint_folder(&config, &[tensor("x", &[1], Dtype::F32)]);
    assert_eq!(open(folder.path()).config().context, 6);
}

/// A sharded GPT-2: each layer in its own shard, the embeddings in the first.
fn sharded_gpt2(
    index: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
) -> tempfile::TempDir {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("config.json"), GPT2_CONFIG).unwrap();
    let (first, second): (Vec<Tensor>, Vec<Tensor>) =
        gpt2_tensors("transformer.", Dtype::F16, true)
            .into_iter()
            .partition(|tensor| !tensor.name.starts_with("transformer.h.1."));
    let mut weight_map = serde_json::Map::new();
    for (shard, tensors) in [
        ("model-00001-of-00002.safetensors", &first),
        ("model-00002-of-00002.safetensors", &second),
    ] {
        std::fs::write(folder.path().join(shard), safetensors_bytes(tensors)).unwrap();
        for tensor in tensors.iter() {
            weight_map.insert(tensor.name.clone(), shard.into());
        }
    }
    index(&mut weight_map);
    let index = serde_json::json!({"metadata": {"total_size": 0}, "weight_map": weight_map});
    std::fs::write(
        folder.path().join("model.safetensors.index.json"),
        index.to_string(),
    )
    .unwrap();
    folder
}

#[test]
fn a_sharded_checkpoint_reads_each_tensor_from_the_shard_its_index_names() {
    let folder = sharded_gpt2(|_| {});
    for path in [
        folder.path().to_path_buf(),
        folder.path().join("model.safetensors.index.json"),
    ] {
        let checkpoint = open(&path);
        assert_gpt2_layer(&checkpoint, "transformer.", 0, Dtype::F16);
        assert_gpt2_layer(&checkpoint, "transformer.", 1, Dtype::F16);
    }
}

#[test]
fn a_tensor_the_index_does_not_map_is_missing_from_the_index() {
    let folder = sharded_gpt2(|map| {
        map.remove("transformer.h.1.attn.c_proj.bias");
    });
    let message = error_of(open(folder.path()).attention_layer(1));
    assert_says(
        &message,
        &[
            "model.safetensors.index.json",
            "no tensor `transformer.h.1.attn.c_proj.bias`",
        ],
    );
}

#[test]
fn a_tensor_the_index_maps_to_a_shard_without_it_is_missing_from_that_shard() {
    let folder = sharded_gpt2(|map| {
        map.insert(
            "transformer.h.1.attn.c_proj.bias".into(),
            "model-00001-of-00002.safetensors".into(),
        );
    });
    let message = error_of(open(folder.path()).attention_layer(1));
    assert_says(
        &message,
        &[
            "model-00001-of-00002.safetensors",
            "no tensor `transformer.h.1.attn.c_proj.bias`",
        ],
    );
}

#[test]
fn an_index_naming_a_shard_outside_its_folder_is_refused() {
    for shard in [
        "../model.safetensors",
        "/etc/passwd",
        "sub/model.safetensors",
    ] {
        let folder = sharded_gpt2(|map| {
            map.insert("transformer.wte.weight".into(), shard.into());
        });
        let message = error_of(Checkpoint::open(folder.path()));
        assert_says(
            &message,
            &[
                "model.safetensors.index.json",
                shard,
                "a file name in the index's folder",
            ],
        );
    }
}

#[test]
fn an_index_without_a_weight_map_is_refused() {
    let folder = sharded_gpt2(|_| {});
    std::fs::write(
        folder.path().join("model.safetensors.index.json"),
        r#"{"metadata": {}}"#,
    )
    .unwrap();
    let message = error_of(Checkpoint::open(folder.path()));
    assert_says(
        &message,
        &["model.safetensors.index.json", "no `weight_map`"],
    );
}

#[test]
fn a_folder_without_config_json_says_where_it_looked() {
    let folder = checkpoint_folder(GPT2_CONFIG, &gpt2_tensors("", Dtype::F32, true));
    std::fs::remove_file(folder.path().join("config.json")).unwrap();
    for path in [
        folder.path().to_path_buf(),
        folder.path().join("model.safetensors"),
    ] {
        let message = error_of(Checkpoint::open(&path));
        let config = folder.path().join("config.json");
        assert_says(
            &message,
            &[
                &format!("{}: no such file", config.display()),
                "config.json beside model.safetensors",
            ],
        );
    }
}

#[test]
fn a_folder_without_weights_says_which_files_it_wants() {
    let folder = checkpoint_folder(GPT2_CONFIG, &[]);
    std::fs::remove_file(folder.path().join("model.safetensors")).unwrap();
    let message = error_of(Checkpoint::open(folder.path()));
    assert_says(
        &message,
        &["neither model.safetensors nor model.safetensors.index.json"],
    );
}

/// The message for a GPT-2 whose config.json is `config`.
fn config_error(config: &str) -> String {
    let folder = checkpoint_folder(config, &[tensor("x", &[1], Dtype::F32)]);
    error_of(Checkpoint::open(folder.path()))
}

#[test]
fn an_unknown_model_type_names_the_supported_ones() {
    let message = config_error(&GPT2_CONFIG.replace("\"gpt2\"", "\"bert\""));
    assert_says(
        &message,
        &[
            "config.json: model_type \"bert\"",
            "supported: gpt2, llama, mistral, qwen2, attn-only",
        ],
    );
}

#[test]
fn a_missing_or_ill_typed_config_key_is_named_with_what_it_should_be() {
    let missing = config_error(&GPT2_CONFIG.replace("\"n_head\": 2, ", ""));
    assert_says(
        &missing,
        &["config.json: no `n_head`", "a whole number above 0"],
    );
    let string = config_error(&GPT2_CONFIG.replace("\"n_layer\": 2", "\"n_layer\": \"2\""));
    assert_says(
        &string,
        &[
            "config.json: `n_layer` is \"2\" (a string)",
            "a whole number above 0",
        ],
    );
    let zero = config_error(&GPT2_CONFIG.replace("\"n_layer\": 2", "\"n_layer\": 0"));
    assert_says(&zero, &["`n_layer` is 0 (a number)"]);
    let epsilon = config_error(&GPT2_CONFIG.replace("1e-05", "-1"));
    assert_says(
        &epsilon,
        &["`layer_norm_epsilon` is -1 (a number)", "a number above 0"],
    );
    let no_type = config_error(r#"{"n_embd": 8}"#);
    assert_says(&no_type, &["no `model_type`"]);
    let llama = config_error(&llama_config("llama").replace("\"hidden_size\": 8, ", ""));
    assert_says(&llama, &["config.json: no `hidden_size`"]);
}

#[test]
fn a_config_whose_sizes_disagree_says_how() {
    let heads = config_error(&GPT2_CONFIG.replace("\"n_head\": 2", "\"n_head\": 3"));
    assert_says(
        &heads,
        &["config.json: n_embd (8) is not a multiple of n_head (3)"],
    );
    let groups = config_error(
        &llama_config("llama").replace("\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3"),
    );
    assert_says(
        &groups,
        &["num_attention_heads (4) is not a multiple of num_key_value_heads (3)"],
    );
}

#[test]
fn a_config_that_is_not_json_says_where() {
    let message = config_error("{\"model_type\": \"gpt2\",\n  \"n_embd\": }");
    assert_says(&message, &["config.json: not JSON", "line 2 column"]);
    let list = config_error("[1, 2]");
    assert_says(&list, &["config.json: the file is a list"]);
}

#[test]
fn text_from_the_files_is_shown_with_its_control_characters_escaped() {
    let message = config_error(&GPT2_CONFIG.replace("\"gpt2\"", "\"\\u001b]0;owned\\u0007\""));
    assert!(
        !message.contains('\u{1b}') && !message.contains('\u{7}'),
        "{message:?}"
    );
    assert_says(&message, &["\\u{001b}]0;owned\\u{0007}"]);
}

#[test]
fn a_layer_past_the_models_layers_is_refused() {
    let folder = checkpoint_folder(GPT2_CONFIG, &gpt2_tensors("", Dtype::F32, true));
    let message = error_of(open(folder.path()).attention_layer(2));
    assert_says(
        &message,
        &["config.json: layer 2 is past the model's 2 layers (0 to 1)"],
    );
}

#[test]
fn a_token_past_the_vocabulary_or_a_text_past_the_context_is_refused() {
    let folder = checkpoint_folder(GPT2_CONFIG, &gpt2_tensors("", Dtype::F32, true));
    let checkpoint = open(folder.path());
    let token = error_of(checkpoint.token_embeddings(&[2, 11]));
    assert_says(
        &token,
        &["model.safetensors: tensor `wte.weight` has 11 rows; row 11 is past them"],
    );
    for long in [
        error_of(checkpoint.token_embeddings(&[1; 7])),
        error_of(checkpoint.position_embeddings(7)),
    ] {
        assert_says(
            &long,
            &["config.json: 7 tokens are more than the model reads at once (6, its context)"],
        );
    }
}

#[test]
fn a_shard_name_from_the_index_is_shown_with_its_control_characters_escaped() {
    let folder = sharded_gpt2(|map| {
        map.insert("transformer.wte.weight".into(), "a/\u{1b}[2J".into());
    });
    let message = error_of(Checkpoint::open(folder.path()));
    assert!(!message.contains('\u{1b}'), "{message:?}");
    assert_says(&message, &["a/\\u{001b}[2J"]);
}

/// The message for a GPT-2 whose model.safetensors holds `bytes`, from opening it or reading
/// layer 0.
fn weights_error(bytes: &[u8]) -> String {
    let folder = checkpoint_folder(GPT2_CONFIG, &[]);
    std::fs::write(folder.path().join("model.safetensors"), bytes).unwrap();
    error_of(Checkpoint::open(folder.path()).and_then(|checkpoint| checkpoint.attention_layer(0)))
}

/// A safetensors file with `header` as its header and `data` bytes after it.
fn with_header(header: &str, data: usize) -> Vec<u8> {
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend(std::iter::repeat_n(0u8, data));
    bytes
}

#[test]
fn a_truncated_safetensors_file_says_where_it_ends() {
    let short = weights_error(&[1, 0, 0]);
    assert_says(
        &short,
        &["model.safetensors: truncated: it is 3 bytes, shorter than the 8-byte header length"],
    );
    let mut header_cut = 500u64.to_le_bytes().to_vec();
    header_cut.extend_from_slice(b"{\"a\":");
    let header = weights_error(&header_cut);
    assert_says(
        &header,
        &["model.safetensors: truncated: its header should be 500 bytes, but only 5 follow"],
    );
    let whole = safetensors_bytes(&gpt2_tensors("", Dtype::F32, true));
    let data = weights_error(&whole[..whole.len() - 4]);
    assert_says(
        &data,
        &[
            "model.safetensors: truncated: its tensors' data offsets run to byte",
            "but only",
        ],
    );
}

#[test]
fn every_cut_of_a_safetensors_file_is_refused_without_a_panic() {
    // A few tensors of each dtype: every cut of the length, the header and the data.
    let whole = safetensors_bytes(&[
        tensor("h.0.ln_1.weight", &[8], Dtype::F32),
        tensor("h.0.ln_1.bias", &[8], Dtype::F16),
        tensor("h.0.attn.c_attn.bias", &[24], Dtype::BF16),
    ]);
    let folder = checkpoint_folder(GPT2_CONFIG, &[]);
    let path = folder.path().join("model.safetensors");
    for cut in 0..whole.len() {
        std::fs::write(&path, &whole[..cut]).unwrap();
        let message = error_of(
            Checkpoint::open(folder.path()).and_then(|checkpoint| checkpoint.attention_layer(0)),
        );
        assert!(message.contains("model.safetensors: "), "{cut}: {message}");
    }
}

#[test]
fn a_corrupt_safetensors_header_says_what_is_wrong() {
    let not_json = weights_error(&with_header("not json at all", 0));
    assert_says(
        &not_json,
        &["model.safetensors: not a safetensors file: its header is not JSON"],
    );
    let not_header = weights_error(&with_header(r#"{"a": 5}"#, 0));
    assert_says(
        &not_header,
        &["model.safetensors: not a safetensors file: its header is not a safetensors header"],
    );
    // Offsets that do not cover the tensor's shape.
    let offsets = weights_error(&with_header(
        r#"{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}"#,
        4,
    ));
    assert_says(&offsets, &["not a safetensors header"]);
    let mut huge = u64::MAX.to_le_bytes().to_vec();
    huge.extend_from_slice(b"{}");
    let length = weights_error(&huge);
    assert_says(
        &length,
        &["give a header of 18446744073709551615 bytes, more than the 100000000"],
    );
    let mut whole = safetensors_bytes(&gpt2_tensors("", Dtype::F32, true));
    whole.extend_from_slice(&[0; 4]);
    let longer = weights_error(&whole);
    assert_says(&longer, &["data offsets end at byte", "bytes follow it"]);
}

#[test]
fn a_missing_tensor_is_named_with_its_file() {
    let tensors: Vec<Tensor> = gpt2_tensors("", Dtype::F32, true)
        .into_iter()
        .filter(|tensor| tensor.name != "h.0.attn.c_proj.bias")
        .collect();
    let folder = checkpoint_folder(GPT2_CONFIG, &tensors);
    let message = error_of(open(folder.path()).attention_layer(0));
    assert_says(
        &message,
        &["model.safetensors: no tensor `h.0.attn.c_proj.bias`"],
    );
}

#[test]
fn a_tensor_of_the_wrong_shape_is_named_with_the_shape_found_and_wanted() {
    // c_attn saved as a Linear would be, [out, in]: GPT-2's Conv1D is [in, out].
    let tensors: Vec<Tensor> = gpt2_tensors("", Dtype::F32, true)
        .into_iter()
        .map(|tensor| match tensor.name.as_str() {
            "h.0.attn.c_attn.weight" => Tensor {
                shape: vec![24, 8],
                ..tensor
            },
            _ => tensor,
        })
        .collect();
    let folder = checkpoint_folder(GPT2_CONFIG, &tensors);
    let message = error_of(open(folder.path()).attention_layer(0));
    assert_says(
        &message,
        &[
            "model.safetensors: tensor `h.0.attn.c_attn.weight` has shape [24, 8]; it should be [8, 24]",
        ],
    );
    // A Llama k_proj sized for every query head, as if there were no grouping.
    let tensors: Vec<Tensor> = llama_tensors(Dtype::F32, false)
        .into_iter()
        .map(|tensor| match tensor.name.as_str() {
            "model.layers.0.self_attn.k_proj.weight" => Tensor {
                shape: vec![16, 8],
                ..tensor
            },
            _ => tensor,
        })
        .collect();
    let folder = checkpoint_folder(&llama_config("llama"), &tensors);
    let message = error_of(open(folder.path()).attention_layer(0));
    assert_says(
        &message,
        &["tensor `model.layers.0.self_attn.k_proj.weight` has shape [16, 8]; it should be [8, 8]"],
    );
}

#[test]
fn a_tensor_of_an_unread_dtype_names_it_and_the_ones_read() {
    let tensors: Vec<Tensor> = gpt2_tensors("", Dtype::F32, true)
        .into_iter()
        .map(|tensor| match tensor.name.as_str() {
            "h.0.ln_1.weight" => Tensor {
                dtype: Dtype::I32,
                ..tensor
            },
            _ => tensor,
        })
        .collect();
    let folder = checkpoint_folder(GPT2_CONFIG, &tensors);
    let message = error_of(open(folder.path()).attention_layer(0));
    assert_says(
        &message,
        &[
            "model.safetensors: tensor `h.0.ln_1.weight` is I32; the numbers read are F32, F16, BF16",
        ],
    );
    // A dtype the format does not know at all.
    let unknown = weights_error(&with_header(
        r#"{"h.0.ln_1.weight": {"dtype": "F128", "shape": [1], "data_offsets": [0, 16]}}"#,
        16,
    ));
    assert_says(
        &unknown,
        &["tensor `h.0.ln_1.weight` is F128; the numbers read are F32, F16, BF16"],
    );
}

#[test]
fn a_weight_that_is_not_a_finite_number_is_named_with_its_place() {
    let folder = checkpoint_folder(GPT2_CONFIG, &gpt2_tensors("", Dtype::F32, true));
    let path = folder.path().join("model.safetensors");
    let mut bytes = std::fs::read(&path).unwrap();
    let (header, metadata) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    // ln_f.bias is [8] F32: its last number becomes NaN.
    let (_, end) = metadata.info("ln_f.bias").unwrap().data_offsets;
    let at = 8 + header + end;
    bytes[at - 4..at].copy_from_slice(&f32::NAN.to_le_bytes());
    std::fs::write(&path, bytes).unwrap();
    let message = error_of(open(folder.path()).tensor("ln_f.bias", &[8]));
    assert_says(
        &message,
        &["tensor `ln_f.bias` holds NaN at [7]", "a finite number"],
    );
}

#[test]
fn a_file_of_any_bytes_is_refused_or_read_without_a_panic() {
    use proptest::prelude::*;
    let folder = checkpoint_folder(GPT2_CONFIG, &[]);
    let path: PathBuf = folder.path().join("model.safetensors");
    proptest!(ProptestConfig::with_cases(200), |(header in "\\PC{0,80}", data in 0usize..64)| {
        std::fs::write(&path, with_header(&header, data)).unwrap();
        let _ = Checkpoint::open(folder.path())
            .and_then(|checkpoint| checkpoint.attention_layer(0));
    });
    // Headers of the right form with any dtype, shape and offsets, huge ones among them.
    let dtypes = ["F32", "F16", "BF16", "I32", "F64", "F4", "BOOL", "F128", ""];
    let sizes = prop_oneof![0usize..40, Just(usize::MAX), Just(usize::MAX / 2 + 1)];
    proptest!(ProptestConfig::with_cases(300), |(
        dtype in 0..dtypes.len(),
        rows in sizes.clone(),
        columns in sizes.clone(),
        start in sizes.clone(),
        end in sizes,
        data in 0usize..64,
    )| {
        let header = format!(
            r#"{{"h.0.ln_1.weight": {{"dtype": "{}", "shape": [{rows}, {columns}], "data_offsets": [{start}, {end}]}}}}"#,
            dtypes[dtype]
        );
        std::fs::write(&path, with_header(&header, data)).unwrap();
        let opened = Checkpoint::open(folder.path());
        if let Ok(checkpoint) = opened {
            let _ = checkpoint.tensor("h.0.ln_1.weight", &[rows, columns]);
            let _ = checkpoint.attention_layer(0);
        }
    });
}

// --- The residual stream entering a layer, against the numpy reference ----------------------

const ATTN_ONLY_CONFIG: &str = r#"{"model_type": "attn-only", "n_layer": 2, "n_head": 2,
  "n_embd": 8, "n_positions": 6, "vocab_size": 11}"#;

/// A Llama with every bias Hugging Face's LlamaConfig can ask for: `attention_bias` (Q, K, V
/// and O) and `mlp_bias` (gate, up and down).
fn llama_with_every_bias(dtype: Dtype) -> (String, Vec<Tensor>) {
    let config = llama_config("llama").replace(
        "\"hidden_act\": \"silu\"",
        "\"hidden_act\": \"silu\", \"attention_bias\": true, \"mlp_bias\": true",
    );
    let mut tensors = llama_tensors(dtype, true);
    for layer in 0..2 {
        let at = |rest: &str| format!("model.layers.{layer}.{rest}");
        tensors.push(tensor(&at("self_attn.o_proj.bias"), &[8], dtype));
        tensors.push(tensor(&at("mlp.gate_proj.bias"), &[16], dtype));
        tensors.push(tensor(&at("mlp.up_proj.bias"), &[16], dtype));
        tensors.push(tensor(&at("mlp.down_proj.bias"), &[8], dtype));
    }
    (config, tensors)
}

/// The checkpoints the residual stream is checked on: every architecture, with and without
/// GPT-2's prefix, whole and sharded, grouped K/V heads, Qwen2's and Llama's optional biases,
/// F16 and BF16.
fn stream_cases() -> Vec<(&'static str, tempfile::TempDir, Vec<usize>)> {
    let (every_bias_config, every_bias) = llama_with_every_bias(Dtype::F32);
    vec![
        (
            "gpt2 with the transformer. prefix",
            checkpoint_folder(GPT2_CONFIG, &gpt2_tensors("transformer.", Dtype::F32, true)),
            vec![3, 0, 7, 3, 10],
        ),
        (
            "gpt2 without the prefix, F16",
            checkpoint_folder(GPT2_CONFIG, &gpt2_tensors("", Dtype::F16, true)),
            vec![1, 2, 9, 4, 4, 0],
        ),
        ("gpt2 sharded, F16", sharded_gpt2(|_| {}), vec![0, 10, 5]),
        (
            "llama, 4 query heads over 2 K/V heads, BF16",
            checkpoint_folder(&llama_config("llama"), &llama_tensors(Dtype::BF16, false)),
            vec![12, 5, 0, 5, 9],
        ),
        (
            "qwen2 with Q, K, V biases",
            checkpoint_folder(&llama_config("qwen2"), &llama_tensors(Dtype::F32, true)),
            vec![2, 11, 7, 1],
        ),
        (
            "llama with attention_bias and mlp_bias",
            checkpoint_folder(&every_bias_config, &every_bias),
            vec![4, 4, 8, 0, 6],
        ),
        (
            "attn-only",
            checkpoint_folder(ATTN_ONLY_CONFIG, &gpt2_tensors("", Dtype::F32, false)),
            vec![10, 3, 3, 5],
        ),
    ]
}

#[test]
fn the_stream_entering_layer_0_is_the_token_embeddings_and_learned_positions() {
    let gpt2 = checkpoint_folder(GPT2_CONFIG, &gpt2_tensors("transformer.", Dtype::F32, true));
    let x = open(gpt2.path()).residual_stream(&[3, 0, 3], 0).unwrap();
    let wte = expected("transformer.wte.weight", &[11, 8], Dtype::F32).select_rows(&[3, 0, 3]);
    let wpe = expected("transformer.wpe.weight", &[6, 8], Dtype::F32)
        .rows(0, 3)
        .into_owned();
    assert_eq!(x, wte + wpe);
    let attn_only = checkpoint_folder(ATTN_ONLY_CONFIG, &gpt2_tensors("", Dtype::F32, false));
    let x = open(attn_only.path()).residual_stream(&[10, 1], 0).unwrap();
    let wte = expected("wte.weight", &[11, 8], Dtype::F32).select_rows(&[10, 1]);
    let wpe = expected("wpe.weight", &[6, 8], Dtype::F32)
        .rows(0, 2)
        .into_owned();
    assert_eq!(x, wte + wpe);
    // No tokens, no rows: through both blocks without a panic.
    let empty = open(gpt2.path()).residual_stream(&[], 2).unwrap();
    assert_eq!(empty.shape(), (0, 8));
    // RoPE models add no positions to the stream.
    let llama = checkpoint_folder(&llama_config("llama"), &llama_tensors(Dtype::BF16, false));
    let x = open(llama.path()).residual_stream(&[12, 5], 0).unwrap();
    assert_eq!(
        x,
        expected("model.embed_tokens.weight", &[13, 8], Dtype::BF16).select_rows(&[12, 5])
    );
}

/// Whether this interpreter can run the reference: it needs numpy.
fn has_numpy(python: &std::ffi::OsStr) -> bool {
    std::process::Command::new(python)
        .args(["-c", "import numpy"])
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|output| output.status.success())
}

/// The interpreter to run tests/reference/checkpoint.py with: `ATTN_PYTHON`, else the first of
/// `python3` and `/usr/bin/python3` that imports numpy. Without one the test is skipped, except
/// under CI, where it fails.
fn python() -> Option<std::ffi::OsString> {
    if let Some(chosen) = std::env::var_os("ATTN_PYTHON") {
        assert!(
            has_numpy(&chosen),
            "ATTN_PYTHON={chosen:?} cannot import numpy"
        );
        return Some(chosen);
    }
    let found = ["python3", "/usr/bin/python3"]
        .map(std::ffi::OsString::from)
        .into_iter()
        .find(|python| has_numpy(python));
    if found.is_none() {
        let message = "`python3 with numpy` is not installed (install python3-numpy)";
        if std::env::var_os("CI").is_some_and(|value| !value.is_empty() && value != "false") {
            panic!("{message}: under CI this test must run, not be skipped");
        }
        eprintln!("skipping: {message}");
    }
    found
}

fn reference_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/reference/checkpoint.py")
}

/// Runs the reference on the checkpoint in `folder`; its exit status and what it printed.
fn run_reference(
    python: &std::ffi::OsStr,
    folder: &Path,
    tokens: &[usize],
    layer: usize,
    extra: &[&std::ffi::OsStr],
) -> (bool, String) {
    let tokens: Vec<String> = tokens.iter().map(usize::to_string).collect();
    let output = std::process::Command::new(python)
        .arg(reference_script())
        .arg(folder)
        .arg("--tokens")
        .arg(tokens.join(","))
        .arg("--layer")
        .arg(layer.to_string())
        .args(extra)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the reference runs");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), printed)
}

/// The reference's JSON for `layer` of the checkpoint in `folder`.
fn reference_document(
    python: &std::ffi::OsStr,
    folder: &Path,
    tokens: &[usize],
    layer: usize,
) -> serde_json::Value {
    let (ok, printed) = run_reference(python, folder, tokens, layer, &[]);
    assert!(ok, "{printed}");
    serde_json::from_str(&printed).unwrap_or_else(|error| panic!("{error}: {printed}"))
}

/// A JSON matrix (rows of numbers, "-inf" for the masked) as a matrix.
fn json_to_matrix(value: &serde_json::Value) -> DMatrix<f64> {
    let rows = value.as_array().expect("a matrix");
    let cells: Vec<f64> = rows
        .iter()
        .flat_map(|row| row.as_array().expect("a row").iter())
        .map(|cell| match cell {
            serde_json::Value::String(word) if word == "-inf" => f64::NEG_INFINITY,
            other => other.as_f64().expect("a number"),
        })
        .collect();
    let columns = if rows.is_empty() {
        0
    } else {
        cells.len() / rows.len()
    };
    DMatrix::from_row_slice(rows.len(), columns, &cells)
}

/// Every cell of `ours` within 1e-9 × max(1, |numpy|) of the reference's.
fn assert_agrees(what: &str, ours: &DMatrix<f64>, numpy: &DMatrix<f64>) {
    assert_eq!(ours.shape(), numpy.shape(), "{what}");
    for (at, (a, b)) in ours.iter().zip(numpy.iter()).enumerate() {
        assert!(
            (a - b).abs() <= 1e-9 * b.abs().max(1.0),
            "{what}: cell {at} (column-major): ours {a}, numpy {b}"
        );
    }
}

#[test]
fn the_stream_after_one_and_two_blocks_agrees_with_the_numpy_reference() {
    let Some(python) = python() else { return };
    for (case, folder, tokens) in stream_cases() {
        let checkpoint = open(folder.path());
        for layer in [1, 2] {
            let ours = checkpoint.residual_stream(&tokens, layer).unwrap();
            let numpy = reference_document(&python, folder.path(), &tokens, layer);
            let what = format!("{case}, entering layer {layer}");
            assert_agrees(&what, &ours, &json_to_matrix(&numpy["x"]));
            // The blocks changed the stream: a layer that added nothing would agree too.
            let before = checkpoint.residual_stream(&tokens, layer - 1).unwrap();
            assert!((&ours - &before).amax() > 1e-3, "{what}");
        }
    }
}

/// A matrix as the JSON `attn-tutor show` writes it: rows of numbers, "-inf" for the masked.
fn matrix_to_json(m: &DMatrix<f64>) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = m
        .row_iter()
        .map(|row| {
            row.iter()
                .map(|&cell| {
                    if cell == f64::NEG_INFINITY {
                        serde_json::Value::from("-inf")
                    } else {
                        serde_json::Value::from(cell)
                    }
                })
                .collect()
        })
        .collect();
    serde_json::Value::Array(rows)
}

/// `m` with the 1×n row `bias` added to each row, when there is one.
fn plus_row(mut m: DMatrix<f64>, bias: &Option<DMatrix<f64>>) -> DMatrix<f64> {
    if let Some(bias) = bias {
        for mut row in m.row_iter_mut() {
            row += bias;
        }
    }
    m
}

/// Layer `layer` of the checkpoint computed here, from `attention_layer`'s matrices and the
/// stream entering it, as the JSON of `attn-tutor show --format json` lays it out.
fn layer_document(checkpoint: &Checkpoint, tokens: &[usize], layer: usize) -> serde_json::Value {
    let config = checkpoint.config();
    let x = checkpoint.residual_stream(tokens, layer).unwrap();
    let weights = checkpoint.attention_layer(layer).unwrap();
    let mut normed = x.clone();
    for (r, mut row) in normed.row_iter_mut().enumerate() {
        let n = x.ncols() as f64;
        let cells: Vec<f64> = x.row(r).iter().copied().collect();
        match &weights.norm {
            Some(Norm::LayerNorm {
                gain,
                bias,
                epsilon,
            }) => {
                let mean = cells.iter().sum::<f64>() / n;
                let variance = cells.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / n;
                for c in 0..cells.len() {
                    row[c] = (cells[c] - mean) / (variance + epsilon).sqrt() * gain[c] + bias[c];
                }
            }
            Some(Norm::RmsNorm { gain, epsilon }) => {
                let root = (cells.iter().map(|c| c * c).sum::<f64>() / n + epsilon).sqrt();
                for c in 0..cells.len() {
                    row[c] = cells[c] / root * gain[c];
                }
            }
            None => {}
        }
    }
    let q = plus_row(&normed * &weights.w_q, &weights.b_q);
    let k = plus_row(&normed * &weights.w_k, &weights.b_k);
    let v = plus_row(&normed * &weights.w_v, &weights.b_v);
    let hd = config.head_dim;
    let n = tokens.len();
    let mut heads = Vec::new();
    let mut concat = DMatrix::zeros(n, config.heads * hd);
    for h in 0..config.heads {
        let g = h * config.kv_heads / config.heads;
        let (q_h, k_h, v_h) = (
            q.columns(h * hd, hd).into_owned(),
            k.columns(g * hd, hd).into_owned(),
            v.columns(g * hd, hd).into_owned(),
        );
        // Rotate-half RoPE: column i turns with column i + hd/2 by p·θ^(−2i/hd).
        let turn = |m: &DMatrix<f64>| {
            let theta = config.rope_theta.unwrap();
            DMatrix::from_fn(n, hd, |p, c| {
                let i = c % (hd / 2);
                let angle = p as f64 / theta.powf(2.0 * i as f64 / hd as f64);
                if c < hd / 2 {
                    m[(p, c)] * angle.cos() - m[(p, c + hd / 2)] * angle.sin()
                } else {
                    m[(p, c)] * angle.cos() + m[(p, c - hd / 2)] * angle.sin()
                }
            })
        };
        let (q_rope, k_rope) = match config.rope_theta {
            Some(_) => (Some(turn(&q_h)), Some(turn(&k_h))),
            None => (None, None),
        };
        let scores = q_rope.as_ref().unwrap_or(&q_h) * k_rope.as_ref().unwrap_or(&k_h).transpose();
        let scaled = &scores / (hd as f64).sqrt();
        let masked = DMatrix::from_fn(n, n, |r, c| {
            if c > r {
                f64::NEG_INFINITY
            } else {
                scaled[(r, c)]
            }
        });
        // Each row less its largest score before exp, so that large scores do not overflow.
        let mut attention = masked.clone();
        for mut row in attention.row_iter_mut() {
            let most = row.max();
            row.apply(|cell| *cell = (*cell - most).exp());
            let total = row.sum();
            row /= total;
        }
        let output = &attention * &v_h;
        concat.columns_mut(h * hd, hd).copy_from(&output);
        let optional =
            |m: &Option<DMatrix<f64>>| m.as_ref().map_or(serde_json::Value::Null, matrix_to_json);
        heads.push(serde_json::json!({
            "q": matrix_to_json(&q_h), "k": matrix_to_json(&k_h), "v": matrix_to_json(&v_h),
            "q_rope": optional(&q_rope), "k_rope": optional(&k_rope),
            "scores": matrix_to_json(&scores), "scaled": matrix_to_json(&scaled),
            "masked": matrix_to_json(&masked), "weights": matrix_to_json(&attention),
            "output": matrix_to_json(&output),
        }));
    }
    let output = plus_row(&concat * &weights.w_o, &weights.b_o);
    let mut document = serde_json::json!({
        "token_ids": tokens,
        "x": matrix_to_json(&x),
        "heads": heads,
        "concat": matrix_to_json(&concat),
        "output": matrix_to_json(&output),
    });
    // A model without a norm has no "normed" key, as show's JSON leaves it out.
    if weights.norm.is_some() {
        document["normed"] = matrix_to_json(&normed);
    }
    document
}

#[test]
fn the_references_layer_agrees_with_one_computed_here_from_the_layers_matrices() {
    let Some(python) = python() else { return };
    for (case, folder, tokens) in stream_cases() {
        let checkpoint = open(folder.path());
        let mut document = layer_document(&checkpoint, &tokens, 1);
        let written = folder.path().join("show.json");
        std::fs::write(&written, document.to_string()).unwrap();
        let compare = [
            std::ffi::OsStr::new("--head"),
            std::ffi::OsStr::new("all"),
            std::ffi::OsStr::new("--compare"),
            written.as_os_str(),
        ];
        let (ok, printed) = run_reference(&python, folder.path(), &tokens, 1, &compare);
        assert!(ok, "{case}: {printed}");
        assert!(printed.contains("0 disagreements"), "{case}: {printed}");
        // One weight moved by 1e-6 is a disagreement the reference names.
        let heads = document["heads"].as_array().unwrap().len();
        let cell = &mut document["heads"][heads - 1]["weights"][2][1];
        *cell = serde_json::Value::from(cell.as_f64().unwrap() + 1e-6);
        std::fs::write(&written, document.to_string()).unwrap();
        let (ok, printed) = run_reference(&python, folder.path(), &tokens, 1, &compare);
        assert!(!ok, "{case}: {printed}");
        assert_says(
            &printed,
            &[&format!("heads[{}].weights: worst deviation", heads - 1)],
        );
    }
}

#[test]
fn the_reference_compares_one_head_with_its_k_v_group() {
    let Some(python) = python() else { return };
    let folder = checkpoint_folder(&llama_config("llama"), &llama_tensors(Dtype::F32, false));
    let checkpoint = open(folder.path());
    let tokens = [1, 7, 7, 2];
    let whole = layer_document(&checkpoint, &tokens, 0);
    // Head 3 reads K/V head 1: a one-head lesson of it has that head alone.
    let mut document = whole.clone();
    document["heads"] = serde_json::json!([whole["heads"][3]]);
    let written = folder.path().join("show.json");
    let compare = |document: &serde_json::Value, head: &str| {
        std::fs::write(&written, document.to_string()).unwrap();
        let args = [
            std::ffi::OsStr::new("--head"),
            std::ffi::OsStr::new(head),
            std::ffi::OsStr::new("--compare"),
            written.as_os_str(),
        ];
        run_reference(&python, folder.path(), &tokens, 0, &args)
    };
    let (ok, printed) = compare(&document, "3");
    assert!(ok, "{printed}");
    // Head 2 reads K/V head 1 too, but its queries are its own.
    let (ok, printed) = compare(&document, "2");
    assert!(!ok, "{printed}");
    assert_says(&printed, &["heads[0].q: worst deviation"]);
    assert!(!printed.contains("heads[0].k:"), "{printed}");
}

#[test]
fn the_stream_reads_only_the_blocks_before_the_layer() {
    let tensors: Vec<Tensor> = gpt2_tensors("", Dtype::F32, true)
        .into_iter()
        .filter(|tensor| !tensor.name.starts_with("h.1."))
        .collect();
    let folder = checkpoint_folder(GPT2_CONFIG, &tensors);
    let checkpoint = open(folder.path());
    checkpoint.residual_stream(&[1, 2], 1).unwrap();
    let message = error_of(checkpoint.residual_stream(&[1, 2], 2));
    assert_says(
        &message,
        &["model.safetensors: no tensor `h.1.ln_1.weight`"],
    );
}

#[test]
fn a_missing_or_misshapen_mlp_tensor_or_a_promised_bias_is_named() {
    let tensors: Vec<Tensor> = gpt2_tensors("", Dtype::F32, true)
        .into_iter()
        .filter(|tensor| tensor.name != "h.0.mlp.c_fc.bias")
        .collect();
    let folder = checkpoint_folder(GPT2_CONFIG, &tensors);
    let message = error_of(open(folder.path()).residual_stream(&[1], 1));
    assert_says(
        &message,
        &["model.safetensors: no tensor `h.0.mlp.c_fc.bias`"],
    );
    // n_inner says the MLP is 16 wide; the tensors are GPT-2's default 4 × 8.
    let config = GPT2_CONFIG.replace("\"n_head\": 2", "\"n_head\": 2, \"n_inner\": 16");
    let folder = checkpoint_folder(&config, &gpt2_tensors("", Dtype::F32, true));
    let message = error_of(open(folder.path()).residual_stream(&[1], 1));
    assert_says(
        &message,
        &["tensor `h.0.mlp.c_fc.weight` has shape [8, 32]; it should be [8, 16]"],
    );
    // intermediate_size says 12.
    let config =
        llama_config("llama").replace("\"intermediate_size\": 16", "\"intermediate_size\": 12");
    let folder = checkpoint_folder(&config, &llama_tensors(Dtype::F32, false));
    let message = error_of(open(folder.path()).residual_stream(&[1], 1));
    assert_says(
        &message,
        &["tensor `model.layers.0.mlp.gate_proj.weight` has shape [16, 8]; it should be [12, 8]"],
    );
    // attention_bias promises biases the file does not have.
    let config =
        llama_config("llama").replace("\"hidden_act\"", "\"attention_bias\": true, \"hidden_act\"");
    let folder = checkpoint_folder(&config, &llama_tensors(Dtype::F32, false));
    let message = error_of(open(folder.path()).attention_layer(0));
    assert_says(
        &message,
        &["no tensor `model.layers.0.self_attn.q_proj.bias`"],
    );
    // mlp_bias promises biases the file does not have.
    let config =
        llama_config("llama").replace("\"hidden_act\"", "\"mlp_bias\": true, \"hidden_act\"");
    let folder = checkpoint_folder(&config, &llama_tensors(Dtype::F32, false));
    let message = error_of(open(folder.path()).residual_stream(&[1], 1));
    assert_says(&message, &["no tensor `model.layers.0.mlp.gate_proj.bias`"]);
}

#[test]
fn a_stream_past_the_last_layer_is_refused() {
    let folder = checkpoint_folder(GPT2_CONFIG, &gpt2_tensors("", Dtype::F32, true));
    let message = error_of(open(folder.path()).residual_stream(&[1], 3));
    assert_says(
        &message,
        &[
            "config.json: the residual stream enters layers 0 to 2 (2 being after the model's last layer); 3 is past them",
        ],
    );
}

#[test]
fn the_beginning_of_sequence_token_is_read_from_the_config() {
    let with = |config: &str| {
        let folder = checkpoint_folder(config, &[tensor("x", &[1], Dtype::F32)]);
        Checkpoint::open(folder.path()).map(|checkpoint| checkpoint.bos_token_id())
    };
    let gpt2 = GPT2_CONFIG.replace("\"n_head\": 2", "\"n_head\": 2, \"bos_token_id\": 10");
    assert_eq!(with(&gpt2).unwrap(), Some(10));
    let zero =
        llama_config("llama").replace("\"vocab_size\"", "\"bos_token_id\": 0, \"vocab_size\"");
    assert_eq!(with(&zero).unwrap(), Some(0));
    assert_eq!(with(GPT2_CONFIG).unwrap(), None);
    let null = GPT2_CONFIG.replace("\"n_head\": 2", "\"n_head\": 2, \"bos_token_id\": null");
    assert_eq!(with(&null).unwrap(), None);
    let text = GPT2_CONFIG.replace("\"n_head\": 2", "\"n_head\": 2, \"bos_token_id\": \"<s>\"");
    assert_says(
        &error_of(with(&text)),
        &[
            "config.json: `bos_token_id` is \"<s>\" (a string); it should be a whole number, 0 or more",
        ],
    );
}

#[test]
fn config_keys_that_would_change_the_numbers_are_refused_by_name() {
    let gpt2 = |key_value: &str| {
        config_error(&GPT2_CONFIG.replace("\"n_head\": 2", &format!("\"n_head\": 2, {key_value}")))
    };
    let llama = |key_value: &str| {
        let config = llama_config("llama")
            .replace("\"vocab_size\"", &format!("{key_value}, \"vocab_size\""));
        config_error(&config)
    };
    let cases = [
        (
            config_error(&GPT2_CONFIG.replace("\"gelu_new\"", "\"gelu\"")),
            "`activation_function` is \"gelu\" (a string); it should be \"gelu_new\"",
        ),
        (
            gpt2("\"scale_attn_by_inverse_layer_idx\": true"),
            "`scale_attn_by_inverse_layer_idx` is true (a true/false); it should be false",
        ),
        (
            gpt2("\"scale_attn_weights\": false"),
            "`scale_attn_weights` is false (a true/false); it should be true",
        ),
        (
            config_error(&llama_config("llama").replace("\"silu\"", "\"gelu_pytorch_tanh\"")),
            "`hidden_act` is \"gelu_pytorch_tanh\" (a string); it should be \"silu\"",
        ),
        (
            llama(r#""rope_scaling": {"rope_type": "llama3", "factor": 8.0}"#),
            "`rope_scaling` is {\"factor\":8.0,\"rope_type\":\"llama3\"} (an object); it should be null",
        ),
        (
            llama(r#""rope_scaling": {"type": "linear", "factor": 2.0}"#),
            "`rope_scaling` is {\"factor\":2.0,\"type\":\"linear\"} (an object); it should be null",
        ),
        (
            llama("\"partial_rotary_factor\": 0.5"),
            "`partial_rotary_factor` is 0.5 (a number); it should be 1",
        ),
        (
            config_error(&llama_config("llama").replace("\"head_dim\": 4", "\"head_dim\": 5")),
            "head_dim (5) is odd; RoPE turns each head's columns in pairs",
        ),
    ];
    for (message, says) in cases {
        assert_says(&message, &["config.json: ", says]);
    }
    // The keys at the values that change nothing are read.
    for config in [
        GPT2_CONFIG.replace(
            "\"n_head\": 2",
            "\"n_head\": 2, \"scale_attn_weights\": true, \"scale_attn_by_inverse_layer_idx\": false",
        ),
        llama_config("llama").replace(
            "\"vocab_size\"",
            r#""rope_scaling": {"rope_type": "default"}, "partial_rotary_factor": 1.0, "vocab_size""#,
        ),
        llama_config("llama").replace("\"vocab_size\"", r#""rope_scaling": null, "vocab_size""#),
    ] {
        let folder = checkpoint_folder(&config, &[tensor("x", &[1], Dtype::F32)]);
        Checkpoint::open(folder.path()).unwrap_or_else(|error| panic!("{config}: {error}"));
    }
}

#[test]
fn a_text_longer_than_the_attention_window_is_refused_naming_sliding_window() {
    let tensors = llama_tensors(Dtype::F32, false);
    let window = |model_type: &str, keys: &str| {
        let config =
            llama_config(model_type).replace("\"vocab_size\"", &format!("{keys}\"vocab_size\""));
        checkpoint_folder(&config, &tensors)
    };
    let refused = "config.json: 4 tokens are more than the model's attention window (3, its `sliding_window`)";
    let mistral = window("mistral", "\"sliding_window\": 3, ");
    let checkpoint = open(mistral.path());
    assert_says(
        &error_of(checkpoint.residual_stream(&[1, 2, 3, 4], 0)),
        &[refused],
    );
    assert_says(
        &error_of(checkpoint.token_embeddings(&[1, 2, 3, 4])),
        &[refused],
    );
    checkpoint.residual_stream(&[1, 2, 3], 2).unwrap();
    let qwen2 = window(
        "qwen2",
        "\"use_sliding_window\": true, \"sliding_window\": 3, ",
    );
    assert_says(
        &error_of(open(qwen2.path()).residual_stream(&[1, 2, 3, 4], 0)),
        &[refused],
    );
    // Qwen2 without use_sliding_window, and Mistral with a null window, have none.
    let qwen2 = window("qwen2", "\"sliding_window\": 3, ");
    open(qwen2.path())
        .residual_stream(&[1, 2, 3, 4], 0)
        .unwrap();
    let mistral = window("mistral", "\"sliding_window\": null, ");
    assert_eq!(open(mistral.path()).config().sliding_window, None);
    // MistralConfig's default when the key is left out.
    let mistral = window("mistral", "");
    assert_eq!(open(mistral.path()).config().sliding_window, Some(4096));
}

#[test]
fn the_mlps_width_and_biases_come_from_the_config_or_hugging_faces_defaults() {
    let mlp = |config: &str| {
        let folder = checkpoint_folder(config, &[tensor("x", &[1], Dtype::F32)]);
        let config = open(folder.path()).config().clone();
        (config.mlp_width, config.mlp_bias)
    };
    assert_eq!(mlp(GPT2_CONFIG), (Some(32), true));
    let n_inner = GPT2_CONFIG.replace("\"n_head\": 2", "\"n_head\": 2, \"n_inner\": 20");
    assert_eq!(mlp(&n_inner), (Some(20), true));
    assert_eq!(mlp(ATTN_ONLY_CONFIG), (None, false));
    assert_eq!(mlp(&llama_config("llama")), (Some(16), false));
    let biased =
        llama_config("llama").replace("\"hidden_act\"", "\"mlp_bias\": true, \"hidden_act\"");
    assert_eq!(mlp(&biased), (Some(16), true));
    for (model_type, width) in [("llama", 11_008), ("mistral", 14_336), ("qwen2", 22_016)] {
        let config = llama_config(model_type).replace("\"intermediate_size\": 16, ", "");
        assert_eq!(mlp(&config), (Some(width), false), "{model_type}");
    }
}
