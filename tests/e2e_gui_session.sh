# e2e_gui_session.sh - what a viewer session records and how it is replayed: DIR/session_NNN/
# holds scenario.ini, stats.csv (the columns and bytes of `horizon run`) and events.csv; changes
# made through the parameter panel (keys, a click on [+], a drag on a value) and a fast paint
# stroke are recorded, and `horizon run --events` replays them to the same checksums; on a model
# with named sections the panel changes and records its named keys. Also: E
# writes steps.csv beside the frames, a click on an agent follows it, --steps-per-frame 3 is
# honoured, [ and ] stay off stdout, --no-session writes nothing. SDL's offscreen driver.
# usage: bash e2e_gui_session.sh HORIZON_BINARY SOURCE_DIR
set -euo pipefail

export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
HZ=$1
SRC=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/hz_e2e_gui_session.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

if [[ $("$HZ" gui --help 2>&1 || true) == *"built without SDL2"* ]]; then
    echo "horizon built without SDL2: skipped"
    exit 77
fi
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
export SDL_VIDEODRIVER=offscreen
SMALL=(--set world.width=96 --set world.height=64 --set agents.count=400 --set agents.radius=3
       --backend cpu)

# gui NAME SCRIPT_TEXT ARGS...: runs a script with output in $T/NAME, echoing the exit code.
gui() {
    local name=$1 text=$2
    shift 2
    printf '%s\n' "$text" >"$T/$name.txt"
    local rc=0
    timeout 120 "$HZ" gui "${SMALL[@]}" --size 384x256 --out "$T/$name" --script "$T/$name.txt" \
        "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    echo "$rc"
}

# ---- a session without changes: its stats.csv is horizon run's, byte for byte ----
rc=$(gui plain "step 25")
[ "$rc" = 0 ] || { cat "$T/plain.err" >&2; fail "plain session exited $rc"; }
S=$T/plain/session_001
for f in scenario.ini stats.csv events.csv; do [ -f "$S/$f" ] || fail "session lacks $f"; done
grep -q "recording the session to $S/" "$T/plain.out" || fail "the session dir was not said"
"$HZ" run "${SMALL[@]}" --steps 25 --stats-every 1 --out "$T/plain_run" --quiet
cmp "$T/plain_run/stats.csv" "$S/stats.csv" || fail "session stats.csv differs from horizon run's"
[ "$(cat "$S/events.csv")" = "step,event,value" ] || fail "events.csv of a session without changes"

# ---- the parameter panel, a paint stroke, and the replay ----
# The panel (384x256 view, font scale 1): its text starts at (143, 111); row k (0 = noise) is
# text line k+1, 10 pixels apart; [+] is at columns 35..37 (6 pixels each).
rc=$(gui panel "key tab
key period
step 10
key down
key down
key period
step 5
click 360 154
step 5
drag 200 134 225 134
stroke 20 20 300 120
step 10")
[ "$rc" = 0 ] || { cat "$T/panel.err" >&2; fail "panel session exited $rc"; }
S=$T/panel/session_001
ev=$S/events.csv
grep -qx '0,agents.noise,0.31' "$ev" || fail "the . key on noise: $(cat "$ev")"
grep -qx '10,agents.radius,4' "$ev" || fail "down, down, . on radius: $(cat "$ev")"
grep -qx '15,field.diffusion,0.625' "$ev" || fail "a click on [+] of diffusion: $(cat "$ev")"
grep -qx '20,agents.deposit,1.5625' "$ev" || fail "a drag of two steps on deposit: $(cat "$ev")"
# The stroke: one disc per brush half-radius along the line, no gaps.
python3 - "$ev" <<'PY' || fail "the stroke has gaps: $(grep paint "$ev" | head)"
import sys
pts = [tuple(map(int, l.split(",")[2].split()[:3])) for l in open(sys.argv[1]) if ",paint," in l]
assert len(pts) >= 20, pts
for (x0, y0, r), (x1, y1, _) in zip(pts, pts[1:]):
    assert max(abs(x1 - x0), abs(y1 - y0)) <= max(1, r // 2), (x0, y0, x1, y1)
PY
"$HZ" run "$S/scenario.ini" --events "$ev" --steps 30 --stats-every 1 --out "$T/replay" --quiet ||
    fail "the replay run failed"
cmp "$T/replay/stats.csv" "$S/stats.csv" || fail "the replay's checksums differ from the session's"
cmp -s "$T/plain_run/stats.csv" "$S/stats.csv" && fail "the changes changed nothing"

# ---- a model with named sections: the panel's rows are its named keys, recorded by name ----
printf '%s\n' "key tab" "key period" "step 5" "key down" "key down" "key down" "key period" \
    "step 5" >"$T/named.txt"
timeout 120 "$HZ" gui wolf-sheep-grass --backend cpu --size 384x256 --out "$T/named" \
    --script "$T/named.txt" >"$T/named.out" 2>"$T/named.err" ||
    { cat "$T/named.err" >&2; fail "named model session failed"; }
S=$T/named/session_001
ev=$S/events.csv
grep -qx '0,species.sheep.noise,0.31' "$ev" || fail "the . key on species.sheep.noise: $(cat "$ev")"
grep -qx '5,species.wolves.radius,5' "$ev" || fail "down x3, . on species.wolves.radius: $(cat "$ev")"
grep -q 'agents\.' "$ev" && fail "a named model's session recorded a shorthand key: $(cat "$ev")"
"$HZ" run "$S/scenario.ini" --events "$ev" --steps 10 --stats-every 1 --out "$T/named_replay" \
    --quiet || fail "the named model's replay run failed"
cmp "$T/named_replay/stats.csv" "$S/stats.csv" || fail "the named model's replay differs"
"$HZ" run wolf-sheep-grass --backend cpu --steps 10 --stats-every 1 --frames-every 0 \
    --out "$T/named_plain" --quiet || fail "wolf-sheep-grass without changes failed"
cmp -s "$T/named_plain/stats.csv" "$S/stats.csv" && fail "the named model's changes changed nothing"

# ---- a restart starts session_002 from the parameters in force ----
rc=$(gui restart "key tab
key period
step 3
key r
step 4")
[ "$rc" = 0 ] || fail "restart session exited $rc"
[ "$(tail -n +2 "$T/restart/session_001/stats.csv" | wc -l)" = 3 ] || fail "session_001 rows"
[ "$(tail -n +2 "$T/restart/session_002/stats.csv" | wc -l)" = 4 ] || fail "session_002 rows"
grep -q '^noise = 0.31' "$T/restart/session_002/scenario.ini" ||
    fail "session_002 does not start from the changed noise"

# ---- E: frames with steps.csv ----
rc=$(gui rec "key e
step 2
step 3
key e")
[ "$rc" = 0 ] || fail "recording session exited $rc"
R=$T/rec/recording_001
[ "$(head -1 "$R/steps.csv")" = "frame,step" ] || fail "steps.csv header"
[ "$(tail -1 "$R/steps.csv")" = "$(( $(ls "$R"/frame_*.png | wc -l) - 1 )),5" ] ||
    fail "steps.csv: $(cat "$R/steps.csv")"

# ---- a click on an agent selects it and the camera follows it ----
rc=$(gui find "snapshot $T/find.png")
[ "$rc" = 0 ] || fail "snapshot session exited $rc"
# PNG pixels with python3 alone (tests/hz_png.py: pixel, count, agent).
PNG=$SRC/tests/hz_png.py
xy=$(python3 "$PNG" agent "$T/find.png") || fail "no agent found in the snapshot"
rc=$(gui follow "click $xy
wheel ${xy% *} ${xy#* } 8
step 12
snapshot $T/follow.png
quit")
[ "$rc" = 0 ] || { cat "$T/follow.err" >&2; fail "follow session exited $rc"; }
grep -q "following agent #[0-9]*" "$T/follow.out" || fail "the click selected no agent: $(cat "$T/follow.out")"
# The camera keeps the agent in the middle: the centre pixel shows an agent.
[ "$(python3 "$PNG" pixel "$T/follow.png" 192 128)" = ffffff ] ||
    fail "the followed agent is not at the centre of the view"

# ---- A: agents coloured by whether they moved in the last step (magenta) ----
rc=$(gui moved "step 2
snapshot $T/plain.png
key a
step 1
snapshot $T/moved.png
key a
snapshot $T/plain2.png")
[ "$rc" = 0 ] || { cat "$T/moved.err" >&2; fail "moved-colouring session exited $rc"; }
[ "$(python3 "$PNG" count "$T/moved.png" ff00ff)" -gt 20 ] || fail "A: no magenta agents"
[ "$(python3 "$PNG" count "$T/plain.png" ff00ff)" = 0 ] &&
    [ "$(python3 "$PNG" count "$T/plain2.png" ff00ff)" = 0 ] || fail "A: magenta without A"

# ---- pace, quiet keys, no session ----
out=$(timeout 60 "$HZ" gui "${SMALL[@]}" --size 200x150 --steps-per-frame 3 --bench-frames 20 \
      --no-session --out "$T/bench")
[[ $out == *"3 steps/frame"* ]] || fail "--steps-per-frame 3: $out"
[ -e "$T/bench" ] && fail "--no-session wrote $T/bench"
rc=0
"$HZ" gui "${SMALL[@]}" --steps-per-frame 1025 >/dev/null 2>"$T/spf.err" || rc=$?
[ "$rc" = 2 ] || fail "--steps-per-frame 1025 exited $rc"
rc=$(gui quiet "key ]
key [
key [")
[ "$rc" = 0 ] || fail "quiet session exited $rc"
grep -q brush "$T/quiet.out" && fail "[ and ] print on stdout: $(cat "$T/quiet.out")"
echo "e2e_gui_session: ok"
