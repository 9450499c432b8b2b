#!/usr/bin/env bash
# `show --format json` beside numpy + orjson writing the same numbers, both timed in the
# process (the interpreter's and numpy's start, about 100 ms, would otherwise be most of
# Python's time): `cargo bench --bench engine -- "show json"` reads, computes and writes each
# lesson into a sink (and "show json stages" times reading the command line, loading and
# computing alone, to tell the parts apart, and "from the loaded lesson, compute + workings +
# write", what numpy's clock times: the command from the lesson already loaded, every working
# made); benches/numpy_json.py computes the same
# matrices with numpy from the lesson's inputs, checks them against attn-tutor's, and times
# computing and writing them.
# Then each side's whole process, start to exit, timed from outside with hyperfine: `attn-tutor
# show` reading the lesson's TOML, against python3 starting, importing numpy and orjson, reading
# the inputs from the JSON and writing the same document once (`numpy_json.py --once`).
# Needs python3 with numpy and orjson (pip install numpy orjson) and hyperfine.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The larger lesson, as benches/engine.rs writes it: 64 tokens × 64 dims, 8 heads, W_o, causal.
{
  echo 'format = 2'
  echo 'title = "64 tokens, 8 heads"'
  echo 'heads = 8'
  echo 'mask = "causal"'
  printf 'tokens = ['
  for i in $(seq 0 63); do printf '"t%d"%s' "$i" "$([ "$i" -lt 63 ] && echo ', ')"; done
  echo ']'
  echo 'embeddings = { random = "normal", seed = 9, shape = [64, 64] }'
  for pair in w_q:1 w_k:2 w_v:3 w_o:4; do
    echo "${pair%%:*} = { random = \"normal\", seed = ${pair##*:}, shape = [64, 64] }"
  done
} > "$dir/large.toml"
for lesson in cat-sleeps two-heads "$dir/large.toml"; do
  json="$dir/$(basename "$lesson" .toml).json"
  target/release/attn-tutor show "$lesson" --format json > "$json"
  echo "== $(basename "$lesson" .toml): $(wc -c < "$json") bytes indented, $(target/release/attn-tutor show "$lesson" --format json --compact | wc -c) compact"
  python3 benches/numpy_json.py "$json" --runs 50 --indent
  python3 benches/numpy_json.py "$json" --runs 50
done
for lesson in cat-sleeps two-heads; do
  json="$dir/$lesson.json"
  hyperfine -N --warmup 5 --runs 100 \
    "target/release/attn-tutor show $lesson --format json" \
    "target/release/attn-tutor show $lesson --format json --compact"
  hyperfine -N --warmup 2 --runs 20 \
    "python3 benches/numpy_json.py $json --once --indent" \
    "python3 benches/numpy_json.py $json --once"
done
cargo bench --bench engine -- "show json"
