"""The figures of the two multi-head lessons, computed with numpy as the lesson format defines
heads (issue 14: `heads`, `kv_heads`, `w_o`), independently of attn-tutor.

    /usr/bin/python3 lessons/reference/heads.py      # needs Python 3.11+ and numpy

For each lesson it prints every matrix of every head at the lesson's decimals, then asserts
that the [expected] figures (top level and [expected.heads.N], heads numbered from 1) are these
values correctly rounded, that every decimal its narration quotes is one of them, and the
claims the narration makes in words (which token each head attends to, how much the K/V cache
holds). It stops at the first wrong figure or claim.
"""

import tomllib
from pathlib import Path

import numpy as np
from quotes import check_quotes

HERE = Path(__file__).resolve().parent


def softmax(rows):
    """Row softmax; a -inf cell (hidden by the mask) gets weight 0."""
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def causal(seq_len):
    mask = np.zeros((seq_len, seq_len))
    mask[np.triu_indices(seq_len, k=1)] = -np.inf
    return mask


def attention(lesson):
    """Every matrix of a projected-form lesson with heads: the lesson's own ("top") and one
    dict per query head, by the keys [expected] uses."""
    H = lesson.get("heads", 1)
    G = lesson.get("kv_heads", H)
    assert H % G == 0
    top = {"embeddings": np.array(lesson["embeddings"], float)}
    for w in ("w_q", "w_k", "w_v", "w_o"):
        top[w] = np.array(lesson[w], float)
    positions = lesson.get("positions", "none")
    if isinstance(positions, list):  # learned: a matrix written in the lesson
        top["positions"] = np.array(positions, float)
    else:
        assert positions == "none", "this reference reads learned positions or none"
    top["x"] = top["embeddings"] + top.get("positions", 0)
    seq_len = top["x"].shape[0]
    d_k = top["w_q"].shape[1] // H
    d_v = top["w_v"].shape[1] // G
    assert top["w_k"].shape[1] == G * d_k and top["w_o"].shape[0] == H * d_v
    mask = {"none": np.zeros((seq_len, seq_len)), "causal": causal(seq_len)}[lesson["mask"]]
    heads = []
    for h in range(H):
        g = h // (H // G)  # repeat_interleave order: heads 0..H/G-1 use group 0, ...
        w_q = top["w_q"][:, h * d_k : (h + 1) * d_k]
        w_k = top["w_k"][:, g * d_k : (g + 1) * d_k]
        w_v = top["w_v"][:, g * d_v : (g + 1) * d_v]
        w_o = top["w_o"][h * d_v : (h + 1) * d_v]
        a = {"group": g, "q": top["x"] @ w_q, "k": top["x"] @ w_k, "v": top["x"] @ w_v}
        a["scores"] = a["q"] @ a["k"].T
        a["scaled"] = a["scores"] / np.sqrt(d_k)
        a["masked"] = a["scaled"] + mask
        a["weights"] = softmax(a["masked"])
        a["output"] = a["weights"] @ a["v"]
        a["w_qk"] = w_q @ w_k.T
        a["w_ov"] = w_v @ w_o
        heads.append(a)
    top["concat"] = np.concatenate([a["output"] for a in heads], axis=1)
    top["output"] = top["concat"] @ top["w_o"]
    top["_d_k"], top["_d_v"], top["_G"] = d_k, d_v, G
    return top, heads


def row_index(tokens, key):
    return tokens.index(key) if tokens.count(key) == 1 else int(key) - 1


def check_figures(lesson, figures, matrices, tolerance):
    count = 0
    for name, figure in figures.items():
        if name == "heads":
            continue
        if isinstance(figure, list):
            figure = {str(i + 1): row for i, row in enumerate(figure)}
        for key, printed in figure.items():
            exact = matrices[name][row_index(lesson["tokens"], key)]
            assert np.all(np.abs(exact - printed) <= tolerance), (name, key, exact, printed)
            count += len(printed)
    return count


def check_expected(lesson, top, heads):
    """Every printed figure is the exact value correctly rounded (default tolerance)."""
    tolerance = 0.5 * 10.0 ** -lesson["decimals"] * (1 + 1e-9)
    expected = lesson.get("expected", {})
    count = check_figures(lesson, expected, top, tolerance)
    for number, figures in expected.get("heads", {}).items():
        count += check_figures(lesson, figures, heads[int(number) - 1], tolerance)
    return count


def quotable(top, heads):
    """What a narration may quote: every cell of every matrix, each head's exponentials and
    their row sums, and sqrt(d_k)."""
    values = [np.sqrt(top["_d_k"])]
    values += [m.ravel() for key, m in top.items() if not key.startswith("_")]
    for a in heads:
        values += [m.ravel() for key, m in a.items() if key != "group"]
        exps = np.exp(a["masked"])
        values += [exps.ravel(), exps.sum(axis=1)]
    return np.concatenate([np.atleast_1d(v) for v in values])


def check_narration(lesson, top, heads):
    return check_quotes(lesson["narration"], quotable(top, heads))


def show(name, lesson, top, heads):
    d = lesson["decimals"]

    def print_matrix(key, m):
        print(f"{key}:\n{np.array2string(m, precision=d, suppress_small=True, floatmode='fixed')}")

    print(f"== {name} ({lesson['title']})")
    for key, m in top.items():
        if not key.startswith("_") and key not in ("w_q", "w_k", "w_v"):
            print_matrix(key, m)
    for h, a in enumerate(heads):
        print(f"-- head {h + 1} (K/V group {a['group'] + 1})")
        for key, m in a.items():
            if key != "group":
                print_matrix(key, m)


def load(name):
    lesson = tomllib.loads((HERE.parent / f"{name}.toml").read_text())
    top, heads = attention(lesson)
    show(name, lesson, top, heads)
    assert len(lesson["title"]) <= 60 and len(lesson["source"]) <= 200
    assert len(lesson["summary"]) <= 300
    figures = check_expected(lesson, top, heads)
    quotes = check_narration(lesson, top, heads)
    print(f"-- {figures} printed figures and {quotes} quoted decimals check out\n")
    return lesson, top, heads


def main():
    np.set_printoptions(linewidth=100)

    # two-heads: head 1 looks at the previous token, head 2 at the token itself.
    lesson, top, heads = load("two-heads")
    seq_len = len(lesson["tokens"])
    previous, same = heads[0]["weights"], heads[1]["weights"]
    for i in range(1, seq_len):
        assert np.argmax(previous[i]) == i - 1 and previous[i, i - 1] > 0.8, i
    for i in range(seq_len):
        assert np.argmax(same[i]) == i and same[i, i] > 0.8, i
    assert (np.round(previous[2:].max(axis=1), 4) == 0.8943).all()  # fox, ran, home
    assert np.isclose(same[1:].max(axis=1).min(), same[4, 4])  # 0.9409 ... 0.9442
    assert np.isclose(same[1:].max(axis=1).max(), same[1, 1])
    # The first token has nothing before it: both heads can only look at it.
    assert previous[0, 0] == 1.0 and same[0, 0] == 1.0
    # Head 1's score is 4 * ((i-1)^2 - (j-(i-1))^2): highest at j = i - 1, 4 less one step
    # away, 16 less two steps away; head 2's score is 4 j, 4 more for each later key.
    i, j = np.arange(seq_len)[:, None], np.arange(seq_len)[None, :]
    assert np.array_equal(heads[0]["scores"], 4 * ((i - 1) ** 2 - (j - (i - 1)) ** 2))
    assert np.array_equal(heads[1]["scores"], np.broadcast_to(4 * j, (seq_len, seq_len)))
    # Unmasked, head 1 already peaks at the word before; head 2 at home, the last word.
    assert [int(np.argmax(row)) for row in heads[0]["scores"][1:]] == list(range(seq_len - 1))
    assert (np.argmax(heads[1]["scores"], axis=1) == seq_len - 1).all()
    # Neither head looks at a word's content: the same scores whatever the embeddings say.
    for a in heads:
        assert not a["w_qk"][:2].any() and not a["w_qk"][:, :2].any()
    # W_o is the identity: the output is the concatenation, head 1 in columns 1-2, head 2 in 3-4.
    assert np.array_equal(top["w_o"], np.eye(4))
    assert np.array_equal(top["output"][:, :2], heads[0]["output"])
    assert np.array_equal(top["output"][:, 2:], heads[1]["output"])
    # One head cannot put more than 0.5 on both red and fox: its row sums to 1.
    assert np.allclose(previous.sum(axis=1), 1) and np.allclose(same.sum(axis=1), 1)

    # gqa: 4 query heads share 2 K/V groups; heads 1, 2 read group 1 and heads 3, 4 group 2.
    lesson, top, heads = load("gqa")
    H, G, d_k, d_v = lesson["heads"], top["_G"], top["_d_k"], top["_d_v"]
    assert (H, G, d_k, d_v) == (4, 2, 2, 2)
    assert [a["group"] for a in heads] == [0, 0, 1, 1]
    assert np.array_equal(heads[0]["k"], heads[1]["k"]) and np.array_equal(heads[2]["v"], heads[3]["v"])
    assert not np.array_equal(heads[0]["k"], heads[2]["k"])
    # Same keys, other questions: the weights of heads that share a group differ.
    assert not np.allclose(heads[0]["weights"], heads[1]["weights"])
    assert not np.allclose(heads[2]["weights"], heads[3]["weights"])
    # The scores the narration reads out, the same in every row (sun, rain, wind, snow).
    for a, row in zip(heads, ([4, 0, 0, 0], [0, 4, 0, 2], [0, 2, 4, 2], [0, 2, 2, 4])):
        assert (a["scores"] == row).all()
    # The row of snow: each head gives most to another word (sun, rain, wind, snow).
    assert [int(np.argmax(a["weights"][3])) for a in heads] == [0, 1, 2, 3]
    # Every query of a head is the same vector.
    for a in heads:
        assert (a["q"] == a["q"][0]).all()
    # The K/V cache: per token G * (d_k + d_v) numbers instead of H * (d_k + d_v).
    seq_len = len(lesson["tokens"])
    assert (G * (d_k + d_v), H * (d_k + d_v)) == (8, 16)
    assert (seq_len * G * (d_k + d_v), seq_len * H * (d_k + d_v)) == (32, 64)
    assert top["w_k"].shape[1] + top["w_v"].shape[1] == 8
    print("claims of both lessons check out")


if __name__ == "__main__":
    main()
