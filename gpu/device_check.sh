#!/usr/bin/env bash
# device_check.sh - everything one call on a GPU machine does, in one script: unpack the carried
# cmocka/libinih packages (.deps) and SDL2 with the libraries it loads (.deps/sdl; see DEVICE.md),
# build into /tmp/b with the viewer, run the test suite (the gpu and gui labels included, the
# viewer on SDL's offscreen driver), compute-sanitizer over the GPU tests in their quick mode,
# `horizon bench`, and the viewer on the GPU (--gui: a scripted CUDA session's snapshot against
# the CUDA and CPU run frames, byte for byte; --bench-frames at 1920x1080 on the default and the
# large scenario with the CUDA backend, stepping at max).
# Logs go to $OUT (at most 8 files come back): smi.txt build.log ctest.log san.log bench.txt
# bench.json gui.txt summary.txt.
# --overlap runs the bench alone on an idle GPU first, then the tests (-j16) and the sanitizers at
# the same time (both only check results): one call's device time is then about build + bench +
# the slowest test, and a call cut short by its time limit still has the bench.
# usage: bash gpu/device_check.sh [--bench full|quick|none] [--san all|memcheck|none]
#                                 [--tests all|gpu|none] [--ncu] [--overlap] [--gui|--no-gui]
set -u
BENCH=full
SAN=all
TESTS=all
NCU=0
OVERLAP=0
GUI=1
while [ $# -gt 0 ]; do
    case $1 in
    --bench) BENCH=$2; shift 2 ;;
    --san) SAN=$2; shift 2 ;;
    --tests) TESTS=$2; shift 2 ;;
    --ncu) NCU=1; shift ;;
    --overlap) OVERLAP=1; shift ;;
    --gui) GUI=1; shift ;;
    --no-gui) GUI=0; shift ;;
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
for f in .deps/*.deb .deps/sdl/*.deb; do [ -f "$f" ] && dpkg -x "$f" $P; done
L=$P/usr/lib/x86_64-linux-gnu
L2=$P/lib/x86_64-linux-gnu:$P/usr/lib/x86_64-linux-gnu/pulseaudio
export PKG_CONFIG_PATH=$L/pkgconfig PKG_CONFIG_SYSROOT_DIR=$P LIBRARY_PATH=$L:$L2 \
    LD_LIBRARY_PATH=$L:$L2 LDFLAGS="-Wl,-rpath-link,$L:$L2" \
    CPATH=$P/usr/include:$P/usr/include/x86_64-linux-gnu
# No display there: the viewer's tests and checks run on SDL's offscreen driver.
export SDL_VIDEODRIVER=offscreen SDL_AUDIODRIVER=dummy
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

run_gui() {
    [ "$GUI" = 1 ] || return
    local HZ=/tmp/b/app/horizon G=/tmp/hz_gui
    : >"$OUT/gui.txt"
    if ! "$HZ" gui --help >/dev/null 2>&1; then
        note "gui: this build has no viewer (SDL2 not found)"
        return
    fi
    rm -rf $G && mkdir -p $G
    local small="--set world.width=96 --set world.height=64 --set agents.count=400"
    # A scripted CUDA session's snapshot is the CUDA run's frame and the CPU run's frame.
    printf 'step 6\nsnapshot %s/s6.png\nkey l\nkey l\nkey l\nsnapshot %s/h6.png\n' $G $G \
        >$G/s.txt
    for be in cuda cpu; do
        "$HZ" run $small --backend $be --steps 6 --frames-every 6 --frame-size 384x256 \
            --out $G/run_$be --quiet >>"$OUT/gui.txt" 2>&1
    done
    "$HZ" gui $small --backend cuda --size 384x256 --no-session --script $G/s.txt \
        >>"$OUT/gui.txt" 2>&1
    note "gui: scripted cuda session rc=$?"
    local f=frames/frame_000001.png
    cmp $G/s6.png $G/run_cuda/$f >>"$OUT/gui.txt" 2>&1 &&
        note "gui: cuda session snapshot == cuda run frame (byte for byte)" ||
        note "gui: MISMATCH cuda session snapshot vs cuda run frame"
    cmp $G/run_cuda/$f $G/run_cpu/$f >>"$OUT/gui.txt" 2>&1 &&
        note "gui: cuda run frame == cpu run frame" || note "gui: MISMATCH cuda vs cpu frame"
    # The horizon layer from the backend's sums: the same picture on both backends.
    sed -i "s|snapshot $G/s6.png|snapshot $G/c6.png|; s|$G/h6.png|$G/hc.png|" $G/s.txt
    "$HZ" gui $small --backend cpu --size 384x256 --no-session --script $G/s.txt \
        >>"$OUT/gui.txt" 2>&1
    cmp $G/h6.png $G/hc.png >>"$OUT/gui.txt" 2>&1 &&
        note "gui: horizon layer cuda == cpu (byte for byte)" ||
        note "gui: MISMATCH horizon layer cuda vs cpu"
    # Frames/s at 1920x1080 while stepping at max (and the default scenario on the CPU backend).
    for run in "default cuda" "assets/scenarios/large.ini cuda" "default cpu"; do
        set -- $run
        local arg=$1
        [ $1 = default ] && arg=""
        "$HZ" gui $arg --backend $2 --size 1920x1080 --no-session --bench-frames 600 \
            >$G/bench.txt 2>&1
        note "gui bench $1 $2 1920x1080: $(grep -o '[0-9.]* frames/s, [0-9]* steps ([0-9.]* steps/s)' $G/bench.txt)"
        cat $G/bench.txt >>"$OUT/gui.txt"
    done
}

run_san() {
    [ "$SAN" = none ] && return
    local tools="memcheck racecheck initcheck synccheck"
    [ "$SAN" = memcheck ] && tools=memcheck
    : >"$OUT/san.log"
    for tool in $tools; do
        for t in test_gpu_horizon test_gpu_step test_gpu_batch test_gpu_alloc test_gpu_probe \
            test_gpu_model; do
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
    run_gui
    run_tests &
    run_san &
    wait
    run_ncu
else
    run_tests
    run_bench
    run_gui
    run_ncu
    run_san
fi
note "done"
