# e2e_gui_xvfb.sh - `horizon gui` with real X11 input: under a private Xvfb, xdotool presses
# space, n, +, s, c, l, clicks a cell, drags, right-drags (paint), scrolls and presses q. The
# viewer must exit 0, the S snapshot must be a valid PNG of the window's size, a screenshot of
# the screen must show the field (many colours), and the step counter must have advanced.
# Exit 77 (skipped) without xvfb-run, xdotool or ImageMagick.
# usage: bash e2e_gui_xvfb.sh HORIZON_BINARY SOURCE_DIR
set -euo pipefail

# Under a sanitizer build, the system libraries behind SDL (X11, D-Bus, Mesa's GL drivers) leave
# allocations behind at exit that are not Horizon's; the viewer's own memory is leak-checked by
# the test_gui_* unit tests.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
HZ=$1
SRC=$2
for tool in xvfb-run xdotool import identify; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "$tool not installed: skipped"
        exit 77
    fi
done
gui_help=$("$HZ" gui --help 2>&1 || true)
if [[ $gui_help == *"built without SDL2"* ]]; then
    echo "horizon built without SDL2: skipped"
    exit 77
fi

# Re-run this script inside a private X server (no window manager: focus follows the pointer).
if [ "${HZ_GUI_INNER:-}" != 1 ]; then
    HZ_GUI_INNER=1 exec xvfb-run -a -s "-screen 0 1024x768x24" bash "$0" "$HZ" "$SRC"
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/hz_e2e_gui_xvfb.XXXXXX")
pid=
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
    rm -rf "$T"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    echo "--- viewer stdout:" >&2
    cat "$T/out.txt" >&2 || true
    echo "--- viewer stderr:" >&2
    cat "$T/err.txt" >&2 || true
    exit 1
}

# The default scenario, small enough for a CI machine; 800 x 600 window.
# One step per frame (then two, after +): the session stays short enough to replay quickly.
"$HZ" gui --set world.width=160 --set world.height=120 --backend cpu --size 800x600 \
    --steps-per-frame 1 --out "$T/out" >"$T/out.txt" 2>"$T/err.txt" &
pid=$!
wid=$(timeout 30 xdotool search --sync --onlyvisible --name '^Horizon' | head -n 1) ||
    fail "no viewer window appeared"
[ -n "$wid" ] || fail "no viewer window appeared"
xdotool mousemove --window "$wid" 400 300
sleep 1.5 # let it run a few steps

press() {
    xdotool key --delay 60 "$@"
    sleep 0.3
}
press space # pause
press n     # one step
press plus  # more steps per frame
press s     # snapshot
press c     # colormap
press l     # layer
xdotool mousemove --window "$wid" 420 310 click 1 # inspect a cell
sleep 0.3
xdotool mousemove --window "$wid" 300 250 mousedown 1 mousemove --window "$wid" 340 280 \
    mousemove --window "$wid" 380 300 mouseup 1 # pan
sleep 0.3
xdotool mousemove --window "$wid" 500 300 mousedown 3 mousemove --window "$wid" 520 310 \
    mouseup 3 # paint
xdotool click 4 # wheel: zoom in about the cursor
press space     # run again
sleep 1
import -window root "$T/screen.png" || fail "cannot take a screenshot"
# The parameter panel (800x600 view, font scale 1: its text starts at (559, 455), rows 10
# pixels apart, [+] at columns 35..37): a click on noise's [+], a drag along diffusion's value.
press Tab
xdotool mousemove --window "$wid" 776 468 click 1
sleep 0.3
xdotool mousemove --window "$wid" 600 498 mousedown 1 mousemove --window "$wid" 620 498 \
    mousemove --window "$wid" 640 498 mouseup 1
sleep 0.5
# The colour bar (bottom right) goes with B: paused, the screen differs only by it.
press space
sleep 0.3
import -window "$wid" "$T/bar_on.png" || fail "cannot take a screenshot"
press b
import -window "$wid" "$T/bar_off.png" || fail "cannot take a screenshot"
press q
rc=0
wait "$pid" || rc=$?
pid=
[ "$rc" = 0 ] || fail "the viewer exited $rc"

# The snapshot: named after its step, a PNG of the view's size.
snap=$(ls "$T"/out/snapshot_*.png 2>/dev/null | head -n 1)
[ -n "$snap" ] || fail "S saved no snapshot in $T/out"
[ "$(od -An -tx1 -N8 "$snap" | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$snap: not a PNG"
[ "$(identify -format '%wx%h' "$snap")" = 800x600 ] || fail "$snap is $(identify -format '%wx%h' "$snap")"
grep -q "saved snapshot of step [0-9]* to $snap" "$T/out.txt" || fail "the viewer did not say where the snapshot went"

# The screen shows the window with the field: not blank, plenty of distinct colours.
colours=$(identify -format '%k' "$T/screen.png")
[ "$colours" -gt 64 ] || fail "the screenshot has only $colours colours"
colours=$(identify -format '%k' "$snap")
[ "$colours" -gt 32 ] || fail "the snapshot has only $colours colours"

# The step counter advanced (printed on quit).
step=$(sed -n 's/^horizon gui: quit at step \([0-9]*\) .*/\1/p' "$T/out.txt")
[ -n "$step" ] || fail "no 'quit at step' line"
[ "$step" -gt 1 ] || fail "the step counter did not advance (step $step)"
# The panel's changes are in the session's events.csv, and a headless run replays them.
S=$T/out/session_001
grep -q ',agents.noise,0.31$' "$S/events.csv" || fail "a click on [+] of noise: $(cat "$S/events.csv")"
grep -q ',field.diffusion,' "$S/events.csv" || fail "a drag on diffusion: $(cat "$S/events.csv")"
last=$(tail -1 "$S/stats.csv" | cut -d, -f1)
"$HZ" run "$S/scenario.ini" --events "$S/events.csv" --steps "$last" --stats-every 1 \
    --out "$T/replay" --quiet || fail "the replay of the session failed"
cmp "$T/replay/stats.csv" "$S/stats.csv" || fail "the replay's checksums differ from the session's"
# The colour bar: the bottom-right corner changes with B, the top-left HUD does not.
crop() { convert "$1" -crop "$2" +repage rgb:- | md5sum; }
[ "$(crop "$T/bar_on.png" 300x60+500+540)" != "$(crop "$T/bar_off.png" 300x60+500+540)" ] ||
    fail "B did not toggle a colour bar in the bottom-right corner"

echo "e2e_gui_xvfb: ok (quit at step $step, screenshot with $colours colours)"
