#!/usr/bin/env bash
# e2e_reliability_crash.sh - kill -9 at arbitrary moments of `horizon run` (frames every step on
# worker threads, a stats row every step, a checkpoint every 3 steps, field dumps every 4):
# afterwards every file under a final name is whole (PNGs end in IEND, .npy files have their
# full size, the checkpoint resumes), stats.csv holds whole rows only, every frame up to the
# checkpoint is there, and --resume finishes the run with outputs byte-identical to a run that
# was never killed. Frames under final names never have a gap (0..k, whatever was in flight),
# and a run killed after its end (or that finished before the kill) resumes with nothing left to
# do and keeps the right final checksum in run.json.
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
json_sum() { sed -n 's/.*"final_checksum": "\([0-9a-f]*\)".*/\1/p' "$1/run.json"; }
ref_sum=$(json_sum "$T/ref")
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
    # frames 0..k under final names, none missing in between
    local n
    n=$(ls "$d/frames" 2>/dev/null | grep -c '^frame_[0-9]*\.png$')
    if [ "$n" -gt 0 ]; then
        [ -e "$d/frames/$(printf 'frame_%06d.png' $((n - 1)))" ] ||
            fail "$d: $n frames, but not frames 0..$((n - 1)): a gap"
    fi
    return 0
}

# A run that ended (or was killed after its end) resumes with nothing to do: exit 0, and
# run.json keeps the final checksum of the uninterrupted run.
check_finished() {
    local d=$1 out
    [ -e "$d/checkpoint.hzc" ] || fail "$d: a finished run left no checkpoint"
    out=$("$H" run --backend cpu --resume "$d/checkpoint.hzc" 2>&1) || fail "resume $d: $out"
    [ "$(json_sum "$d")" = "$ref_sum" ] || fail "$d: final checksum $(json_sum "$d") != $ref_sum"
    echo "$out" | grep -q "final checksum $ref_sum" || fail "$d: resume printed: $out"
    finished=$((finished + 1))
}

killed=0 finished=0
# kill at 3%, 15%, ... 90% of the time an uninterrupted run takes
for pct in 3 15 30 45 60 75 90; do
    ms=$((ref_ms * pct / 100))
    delay=$((ms / 1000)).$(printf %03d $((ms % 1000)))
    d="$T/k$pct"
    "$H" run "${opts[@]}" --out "$d" --checkpoint-every 3 &
    PID=$!
    sleep "$delay"
    if ! kill -9 $PID 2>/dev/null; then
        wait $PID 2>/dev/null
        PID=
        check_whole "$d"
        check_finished "$d" # it had finished
        continue
    fi
    wait $PID 2>/dev/null
    PID=
    check_whole "$d"
    if [ -e "$d/run.json" ]; then
        check_finished "$d" # killed after the end
        continue
    fi
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
# Always cover a finished run too, and one killed between its last checkpoint and run.json.
d="$T/done"
"$H" run "${opts[@]}" --out "$d" --checkpoint-every 3 || fail "finished run"
check_finished "$d"
rm "$d/run.json"
check_finished "$d"
echo "ok: $killed runs killed with kill -9 and resumed, $finished finished runs resumed"
