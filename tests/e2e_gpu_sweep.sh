#!/usr/bin/env bash
# e2e_gpu_sweep.sh - `horizon sweep --backend cuda` against `--backend cpu`: the same sweep.csv
# rows (checksums and statistics, bit for bit) for a sweep of worlds whose sides are not
# multiples of the tile, with many runs at once on one GPU, and spread over every GPU of the
# machine (and over 2 MPI ranks with a GPU each, when there are 2 GPUs and mpirun).
# Skipped (77) when `horizon info` finds no CUDA device.
# usage: bash e2e_gpu_sweep.sh HORIZON_BINARY SOURCE_DIR
set -u
H=$1
if ! "$H" info 2>/dev/null | grep -q '^cuda device'; then
    echo "e2e_gpu_sweep: no CUDA device: skipped"
    exit 77
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/hz_e2e_gpu_sweep.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
sorted() { tail -n +2 "$1" | sort -t, -k1,1n; }
cat > "$T/s.ini" <<'INI'
[sweep]
base = default
replicates = 3
agents.noise = 0, 0.1, 0.3
agents.radius = 2, 8
world.boundary = periodic, wall
[world]
width = 77
height = 53
[run]
steps = 60
[output]
stats_every = 0
frames_every = 0
INI
"$H" sweep "$T/s.ini" --out "$T/cpu" --backend cpu --window 7 --quiet || fail "cpu sweep"
"$H" sweep "$T/s.ini" --out "$T/gpu" --backend cuda --jobs 12 --window 7 --quiet ||
    fail "cuda sweep"
diff <(sorted "$T/cpu/sweep.csv") <(sorted "$T/gpu/sweep.csv") > "$T/diff" ||
    fail "cuda rows differ from cpu rows: $(head -4 "$T/diff")"
n=$("$H" info | grep -c '^cuda device')
if [ "$n" -ge 2 ]; then
    "$H" sweep "$T/s.ini" --out "$T/gpu2" --backend cuda --gpus 0,1 --window 7 --quiet ||
        fail "2-GPU sweep"
    diff <(sorted "$T/cpu/sweep.csv") <(sorted "$T/gpu2/sweep.csv") >/dev/null ||
        fail "2-GPU rows differ"
    if command -v mpirun >/dev/null && "$H" info | grep -q '^mpi: yes'; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        mpirun --oversubscribe -np 2 bash -c \
            'exec "$0" sweep "$1" --out "$2" --backend cuda --gpus $OMPI_COMM_WORLD_RANK --window 7 --quiet' \
            "$H" "$T/s.ini" "$T/mpi" > "$T/mpi.log" 2>&1 || fail "mpirun: $(tail -3 "$T/mpi.log")"
        diff <(sorted "$T/cpu/sweep.csv") <(sorted "$T/mpi/sweep.csv") >/dev/null ||
            fail "mpirun 2 ranks x 1 GPU: rows differ"
    fi
fi
echo "ok: cuda sweep rows equal cpu rows ($(tail -n +2 "$T/cpu/sweep.csv" | wc -l) runs, $n GPUs)"
