//! The tensors' names, as Hugging Face's checkpoints spell them for each architecture.
//!
//! GPT-2's `h.L.attn.bias` and `h.L.attn.masked_bias` are the causal mask and its fill value,
//! saved as buffers: despite their names they are not biases, and nothing here reads them (the
//! biases are `c_attn.bias` and `c_proj.bias`).

/// One GPT-2 (or attn-only) layer's attention tensors. `c_attn` and `c_proj` are Conv1D
/// weights, stored [in, out].
pub(crate) struct Gpt2Layer {
    pub(crate) ln_1_weight: String,
    pub(crate) ln_1_bias: String,
    /// [d_model, 3·d_model]: Q's columns, then K's, then V's.
    pub(crate) c_attn_weight: String,
    pub(crate) c_attn_bias: String,
    /// [d_model, d_model].
    pub(crate) c_proj_weight: String,
    pub(crate) c_proj_bias: String,
}

/// `prefix` is `transformer.` for checkpoints saved from GPT2LMHeadModel, empty for those saved
/// from GPT2Model.
pub(crate) fn gpt2_layer(prefix: &str, layer: usize) -> Gpt2Layer {
    let at = |rest: &str| format!("{prefix}h.{layer}.{rest}");
    Gpt2Layer {
        ln_1_weight: at("ln_1.weight"),
        ln_1_bias: at("ln_1.bias"),
        c_attn_weight: at("attn.c_attn.weight"),
        c_attn_bias: at("attn.c_attn.bias"),
        c_proj_weight: at("attn.c_proj.weight"),
        c_proj_bias: at("attn.c_proj.bias"),
    }
}

/// One GPT-2 layer's MLP tensors and the norm before it. `c_fc` and `c_proj` are Conv1D
/// weights, stored [in, out].
pub(crate) struct Gpt2Mlp {
    pub(crate) ln_2_weight: String,
    pub(crate) ln_2_bias: String,
    /// [d_model, MLP width].
    pub(crate) c_fc_weight: String,
    pub(crate) c_fc_bias: String,
    /// [MLP width, d_model].
    pub(crate) c_proj_weight: String,
    pub(crate) c_proj_bias: String,
}

pub(crate) fn gpt2_mlp(prefix: &str, layer: usize) -> Gpt2Mlp {
    let at = |rest: &str| format!("{prefix}h.{layer}.{rest}");
    Gpt2Mlp {
        ln_2_weight: at("ln_2.weight"),
        ln_2_bias: at("ln_2.bias"),
        c_fc_weight: at("mlp.c_fc.weight"),
        c_fc_bias: at("mlp.c_fc.bias"),
        c_proj_weight: at("mlp.c_proj.weight"),
        c_proj_bias: at("mlp.c_proj.bias"),
    }
}

/// GPT-2's prefix when its checkpoint has one.
pub(crate) const GPT2_PREFIX: &str = "transformer.";

pub(crate) fn gpt2_token_embedding(prefix: &str) -> String {
    format!("{prefix}wte.weight")
}

pub(crate) fn gpt2_position_embedding(prefix: &str) -> String {
    format!("{prefix}wpe.weight")
}

/// One Llama-layout layer's attention tensors: Linear weights, stored [out, in].
pub(crate) struct LlamaLayer {
    pub(crate) input_layernorm: String,
    pub(crate) q_proj: String,
    pub(crate) k_proj: String,
    pub(crate) v_proj: String,
    pub(crate) o_proj: String,
}

impl LlamaLayer {
    /// A projection's bias: Qwen2 has them on Q, K and V; Llama only with `attention_bias`.
    pub(crate) fn bias_of(weight: &str) -> String {
        weight
            .strip_suffix(".weight")
            .map_or_else(|| format!("{weight}.bias"), |stem| format!("{stem}.bias"))
    }
}

pub(crate) fn llama_layer(layer: usize) -> LlamaLayer {
    let at = |rest: &str| format!("model.layers.{layer}.{rest}");
    LlamaLayer {
        input_layernorm: at("input_layernorm.weight"),
        q_proj: at("self_attn.q_proj.weight"),
        k_proj: at("self_attn.k_proj.weight"),
        v_proj: at("self_attn.v_proj.weight"),
        o_proj: at("self_attn.o_proj.weight"),
    }
}

/// One Llama-layout layer's MLP tensors and the norm before it: Linear weights, stored
/// [out, in]; their biases (`mlp_bias`) by `LlamaLayer::bias_of`.
pub(crate) struct LlamaMlp {
    pub(crate) post_attention_layernorm: String,
    /// [MLP width, d_model].
    pub(crate) gate_proj: String,
    /// [MLP width, d_model].
    pub(crate) up_proj: String,
    /// [d_model, MLP width].
    pub(crate) down_proj: String,
}

pub(crate) fn llama_mlp(layer: usize) -> LlamaMlp {
    let at = |rest: &str| format!("model.layers.{layer}.{rest}");
    LlamaMlp {
        post_attention_layernorm: at("post_attention_layernorm.weight"),
        gate_proj: at("mlp.gate_proj.weight"),
        up_proj: at("mlp.up_proj.weight"),
        down_proj: at("mlp.down_proj.weight"),
    }
}

pub(crate) const LLAMA_TOKEN_EMBEDDING: &str = "model.embed_tokens.weight";
