#!/usr/bin/env bash
# e2e_gpu_resume.sh - checkpoints across backends (labels e2e, gpu): a run checkpointed on the
# CPU and resumed on CUDA, one checkpointed on CUDA and resumed on the CPU, and one interrupted
# with SIGINT on CUDA and resumed there, all give stats.csv (checksums included), frames and the
# final checksum byte-identical to an uninterrupted CPU run. Exit 77 (skipped) without a usable
# CUDA device.
# usage: e2e_gpu_resume.sh HORIZON_BINARY SOURCE_DIR
set -u
H=$1
T=$(mktemp -d /tmp/hz_e2e_gpu_resume_XXXXXX)
PID=
trap '[ -n "$PID" ] && kill -9 "$PID" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! "$H" run --backend cuda --steps 0 --frames-every 0 --quiet --out "$T/probe" 2> "$T/why"
then
    echo "skipped: no usable CUDA backend ($(cat "$T/why"))"
    exit 77
fi

opts=(--quiet --frames-every 10)
same_as_ref() {
    cmp "$T/ref/stats.csv" "$1/stats.csv" || fail "$1/stats.csv differs from the CPU run"
    for f in "$T/ref"/frames/*.png; do
        cmp -s "$f" "$1/frames/${f##*/}" || fail "$1/frames/${f##*/} differs from the CPU run"
    done
    [ "$(ls "$1/frames" | wc -l)" = "$(ls "$T/ref/frames" | wc -l)" ] || fail "$1: frame count"
    [ "$(grep final_checksum "$T/ref/run.json")" = "$(grep final_checksum "$1/run.json")" ] ||
        fail "$1: final checksum"
}

"$H" run --backend cpu "${opts[@]}" --out "$T/ref" --steps 40 || fail "CPU reference"

# CPU -> CUDA
"$H" run --backend cpu "${opts[@]}" --out "$T/c2g" --steps 20 --checkpoint-every 20 || fail "c2g 1"
"$H" run --backend cuda "${opts[@]}" --resume "$T/c2g/checkpoint.hzc" --steps 40 ||
    fail "c2g resume on CUDA"
grep -q '"backend": "cuda"' "$T/c2g/run.json" || fail "c2g: not resumed on CUDA"
same_as_ref "$T/c2g"

# CUDA -> CPU
"$H" run --backend cuda "${opts[@]}" --out "$T/g2c" --steps 20 --checkpoint-every 20 || fail "g2c 1"
"$H" run --backend cpu "${opts[@]}" --resume "$T/g2c/checkpoint.hzc" --steps 40 ||
    fail "g2c resume on the CPU"
same_as_ref "$T/g2c"

# SIGINT on CUDA, resumed on CUDA (if the run is over before the signal lands, it must
# still match)
"$H" run --backend cuda "${opts[@]}" --out "$T/sig" --steps 40 --checkpoint-every 7 \
    2> "$T/err" &
PID=$!
for _ in $(seq 1 500); do
    [ -f "$T/sig/checkpoint.hzc" ] && break
    kill -0 $PID 2>/dev/null || break
    sleep 0.01
done
kill -INT $PID 2>/dev/null
wait $PID
rc=$?
PID=
if [ $rc = 130 ]; then
    grep -q "resume with: horizon run --resume" "$T/err" || fail "no resume hint: $(cat "$T/err")"
    "$H" run --backend cuda "${opts[@]}" --resume "$T/sig/checkpoint.hzc" || fail "sig resume"
elif [ $rc != 0 ]; then
    fail "SIGINT on CUDA: exit $rc: $(cat "$T/err")"
fi # (0: the run was done before the signal; it still has to match)
same_as_ref "$T/sig"
echo "ok: checkpoints move between the CPU and CUDA backends bit-identically"
