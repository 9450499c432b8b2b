#!/usr/bin/env python3
"""An independent numpy reference for a checkpoint's attention layer, as Hugging Face defines it.

It reads a checkpoint folder as model hubs publish it (config.json, and model.safetensors or
model.safetensors.index.json with its shards), parsing the safetensors files by hand: an 8-byte
little-endian header length, a JSON header, then each tensor's raw F32, F16 or BF16 numbers
(BF16 is the upper 16 bits of an f32). From the token ids it computes in float64, as
transformers' modeling_gpt2 and modeling_llama do:

- "x": the residual stream entering layer L: the token embeddings (+ GPT-2's learned
  positions), then blocks 0 .. L-1 whole. GPT-2: x += attn(ln_1(x)), x += mlp(ln_2(x)) with
  mlp = c_proj(gelu_new(c_fc(.))); attn-only: x += attn(x); Llama, Mistral, Qwen2:
  x += attn(input_layernorm(x)), x += down_proj(silu(gate_proj(y)) * up_proj(y)) with
  y = post_attention_layernorm(x);
- "normed": layer L's norm of x (ln_1 or input_layernorm; null for attn-only);
- per head: "q", "k", "v" (a head's keys and values are its K/V group's), "q_rope" and
  "k_rope" (rotate-half RoPE, null without it), "scores" (Q K^T), "scaled" (/ sqrt(head_dim)),
  "masked" (causal: -inf above the diagonal), "weights" (softmax), "output" (weights V);
- with every head, "concat" (the heads side by side) and "output" (concat W_O + its bias).
  With one head they are null and not compared: a one-head lesson has no W_O of its own.

    checkpoint.py MODEL --tokens 464,3797,44263 --layer L [--head H | --head all]
        prints that as JSON (-inf as the string "-inf", as `attn-tutor show --format json`)
    checkpoint.py MODEL --tokens ... --layer L --head H --compare SHOW.json
        compares SHOW.json (e.g. `attn-tutor show IMPORTED --format json`) with the reference
    checkpoint.py --self-test

Config values under which Hugging Face computes something else (an activation other than
gelu_new or silu, rope_scaling, partial RoPE, GPT-2's other attention scalings) are refused.
L may be the model's number of layers: then only "x" (the stream after the last block) is
computed. A value agrees when |theirs - numpy| <= 1e-9 * max(1, |numpy|). Every run starts with
the self-test, so a broken reference cannot pass. The exit code is 0 only when the self-test
passes and (with --compare) every value agrees; otherwise each disagreeing key is printed with
its worst deviation.

The code is written to be read next to Hugging Face's modeling code, one function per step; it
shares nothing with the Rust engine.
"""

import argparse
import json
import math
import os
import struct
import sys

import numpy as np

TOLERANCE = 1e-9
HEAD_KEYS = ["q", "k", "v", "q_rope", "k_rope", "scores", "scaled", "masked", "weights",
             "output"]
LLAMA_LAYOUT = ("llama", "mistral", "qwen2")


class CheckpointError(Exception):
    """A checkpoint this reference cannot read."""


# --- Reading a checkpoint --------------------------------------------------------------------


def decode(raw, dtype):
    """Little-endian bytes of one dtype as float64 numbers."""
    if dtype == "F32":
        return np.frombuffer(raw, dtype="<f4").astype(np.float64)
    if dtype == "F16":
        return np.frombuffer(raw, dtype="<f2").astype(np.float64)
    if dtype == "BF16":
        # bfloat16 is the upper half of a float32: shifted back up, its low bits zero.
        upper = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return upper.view("<f4").astype(np.float64)
    raise CheckpointError(f"dtype {dtype} is not read here (F32, F16, BF16)")


class SafetensorsFile:
    """One safetensors file: its header parsed, tensors read on demand."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            self.header = json.loads(handle.read(length))
        self.data_start = 8 + length
        self.header.pop("__metadata__", None)

    def read(self, name):
        entry = self.header[name]
        start, end = entry["data_offsets"]
        with open(self.path, "rb") as handle:
            handle.seek(self.data_start + start)
            raw = handle.read(end - start)
        return decode(raw, entry["dtype"]).reshape(entry["shape"])


class Tensors:
    """A checkpoint's tensors by name, from one file or the shards an index maps them to."""

    def __init__(self, folder):
        single = os.path.join(folder, "model.safetensors")
        index = os.path.join(folder, "model.safetensors.index.json")
        self.files = {}
        if os.path.exists(single):
            whole = SafetensorsFile(single)
            self.files = {name: whole for name in whole.header}
        elif os.path.exists(index):
            with open(index, encoding="utf-8") as handle:
                weight_map = json.load(handle)["weight_map"]
            shards = {}
            for name, shard in weight_map.items():
                if shard not in shards:
                    shards[shard] = SafetensorsFile(os.path.join(folder, shard))
                if name in shards[shard].header:
                    self.files[name] = shards[shard]
        else:
            raise CheckpointError(f"{folder}: no model.safetensors or its index")

    def has(self, name):
        return name in self.files

    def get(self, name, shape):
        """The tensor `name`, which must have `shape`."""
        if name not in self.files:
            raise CheckpointError(f"no tensor {name}")
        tensor = self.files[name].read(name)
        if list(tensor.shape) != list(shape):
            raise CheckpointError(f"tensor {name} has shape {list(tensor.shape)}, not {shape}")
        return tensor

    def whole(self, name):
        """The tensor `name`, whatever its shape (an embedding: vocabulary x d)."""
        if name not in self.files:
            raise CheckpointError(f"no tensor {name}")
        return self.files[name].read(name)

    def starts_with(self, prefix):
        return any(name.startswith(prefix) for name in self.files)


def refuse_variants(config):
    """Config values under which Hugging Face computes something this reference does not: it
    stops rather than give other numbers."""
    changes = [
        ("activation_function", lambda v: v in (None, "gelu_new")),
        ("scale_attn_by_inverse_layer_idx", lambda v: not v),
        ("scale_attn_weights", lambda v: v is None or v),
        ("hidden_act", lambda v: v in (None, "silu")),
        ("rope_scaling", lambda v: v is None
         or (v.get("rope_type") or v.get("type")) == "default"),
        ("partial_rotary_factor", lambda v: v in (None, 1, 1.0)),
    ]
    for key, computed in changes:
        if not computed(config.get(key)):
            raise CheckpointError(f"{key} = {config[key]!r} is not computed here")


class Model:
    """config.json's numbers under Hugging Face's key names, with its config classes' defaults."""

    def __init__(self, folder):
        with open(os.path.join(folder, "config.json"), encoding="utf-8") as handle:
            config = json.load(handle)
        self.tensors = Tensors(folder)
        self.kind = config["model_type"]
        refuse_variants(config)
        if self.kind in ("gpt2", "attn-only"):
            self.d = config["n_embd"]
            self.heads = config["n_head"]
            self.kv_heads = self.heads
            self.head_dim = self.d // self.heads
            self.layers = config["n_layer"]
            self.epsilon = config.get("layer_norm_epsilon") or 1e-5
            self.inner = config.get("n_inner") or 4 * self.d
            self.prefix = "transformer." if self.tensors.starts_with("transformer.") else ""
            self.rope_theta = None
        elif self.kind in LLAMA_LAYOUT:
            self.d = config["hidden_size"]
            self.heads = config["num_attention_heads"]
            self.kv_heads = config.get("num_key_value_heads") or self.heads
            self.head_dim = config.get("head_dim") or self.d // self.heads
            self.layers = config["num_hidden_layers"]
            self.epsilon = config.get("rms_norm_eps") or 1e-6
            self.inner = config["intermediate_size"]
            self.rope_theta = config.get("rope_theta") or 10000.0
            # Qwen2Attention: q, k, v with biases, o without; LlamaAttention: all four when
            # attention_bias; MistralAttention: none.
            attention_bias = bool(config.get("attention_bias"))
            self.qkv_bias = self.kind == "qwen2" or (self.kind == "llama" and attention_bias)
            self.o_bias = self.kind == "llama" and attention_bias
            self.mlp_bias = self.kind == "llama" and bool(config.get("mlp_bias"))
        else:
            raise CheckpointError(f"model_type {self.kind} is not read here")

    def t(self, name, shape):
        return self.tensors.get(name, shape)


# --- The steps -------------------------------------------------------------------------------


def layer_norm(x, gain, bias, epsilon):
    """torch.nn.LayerNorm: each row less its mean, over sqrt(population variance + eps),
    times gain, plus bias."""
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gain + bias


def rms_norm(x, gain, epsilon):
    """LlamaRMSNorm: x * rsqrt(mean(x^2) + eps), times the weight."""
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + epsilon) * gain


def gelu_new(x):
    """NewGELUActivation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x / (1.0 + np.exp(-x))


def rotate_half(x):
    """modeling_llama.rotate_half: (x1, x2) -> (-x2, x1) over the two halves of the columns."""
    half = x.shape[-1] // 2
    return np.concatenate([-x[:, half:], x[:, :half]], axis=-1)


def apply_rope(x, theta):
    """apply_rotary_pos_emb for positions 0 .. n-1: inv_freq = theta^(-arange(0, d, 2)/d),
    freqs = p * inv_freq, emb = cat(freqs, freqs); x cos(emb) + rotate_half(x) sin(emb)."""
    n, d = x.shape
    inv_freq = 1.0 / theta ** (np.arange(0, d, 2, dtype=np.float64) / d)
    freqs = np.outer(np.arange(n, dtype=np.float64), inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return x * np.cos(emb) + rotate_half(x) * np.sin(emb)


def causal_mask(scores):
    """-inf where a query would read a later key (column > row)."""
    n, m = scores.shape
    later = np.triu(np.ones((n, m), dtype=bool), k=1)
    return np.where(later, -np.inf, scores)


def softmax_rows(m):
    shifted = np.exp(m - m.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def group_of(head, heads, kv_heads):
    """repeat_kv: query head h reads K/V head floor(h / (heads / kv_heads))."""
    return head // (heads // kv_heads)


def cols(m, index, width):
    return m[:, index * width:(index + 1) * width]


# --- One layer -------------------------------------------------------------------------------


class Layer:
    """Layer `i`'s weights as X W uses them (d_in x d_out), by the architecture's names."""

    def __init__(self, model, i):
        d, hd = model.d, model.head_dim
        self.norm = None
        if model.kind in ("gpt2", "attn-only"):
            at = f"{model.prefix}h.{i}."
            if model.kind == "gpt2":
                gain, bias = model.t(at + "ln_1.weight", [d]), model.t(at + "ln_1.bias", [d])
                self.norm = lambda x: layer_norm(x, gain, bias, model.epsilon)
            c_attn = model.t(at + "attn.c_attn.weight", [d, 3 * d])  # Conv1D: [in, out]
            c_attn_bias = model.t(at + "attn.c_attn.bias", [3 * d])
            self.w_q, self.w_k, self.w_v = np.split(c_attn, 3, axis=1)
            self.b_q, self.b_k, self.b_v = np.split(c_attn_bias, 3)
            self.w_o = model.t(at + "attn.c_proj.weight", [d, d])
            self.b_o = model.t(at + "attn.c_proj.bias", [d])
        else:
            at = f"model.layers.{i}."
            gain = model.t(at + "input_layernorm.weight", [d])
            self.norm = lambda x: rms_norm(x, gain, model.epsilon)
            q_width, kv_width = model.heads * hd, model.kv_heads * hd

            def linear(name, out, inp, has_bias):
                # nn.Linear stores [out, in] and computes x W^T + b.
                weight = model.t(f"{at}self_attn.{name}.weight", [out, inp]).T
                bias = model.t(f"{at}self_attn.{name}.bias", [out]) if has_bias else None
                return weight, bias

            self.w_q, self.b_q = linear("q_proj", q_width, d, model.qkv_bias)
            self.w_k, self.b_k = linear("k_proj", kv_width, d, model.qkv_bias)
            self.w_v, self.b_v = linear("v_proj", kv_width, d, model.qkv_bias)
            self.w_o, self.b_o = linear("o_proj", d, q_width, model.o_bias)


def affine(x, w, b):
    return x @ w if b is None else x @ w + b


def attention(model, layer, x):
    """The attention sublayer of `layer` on the stream x: every matrix, per head and whole."""
    normed = layer.norm(x) if layer.norm else None
    seen = x if normed is None else normed
    q = affine(seen, layer.w_q, layer.b_q)
    k = affine(seen, layer.w_k, layer.b_k)
    v = affine(seen, layer.w_v, layer.b_v)
    hd = model.head_dim
    heads = []
    for h in range(model.heads):
        g = group_of(h, model.heads, model.kv_heads)
        head = {"q": cols(q, h, hd), "k": cols(k, g, hd), "v": cols(v, g, hd),
                "q_rope": None, "k_rope": None}
        q_used, k_used = head["q"], head["k"]
        if model.rope_theta is not None:
            head["q_rope"] = q_used = apply_rope(head["q"], model.rope_theta)
            head["k_rope"] = k_used = apply_rope(head["k"], model.rope_theta)
        head["scores"] = q_used @ k_used.T
        head["scaled"] = head["scores"] / math.sqrt(hd)
        head["masked"] = causal_mask(head["scaled"])
        head["weights"] = softmax_rows(head["masked"])
        head["output"] = head["weights"] @ head["v"]
        heads.append(head)
    concat = np.concatenate([head["output"] for head in heads], axis=1)
    return {"normed": normed, "heads": heads, "concat": concat,
            "output": affine(concat, layer.w_o, layer.b_o)}


def mlp(model, i, x):
    """Block i's MLP sublayer on the stream x, with its norm; zero for attn-only models."""
    d, inner = model.d, model.inner
    if model.kind == "attn-only":
        return np.zeros_like(x)
    if model.kind == "gpt2":
        at = f"{model.prefix}h.{i}."
        y = layer_norm(x, model.t(at + "ln_2.weight", [d]), model.t(at + "ln_2.bias", [d]),
                       model.epsilon)
        hidden = gelu_new(y @ model.t(at + "mlp.c_fc.weight", [d, inner])
                          + model.t(at + "mlp.c_fc.bias", [inner]))
        return (hidden @ model.t(at + "mlp.c_proj.weight", [inner, d])
                + model.t(at + "mlp.c_proj.bias", [d]))
    at = f"model.layers.{i}."
    y = rms_norm(x, model.t(at + "post_attention_layernorm.weight", [d]), model.epsilon)

    def linear(name, out, inp, rows):
        weight = model.t(f"{at}mlp.{name}.weight", [out, inp])
        result = rows @ weight.T
        if model.mlp_bias:
            result = result + model.t(f"{at}mlp.{name}.bias", [out])
        return result

    gated = silu(linear("gate_proj", inner, d, y)) * linear("up_proj", inner, d, y)
    return linear("down_proj", d, inner, gated)


def residual_stream(model, token_ids, layer):
    """x entering block `layer`: the embeddings, then every earlier block whole."""
    if model.kind in LLAMA_LAYOUT:
        x = model.tensors.whole("model.embed_tokens.weight")[token_ids]
    else:
        x = model.tensors.whole(f"{model.prefix}wte.weight")[token_ids]
        x = x + model.tensors.whole(f"{model.prefix}wpe.weight")[:len(token_ids)]
    for i in range(layer):
        x = x + attention(model, Layer(model, i), x)["output"]
        x = x + mlp(model, i, x)
    return x


def reference(folder, token_ids, layer, head):
    """Everything the JSON holds: head is a head's number, or None for every head."""
    model = Model(folder)
    if not 0 <= layer <= model.layers:
        raise CheckpointError(f"layer {layer}: the model has {model.layers}")
    x = residual_stream(model, token_ids, layer)
    result = {"token_ids": list(token_ids), "x": x, "normed": None, "heads": [],
              "concat": None, "output": None}
    if layer == model.layers:
        return result
    whole = attention(model, Layer(model, layer), x)
    result["normed"] = whole["normed"]
    if head is None:
        result.update(heads=whole["heads"], concat=whole["concat"], output=whole["output"])
    else:
        if not 0 <= head < model.heads:
            raise CheckpointError(f"head {head}: the model has {model.heads}")
        result["heads"] = [whole["heads"][head]]
    return result


# --- JSON ------------------------------------------------------------------------------------


def rows(matrix):
    """A matrix as JSON rows, "-inf" and "inf" for the infinite; None stays None."""
    if matrix is None:
        return None
    words = {-np.inf: "-inf", np.inf: "inf"}
    return [[words.get(cell, float(cell)) for cell in row] for row in np.atleast_2d(matrix)]


def document_of(result):
    return {
        "token_ids": result["token_ids"],
        "x": rows(result["x"]),
        "normed": rows(result["normed"]),
        "heads": [{key: rows(head[key]) for key in HEAD_KEYS} for head in result["heads"]],
        "concat": rows(result["concat"]),
        "output": rows(result["output"]),
    }


def json_matrix(value):
    infinities = {"-inf": -np.inf, "inf": np.inf}
    matrix = [[infinities[cell] if isinstance(cell, str) else cell for cell in row]
              for row in value]
    return np.array(matrix, dtype=np.float64).reshape(len(matrix), -1)


def deviation(theirs, numpy):
    """|theirs - numpy| / max(1, |numpy|): 0 where both are the same infinity."""
    both_infinite = np.isinf(theirs) & np.isinf(numpy) & (np.sign(theirs) == np.sign(numpy))
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = np.abs(theirs - numpy) / np.maximum(1.0, np.abs(numpy))
    scaled = np.where(both_infinite, 0.0, scaled)
    return np.where(np.isnan(scaled), np.inf, scaled)


def compare_matrix(problems, key, numpy, value):
    """Appends a problem when `value` (from the JSON) is not `numpy`; returns the worst
    deviation."""
    if numpy is None or value is None:
        if (numpy is None) != (value is None):
            have = lambda m: "null" if m is None else "a matrix"  # noqa: E731
            problems.append(f"{key}: numpy has {have(numpy)}, the JSON has {have(value)}")
        return 0.0
    try:
        theirs = json_matrix(value)
    except (KeyError, TypeError, ValueError) as error:
        problems.append(f"{key}: not a matrix of numbers ({error})")
        return 0.0
    numpy = np.atleast_2d(numpy)
    if theirs.shape != numpy.shape:
        problems.append(f"{key}: shape {theirs.shape}, numpy {numpy.shape}")
        return 0.0
    if numpy.size == 0:
        return 0.0
    deviations = deviation(theirs, numpy)
    at = np.unravel_index(np.argmax(deviations), deviations.shape)
    worst = float(deviations[at])
    if not worst <= TOLERANCE:
        problems.append(f"{key}: worst deviation {worst:.3e} at [{at[0]}][{at[1]}]: "
                        f"theirs {theirs[at]!r}, numpy {numpy[at]!r}")
    return worst


def compare(result, document):
    """The problems of `document` against the reference, and the worst deviation."""
    problems = []
    worst = 0.0
    if document.get("token_ids") != result["token_ids"]:
        problems.append(f"token_ids: numpy has {result['token_ids']}, the JSON has "
                        f"{document.get('token_ids')!r}")
    checked = ["x", "normed"]
    # With one head, a lesson's concat and output are its own: not compared.
    if len(result["heads"]) != 1 or result["concat"] is not None:
        checked += ["concat", "output"]
    for key in checked:
        # A model without a norm (attn-only) has no "normed": the key is left out.
        if key == "normed" and result[key] is None:
            if key in document:
                problems.append("normed: the model has no norm, but the JSON has the key")
            continue
        if key not in document:
            problems.append(f"{key}: missing from the JSON")
            continue
        worst = max(worst, compare_matrix(problems, key, result[key], document[key]))
    heads = document.get("heads")
    if result["heads"] and not (isinstance(heads, list) and len(heads) == len(result["heads"])):
        problems.append(f"heads: missing from the JSON, or not an array of "
                        f"{len(result['heads'])} heads")
        return problems, worst
    for h, head in enumerate(result["heads"]):
        found = heads[h] if isinstance(heads[h], dict) else {}
        for key in HEAD_KEYS:
            worst = max(worst, compare_matrix(problems, f"heads[{h}].{key}", head[key],
                                              found.get(key)))
    return problems, worst


# --- Self-test: hand-computed values ---------------------------------------------------------


def self_test():
    """Checks the reference against values worked out by hand; returns the failures."""
    failures = []

    def check(name, ok):
        if not ok:
            failures.append(name)

    check("F32 1.0", decode(struct.pack("<f", 1.0), "F32").tolist() == [1.0])
    check("F16 0x3c00 is 1.0, 0xc000 is -2.0",
          decode(bytes([0x00, 0x3c, 0x00, 0xc0]), "F16").tolist() == [1.0, -2.0])
    check("BF16 0x3f80 is 1.0, 0x4049 is 3.140625",
          decode(bytes([0x80, 0x3f, 0x49, 0x40]), "BF16").tolist() == [1.0, 3.140625])

    ln = layer_norm(np.array([[1.0, 2.0, 3.0]]), np.ones(3), np.zeros(3), 0.0)
    check("LayerNorm of [1, 2, 3] is [-1, 0, 1] * sqrt(3/2)",
          np.allclose(ln, [[-math.sqrt(1.5), 0.0, math.sqrt(1.5)]], rtol=0, atol=1e-15))
    ln = layer_norm(np.array([[0.0, 2.0]]), np.array([2.0, 3.0]), np.array([1.0, -1.0]), 0.0)
    check("LayerNorm's gain and bias per column", np.allclose(ln, [[-1.0, 2.0]], atol=1e-15))
    rms = rms_norm(np.array([[3.0, 4.0]]), np.array([1.0, 2.0]), 0.0)
    check("RMSNorm of [3, 4] is [3, 4] / sqrt(12.5), gain [1, 2]",
          np.allclose(rms, [[3 / math.sqrt(12.5), 8 / math.sqrt(12.5)]], rtol=0, atol=1e-15))
    check("RMSNorm's epsilon under the root",
          np.allclose(rms_norm(np.array([[1.0]]), np.ones(1), 3.0), [[0.5]], atol=1e-15))

    check("gelu_new(0) = 0", gelu_new(np.array(0.0)) == 0.0)
    check("gelu_new(1) = 0.5 (1 + tanh(sqrt(2/pi) 1.044715))",
          abs(gelu_new(np.array(1.0))
              - 0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * 1.044715))) < 1e-15)
    check("gelu_new(1) is about 0.84119", abs(gelu_new(np.array(1.0)) - 0.841192) < 1e-6)
    check("silu(1) = 1 / (1 + e^-1)", abs(silu(np.array(1.0)) - 1 / (1 + math.exp(-1))) < 1e-15)

    turned = apply_rope(np.array([[1.0, 0.0, 0.0, 0.0]] * 2), 10000.0)
    check("RoPE leaves position 0 alone", np.array_equal(turned[0], [1.0, 0.0, 0.0, 0.0]))
    check("rotate-half RoPE pairs column 0 with column 2: (cos 1, 0, sin 1, 0) at p=1",
          np.allclose(turned[1], [math.cos(1), 0.0, math.sin(1), 0.0], rtol=0, atol=1e-15))
    turned = apply_rope(np.array([[0.0, 1.0, 0.0, 0.0]] * 3), 100.0)
    check("pair i=1 of d=4 with theta 100 turns by p/10 (column 1 with column 3)",
          np.allclose(turned[2], [0.0, math.cos(0.2), 0.0, math.sin(0.2)], rtol=0, atol=1e-15))

    masked = causal_mask(np.zeros((3, 3)))
    check("the causal mask hides the keys after each query",
          np.array_equal(np.isinf(masked), np.triu(np.ones((3, 3), dtype=bool), k=1)))
    weights = softmax_rows(masked)
    check("masked softmax: row 0 is [1, 0, 0], row 2 uniform",
          np.allclose(weights[0], [1, 0, 0]) and np.allclose(weights[2], [1 / 3] * 3))
    check("GQA: 4 query heads over 2 groups read groups 0, 0, 1, 1",
          [group_of(h, 4, 2) for h in range(4)] == [0, 0, 1, 1])
    for key, value in [("activation_function", "gelu"), ("rope_scaling", {"rope_type": "llama3"}),
                       ("scale_attn_weights", False), ("hidden_act", "gelu")]:
        try:
            refuse_variants({key: value})
            check(f"{key} = {value!r} is refused", False)
        except CheckpointError:
            pass
    refuse_variants({"rope_scaling": {"type": "default"}, "scale_attn_weights": True})
    check("-inf is written as the string \"-inf\"",
          rows(np.array([[-np.inf, 1.0]])) == [["-inf", 1.0]])
    problems, _ = compare({"token_ids": [1], "x": np.array([[1.0]]), "normed": None,
                           "heads": [], "concat": None, "output": None},
                          {"token_ids": [1], "x": [[1.0 + 2e-9]], "concat": None,
                           "output": None})
    check("a deviation of 2e-9 is a disagreement", len(problems) == 1 and "x" in problems[0])
    problems, _ = compare({"token_ids": [1], "x": np.array([[1.0]]), "normed": None,
                           "heads": [], "concat": None, "output": None},
                          {"token_ids": [1], "x": [[1.0]], "normed": None, "concat": None,
                           "output": None})
    check("a model without a norm has no \"normed\" key",
          len(problems) == 1 and "normed" in problems[0])
    return failures


# --- Command line ----------------------------------------------------------------------------


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("model", nargs="?", help="the checkpoint folder")
    parser.add_argument("--tokens", help="token ids, comma-separated")
    parser.add_argument("--layer", type=int, help="the layer (0-based)")
    parser.add_argument("--head", default="all", help="a head (0-based) or all")
    parser.add_argument("--compare", metavar="SHOW.json", help="a JSON to compare")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args(argv)
    failures = self_test()
    for failure in failures:
        print(f"self-test FAILED: {failure}")
    if args.self_test:
        if not failures:
            print("self-test: all hand-computed checks pass")
        return 1 if failures else 0
    if failures:
        return 1
    if args.model is None or args.tokens is None or args.layer is None:
        parser.print_usage()
        return 2
    try:
        token_ids = [int(token) for token in args.tokens.split(",") if token.strip()]
        head = None if args.head == "all" else int(args.head)
        result = reference(args.model, token_ids, args.layer, head)
    except (CheckpointError, OSError, KeyError, ValueError, IndexError) as error:
        print(f"checkpoint.py: {args.model}: {error}")
        return 2
    if args.compare is None:
        json.dump(document_of(result), sys.stdout)
        print()
        return 0
    try:
        with open(args.compare, encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, ValueError) as error:
        print(f"checkpoint.py: cannot read {args.compare}: {error}")
        return 2
    problems, worst = compare(result, document)
    for problem in problems:
        print(f"{args.compare}: {problem}")
    print(f"checkpoint reference: {args.compare}: worst deviation {worst:.3e}, "
          f"{len(problems)} disagreements")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
