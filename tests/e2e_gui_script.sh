# e2e_gui_script.sh - `horizon gui --script`: deterministic viewer runs. A snapshot after
# `step N` is byte for byte the frame `horizon run` writes for the same step, scenario and frame
# size (also letterboxed, after a colormap key, after a restart); scripted input (click, paint,
# drag, wheel, resize, layers) works; bad scripts exit 2 with file:line. Runs on SDL's
# offscreen video driver (no X server needed).
# usage: bash e2e_gui_script.sh HORIZON_BINARY SOURCE_DIR
set -euo pipefail

# Under a sanitizer build, the system libraries behind SDL (X11, D-Bus, Mesa's GL drivers) leave
# allocations behind at exit that are not Horizon's; the viewer's own memory is leak-checked by
# the test_gui_* unit tests.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
HZ=$1
T=$(mktemp -d "${TMPDIR:-/tmp}/hz_e2e_gui_script.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

gui_help=$("$HZ" gui --help 2>&1 || true)
if [[ $gui_help == *"built without SDL2"* ]]; then
    echo "horizon built without SDL2: skipped"
    exit 77
fi
"$HZ" gui --help >"$T/help.txt" || fail "horizon gui --help exits non-zero"
grep -q -- "--script" "$T/help.txt" || fail "gui --help does not list --script"

# Scripts need no X server: SDL's offscreen driver renders the same pixels, and avoids starting
# one Xvfb per script (xvfb-run fails now and then on a loaded machine while cleaning up).
export SDL_VIDEODRIVER=offscreen
GUI=("$HZ" gui)

SMALL=(--set world.width=96 --set world.height=64 --set agents.count=400 --set agents.radius=3
       --backend cpu)

# gui RC_FILE SCRIPT_TEXT ARGS...: runs a script, keeping stdout/stderr, echoing the exit code.
gui() {
    local name=$1 text=$2
    shift 2
    printf '%s\n' "$text" >"$T/$name.txt"
    local rc=0
    timeout 120 "${GUI[@]}" "${SMALL[@]}" --out "$T/o_$name" --script "$T/$name.txt" "$@" \
        >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    echo "$rc"
}

# ---- snapshots equal horizon run's frames ----
"$HZ" run "${SMALL[@]}" --steps 12 --frames-every 6 --frame-size 384x256 --out "$T/run" \
    --quiet || fail "horizon run failed"
rc=$(gui same "snapshot $T/s0.png
step 6
snapshot $T/s6.png
step 6
snapshot $T/s12.png
quit" --size 384x256)
[ "$rc" = 0 ] || { cat "$T/same.err" >&2; fail "script exited $rc"; }
cmp "$T/run/frames/frame_000000.png" "$T/s0.png" || fail "step 0: snapshot differs from the run frame"
cmp "$T/run/frames/frame_000001.png" "$T/s6.png" || fail "step 6: snapshot differs from the run frame"
cmp "$T/run/frames/frame_000002.png" "$T/s12.png" || fail "step 12: snapshot differs from the run frame"
grep -q "quit at step 12" "$T/same.out" || fail "stdout lacks 'quit at step 12': $(cat "$T/same.out")"

# With a usable GPU the device composes the picture: the same bytes again.
printf 'quit\n' >"$T/quit.txt"
if timeout 120 "${GUI[@]}" "${SMALL[@]/cpu/cuda}" --script "$T/quit.txt" >/dev/null 2>&1; then
    rc=$(gui cuda "step 6
snapshot $T/c6.png" --size 384x256 --backend cuda)
    [ "$rc" = 0 ] || { cat "$T/cuda.err" >&2; fail "cuda script exited $rc"; }
    cmp "$T/run/frames/frame_000001.png" "$T/c6.png" || fail "cuda: snapshot differs from the run frame"
    echo "cuda backend: snapshot equals the CPU run's frame"
fi

# A frame of another shape (the world letterboxed) and the colormap key against --colormap.
"$HZ" run "${SMALL[@]}" --steps 5 --frames-every 5 --frame-size 250x300 --colormap magma \
    --out "$T/run2" --quiet || fail "horizon run (magma) failed"
rc=$(gui cmap "step 5
key c
snapshot $T/m5.png" --size 250x300)
[ "$rc" = 0 ] || { cat "$T/cmap.err" >&2; fail "colormap script exited $rc"; }
cmp "$T/run2/frames/frame_000001.png" "$T/m5.png" || fail "key c: not the magma frame"

# R restarts the same world; Shift+R a new one.
rc=$(gui restart "step 7
key r
snapshot $T/r0.png
key shift+r
snapshot $T/r1.png" --size 384x256)
[ "$rc" = 0 ] || { cat "$T/restart.err" >&2; fail "restart script exited $rc"; }
cmp "$T/run/frames/frame_000000.png" "$T/r0.png" || fail "key r: not the initial state"
cmp -s "$T/run/frames/frame_000000.png" "$T/r1.png" && fail "shift+r: the same world again"
grep -q "seed 2" "$T/restart.out" || fail "shift+r did not say the new seed"

# ---- the other inputs: they run, change the picture, and leave a valid snapshot ----
rc=$(gui input "step 3
snapshot $T/i0.png
paint 190 120
snapshot $T/i1.png
click 100 100
wheel 192 128 3
drag 100 100 160 130
key l
key l
key l
snapshot $T/i2.png
key 0
resize 300 200
key h
wait 3
snapshot $T/i3.png
key n
key right
key e
step 4
key e
quit" --size 384x256 --out "$T/out")
[ "$rc" = 0 ] || { cat "$T/input.err" >&2; fail "input script exited $rc"; }
cmp -s "$T/i0.png" "$T/i1.png" && fail "paint did not change the picture"
cmp -s "$T/i1.png" "$T/i2.png" && fail "zoom/pan/horizon layer did not change the picture"
for f in i1 i2 i3; do
    [ "$(od -An -tx1 -N8 "$T/$f.png" | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$f.png is not a PNG"
done
# the resized view: 300 x 200 pixels (IHDR width and height)
[ "$(od -An -tu1 -j16 -N8 "$T/i3.png" | awk '{print $3*256+$4 "x" $7*256+$8}')" = 300x200 ] ||
    fail "resize: snapshot is not 300x200"
grep -q "quit at step 9" "$T/input.out" || fail "n, right, step did not step: $(cat "$T/input.out")"
# E ... E recorded the states shown (at least the first and the last) into the output directory
rec=$(sed -n 's/^horizon gui: recorded \([0-9]*\) frames to .*/\1/p' "$T/input.out")
[ -n "$rec" ] && [ "$rec" -ge 2 ] || fail "E recorded '$rec' frames: $(cat "$T/input.out")"
[ "$(ls "$T"/out/recording_001/frame_*.png | wc -l)" = "$rec" ] || fail "recording_001/ lacks frames"

# ---- no usable display (and no SDL_VIDEODRIVER asked for): exit 1 at once, with the reason ----
for display in unset :99; do
    t0=$(date +%s%N)
    rc=0
    if [ $display = unset ]; then
        env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER timeout 10 "$HZ" gui "${SMALL[@]}" \
            >/dev/null 2>"$T/nodisplay.err" || rc=$?
    else
        env -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER DISPLAY=$display timeout 10 "$HZ" gui \
            "${SMALL[@]}" >/dev/null 2>"$T/nodisplay.err" || rc=$?
    fi
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ "$rc" = 1 ] || fail "no display ($display): exit $rc after $ms ms: $(cat "$T/nodisplay.err")"
    [ "$ms" -lt 2000 ] || fail "no display ($display): took $ms ms"
    grep -q "no usable display.*horizon run" "$T/nodisplay.err" ||
        fail "no display ($display): $(cat "$T/nodisplay.err")"
done

# ---- the output directory's lock: a session never writes where a run is writing ----
"$HZ" run "${SMALL[@]}" --steps 100000000 --stats-every 1 --out "$T/held" --quiet &
HOLDER=$!
for _ in $(seq 1 500); do [ -s "$T/held/stats.csv" ] && break; sleep 0.02; done
rc=$(gui held "key s
quit" --out "$T/held")
kill -9 $HOLDER
wait $HOLDER 2>/dev/null || true
[ "$rc" = 0 ] || fail "snapshot into a held directory: exit $rc"
grep -q "cannot write: $T/held: in use by pid $HOLDER" "$T/held.out" ||
    fail "snapshot into a held directory: $(cat "$T/held.out")"
ls "$T/held" | grep -q snapshot && fail "the session wrote into a directory a run holds"
# once the run is gone (kill -9: the kernel dropped its lock) the snapshot goes there
rc=$(gui held2 "key s
quit" --out "$T/held")
[ "$rc" = 0 ] && ls "$T/held" | grep -q '^snapshot_000000.png$' ||
    fail "snapshot after the holder died: $(cat "$T/held2.out")"

# ---- bad scripts: exit 2 with the file and line, nothing opened ----
rc=$(gui bad "step 1
jump 3")
[ "$rc" = 2 ] || fail "a bad command exited $rc, expected 2"
grep -q "bad.txt:2: unknown command 'jump'" "$T/bad.err" || fail "message: $(cat "$T/bad.err")"
rc=$(gui badkey "key nosuchkey")
[ "$rc" = 2 ] || fail "an unknown key exited $rc, expected 2"
grep -q "badkey.txt:1: key: unknown key 'nosuchkey'" "$T/badkey.err" || fail "message: $(cat "$T/badkey.err")"
rc=0
"$HZ" gui --script "$T/missing.txt" >/dev/null 2>"$T/missing.err" || rc=$?
[ "$rc" = 2 ] || fail "a missing script exited $rc, expected 2"
rc=0
"$HZ" gui --no-such-option >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "an unknown option exited $rc, expected 2"
# ---- a model of the library by name: two species, births and deaths ----
"$HZ" run wolf-sheep-grass --backend cpu --steps 30 --frames-every 15 --frame-size 288x288 \
    --out "$T/wsg_run" --quiet || fail "horizon run wolf-sheep-grass failed"
printf 'snapshot %s\nstep 15\nsnapshot %s\nstep 15\nsnapshot %s\nquit\n' "$T/w0.png" \
    "$T/w15.png" "$T/w30.png" >"$T/wsg.txt"
timeout 120 "${GUI[@]}" wolf-sheep-grass --backend cpu --out "$T/wsg_gui" --size 288x288 \
    --script "$T/wsg.txt" >"$T/wsg.out" 2>"$T/wsg.err" || { cat "$T/wsg.err" >&2; fail "gui wolf-sheep-grass"; }
for k in 0 1 2; do
    cmp "$T/wsg_run/frames/frame_00000$k.png" "$T/w$((k * 15)).png" ||
        fail "wolf-sheep-grass step $((k * 15)): snapshot differs from the run frame"
done
cmp "$T/wsg_run/stats.csv" "$T/wsg_gui/session_001/stats.csv" ||
    fail "wolf-sheep-grass: the session's stats.csv differs from horizon run's"
echo "e2e_gui_script: ok"
