#!/usr/bin/env bash
# e2e_reliability_signals.sh - SIGINT and SIGTERM during `horizon run`: the current step is
# finished, a checkpoint written, stats flushed, queued frames written, the resume command
# printed, exit 130 / 143; the resumed run then matches an uninterrupted one byte for byte. A
# second signal exits at once (long before the step would end) and leaves no half-written file
# under a final name: the last checkpoint still resumes to the same results.
# usage: e2e_reliability_signals.sh HORIZON_BINARY SOURCE_DIR
set -u
H=$1
T=$(mktemp -d /tmp/hz_e2e_signals_XXXXXX)
PID=
trap '[ -n "$PID" ] && kill -9 "$PID" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
rows() { [ -f "$1/stats.csv" ] && echo $(($(wc -l < "$1/stats.csv") - 1)) || echo 0; }
# Waits (up to 120 s) until stats.csv of $1 has at least $2 rows.
wait_rows() {
    for _ in $(seq 1 1200); do
        [ "$(rows "$1")" -ge "$2" ] && return 0
        kill -0 "$PID" 2>/dev/null || fail "the run ended early"
        sleep 0.1
    done
    fail "no progress in $1"
}
# Every PNG complete: the signature first, the IEND chunk last.
pngs_whole() {
    for f in "$1"/frames/*.png; do
        [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
        [ "$(tail -c 12 "$f" | od -An -tx1 | tr -d ' \n')" = 0000000049454e44ae426082 ] ||
            fail "$f is not a whole PNG"
    done
}

# The default scenario at full size, frames every 3 steps.
opts=(--backend cpu --frames-every 3 --threads 2)
for sig in INT TERM; do
    want=$([ $sig = INT ] && echo 130 || echo 143)
    d="$T/$sig"
    "$H" run "${opts[@]}" --out "$d" --steps 100000 --quiet 2> "$T/err" &
    PID=$!
    wait_rows "$d" 8
    kill -s $sig $PID
    wait $PID
    rc=$?
    PID=
    [ $rc = "$want" ] || fail "SIG$sig: exit $rc, expected $want ($(cat "$T/err"))"
    grep -q "resume with: horizon run --resume $d/checkpoint.hzc" "$T/err" ||
        fail "SIG$sig: no resume command printed: $(cat "$T/err")"
    n=$(sed -n 's/.* after step \([0-9]*\) of .*/\1/p' "$T/err")
    [ -n "$n" ] || fail "SIG$sig: the message does not say the step: $(cat "$T/err")"
    [ "$(rows "$d")" = "$n" ] || fail "SIG$sig: $(rows "$d") stats rows, stopped after step $n"
    [ "$(tail -n 1 "$d/stats.csv" | cut -d, -f1)" = "$n" ] || fail "SIG$sig: last row"
    [ "$(ls "$d/frames" | grep -c '\.png$')" = $((n / 3 + 1)) ] ||
        fail "SIG$sig: frames 0..$((n / 3)) expected after step $n: $(ls "$d/frames")"
    pngs_whole "$d"
    [ -e "$d/run.json" ] && fail "SIG$sig: run.json written for an unfinished run"
    # resume to n + 7 steps and compare with a straight run of n + 7 steps
    "$H" run "${opts[@]}" --resume "$d/checkpoint.hzc" --steps $((n + 7)) --quiet ||
        fail "SIG$sig: resume"
    "$H" run "${opts[@]}" --out "$T/ref$sig" --steps $((n + 7)) --quiet || fail "reference"
    cmp "$d/stats.csv" "$T/ref$sig/stats.csv" || fail "SIG$sig: resumed stats differ"
    for f in "$T/ref$sig"/frames/*.png; do
        cmp -s "$f" "$d/frames/${f##*/}" || fail "SIG$sig: frame ${f##*/} differs"
    done
done

# A second signal: slow steps (10000 Jacobi sweeps of a 512x512 field on one thread, about a
# second each; one thread because OpenMP barriers make 10000 sweeps erratic on a busy machine),
# a checkpoint every step. checkpoint.hzc.prev appears when the checkpoint of step 2 is renamed
# into place, the last thing before step 3 starts; the first SIGINT comes 0.3 s later, the
# second 0.1 s after it, while step 3 is still running.
slow=(--backend cpu --threads 1 --set world.width=512 --set world.height=512
      --set field.sweeps=10000 --frames-every 1)
d="$T/twice"
"$H" run "${slow[@]}" --out "$d" --steps 1000 --checkpoint-every 1 --quiet 2> "$T/err" &
PID=$!
for _ in $(seq 1 6000); do
    [ -e "$d/checkpoint.hzc.prev" ] && break
    sleep 0.02
done
sleep 0.3
kill -INT $PID
sleep 0.1
t0=$(date +%s%N)
kill -INT $PID
wait $PID
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
PID=
[ $rc = 130 ] || fail "second SIGINT: exit $rc, expected 130"
grep -q "second signal" "$T/err" || fail "second SIGINT: no message: $(cat "$T/err")"
grep -q "after step" "$T/err" && fail "second SIGINT: the step in progress was finished first"
[ $ms -lt 5000 ] || fail "second SIGINT: took $ms ms to exit"
pngs_whole "$d"
[ "$(tail -c 1 "$d/stats.csv" | od -An -tx1 | tr -d ' \n')" = 0a ] ||
    fail "stats.csv ends in a partial row"
"$H" run "${slow[@]}" --resume "$d/checkpoint.hzc" --steps 3 --quiet ||
    fail "resume after a second signal"
"$H" run "${slow[@]}" --out "$T/ref" --steps 3 --quiet || fail "reference"
cmp "$d/stats.csv" "$T/ref/stats.csv" || fail "stats after a second signal differ"
echo "ok: signals"
