"""The figures of the cross-attention lesson `translation`, computed with numpy as the lesson
format defines cross-attention (issue 15: `source_tokens`, `source_embeddings`), independently
of attn-tutor.

    /usr/bin/python3 lessons/reference/translation.py      # needs Python 3.11+ and numpy

It prints every matrix at the lesson's decimals, then asserts that the [expected] figures are
these values correctly rounded, that every decimal the narration quotes is one of them, and the
claims the narration makes in words (which English word each French word attends to, that the
alignment is not the diagonal, why no mask is needed). It stops at the first wrong figure or
claim.
"""

import tomllib
from pathlib import Path

import numpy as np
from quotes import check_expected, check_quotes

HERE = Path(__file__).resolve().parent

# Which English word each French word translates: the alignment the weights are designed for.
ALIGNED = {"le": "the", "chat": "cat", "noir": "black", "dort": "sleeping"}


def softmax(rows):
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def cross_attention(lesson):
    """Every matrix of a one-head, projected, unmasked cross-attention lesson without positions:
    queries from the target X, keys and values from the source S."""
    a = {"embeddings": np.array(lesson["embeddings"], float),
         "source_embeddings": np.array(lesson["source_embeddings"], float)}
    for w in ("w_q", "w_k", "w_v"):
        a[w] = np.array(lesson[w], float)
    assert lesson.get("positions", "none") == "none" and lesson.get("mask", "none") == "none"
    assert lesson.get("heads", 1) == 1 and "w_o" not in lesson
    x, s = a["embeddings"], a["source_embeddings"]  # X: seq_len rows, S: src_len rows
    a["q"] = x @ a["w_q"]
    a["k"] = s @ a["w_k"]
    a["v"] = s @ a["w_v"]
    a["scores"] = a["q"] @ a["k"].T                 # seq_len x src_len
    a["scaled"] = a["scores"] / np.sqrt(a["k"].shape[1])
    a["weights"] = softmax(a["scaled"])
    a["output"] = a["weights"] @ a["v"]
    return a


def quotable(a):
    """What a narration may quote: every cell of every matrix, the exponentials of the scaled
    scores and their row sums, sqrt(d_k), and each output's distance from its aligned value."""
    exps = np.exp(a["scaled"])
    values = [np.sqrt(a["k"].shape[1]), exps.ravel(), exps.sum(axis=1)]
    values += [m.ravel() for m in a.values()]
    return np.concatenate([np.atleast_1d(v) for v in values])


def check_narration(lesson, a):
    texts = dict(lesson["narration"], summary=lesson["summary"])
    return check_quotes(texts, quotable(a))


def main():
    np.set_printoptions(linewidth=100)
    lesson = tomllib.loads((HERE.parent / "translation.toml").read_text())
    a = cross_attention(lesson)
    d = lesson["decimals"]
    print(f"== translation ({lesson['title']})")
    print("rows:", lesson["tokens"], " columns:", lesson["source_tokens"])
    for key, m in a.items():
        print(f"{key}:\n{np.array2string(m, precision=d, suppress_small=True, floatmode='fixed')}")
    assert len(lesson["title"]) <= 60 and len(lesson["source"]) <= 200
    assert len(lesson["summary"]) <= 300
    figures = check_expected(lesson, a)
    quotes = check_narration(lesson, a)
    print(f"-- {figures} printed figures and {quotes} quoted decimals check out")

    tokens, source = lesson["tokens"], lesson["source_tokens"]
    seq_len, src_len = len(tokens), len(source)
    w = a["weights"]
    # 4 French words read 5 English ones: every matrix after the projection is 4 x 5.
    assert (seq_len, src_len) == (4, 5)
    assert a["q"].shape[0] == 4 and a["k"].shape[0] == a["v"].shape[0] == 5
    assert a["scores"].shape == a["weights"].shape == (4, 5)
    # Each French word gives more than 0.8 to the English word it translates, and that is its
    # largest weight.
    columns = [source.index(ALIGNED[t]) for t in tokens]
    for i, j in enumerate(columns):
        assert w[i, j] > 0.8 and np.argmax(w[i]) == j, (tokens[i], w[i])
    # Not the diagonal: chat (row 2) reads column 3, noir (row 3) column 2; dort reads column 5.
    assert columns == [0, 2, 1, 4]
    assert any(i != j for i, j in enumerate(columns))
    # Every row: 4 on the translation, -4 on the opposite key, 0 on the rest; is scores 0
    # everywhere (its key is [0, 0]).
    for i, j in enumerate(columns):
        assert a["scores"][i, j] == 4 and sorted(a["scores"][i]) == [-4, 0, 0, 0, 4]
    assert not a["scores"][:, source.index("is")].any() and not a["k"][source.index("is")].any()
    # The same numbers in every row: 0.847 on the translation, 0.050 on the two keys at right
    # angles and on is, 0.003 on the opposite key.
    for row in w:
        assert np.allclose(sorted(row), sorted(w[0])) and np.isclose(row.sum(), 1)
    assert np.round(w.max(), 3) == 0.847 and np.round(w.min(), 3) == 0.003
    assert np.round(np.exp(a["scaled"]).sum(axis=1), 3).tolist() == [19.978] * 4
    # Every query and every key but that of "is" has length 2: only the direction decides.
    assert np.allclose(np.linalg.norm(a["q"], axis=1), 2)
    lengths = np.linalg.norm(a["k"], axis=1)
    assert np.allclose(np.delete(lengths, source.index("is")), 2)
    assert lengths[source.index("is")] == 0
    # The queries of a French word and the key of its translation are the same vector.
    for i, j in enumerate(columns):
        assert np.array_equal(a["q"][i], a["k"][j])
    # W_q reads only the French columns 1-2, W_k and W_v only the English columns 3-4, and the
    # two languages use different columns.
    assert not a["w_q"][2:].any() and not a["w_k"][:2].any() and not a["w_v"][:2].any()
    assert not a["embeddings"][:, 2:].any() and not a["source_embeddings"][:, :2].any()
    # Each output is 0.844 times the value of the aligned word: in chat's row the values at
    # right angles cancel and the opposite value takes 0.003 away.
    for i, j in enumerate(columns):
        assert np.allclose(a["output"][i], (w[i, j] - w[i].min()) * a["v"][j])
    assert np.round(a["output"][1], 3).tolist() == [0.0, 0.844]
    assert np.round(a["output"][2], 3).tolist() == [-0.844, 0.0]
    # No positions: the match is by meaning alone. Reordering the English words reorders the
    # columns of the weights and changes nothing else.
    order = [4, 2, 0, 3, 1]
    shuffled = dict(lesson, source_embeddings=[lesson["source_embeddings"][o] for o in order])
    b = cross_attention(shuffled)
    assert np.allclose(b["weights"], w[:, order]) and np.allclose(b["output"], a["output"])
    # Why no mask: a causal mask (key j hidden from query i when j > i) would hide from chat
    # (position 1) its translation cat (position 2), and from dort the word sleeping.
    causal_hides = [j > i for i, j in enumerate(columns)]
    assert causal_hides == [False, True, False, True]
    print("claims of the lesson check out")


if __name__ == "__main__":
    main()
