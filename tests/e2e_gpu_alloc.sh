# e2e_gpu_alloc.sh - device allocation failure end to end: for every N from 1 to the number of
# device (and pinned host) allocations a small `horizon run --backend cuda` makes, the run with
# HORIZON_GPU_FAIL_ALLOC=N exits 3 with one error line and leaves no partial files (its output
# directory is absent or empty afterwards). N is swept upwards until a run succeeds, so the count
# follows the code. Also: a malformed value is ignored with a warning, 0 switches it off.
# Skipped (77) when `horizon info` finds no CUDA device.
# usage: bash e2e_gpu_alloc.sh HORIZON_BINARY SOURCE_DIR
set -euo pipefail

HZ=$1
if ! "$HZ" info 2>/dev/null | grep -q '^cuda device'; then
    echo "e2e_gpu_alloc: no CUDA device: skipped"
    exit 77
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/hz_e2e_gpualloc.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# A small run that takes every kind of device allocation: the state, the bins, the pinned
# readback buffers and (frame 0) the compose buffer.
small_run() {
    local dir=$1
    "$HZ" run --backend cuda --steps 3 --out "$dir" --quiet --set world.width=37 \
        --set world.height=29 --set agents.density=0.2 --set agents.radius=3 --frames-every 2
}

# Whatever the run left in DIR besides the lock file of an output directory (which the app
# keeps in a directory it did not create, and which emptiness checks ignore).
leftovers() {
    local dir=$1
    [ -e "$dir" ] || return 0
    find "$dir" -mindepth 1 ! -path "$dir/.horizon.lock" | sed "s|^$T/||" | sort | tr '\n' ' '
}

MAX=200 # far above the count; stops a hook that never fires from looping forever
partial=""
total=-1
for ((n = 1; n <= MAX; n++)); do
    dir=$T/out$n
    rc=0
    HORIZON_GPU_FAIL_ALLOC=$n small_run "$dir" >"$T/log$n" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ]; then
        total=$((n - 1))
        break
    fi
    [ "$rc" -eq 3 ] || { cat "$T/log$n"; fail "N=$n: exit $rc, expected 3 (out of memory)"; }
    lines=$(wc -l <"$T/log$n")
    [ "$lines" -eq 1 ] || { cat "$T/log$n"; fail "N=$n: $lines lines of output, expected one"; }
    grep -Eq '^horizon: out of (device|pinned host) memory: .*injected' "$T/log$n" ||
        fail "N=$n: unclear error line: $(cat "$T/log$n")"
    left=$(leftovers "$dir")
    if [ -n "$left" ]; then
        what=$(sed -n 's/.* asked for \([a-z ]*[a-z]\).*/\1/p' "$T/log$n")
        partial="$partial
  N=$n (allocation for '$what'): left $left"
    fi
done
[ "$total" -ge 0 ] || fail "no run succeeded with N up to $MAX"
# 8 state buffers, 9 bin buffers, 2 pinned, 1 frame buffer at the time of writing
[ "$total" -ge 10 ] || fail "only $total device allocations failed: is HORIZON_GPU_FAIL_ALLOC read?"
ok=$T/out$((total + 1))
[ -s "$ok/stats.csv" ] && [ -s "$ok/run.json" ] || fail "the run with N=$((total + 1)) wrote no results"
echo "e.g. N=1:      $(cat "$T/log1")"
echo "and  N=$total: $(cat "$T/log$total")"
if [ -n "$partial" ]; then
    echo "FAIL: exit code 3 and one error line for every N in 1..$total, but partial files were" \
        "left behind (the run's clean-up after a failure, not the allocation itself):$partial" >&2
    exit 1
fi
echo "ok: $total device allocations in a small run; each failed once: exit 3, one error line," \
    "no partial files"

# Off, and malformed: the run goes through; a malformed value says it was ignored.
HORIZON_GPU_FAIL_ALLOC=0 small_run "$T/off" >"$T/log_off" 2>&1 || fail "N=0: exit $?"
[ ! -s "$T/log_off" ] || fail "N=0: unexpected output: $(cat "$T/log_off")"
HORIZON_GPU_FAIL_ALLOC=x3 small_run "$T/bad" >"$T/log_bad" 2>&1 || fail "N=x3: exit $?"
grep -q "HORIZON_GPU_FAIL_ALLOC='x3' ignored" "$T/log_bad" || fail "N=x3: no warning"
echo "ok: HORIZON_GPU_FAIL_ALLOC=0 is off, a malformed value is ignored with a warning"
