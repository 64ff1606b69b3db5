# e2e_gpu_run.sh - `horizon run --backend cuda` against `--backend cpu` end to end: identical
# stats.csv and identical PNG frames (CUDA compose vs host compose) for the shipped scenarios
# at a reduced size, the exit codes of the device paths, and `horizon bench --quick`.
# Skipped (77) when `horizon info` finds no CUDA device.
# usage: bash e2e_gpu_run.sh HORIZON_BINARY SOURCE_DIR
set -euo pipefail

HZ=$1
SRC=$2
if ! "$HZ" info 2>/dev/null | grep -q '^cuda device'; then
    echo "e2e_gpu_run: no CUDA device: skipped"
    exit 77
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/hz_e2e_gpu.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# run NAME SCENARIO BACKEND [--set ...]: a short run with frames into $T/NAME.BACKEND
run_one() {
    local name=$1 scenario=$2 backend=$3
    shift 3
    "$HZ" run "$scenario" --backend "$backend" --out "$T/$name.$backend" --quiet \
        --frames-every 5 --stats-every 1 "$@" || fail "$name: --backend $backend exited $?"
}

# refuses VAR VALUE TAG: a run with the measuring aid VAR=VALUE exits non-zero, naming it.
refuses() {
    local var=$1 value=$2 tag=$3 rc=0
    env "$var=$value" "$HZ" run "$S/default.ini" --backend cuda --steps 2 --out "$T/$tag" \
        --quiet --set world.width=64 --set world.height=64 2>"$T/$tag.txt" || rc=$?
    [ "$rc" -ne 0 ] || fail "$var=$value: the run succeeded"
    grep -q "$var=$value" "$T/$tag.txt" || fail "$var=$value: unclear message: $(cat "$T/$tag.txt")"
}

compare() {
    local name=$1 scenario=$2
    shift 2
    run_one "$name" "$scenario" cpu "$@"
    run_one "$name" "$scenario" cuda "$@"
    diff "$T/$name.cpu/stats.csv" "$T/$name.cuda/stats.csv" >/dev/null ||
        fail "$name: stats.csv differs between cpu and cuda"
    local rows
    rows=$(wc -l <"$T/$name.cuda/stats.csv")
    [ "$rows" -gt 10 ] || fail "$name: only $rows stats rows"
    local n=0 f
    for f in "$T/$name.cpu/frames/"*.png; do
        cmp -s "$f" "$T/$name.cuda/frames/$(basename "$f")" ||
            fail "$name: frame $(basename "$f") differs between cpu and cuda"
        n=$((n + 1))
    done
    [ "$n" -gt 0 ] || fail "$name: no frames written"
    echo "ok: $name ($((rows - 1)) steps, $n frames identical)"
}

S=$SRC/assets/scenarios
compare default "$S/default.ini" --steps 40 --set world.width=211 --set world.height=157
compare large "$S/large.ini" --steps 30 --set agents.count=3000 --set world.width=256 \
    --set world.height=192
compare laplace "$S/laplace.ini" --steps 12 --set world.width=300 --set world.height=150
compare wall "$S/default.ini" --steps 25 --set world.boundary=wall --set agents.radius=12 \
    --set agents.density=0.3 --set field.sweeps=3 --set world.width=99 --set world.height=101
compare fixed "$S/default.ini" --steps 25 --set world.boundary=fixed --set world.fixed_left=3 \
    --set agents.radius=0 --set agents.density=1 --set world.width=64 --set world.height=48

# Grids of more than GPU_ST_ONE_WARP_ROWS (1024) rows take the eight-warp column sums, the others
# the one-warp kernel (gpu_stats.cu): a tall, narrow world (a partial block of columns) too.
compare tall "$S/default.ini" --steps 12 --set world.width=40 --set world.height=1100

# HORIZON_HZ_MAPPING=5 (a measuring aid) runs the tile-sum kernel under the SELL mapping: the
# same stats and frames; a value outside 1..5 is refused with a message naming the variable.
HORIZON_HZ_MAPPING=5 compare sell "$S/large.ini" --steps 20 --set agents.count=30000 \
    --set world.width=640 --set world.height=480
rc=0
HORIZON_HZ_MAPPING=9 "$HZ" run "$S/default.ini" --backend cuda --steps 2 --out "$T/badmap" \
    --quiet --set world.width=64 --set world.height=64 2>"$T/badmap.txt" || rc=$?
[ "$rc" -ne 0 ] || fail "HORIZON_HZ_MAPPING=9: the run succeeded"
grep -q 'HORIZON_HZ_MAPPING=9' "$T/badmap.txt" ||
    fail "HORIZON_HZ_MAPPING=9: unclear message: $(cat "$T/badmap.txt")"
echo "ok: HORIZON_HZ_MAPPING"

# The comparisons above launch the step's kernels with programmatic dependence (on for worlds
# up to GPU_PDL_CELLS_MAX); HORIZON_PDL=0 (a measuring aid) turns it off: the same results.
# Any other value than 0 or 1 is refused, naming the variable.
HORIZON_PDL=0 compare nopdl "$S/default.ini" --steps 30 --set world.width=160 --set world.height=96
refuses HORIZON_PDL 2 badpdl
echo "ok: HORIZON_PDL"

# Worlds of at most GPU_ST_DEFER_CELLS_MAX cells defer a batched step's statistics (snapshots of
# the field and agents, summed and hashed many steps at once); HORIZON_ST_DEFER=0 (a measuring
# aid) keeps them in the step and beside it: the same results. Any other value is refused.
HORIZON_ST_DEFER=0 compare nodefer "$S/default.ini" --steps 30 --set world.width=160 \
    --set world.height=96
refuses HORIZON_ST_DEFER x baddefer
echo "ok: HORIZON_ST_DEFER"

# Without the deferral, a step's column sums come from the fused pass's sums (one word a
# column, which every tile adds into) where the field's magnitudes make every order of addition exact
# (gpu_colsum_exact), else from the field's rows in order. With a strong decay this world's
# field spreads from 5 binades at step 3 to 40 at step 30 (the bound at 1,100 rows is 18), so
# its first steps take the partial sums and its last ones the rows: the same rows as the CPU's
# either way. The scalar pass (a width not a multiple of 4), then the persistent vector pass
# with several tiles a block.
HORIZON_ST_DEFER=0 compare exact "$S/default.ini" --steps 30 --set world.width=300 \
    --set world.height=1100 --set field.decay=0.6 --set agents.density=0.01
HORIZON_ST_DEFER=0 HORIZON_JF_PERSIST=5 compare exactjp "$S/default.ini" --steps 30 \
    --set world.width=384 --set world.height=1100 --set field.decay=0.6 \
    --set agents.density=0.01
# And the other way round: a noise of 10^-30 under deposits of 1 spreads the field over ~100
# binades for its first steps (the rows in order: steps 1-2 at 160x96, 1-3 at 384x200, as the
# CPU backend's field dumps show), then diffusion brings every cell within 15 binades (the pass's
# sums): those steps find the pass's row zero only if the steps before left it so.
HORIZON_ST_DEFER=0 compare exact2 "$S/default.ini" --steps 12 --set world.width=160 \
    --set world.height=96 --set field.init_noise=1e-30
HORIZON_ST_DEFER=0 HORIZON_JF_PERSIST=5 compare exact2jp "$S/default.ini" --steps 12 \
    --set world.width=384 --set world.height=200 --set field.init_noise=1e-30

# The two-sweep vector pass with the deposit has a persistent form (gpu_jacobi.cu, jp_kernel:
# each block takes several tiles, the next one's loads in flight while it sweeps one) for the
# steps without statistics of worlds with at least two tiles for each block that fits at once.
# HORIZON_JF_PERSIST=N (N >= 2, a measuring and testing aid) forces it with at most N blocks, so
# that these small worlds' blocks take several tiles each, partial tiles at the right and bottom
# edges among them; statistics every 7th step leave it the six steps between: the same rows and
# frames. 0 turns it off; a value that is not a count is refused, naming the variable.
HORIZON_JF_PERSIST=5 compare persist "$S/default.ini" --steps 84 --stats-every 7 \
    --set world.width=260 --set world.height=160
HORIZON_JF_PERSIST=2 compare persist2 "$S/large.ini" --steps 77 --stats-every 7 \
    --set agents.count=6000 --set world.width=384 --set world.height=200
HORIZON_JF_PERSIST=0 compare nopersist "$S/default.ini" --steps 84 --stats-every 7 \
    --set world.width=260 --set world.height=160
refuses HORIZON_JF_PERSIST x badjp
echo "ok: HORIZON_JF_PERSIST"

# The tile-sum kernel has an instance with the radius GPU_HZ_RC (8) compiled in;
# HORIZON_HZ_RC=0 (a measuring aid) runs the general loop instead: the same results. Any other
# value than 0 or 1 is refused, naming the variable.
HORIZON_HZ_RC=0 compare norc "$S/default.ini" --steps 30 --set world.width=160 \
    --set world.height=96
refuses HORIZON_HZ_RC 2 badrc
echo "ok: HORIZON_HZ_RC"

# A tiny world's long run: its batches (statistics every 100th step) run whole in the one-block
# kernel; the rows and the end equal the CPU's.
for b in cpu cuda; do
    "$HZ" run "$S/default.ini" --backend "$b" --out "$T/long.$b" --quiet --steps 4700 \
        --stats-every 100 --frames-every 0 --set world.width=64 --set world.height=64 ||
        fail "long: --backend $b exited $?"
done
diff "$T/long.cpu/stats.csv" "$T/long.cuda/stats.csv" >/dev/null ||
    fail "long: stats.csv differs between cpu and cuda (64^2, 4700 steps)"
echo "ok: long (64^2, 4700 steps, the one-block kernel)"

# `info` with a scenario reports the device-memory estimate and how the steps will run: the
# large scenario by graphs, a 64^2 world in one thread block.
"$HZ" info "$S/large.ini" >"$T/info.txt" || fail "info exited $?"
grep -q 'cuda memory estimate' "$T/info.txt" || fail "info: no cuda memory estimate"
grep -q "cuda steps: graphs of the step's kernels (4096 tiles of 64)" "$T/info.txt" ||
    fail "info: the large scenario's step path"
"$HZ" info --set world.width=64 --set world.height=64 >"$T/info64.txt" || fail "info 64 exited"
grep -q 'cuda steps: a tiny world: every batch in one thread block' "$T/info64.txt" ||
    fail "info: a 64^2 world's step path"

# The benchmark's smoke test: every GPU section runs and checks its results.
"$HZ" bench --backend cuda --quick --json "$T/bench.json" >"$T/bench.txt" ||
    { cat "$T/bench.txt"; fail "bench --quick exited $?"; }
grep -q '"gpu"' "$T/bench.json" || fail "bench json has no gpu member"
grep -q 'gpu Laplace' "$T/bench.txt" || fail "bench table incomplete"
echo "ok: bench --quick"
