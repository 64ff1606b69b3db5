#!/usr/bin/env bash
# e2e_reliability_resume.sh - checkpoint and resume of `horizon run` on the default scenario:
# 40 steps straight and 20 steps + --resume to 40 give byte-identical stats.csv (checksums
# included), frames and final checksum, with frame numbers and stats rows continuing without
# gaps or duplicates; also across thread counts, after the outputs of later steps were left
# behind (a crash after the checkpoint), after the directory moved, and when a finished run is
# extended. Changing the scenario on resume is refused.
# usage: e2e_reliability_resume.sh HORIZON_BINARY SOURCE_DIR
set -u
H=$1
SRC=$2
T=$(mktemp -d /tmp/hz_e2e_resume_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
run() { "$H" run --backend cpu --quiet "$@"; }

# Same stats.csv, frames and final checksum as the straight run in $T/a.
same_as_a() {
    cmp "$T/a/stats.csv" "$1/stats.csv" || fail "$1/stats.csv differs from the straight run"
    (cd "$T/a/frames" && ls) > "$T/la" && (cd "$1/frames" && ls) > "$T/lb" ||
        fail "$1: no frames"
    diff "$T/la" "$T/lb" || fail "$1: other frame files than the straight run"
    while read -r f; do
        cmp -s "$T/a/frames/$f" "$1/frames/$f" || fail "$1/frames/$f differs"
    done < "$T/la"
    a=$(grep final_checksum "$T/a/run.json") && b=$(grep final_checksum "$1/run.json") ||
        fail "$1: no run.json"
    [ "$a" = "$b" ] || fail "$1: final checksum $b, straight run $a"
}

run --out "$T/a" --steps 40 --frames-every 5 --threads 2 || fail "straight run"
[ "$(ls "$T/a/frames" | wc -l)" = 9 ] || fail "straight run: expected frames 0..8"
[ "$(wc -l < "$T/a/stats.csv")" = 41 ] || fail "straight run: expected 40 rows"

# 1. 20 steps with checkpoints every 10, then resume to 40 on one thread.
run --out "$T/b" --steps 20 --frames-every 5 --checkpoint-every 10 --threads 2 ||
    fail "first half"
[ -s "$T/b/checkpoint.hzc" ] && [ -s "$T/b/checkpoint.hzc.prev" ] ||
    fail "checkpoint.hzc and checkpoint.hzc.prev expected"
ls "$T/b" | grep -q '\.tmp$' && fail "temporary files left behind"
run --resume "$T/b/checkpoint.hzc" --steps 40 --threads 1 || fail "resume"
same_as_a "$T/b"
grep -q '"resumed_from_step": 20' "$T/b/run.json" || fail "run.json does not say it resumed"

# 2. Resume from an older checkpoint while later outputs exist (as after kill -9): rows past the
# checkpoint, a partial row, later frames, temporary files and run.json go; the rest matches.
run --out "$T/c" --steps 40 --frames-every 5 --checkpoint-every 10 || fail "run c"
printf '41,26214,3' >> "$T/c/stats.csv"
cp "$T/c/frames/frame_000000.png" "$T/c/frames/frame_000050.png" # numbered after the end
: > "$T/c/frames/frame_000099.png.tmp"
: > "$T/c/checkpoint.hzc.tmp"
run --resume "$T/c/checkpoint.hzc.prev" || fail "resume from .prev (step 30)"
same_as_a "$T/c"
ls "$T/c" "$T/c/frames" | grep -q '\.tmp$' && fail "temporary files not removed on resume"

# 3. A finished run (checkpoint at its end) moved elsewhere and extended to 40 steps.
run --out "$T/d" --steps 17 --frames-every 5 --checkpoint-every 15 || fail "run d"
mv "$T/d" "$T/d2"
out=$("$H" run --backend cpu --resume "$T/d2/checkpoint.hzc" --steps 40 2>&1) ||
    fail "extend: $out"
echo "$out" | grep -q "resuming $T/d2/checkpoint.hzc at step 17" || fail "extend: $out"
same_as_a "$T/d2"

# 4. Refusals, exit 2, nothing touched.
cp "$T/b/stats.csv" "$T/b.stats"
for bad in "--set world.width=64" "--seed 7" "--out $T/x" "--frames-every 2" "--force" \
           "--stats-every 3" "$SRC/assets/scenarios/default.ini"; do
    # shellcheck disable=SC2086
    err=$("$H" run --resume "$T/b/checkpoint.hzc" $bad 2>&1)
    rc=$?
    [ $rc = 2 ] || fail "--resume with $bad: exit $rc, expected 2"
    echo "$err" | grep -q "resume" || fail "--resume with $bad: unclear message: $err"
done
err=$("$H" run --resume "$T/b/checkpoint.hzc" --steps 10 2>&1)
[ $? = 2 ] && echo "$err" | grep -q "the checkpoint is at step 40 already" ||
    fail "--steps below the checkpoint: $err"
err=$("$H" run --resume "$T/nothere.hzc" 2>&1)
[ $? = 2 ] && echo "$err" | grep -q "nothere.hzc: cannot open checkpoint: No such file" ||
    fail "missing checkpoint: $err"
cmp -s "$T/b/stats.csv" "$T/b.stats" || fail "a refused resume changed stats.csv"
echo "ok: resume"
