#!/usr/bin/env bash
# e2e_reliability_crash.sh - kill -9 at arbitrary moments of `horizon run` (frames every step on
# worker threads, a stats row every step, a checkpoint every 3 steps, field dumps every 4):
# afterwards every file under a final name is whole (PNGs end in IEND, .npy files have their
# full size, the checkpoint resumes), stats.csv holds whole rows only, every frame up to the
# checkpoint is there, and --resume finishes the run with outputs byte-identical to a run that
# was never killed.
# usage: e2e_reliability_crash.sh HORIZON_BINARY SOURCE_DIR
set -u
H=$1
T=$(mktemp -d /tmp/hz_e2e_crash_XXXXXX)
PID=
trap '[ -n "$PID" ] && kill -9 "$PID" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
hex() { od -An -tx1 | tr -d ' \n'; }

STEPS=100
opts=(--backend cpu --threads 2 --quiet --set world.width=128 --set world.height=96
      --frames-every 1 --dump-fields-every 4 --steps $STEPS)
t0=$(date +%s%N)
"$H" run "${opts[@]}" --out "$T/ref" || fail "reference run"
ref_ms=$((($(date +%s%N) - t0) / 1000000))
npy_size=$(stat -c %s "$T/ref/fields/field_000000.npy")

check_whole() {
    local d=$1
    for f in "$d"/frames/*.png; do
        [ -e "$f" ] || continue
        [ "$(head -c 8 "$f" | hex)" = 89504e470d0a1a0a ] &&
        [ "$(tail -c 12 "$f" | hex)" = 0000000049454e44ae426082 ] || fail "$f is not whole"
    done
    for f in "$d"/fields/*.npy; do
        [ -e "$f" ] || continue
        [ "$(stat -c %s "$f")" = "$npy_size" ] || fail "$f is not whole"
    done
    if [ -e "$d/stats.csv" ] && [ -s "$d/stats.csv" ]; then
        [ "$(tail -c 1 "$d/stats.csv" | hex)" = 0a ] || fail "$d/stats.csv ends in a partial row"
        tail -n +2 "$d/stats.csv" | grep -Ev \
            '^[0-9]+,[0-9]+,[0-9]+,[-0-9.e+]+,[-0-9.e+]+,[-0-9.e+]+,[-0-9.e+]+,[0-9a-f]{16}$' &&
            fail "$d/stats.csv has a broken row"
    fi
    return 0
}

killed=0
# kill at 3%, 15%, ... 90% of the time an uninterrupted run takes
for pct in 3 15 30 45 60 75 90; do
    ms=$((ref_ms * pct / 100))
    delay=$((ms / 1000)).$(printf %03d $((ms % 1000)))
    d="$T/k$pct"
    "$H" run "${opts[@]}" --out "$d" --checkpoint-every 3 &
    PID=$!
    sleep "$delay"
    if ! kill -9 $PID 2>/dev/null; then
        PID=
        continue # it had finished
    fi
    wait $PID 2>/dev/null
    PID=
    check_whole "$d"
    [ -e "$d/run.json" ] && continue # killed after the end: nothing to resume
    if [ ! -e "$d/checkpoint.hzc" ]; then
        # killed before the first checkpoint: nothing to resume, nothing broken
        continue
    fi
    killed=$((killed + 1))
    # every frame up to the checkpoint's step must exist: the resume continues after them
    out=$("$H" run --backend cpu --resume "$d/checkpoint.hzc" 2>&1) || fail "resume $d: $out"
    cmp "$T/ref/stats.csv" "$d/stats.csv" || fail "$d: stats differ after the resume"
    for f in "$T/ref"/frames/*.png "$T/ref"/fields/*.npy; do
        g="$d/${f#"$T/ref/"}"
        cmp -s "$f" "$g" || fail "$g differs from the uninterrupted run"
    done
    [ "$(ls "$d/frames" | wc -l)" = $((STEPS + 1)) ] || fail "$d: frames missing or extra"
    ls "$d" "$d/frames" "$d/fields" | grep -q '\.tmp$' && fail "$d: temporary files left"
done
[ $killed -ge 3 ] || fail "only $killed runs were killed mid-way with a checkpoint"
echo "ok: $killed runs killed with kill -9 and resumed"
