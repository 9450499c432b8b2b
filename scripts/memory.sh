#!/bin/sh
# Peak memory (RSS) of attn-tutor with the largest lesson within the limits
# (tests/fixtures/largest.toml: 256 tokens, 256 x 1024 embeddings, 1024 x 1024 weights,
# 8 decimals): `show` in each format, and the tutor through every step, an edit of a generated
# cell, a save and an undo. Needs GNU time (/usr/bin/time) and tmux.
#
#   cargo build --release && scripts/memory.sh [BINARY]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/target/release/attn-tutor}
lesson=$root/tests/fixtures/largest.toml
scratch=$(mktemp -d)
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$scratch"' EXIT
session=${MEMORY_SESSION:-attn-memory-$$}

for format in text markdown json; do
    /usr/bin/time -v "$bin" show "$lesson" --format "$format" 2>"$scratch/time" >"$scratch/out"
    peak=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$scratch/time")
    printf 'show --format %-8s  peak %4d MB  (%d MB written)\n' "$format" $((peak / 1024)) \
        $(($(wc -c <"$scratch/out") / 1048576))
done

XDG_DATA_HOME=$scratch tmux new-session -d -s "$session" -x 100 -y 30 \
    "cd '$scratch' && exec '$bin' '$lesson'"
sleep 3
pid=$(tmux list-panes -t "$session" -F '#{pane_pid}')
keys() { for key in "$@"; do tmux send-keys -t "$session" "$key"; sleep 0.4; done; }
hwm() { sed -n 's/VmHWM:[[:space:]]*//p' "/proc/$pid/status"; }
echo "tutor opened          peak $(hwm)"
keys n n n n n n
echo "tutor, every step     peak $(hwm)"
# Step 2 (Projection), cursor to W_q, edit its first cell.
keys Home n '[' e 3 Enter
sleep 2
tmux capture-pane -p -t "$session" | sed -n 3p
tmux capture-pane -p -t "$session" | tail -1
echo "tutor, W_q edited     peak $(hwm)"
# Saved as it is, W_q would be written out number by number (over 20 MB): the tutor says so and
# offers to keep its generator (k), then asks for a name.
keys w
sleep 2
tmux capture-pane -p -t "$session" | tail -2
keys k C-u "$scratch/edited.toml" Enter
sleep 3
tmux capture-pane -p -t "$session" | tail -1
echo "tutor, after w and k  peak $(hwm)  ($(wc -c <"$scratch/edited.toml") bytes saved)"
keys u
sleep 2
for _ in 1 2 3 4 5 6 7 8 9 10; do keys r; sleep 1; done
echo "tutor, 10 re-rolls    peak $(hwm)"
tmux kill-session -t "$session" 2>/dev/null || true

# The largest generation lesson (tests/fixtures/decode-largest.toml: 256 tokens, d_model 1024,
# 16 heads over 16 K/V groups, W_o, causal, decode = true): `check`, `show --format json`
# (about 3.7 GB written: every step's caches and every tile's state), and the tutor walking
# every token on every generation step.
lesson=$root/tests/fixtures/decode-largest.toml
/usr/bin/time -v "$bin" check "$lesson" 2>"$scratch/time" >/dev/null
echo "decode check          peak $(sed -n 's/.*Maximum resident set size (kbytes): //p' "$scratch/time") kB"
/usr/bin/time -v "$bin" show "$lesson" --format json 2>"$scratch/time" | wc -c >"$scratch/bytes"
echo "decode show --format json  peak $(sed -n 's/.*Maximum resident set size (kbytes): //p' "$scratch/time") kB  ($(cat "$scratch/bytes") bytes written)"
XDG_DATA_HOME=$scratch tmux new-session -d -s "$session" -x 120 -y 40 \
    "cd '$scratch' && exec '$bin' '$lesson'"
sleep 3
pid=$(tmux list-panes -t "$session" -F '#{pane_pid}')
echo "decode tutor opened   peak $(hwm)"
# n to the first generation step (step 12 of 15), then every token forward, the next step,
# every token back, and so on: every token of every generation step.
keys n n n n n n n n n n n
walk() { i=0; while [ $i -lt 255 ]; do tmux send-keys -t "$session" "$1"; i=$((i + 1)); done; sleep 10; }
walk ')'; keys n; walk '('; keys n; walk ')'; keys n; walk '('
tmux capture-pane -p -t "$session" | sed -n 1,2p
echo "decode tutor, every token of every generation step  peak $(hwm)"
