#!/usr/bin/env bash
# e2e_reliability_outdir.sh - the output directory and the end of a run, as a hostile user meets
# them: the final checksum of a run with nothing left to do, two processes on one directory
# (refused at once while the first holds its lock, never after kill -9), --force next to user
# files that only look like outputs, a closed pipe on stdout/stderr, a run without the memory
# for its state, and --out paths that cannot be used.
# usage: e2e_reliability_outdir.sh HORIZON_BINARY SOURCE_DIR
set -u
H=$1
T=$(mktemp -d /tmp/hz_e2e_outdir_XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
loud=(--backend cpu --threads 1 --set world.width=64 --set world.height=48)
small=("${loud[@]}" --quiet)
json_sum() { sed -n 's/.*"final_checksum": "\([0-9a-f]*\)".*/\1/p' "$1/run.json"; }

# 1. The checksum of the state, whether or not a step runs.
"$H" run "${small[@]}" --steps 50 --checkpoint-every 50 --out "$T/c" || fail "reference run"
ref=$(json_sum "$T/c")
[ -n "$ref" ] && [ "$ref" != 0000000000000000 ] || fail "reference checksum '$ref'"
out=$("$H" run --backend cpu --resume "$T/c/checkpoint.hzc" 2>&1) || fail "resume: $out"
echo "$out" | grep -q "final checksum $ref" || fail "finished resume printed: $out"
[ "$(json_sum "$T/c")" = "$ref" ] || fail "finished resume wrote $(json_sum "$T/c"), not $ref"
# a crash between the last checkpoint and run.json: the same state, resumed with nothing to do
rm "$T/c/run.json"
"$H" run --backend cpu --quiet --resume "$T/c/checkpoint.hzc" || fail "resume without run.json"
[ "$(json_sum "$T/c")" = "$ref" ] || fail "resume after a lost run.json wrote $(json_sum "$T/c")"
"$H" run "${small[@]}" --steps 0 --stats-every 1 --out "$T/z0" || fail "--steps 0"
"$H" run "${small[@]}" --steps 0 --stats-every 0 --out "$T/z1" || fail "--steps 0, no stats"
z=$(json_sum "$T/z0")
[ "$z" != 0000000000000000 ] && [ "$z" = "$(json_sum "$T/z1")" ] ||
    fail "--steps 0: checksum '$z' with stats, '$(json_sum "$T/z1")' without"
echo "ok: final checksums ($ref)"

# 2. One process per directory. A long run holds d; a second run, a --force run and a resume
#    are refused at once (exit 2, naming the holder) and touch nothing.
"$H" run "${small[@]}" --steps 100000000 --stats-every 1 --checkpoint-every 20 \
    --out "$T/d" 2>/dev/null &
P=$!
PIDS+=("$P")
for _ in $(seq 1 500); do [ -f "$T/d/checkpoint.hzc" ] && break; sleep 0.02; done
[ -f "$T/d/checkpoint.hzc" ] || fail "the long run wrote no checkpoint"
for args in "--force" "--force --stats-every 3"; do
    # shellcheck disable=SC2086
    err=$("$H" run "${small[@]}" --steps 10 $args --out "$T/d" 2>&1)
    rc=$?
    [ $rc = 2 ] && echo "$err" | grep -q "^horizon: $T/d: in use by pid $P$" ||
        fail "second run ($args): exit $rc: $err"
done
err=$("$H" run --backend cpu --resume "$T/d/checkpoint.hzc" 2>&1)
rc=$?
[ $rc = 2 ] && echo "$err" | grep -q "in use by pid $P" || fail "resume while running: $rc: $err"
head -1 "$T/d/stats.csv" | grep -q '^step,' || fail "the refused runs touched stats.csv"
kill -9 $P
wait $P 2>/dev/null
# the kernel dropped the lock with the process: a resume goes ahead (to a step just past the
# checkpoint, to keep it short)
"$H" run --backend cpu --quiet --resume "$T/d/checkpoint.hzc" --steps 100000000 &
P=$!
PIDS+=("$P")
sleep 0.5
kill -TERM $P
wait $P
rc=$?
[ $rc = 143 ] || fail "resume after kill -9: exit $rc (a stale lock?)"
# two resumes of one checkpoint at once: exactly one runs, the other is refused, and stats.csv
# has no duplicated rows. The resumed run is long enough (~1,000 steps, a few tenths of a second)
# that the second process starts while the first holds the lock: with 20 steps the first could
# be done before the second had started, and both ran.
"$H" run "${small[@]}" --steps 1000 --stats-every 1 --out "$T/r" || fail "run r"
cp -r "$T/r" "$T/r_ref"
"$H" run "${small[@]}" --steps 20 --stats-every 1 --checkpoint-every 20 --out "$T/r2" ||
    fail "run r2"
ok=0 refused=0
"$H" run --backend cpu --quiet --resume "$T/r2/checkpoint.hzc" --steps 1000 2>"$T/e1" &
P1=$!
"$H" run --backend cpu --quiet --resume "$T/r2/checkpoint.hzc" --steps 1000 2>"$T/e2" &
P2=$!
for p in $P1 $P2; do
    wait $p
    case $? in 0) ok=$((ok + 1)) ;; 2) refused=$((refused + 1)) ;; *) fail "resume race: exit $?" ;; esac
done
[ $ok = 1 ] && [ $refused = 1 ] || fail "resume race: $ok succeeded, $refused refused"
grep -qh "in use by pid" "$T/e1" "$T/e2" || fail "resume race: no 'in use' message: $(cat "$T/e1" "$T/e2")"
cmp "$T/r_ref/stats.csv" "$T/r2/stats.csv" || fail "resume race: stats.csv differs"
# two --force runs into one directory: one runs, one is refused; the result is whole
"$H" run "${small[@]}" --steps 300 --stats-every 1 --force --out "$T/f" 2>"$T/e1" &
P1=$!
"$H" run "${small[@]}" --steps 300 --stats-every 1 --force --out "$T/f" 2>"$T/e2" &
P2=$!
ok=0
for p in $P1 $P2; do wait $p && ok=$((ok + 1)); done
[ $ok -ge 1 ] || fail "--force race: neither run succeeded: $(cat "$T/e1" "$T/e2")"
[ "$(wc -l < "$T/f/stats.csv")" = 301 ] || fail "--force race: $(wc -l < "$T/f/stats.csv") lines"
[ "$(tail -n +2 "$T/f/stats.csv" | cut -d, -f1 | tr '\n' ' ')" = "$(seq -s ' ' 1 300) " ] ||
    fail "--force race: stats.csv rows are not 1..300"
echo "ok: one process per output directory"

# 3. --force removes the run's own files only, and says what it kept.
"$H" run "${small[@]}" --steps 4 --frames-every 2 --dump-fields-every 2 --out "$T/k" ||
    fail "run k"
touch "$T/k/frames/frame_best.png" "$T/k/frames/frame_12.png" "$T/k/fields/field_notes.npy" \
    "$T/k/notes.txt" "$T/k/frames/frame_0000001.png"
err=$("$H" run "${small[@]}" --steps 2 --frames-every 1 --force --out "$T/k" 2>&1) ||
    fail "--force run: $err"
for f in frames/frame_best.png frames/frame_12.png fields/field_notes.npy notes.txt \
    frames/frame_0000001.png; do
    [ -e "$T/k/$f" ] || fail "--force deleted $f"
done
echo "$err" | grep -q "kept 5 files" || fail "--force did not say what it kept: $err"
[ ! -e "$T/k/fields/field_000004.npy" ] || fail "--force left an earlier field dump"
[ "$(ls "$T/k/frames" | grep -c '^frame_[0-9]\{6\}\.png$')" = 3 ] || fail "frames after --force"
echo "ok: --force keeps what is not a run's"

# 5. A closed pipe on stdout or stderr never stops or fails a run.
set -o pipefail
"$H" run "${loud[@]}" --steps 30 --stats-every 1 --progress --out "$T/p1" 2>&1 | head -1 \
    >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || fail "run | head -1: exit $rc"
[ "$(json_sum "$T/p1")" != "" ] || fail "run | head -1: no run.json"
"$H" run "${loud[@]}" --steps 30 --out "$T/p2" | true
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || fail "run | true: exit $rc"
[ "$(wc -l < "$T/p2/stats.csv")" = "$(wc -l < "$T/p1/stats.csv")" ] || fail "run | true: rows"
set +o pipefail
echo "ok: closed pipes"

# 8. No memory for the state: exit 3, and no output directory left behind. (Not under
#    AddressSanitizer, whose shadow memory does not fit a virtual-memory limit.)
if ldd "$H" 2>/dev/null | grep -q libasan; then
    echo "(sanitizer build: the out-of-memory part is not run)"
else
err=$( (ulimit -v 2000000; exec "$H" run --backend cpu --threads 1 --quiet \
    --set world.width=30000 --set world.height=30000 --set agents.count=10 --out "$T/oom") 2>&1)
rc=$?
[ $rc = 3 ] || fail "out of memory: exit $rc: $err"
[ ! -e "$T/oom" ] || fail "out of memory left $T/oom behind"
mkdir "$T/oom2"
err=$( (ulimit -v 2000000; exec "$H" run --backend cpu --threads 1 --quiet \
    --set world.width=30000 --set world.height=30000 --set agents.count=10 --out "$T/oom2") 2>&1)
[ $? = 3 ] && [ -z "$(ls "$T/oom2")" ] || fail "out of memory in an empty directory: $err"
echo "ok: out of memory ($err)"
fi

# 9. --out paths that cannot be used: exit 2, one message style, nothing created.
touch "$T/afile"
ln -s "$T/missing" "$T/dangling"
for o in "$T/afile" "$T/afile/sub" "$T/dangling" "$T/dangling/sub"; do
    err=$("$H" run "${small[@]}" --steps 1 --out "$o" 2>&1)
    rc=$?
    [ $rc = 2 ] && echo "$err" | grep -q "^horizon: $o: output directory: " ||
        fail "--out $o: exit $rc: $err"
done
[ ! -e "$T/missing" ] || fail "a run followed the dangling symlink"
echo "ok: unusable --out paths"
