# e2e_legend.sh - output.legend end to end: frames with the legend differ from frames without it
# exactly in the bottom-right rectangle that render_legend.h promises (at scale 2 for a 1024-pixel
# frame, scale 1 for a small one, wider for the fixed-range label), stay opaque, and are the same
# in `horizon sweep --keep frames`; legend=0 frames are byte-identical to frames of a run without
# the key; a frame too small for the legend is left as it was; a checkpoint written with the key
# resumes to the same frames; a bad value exits 2 naming the --set argument or the file's line.
# usage: bash e2e_legend.sh HORIZON_BINARY SOURCE_DIR
set -euo pipefail

HZ=$1
SRC=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/hz_e2e_legend.XXXXXX")
trap 'rm -rf "$T"' EXIT
: "$SRC"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }

# PNGs are compared with tests/hz_png.py (diff: the bounding box of the pixels that differ).
PNG=$SRC/tests/hz_png.py

# The rectangle render_legend.h promises for a W-pixel-wide, H-high frame: scale S (2 from 1000
# pixels wide), a panel (max(136, label width) + 2*4) x 42 font pixels, label width 6*chars - 1,
# RENDER_LEGEND_MARGIN = 6 font pixels from the right and bottom edges. Prints "x0 y0 x1 y1".
rect() { # W H S LABEL_CHARS
    local w=$1 h=$2 s=$3 lab=$(($4 * 6 - 1))
    local bw=$((lab > 136 ? lab : 136))
    local lw=$(((bw + 8) * s)) lh=$((42 * s)) m=$((6 * s))
    echo "$((w - m - lw)) $((h - m - lh)) $((w - m)) $((h - m))"
}

AUTO_TEXT="field  auto: frame max"
FIXED_TEXT="field  fixed: output.range_max"

# Checks that frames A/frames/NAME and B/frames/NAME differ exactly in the rectangle "x0 y0 x1 y1"
# (every pixel of the panel darkens a field pixel, so the box of the differences is the whole
# rectangle; a few bar pixels may happen to equal the field pixel under them).
check_only_rect() { # DIR_OFF DIR_ON NAME "x0 y0 x1 y1"
    local got
    got=$(python3 "$PNG" diff "$1/$3" "$2/$3") || fail "$3: $got"
    local w h x0 y0 x1 y1 n rx0 ry0 rx1 ry1
    read -r w h x0 y0 x1 y1 n <<<"$got"
    read -r rx0 ry0 rx1 ry1 <<<"$4"
    [ "$x0 $y0 $x1 $y1" = "$4" ] ||
        fail "$2/$3: changed box $x0,$y0 .. $x1,$y1 (${w}x$h), want the legend's $4"
    local want=$(((rx1 - rx0) * (ry1 - ry0)))
    [ "$n" -gt $((want * 9 / 10)) ] || fail "$2/$3: only $n of the legend's $want pixels changed"
}

W=64
H=48
SMALL=(--set world.width=$W --set world.height=$H --set agents.count=200 --set agents.radius=3
    --backend cpu --threads 2 --quiet --steps 6 --frames-every 3)

# ---- legend off: byte-identical to a run without the key ----
"$HZ" run "${SMALL[@]}" --out "$T/none" || fail "run without the key"
"$HZ" run "${SMALL[@]}" --set output.legend=0 --out "$T/off" || fail "run with legend=0"
"$HZ" run "${SMALL[@]}" --set output.legend=off --out "$T/off2" || fail "run with legend=off"
[ "$(ls "$T/none/frames" | wc -l)" -eq 3 ] || fail "expected 3 frames: $(ls "$T/none/frames")"
for f in "$T"/none/frames/*.png; do
    cmp -s "$f" "$T/off/frames/$(basename "$f")" || fail "legend=0 changed $(basename "$f")"
    cmp -s "$f" "$T/off2/frames/$(basename "$f")" || fail "legend=off changed $(basename "$f")"
done
grep -q '"legend": false' "$T/off/run.json" || fail "run.json lacks \"legend\": false"
echo "ok: legend off leaves frames byte-identical"

# ---- legend on, automatic range: a 1024x768 frame, scale 2 ----
"$HZ" run "${SMALL[@]}" --set output.legend=1 --out "$T/on" || fail "run with legend=1"
grep -q '"legend": true' "$T/on/run.json" || fail "run.json lacks \"legend\": true"
R=$(rect 1024 768 2 ${#AUTO_TEXT})
for i in 0 1 2; do
    check_only_rect "$T/none/frames" "$T/on/frames" "$(printf 'frame_%06d.png' $i)" "$R"
done
# yes/true read the same
"$HZ" run "${SMALL[@]}" --set output.legend=Yes --out "$T/yes" || fail "run with legend=Yes"
cmp -s "$T/on/frames/frame_000002.png" "$T/yes/frames/frame_000002.png" ||
    fail "legend=Yes differs from legend=1"
echo "ok: legend on (auto range, scale 2) changes only $R"

# ---- a fixed range and a small frame: scale 1, the wider label ----
FX=(--set output.range_max=5 --frame-size 320x240)
"$HZ" run "${SMALL[@]}" "${FX[@]}" --out "$T/foff" || fail "fixed-range run"
"$HZ" run "${SMALL[@]}" "${FX[@]}" --set output.legend=true --out "$T/fon" ||
    fail "fixed-range run with the legend"
R=$(rect 320 240 1 ${#FIXED_TEXT})
for i in 0 2; do
    check_only_rect "$T/foff/frames" "$T/fon/frames" "$(printf 'frame_%06d.png' $i)" "$R"
done
echo "ok: legend on (fixed range, scale 1) changes only $R"

# ---- a frame too small for the legend: unchanged ----
TINY=(--frame-size 120x90)
"$HZ" run "${SMALL[@]}" "${TINY[@]}" --out "$T/toff" || fail "tiny-frame run"
"$HZ" run "${SMALL[@]}" "${TINY[@]}" --set output.legend=1 --out "$T/ton" ||
    fail "tiny-frame run with the legend"
for f in "$T"/toff/frames/*.png; do
    cmp -s "$f" "$T/ton/frames/$(basename "$f")" || fail "a 120x90 frame got a legend"
done
echo "ok: a frame too small for the legend is left as it was"

# ---- a checkpoint with the key resumes to the same frames ----
"$HZ" run "${SMALL[@]}" --set output.legend=1 --steps 9 --out "$T/full" || fail "9-step run"
"$HZ" run "${SMALL[@]}" --set output.legend=1 --checkpoint-every 3 --out "$T/ck" ||
    fail "6-step run with checkpoints"
"$HZ" run --resume "$T/ck/checkpoint.hzc" --steps 9 --quiet || fail "resume of a legend run"
for i in 0 1 2 3; do
    f=$(printf 'frame_%06d.png' $i)
    cmp -s "$T/full/frames/$f" "$T/ck/frames/$f" || fail "resumed $f differs from the full run's"
done
echo "ok: a checkpoint written with output.legend resumes to the same frames"

# ---- sweeps write their frames through the same code ----
cat >"$T/s.ini" <<EOF
[sweep]
base = default
agents.noise = 0, 0.2
[world]
width = $W
height = $H
[agents]
count = 200
radius = 3
[run]
steps = 6
[output]
frames_every = 3
legend = 1
EOF
"$HZ" sweep "$T/s.ini" --out "$T/sw" --backend cpu --jobs 1 --keep frames --quiet ||
    fail "sweep with legend = 1"
# the run that the sweep's run 1 equals, by its --dry-run line (as e2e_sweep.sh does)
args=$("$HZ" sweep "$T/s.ini" --dry-run | sed -n 's/^run 1: .*(\(.*\))$/\1/p')
[ -n "$args" ] || fail "sweep --dry-run lists no run 1"
# shellcheck disable=SC2086
eval "\"$HZ\" run \"$T/sw/base.ini\" $args --backend cpu --threads 2 --out \"$T/n2\" --quiet" ||
    fail "horizon run of the sweep's run 1 ($args)"
for i in 0 1 2; do
    f=$(printf 'frame_%06d.png' $i)
    cmp -s "$T/n2/frames/$f" "$T/sw/runs/run_000001/frames/$f" ||
        fail "sweep run 1's $f differs from horizon run's"
done
echo "ok: sweep frames carry the same legend"

# ---- bad values: exit 2, the --set argument or the file's line named ----
rc=0
"$HZ" run "${SMALL[@]}" --set output.legend=maybe --out "$T/bad" >"$T/out.txt" 2>"$T/err.txt" ||
    rc=$?
[ "$rc" = 2 ] || fail "output.legend=maybe exited $rc"
want="--set output.legend=maybe: output.legend: not a boolean 'maybe'"
want="$want (allowed 0|1|true|false|yes|no|on|off)"
grep -qF -- "$want" "$T/err.txt" ||
    fail "message for legend=maybe: $(cat "$T/err.txt")"
[ ! -e "$T/bad" ] || fail "a refused run made its output directory"
printf '[world]\nwidth = 32\n[output]\nlegend = 2\n' >"$T/bad.ini"
rc=0
"$HZ" run "$T/bad.ini" --out "$T/bad" >"$T/out.txt" 2>"$T/err.txt" || rc=$?
[ "$rc" = 2 ] || fail "legend = 2 in a file exited $rc"
grep -q "bad.ini:4: output.legend: not a boolean '2'" "$T/err.txt" ||
    fail "message for legend = 2: $(cat "$T/err.txt")"
echo "ok: bad values refused"
