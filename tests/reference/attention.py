#!/usr/bin/env python3
"""An independent numpy reference for attn-tutor's attention pipeline, and its comparison.

It reads lesson files (TOML, literal matrices only) with Python's own tomllib, computes every
matrix of one forward pass in float64 with plain numpy, and compares them with the JSON that
`attn-tutor show LESSON --format json` wrote for the same lesson. Self-attention and
cross-attention (`source_tokens`: queries from the target, keys and values from the source)
alike. For a lesson with `decode = true` it also generates the output again one token at a
time with a K/V cache, as a decoder does, and compares every step with the JSON's "decode".

    attention.py [--format1-only] LESSON.toml SHOW.json [LESSON.toml SHOW.json ...]
    attention.py --self-test

A value agrees when |ours - numpy| <= 1e-9 * max(1, |numpy|); the JSON's "-inf" and "inf"
strings are the infinities. Every comparison run starts with the self-test, so a broken
reference cannot pass. The exit code is 0 only when the self-test passes and every value of
every lesson agrees; otherwise each disagreeing key is printed with its worst deviation.

The code is written to be read next to the formulas, one function per step; it shares nothing
with the Rust engine.
"""

import json
import math
import sys
import tomllib

import numpy as np

TOLERANCE = 1e-9
ROPE_BASE = 10000.0
SINUSOID_BASE = 10000.0

# The keys a format 1 document has always had; the rest came with format 2.
FORMAT1_MATRICES = [
    "embeddings", "w_q", "w_k", "w_v", "q", "k", "v",
    "scores", "scaled", "mask", "masked", "weights", "output",
]
HEAD_MATRICES = [
    "q", "k", "v", "q_rope", "k_rope", "scores", "scaled", "masked", "weights", "output",
]
# A head's circuits, in lessons with embeddings and W_o.
CIRCUITS = ["w_qk", "w_ov"]
# The online softmax's state after the last tile, one column each (acc: d_v columns): the
# tutor's Online softmax step is shown, and explained cell by cell, at the last tile.
ONLINE_MATRICES = ["m", "rescale", "l", "acc"]
DEFAULT_TILE = 2


class LessonError(Exception):
    """A lesson this reference cannot read (it only takes literal matrices)."""


# --- Reading a lesson -----------------------------------------------------------------------


def read_lesson(path):
    """The lesson file as a dict, parsed by tomllib (so -inf cells are float('-inf'))."""
    with open(path, "rb") as handle:
        return tomllib.load(handle)


def literal_matrix(lesson, key):
    """The lesson's matrix `key` as a float64 array of shape (rows, cols), or None when absent.

    Only literal rows of numbers are read: a generator ({ random = ... }) is the engine's own
    pseudo-random stream, which an independent reference cannot reproduce.
    """
    value = lesson.get(key)
    if value is None:
        return None
    if isinstance(value, dict):
        raise LessonError(f"`{key}` is a generator; the reference reads literal matrices only")
    if not isinstance(value, list) or not value or not all(isinstance(row, list) for row in value):
        raise LessonError(f"`{key}` is not a matrix (rows of numbers)")
    widths = {len(row) for row in value}
    if len(widths) != 1:
        raise LessonError(f"`{key}` has rows of different lengths")
    return np.array(value, dtype=np.float64)


# --- The steps ------------------------------------------------------------------------------


def sinusoid_at(p, d_model):
    """Vaswani et al. 2017, section 3.5, the row of position p: PE[p, c] = sin(p /
    10000^(2i/d_model)) for even c and cos(p / 10000^(2i/d_model)) for odd c, where
    i = floor(c / 2). A decoder needs only the row of the token it is making."""
    row = np.zeros(d_model)
    for c in range(d_model):
        i = c // 2
        angle = p / SINUSOID_BASE ** (2 * i / d_model)
        row[c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
    return row


def sinusoidal_positions(seq_len, d_model):
    """PE for positions p = 0, 1, 2, ..., seq_len - 1, one row each (`sinusoid_at`)."""
    pe = np.zeros((seq_len, d_model))
    for p in range(seq_len):
        pe[p] = sinusoid_at(p, d_model)
    return pe


def add_positions(embeddings, positions):
    """X = embeddings + positions (the matrix the projections read); X = embeddings without."""
    return embeddings if positions is None else embeddings + positions


def normalise(lesson, x):
    """Format 2's `norm`: each row of X made mean 0 and variance 1 (`layer`: LayerNorm,
    (x - mean) / sqrt(var + eps) * gain + bias) or root-mean-square 1 (`rms`: x / sqrt(mean(x^2) +
    eps) * gain), the variance divided by n; X itself without a norm."""
    kind = lesson.get("norm")
    if kind is None:
        return x
    width = x.shape[1]
    gain = np.array(lesson.get("norm_gain", [1.0] * width), dtype=float)
    shift = np.array(lesson.get("norm_bias", [0.0] * width), dtype=float)
    epsilon = float(lesson.get("norm_epsilon", 1e-5))
    if kind == "layer":
        centred = x - x.mean(axis=1, keepdims=True)
        return centred / np.sqrt((centred ** 2).mean(axis=1, keepdims=True) + epsilon) * gain + shift
    if kind == "rms":
        return x / np.sqrt((x ** 2).mean(axis=1, keepdims=True) + epsilon) * gain
    raise LessonError(f"unknown norm {kind!r}")


def bias(lesson, key, width):
    """Format 2's bias vector `key` (b_q, b_k, b_v, b_o), zeros without one."""
    values = lesson.get(key)
    if values is None:
        return np.zeros(width)
    values = np.array(values, dtype=float)
    if values.shape != (width,):
        raise LessonError(f"{key} has {values.shape[0]} numbers, the projection {width} columns")
    return values


def project(x, w):
    """A projection: Q = X W_q, K = X W_k, V = X W_v (rows are tokens)."""
    return x @ w


def rope_turn(row, p, base=ROPE_BASE):
    """RoFormer (Su et al. 2021), eq. 34: one query or key `row` at position p (0-based) is
    rotated pairwise; for i = 0 .. d/2 - 1, phi = p * base^(-2i/d) (base 10000 unless the
    lesson's `rope_theta` says) and
    (x_2i, x_2i+1) -> (x_2i cos phi - x_2i+1 sin phi, x_2i sin phi + x_2i+1 cos phi)."""
    d = row.shape[0]
    if d % 2:
        raise LessonError(f"RoPE needs an even d_k, found {d}")
    rotated = np.empty_like(row)
    for i in range(d // 2):
        phi = p * base ** (-2 * i / d)
        a, b = row[2 * i], row[2 * i + 1]
        rotated[2 * i] = a * math.cos(phi) - b * math.sin(phi)
        rotated[2 * i + 1] = a * math.sin(phi) + b * math.cos(phi)
    return rotated


def rope_turn_back(row, p, base=ROPE_BASE):
    """The transpose of `rope_turn`: the pair turned by -phi, which is how a gradient goes
    back through a rotation (x_2i cos phi + x_2i+1 sin phi, -x_2i sin phi + x_2i+1 cos phi)."""
    d = row.shape[0]
    turned = np.empty_like(row)
    for i in range(d // 2):
        phi = p * base ** (-2 * i / d)
        a, b = row[2 * i], row[2 * i + 1]
        turned[2 * i] = a * math.cos(phi) + b * math.sin(phi)
        turned[2 * i + 1] = -a * math.sin(phi) + b * math.cos(phi)
    return turned


def rotate_half(x):
    """Hugging Face transformers' `rotate_half` (modeling_llama.py): the second half of the
    last axis negated and put first, the first half after it."""
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def half_cos_sin(p, d, base):
    """cos and sin of Llama's rotary embedding at position p for a head of width d, as
    `LlamaRotaryEmbedding` makes them: inv_freq = 1 / base^(arange(0, d, 2) / d), the angles
    p * inv_freq, and `emb = cat(freqs, freqs)`, so column j and column j + d/2 share an
    angle."""
    inv_freq = 1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d)
    freqs = p * inv_freq
    emb = np.concatenate([freqs, freqs])
    return np.cos(emb), np.sin(emb)


def rope_turn_half(row, p, base):
    """`rope_pairing = "half"`: Llama, Mistral and Qwen2 as Hugging Face's
    `apply_rotary_pos_emb` turns a query or key, row * cos + rotate_half(row) * sin."""
    d = row.shape[0]
    if d % 2:
        raise LessonError(f"RoPE needs an even d_k, found {d}")
    cos, sin = half_cos_sin(p, d, base)
    return row * cos + rotate_half(row) * sin


def rope_turn_half_back(row, p, base):
    """The transpose of `rope_turn_half`, a turn by -phi: row * cos - rotate_half(row) * sin."""
    cos, sin = half_cos_sin(p, row.shape[0], base)
    return row * cos - rotate_half(row) * sin


def rope_of(lesson):
    """How the lesson turns Q and K: None without RoPE, else (pairing, base) from its
    `rope_pairing` ("interleaved" unless said) and `rope_theta` (10000 unless said)."""
    if lesson.get("positions", "none") != "rope":
        if "rope_pairing" in lesson or "rope_theta" in lesson:
            raise LessonError("rope_pairing and rope_theta need positions = \"rope\"")
        return None
    pairing = lesson.get("rope_pairing", "interleaved")
    if pairing not in ("interleaved", "half"):
        raise LessonError(f"unknown rope_pairing {pairing!r}")
    return pairing, float(lesson.get("rope_theta", ROPE_BASE))


def turn(rope, row, p):
    """One row turned by position p as the lesson's RoPE (`rope_of`) turns it."""
    pairing, base = rope
    return rope_turn_half(row, p, base) if pairing == "half" else rope_turn(row, p, base)


def turn_back(rope, row, p):
    """One gradient row turned back by position p: the transpose of `turn`."""
    pairing, base = rope
    if pairing == "half":
        return rope_turn_half_back(row, p, base)
    return rope_turn_back(row, p, base)


def rope_rotate(m, rope=("interleaved", ROPE_BASE)):
    """Every row of Q or K turned by its own index p (`turn`)."""
    if m.shape[1] % 2:
        raise LessonError(f"RoPE needs an even d_k, found {m.shape[1]}")
    rotated = np.empty_like(m)
    for p in range(m.shape[0]):
        rotated[p] = turn(rope, m[p], p)
    return rotated


def attention_scores(q, k):
    """scores = Q K^T: row i, column j is the dot product of query i with key j."""
    return q @ k.T


def scale_scores(scores, d_k):
    """scaled = scores / sqrt(d_k) (Vaswani et al. 2017, eq. 1)."""
    return scores / math.sqrt(d_k)


def causal_mask(seq_len):
    """The causal mask: 0 where key j <= query i, -inf where j > i (no looking ahead)."""
    mask = np.zeros((seq_len, seq_len))
    mask[np.triu_indices(seq_len, k=1)] = -np.inf
    return mask


def lesson_mask(lesson, seq_len, src_len, cross):
    """The additive mask of a lesson: None, the causal one, or its written matrix of
    0 (keep), -inf (hide) and finite biases (added to the score), seq_len x src_len: one row
    per query, one column per key (a source token in cross-attention)."""
    written = lesson.get("mask", "none")
    if written == "none":
        return None
    if written == "causal":
        # "Later" compares positions of one sequence; the source is another sequence, complete
        # before the first query, so the lesson format refuses it.
        if cross:
            raise LessonError("a causal mask with source_tokens is refused by the format")
        return causal_mask(seq_len)
    mask = literal_matrix(lesson, "mask")
    if mask.shape != (seq_len, src_len):
        raise LessonError(f"the mask is {mask.shape}, not {seq_len} x {src_len}")
    return mask


def apply_mask(scores, mask):
    """masked = scores + mask: -inf hides a key, a finite bias tilts its score."""
    return scores + mask


def softmax_rows(m):
    """weights[i, j] = exp(m[i, j] - max_i) / sum_j' exp(m[i, j'] - max_i), row by row.

    Subtracting the row maximum changes nothing mathematically and keeps exp in range. A row
    that is -inf everywhere (every key hidden) has nothing to attend to: its weights are all
    0, never the NaN of 0/0.
    """
    weights = np.zeros_like(m)
    for i, row in enumerate(m):
        top = np.max(row)
        if top == -np.inf:
            continue
        exps = np.exp(row - top)
        weights[i] = exps / np.sum(exps)
    return weights


def attend(weights, v):
    """output = weights V: each row a weighted average of the value rows."""
    return weights @ v


# --- Heads ---------------------------------------------------------------------------------


def group_of(head, heads, kv_heads):
    """The K/V group query head `head` (0-based) reads: floor(h / (H / G)), PyTorch's
    repeat_interleave order (heads 0 .. H/G - 1 share group 0, and so on)."""
    if heads % kv_heads:
        raise LessonError(f"kv_heads = {kv_heads} does not divide heads = {heads}")
    return head // (heads // kv_heads)


def block(m, index, width):
    """Columns index*width .. (index+1)*width - 1 of m: one head's (or group's) columns."""
    return m[:, index * width:(index + 1) * width]


def online_tiles(scores, v, tile):
    """The online softmax's state after each tile of `tile` keys, worked out directly from the
    keys read so far rather than by rescaling (FlashAttention's way, which the engine takes), so
    the two check each other: m = the largest visible score, l = sum_j exp(s_j - m), acc =
    sum_j exp(s_j - m) v_j. While every key read is masked, m = -inf and l, acc = 0. The rescale
    factor exp(m_before - m) is the tile's where it raised m (0 when m_before was -inf), and 1
    where nothing was multiplied. Returns one dict per tile: keys [first, last], m, l, acc,
    rescale."""
    rows, n = scores.shape
    states = []
    before = np.full(rows, -np.inf)
    for first in range(0, n, tile):
        last = min(first + tile, n) - 1
        seen = scores[:, :last + 1]
        m = seen.max(axis=1)
        l = np.zeros(rows)
        acc = np.zeros((rows, v.shape[1]))
        rescale = np.ones(rows)
        for i in range(rows):
            if m[i] > before[i]:
                rescale[i] = 0.0 if before[i] == -np.inf else np.exp(before[i] - m[i])
            if m[i] == -np.inf:
                continue
            weights = np.exp(seen[i] - m[i])
            l[i] = weights.sum()
            acc[i] = weights @ v[:last + 1]
        states.append({"keys": [first, last], "m": m, "l": l, "acc": acc, "rescale": rescale})
        before = m
    return states


def head_pass(q, k, v, rope, scale, mask, tile=DEFAULT_TILE):
    """One head, from its Q, K and V: rotation, scores, scaling, mask, softmax, output. `rope`
    is None, True for the default RoPE, or a (pairing, base) of `rope_of`."""
    if rope is True:
        rope = ("interleaved", ROPE_BASE)
    q_rope = rope_rotate(q, rope) if rope else None
    k_rope = rope_rotate(k, rope) if rope else None
    scores = attention_scores(q_rope if rope else q, k_rope if rope else k)
    # Scaling divides by sqrt(d_k) of ONE head, never of all heads together.
    scaled = scale_scores(scores, k.shape[1]) if scale else None
    before_mask = scores if scaled is None else scaled
    masked = None if mask is None else apply_mask(before_mask, mask)
    softmax_input = before_mask if masked is None else masked
    weights = softmax_rows(softmax_input)
    online = online_tiles(softmax_input, v, tile)
    column = lambda values: values.reshape(-1, 1)
    return {"q": q, "k": k, "v": v, "q_rope": q_rope, "k_rope": k_rope, "scores": scores,
            "scaled": scaled, "masked": masked, "weights": weights,
            "output": attend(weights, v), "online": online,
            "m": column(online[-1]["m"]), "rescale": column(online[-1]["rescale"]),
            "l": column(online[-1]["l"]), "acc": online[-1]["acc"]}


# --- The whole pass -------------------------------------------------------------------------


def forward(lesson):
    """Every matrix of the lesson's forward pass, by the JSON's names (None where absent), with
    one dict of matrices per query head under "heads".

    With `source_tokens` the lesson is cross-attention: Q comes from the target (`embeddings`,
    or `q`), K and V from the source S (`source_embeddings`, or `k` and `v`), so every matrix
    from the scores on is seq_len x src_len."""
    tokens = lesson["tokens"]
    seq_len = len(tokens)
    source_tokens = lesson.get("source_tokens")
    cross = source_tokens is not None
    src_len = len(source_tokens) if cross else seq_len
    n_heads = lesson.get("heads", 1)
    kv_heads = lesson.get("kv_heads", n_heads)
    embeddings = literal_matrix(lesson, "embeddings")
    source_embeddings = literal_matrix(lesson, "source_embeddings")
    w_q, w_k, w_v, w_o = (literal_matrix(lesson, key) for key in ("w_q", "w_k", "w_v", "w_o"))
    kind = lesson.get("positions", "none")
    rope = rope_of(lesson)
    if cross and embeddings is not None and source_embeddings is None:
        raise LessonError("source_tokens with embeddings needs source_embeddings")
    if not cross and source_embeddings is not None:
        raise LessonError("source_embeddings without source_tokens")

    positions = source_positions = None
    if kind == "sinusoidal":
        positions = sinusoidal_positions(seq_len, embeddings.shape[1])
        # The source counts its own positions from 0: S = source_embeddings + PE[0 .. src_len).
        source_positions = sinusoidal_positions(src_len, embeddings.shape[1])
    elif not isinstance(kind, str):
        if cross:
            raise LessonError("learned positions with source_tokens are refused by the format")
        positions = literal_matrix(lesson, "positions")
    elif kind not in ("none", "rope"):
        raise LessonError(f"unknown positions {kind!r}")

    # Q is seq x (H d_k); K and V are src x (G d_k) and src x (G d_v) (src = seq in
    # self-attention): every head's or group's columns side by side.
    source_x = None
    if embeddings is not None:
        x = add_positions(embeddings, positions)
        if cross:
            source_x = add_positions(source_embeddings, source_positions)
        # Format 2's norm before the projections (a real model's ln_1 or input_layernorm).
        normed = normalise(lesson, x)
        keys_from = normed if source_x is None else normalise(lesson, source_x)
        q, k, v = project(normed, w_q), project(keys_from, w_k), project(keys_from, w_v)
        # Format 2's biases: Q = X W_q + b_q, and so on, every head's columns at once.
        q, k, v = (m + bias(lesson, key, m.shape[1])
                   for m, key in ((q, "b_q"), (k, "b_k"), (v, "b_v")))
    else:
        x = None
        q, k, v = (literal_matrix(lesson, key) for key in ("q", "k", "v"))
    if q.shape[0] != seq_len or k.shape[0] != src_len or v.shape[0] != src_len:
        raise LessonError(f"Q has {q.shape[0]} rows (want {seq_len}), K {k.shape[0]} and V "
                          f"{v.shape[0]} (want {src_len})")
    if q.shape[1] % n_heads or k.shape[1] % kv_heads or v.shape[1] % kv_heads:
        raise LessonError("a width is not divisible by its number of heads")
    d_k, d_v = k.shape[1] // kv_heads, v.shape[1] // kv_heads
    if q.shape[1] // n_heads != d_k:
        raise LessonError("queries and keys of a head differ in width")

    mask = lesson_mask(lesson, seq_len, src_len, cross)
    heads = []
    for h in range(n_heads):
        g = group_of(h, n_heads, kv_heads)
        # RoPE turns each row by its own index: Q's rows are target positions 0 .. seq_len - 1,
        # K's source positions 0 .. src_len - 1.
        head = head_pass(block(q, h, d_k), block(k, g, d_k), block(v, g, d_v), rope,
                         lesson.get("scale", True), mask, lesson.get("tile", DEFAULT_TILE))
        # The circuits (Elhage et al. 2021): W_QK = W_q^h W_k^hT, W_OV = W_v^h W_o^h, where
        # W_o^h is rows h d_v .. (h+1) d_v - 1 of W_o.
        if w_o is not None and embeddings is not None:
            head["w_qk"] = block(w_q, h, d_k) @ block(w_k, g, d_k).T
            head["w_ov"] = block(w_v, g, d_v) @ w_o[h * d_v:(h + 1) * d_v]
        heads.append(head)
    concat = np.concatenate([head["output"] for head in heads], axis=1)
    output = concat if w_o is None else concat @ w_o + bias(lesson, "b_o", w_o.shape[1])

    first = heads[0]
    masked = first["masked"]
    # Rows whose every key is hidden: only a mask can make a score -inf (one mask for all
    # heads, so the rows are the same in every head).
    fully_masked = [] if masked is None else [
        i for i, row in enumerate(masked) if np.all(row == -np.inf)]

    def one_head(key):
        """A head's matrix at the top level: the head's with one head, null with several."""
        return first[key] if n_heads == 1 else None

    given = embeddings is None
    ours = {
        "tokens": list(tokens), "d_k": d_k, "fully_masked_rows": fully_masked,
        "title": lesson["title"],
        "embeddings": embeddings, "w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o,
        "positions": positions, "x": x,
        "source_tokens": None if source_tokens is None else list(source_tokens),
        "source_x": source_x,
        # Cross-attention's own inputs and the source's sinusoid (null with Q, K, V given, or
        # without sinusoidal positions).
        "source_embeddings": source_embeddings if cross else None,
        "source_positions": source_positions if cross else None,
        # Q, K, V given whole stay at the top level as the file has them.
        "q": q if given else one_head("q"), "k": k if given else one_head("k"),
        "v": v if given else one_head("v"),
        "q_rope": one_head("q_rope"), "k_rope": one_head("k_rope"),
        "scores": one_head("scores"), "scaled": one_head("scaled"), "mask": mask,
        "masked": one_head("masked"), "weights": one_head("weights"),
        "output": output, "concat": concat, "heads": heads,
        # Worked out again one token at a time by `generate`, from the lesson's own inputs.
        "decode": generate(lesson) if decodes(lesson) else None,
        "backward": None,
        "focus": focus_of(lesson),
        "tile": lesson.get("tile", DEFAULT_TILE),
    }
    if "grad_output" in lesson:
        ours["backward"] = backward(lesson, ours, (w_q, w_k, w_v, w_o), (x, source_x))
    return ours


def backward(lesson, ours, weights, inputs):
    """The gradients of L = sum(output * grad_output), worked out by the chain rule here, for
    `compare_backward` to check the JSON's "backward" (and the tests' finite differences to
    check both). Each head's matrices are added to its dict by the engine's keys."""
    w_q, w_k, w_v, w_o = weights
    x, source_x = inputs
    d_output = literal_matrix(lesson, "grad_output")
    heads = ours["heads"]
    n_heads, kv_heads = len(heads), lesson.get("kv_heads", len(heads))
    rope = rope_of(lesson)
    if w_o is not None:
        d_concat = d_output @ w_o.T
        d_w_o = ours["concat"].T @ d_output
        d_v = heads[0]["v"].shape[1]
        head_grads = [block(d_concat, h, d_v) for h in range(n_heads)]
    else:
        d_concat = d_w_o = None
        head_grads = [d_output]
    for head, d_out in zip(heads, head_grads):
        p, v = head["weights"], head["v"]
        d_weights = d_out @ v.T
        d_s = p * (d_weights - (p * d_weights).sum(axis=1, keepdims=True))
        d_scores = d_s / math.sqrt(head["k"].shape[1]) if lesson.get("scale", True) else d_s
        q = head["q_rope"] if rope else head["q"]
        k = head["k_rope"] if rope else head["k"]
        d_q, d_k = d_scores @ k, d_scores.T @ q
        if rope:
            head["d_q_rope"], head["d_k_rope"] = d_q, d_k
            d_q = np.array([turn_back(rope, row, p_) for p_, row in enumerate(d_q)])
            d_k = np.array([turn_back(rope, row, p_) for p_, row in enumerate(d_k)])
        head.update({"d_weights": d_weights, "d_softmax_input": d_s, "d_scores": d_scores,
                     "d_q": d_q, "d_k": d_k, "d_v": p.T @ d_out, "d_head_output": d_out})
    # A K/V group's keys and values are read by all its heads: their gradients add up.
    groups = [[h for h in range(n_heads) if group_of(h, n_heads, kv_heads) == g]
              for g in range(kv_heads)]
    d_k_groups = [sum(heads[h]["d_k"] for h in members) for members in groups]
    d_v_groups = [sum(heads[h]["d_v"] for h in members) for members in groups]
    result = {"d_output": d_output, "d_concat": d_concat, "d_w_o": d_w_o,
              "d_w_q": None, "d_w_k": None, "d_w_v": None, "d_x": None, "d_source": None}
    if x is not None:
        source = x if source_x is None else source_x
        d_k_width, d_v_width = d_k_groups[0].shape[1], d_v_groups[0].shape[1]
        result["d_w_q"] = np.concatenate([x.T @ head["d_q"] for head in heads], axis=1)
        result["d_w_k"] = np.concatenate([source.T @ g for g in d_k_groups], axis=1)
        result["d_w_v"] = np.concatenate([source.T @ g for g in d_v_groups], axis=1)
        d_x_q = sum(head["d_q"] @ block(w_q, h, d_k_width).T for h, head in enumerate(heads))
        d_x_k = sum(g @ block(w_k, i, d_k_width).T for i, g in enumerate(d_k_groups))
        d_x_v = sum(g @ block(w_v, i, d_v_width).T for i, g in enumerate(d_v_groups))
        if source_x is None:
            result["d_x"] = d_x_q + d_x_k + d_x_v
        else:
            result["d_x"], result["d_source"] = d_x_q, d_x_k + d_x_v
        result["d_x_q"], result["d_x_k"], result["d_x_v"] = d_x_q, d_x_k, d_x_v
    # A bias is added to every row, so its gradient is its matrix's summed over the rows.
    for key, present, blocks in (("d_b_q", "b_q", [head["d_q"] for head in heads]),
                                 ("d_b_k", "b_k", d_k_groups), ("d_b_v", "b_v", d_v_groups),
                                 ("d_b_o", "b_o", [d_output])):
        if present in lesson:
            result[key] = np.concatenate([b.sum(axis=0, keepdims=True) for b in blocks], axis=1)
    for head in heads:
        head["d_b_q"] = head["d_q"].sum(axis=0, keepdims=True)
    result["groups"] = {"d_k_group": d_k_groups, "d_v_group": d_v_groups,
                        "d_b_k": [g.sum(axis=0, keepdims=True) for g in d_k_groups],
                        "d_b_v": [g.sum(axis=0, keepdims=True) for g in d_v_groups]}
    if x is not None:
        source = x if source_x is None else source_x
        for head in heads:
            head["d_w_q"] = x.T @ head["d_q"]
        result["groups"]["d_w_k"] = [source.T @ g for g in d_k_groups]
        result["groups"]["d_w_v"] = [source.T @ g for g in d_v_groups]
    return result


# The backward pass's matrices, as the engine names them in derivations.
BACKWARD_HEAD = ["d_weights", "d_softmax_input", "d_scores", "d_q", "d_k", "d_v",
                 "d_head_output", "d_q_rope", "d_k_rope", "d_w_q", "d_b_q"]
BACKWARD_GROUP = ["d_k_group", "d_v_group", "d_w_k", "d_w_v", "d_b_k", "d_b_v"]
BACKWARD_LESSON = {"grad_output": "d_output", "d_concat": "d_concat", "d_w_o": "d_w_o",
                   "d_x_q": "d_x_q", "d_x_k": "d_x_k", "d_x_v": "d_x_v", "d_x": "d_x",
                   "d_source": "d_source", "d_b_o": "d_b_o"}


def backward_matrix(ours, key, head):
    """A backward matrix of a derivation, by the engine's key and the head it names."""
    found = ours.get("backward")
    if found is None:
        return None
    if key in BACKWARD_HEAD:
        return ours["heads"][head].get(key)
    if key in BACKWARD_GROUP:
        n_heads = len(ours["heads"])
        kv_heads = len(found["groups"]["d_k_group"])
        return found["groups"][key][group_of(head, n_heads, kv_heads)]
    return found.get(BACKWARD_LESSON[key])


def compare_backward(comparison, lesson_path, ours, document):
    """The JSON's "backward": present exactly with grad_output, each gradient as numpy has
    it, every head's under "heads"."""
    found = document.get("backward")
    if ours["backward"] is None:
        if found is not None:
            comparison.problem(lesson_path, "backward", "present without grad_output")
        return
    if not isinstance(found, dict):
        comparison.problem(lesson_path, "backward", "missing from the JSON")
        return
    for key in ("d_output", "d_concat", "d_w_o", "d_w_q", "d_w_k", "d_w_v", "d_x"):
        comparison.matrix(lesson_path, f"backward.{key}", ours["backward"][key],
                          found.get(key))
    # The source's gradient: a key of cross-attention's only.
    if ours["source_tokens"] is not None:
        comparison.matrix(lesson_path, "backward.d_source", ours["backward"]["d_source"],
                          found.get("d_source"))
    elif "d_source" in found:
        comparison.problem(lesson_path, "backward.d_source", "present in self-attention")
    # The biases' gradients: keys of a lesson with those biases only.
    for key in ("d_b_q", "d_b_k", "d_b_v", "d_b_o"):
        if key in ours["backward"]:
            comparison.matrix(lesson_path, f"backward.{key}", ours["backward"][key],
                              found.get(key))
        elif key in found:
            comparison.problem(lesson_path, f"backward.{key}", "present without its bias")
    heads = found.get("heads")
    if not isinstance(heads, list) or len(heads) != len(ours["heads"]):
        comparison.problem(lesson_path, "backward.heads", "not one object per head")
        return
    for h, (head, written) in enumerate(zip(ours["heads"], heads)):
        for key in ("d_weights", "d_scores", "d_q", "d_k", "d_v"):
            comparison.matrix(lesson_path, f"backward.heads[{h}].{key}", head[key],
                              written.get(key))


# --- Generation with a K/V cache ------------------------------------------------------------

# A generation step's matrices by the engine's names, and what each is one of: a query head's,
# a K/V group's, or the lesson's (one for all heads).
DECODE_HEAD_MATRICES = ["q_t", "q_rope_t", "scores_t", "scaled_t", "weights_t", "output_t"]
DECODE_GROUP_MATRICES = ["k_t", "v_t", "k_rope_t", "k_cache", "v_cache"]
DECODE_LESSON_MATRICES = ["x_t", "concat_t", "projected_t"]
DECODE_MATRICES = DECODE_HEAD_MATRICES + DECODE_GROUP_MATRICES + DECODE_LESSON_MATRICES
# The keys of each object of the JSON's "decode" array, exactly.
DECODE_KEYS = {"q", "k_cache", "v_cache", "weights", "output"}


def decodes(lesson):
    """Whether the lesson generates with a K/V cache (`decode = true`), which the format allows
    in self-attention with the causal mask only (format 2)."""
    if not lesson.get("decode", False):
        return False
    if lesson.get("format") == 1:
        raise LessonError("decode = true needs format = 2")
    if lesson.get("source_tokens") is not None:
        raise LessonError("decode = true in cross-attention is refused by the format")
    if lesson.get("mask", "none") != "causal":
        raise LessonError('decode = true needs mask = "causal"')
    return True


def generate(lesson):
    """Generation with a K/V cache, one token at a time as a decoder runs it. It reads the
    lesson itself and shares with `forward` only the formulas of one row (`sinusoid_at`,
    `turn`, `softmax_rows`) and the grouping (`group_of`), so the two can check each other.

    For t = 0 .. seq_len - 1: x_t is the token's embedding plus the position row of t (or the
    rows t of Q, K and V given); q_t, k_t, v_t = x_t W_q, x_t W_k, x_t W_v; with RoPE q_t and
    k_t turn by t. Each K/V group appends its columns of k_t and v_t to its own caches. Each
    query head scores its q_t against its group's K_cache (t + 1 scores, no mask: the cache
    holds nothing after t), divides by sqrt(d_k) when the lesson scales, takes softmax, and
    averages its group's V_cache. concat_t is the heads' rows side by side; output_t =
    concat_t W_o (concat_t without W_o).

    Returns one dict per t by the engine's names (DECODE_MATRICES): a head's or group's matrix
    is a list with one 2-D array per head or group, a lesson's a 2-D array; None where the
    lesson has none. "output" is the final row t.
    """
    seq_len = len(lesson["tokens"])
    n_heads = lesson.get("heads", 1)
    kv_heads = lesson.get("kv_heads", n_heads)
    scale = lesson.get("scale", True)
    kind = lesson.get("positions", "none")
    rope = rope_of(lesson)
    w_o = literal_matrix(lesson, "w_o")
    embeddings = literal_matrix(lesson, "embeddings")
    if embeddings is not None:
        w_q, w_k, w_v = (literal_matrix(lesson, key) for key in ("w_q", "w_k", "w_v"))
        learned = None if isinstance(kind, str) else literal_matrix(lesson, "positions")
    else:
        given = {key: literal_matrix(lesson, key) for key in ("q", "k", "v")}
    k_cache = [[] for _ in range(kv_heads)]
    v_cache = [[] for _ in range(kv_heads)]
    steps = []
    for t in range(seq_len):
        # Only row t is made: a decoder does not have the tokens after t yet.
        if embeddings is not None:
            x_t = embeddings[t].copy()
            if kind == "sinusoidal":
                x_t = x_t + sinusoid_at(t, x_t.shape[0])
            elif learned is not None:
                x_t = x_t + learned[t]
            q_t, k_t, v_t = x_t @ w_q, x_t @ w_k, x_t @ w_v
        else:
            x_t = None
            q_t, k_t, v_t = (given[key][t] for key in ("q", "k", "v"))
        d_k, d_v = k_t.shape[0] // kv_heads, v_t.shape[0] // kv_heads
        step = {"x_t": None if x_t is None else x_t[None, :],
                "q_t": [], "k_t": [], "v_t": [], "q_rope_t": [] if rope else None,
                "k_rope_t": [] if rope else None, "k_cache": [], "v_cache": [],
                "scores_t": [], "scaled_t": [] if scale else None, "weights_t": [],
                "output_t": []}
        for g in range(kv_heads):
            key, value = k_t[g * d_k:(g + 1) * d_k], v_t[g * d_v:(g + 1) * d_v]
            step["k_t"].append(key[None, :])
            step["v_t"].append(value[None, :])
            if rope:
                # The key is cached as it will be read: turned by its own position, once.
                key = turn(rope, key, t)
                step["k_rope_t"].append(key[None, :])
            k_cache[g].append(key)
            v_cache[g].append(value)
            step["k_cache"].append(np.array(k_cache[g]))
            step["v_cache"].append(np.array(v_cache[g]))
        for h in range(n_heads):
            g = group_of(h, n_heads, kv_heads)
            query = q_t[h * d_k:(h + 1) * d_k]
            step["q_t"].append(query[None, :])
            if rope:
                query = turn(rope, query, t)
                step["q_rope_t"].append(query[None, :])
            # One row of scores: the new query against every key so far.
            scores = query[None, :] @ step["k_cache"][g].T
            step["scores_t"].append(scores)
            if scale:
                scores = scores / math.sqrt(d_k)
                step["scaled_t"].append(scores)
            weights = softmax_rows(scores)
            step["weights_t"].append(weights)
            step["output_t"].append(weights @ step["v_cache"][g])
        step["concat_t"] = np.concatenate(step["output_t"], axis=1)
        step["projected_t"] = None if w_o is None else step["concat_t"] @ w_o
        step["output"] = step["concat_t"] if w_o is None else step["projected_t"]
        steps.append(step)
    return steps


def focus_of(lesson):
    """The 0-based token a lesson's `focus` names: a label (its first token of that name) or a
    1-based position; the first token without one."""
    focus = lesson.get("focus")
    if isinstance(focus, str):
        return lesson["tokens"].index(focus)
    if isinstance(focus, int):
        return focus - 1
    return 0


def decode_matrix(ours, key, head):
    """A generation step's matrix `key` of query head `head` (its group's for a K/V group's
    matrix) at the token `show` explains without --token, the lesson's focus; None where there
    is none."""
    if not ours["decode"]:
        return None
    found = ours["decode"][ours["focus"]][key]
    if found is None or key in DECODE_LESSON_MATRICES:
        return found
    n_heads = len(ours["heads"])
    index = head
    if key in DECODE_GROUP_MATRICES:
        index = group_of(head, n_heads, len(found))
    return found[index]


def expected_values(ours, format1_only):
    """What the JSON document must hold, path by path: format 1's top-level keys (`output`
    among them, the final output), and unless `format1_only` also format 2's `x`, `positions`,
    `w_o`, `concat` and every key of every head, `heads[h].*`."""
    expected = {key: ours[key] for key in FORMAT1_MATRICES}
    if not format1_only:
        for key in ("x", "positions", "w_o", "concat", "source_x"):
            expected[key] = ours[key]
        if ours["source_tokens"] is not None:
            # Written by the binary for cross-attention only (self-attention's JSON leaves
            # them out).
            for key in ("source_embeddings", "source_positions"):
                expected[key] = ours[key]
        for h, head in enumerate(ours["heads"]):
            for key in HEAD_MATRICES + CIRCUITS:
                if key in head:
                    expected[f"heads[{h}].{key}"] = head[key]
    return expected


# --- Comparing with the JSON ----------------------------------------------------------------


def json_matrix(value):
    """A JSON matrix (rows of numbers, "-inf" / "inf" for the infinite) as a float64 array."""
    infinities = {"-inf": -np.inf, "inf": np.inf}
    rows = [[infinities[cell] if isinstance(cell, str) else cell for cell in row] for row in value]
    return np.array(rows, dtype=np.float64).reshape(len(rows), -1)


def deviation(ours, numpy):
    """|ours - numpy| / max(1, |numpy|) cell by cell: 0 where both are the same infinity, inf
    where only one is infinite or either is NaN. Agreement is a deviation <= TOLERANCE."""
    both_infinite = np.isinf(ours) & np.isinf(numpy) & (np.sign(ours) == np.sign(numpy))
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = np.abs(ours - numpy) / np.maximum(1.0, np.abs(numpy))
    scaled = np.where(both_infinite, 0.0, scaled)
    return np.where(np.isnan(scaled), np.inf, scaled)


def split_head_path(path):
    """("heads[2].weights") -> (2, "weights"); (None, path) for a top-level key."""
    if not path.startswith("heads["):
        return None, path
    index, key = path[len("heads["):].split("].", 1)
    return int(index), key


def lookup(document, path, n_heads):
    """The value at `path` ("key" or "heads[h].key"); raises KeyError when it is missing."""
    head, key = split_head_path(path)
    if head is None:
        return document[key]
    heads = document["heads"]
    if not isinstance(heads, list) or len(heads) != n_heads:
        raise KeyError(f"heads (an array of exactly {n_heads} heads)")
    return heads[head][key]


class Comparison:
    """The agreement of one run: problems in words, and the worst deviation seen."""

    def __init__(self):
        self.problems = []
        self.values = 0
        self.worst = (0.0, None)

    def problem(self, lesson, key, text):
        self.problems.append(f"{lesson}: {key}: {text}")

    def matrix(self, lesson, key, numpy, value):
        """Compares one matrix (or its absence) and records its worst deviation."""
        if numpy is None or value is None:
            if numpy is not None or value is not None:
                self.problem(lesson, key, f"numpy has {describe(numpy)}, the JSON has "
                             f"{describe(value)}")
            return
        try:
            ours = json_matrix(value)
        except (KeyError, TypeError, ValueError) as error:
            self.problem(lesson, key, f"not a matrix of numbers ({error})")
            return
        if ours.shape != numpy.shape:
            self.problem(lesson, key, f"shape {ours.shape}, numpy {numpy.shape}")
            return
        if np.isnan(numpy).any():
            self.problem(lesson, key, "the reference computed NaN (a bug in the reference)")
            return
        self.values += numpy.size
        deviations = deviation(ours, numpy)
        if deviations.size == 0:
            return
        at = np.unravel_index(np.argmax(deviations), deviations.shape)
        worst = float(deviations[at])
        where = (f"{lesson}: {key}[{at[0]}][{at[1]}] (ours {ours[at]!r}, numpy {numpy[at]!r})")
        if worst > self.worst[0]:
            self.worst = (worst, where)
        if not worst <= TOLERANCE:
            self.problem(lesson, key, f"worst deviation {worst:.3e} at [{at[0]}][{at[1]}]: "
                         f"ours {ours[at]!r}, numpy {numpy[at]!r}")

    def row(self, lesson, key, numpy, value):
        """Compares one row (numpy's 1 x n) with a JSON list of numbers, not a list of rows."""
        if not (isinstance(value, list)
                and all(isinstance(cell, (int, float, str)) for cell in value)):
            self.problem(lesson, key, f"not a row of numbers: {json.dumps(value)[:80]}")
            return
        self.matrix(lesson, key, numpy, [value])

    def exact(self, lesson, key, numpy, value):
        """Compares a value that must be equal, not near (tokens, d_k, rows, title)."""
        if numpy != value:
            self.problem(lesson, key, f"numpy has {numpy!r}, the JSON has {value!r}")

    def derivations(self, lesson, ours, document):
        """Every explained cell's value is the value of that cell."""
        for derivation in document.get("derivations") or []:
            key, row, col = derivation["matrix"], derivation["row"], derivation["col"]
            head = derivation.get("head")
            heads = ours["heads"]
            if head is not None and not (isinstance(head, int) and 0 <= head < len(heads)):
                self.problem(lesson, "derivations", f"{key}[{row}][{col}] names head {head!r}, "
                             f"but there are {len(heads)}")
                continue
            if key in HEAD_MATRICES + CIRCUITS + ONLINE_MATRICES:
                # A head's matrix: the derivation names its head when there are several.
                if head is None and len(heads) > 1:
                    self.problem(lesson, "derivations", f"{key}[{row}][{col}] names no head")
                    continue
                matrix = heads[head or 0].get(key)
            elif key in DECODE_MATRICES:
                # A generation step's: a head's or group's names its head when there are
                # several, as the whole pass's do.
                if (head is None and len(heads) > 1
                        and key not in DECODE_LESSON_MATRICES):
                    self.problem(lesson, "derivations", f"{key}[{row}][{col}] names no head")
                    continue
                matrix = decode_matrix(ours, key, head or 0)
            elif key in BACKWARD_HEAD + BACKWARD_GROUP or key in BACKWARD_LESSON:
                matrix = backward_matrix(ours, key, head or 0)
            elif key == "projected":
                matrix = ours["output"]  # concat W_o, the final output
            else:
                matrix = ours.get(key)
            if head is not None:
                key = f"heads[{head}].{key}"
            if matrix is None:
                self.problem(lesson, "derivations", f"a derivation of `{key}`, which numpy "
                             "does not have")
                continue
            if not (0 <= row < matrix.shape[0] and 0 <= col < matrix.shape[1]):
                self.problem(lesson, "derivations", f"{key}[{row}][{col}] is no cell of "
                             f"`{key}` ({matrix.shape[0]} x {matrix.shape[1]})")
                continue
            value = derivation["value"]
            cell = -np.inf if value == "-inf" else np.inf if value == "inf" else value
            self.values += 1
            found = float(deviation(np.array([float(cell)]), np.array([matrix[row, col]]))[0])
            if found > self.worst[0]:
                self.worst = (found, f"{lesson}: derivations {key}[{row}][{col}]")
            if not found <= TOLERANCE:
                self.problem(lesson, "derivations", f"{key}[{row}][{col}] is {value!r}, "
                             f"numpy {matrix[row, col]!r}")


def compare_decode(comparison, lesson_path, ours, document):
    """The JSON's "decode": null for a lesson without `decode = true`; else one object per
    token t with exactly DECODE_KEYS, each compared with the reference's generation. With one
    head "q" and "weights" are rows and the caches matrices; with several, "q" and "weights"
    are lists of a row per query head and the caches lists of a matrix per K/V group."""
    steps = ours["decode"]
    if "decode" not in document:
        comparison.problem(lesson_path, "decode", "missing from the JSON")
        return
    written = document["decode"]
    if steps is None:
        if written is not None:
            comparison.problem(lesson_path, "decode", "the lesson has no decode = true, but "
                               f"the JSON has {json.dumps(written)[:80]}, not null")
        return
    if not isinstance(written, list) or len(written) != len(steps):
        comparison.problem(lesson_path, "decode", f"not an array of {len(steps)} steps, one "
                           f"per token: {json.dumps(written)[:80]}")
        return
    several = len(ours["heads"]) > 1
    for t, (step, found) in enumerate(zip(steps, written)):
        where = f"decode[{t}]"
        # The reference's own two ways must agree before the JSON is judged by either: row t
        # of the whole causal pass is what generation makes at t.
        if deviation(step["output"], ours["output"][t:t + 1]).max() > TOLERANCE:
            comparison.problem(lesson_path, where, "the reference's generation disagrees with "
                               "its own whole pass (a bug in the reference)")
        if not isinstance(found, dict) or set(found) != DECODE_KEYS:
            keys = sorted(found) if isinstance(found, dict) else found
            comparison.problem(lesson_path, where, f"keys {keys}, want {sorted(DECODE_KEYS)}")
            continue
        comparison.row(lesson_path, f"{where}.output", step["output"], found["output"])
        for key, ours_key, compare in (("q", "q_rope_t" if step["q_rope_t"] else "q_t",
                                        comparison.row),
                                       ("weights", "weights_t", comparison.row),
                                       ("k_cache", "k_cache", comparison.matrix),
                                       ("v_cache", "v_cache", comparison.matrix)):
            numpy = step[ours_key]
            if not several:
                compare(lesson_path, f"{where}.{key}", numpy[0], found[key])
            elif not isinstance(found[key], list) or len(found[key]) != len(numpy):
                comparison.problem(lesson_path, f"{where}.{key}", f"not a list of {len(numpy)} "
                                   f"(one per {'K/V group' if 'cache' in key else 'head'})")
            else:
                for i, (one, value) in enumerate(zip(numpy, found[key])):
                    compare(lesson_path, f"{where}.{key}[{i}]", one, value)


def describe(value):
    return "null" if value is None else "a matrix"


def compare_lesson(comparison, lesson_path, json_path, format1_only):
    """Compares one lesson's JSON with the reference; problems go into `comparison`."""
    try:
        lesson = read_lesson(lesson_path)
        ours = forward(lesson)
    except (LessonError, OSError, tomllib.TOMLDecodeError, KeyError) as error:
        comparison.problem(lesson_path, "lesson", f"the reference cannot read it: {error}")
        return
    try:
        with open(json_path, encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, ValueError) as error:
        comparison.problem(lesson_path, "json", f"cannot read {json_path}: {error}")
        return
    compare_document(comparison, lesson_path, ours, document, format1_only)


def compare_document(comparison, lesson_path, ours, document, format1_only):
    """Compares a JSON document with the reference's matrices `ours`."""
    missing_heads = False
    n_heads = len(ours["heads"])
    for key, numpy in expected_values(ours, format1_only).items():
        try:
            value = lookup(document, key, n_heads)
        except (KeyError, TypeError, IndexError) as error:
            heads = document.get("heads")
            if key.startswith("heads[") and not (isinstance(heads, list)
                                                 and len(heads) == n_heads):
                # Said once for the whole array, not once for each of its keys.
                if not missing_heads:
                    comparison.problem(lesson_path, "heads", "missing from the JSON, or "
                                       f"not an array of {n_heads} heads")
                missing_heads = True
                continue
            comparison.problem(lesson_path, key, f"missing from the JSON ({error})")
            continue
        comparison.matrix(lesson_path, key, numpy, value)
    exact = ["tokens", "d_k", "fully_masked_rows", "title"]
    if not format1_only:
        exact.append("source_tokens")
    for key in exact:
        if key not in document:
            comparison.problem(lesson_path, key, "missing from the JSON")
        else:
            comparison.exact(lesson_path, key, ours[key], document[key])
    comparison.derivations(lesson_path, ours, document)
    if not format1_only:
        compare_decode(comparison, lesson_path, ours, document)
        compare_online(comparison, lesson_path, ours, document)
        compare_backward(comparison, lesson_path, ours, document)


def compare_online(comparison, lesson_path, ours, document):
    """Each head's "online": the tile, and after each tile its keys, m, l and acc."""
    heads = document.get("heads")
    if not isinstance(heads, list) or len(heads) != len(ours["heads"]):
        return  # said once already by compare_document
    for h, (head, found) in enumerate(zip(ours["heads"], heads)):
        where = f"heads[{h}].online"
        online = found.get("online") if isinstance(found, dict) else None
        if not isinstance(online, dict) or not isinstance(online.get("steps"), list):
            comparison.problem(lesson_path, where, "missing from the JSON, or no steps")
            continue
        comparison.exact(lesson_path, f"{where}.tile", ours["tile"], online.get("tile"))
        if len(online["steps"]) != len(head["online"]):
            comparison.problem(lesson_path, f"{where}.steps", f"{len(online['steps'])} "
                               f"tiles, numpy {len(head['online'])}")
            continue
        for t, (state, step) in enumerate(zip(head["online"], online["steps"])):
            at = f"{where}.steps[{t}]"
            comparison.exact(lesson_path, f"{at}.keys", state["keys"], step.get("keys"))
            comparison.row(lesson_path, f"{at}.m", state["m"].reshape(1, -1), step.get("m"))
            comparison.row(lesson_path, f"{at}.l", state["l"].reshape(1, -1), step.get("l"))
            comparison.matrix(lesson_path, f"{at}.acc", state["acc"], step.get("acc"))


def written_document(ours):
    """The JSON document a correct binary writes for these matrices (for the self-test)."""

    def rows(matrix):
        if matrix is None:
            return None
        words = {-np.inf: "-inf", np.inf: "inf"}
        return [[words.get(cell, float(cell)) for cell in row] for row in matrix]

    top = FORMAT1_MATRICES + ["x", "positions", "w_o", "concat", "source_x"]
    if ours["source_tokens"] is not None:
        top += ["source_embeddings", "source_positions"]
    document = {key: rows(ours[key]) for key in top}
    document["heads"] = [{key: rows(value) for key, value in head.items() if key != "online"}
                         for head in ours["heads"]]
    for head, written in zip(ours["heads"], document["heads"]):
        written["online"] = {"tile": ours["tile"], "steps": [{
            "keys": state["keys"], "m": rows(state["m"].reshape(1, -1))[0],
            "l": [float(x) for x in state["l"]], "acc": rows(state["acc"]),
        } for state in head["online"]]}
    document.update({key: ours[key] for key in ("tokens", "d_k", "fully_masked_rows", "title",
                                                "source_tokens")})
    last = len(ours["heads"]) - 1
    derivation = {"matrix": "weights", "row": 0, "col": 1,
                  "value": float(ours["heads"][last]["weights"][0, 1])}
    if last:
        derivation["head"] = last
    document["derivations"] = [derivation]

    def one_or_each(matrices, shape):
        """A row or matrix alone with one head; a list of them, one each, with several."""
        if len(ours["heads"]) == 1:
            return shape(matrices[0])
        return [shape(matrix) for matrix in matrices]

    document["decode"] = None if ours["decode"] is None else [{
        "q": one_or_each(step["q_rope_t"] or step["q_t"], lambda m: rows(m)[0]),
        "k_cache": one_or_each(step["k_cache"], rows),
        "v_cache": one_or_each(step["v_cache"], rows),
        "weights": one_or_each(step["weights_t"], lambda m: rows(m)[0]),
        "output": rows(step["output"])[0],
    } for step in ours["decode"]]
    return document


# --- Self-test: hand-computed values ---------------------------------------------------------


def self_test():
    """Checks the reference against values worked out by hand; returns the failures."""
    failures = []

    def check(name, ok):
        if not ok:
            failures.append(name)

    pe = sinusoidal_positions(2, 4)
    check("PE row 0 is [0, 1, 0, 1]", np.array_equal(pe[0], [0.0, 1.0, 0.0, 1.0]))
    check("PE for p=1, d_model=4 is [sin 1, cos 1, sin 0.01, cos 0.01]",
          np.allclose(pe[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)],
                      rtol=0, atol=1e-15))
    check("PE of an odd d_model ends with a sine",
          np.allclose(sinusoidal_positions(2, 3)[1, 2], math.sin(1 / 10000 ** (2 / 3)),
                      rtol=0, atol=1e-15))

    rotated = rope_rotate(np.array([[1.0, 0.0], [1.0, 0.0]]))
    check("RoPE leaves position 0 alone", np.array_equal(rotated[0], [1.0, 0.0]))
    check("RoPE of (1, 0) at p=1, i=0 is (cos 1, sin 1)",
          np.allclose(rotated[1], [math.cos(1), math.sin(1)], rtol=0, atol=1e-15))
    pair = rope_rotate(np.array([[0.0, 0.0, 1.0, 0.0]] * 2))[1]
    check("RoPE turns pair i=1 of d=4 by 1/100 at p=1",
          np.allclose(pair, [0.0, 0.0, math.cos(0.01), math.sin(0.01)], rtol=0, atol=1e-15))

    # q_m . k_n after rotation depends on m - n only: the same vectors at (m, n) = (0, 2),
    # (1, 3), (4, 6) give one dot product; another offset gives another.
    generator = np.random.default_rng(13)
    q, k = generator.normal(size=6), generator.normal(size=6)

    def rotated_dot(m, n):
        queries = rope_rotate(np.tile(q, (max(m, n) + 1, 1)))
        keys = rope_rotate(np.tile(k, (max(m, n) + 1, 1)))
        return queries[m] @ keys[n]

    same = [rotated_dot(m, m + 2) for m in (0, 1, 4)]
    check("rotated q_m . k_n depends only on m - n", max(same) - min(same) < 1e-12)
    check("rotated q_m . k_n changes with m - n", abs(rotated_dot(0, 1) - same[0]) > 1e-3)
    try:
        rope_rotate(np.zeros((1, 3)))
        check("RoPE refuses an odd d_k", False)
    except LessonError:
        pass

    check("softmax of [0, -inf] is [1, 0]",
          np.array_equal(softmax_rows(np.array([[0.0, -np.inf]])), [[1.0, 0.0]]))
    check("softmax of [0, 0] is [1/2, 1/2]",
          np.array_equal(softmax_rows(np.array([[0.0, 0.0]])), [[0.5, 0.5]]))
    check("softmax of [1000, 0] does not overflow",
          np.array_equal(softmax_rows(np.array([[1000.0, 0.0]])), [[1.0, 0.0]]))
    hidden = softmax_rows(np.array([[-np.inf, -np.inf], [0.0, 1.0]]))
    check("a fully masked row gives zeros, not NaN", np.array_equal(hidden[0], [0.0, 0.0]))
    check("softmax of [0, 1] is [1/(1+e), e/(1+e)]",
          np.allclose(hidden[1], [1 / (1 + math.e), math.e / (1 + math.e)], rtol=0, atol=1e-15))
    check("the causal mask hides later keys",
          np.array_equal(causal_mask(3) == -np.inf, np.triu(np.ones((3, 3)), 1) == 1))

    # A lesson worked by hand: Q = K = I, V = 2I, unscaled, causal. Row a sees only itself;
    # row b: softmax(0, 1) times V.
    lesson = {"title": "t", "tokens": ["a", "b"], "q": [[1, 0], [0, 1]], "k": [[1, 0], [0, 1]],
              "v": [[2, 0], [0, 2]], "scale": False, "mask": "causal"}
    result = forward(lesson)
    b = 1 / (1 + math.e)
    check("hand lesson: scores are I", np.array_equal(result["scores"], np.eye(2)))
    check("hand lesson: no scaled scores", result["scaled"] is None)
    check("hand lesson: weights", np.allclose(result["weights"], [[1, 0], [b, 1 - b]],
                                                rtol=0, atol=1e-15))
    check("hand lesson: output", np.allclose(result["output"], [[2, 0], [2 * b, 2 - 2 * b]],
                                               rtol=0, atol=1e-15))
    check("hand lesson: x and positions are null", result["x"] is None
          and result["positions"] is None)

    # Scaling by sqrt(d_k) and a finite bias: scores [[4]] / sqrt(4) = 2, plus bias 3 = 5.
    lesson = {"title": "t", "tokens": ["a"], "embeddings": [[2.0]], "w_q": [[1.0, 1.0]],
              "w_k": [[0.5, 0.5]], "w_v": [[1.0]], "mask": [[3.0]],
              "positions": [[1.0]]}
    result = forward(lesson)
    check("learned positions are added", np.array_equal(result["x"], [[3.0]]))
    check("scaling divides by sqrt(d_k)", np.array_equal(result["scaled"],
                                                         [[3 * 1.5 * 2 / math.sqrt(2)]]))
    check("a finite bias is added", np.array_equal(result["masked"],
                                                   result["scaled"] + 3.0))

    # Another formulation of each position scheme. RoPE as RoFormer's complex form (eq. 13):
    # each pair is a complex number, multiplied by e^(i p theta_i). PE as whole arrays.
    m = generator.normal(size=(5, 6))
    turned = (m[:, 0::2] + 1j * m[:, 1::2]) * np.exp(
        1j * np.arange(5)[:, None] * 10000.0 ** (-2 * np.arange(3) / 6))
    complex_form = np.empty_like(m)
    complex_form[:, 0::2], complex_form[:, 1::2] = turned.real, turned.imag
    check("RoPE equals its complex form", np.allclose(rope_rotate(m), complex_form, rtol=0,
                                                      atol=1e-14))
    # The rotate-half layout (pairs (j, j + d/2), as GPT-NeoX writes it) is another RoPE: an
    # engine that used it must disagree here, not pass.
    phi = np.arange(5)[:, None] * 10000.0 ** (-2 * np.arange(3) / 6)
    first, second = m[:, :3], m[:, 3:]
    rotate_half = np.concatenate([first * np.cos(phi) - second * np.sin(phi),
                                  first * np.sin(phi) + second * np.cos(phi)], axis=1)
    check("RoPE pairs neighbours (2i, 2i+1), not halves",
          np.abs(rope_rotate(m) - rotate_half).max() > 1e-3)
    # `rope_pairing = "half"` is that layout, as Hugging Face writes it: the same numbers as
    # the pairs (j, j + d/2) turned one by one above, and by hand for d = 4, base 100, p = 1:
    # pair 0 is columns (0, 2) turned by 1 radian, pair 1 columns (1, 3) by 100^(-1/2) = 0.1.
    check("rope_pairing half is the pairs (j, j + d/2)", np.allclose(
        rope_rotate(m, ("half", 10000.0)), rotate_half, rtol=0, atol=1e-14))
    by_hand = rope_rotate(np.array([[0.0, 0.0, 0.0, 0.0], [2.0, 3.0, 5.0, 7.0]]), ("half", 100.0))
    c1, s1, c01, s01 = math.cos(1), math.sin(1), math.cos(0.1), math.sin(0.1)
    check("half, base 100, p = 1: (2, 3, 5, 7) by hand", np.allclose(by_hand[1], [
        2 * c1 - 5 * s1, 3 * c01 - 7 * s01, 5 * c1 + 2 * s1, 7 * c01 + 3 * s01], rtol=0,
        atol=1e-15))
    check("a base of its own changes the interleaved turn", np.abs(
        rope_rotate(m, ("interleaved", 100.0)) - rope_rotate(m)).max() > 1e-3)
    p, c = np.arange(6)[:, None], np.arange(5)[None, :]
    angle = p / 10000.0 ** (2 * (c // 2) / 5)
    check("PE equals its array form", np.allclose(
        sinusoidal_positions(6, 5), np.where(c % 2 == 0, np.sin(angle), np.cos(angle)),
        rtol=0, atol=1e-15))

    # The comparison of whole documents, format 2 keys included: the document a correct
    # binary would write agrees; one wrong cell or one wrong null does not.
    lesson = {"title": "t", "tokens": ["a", "b", "c"], "q": m[:3, :4], "k": m[2:, :4],
              "v": m[:3, 4:], "positions": "rope", "scale": False,
              "mask": [[0.0, 2.5, -np.inf], [-np.inf] * 3, [0.0, 0.0, 0.0]]}
    lesson = {key: value.tolist() if isinstance(value, np.ndarray) else value
              for key, value in lesson.items()}
    result = forward(lesson)
    check("rope lesson: one fully masked row", result["fully_masked_rows"] == [1])
    check("rope lesson: scores come from the rotated Q and K", np.allclose(
        result["scores"], rope_rotate(result["q"]) @ rope_rotate(result["k"]).T, rtol=0,
        atol=0))
    document = json.loads(json.dumps(written_document(result)))
    comparison = Comparison()
    compare_document(comparison, "hand", result, document, False)
    check("a right format 2 document agrees", comparison.problems == [])
    document["heads"][0]["q_rope"][1][0] += 1e-6
    document["positions"] = [[0.0] * 4] * 3
    comparison = Comparison()
    compare_document(comparison, "hand", result, document, False)
    check("a wrong q_rope cell and a wrong positions are both reported",
          len(comparison.problems) == 2)
    del document["heads"]
    comparison = Comparison()
    compare_document(comparison, "hand", result, document, True)
    check("format 1 keys alone ignore heads", comparison.problems == [])

    # Two heads worked by hand: X = I, W_q = I (head 1 asks with column 1, head 2 with column
    # 2), one K/V group (multi-query) with k = [2, 0] and v = [1, 3], unscaled, no mask.
    # Head 1's scores: row a [2, 0], row b [0, 0]; head 2's: row a [0, 0], row b [2, 0].
    # W_o = [[1, 0], [0, 10]].
    lesson = {"title": "t", "tokens": ["a", "b"], "embeddings": [[1, 0], [0, 1]],
              "heads": 2, "kv_heads": 1, "w_q": [[1, 0], [0, 1]], "w_k": [[2], [0]],
              "w_v": [[1], [3]], "w_o": [[1, 0], [0, 10]], "scale": False}
    result = forward(lesson)
    heads = result["heads"]
    e2 = math.e ** 2
    a = (e2 * 1 + 1 * 3) / (e2 + 1)  # weights e^2/(1+e^2), 1/(1+e^2) on v = [1, 3]
    check("two heads: two heads", len(heads) == 2)
    check("two heads: head 1 scores", np.array_equal(heads[0]["scores"], [[2, 0], [0, 0]]))
    check("two heads: head 2 scores", np.array_equal(heads[1]["scores"], [[0, 0], [2, 0]]))
    check("two heads: both read the one group's keys and values",
          np.array_equal(heads[0]["k"], [[2], [0]]) and np.array_equal(heads[1]["v"], [[1], [3]]))
    check("two heads: head 1 weights", np.allclose(
        heads[0]["weights"], [[e2 / (1 + e2), 1 / (1 + e2)], [0.5, 0.5]], rtol=0, atol=1e-15))
    check("two heads: head 2 weights", np.allclose(
        heads[1]["weights"], [[0.5, 0.5], [e2 / (1 + e2), 1 / (1 + e2)]], rtol=0, atol=1e-15))
    check("two heads: concat is head 1 then head 2", np.allclose(
        result["concat"], [[a, 2], [2, a]], rtol=0, atol=1e-15))
    check("two heads: output is concat W_o", np.allclose(
        result["output"], [[a, 20], [2, 10 * a]], rtol=0, atol=1e-14))
    check("two heads: W_QK per head", np.array_equal(heads[0]["w_qk"], [[2, 0], [0, 0]])
          and np.array_equal(heads[1]["w_qk"], [[0, 0], [2, 0]]))
    check("two heads: W_OV per head uses its rows of W_o",
          np.array_equal(heads[0]["w_ov"], [[1, 0], [3, 0]])
          and np.array_equal(heads[1]["w_ov"], [[0, 10], [0, 30]]))
    check("two heads: the top level has no single head's weights", result["weights"] is None
          and result["q"] is None and result["scores"] is None)
    check("two heads: d_k is one head's", result["d_k"] == 1)
    check("groups: 4 heads in 2 groups read 0, 0, 1, 1 (repeat_interleave), not 0, 1, 0, 1",
          [group_of(h, 4, 2) for h in range(4)] == [0, 0, 1, 1])
    check("groups: 6 heads in 3 groups", [group_of(h, 6, 3) for h in range(6)]
          == [0, 0, 1, 1, 2, 2])
    try:
        group_of(0, 4, 3)
        check("groups: 3 groups cannot share 4 heads", False)
    except LessonError:
        pass
    # RoPE turns each head's d_k columns as its own vector: a 1 in the first column of head
    # 2 (column 3 of 4) at position 1 turns by 1 radian (i = 0 of d_k = 2), not by 0.01 (pair
    # i = 1 of a 4-wide vector).
    lesson = {"title": "t", "tokens": ["a", "b"], "heads": 2, "positions": "rope",
              "q": [[0, 0, 0, 0], [0, 0, 1, 0]], "k": [[0, 0, 0, 0], [0, 0, 0, 0]],
              "v": [[1, 1], [1, 1]], "w_o": [[1], [1]]}
    result = forward(lesson)
    check("rope per head: head 2 turns by 1 radian at position 1", np.allclose(
        result["heads"][1]["q_rope"][1], [math.cos(1), math.sin(1)], rtol=0, atol=1e-15))
    check("rope per head: given Q stays whole at the top level",
          np.array_equal(result["q"], [[0, 0, 0, 0], [0, 0, 1, 0]]))
    check("rope per head: no circuits without embeddings", "w_qk" not in result["heads"][0])
    # Scaling by one head's d_k: 2 heads of d_k 2 divide by sqrt 2, not by sqrt 4.
    lesson = {"title": "t", "tokens": ["a"], "heads": 2, "q": [[1, 1, 2, 2]],
              "k": [[1, 1, 1, 1]], "v": [[1, 2]], "w_o": [[1], [1]]}
    result = forward(lesson)
    check("scaling: by sqrt of one head's d_k", np.allclose(
        [head["scaled"][0, 0] for head in result["heads"]], [2 / math.sqrt(2), 4 / math.sqrt(2)],
        rtol=0, atol=1e-15))
    check("one token: concat [1, 2], output 3", np.array_equal(result["output"], [[3.0]]))

    # Whole documents with several heads: the right one agrees; heads swapped, a missing
    # head, a wrong circuit or a derivation without its head do not.
    lesson = {"title": "t", "tokens": ["a", "b", "c"], "embeddings": m[:3, :3].tolist(),
              "heads": 4, "kv_heads": 2, "w_q": m[:3, :4].tolist(), "w_k": m[2:5, :2].tolist(),
              "w_v": m[1:4, 2:4].tolist(), "w_o": m[:4, :3].tolist(), "mask": "causal",
              "positions": "sinusoidal"}
    result = forward(lesson)
    document = json.loads(json.dumps(written_document(result)))
    comparison = Comparison()
    compare_document(comparison, "hand", result, document, False)
    check("a right 4-head document agrees", comparison.problems == [])
    swapped = json.loads(json.dumps(document))
    swapped["heads"][0], swapped["heads"][1] = swapped["heads"][1], swapped["heads"][0]
    comparison = Comparison()
    compare_document(comparison, "hand", result, swapped, False)
    check("heads in the wrong order are reported", len(comparison.problems) >= 1)
    shorter = json.loads(json.dumps(document))
    shorter["heads"].pop()
    comparison = Comparison()
    compare_document(comparison, "hand", result, shorter, False)
    check("a missing head is reported once", len(comparison.problems) == 1)
    wrong = json.loads(json.dumps(document))
    wrong["heads"][3]["w_ov"][0][0] += 1e-6
    wrong["derivations"][0].pop("head")
    comparison = Comparison()
    compare_document(comparison, "hand", result, wrong, False)
    check("a wrong W_OV cell and a derivation naming no head are reported",
          len(comparison.problems) == 2)
    # A binary that gave every query head group (h mod G), not floor(h / (H/G)), would have
    # other keys in heads 1 and 2: the reference must tell.
    check("the other grouping order gives other keys", not np.array_equal(
        result["heads"][1]["k"], block(project(result["x"], result["w_k"]), 1, 1)))

    # Cross-attention worked by hand. Sinusoidal positions, one target token and two source
    # tokens, all embeddings 0, so X = PE[0] = [0, 1] and S = PE[0..2] = [[0, 1], [sin 1,
    # cos 1]]: the source counts from 0, not on from the target's last position. W = I,
    # unscaled: scores [1, cos 1], weights softmax of that, output weights S.
    lesson = {"title": "t", "tokens": ["a"], "source_tokens": ["x", "y"], "scale": False,
              "positions": "sinusoidal", "embeddings": [[0, 0]],
              "source_embeddings": [[0, 0], [0, 0]], "w_q": [[1, 0], [0, 1]],
              "w_k": [[1, 0], [0, 1]], "w_v": [[1, 0], [0, 1]]}
    result = forward(lesson)
    s1, c1 = math.sin(1), math.cos(1)
    w1 = [math.e / (math.e + math.exp(c1)), math.exp(c1) / (math.e + math.exp(c1))]
    check("cross: source_tokens kept", result["source_tokens"] == ["x", "y"])
    check("cross: x is the target's", np.array_equal(result["x"], [[0, 1]]))
    check("cross: the source's sinusoid counts from 0", np.allclose(
        result["source_x"], [[0, 1], [s1, c1]], rtol=0, atol=1e-15)
          and np.allclose(result["source_positions"], [[0, 1], [s1, c1]], rtol=0, atol=1e-15))
    check("cross: K and V come from the source", np.allclose(result["k"], [[0, 1], [s1, c1]],
                                                              rtol=0, atol=1e-15)
          and np.allclose(result["v"], result["source_x"], rtol=0, atol=0))
    check("cross: scores are 1 x 2, [1, cos 1]", result["scores"].shape == (1, 2)
          and np.allclose(result["scores"], [[1, c1]], rtol=0, atol=1e-15))
    check("cross: weights", np.allclose(result["weights"], [w1], rtol=0, atol=1e-15))
    check("cross: output is weights times the source's values", np.allclose(
        result["output"], [[w1[1] * s1, w1[0] + w1[1] * c1]], rtol=0, atol=1e-15))
    check("self-attention has no source", forward(dict(
        lesson, source_tokens=None, source_embeddings=None, embeddings=[[0, 0], [0, 0]],
        tokens=["a", "b"]))["source_x"] is None)

    # RoPE in cross-attention, Q, K, V given: Q (2 target rows) turns by target positions 0, 1,
    # K (3 source rows) by source positions 0, 1, 2. Every row is [1, 0], so q_i . k_j =
    # cos(j - i): row 0 [1, cos 1, cos 2], row 1 [cos 1, 1, cos 1].
    lesson = {"title": "t", "tokens": ["a", "b"], "source_tokens": ["x", "y", "z"],
              "positions": "rope", "scale": False, "q": [[1, 0], [1, 0]],
              "k": [[1, 0], [1, 0], [1, 0]], "v": [[1], [2], [3]]}
    result = forward(lesson)
    c2 = math.cos(2)
    check("cross rope: K turns by source positions 0, 1, 2", np.allclose(
        result["k_rope"], [[1, 0], [c1, s1], [c2, math.sin(2)]], rtol=0, atol=1e-15))
    check("cross rope: scores are cos(j - i), 2 x 3", np.allclose(
        result["scores"], [[1, c1, c2], [c1, 1, c1]], rtol=0, atol=1e-15))
    check("cross rope: no source_x in the direct form", result["source_x"] is None)
    check("cross rope: given K stays src_len rows", result["k"].shape == (3, 2))

    # A written seq x src mask: row a sees x and, tilted by 0.5, z; row b sees nothing.
    lesson = {"title": "t", "tokens": ["a", "b"], "source_tokens": ["x", "y", "z"],
              "scale": False, "q": [[1], [1]], "k": [[0], [0], [0]], "v": [[1], [2], [4]],
              "mask": [[0, -np.inf, 0.5], [-np.inf, -np.inf, -np.inf]]}
    result = forward(lesson)
    h = math.exp(0.5)
    check("cross mask: weights", np.allclose(result["weights"], [[1 / (1 + h), 0, h / (1 + h)],
                                                                 [0, 0, 0]], rtol=0, atol=1e-15))
    check("cross mask: output", np.allclose(result["output"], [[(1 + 4 * h) / (1 + h)], [0]],
                                            rtol=0, atol=1e-15))
    check("cross mask: the fully masked row", result["fully_masked_rows"] == [1])
    for name, bad in [("a causal mask", {"mask": "causal"}),
                      ("a seq x seq mask", {"mask": [[0, 0], [0, 0]]}),
                      ("K with seq_len rows", {"k": [[0], [0]], "v": [[1], [2]]}),
                      ("learned positions", {"positions": [[0]] * 2})]:
        try:
            forward(dict(lesson, **bad))
            check(f"cross: {name} is refused", False)
        except LessonError:
            pass

    # Whole cross-attention documents, 4 heads in 2 groups: the right one agrees; a source_x
    # of null, source_tokens missing, or K with seq_len rows do not.
    drawn = {key: generator.normal(size=shape).tolist() for key, shape in (
        ("embeddings", (2, 3)), ("source_embeddings", (3, 3)), ("w_q", (3, 8)),
        ("w_k", (3, 4)), ("w_v", (3, 4)), ("w_o", (8, 3)))}
    lesson = dict(drawn, title="t", tokens=["a", "b"], source_tokens=["x", "y", "z"], heads=4,
                  kv_heads=2, positions="rope", mask=[[0, 1.5, -np.inf], [0, 0, 0]])
    result = forward(lesson)
    check("cross heads: weights are 2 x 3", all(head["weights"].shape == (2, 3)
                                                for head in result["heads"]))
    check("cross heads: head 2 reads group 1's keys, projected from the source", np.array_equal(
        result["heads"][1]["k"], project(result["source_x"], result["w_k"])[:, :2]))
    check("cross heads: head 3's keys turn by source positions", np.allclose(
        result["heads"][2]["k_rope"], rope_rotate(result["heads"][2]["k"]), rtol=0, atol=0))
    document = json.loads(json.dumps(written_document(result)))
    comparison = Comparison()
    compare_document(comparison, "hand", result, document, False)
    check("a right cross-attention document agrees", comparison.problems == [])
    check("a rope cross-attention lesson has no source_positions",
          "source_positions" in document and document["source_positions"] is None)
    wrong = json.loads(json.dumps(document))
    wrong["source_x"] = None
    del wrong["source_tokens"]
    wrong["heads"][2]["k"] = wrong["heads"][2]["k"][:2]
    comparison = Comparison()
    compare_document(comparison, "hand", result, wrong, False)
    check("a null source_x, no source_tokens and a K of seq_len rows are reported",
          len(comparison.problems) == 3)
    comparison = Comparison()
    compare_document(comparison, "hand", result, wrong, True)
    check("format 1 keys alone ignore source_x, source_tokens and heads",
          comparison.problems == [])

    # Generation worked by hand: one head, Q, K, V given, RoPE, unscaled. Every q and k row
    # is [1, 0]: at t = 1 the query and the new key turn by 1 radian to [cos 1, sin 1], the key
    # cached at t = 0 stays [1, 0], so the scores are [cos 1, 1] and the output averages the
    # values 1 and 3 with softmax of them.
    lesson = {"title": "t", "format": 2, "tokens": ["a", "b"], "q": [[1, 0], [1, 0]],
              "k": [[1, 0], [1, 0]], "v": [[1], [3]], "positions": "rope", "scale": False,
              "mask": "causal", "decode": True}
    steps = forward(lesson)["decode"]
    check("decode: one step per token", len(steps) == 2)
    check("decode t=0: the cache holds one row", np.array_equal(steps[0]["k_cache"][0], [[1, 0]])
          and np.array_equal(steps[0]["v_cache"][0], [[1]]))
    check("decode t=0: all of the weight on the one key, output v_0",
          np.array_equal(steps[0]["weights_t"][0], [[1]])
          and np.array_equal(steps[0]["output"], [[1]]))
    check("decode t=1: q_t as projected, q_rope_t turned by 1 radian",
          np.array_equal(steps[1]["q_t"][0], [[1, 0]]) and np.allclose(
              steps[1]["q_rope_t"][0], [[c1, s1]], rtol=0, atol=1e-15))
    check("decode t=1: the cache keeps row 0 as cached and adds the turned key", np.allclose(
        steps[1]["k_cache"][0], [[1, 0], [c1, s1]], rtol=0, atol=1e-15))
    check("decode t=1: scores [cos 1, 1], no scaled scores", np.allclose(
        steps[1]["scores_t"][0], [[c1, 1]], rtol=0, atol=1e-15)
          and steps[1]["scaled_t"] is None)
    check("decode t=1: output", np.allclose(
        steps[1]["output"], [[(math.exp(c1) + 3 * math.e) / (math.exp(c1) + math.e)]],
        rtol=0, atol=1e-15))
    check("decode t=1: the cache is not the one of t=0 grown in place",
          steps[0]["k_cache"][0].shape == (1, 2))
    check("no decode, no generation", forward(dict(lesson, decode=False))["decode"] is None)
    for name, bad in [("a mask other than causal", {"mask": "none"}),
                      ("no mask", {"mask": None}),
                      ("format 1", {"format": 1}),
                      ("cross-attention", {"source_tokens": ["x", "y"]})]:
        try:
            decodes({key: value for key, value in dict(lesson, **bad).items()
                     if value is not None})
            check(f"decode: {name} is refused", False)
        except LessonError:
            pass

    # Generation made token by token agrees with the whole causal pass, row t at step t, for
    # every kind of positions, scaled and not, 4 heads in 2 K/V groups with W_o.
    drawn = {key: generator.normal(size=shape).tolist() for key, shape in (
        ("embeddings", (4, 3)), ("positions", (4, 3)), ("w_q", (3, 8)), ("w_k", (3, 4)),
        ("w_v", (3, 6)), ("w_o", (12, 2)))}
    for kind in ("none", "sinusoidal", "learned", "rope"):
        for scale in (True, False):
            # The focus is the last token, where `show` explains the generation steps.
            lesson = dict(drawn, title="t", format=2, tokens=["a", "b", "c", "d"], heads=4,
                          kv_heads=2, mask="causal", decode=True, scale=scale, focus="d",
                          positions=drawn["positions"] if kind == "learned" else kind)
            result = forward(lesson)
            steps = result["decode"]
            check(f"decode {kind}, scale {scale}: row t of the whole pass at every t",
                  all(np.allclose(step["output"], result["output"][t:t + 1], rtol=1e-12,
                                  atol=1e-12) for t, step in enumerate(steps)))
            # The last step's caches are the whole pass's K and V of each group (turned with
            # RoPE): heads 1 and 3 read groups 0 and 1.
            last = steps[-1]
            for h, g in ((0, 0), (2, 1)):
                head = result["heads"][h]
                check(f"decode {kind}: group {g}'s caches at the end are its K and V",
                      np.allclose(last["k_cache"][g], head["k_rope"] if kind == "rope"
                                  else head["k"], rtol=0, atol=1e-12)
                      and np.allclose(last["v_cache"][g], head["v"], rtol=0, atol=1e-12))
            check(f"decode {kind}: the cache at t has t + 1 rows",
                  [step["v_cache"][1].shape for step in steps] == [(t + 1, 3) for t in range(4)])

    # Whole documents with generation (the last lesson above: learned positions, unscaled, 4
    # heads in 2 groups): the right one agrees; a cache with one row too many, queries given
    # per group, a step with a key too many, and "decode" missing are each reported once.
    document = json.loads(json.dumps(written_document(result)))
    check("a decoding document has a row per head in q and a matrix per group in k_cache",
          len(document["decode"][1]["q"]) == 4 and len(document["decode"][1]["k_cache"]) == 2
          and len(document["decode"][1]["k_cache"][0]) == 2)
    document["derivations"] = [
        {"matrix": "k_cache", "row": 3, "col": 1, "head": 3,
         "value": float(steps[3]["k_cache"][1][3, 1])},
        {"matrix": "projected_t", "row": 0, "col": 0, "value": float(steps[3]["output"][0, 0])}]
    comparison = Comparison()
    compare_document(comparison, "hand", result, document, False)
    check("a right decoding document agrees", comparison.problems == [])
    wrong = json.loads(json.dumps(document))
    wrong["decode"][2]["k_cache"][1].append(wrong["decode"][2]["k_cache"][1][-1])
    wrong["decode"][0]["q"] = wrong["decode"][0]["q"][:2]
    wrong["decode"][3]["scores"] = []
    wrong["derivations"][0]["head"] = 0
    comparison = Comparison()
    compare_document(comparison, "hand", result, wrong, False)
    check("a cache a row too long, q per group, a key too many and a derivation of another "
          "group's cache are reported", len(comparison.problems) == 4)
    del wrong["decode"]
    wrong["derivations"][0]["head"] = 3
    comparison = Comparison()
    compare_document(comparison, "hand", result, wrong, True)
    check("format 1 keys alone ignore decode", comparison.problems == [])
    comparison = Comparison()
    compare_document(comparison, "hand", result, wrong, False)
    check("decode missing is reported", any("decode: missing" in p for p in comparison.problems))
    # One head: "q" and "weights" are rows, the caches matrices, not lists of one.
    lesson = dict(drawn, title="t", format=2, tokens=["a", "b", "c", "d"], mask="causal",
                  decode=True, w_q=[row[:2] for row in drawn["w_q"]],
                  w_k=[row[:2] for row in drawn["w_k"]], w_v=[row[:3] for row in drawn["w_v"]],
                  positions="rope")
    del lesson["w_o"]
    result = forward(lesson)
    document = json.loads(json.dumps(written_document(result)))
    comparison = Comparison()
    compare_document(comparison, "hand", result, document, False)
    check("a right one-head decoding document agrees", comparison.problems == [])
    check("one head: q is a row of numbers",
          all(isinstance(cell, float) for cell in document["decode"][1]["q"]))
    wrong = json.loads(json.dumps(document))
    wrong["decode"][1]["q"] = [wrong["decode"][1]["q"]]
    wrong["decode"][2]["k_cache"] = [wrong["decode"][2]["k_cache"]]
    wrong["decode"][3]["weights"][0] += 1e-6
    comparison = Comparison()
    compare_document(comparison, "hand", result, wrong, False)
    check("one head: q as a list of rows, the cache as a list of matrices and a wrong weight "
          "are reported", len(comparison.problems) == 3)
    # Without decode = true the JSON's "decode" is null, and must be there.
    result = forward(dict(lesson, decode=False))
    document = json.loads(json.dumps(written_document(result)))
    comparison = Comparison()
    compare_document(comparison, "hand", result, document, False)
    check("decode null without decode = true agrees", comparison.problems == []
          and document["decode"] is None)
    document["decode"] = []
    comparison = Comparison()
    compare_document(comparison, "hand", result, document, False)
    check("decode not null without decode = true is reported", len(comparison.problems) == 1)

    # The comparison itself: it must reject a wrong cell and accept the tolerance.
    numpy = np.array([[1.0, 100.0, -np.inf]])
    check("a deviation of 2e-9 at 1 fails",
          deviation(np.array([[1 + 2e-9, 100.0, -np.inf]]), numpy).max() > TOLERANCE)
    check("a deviation of 5e-8 at 100 passes",
          deviation(np.array([[1.0, 100 + 5e-8, -np.inf]]), numpy).max() <= TOLERANCE)
    check("-inf against a number fails",
          deviation(np.array([[1.0, 100.0, -1e300]]), numpy).max() > TOLERANCE)
    check("'-inf' strings are read as -inf",
          np.array_equal(json_matrix([[1, 100.0, "-inf"]]), numpy))
    comparison = Comparison()
    comparison.matrix("hand", "weights", np.array([[0.5, 0.5]]), [[0.5, 0.5 + 1e-6]])
    check("Comparison reports a wrong cell", len(comparison.problems) == 1)
    comparison = Comparison()
    comparison.matrix("hand", "scaled", None, [[1.0]])
    check("Comparison reports a matrix that should be null", len(comparison.problems) == 1)

    # The backward pass's own pieces: turning back undoes a turn, and a softmax row's
    # gradient sums to 0 (its weights' sum cannot change).
    row = np.array([0.3, -1.2, 2.0, 0.5])
    check("rope_turn_back undoes rope_turn",
          np.allclose(rope_turn_back(rope_turn(row, 3), 3), row, rtol=0, atol=1e-15))
    check("rope_turn_half_back undoes rope_turn_half",
          np.allclose(rope_turn_half_back(rope_turn_half(row, 3, 500.0), 3, 500.0), row,
                      rtol=0, atol=1e-15))
    p_row = np.array([[0.2, 0.3, 0.5]])
    g_row = np.array([[1.0, -2.0, 4.0]])
    d_s = p_row * (g_row - (p_row * g_row).sum(axis=1, keepdims=True))
    check("softmax backward: a row sums to 0", abs(d_s.sum()) < 1e-15)
    check("softmax backward by hand: avg = 1.6, dS[0] = 0.2 × (1 − 1.6) = -0.12",
          np.isclose(d_s[0, 0], -0.12, rtol=0, atol=1e-15))

    # The online softmax by hand, tiles of one key: row [1, 3, -inf] and a fully masked row.
    inf = np.inf
    states = online_tiles(np.array([[1.0, 3.0, -inf], [-inf, -inf, -inf]]),
                          np.array([[1.0], [2.0], [3.0]]), 1)
    first, second, third = states
    check("online: tile 1 raises m from -inf to 1, factor 0",
          first["m"][0] == 1 and first["rescale"][0] == 0 and first["l"][0] == 1
          and first["acc"][0, 0] == 1)
    e = np.exp(-2.0)
    check("online: tile 2 raises m to 3, factor e^-2, l = e^-2 + 1, acc = e^-2 + 2",
          second["m"][0] == 3 and np.isclose(second["rescale"][0], e, rtol=0, atol=1e-15)
          and np.isclose(second["l"][0], e + 1, rtol=0, atol=1e-15)
          and np.isclose(second["acc"][0, 0], e + 2, rtol=0, atol=1e-15))
    check("online: a masked key changes nothing and multiplies by 1",
          third["rescale"][0] == 1 and third["l"][0] == second["l"][0])
    check("online: a fully masked row keeps m = -inf, l = 0, acc = 0, factor 1",
          all(state["m"][1] == -inf and state["l"][1] == 0 and state["acc"][1, 0] == 0
              and state["rescale"][1] == 1 for state in states))
    check("online: keys of each tile", [state["keys"] for state in states]
          == [[0, 0], [1, 1], [2, 2]])
    return failures


# --- Command line ---------------------------------------------------------------------------


def main(argv):
    format1_only = "--format1-only" in argv
    args = [arg for arg in argv if arg != "--format1-only"]
    failures = self_test()
    for failure in failures:
        print(f"self-test FAILED: {failure}")
    if args == ["--self-test"]:
        if not failures:
            print("self-test: all hand-computed checks pass")
        return 1 if failures else 0
    if failures:
        return 1
    if not args or len(args) % 2:
        print(__doc__.strip().splitlines()[0])
        print("usage: attention.py [--format1-only] LESSON.toml SHOW.json [...] | --self-test")
        return 2
    comparison = Comparison()
    pairs = list(zip(args[0::2], args[1::2]))
    for lesson_path, json_path in pairs:
        compare_lesson(comparison, lesson_path, json_path, format1_only)
    for problem in comparison.problems:
        print(problem)
    worst, where = comparison.worst
    mode = "format 1 keys" if format1_only else "format 1 and format 2 keys"
    print(f"numpy reference: {len(pairs)} lessons, {comparison.values} values ({mode}), "
          f"worst deviation {worst:.3e} " + (f"at {where}" if where else "(every value exact)"))
    print(f"{len(pairs) - len({p.split(': ')[0] for p in comparison.problems})} agree, "
          f"{len(comparison.problems)} disagreements")
    return 1 if comparison.problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
