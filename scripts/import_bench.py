#!/usr/bin/env python3
"""How long `attn-tutor import` takes, and how much memory, on a GPT-2-small-shaped checkpoint.

Writes (once, into FOLDER, default /tmp/attn-import-bench) a checkpoint of GPT-2 small's
shape: 12 layers x 768, 12 heads, vocabulary 50257, context 1024, F32, random N(0, 0.02)
weights (548 MB). Then imports layer 11 on a text of 16 GPT-2 tokens, RUNS times each:
- one head to a new lesson file (`--head 0 -o`): read, compute, write, and read back as
  `check` would;
- every head into the tutor (`--head all`, in a tmux window of 120x40): the time until its
  first screen shows, then the tutor is quit.
It prints the wall time and the peak resident memory of each run next to the bytes of the
tensors the import reads: the 16 rows of wte and wpe, the 11 blocks before layer 11 whole,
and layer 11's ln_1 and attention.

    scripts/import_bench.py [--binary target/release/attn-tutor] [--runs 3] [FOLDER]

The goal (README, Real models): at most 2 s, and a peak of at most the tensors read + 100 MB.
"""

import argparse
import json
import os
import shlex
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

D, LAYERS, VOCABULARY, CONTEXT = 768, 12, 50257, 1024
# 16 GPT-2 tokens.
TEXT = "When Mary and John went to the store, John gave a drink to Mary."
LAYER = 11


def write_checkpoint(folder):
    rng = np.random.default_rng(0)
    tensors = []

    def add(name, shape, scale=0.02):
        tensors.append((name, (rng.standard_normal(shape) * scale).astype("<f4")))

    def ones(name, width):
        tensors.append((name, np.ones(width, "<f4")))

    add("transformer.wte.weight", (VOCABULARY, D))
    add("transformer.wpe.weight", (CONTEXT, D), 0.01)
    for layer in range(LAYERS):
        at = f"transformer.h.{layer}."
        ones(at + "ln_1.weight", D)
        add(at + "ln_1.bias", (D,))
        add(at + "attn.c_attn.weight", (D, 3 * D))
        add(at + "attn.c_attn.bias", (3 * D,))
        add(at + "attn.c_proj.weight", (D, D))
        add(at + "attn.c_proj.bias", (D,))
        ones(at + "ln_2.weight", D)
        add(at + "ln_2.bias", (D,))
        add(at + "mlp.c_fc.weight", (D, 4 * D))
        add(at + "mlp.c_fc.bias", (4 * D,))
        add(at + "mlp.c_proj.weight", (4 * D, D))
        add(at + "mlp.c_proj.bias", (D,))
    ones("transformer.ln_f.weight", D)
    add("transformer.ln_f.bias", (D,))
    header, offset = {}, 0
    for name, data in tensors:
        header[name] = {"dtype": "F32", "shape": list(data.shape),
                        "data_offsets": [offset, offset + data.nbytes]}
        offset += data.nbytes
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(os.path.join(folder, "model.safetensors"), "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for _, data in tensors:
            out.write(data.tobytes())
    config = {"model_type": "gpt2", "n_embd": D, "n_head": 12, "n_layer": LAYERS,
              "n_positions": CONTEXT, "vocab_size": VOCABULARY, "layer_norm_epsilon": 1e-5,
              "activation_function": "gelu_new", "bos_token_id": 50256}
    with open(os.path.join(folder, "config.json"), "w") as out:
        json.dump(config, out)


def bytes_read():
    """The bytes of the tensors an import of layer 11 on 16 tokens reads (F32)."""
    block = (D + D) + (D * 3 * D + 3 * D) + (D * D + D) + (D + D) + (D * 4 * D + 4 * D) \
        + (4 * D * D + D)
    layer = (D + D) + (D * 3 * D + 3 * D) + (D * D + D)
    return 4 * (2 * 16 * D + LAYER * block + layer)


def to_file(binary, folder, output):
    """One head to a lesson file: (seconds, peak bytes, file bytes)."""
    started = time.perf_counter()
    result = subprocess.run(
        ["/usr/bin/time", "-f", "%M", binary, "import", folder, "--text", TEXT, "--layer",
         str(LAYER), "--head", "0", "-o", output],
        capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"import failed: {result.stderr}")
    peak_kib = int(result.stderr.strip().splitlines()[-1])
    return elapsed, peak_kib * 1024, os.path.getsize(output)


def to_tutor(binary, folder, scratch):
    """Every head in the tutor: (seconds to its first screen, peak bytes)."""
    peak = os.path.join(scratch, "peak")
    session = f"import-bench-{os.getpid()}"
    command = " ".join([
        "/usr/bin/time", "-f", "%M", "-o", shlex.quote(peak), shlex.quote(binary), "import",
        shlex.quote(folder), "--text", shlex.quote(TEXT), "--layer", str(LAYER), "--head", "all"])
    environment = dict(os.environ, XDG_DATA_HOME=scratch)
    started = time.perf_counter()
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "40", command],
                   check=True, env=environment)
    elapsed = None
    while time.perf_counter() - started < 60:
        screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session],
                                capture_output=True, text=True).stdout
        if f"layer {LAYER} all 12 heads" in screen:
            elapsed = time.perf_counter() - started
            break
        time.sleep(0.02)
    # q leaves the lesson, q again the picker.
    for _ in range(3):
        subprocess.run(["tmux", "send-keys", "-t", session, "q"], capture_output=True)
        time.sleep(0.3)
    subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    deadline = time.perf_counter() + 10
    while not os.path.exists(peak) or not open(peak).read().strip():
        if time.perf_counter() > deadline:
            sys.exit("the tutor did not quit")
        time.sleep(0.05)
    if elapsed is None:
        sys.exit("the tutor did not show the lesson within 60 s")
    kib = int(open(peak).read().strip().splitlines()[-1])
    os.remove(peak)
    return elapsed, kib * 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("folder", nargs="?", default="/tmp/attn-import-bench")
    parser.add_argument("--binary", default="target/release/attn-tutor")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.makedirs(args.folder, exist_ok=True)
    if not os.path.exists(os.path.join(args.folder, "model.safetensors")):
        print(f"writing a GPT-2-small-shaped checkpoint into {args.folder} (548 MB)")
        write_checkpoint(args.folder)
    read = bytes_read()
    print(f"tensors read: {read / 1e6:.1f} MB; the goal: <= 2 s, peak <= {read / 1e6 + 100:.1f} MB")
    with tempfile.TemporaryDirectory() as scratch:
        for number in range(args.runs):
            output = os.path.join(scratch, f"head-0-{number}.toml")
            elapsed, peak, size = to_file(args.binary, args.folder, output)
            print(f"layer {LAYER}, head 0 to a file: {elapsed:.2f} s, peak {peak / 1e6:.1f} MB, "
                  f"lesson file {size / 1e6:.1f} MB")
        for number in range(args.runs):
            elapsed, peak = to_tutor(os.path.abspath(args.binary), args.folder, scratch)
            print(f"layer {LAYER}, every head in the tutor: first screen after {elapsed:.2f} s, "
                  f"peak {peak / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
