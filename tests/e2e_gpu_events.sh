# e2e_gpu_events.sh - `horizon run --events` on the CUDA backend against the CPU backend: the same
# events file (every run-time key and paints, several at one step) gives identical stats.csv
# and final checksums, and a run that starts on one backend and is resumed on the other after an
# event step gives the same stats.csv again. Skipped (77) when `horizon info` finds no CUDA
# device.
# usage: bash e2e_gpu_events.sh HORIZON_BINARY SOURCE_DIR
set -euo pipefail

HZ=$1
if ! "$HZ" info 2>/dev/null | grep -q '^cuda device'; then
    echo "e2e_gpu_events: no CUDA device: skipped"
    exit 77
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/hz_e2e_gpu_events.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

cat >"$T/ev.csv" <<'EOF'
step,event,value
0,agents.noise,0.2
10,paint,100 60 12 3.5
10,agents.radius,11
25,field.diffusion,0.3
25,field.sweeps,5
25,field.decay,0.002
25,agents.deposit,0.75
40,paint,0 0 64 -0.5
40,agents.noise,0.02
40,agents.radius,0
55,agents.radius,64
EOF

for boundary in periodic wall fixed; do
    ARGS=(--set world.width=192 --set world.height=128 --set agents.density=0.1
        --set world.boundary=$boundary --set world.fixed_top=2 --steps 70 --frames-every 0
        --events "$T/ev.csv" --quiet)
    for b in cpu cuda; do
        "$HZ" run "${ARGS[@]}" --backend $b --out "$T/$boundary.$b" ||
            fail "$boundary: --backend $b exited $?"
    done
    cmp -s "$T/$boundary.cpu/stats.csv" "$T/$boundary.cuda/stats.csv" ||
        fail "$boundary: stats.csv differs between cpu and cuda with events"
    [ "$(wc -l <"$T/$boundary.cuda/stats.csv")" -eq 71 ] || fail "$boundary: stats.csv incomplete"
    a=$(grep final_checksum "$T/$boundary.cpu/run.json")
    b=$(grep final_checksum "$T/$boundary.cuda/run.json")
    [ "$a" = "$b" ] || fail "$boundary: final checksum $b on cuda, $a on cpu"
done

# a run begun on the GPU and resumed on the CPU at an event step, and the other way round
ARGS=(--set world.width=192 --set world.height=128 --frames-every 0 --events "$T/ev.csv" --quiet)
"$HZ" run "${ARGS[@]}" --steps 25 --checkpoint-every 25 --backend cuda --out "$T/g2c" ||
    fail "first half on cuda"
"$HZ" run --resume "$T/g2c/checkpoint.hzc" --steps 70 --backend cpu --quiet || fail "resume on cpu"
"$HZ" run "${ARGS[@]}" --steps 40 --checkpoint-every 40 --backend cpu --out "$T/c2g" ||
    fail "first half on cpu"
"$HZ" run --resume "$T/c2g/checkpoint.hzc" --steps 70 --backend cuda --quiet ||
    fail "resume on cuda"
"$HZ" run "${ARGS[@]}" --steps 70 --backend cuda --out "$T/straight" || fail "straight run"
cmp -s "$T/straight/stats.csv" "$T/g2c/stats.csv" || fail "cuda then cpu: stats.csv differs"
cmp -s "$T/straight/stats.csv" "$T/c2g/stats.csv" || fail "cpu then cuda: stats.csv differs"
# the events matter here: without them the rows differ
"$HZ" run --set world.width=192 --set world.height=128 --frames-every 0 --quiet --steps 70 \
    --backend cuda --out "$T/none" || fail "run without events"
! cmp -s "$T/straight/stats.csv" "$T/none/stats.csv" || fail "the events changed nothing"

echo "e2e_gpu_events: ok"
