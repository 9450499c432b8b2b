#!/usr/bin/env bash
# The classroom under attack, measured on loopback with the release binary and the real ssh
# client: how many join codes one address gets checked per second while 32 of its clients
# guess at once, how long a classmate on that address with the right code takes to get in
# meanwhile, the same after 64 idle connections fill the address's places, and when a
# connection that says nothing is dropped. Memory per student at the largest lesson comes from
# the classroom bench, on the lesson this script writes last. Run from the repository root:
#
#   benches/classroom_attack.sh          # about a minute
#
# Needs ssh and python3. Ports: $PORT and $PORT+1 (default 22417, 22418) on 127.0.0.1.
set -euo pipefail

port=${PORT:-22417}
bin=target/release/attn-tutor
cargo build --release --quiet
work=$(mktemp -d)
pids=()
cleanup() {
    touch "$work/stop"
    for pid in "${pids[@]}"; do
        pkill -P "$pid" 2>/dev/null || true
        kill "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

echo sunflower >"$work/code"
printf '#!/bin/sh\necho sunshine\n' >"$work/wrong"
printf '#!/bin/sh\necho sunflower\n' >"$work/right"
chmod 700 "$work/wrong" "$work/right"

now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc -l; }
ssh_to() { # PORT ADDRESS ASKPASS PROMPTS USER
    SSH_AUTH_SOCK= SSH_ASKPASS=$3 SSH_ASKPASS_REQUIRE=force ssh -F /dev/null -p "$1" -b "$2" \
        -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        -o PubkeyAuthentication=no -o KbdInteractiveAuthentication=no \
        -o NumberOfPasswordPrompts="$4" -o ConnectTimeout=30 "$5@127.0.0.1" </dev/null 2>&1
}
wait_log() { # FILE TEXT COUNT
    for _ in $(seq 300); do
        [ "$(grep -c "$2" "$1" || true)" -ge "$3" ] && return 0
        sleep 0.1
    done
    echo "waited 30 s for $3 × '$2' in $1" >&2
    return 1
}
# A classmate with the right code, without a terminal: the server signs them in, then says
# it needs one. The time from starting ssh to that line is the time to get in.
classmate() { # PORT ADDRESS
    local started said
    started=$(now)
    said=$(ssh_to "$1" "$2" "$work/right" 1 classmate || true)
    if [[ $said == *"needs a terminal"* ]]; then
        printf '%.2f\n' "$(since "$started")"
    else
        echo "refused"
    fi
}

echo "== 32 clients guessing join codes from 127.0.0.6 ($(nproc) cores)"
"$bin" serve --password-file "$work/code" --listen "127.0.0.1:$port" --host-key "$work/key" \
    >/dev/null 2>"$work/flood.log" &
pids+=($!)
wait_log "$work/flood.log" serving 1
for _ in $(seq 32); do
    (while [ ! -e "$work/stop" ]; do ssh_to "$port" 127.0.0.6 "$work/wrong" 6 eve >/dev/null || true; done) &
    pids+=($!)
done
wait_log "$work/flood.log" "wrong join code" 20
from=$(now)
counted=$(grep -c "wrong join code" "$work/flood.log")
times=()
for _ in 1 2 3 4 5; do
    times+=("$(classmate "$port" 127.0.0.6)")
    sleep 1
done
while [ "$(echo "$(since "$from") < 15" | bc)" = 1 ]; do sleep 0.2; done
seconds=$(since "$from")
guesses=$(($(grep -c "wrong join code" "$work/flood.log") - counted))
printf 'join codes checked: %d in %.1f s = %.1f a second from one address\n' \
    "$guesses" "$seconds" "$(echo "$guesses / $seconds" | bc -l)"
echo "classmate with the right code, same address, during the flood: ${times[*]} s"
grep -m1 "slowed" "$work/flood.log" | sed 's/^[^ ]* *//' || true
touch "$work/stop"
for pid in "${pids[@]}"; do pkill -P "$pid" 2>/dev/null || true; kill "$pid" 2>/dev/null || true; done
wait 2>/dev/null || true
pids=()
rm -f "$work/stop"

echo
echo "== 64 idle connections from 127.0.0.5, then a classmate on the same address"
"$bin" serve --password-file "$work/code" --listen "127.0.0.1:$((port + 1))" \
    --host-key "$work/key" >/dev/null 2>"$work/idle.log" &
pids+=($!)
wait_log "$work/idle.log" serving 1
python3 -c "
import socket, time
s = []
for _ in range(64):
    c = socket.socket(); c.bind(('127.0.0.5', 0)); c.connect(('127.0.0.1', $((port + 1)))); s.append(c)
time.sleep(19)" &
pids+=($!)
wait_log "$work/idle.log" "connection peer=127.0.0.5" 64
echo "classmate got in after: $(classmate $((port + 1)) 127.0.0.5) s"
echo "evicted: $(grep -c 'evicted' "$work/idle.log")"

echo
echo "== a connection that sends nothing"
python3 -c "
import socket, time
c = socket.create_connection(('127.0.0.1', $((port + 1))))
t = time.monotonic()
while c.recv(1024): pass
print('dropped after %.1f s (sign-in deadline: 20 s)' % (time.monotonic() - t))"

# The largest lesson within the limits, for the classroom bench's memory per student.
largest=target/classroom-largest.toml
{
    echo 'format = 1'
    echo 'title = "The largest lesson within the limits"'
    printf 'tokens = [%s]\n' "$(seq -f '"t%g"' 0 255 | paste -sd,)"
    echo 'embeddings = { random = "normal", seed = 1, shape = [256, 1024] }'
    echo 'w_q = { random = "normal", seed = 2, shape = [1024, 1024] }'
    echo 'w_k = { random = "normal", seed = 3, shape = [1024, 1024] }'
    echo 'w_v = { random = "normal", seed = 4, shape = [1024, 1024] }'
    echo 'decimals = 8'
} >"$largest"
"$bin" check "$largest" >/dev/null
echo
echo "memory per student at the largest lesson ($largest):"
echo "  cargo bench --bench classroom -- --lesson $largest --sessions 5 --keys 20"
