"""The figures of the generation lesson `generation`, computed with numpy as the lesson format
defines a causal self-attention lesson with `decode = true` (generation with a K/V cache),
independently of attn-tutor.

    /usr/bin/python3 lessons/reference/generation.py      # needs Python 3.11+ and numpy
    attn-tutor show generation --format json > g.json && \
        /usr/bin/python3 lessons/reference/generation.py g.json   # also the engine's steps

It works the lesson out twice: as one whole causal pass, and as generation, one token at a
time, each step projecting only its new token's row and appending its key and value to a
cache. It prints every matrix at the lesson's decimals, then asserts that the two agree, that
the [expected] figures are the whole pass's values correctly rounded, that every decimal the
narration quotes is one of them (written to the lesson's decimals), and the claims the
narration makes in words: which earlier word each new word attends to, the even weights of
the, how the cache grows, how many numbers it holds and how many multiply-adds it saves. It
stops at the first wrong figure or claim. Given the JSON of `attn-tutor show generation`, it
also compares the engine's generation steps (its "decode" array) with its own, to 1e-12.
"""

import json
import sys
import tomllib
from pathlib import Path

import numpy as np
from quotes import check_expected, check_quotes

HERE = Path(__file__).resolve().parent

# The earlier word each word is designed to attend to most (None: the query asks nothing).
LOOKS_AT = {"cat": "the", "sat": "cat", "on": "sat", "mat": "on"}


def softmax(rows):
    """Row softmax; a -inf cell (hidden by the mask) gets weight 0."""
    e = np.exp(rows - rows.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def whole_pass(lesson):
    """Every matrix of the whole causal pass of a one-head projected lesson without positions."""
    assert lesson["format"] == 2 and lesson["mask"] == "causal" and lesson["decode"] is True
    assert lesson.get("positions", "none") == "none" and lesson.get("heads", 1) == 1
    assert "w_o" not in lesson and lesson.get("scale", True)
    a = {"x": np.array(lesson["embeddings"], float)}
    for w in ("w_q", "w_k", "w_v"):
        a[w] = np.array(lesson[w], float)
    seq_len = len(a["x"])
    a["q"], a["k"], a["v"] = (a["x"] @ a[w] for w in ("w_q", "w_k", "w_v"))
    a["scores"] = a["q"] @ a["k"].T
    a["scaled"] = a["scores"] / np.sqrt(a["k"].shape[1])
    mask = np.zeros((seq_len, seq_len))
    mask[np.triu_indices(seq_len, k=1)] = -np.inf
    a["masked"] = a["scaled"] + mask
    a["weights"] = softmax(a["masked"])
    a["output"] = a["weights"] @ a["v"]
    return a


def generate(a):
    """Generation with a K/V cache, step by step: step t projects only x_t, appends k_t and v_t
    to the cache, and reads the cache with q_t. Nothing of the whole pass is reused."""
    d_k = a["w_k"].shape[1]
    k_cache = np.zeros((0, d_k))
    v_cache = np.zeros((0, a["w_v"].shape[1]))
    steps = []
    for x_t in a["x"]:
        q_t, k_t, v_t = x_t @ a["w_q"], x_t @ a["w_k"], x_t @ a["w_v"]
        k_cache = np.vstack([k_cache, k_t])
        v_cache = np.vstack([v_cache, v_t])
        scores_t = k_cache @ q_t
        scaled_t = scores_t / np.sqrt(d_k)
        weights_t = softmax(scaled_t)
        steps.append({
            "q": q_t, "k": k_t, "v": v_t, "k_cache": k_cache, "v_cache": v_cache,
            "scores": scores_t, "scaled": scaled_t, "weights": weights_t,
            "output": weights_t @ v_cache,
        })
    return steps


def multiply_adds(a, t):
    """Multiply-adds of step t with the cache (the new row's three projections, one row of
    scores, one output row), and of the whole pass over the t + 1 tokens so far (every token's
    projections, (t + 1) x (t + 1) scores and outputs), which a model without a cache redoes."""
    d_model, d_k = a["w_q"].shape
    d_v = a["w_v"].shape[1]
    n = t + 1
    with_cache = d_model * (2 * d_k + d_v) + d_k * n + n * d_v
    without = n * d_model * (2 * d_k + d_v) + n * d_k * n + n * n * d_v
    return with_cache, without


def quotable(a):
    """What a narration may quote: every cell of every matrix of the whole pass (the steps of
    generation hold the same numbers, checked in main), the exponentials of the masked scaled
    scores and their row sums, and sqrt(d_k)."""
    exps = np.exp(a["masked"])
    values = [np.sqrt(a["k"].shape[1]), exps.ravel(), exps.sum(axis=1)]
    values += [m.ravel() for m in a.values()]
    return np.concatenate([np.atleast_1d(v) for v in values])


def check_narration(lesson, a):
    texts = dict(lesson["narration"], summary=lesson["summary"])
    return check_quotes(texts, quotable(a), lesson["decimals"])


def compare_engine(path, steps):
    """The engine's "decode" array (one object per position t: q, k_cache, v_cache, weights,
    output) against the steps numpy generated; returns how many numbers were compared."""
    decode = json.loads(Path(path).read_text())["decode"]
    assert len(decode) == len(steps), (len(decode), len(steps))
    count = 0
    for t, (ours, step) in enumerate(zip(decode, steps)):
        assert sorted(ours) == ["k_cache", "output", "q", "v_cache", "weights"], sorted(ours)
        for key in ours:
            engine, numpy = np.array(ours[key], float), step[key]
            assert engine.shape == numpy.shape, (t, key, engine.shape, numpy.shape)
            assert np.allclose(engine, numpy, rtol=0, atol=1e-12), (t, key, engine, numpy)
            count += engine.size
    return count


def main():
    np.set_printoptions(linewidth=100)
    lesson = tomllib.loads((HERE.parent / "generation.toml").read_text())
    a = whole_pass(lesson)
    steps = generate(a)
    d = lesson["decimals"]

    def fixed(m):
        return np.array2string(np.asarray(m), precision=d, suppress_small=True, floatmode="fixed")

    tokens = lesson["tokens"]
    print(f"== generation ({lesson['title']})")
    print("tokens:", tokens)
    for key, m in a.items():
        print(f"{key}:\n{fixed(m)}")
    for t, step in enumerate(steps):
        print(f"-- step t = {t} ({tokens[t]}, token {t + 1} of {len(tokens)})")
        for key in ("q", "k", "v", "scores", "scaled", "weights", "output"):
            print(f"{key}_t: {fixed(step[key])}")
        with_cache, without = multiply_adds(a, t)
        print(f"cache: {step['k_cache'].size + step['v_cache'].size} numbers; "
              f"multiply-adds {with_cache} with the cache, {without} without")
    assert len(lesson["title"]) <= 60 and len(lesson["source"]) <= 200
    assert len(lesson["summary"]) <= 300
    figures = check_expected(lesson, a)
    quotes = check_narration(lesson, a)
    print(f"-- {figures} printed figures and {quotes} quoted decimals check out")

    seq_len = len(tokens)
    d_model, d_k = a["w_q"].shape
    d_v = a["w_v"].shape[1]
    assert (seq_len, d_model, d_k, d_v) == (6, 4, 2, 2)
    w = a["weights"]
    for t, step in enumerate(steps):
        # Each step's rows are the whole pass's row t: its query, key and value, its row of
        # scores and weights (the causal row, cut where the mask cuts it), its output.
        for key in ("q", "k", "v", "output"):
            assert np.allclose(step[key], a[key][t], rtol=0, atol=1e-12), (t, key)
        for key in ("scores", "scaled"):
            assert np.allclose(step[key], a[key][t, : t + 1], rtol=0, atol=1e-12), (t, key)
        assert np.allclose(step["weights"], w[t, : t + 1], rtol=0, atol=1e-12), t
        assert not w[t, t + 1 :].any(), t
        # The cache: one row per token so far, the earlier rows unchanged from the last step.
        assert step["k_cache"].shape == (t + 1, d_k) and step["v_cache"].shape == (t + 1, d_v)
        assert np.array_equal(step["k_cache"], a["k"][: t + 1])
        if t > 0:
            assert np.array_equal(step["k_cache"][:-1], steps[t - 1]["k_cache"])
            assert np.array_equal(step["v_cache"][:-1], steps[t - 1]["v_cache"])
        # It holds 2 x 2 = 4 numbers per token: 4, 8, ..., 24.
        assert step["k_cache"].size + step["v_cache"].size == 4 * (t + 1)

    # The designed pattern: cat, sat, on and mat each give most of their attention, over 0.84,
    # to one earlier word; the peak falls as more keys share the softmax.
    peaks = []
    for t, token in enumerate(tokens):
        if token in LOOKS_AT:
            target = tokens.index(LOOKS_AT[token])
            assert np.argmax(w[t]) == target and w[t, target] > 0.84, (token, w[t])
            peaks.append(w[t, target])
    assert [tokens.index(LOOKS_AT[t]) for t in ("cat", "sat", "on", "mat")] == [0, 1, 2, 3]
    assert np.round(peaks, 4).tolist() == [0.9442, 0.8943, 0.8915, 0.8444]
    assert all(later < earlier for earlier, later in zip(peaks, peaks[1:]))
    # The score of the word looked for is 4, and the other scores are 0 or -4.
    for t, token in enumerate(tokens):
        if token in LOOKS_AT:
            row = a["scores"][t, : t + 1]
            assert row[tokens.index(LOOKS_AT[token])] == 4 and set(row) <= {4, 0, -4}
            assert (row == 4).sum() == 1
    # Keys (and values) are the word kind in columns 1-2: the [1, 0], cat and mat [0, 1],
    # sat [-1, 0], on [0, -1]; a query is 4 times the kind looked for, from columns 3-4.
    kinds = {"the": [1, 0], "cat": [0, 1], "sat": [-1, 0], "on": [0, -1], "mat": [0, 1]}
    for t, token in enumerate(tokens):
        assert a["k"][t].tolist() == kinds[token] and a["v"][t].tolist() == kinds[token]
        wanted = kinds[LOOKS_AT[token]] if token in LOOKS_AT else [0, 0]
        assert a["q"][t].tolist() == [4 * c for c in wanted], token
    assert not a["w_q"][:2].any() and not a["w_k"][2:].any() and not a["w_v"][2:].any()
    # the asks nothing: its query is [0, 0], every score 0, its weights even: 1 at step 0,
    # 0.2 each over 5 tokens at step 4. Its two rows of the cache are the same.
    first, second = [t for t, token in enumerate(tokens) if token == "the"]
    assert (first, second) == (0, 4)
    assert not a["q"][first].any() and np.allclose(w[first, :1], 1)
    assert np.allclose(w[second, : second + 1], 0.2)
    assert np.array_equal(a["k"][first], a["k"][second])
    assert np.array_equal(a["v"][first], a["v"][second])
    # The outputs the narration reads: what each word took in.
    assert np.round(a["output"][tokens.index("sat")], 4).tolist() == [0.0, 0.8943]
    assert np.round(a["output"][second], 4).tolist() == [0.2, 0.0]
    # Every key has length 1, every query but the's length 4 (the's 0): a score is 4 times
    # the cosine of the angle between query and key, 4, 0 or -4.
    assert np.allclose(np.linalg.norm(a["k"], axis=1), 1)
    assert np.allclose(np.linalg.norm(a["q"], axis=1), [0 if t == "the" else 4 for t in tokens])
    # The row of sat the scores narration reads out.
    assert a["scores"][tokens.index("sat")].tolist() == [0, 4, 0, -4, 0, 4]
    # Unmasked, cat scores the second the as high as the first, and sat scores mat as high as
    # cat: each would split its attention between a word before it and one after it. The
    # mask leaves each row the words before it, where its largest score is the one wanted.
    cat, sat, mat = (tokens.index(token) for token in ("cat", "sat", "mat"))
    assert a["scores"][cat, second] == a["scores"][cat, first] == a["scores"][cat].max() == 4
    assert a["scores"][sat, mat] == a["scores"][sat, cat] == a["scores"][sat].max() == 4
    unmasked = softmax(a["scaled"])
    assert np.isclose(unmasked[cat, first], unmasked[cat, second])
    assert np.isclose(unmasked[sat, cat], unmasked[sat, mat])
    assert unmasked[cat].max() < 0.5 and unmasked[sat].max() < 0.5
    # e^2.8284 = 16.9188 and e^-2.8284 = 0.0591; row sums 17.9188 (cat) and 20.0370 (mat).
    sums = np.exp(a["masked"]).sum(axis=1)
    assert np.round(np.exp(2 * np.sqrt(2)), 4) == 16.9188
    assert np.round(np.exp(-2 * np.sqrt(2)), 4) == 0.0591
    assert np.round(sums[cat], 4) == 17.9188 and np.round(sums[mat], 4) == 20.0370
    # The output of sat: the's [1, 0] and sat's [-1, 0] get the same 0.0529 and cancel.
    assert w[sat, 0] == w[sat, 2] and np.round(w[sat, 0], 4) == 0.0529
    assert np.array_equal(a["v"][0], -a["v"][sat])
    # The new token's rows at sat: [0, 4], [-1, 0], [-1, 0].
    assert [steps[sat][key].tolist() for key in ("q", "k", "v")] == [[0, 4], [-1, 0], [-1, 0]]
    # The multiply-adds the tutor reports: 48 at mat with the cache, 288 without, 240 saved;
    # the step's own count grows by 4 per token (2 for the scores, 2 for the output).
    assert multiply_adds(a, 5) == (48, 288)
    assert [multiply_adds(a, t)[0] for t in range(seq_len)] == [28, 32, 36, 40, 44, 48]
    assert [multiply_adds(a, t)[1] for t in range(seq_len)] == [28, 64, 108, 160, 220, 288]
    # Projections are the step's fixed cost: 4 x 2 multiply-adds each for q, k and v.
    assert d_model * (2 * d_k + d_v) == 24
    print("claims of the lesson check out")
    if len(sys.argv) > 1:
        count = compare_engine(sys.argv[1], steps)
        print(f"the engine's generation steps agree with numpy's ({count} numbers)")


if __name__ == "__main__":
    main()
