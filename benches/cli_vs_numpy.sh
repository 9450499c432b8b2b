#!/usr/bin/env bash
# Whole-process time of `attn-tutor show cat-sleeps` beside a Python/numpy script that computes
# the same example (benches/numpy_cat_sleeps.py). Needs hyperfine and python3 with numpy:
#   apt-get install -y hyperfine && pip install numpy
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
hyperfine --warmup 5 --runs 50 --shell=none \
  'target/release/attn-tutor show cat-sleeps' \
  'target/release/attn-tutor show cat-sleeps --format json' \
  'python3 benches/numpy_cat_sleeps.py'
