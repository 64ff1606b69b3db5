# e2e_run.sh - `horizon run` end to end: the files a run writes (stats.csv, run.json, gap-free
# PNG frames, .npy dumps), help, refusal of a non-empty output directory and --force, bad
# scenarios (exit 2, "file:line: key:" on stderr, nothing created), and reproducibility (same
# seed twice, 1 vs 2 threads: identical stats.csv).
# usage: bash e2e_run.sh HORIZON_BINARY SOURCE_DIR
set -euo pipefail

HZ=$1
SRC=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/hz_e2e_run.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# hex of the first N bytes of a file (od is POSIX; `file` may be missing)
head_hex() { od -An -tx1 -N"$2" "$1" | tr -d ' \n'; }
tail_hex() { tail -c "$2" "$1" | od -An -tx1 | tr -d ' \n'; }

# A PNG: signature, IHDR first, IEND last (exactly the 12 bytes of an empty IEND chunk).
check_png() {
    [ "$(head_hex "$1" 8)" = 89504e470d0a1a0a ] || fail "$1: no PNG signature"
    [ "$(od -An -c -j12 -N4 "$1" | tr -d ' \n')" = IHDR ] || fail "$1: no IHDR"
    [ "$(tail_hex "$1" 12)" = 0000000049454e44ae426082 ] || fail "$1: does not end in IEND"
}

# PNG width and height from IHDR (big-endian words at offsets 16 and 20).
png_size() {
    local w h
    w=$(od -An -tu1 -j16 -N4 "$1" | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}')
    h=$(od -An -tu1 -j20 -N4 "$1" | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}')
    echo "${w}x${h}"
}

# Runs horizon, recording stdout, stderr and the exit code (set -e must not stop on failure).
run() {
    local rc=0
    "$HZ" "$@" >"$T/out.txt" 2>"$T/err.txt" || rc=$?
    echo "$rc"
}

W=48
H=32
# render_frame.h: a world whose longer side is under 512 cells grows by the largest whole factor
# that keeps that side <= 1024
DEFAULT_FRAME="$((W * (1024 / W)))x$((H * (1024 / W)))"
SMALL=(--set world.width=$W --set world.height=$H --set agents.count=60 --set agents.radius=3)

# ---- help ----
"$HZ" --help >"$T/help.txt" || fail "horizon --help exits non-zero"
grep -q "run" "$T/help.txt" || fail "horizon --help does not mention run"
"$HZ" run --help >"$T/help.txt" || fail "horizon run --help exits non-zero"
for opt in --set --steps --seed --threads --out --force --frames-every --dump-fields-every; do
    grep -q -- "$opt" "$T/help.txt" || fail "horizon run --help does not list $opt"
done

# ---- a small run: stats.csv, run.json, frames ----
OUT=$T/a/nested
rc=$(run run "${SMALL[@]}" --steps 12 --frames-every 4 --threads 2 --out "$OUT")
[ "$rc" = 0 ] || { cat "$T/err.txt" >&2; fail "small run exited $rc"; }
[ -f "$OUT/stats.csv" ] || fail "no stats.csv"
[ -f "$OUT/run.json" ] || fail "no run.json"
[ "$(head -n 1 "$OUT/stats.csv")" = "step,agents,moved,field_total,field_mean,field_max,residual,checksum" ] ||
    fail "stats.csv header: $(head -n 1 "$OUT/stats.csv")"
[ "$(wc -l <"$OUT/stats.csv")" -eq 13 ] || fail "stats.csv has $(wc -l <"$OUT/stats.csv") lines, expected 13"
# steps 1..12 in order, 60 agents, 8 columns each
awk -F, 'NR > 1 && ($1 != NR - 1 || $2 != 60 || NF != 8) { exit 1 }' "$OUT/stats.csv" ||
    fail "stats.csv rows are not steps 1..12 with 60 agents"
# run.json names the final checksum of the last row, the seed and the steps
last=$(tail -n 1 "$OUT/stats.csv" | cut -d, -f8)
grep -q "\"final_checksum\": \"$last\"" "$OUT/run.json" || fail "run.json final_checksum is not $last"
grep -q '"steps": 12' "$OUT/run.json" || fail "run.json lacks the steps"
grep -q '"seed": 1' "$OUT/run.json" || fail "run.json lacks the seed"
grep -Eq '"setup_seconds": [0-9]+\.[0-9]{3},' "$OUT/run.json" || fail "run.json lacks the setup time"
grep -q '"width": 48' "$OUT/run.json" || fail "run.json lacks the scenario after overrides"
# frames at steps 0, 4, 8, 12: four, numbered 0..3 without gaps, nothing else in frames/
[ "$(ls "$OUT/frames" | wc -l)" -eq 4 ] || fail "frames/ holds $(ls "$OUT/frames" | tr '\n' ' ')"
for i in 0 1 2 3; do
    f=$(printf '%s/frames/frame_%06d.png' "$OUT" "$i")
    [ -f "$f" ] || fail "missing $f"
    check_png "$f"
    [ "$(png_size "$f")" = "$DEFAULT_FRAME" ] || fail "$f is $(png_size "$f"), expected $DEFAULT_FRAME"
done
[ ! -e "$OUT/fields" ] || fail "fields/ written without --dump-fields-every"

# ---- a non-empty output directory is refused; --force replaces the earlier results ----
cp "$OUT/stats.csv" "$T/stats.before"
rc=$(run run "${SMALL[@]}" --steps 3 --out "$OUT" --quiet)
[ "$rc" = 2 ] || fail "a non-empty output directory: exit $rc, expected 2"
grep -q -- "--force" "$T/err.txt" || fail "the refusal does not mention --force: $(cat "$T/err.txt")"
grep -q "$OUT" "$T/err.txt" || fail "the refusal does not name the directory"
cmp -s "$OUT/stats.csv" "$T/stats.before" || fail "a refused run changed stats.csv"
[ "$(ls "$OUT/frames" | wc -l)" -eq 4 ] || fail "a refused run changed frames/"
echo "mine" >"$OUT/notes.txt"
rc=$(run run "${SMALL[@]}" --steps 4 --frames-every 2 --frame-size 96x64 --out "$OUT" --force --quiet)
[ "$rc" = 0 ] || { cat "$T/err.txt" >&2; fail "--force run exited $rc"; }
[ "$(wc -l <"$OUT/stats.csv")" -eq 5 ] || fail "after --force stats.csv has $(wc -l <"$OUT/stats.csv") lines"
[ "$(ls "$OUT/frames")" = "$(printf 'frame_%06d.png\n' 0 1 2)" ] ||
    fail "after --force frames/ holds: $(ls "$OUT/frames" | tr '\n' ' ')"
for i in 0 1 2; do
    f=$(printf '%s/frames/frame_%06d.png' "$OUT" "$i")
    check_png "$f"
    [ "$(png_size "$f")" = 96x64 ] || fail "--frame-size 96x64 gave $(png_size "$f")"
done
grep -q '"steps": 4' "$OUT/run.json" || fail "run.json not replaced by the --force run"

# ---- bad scenarios: exit 2, "file:line: key:" on stderr, no output directory ----
bad_case() { # name, line, key, expected words, file contents
    local name=$1 line=$2 key=$3 what=$4 text=$5
    local ini="$T/$name.ini" out="$T/out_$name"
    printf '%b' "$text" >"$ini"
    local rc
    rc=$(run run "$ini" --out "$out" --steps 1)
    [ "$rc" = 2 ] || fail "$name: exit $rc, expected 2"
    grep -qF "$ini:$line: $key" "$T/err.txt" || fail "$name: stderr lacks '$ini:$line: $key': $(cat "$T/err.txt")"
    grep -qF "$what" "$T/err.txt" || fail "$name: stderr lacks '$what': $(cat "$T/err.txt")"
    [ "$(wc -l <"$T/err.txt")" -eq 1 ] || fail "$name: the error is not one line: $(cat "$T/err.txt")"
    [ ! -e "$out" ] || fail "$name: the output directory was created"
}
bad_case unknown_key 3 "world.widht:" "allowed" '[world]\nheight = 8\nwidht = 8\n'
bad_case out_of_range 5 "agents.radius:" "out of range '65' (allowed 0 .. 64" \
    '; radius too large\n[world]\nwidth = 16\n[agents]\nradius = 65\n'
bad_case syntax 2 "syntax error" "" '[world]\nwidth 16\n'
bad_case bad_enum 4 "world.boundary:" "(allowed periodic|wall|fixed)" \
    '[world]\nwidth = 16\n\nboundary = donut\n'
rc=$(run run "$T/no-such-file.ini" --out "$T/out_missing" --steps 1)
[ "$rc" = 2 ] || fail "missing scenario file: exit $rc, expected 2"
grep -q "no-such-file.ini" "$T/err.txt" || fail "missing scenario file: not named in the error"
[ ! -e "$T/out_missing" ] || fail "missing scenario file: output directory created"

# ---- bad command lines: exit 2, nothing created ----
for args in "--set world.width" "--set world.width=0" "--set nope.x=1" "--steps -1" \
    "--threads abc" "--frame-size 10x" "--colormap jet" "--bogus" "--steps"; do
    # shellcheck disable=SC2086
    rc=$(run run $args --out "$T/out_cli")
    [ "$rc" = 2 ] || fail "horizon run $args: exit $rc, expected 2"
    [ -s "$T/err.txt" ] || fail "horizon run $args: no message"
    [ ! -e "$T/out_cli" ] || fail "horizon run $args: output directory created"
done

# ---- --frames-every 0: no frames directory; --dump-fields-every: .npy files ----
OUT=$T/b
rc=$(run run "${SMALL[@]}" --steps 10 --frames-every 0 --dump-fields-every 5 --out "$OUT" --quiet)
[ "$rc" = 0 ] || { cat "$T/err.txt" >&2; fail "dump run exited $rc"; }
[ ! -e "$OUT/frames" ] || fail "--frames-every 0 created frames/"
[ "$(ls "$OUT/fields")" = "$(printf 'field_%06d.npy\n' 0 5 10)" ] ||
    fail "fields/ holds: $(ls "$OUT/fields" | tr '\n' ' ')"
for f in "$OUT"/fields/*.npy; do
    [ "$(head_hex "$f" 8)" = 934e554d50590100 ] || fail "$f: no NPY v1.0 magic"
    size=$(wc -c <"$f")
    hlen=$(od -An -tu1 -j8 -N2 "$f" | awk '{print $1 + 256 * $2}')
    [ $(((10 + hlen) % 64)) -eq 0 ] || fail "$f: header of $((10 + hlen)) bytes is not 64-aligned"
    [ "$size" -eq $((10 + hlen + W * H * 4)) ] || fail "$f: $size bytes, expected $((10 + hlen + W * H * 4))"
    header=$(head -c $((10 + hlen)) "$f" | tail -c "$hlen")
    case "$header" in
    *"'descr': '<f4'"*"'fortran_order': False"*"'shape': ($H, $W)"*) ;;
    *) fail "$f: header $header" ;;
    esac
done

# ---- reproducibility: same seed twice, 1 vs 2 threads, another seed ----
# (the wait policy named, so that a busy machine does not take the second thread away: see below)
export OMP_WAIT_POLICY=passive
REP=(--set world.width=64 --set world.height=48 --set agents.count=400 --set agents.radius=4
    --set agents.noise=0.3 --steps 25 --frames-every 0 --quiet)
run run "${REP[@]}" --seed 7 --threads 2 --out "$T/r1" >/dev/null
grep -q '"threads": 2,' "$T/r1/run.json" || fail "r1: not run on 2 threads"
run run "${REP[@]}" --seed 7 --threads 2 --out "$T/r2" >/dev/null
run run "${REP[@]}" --seed 7 --threads 1 --out "$T/r3" >/dev/null
run run "${REP[@]}" --seed 8 --threads 2 --out "$T/r4" >/dev/null
for d in r1 r2 r3 r4; do
    [ "$(wc -l <"$T/$d/stats.csv")" -eq 26 ] || fail "$d: stats.csv incomplete"
done
diff "$T/r1/stats.csv" "$T/r2/stats.csv" >/dev/null || fail "same seed twice: stats.csv differ"
diff "$T/r1/stats.csv" "$T/r3/stats.csv" >/dev/null || fail "1 vs 2 threads: stats.csv differ"
! diff "$T/r1/stats.csv" "$T/r4/stats.csv" >/dev/null || fail "seeds 7 and 8 give the same stats.csv"
# the agents really move (the comparison is not between two idle worlds)
awk -F, 'NR > 1 && $3 > 0 { moved = 1 } END { exit !moved }' "$T/r1/stats.csv" ||
    fail "no agent moved in 25 steps"

# ---- frames on the CPU backend without --threads: on 8 or more cores, one core is left to the
# frame encoders (app_run.c); on fewer, every core steps. The same results either way ----
run run "${REP[@]}" --seed 7 --backend cpu --out "$T/f0" >/dev/null
run run "${REP[@]}" --seed 7 --backend cpu --frames-every 5 --out "$T/f1" >/dev/null
n0=$(sed -n 's/^ *"threads": \([0-9]*\),$/\1/p' "$T/f0/run.json")
n1=$(sed -n 's/^ *"threads": \([0-9]*\),$/\1/p' "$T/f1/run.json")
[ -n "$n0" ] && [ -n "$n1" ] || fail "frames: no thread count in run.json"
want=$((n0 >= 8 ? n0 - 1 : n0))
[ "$n1" -eq "$want" ] || fail "frames: $n1 threads with frames, $n0 without (want $want)"
[ -s "$T/f1/frames/frame_000005.png" ] || fail "frames: frame 5 missing"
diff "$T/r1/stats.csv" "$T/f1/stats.csv" >/dev/null || fail "frames: stats.csv differ"

# ---- a busy machine: no more threads than the cores other work left (app/main.c notes them
# in HORIZON_BUSY_CORES), with a notice; the same results ----
HORIZON_BUSY_CORES=$(getconf _NPROCESSORS_ONLN) run run "${REP[@]/--quiet/--progress}" --seed 7 \
    --threads 2 --out "$T/r5" >/dev/null
grep -q '"threads": 1,' "$T/r5/run.json" || fail "busy cores: not capped to 1 thread"
grep -q 'other work held .* 1 thread instead of 2' "$T/err.txt" || fail "busy cores: no notice"
diff "$T/r1/stats.csv" "$T/r5/stats.csv" >/dev/null || fail "busy cores: stats.csv differ"
unset OMP_WAIT_POLICY

# ---- no arguments but the step count: the default scenario into ./horizon-out ----
(cd "$T" && "$HZ" run --steps 2 --frames-every 0 --threads 2 >"$T/out.txt" 2>"$T/err.txt") ||
    fail "horizon run --steps 2 in an empty directory failed: $(cat "$T/err.txt")"
[ "$(wc -l <"$T/horizon-out/stats.csv")" -eq 3 ] || fail "default run: stats.csv incomplete"
grep -q "horizon-out" "$T/out.txt" || fail "the summary does not say where the output is"

# the summary of a run with frames gives the ffmpeg command
rc=$(run run "${SMALL[@]}" --steps 2 --frames-every 1 --out "$T/c")
[ "$rc" = 0 ] || fail "summary run exited $rc"
grep -q "ffmpeg" "$T/out.txt" || fail "the summary lacks the ffmpeg command"

# the bench's output section runs real `horizon run` processes and reports every variant
"$HZ" bench --output-only --backend cpu --quick --json "$T/bench.json" >"$T/bench.txt" 2>"$T/err.txt" ||
    fail "horizon bench --output-only failed: $(cat "$T/err.txt")"
for what in "no output" "statistics every step" "frame every 100 steps" "field dump" "checkpoint"; do
    grep -q "$what" "$T/bench.txt" || fail "the output section lacks '$what'"
done
[ "$(grep -o '"steps_per_s": [0-9.]*' "$T/bench.json" | awk '$2 > 0' | wc -l)" -eq 5 ] ||
    fail "bench.json's output section lacks a positive rate for each of the 5 variants"

echo "e2e_run: ok"
