# Baseline for the benchmark: computes the cat-sleeps lesson (lessons/cat-sleeps.toml)
# end to end with plain NumPy and prints every matrix. Our benchmark times
# `python3 benches/numpy_cat_sleeps.py` against `attn-tutor show cat-sleeps`.
import numpy as np

tokens = ["The", "cat", "sleeps"]

# seq_len x d_model = 3 x 4
embeddings = np.array(
    [
        [1, 0, 1, 0],  # The
        [0, 1, 1, 1],  # cat
        [1, 1, 0, 1],  # sleeps
    ],
    dtype=np.float64,
)

# d_model x d_k = 4 x 4
w_q = np.array(
    [
        [0.2, 0.4, 0.6, 0.8],
        [0.1, 0.3, 0.5, 0.7],
        [0.9, 0.8, 0.7, 0.6],
        [0.5, 0.4, 0.3, 0.2],
    ]
)
w_k = np.array(
    [
        [0.1, 0.3, 0.5, 0.7],
        [0.6, 0.4, 0.2, 0.1],
        [0.8, 0.9, 0.7, 0.6],
        [0.2, 0.1, 0.3, 0.4],
    ]
)
w_v = np.array(
    [
        [0.3, 0.5, 0.7, 0.9],
        [0.6, 0.4, 0.2, 0.1],
        [0.8, 0.9, 0.7, 0.6],
        [0.5, 0.4, 0.3, 0.2],
    ]
)


def softmax(x):
    # Subtracting the row maximum does not change the result but avoids overflow.
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


q = embeddings @ w_q
k = embeddings @ w_k
v = embeddings @ w_v
scores = q @ k.T
d_k = k.shape[1]
scaled = scores / np.sqrt(d_k)
weights = softmax(scaled)
output = weights @ v

np.set_printoptions(precision=3, suppress=True, floatmode="fixed")
for name, matrix in [
    ("q", q),
    ("k", k),
    ("v", v),
    ("scores", scores),
    ("scaled", scaled),
    ("weights", weights),
    ("output", output),
]:
    print(f"{name}:")
    print(matrix)
    print()
