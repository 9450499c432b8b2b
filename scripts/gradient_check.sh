#!/bin/sh
# Time and peak memory (RSS) of `attn-tutor check` on two large generated lessons, each without
# and with a backward pass (`grad_output`): 128 tokens x 512 dims x 8 heads, and 256 tokens x
# 1024 dims x 16 heads (d_k 64, W_o, causal). With grad_output, `check` also compares the
# backward pass's gradients with finite differences (issue 29, item 12). Needs GNU time.
#
#   cargo build --release && scripts/gradient_check.sh [BINARY]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/target/release/attn-tutor}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# lesson FILE TOKENS DMODEL HEADS BACKWARD
lesson() {
    {
        echo 'format = 2'
        echo "title = \"$2 tokens x $3 x $4 heads\""
        printf 'tokens = ['
        i=0
        while [ "$i" -lt "$2" ]; do
            [ "$i" -gt 0 ] && printf ', '
            printf '"t%d"' "$i"
            i=$((i + 1))
        done
        echo ']'
        echo "heads = $4"
        echo 'mask = "causal"'
        echo "embeddings = { random = \"normal\", seed = 1, shape = [$2, $3] }"
        echo "w_q = { random = \"normal\", seed = 2, shape = [$3, $3] }"
        echo "w_k = { random = \"normal\", seed = 3, shape = [$3, $3] }"
        echo "w_v = { random = \"normal\", seed = 4, shape = [$3, $3] }"
        echo "w_o = { random = \"normal\", seed = 5, shape = [$3, $3] }"
        if [ "$5" = yes ]; then
            echo "grad_output = { random = \"normal\", seed = 6, shape = [$2, $3] }"
        fi
    } >"$1"
}

for shape in "128 512 8" "256 1024 16"; do
    set -- $shape
    for backward in no yes; do
        file=$scratch/lesson-$1-$2-$backward.toml
        lesson "$file" "$1" "$2" "$3" "$backward"
        status=0
        /usr/bin/time -f '%e %M' -o "$scratch/time" "$bin" check "$file" >"$scratch/out" ||
            status=$?
        read -r seconds kb <<EOF
$(tail -n 1 "$scratch/time")
EOF
        printf '%4d tokens x %4d x %2d heads, grad_output %-3s  %6.2f s  peak %4d MB  exit %d\n' \
            "$1" "$2" "$3" "$backward" "$seconds" $((kb / 1024)) "$status"
        grep 'gradients' "$scratch/out" || true
    done
done
