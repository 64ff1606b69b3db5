#!/usr/bin/env bash
# e2e_reliability_diskfull.sh - write failures during `horizon run`: a file-size limit
# (RLIMIT_FSIZE: writes fail part-way as on a full disk, for any user), a full tmpfs (when this
# user may mount one), an output directory that vanishes mid-run, and one that is read-only
# (refused at the start with exit 2, as any unusable --out path). The others end with exit 1
# and an error naming the path and the OS reason; stats.csv keeps whole rows only, no temporary
# file stays behind, and the last good checkpoint is intact and resumes to the same results as
# a run that never failed.
# usage: e2e_reliability_diskfull.sh HORIZON_BINARY SOURCE_DIR
set -u
H=$1
T=$(mktemp -d /tmp/hz_e2e_diskfull_XXXXXX)
PID=
MNT=
cleanup() {
    [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null
    [ -n "$MNT" ] && umount "$MNT" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
hex() { od -An -tx1 | tr -d ' \n'; }
whole_rows() {
    [ "$(tail -c 1 "$1" | hex)" = 0a ] || fail "$1 ends in a partial row"
    tail -n +2 "$1" | grep -Ev '^[0-9]+,([^,]*,){6}[0-9a-f]{16}$' && fail "$1: a broken row"
    return 0
}
no_tmp() { find "$1" -name '*.tmp' | grep -q . && fail "temporary files left in $1"; return 0; }
# Resumes a copy of $1 (the full file system cannot take more) and compares with $2.
resumes_to() {
    rm -rf "$T/copy"
    cp -r "$1" "$T/copy"
    "$H" run --backend cpu --quiet --resume "$T/copy/checkpoint.hzc" || fail "resume of $1"
    cmp "$T/copy/stats.csv" "$2/stats.csv" || fail "$1 resumed differs from the reference"
}

small=(--backend cpu --threads 2 --set world.width=96 --set world.height=96 --steps 800
       --frames-every 10 --frame-size 64x64)
"$H" run "${small[@]}" --quiet --out "$T/ref" || fail "reference run"

# 1. stats.csv outgrows the limit (46 KiB, about 590 rows; a checkpoint is 41 KB and fits).
err=$( (trap '' XFSZ; ulimit -f 46; exec "$H" run "${small[@]}" --out "$T/a" \
        --checkpoint-every 50 --quiet) 2>&1)
rc=$?
[ $rc = 1 ] || fail "file-size limit on stats.csv: exit $rc, expected 1: $err"
echo "$err" | grep -q "$T/a/stats.csv: write failed: File too large" || fail "message: $err"
echo "$err" | grep -q "the last good checkpoint is $T/a/checkpoint.hzc (step" ||
    fail "the last good checkpoint is not named: $err"
whole_rows "$T/a/stats.csv"
no_tmp "$T/a"
resumes_to "$T/a" "$T/ref"
echo "  limit on stats.csv: $err"

# 2. The checkpoint does not fit (30 KiB): refused at the first one, nothing half-written.
err=$( (trap '' XFSZ; ulimit -f 30; exec "$H" run "${small[@]}" --out "$T/b" \
        --checkpoint-every 50 --quiet) 2>&1)
rc=$?
[ $rc = 1 ] || fail "file-size limit on the checkpoint: exit $rc: $err"
echo "$err" | grep -q "$T/b/checkpoint.hzc.tmp: write failed: File too large" ||
    fail "message: $err"
[ -e "$T/b/checkpoint.hzc" ] && fail "a checkpoint under the final name"
whole_rows "$T/b/stats.csv"
# Checkpoints are written on a thread while the steps go on; the run stops at the first batch
# after the failed write, at the latest at the next checkpoint (which waits for the write).
last=$(tail -n 1 "$T/b/stats.csv" | cut -d, -f1)
[ "$last" -ge 50 ] && [ "$last" -le 100 ] || fail "stats rows after the failure: last row $last"
no_tmp "$T/b"
echo "  limit on the checkpoint: $err"

# 3. A full file system, when a tmpfs can be mounted here (root with CAP_SYS_ADMIN).
mkdir -p "$T/mnt"
# 700 KiB: two checkpoints of a 256x256 world (290 KB each) fit, the third does not.
if mount -t tmpfs -o size=700k tmpfs "$T/mnt" 2>/dev/null; then
    MNT="$T/mnt"
    big=(--backend cpu --threads 2 --set world.width=256 --set world.height=256 --steps 200
         --frames-every 0)
    "$H" run "${big[@]}" --quiet --out "$T/ref2" || fail "reference run 2"
    err=$("$H" run "${big[@]}" --out "$MNT/c" --checkpoint-every 20 --quiet 2>&1)
    rc=$?
    [ $rc = 1 ] || fail "full tmpfs: exit $rc: $err"
    echo "$err" | grep -q "$MNT/c/.*: No space left on device" || fail "message: $err"
    whole_rows "$MNT/c/stats.csv"
    no_tmp "$MNT/c"
    resumes_to "$MNT/c" "$T/ref2"
    echo "  full tmpfs: $err"
    # 5. A read-only file system from the start.
    umount "$MNT"
    mount -t tmpfs -o ro,size=100k tmpfs "$MNT" || fail "read-only tmpfs"
    err=$("$H" run "${small[@]}" --out "$MNT/d" --quiet 2>&1)
    rc=$?
    # a path the run cannot use from the start is a bad --out (exit 2), like a file in the way
    [ $rc = 2 ] && echo "$err" | grep -q "$MNT/d: output directory: cannot create $MNT/d: Read-only file system" ||
        fail "read-only: exit $rc: $err"
    echo "  read-only: $err"
    umount "$MNT"
    MNT=
elif [ "$(id -u)" != 0 ]; then
    mkdir -p "$T/ro"
    chmod 555 "$T/ro"
    err=$("$H" run "${small[@]}" --out "$T/ro/d" --quiet 2>&1)
    rc=$?
    [ $rc = 2 ] && echo "$err" | grep -q "$T/ro/d: output directory: cannot create $T/ro/d: Permission denied" ||
        fail "unwritable: exit $rc: $err"
    echo "  (no tmpfs here: the full-disk case is covered by the file-size limit only)"
else
    echo "  (no tmpfs here: the full-disk and read-only cases are not run)"
fi

# 4. The output directory vanishes mid-run.
"$H" run "${small[@]}" --steps 100000 --frames-every 1 --checkpoint-every 5 --quiet \
    --out "$T/e" 2> "$T/err" &
PID=$!
for _ in $(seq 1 3000); do
    [ -f "$T/e/checkpoint.hzc" ] && break
    sleep 0.02
done
mv "$T/e" "$T/e.gone" # gone from its path at once (rm -rf races with the files being written)
for _ in $(seq 1 500); do
    kill -0 $PID 2>/dev/null || break
    sleep 0.02
done
kill -0 $PID 2>/dev/null && fail "the run goes on without its output directory"
wait $PID
rc=$?
PID=
[ $rc = 1 ] || fail "vanished directory: exit $rc: $(cat "$T/err")"
grep -q "$T/e/.*No such file or directory" "$T/err" || fail "message: $(cat "$T/err")"
echo "  vanished: $(head -n 1 "$T/err")"
echo "ok: write failures"
