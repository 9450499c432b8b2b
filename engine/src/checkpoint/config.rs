//! A checkpoint's `config.json`: which architecture it is and the sizes its tensors must have,
//! read under the key names Hugging Face's configs use for each architecture.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::error::CheckpointError;

/// The `model_type`s read, as the error for an unknown one lists them.
const SUPPORTED: &str = "gpt2, llama, mistral, qwen2, attn-only";

/// How a model's attention layer is laid out and named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Architecture {
    /// GPT-2: LayerNorm, one `c_attn` projection for Q, K and V, learned positions.
    Gpt2,
    /// Llama and the models with its layout (Mistral, Qwen2): RMSNorm, separate Q/K/V/O
    /// projections, RoPE, grouped K/V heads.
    Llama,
    /// The project's own attention-only models: GPT-2's names without norms or MLPs.
    AttnOnly,
}

/// What config.json says of the model, in the learner's words.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    pub architecture: Architecture,
    /// `model_type` as written (`mistral` and `qwen2` read as `Llama`).
    pub model_type: String,
    pub layers: usize,
    /// The width of the residual stream (`n_embd`, `hidden_size`).
    pub d_model: usize,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads: fewer than `heads` when groups of query heads share them (GQA).
    pub kv_heads: usize,
    pub head_dim: usize,
    /// The norm's ε; `None` for attn-only models, which have no norm.
    pub norm_epsilon: Option<f64>,
    /// RoPE's base; `None` for models with learned positions.
    pub rope_theta: Option<f64>,
    pub vocabulary: usize,
    /// The most tokens the model reads at once.
    pub context: usize,
    /// The width inside each block's MLP (`n_inner`, else 4 × `n_embd`; `intermediate_size`);
    /// `None` for attn-only models, which have no MLP.
    pub mlp_width: Option<usize>,
    /// Whether config.json promises biases on Q, K, V and O (Llama's `attention_bias`): they
    /// must then be in the checkpoint. Without it they are read when there (Qwen2's Q, K, V).
    pub attention_bias: bool,
    /// Whether the MLP's projections have biases: always in GPT-2, in the Llama layout when
    /// `mlp_bias` says so; attn-only models have no MLP.
    pub mlp_bias: bool,
    /// The beginning-of-sequence token (`bos_token_id`), when the config names one.
    pub bos_token_id: Option<usize>,
    /// The most tokens back a token may look, when attention is limited to a window (Mistral's
    /// `sliding_window`, Qwen2's with `use_sliding_window`): a longer text is refused, since
    /// the window would then change the mask.
    pub sliding_window: Option<usize>,
}

/// Hugging Face's defaults where its config classes have one and real configs may leave the key
/// out (GPT2Config, LlamaConfig).
const GPT2_EPSILON: f64 = 1e-5;
const LLAMA_EPSILON: f64 = 1e-6;
const ROPE_THETA: f64 = 10_000.0;
/// MistralConfig's window when its config leaves `sliding_window` out (a `null` is no window),
/// and Qwen2Config's.
const SLIDING_WINDOW: usize = 4096;

/// The MLP widths Hugging Face's config classes default to when `intermediate_size` is left
/// out (LlamaConfig, MistralConfig, Qwen2Config).
fn default_mlp_width(model_type: &str) -> usize {
    match model_type {
        "mistral" => 14_336,
        "qwen2" => 22_016,
        _ => 11_008,
    }
}

const COUNT: &str = "a whole number above 0";
const POSITIVE: &str = "a number above 0";

impl ModelConfig {
    /// Reads `file` (a config.json).
    pub fn read(file: &Path) -> Result<ModelConfig, CheckpointError> {
        let text = match std::fs::read(file) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(CheckpointError::MissingConfig(file.to_path_buf()));
            }
            Err(error) => return Err(CheckpointError::io(file, error)),
        };
        let value: Value =
            serde_json::from_slice(&text).map_err(|error| CheckpointError::NotJson {
                file: file.to_path_buf(),
                error,
            })?;
        let Value::Object(map) = value else {
            return Err(CheckpointError::Inconsistent {
                file: file.to_path_buf(),
                why: format!(
                    "the file is {}; it should be a JSON object of keys",
                    kind(&value)
                ),
            });
        };
        Keys { file, map: &map }.config()
    }
}

/// config.json's keys, each read with the file and key named when it is missing or wrong.
struct Keys<'a> {
    file: &'a Path,
    map: &'a Map<String, Value>,
}

impl Keys<'_> {
    fn config(&self) -> Result<ModelConfig, CheckpointError> {
        let model_type = self.string("model_type")?;
        let architecture = match model_type.as_str() {
            "gpt2" => Architecture::Gpt2,
            "attn-only" => Architecture::AttnOnly,
            "llama" | "mistral" | "qwen2" => Architecture::Llama,
            _ => {
                return Err(CheckpointError::UnknownModelType {
                    file: self.path(),
                    found: model_type,
                    supported: SUPPORTED,
                });
            }
        };
        let config = match architecture {
            Architecture::Gpt2 | Architecture::AttnOnly => {
                let d_model = self.count("n_embd")?;
                let heads = self.count("n_head")?;
                let head_dim = self.head_dim(d_model, heads, "n_embd", "n_head")?;
                let context = match self.optional_count("n_positions")? {
                    Some(context) => context,
                    None => self
                        .optional_count("n_ctx")?
                        .ok_or_else(|| self.missing("n_positions", COUNT))?,
                };
                let norm_epsilon = match architecture {
                    Architecture::Gpt2 => Some(
                        self.optional_positive("layer_norm_epsilon")?
                            .unwrap_or(GPT2_EPSILON),
                    ),
                    _ => None,
                };
                let mlp_width = match architecture {
                    Architecture::Gpt2 => {
                        self.refuse_gpt2_variants()?;
                        match self.optional_count("n_inner")? {
                            Some(width) => Some(width),
                            None => Some(d_model.checked_mul(4).ok_or_else(|| {
                                self.inconsistent(format!(
                                    "n_embd ({d_model}) times 4, the MLP's width, is past what \
                                     this machine can count"
                                ))
                            })?),
                        }
                    }
                    _ => None,
                };
                ModelConfig {
                    architecture,
                    model_type,
                    layers: self.count("n_layer")?,
                    d_model,
                    heads,
                    kv_heads: heads,
                    head_dim,
                    norm_epsilon,
                    rope_theta: None,
                    vocabulary: self.count("vocab_size")?,
                    context,
                    attention_bias: false,
                    mlp_bias: mlp_width.is_some(),
                    mlp_width,
                    bos_token_id: self.optional_index("bos_token_id")?,
                    sliding_window: None,
                }
            }
            Architecture::Llama => {
                self.refuse_llama_variants()?;
                let d_model = self.count("hidden_size")?;
                let heads = self.count("num_attention_heads")?;
                let kv_heads = self.optional_count("num_key_value_heads")?.unwrap_or(heads);
                if !heads.is_multiple_of(kv_heads) {
                    return Err(self.inconsistent(format!(
                        "num_attention_heads ({heads}) is not a multiple of num_key_value_heads \
                         ({kv_heads}); each K/V head serves the same number of query heads"
                    )));
                }
                let head_dim = match self.optional_count("head_dim")? {
                    Some(head_dim) => head_dim,
                    None => self.head_dim(d_model, heads, "hidden_size", "num_attention_heads")?,
                };
                if !head_dim.is_multiple_of(2) {
                    return Err(self.inconsistent(format!(
                        "head_dim ({head_dim}) is odd; RoPE turns each head's columns in pairs"
                    )));
                }
                ModelConfig {
                    architecture,
                    layers: self.count("num_hidden_layers")?,
                    d_model,
                    heads,
                    kv_heads,
                    head_dim,
                    norm_epsilon: Some(
                        self.optional_positive("rms_norm_eps")?
                            .unwrap_or(LLAMA_EPSILON),
                    ),
                    rope_theta: Some(self.optional_positive("rope_theta")?.unwrap_or(ROPE_THETA)),
                    vocabulary: self.count("vocab_size")?,
                    context: self.count("max_position_embeddings")?,
                    mlp_width: Some(
                        self.optional_count("intermediate_size")?
                            .unwrap_or_else(|| default_mlp_width(&model_type)),
                    ),
                    attention_bias: self.flag("attention_bias", false)?,
                    mlp_bias: self.flag("mlp_bias", false)?,
                    bos_token_id: self.optional_index("bos_token_id")?,
                    sliding_window: self.sliding_window(&model_type)?,
                    model_type,
                }
            }
        };
        Ok(config)
    }

    /// The keys of GPT2Config that would change the numbers of a layer in ways not computed
    /// here, refused by name rather than read past.
    fn refuse_gpt2_variants(&self) -> Result<(), CheckpointError> {
        if let Some(value) = self.get("activation_function")
            && value.as_str() != Some("gelu_new")
        {
            return Err(self.wrong(
                "activation_function",
                value,
                "\"gelu_new\" (GELU's tanh form), the only MLP activation computed here",
            ));
        }
        if self.flag("scale_attn_by_inverse_layer_idx", false)? {
            return Err(self.wrong(
                "scale_attn_by_inverse_layer_idx",
                &Value::Bool(true),
                "false: scores divided by the layer's number as well as by √d_head are not \
                 computed here",
            ));
        }
        if !self.flag("scale_attn_weights", true)? {
            return Err(self.wrong(
                "scale_attn_weights",
                &Value::Bool(false),
                "true: scores not divided by √d_head are not computed here",
            ));
        }
        Ok(())
    }

    /// The keys of the Llama-layout configs that would change the numbers in ways not
    /// computed here, refused by name rather than read past.
    fn refuse_llama_variants(&self) -> Result<(), CheckpointError> {
        if let Some(value) = self.get("hidden_act")
            && value.as_str() != Some("silu")
        {
            return Err(self.wrong(
                "hidden_act",
                value,
                "\"silu\", the only MLP activation computed here",
            ));
        }
        if let Some(value) = self.get("rope_scaling") {
            let kind = value
                .get("rope_type")
                .or_else(|| value.get("type"))
                .and_then(Value::as_str);
            if kind != Some("default") {
                return Err(self.wrong(
                    "rope_scaling",
                    value,
                    "null: scaled RoPE (such as Llama 3.1's \"llama3\") is not computed here, \
                     and RoPE without its scaling would give other numbers",
                ));
            }
        }
        if let Some(value) = self.get("partial_rotary_factor")
            && value.as_f64() != Some(1.0)
        {
            return Err(self.wrong(
                "partial_rotary_factor",
                value,
                "1: RoPE on part of each head's columns is not computed here",
            ));
        }
        Ok(())
    }

    /// The attention window: Mistral's `sliding_window` (MistralConfig's 4096 when left out,
    /// none when `null`); Qwen2's when `use_sliding_window` is true.
    fn sliding_window(&self, model_type: &str) -> Result<Option<usize>, CheckpointError> {
        let window = || {
            self.optional_count("sliding_window")
                .map(|window| window.or(Some(SLIDING_WINDOW)))
        };
        match model_type {
            "mistral" if self.map.get("sliding_window").is_some_and(Value::is_null) => Ok(None),
            "mistral" => window(),
            "qwen2" if self.flag("use_sliding_window", false)? => window(),
            _ => Ok(None),
        }
    }

    /// d_model ÷ heads, which must divide evenly when the config does not give head_dim.
    fn head_dim(
        &self,
        d_model: usize,
        heads: usize,
        width_key: &str,
        heads_key: &str,
    ) -> Result<usize, CheckpointError> {
        if !d_model.is_multiple_of(heads) {
            return Err(self.inconsistent(format!(
                "{width_key} ({d_model}) is not a multiple of {heads_key} ({heads}); each head \
                 takes an equal share of the width"
            )));
        }
        Ok(d_model / heads)
    }

    fn path(&self) -> PathBuf {
        self.file.to_path_buf()
    }

    fn missing(&self, key: &'static str, wanted: &'static str) -> CheckpointError {
        CheckpointError::MissingKey {
            file: self.path(),
            key,
            wanted,
        }
    }

    fn inconsistent(&self, why: String) -> CheckpointError {
        CheckpointError::Inconsistent {
            file: self.path(),
            why,
        }
    }

    fn wrong(&self, key: &'static str, value: &Value, wanted: &'static str) -> CheckpointError {
        CheckpointError::WrongKey {
            file: self.path(),
            key,
            found: shown(value),
            wanted,
        }
    }

    /// The key's value; a JSON `null` counts as absent, as Hugging Face reads it.
    fn get(&self, key: &str) -> Option<&Value> {
        self.map.get(key).filter(|value| !value.is_null())
    }

    fn string(&self, key: &'static str) -> Result<String, CheckpointError> {
        const WANTED: &str = "a string naming the architecture";
        match self.get(key) {
            None => Err(self.missing(key, WANTED)),
            Some(Value::String(text)) => Ok(text.clone()),
            Some(other) => Err(self.wrong(key, other, WANTED)),
        }
    }

    fn count(&self, key: &'static str) -> Result<usize, CheckpointError> {
        self.optional_count(key)?
            .ok_or_else(|| self.missing(key, COUNT))
    }

    fn optional_count(&self, key: &'static str) -> Result<Option<usize>, CheckpointError> {
        let Some(value) = self.get(key) else {
            return Ok(None);
        };
        match value.as_u64().and_then(|count| usize::try_from(count).ok()) {
            Some(count) if count > 0 => Ok(Some(count)),
            _ => Err(self.wrong(key, value, COUNT)),
        }
    }

    /// A whole number ≥ 0 (a token id), or `None` when the key is absent or null.
    fn optional_index(&self, key: &'static str) -> Result<Option<usize>, CheckpointError> {
        let Some(value) = self.get(key) else {
            return Ok(None);
        };
        match value.as_u64().and_then(|index| usize::try_from(index).ok()) {
            Some(index) => Ok(Some(index)),
            None => Err(self.wrong(key, value, "a whole number, 0 or more")),
        }
    }

    /// A true/false key, `default` when absent or null.
    fn flag(&self, key: &'static str, default: bool) -> Result<bool, CheckpointError> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(other) => Err(self.wrong(key, other, "true or false")),
        }
    }

    fn optional_positive(&self, key: &'static str) -> Result<Option<f64>, CheckpointError> {
        let Some(value) = self.get(key) else {
            return Ok(None);
        };
        match value.as_f64() {
            Some(number) if number > 0.0 && number.is_finite() => Ok(Some(number)),
            _ => Err(self.wrong(key, value, POSITIVE)),
        }
    }
}

/// A value as the file has it, cut short: config values are short unless the file is odd.
fn shown(value: &Value) -> String {
    const MOST: usize = 40;
    let text = value.to_string();
    if text.chars().count() <= MOST {
        format!("{text} ({})", kind(value))
    } else {
        let start: String = text.chars().take(MOST).collect();
        format!("{start}… ({})", kind(value))
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
