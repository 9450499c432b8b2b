#!/bin/sh
# Each test of one test binary run alone, one after another, with its wall-clock and CPU time
# (user + system, its child processes included), slowest CPU first: where `cargo test`'s time
# goes. CPU time is the figure to compare on a shared machine; wall time also counts waiting
# (the classroom's deadlines) and other people's load. Needs GNU time.
#
#   cargo test --no-run --test it && scripts/test_times.sh it [FILTER] | head -30
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
name=${1:?which test binary: it or serve}
filter=${2:-}
cd "$root"
binary=$(cargo test --no-run --test "$name" --message-format=json 2>/dev/null |
    grep "\"kind\":\[\"test\"\].*\"name\":\"$name\"" |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
[ -x "$binary" ] || { echo "no test binary for $name: cargo test --no-run --test $name" >&2; exit 1; }
times=$(mktemp)
trap 'rm -f "$times"' EXIT
"$binary" --list --format terse $filter | sed -n 's/: test$//p' | while read -r test; do
    status=ok
    /usr/bin/time -o "$times" -f '%e %U %S' "$binary" --exact "$test" --test-threads=1 \
        >/dev/null 2>&1 || status=FAILED
    tail -n 1 "$times" | awk -v test="$test" -v status="$status" \
        '{ printf "%8.2f %8.2f  %s %s\n", $2 + $3, $1, test, (status == "ok" ? "" : status) }'
done | sort -rn | { echo " CPU (s) wall (s)  test"; cat; }
