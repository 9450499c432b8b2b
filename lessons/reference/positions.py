"""The figures of the two format 2 lessons, computed with numpy as the lesson format defines
them (docs/lesson-format.md, "Format 2: positions"), independently of attn-tutor.

    /usr/bin/python3 lessons/reference/positions.py      # needs Python 3.11+ and numpy

For each lesson it prints every matrix at the lesson's decimals, then asserts that the
[expected] figures are these values correctly rounded, that every decimal its narration quotes
is one of them, and the claims the lessons make (the two "the" rows, the same score at the
same distance). Last, it checks the rotate-half note of the docs. It stops at the first wrong
figure or claim.
"""

import tomllib
from pathlib import Path

import numpy as np
from quotes import check_quotes

HERE = Path(__file__).resolve().parent


def sinusoidal(seq_len, d_model):
    """Vaswani et al. (2017), 3.5: PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(...)."""
    p = np.arange(seq_len)[:, None]
    c = np.arange(d_model)[None, :]
    angle = p / 10000 ** (2 * (c // 2) / d_model)
    return np.where(c % 2 == 0, np.sin(angle), np.cos(angle))


def rope(m):
    """Su et al. (2021), 3.2: row p turns each pair (2i, 2i+1) by p * 10000^(-2i/d_k)."""
    seq_len, d_k = m.shape
    assert d_k % 2 == 0, "RoPE needs an even d_k"
    phi = np.arange(seq_len)[:, None] * 10000.0 ** (-2 * np.arange(d_k // 2) / d_k)
    even, odd = m[:, 0::2], m[:, 1::2]
    out = np.empty_like(m)
    out[:, 0::2] = even * np.cos(phi) - odd * np.sin(phi)
    out[:, 1::2] = even * np.sin(phi) + odd * np.cos(phi)
    return out


def softmax(rows):
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def attention(lesson):
    """Every matrix of a projected-form lesson with `positions` and no mask, by key."""
    a = {"embeddings": np.array(lesson["embeddings"], float)}
    for w in ("w_q", "w_k", "w_v"):
        a[w] = np.array(lesson[w], float)
    kind = lesson.get("positions", "none")
    seq_len, d_model = a["embeddings"].shape
    if kind == "sinusoidal":
        a["positions"] = sinusoidal(seq_len, d_model)
    elif isinstance(kind, list):  # learned: a matrix written in the lesson
        a["positions"] = np.array(kind, float)
    a["x"] = a["embeddings"] + a.get("positions", 0)
    for m, w in (("q", "w_q"), ("k", "w_k"), ("v", "w_v")):
        a[m] = a["x"] @ a[w]
    q, k = a["q"], a["k"]
    if kind == "rope":
        q, k = a["q_rope"], a["k_rope"] = rope(a["q"]), rope(a["k"])
    a["scores"] = q @ k.T
    a["scaled"] = a["scores"] / np.sqrt(k.shape[1]) if lesson.get("scale", True) else None
    softmax_input = a["scaled"] if a["scaled"] is not None else a["scores"]
    a["weights"] = softmax(softmax_input)
    a["output"] = a["weights"] @ a["v"]
    a["_softmax_input"] = softmax_input
    return {key: value for key, value in a.items() if value is not None}


def row_index(tokens, key):
    return tokens.index(key) if tokens.count(key) == 1 else int(key) - 1


def check_expected(lesson, a):
    """Every printed figure is the exact value correctly rounded (default tolerance)."""
    tolerance = 0.5 * 10.0 ** -lesson["decimals"] * (1 + 1e-9)
    count = 0
    for name, figure in lesson.get("expected", {}).items():
        if isinstance(figure, list):
            figure = {str(i + 1): row for i, row in enumerate(figure)}
        for key, printed in figure.items():
            exact = a[name][row_index(lesson["tokens"], key)]
            assert np.all(np.abs(exact - printed) <= tolerance), (name, key, exact, printed)
            count += len(printed)
    return count


def quotable(lesson, a):
    """What a narration may quote, as attn-tutor's attention::quotes counts it; a subset
    (no cosines), so that a quote that passes here passes there."""
    values = [np.sqrt(a["k"].shape[1])]
    values += [m.ravel() for key, m in a.items() if not key.startswith("_")]
    values.append(softmax(a["scores"]).ravel())
    exps = np.exp(a["_softmax_input"])
    values += [exps.ravel(), exps.sum(axis=1)]
    values += [np.linalg.norm(a[m], axis=1) for m in ("q", "k", "v")]
    scale = 10.0 ** lesson["decimals"]
    values.append((np.round(a["weights"] * scale) / scale @ a["v"]).ravel())
    return np.concatenate([np.atleast_1d(v) for v in values])


def check_narration(lesson, a):
    return check_quotes(lesson["narration"], quotable(lesson, a), lesson["decimals"])


def show(name, lesson, a):
    d = lesson["decimals"]
    print(f"== {name} ({lesson['title']})")
    for key, m in a.items():
        if key.startswith("_") or key.startswith("w_"):
            continue
        print(f"{key}:\n{np.array2string(m, precision=d, suppress_small=True, floatmode='fixed')}")


def main():
    np.set_printoptions(linewidth=100)
    lessons = {}
    for name in ("positions-cat-sat-mat", "rope-same-distance"):
        lesson = tomllib.loads((HERE.parent / f"{name}.toml").read_text())
        a = attention(lesson)
        show(name, lesson, a)
        assert len(lesson["title"]) <= 60 and len(lesson["source"]) <= 200
        assert len(lesson["summary"]) <= 300
        figures = check_expected(lesson, a)
        quotes = check_narration(lesson, a)
        print(f"-- {figures} printed figures and {quotes} quoted decimals check out\n")
        lessons[name] = a

    # positions-cat-sat-mat: The (row 0) and the (row 4) share an embedding ...
    a = lessons["positions-cat-sat-mat"]
    assert np.array_equal(a["embeddings"][0], a["embeddings"][4])
    for key in ("x", "q", "k", "v", "scores", "weights", "output"):
        assert not np.allclose(a[key][0], a[key][4]), key
    # ... without positions every one of their rows would be identical;
    plain = attention({**tomllib.loads((HERE.parent / "cat-sat-mat.toml").read_text())})
    for key in ("q", "scores", "weights", "output"):
        assert np.array_equal(plain[key][0], plain[key][4]), key
    # and a dot product of two position rows depends only on the distance: cos(p - q).
    p = np.arange(6)
    assert np.allclose(a["positions"] @ a["positions"].T, np.cos(p[:, None] - p[None, :]))
    # For any even d_model it is a sum of such cosines, one per pair, and PE[p + k] is PE[p]
    # with each pair turned by k times its frequency (Vaswani et al.'s reason for the waves).
    pe, omega, k = sinusoidal(40, 8), 10000.0 ** (-np.arange(4) / 4), 5
    distance = np.arange(40)[:, None] - np.arange(40)[None, :]
    assert np.allclose(pe @ pe.T, sum(np.cos(distance * w) for w in omega))
    turned = np.empty_like(pe[:-k])
    turned[:, 0::2] = pe[:-k, 0::2] * np.cos(k * omega) + pe[:-k, 1::2] * np.sin(k * omega)
    turned[:, 1::2] = pe[:-k, 1::2] * np.cos(k * omega) - pe[:-k, 0::2] * np.sin(k * omega)
    assert np.allclose(pe[k:], turned)

    # rope-same-distance: the -> cat one step apart, at 0 -> 1 and at 3 -> 4, score the same,
    a = lessons["rope-same-distance"]
    s = a["scores"]
    assert np.isclose(s[0, 1], s[3, 4]) and not np.isclose(s[0, 1], s[3, 1])
    # every score is q_i . R(j - i) k_j: the tokens and their distance alone (on the diagonal,
    # distance 0, the unturned score); and weights differ even where scores agree.
    def turn(v, angle):
        return np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]) @ v

    n = len(s)
    by_distance = [[a["q"][i] @ turn(a["k"][j], j - i) for j in range(n)] for i in range(n)]
    assert np.allclose(s, by_distance)
    assert np.allclose(np.diag(s), np.diag(a["q"] @ a["k"].T))
    assert not np.isclose(a["weights"][0, 1], a["weights"][3, 4])

    # The rotate-half layout (GPT-NeoX, Hugging Face Llama) pairs column j with j + d/2 ...
    def rope_half(m):
        seq_len, d_k = m.shape
        phi = np.arange(seq_len)[:, None] * 10000.0 ** (-2 * np.arange(d_k // 2) / d_k)
        cos, sin = np.tile(np.cos(phi), 2), np.tile(np.sin(phi), 2)
        half = np.concatenate([-m[:, d_k // 2 :], m[:, : d_k // 2]], axis=1)  # rotate_half
        return m * cos + half * sin

    rng = np.random.default_rng(0)
    # (rope() is RoFormer's complex form: pair (2i, 2i+1) as a complex number times e^(i phi).)
    m = rng.normal(size=(6, 8))
    phi = np.arange(6)[:, None] * 10000.0 ** (-2 * np.arange(4) / 8)
    turned = (m[:, 0::2] + 1j * m[:, 1::2]) * np.exp(1j * phi)
    assert np.allclose(rope(m)[:, 0::2], turned.real) and np.allclose(rope(m)[:, 1::2], turned.imag)
    x, w_q, w_k = rng.normal(size=(6, 8)), rng.normal(size=(8, 8)), rng.normal(size=(8, 8))
    interleaved = rope(x @ w_q) @ rope(x @ w_k).T
    # ... so on the same weights it gives other scores,
    assert not np.allclose(interleaved, rope_half(x @ w_q) @ rope_half(x @ w_k).T)
    # but the same ones once the columns of W_q and W_k are permuted: 0, 2, 4, 6, 1, 3, 5, 7.
    perm = np.concatenate([np.arange(0, 8, 2), np.arange(1, 8, 2)])
    assert np.allclose(interleaved, rope_half(x @ w_q[:, perm]) @ rope_half(x @ w_k[:, perm]).T)
    # and a rotate-half model's W_q, W_k go into a lesson with the inverse: halves interleaved.
    inverse = np.argsort(perm)
    assert list(inverse) == [0, 4, 1, 5, 2, 6, 3, 7]
    half = rope_half(x @ w_q) @ rope_half(x @ w_k).T
    assert np.allclose(half, rope(x @ w_q[:, inverse]) @ rope(x @ w_k[:, inverse]).T)
    print("claims of both lessons and the rotate-half note check out")


if __name__ == "__main__":
    main()
