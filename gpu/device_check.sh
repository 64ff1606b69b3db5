#!/usr/bin/env bash
# device_check.sh - everything one call on a GPU machine does, in one script: unpack the carried
# cmocka/libinih packages (.deps, see DEVICE.md), build into /tmp/b, run the test suite (the gpu
# label included), compute-sanitizer over the GPU tests in their quick mode, and `horizon bench`.
# Logs go to $OUT (at most 8 files come back): smi.txt build.log ctest.log san.log bench.txt
# bench.json summary.txt.
# --overlap runs the bench alone on an idle GPU first, then the tests (-j16) and the sanitizers at
# the same time (both only check results): one call's device time is then about build + bench +
# the slowest test, and a call cut short by its time limit still has the bench.
# usage: bash gpu/device_check.sh [--bench full|quick|none] [--san all|memcheck|none]
#                                 [--tests all|gpu|none] [--ncu] [--overlap]
set -u
BENCH=full
SAN=all
TESTS=all
NCU=0
OVERLAP=0
while [ $# -gt 0 ]; do
    case $1 in
    --bench) BENCH=$2; shift 2 ;;
    --san) SAN=$2; shift 2 ;;
    --tests) TESTS=$2; shift 2 ;;
    --ncu) NCU=1; shift ;;
    --overlap) OVERLAP=1; shift ;;
    *) echo "unknown option $1"; exit 2 ;;
    esac
done
OUT=${OUT:-/tmp/hz_out}
mkdir -p "$OUT"
S="$OUT/summary.txt"
: >"$S"
t0=$(date +%s)
note() { echo "[$(($(date +%s) - t0))s] $*" | tee -a "$S"; }

P=/tmp/deps
mkdir -p $P
for f in .deps/*.deb; do dpkg -x "$f" $P; done
L=$P/usr/lib/x86_64-linux-gnu
export PKG_CONFIG_PATH=$L/pkgconfig PKG_CONFIG_SYSROOT_DIR=$P LIBRARY_PATH=$L LD_LIBRARY_PATH=$L \
    CPATH=$P/usr/include
nvidia-smi >"$OUT/smi.txt" 2>&1
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader >>"$S"

if ! { cmake -S . -B /tmp/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
    cmake --build /tmp/b -j16; } >"$OUT/build.log" 2>&1; then
    note "BUILD FAILED"
    grep -E "error|Error" "$OUT/build.log" | head -30 | tee -a "$S"
    exit 1
fi
note "built"

run_tests() {
    [ "$TESTS" = none ] && return
    local sel="-LE soak" jobs=8
    [ "$TESTS" = gpu ] && sel="-L gpu"
    [ "$OVERLAP" = 1 ] && jobs=16
    (cd /tmp/b && ctest $sel -j$jobs --timeout 600 --output-on-failure) >"$OUT/ctest.log" 2>&1
    note "ctest ($TESTS) rc=$?"
    grep -E "tests passed|Skipped|Failed|\*\*\*|Not Run|Timeout" "$OUT/ctest.log" | tail -20 >>"$S"
    grep -E "^ *[0-9]+/[0-9]+ Test" "$OUT/ctest.log" | grep -E "gpu" >>"$S"
}

run_bench() {
    [ "$BENCH" = none ] && return
    local q=""
    [ "$BENCH" = quick ] && q=--quick
    /tmp/b/app/horizon bench --backend cuda $q --json "$OUT/bench.json" >"$OUT/bench.txt" 2>&1
    note "bench ($BENCH) rc=$?"
}

run_ncu() {
    [ "$NCU" = 1 ] || return
    # The step's kernels on the large scenario, mid-run (graph nodes are profiled one by one).
    ncu --clock-control none --kernel-name-base mangled \
        --kernel-name "regex:decide_out|jf_kernel|move_kernel|st_field" --launch-skip 40 \
        --launch-count 4 --section SpeedOfLight --section Occupancy --section LaunchStats \
        --section WarpStateStats --section MemoryWorkloadAnalysis \
        /tmp/b/app/horizon run assets/scenarios/large.ini --backend cuda --steps 30 \
        --frames-every 0 --stats-every 1 --out /tmp/hz_ncu --quiet >"$OUT/ncu.txt" 2>&1
    note "ncu rc=$?"
}

run_san() {
    [ "$SAN" = none ] && return
    local tools="memcheck racecheck initcheck synccheck"
    [ "$SAN" = memcheck ] && tools=memcheck
    : >"$OUT/san.log"
    for tool in $tools; do
        for t in test_gpu_horizon test_gpu_step test_gpu_alloc; do
            # memcheck also looks for device memory never freed in the allocation test, which
            # frees everything and resets the device before it exits
            local leak=""
            [ "$tool" = memcheck ] && [ "$t" = test_gpu_alloc ] && leak="--leak-check full"
            HZ_GPU_QUICK=1 timeout 240 compute-sanitizer --tool "$tool" $leak --error-exitcode 1 \
                /tmp/b/tests/$t >>"$OUT/san.log" 2>&1
            rc=$?
            note "compute-sanitizer --tool $tool $t (quick): rc=$rc"
            grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error" "$OUT/san.log" | tail -1 >>"$S"
        done
    done
}

if [ "$OVERLAP" = 1 ]; then
    run_bench
    run_tests &
    run_san &
    wait
    run_ncu
else
    run_tests
    run_bench
    run_ncu
    run_san
fi
note "done"
