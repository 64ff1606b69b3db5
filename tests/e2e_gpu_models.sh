# e2e_gpu_models.sh - every model of the library through `horizon run` on CUDA and on the CPU:
# the same stats.csv (checksums, per-species and per-field columns) and the same frames, and a
# model checkpoint written on CUDA resumed on the CPU continues with the same rows.
# Skipped (77) when `horizon info` finds no CUDA device.
# usage: bash e2e_gpu_models.sh HORIZON_BINARY SOURCE_DIR
set -euo pipefail

HZ=$1
SRC=$2
if ! "$HZ" info 2>/dev/null | grep -q '^cuda device'; then
    echo "e2e_gpu_models: no CUDA device: skipped"
    exit 77
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/hz_e2e_gpu_models.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

export HORIZON_DATA_DIR=$SRC/assets
for m in aggregation segregation foraging wolf-sheep-grass maze; do
    for b in cpu cuda; do
        "$HZ" run "$m" --backend "$b" --steps 200 --frames-every 50 --stats-every 1 \
            --out "$T/$m.$b" --quiet || fail "$m: --backend $b exited $?"
    done
    cmp "$T/$m.cpu/stats.csv" "$T/$m.cuda/stats.csv" || fail "$m: stats.csv differs"
    for f in "$T/$m.cpu"/frames/*.png; do
        cmp "$f" "$T/$m.cuda/frames/$(basename "$f")" || fail "$m: $(basename "$f") differs"
    done
done
# laplace at a reduced size
for b in cpu cuda; do
    "$HZ" run laplace --backend "$b" --set world.width=300 --set world.height=200 --steps 50 \
        --frames-every 0 --out "$T/laplace.$b" --quiet || fail "laplace: --backend $b"
done
cmp "$T/laplace.cpu/stats.csv" "$T/laplace.cuda/stats.csv" || fail "laplace: stats.csv differs"

# a checkpoint of wolf-sheep-grass written by CUDA resumes on the CPU to the same rows
"$HZ" run wolf-sheep-grass --backend cuda --steps 120 --checkpoint-every 120 --frames-every 0 \
    --out "$T/ck" --quiet || fail "checkpointed run"
"$HZ" run --resume "$T/ck/checkpoint.hzc" --backend cpu --steps 200 --quiet || fail "resume"
cmp <(head -201 "$T/wolf-sheep-grass.cpu/stats.csv") "$T/ck/stats.csv" ||
    fail "wolf-sheep-grass: CUDA checkpoint resumed on the CPU differs"
echo "e2e_gpu_models: ok"
