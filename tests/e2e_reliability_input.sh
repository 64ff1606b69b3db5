#!/usr/bin/env bash
# e2e_reliability_input.sh - input that used to be taken silently or blamed on the wrong thing:
# a key or section given twice in a scenario file, an agent count over the cells (named by the
# line or --set that gave it), an over-long --out or --set value (named by the option typed),
# and a checkpoint with valid CRCs but a NaN, infinite or negative field value. Each is refused
# with exit 2 and a one-line message saying where, and nothing is written.
# usage: e2e_reliability_input.sh HORIZON_BINARY SOURCE_DIR
set -u
H=$1
T=$(mktemp -d /tmp/hz_e2e_input_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
SMALL=(--backend cpu --quiet --set world.width=32 --set world.height=24 --set agents.count=40
       --set agents.radius=2 --frames-every 0)

# name | expected stderr line (exact) | arguments of horizon run
refused() {
    local name=$1 want=$2
    shift 2
    local err rc
    err=$(cd "$T" && timeout 60 "$H" run "$@" --out "$T/out_$name" 2>&1 >/dev/null)
    rc=$?
    [ $rc = 2 ] || fail "$name: exit $rc, expected 2 ($err)"
    [ "$err" = "$want" ] || fail "$name: message '$err', expected '$want'"
    [ ! -e "$T/out_$name" ] || fail "$name: the output directory was created"
    echo "  $name: $err"
}

# ---- a key or a section given twice: the last one no longer silently wins ----
printf '; noise twice\n[world]\nwidth = 32\n[agents]\nnoise = 0.1\nradius = 2\nnoise = 0.9\n' \
    >"$T/dup.ini"
refused dup_key "horizon: $T/dup.ini:7: agents.noise: duplicate (first at line 5)" "$T/dup.ini"
printf '[agents]\nnoise = 0.1\n[world]\nwidth = 32\n\n[agents]\nradius = 2\n' >"$T/dups.ini"
refused dup_section "horizon: $T/dups.ini:6: [agents]: duplicate section (first at line 1)" \
    "$T/dups.ini"
# --set over a key of the file is an override, not a duplicate.
printf '[world]\nwidth = 32\nheight = 24\n[agents]\ncount = 40\nradius = 2\n' >"$T/ok.ini"
"$H" run "$T/ok.ini" "${SMALL[@]}" --set agents.noise=0.5 --set agents.noise=0.25 --steps 2 \
    --out "$T/ok" || fail "--set over a key of the file was refused"
grep -q '"noise": 0.25' "$T/ok/run.json" || fail "the last --set did not win"

# ---- agents.count over the cells: the line or the --set that gave it ----
printf '; 300000 agents\n[world]\nwidth = 512\n[agents]\ncount = 300000\n' >"$T/big.ini"
tail="is more than the 262144 cells of the 512x512 world (allowed 0 .. 262144, or -1 to use"
tail="$tail agents.density)"
refused count_file "horizon: $T/big.ini:5: agents.count: 300000 $tail" "$T/big.ini"
refused count_file_set "horizon: $T/big.ini:5: agents.count: 300000 $tail" "$T/big.ini" \
    --set agents.noise=0.5
refused count_set "horizon: --set agents.count=300000: agents.count: 300000 $tail" \
    --set agents.count=300000
refused count_set_file "horizon: --set agents.count=300000: agents.count: 300000 $tail" \
    "$T/ok.ini" --set world.width=512 --set world.height=512 --set agents.count=300000
refused cells_set "horizon: --set world.height=65536: world.height: width*height = \
65536*65536 = 4294967296 cells (allowed at most 1073741824)" \
    --set world.width=65536 --set world.height=65536

# ---- an over-long value: named by the option typed ----
long=$(printf 'p%.0s' $(seq 1100))
refused out_long "horizon: --out: output.dir: value too long (at most 1023 bytes, got 1100)" \
    --out "$long"
refused out_long_eq "horizon: --out: output.dir: value too long (at most 1023 bytes, got 1100)" \
    "--out=$long"
refused set_long "horizon: --set output.dir=$(printf 'p%.0s' $(seq 37))...: output.dir: value \
too long (at most 1023 bytes, got 1100)" --set "output.dir=$long"
refused steps_bad "horizon: --steps: run.steps: not an integer 'x' (allowed 0 .. 1e+15, an \
integer)" --steps x

# ---- checkpoints with valid CRCs and impossible field values ----
"$H" run "${SMALL[@]}" --steps 6 --checkpoint-every 6 --out "$T/run" || fail "setup run"
ck="$T/run/checkpoint.hzc"
u64() { od -An -tu8 -j "$2" -N8 "$1" | tr -d ' '; }
scen=$(u64 "$ck" 40)
feld=$((36 + 12 + scen + 4 + 12 + 56 + 4))
[ "$(dd if="$ck" bs=1 skip=$feld count=4 status=none)" = FELD ] || fail "setup: no field at $feld"
cells=$(($(u64 "$ck" $((feld + 4))) / 4))
[ "$cells" = $((32 * 24)) ] || fail "setup: $cells cells"
poke() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }
# Writes float bytes $2 into cell ($3, $4) of checkpoint $1/checkpoint.hzc and recomputes the
# field section's CRC (zlib's CRC-32, as gzip's trailer carries it).
bad_cell() {
    local c="$1/checkpoint.hzc"
    poke "$c" $((feld + 12 + 4 * ($4 * 32 + $3))) "$2"
    tail -c +$((feld + 1)) "$c" | head -c $((12 + 4 * cells)) | gzip -c | tail -c 8 | head -c 4 |
        dd of="$c" bs=1 seek=$((feld + 12 + 4 * cells)) conv=notrunc status=none
}
snapshot() { (cd "$1" && find . -type f | sort | xargs md5sum); }
ckpt_refused() { # name, float bytes, x, y, expected message after the path
    local d="$T/$1" err rc before
    cp -r "$T/run" "$d"
    bad_cell "$d" "$2" "$3" "$4"
    before=$(snapshot "$d")
    err=$(timeout 60 "$H" run --backend cpu --quiet --resume "$d/checkpoint.hzc" --steps 12 2>&1)
    rc=$?
    [ $rc = 2 ] || fail "$1: exit $rc, expected 2 ($err)"
    [ "$err" = "horizon: $d/checkpoint.hzc: corrupt checkpoint: $5" ] ||
        fail "$1: message '$err'"
    [ "$before" = "$(snapshot "$d")" ] || fail "$1: the run directory was changed"
    echo "  $1: $err"
}
ckpt_refused nan '\x00\x00\xc0\x7f' 3 2 "non-finite field value at cell 3,2 (nan)"
ckpt_refused inf '\x00\x00\x80\x7f' 31 23 "non-finite field value at cell 31,23 (inf)"
ckpt_refused negative '\x00\x00\x80\xbf' 0 5 "field value -1 at cell 0,5 is below 0, which no \
run of this scenario produces (its deposit, initial value and fixed edges are >= 0)"
# The same change with a value a run can hold resumes: the CRC fix-up is not what is refused.
cp -r "$T/run" "$T/fine"
bad_cell "$T/fine" '\x00\x00\x80\x3f' 3 2 # 1.0
"$H" run --backend cpu --quiet --resume "$T/fine/checkpoint.hzc" --steps 12 ||
    fail "a checkpoint with a finite, non-negative field value was refused"
! grep -qi nan "$T/fine/stats.csv" || fail "nan in stats.csv"
echo "ok: bad input refused"
