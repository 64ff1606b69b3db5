# e2e_models.sh - a model with walls, maps, two species and a life cycle through `horizon run`:
# stats.csv names a column group per species and per field; a run stopped at a checkpoint and
# resumed (checkpoint format version 2) writes the same stats.csv, byte for byte, as one that
# never stopped; malformed maps (another size without resampling, not a PNG, truncated, 1x1,
# 65536 wide) exit 2 with one line naming the file and the key, before anything is written.
# usage: bash e2e_models.sh HORIZON_BINARY SOURCE_DIR
set -euo pipefail

HZ=$1
T=$(mktemp -d "${TMPDIR:-/tmp}/hz_e2e_models.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }

# Gray PNGs written with the standard library only; "bad" variants for the refusals.
python3 - "$T" <<'EOF'
import struct, sys, zlib
d = sys.argv[1]
def chunk(t, b):
    return struct.pack('>I', len(b)) + t + b + struct.pack('>I', zlib.crc32(t + b))
def png(w, h, f):
    raw = b''.join(b'\0' + bytes(f(x, y) for x in range(w)) for y in range(h))
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 0, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
def put(name, data):
    open(f'{d}/{name}', 'wb').write(data)
put('walls.png', png(48, 40, lambda x, y: 255 if (x == 20 and 5 < y < 34) or (y == 20 and x > 30) else 0))
put('cap.png', png(48, 40, lambda x, y: x * 5))
put('src.png', png(48, 40, lambda x, y: 255 if (x, y) == (44, 4) else 0))
put('small.png', png(24, 20, lambda x, y: 0))
put('one.png', png(1, 1, lambda x, y: 0))
good = png(48, 40, lambda x, y: 0)
put('cut.png', good[:len(good) // 2])
put('text.png', b'walls go here\n')
# a header claiming 65536 x 2 pixels and no pixel data
put('wide.png', b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 65536, 2, 8, 0, 0, 0, 0))
    + chunk(b'IEND', b''))
EOF

cat >"$T/rich.ini" <<'EOF'
[world]
width = 48
height = 40
walls = walls.png
[field.grass]
sweeps = 0
decay = 0
initial = 2
init_noise = 0
growth = 0.25
capacity = 4
capacity_map = cap.png
[field.scent]
diffusion = 0.4
decay = 0.05
init_noise = 0.5
sources = src.png
source_value = 3
[species.sheep]
count = 150
radius = 3
noise = 0.2
sense = grass:2, scent:-1, occ.wolf:-3
deposit = scent:0.5
energy = 4
uptake = grass:1
metabolism = 0.6
birth_energy = 6
max_age = 40
[species.wolf]
count = 25
radius = 4
noise = 0.1
sense = occ.sheep:1
deposit = scent:-0.25
energy = 8
metabolism = 0.3
birth_energy = 14
eats = sheep:5
[run]
seed = 7
steps = 60
[output]
frames_every = 0
EOF

# Run from elsewhere: map paths are relative to the scenario file.
cd "$T"
mkdir elsewhere && cd elsewhere
"$HZ" run ../rich.ini --backend cpu --out "$T/whole" --quiet || fail "the whole run failed"
head -1 "$T/whole/stats.csv" | grep -q ',sheep.count,sheep.moved,sheep.births,sheep.deaths,sheep.energy,wolf.count,.*,grass.total,grass.mean,grass.max,scent.total,scent.mean,scent.max$' ||
    fail "stats.csv header: $(head -1 "$T/whole/stats.csv")"
[ "$(wc -l <"$T/whole/stats.csv")" -eq 61 ] || fail "expected 60 rows"
# births and deaths happened (the columns are not decoration)
awk -F, 'NR > 1 { b += $11; d += $12 } END { exit !(b > 0 && d > 0) }' "$T/whole/stats.csv" ||
    fail "no sheep births or deaths in stats.csv"

"$HZ" run ../rich.ini --backend cpu --out "$T/parts" --steps 25 --checkpoint-every 25 --quiet ||
    fail "the first part failed"
"$HZ" run --resume "$T/parts/checkpoint.hzc" --steps 60 --quiet || fail "the resume failed"
cmp -s "$T/whole/stats.csv" "$T/parts/stats.csv" ||
    fail "resumed stats.csv differs from the uninterrupted one"
[ "$(od -An -tu4 -j8 -N4 "$T/parts/checkpoint.hzc" | tr -d ' ')" = 2 ] ||
    fail "a model's checkpoint is not format version 2"

# Malformed maps: exit 2, one line naming the map's file and key, no output directory.
refuse() { # NAME SET... ; expects text $EXPECT
    local name=$1
    shift
    set +e
    "$HZ" run ../rich.ini --backend cpu --out "$T/bad_$name" --quiet "$@" 2>"$T/err_$name"
    local rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "$name: exit $rc, expected 2 ($(cat "$T/err_$name"))"
    [ "$(wc -l <"$T/err_$name")" -eq 1 ] || fail "$name: not one line: $(cat "$T/err_$name")"
    grep -qF -- "$EXPECT" "$T/err_$name" || fail "$name: '$(cat "$T/err_$name")' lacks '$EXPECT'"
    [ ! -e "$T/bad_$name/stats.csv" ] || fail "$name: wrote stats.csv"
}
EXPECT="small.png: world.walls: 24x20 map for a 48x40 world" refuse size --set world.walls=../small.png
EXPECT="text.png: field.grass.capacity_map: not a PNG file" refuse text \
    --set field.grass.capacity_map=../text.png
EXPECT="cut.png: field.scent.sources: truncated or corrupt PNG" refuse cut \
    --set field.scent.sources=../cut.png
EXPECT="one.png: world.walls: 1x1 map" refuse one --set world.walls=../one.png
EXPECT="wide.png: world.walls: 65536x2 map" refuse wide --set world.walls=../wide.png
EXPECT="missing.png: world.walls: cannot open" refuse missing --set world.walls=../missing.png
# with resampling the small map is taken
"$HZ" run ../rich.ini --backend cpu --out "$T/resampled" --quiet --steps 3 \
    --set world.walls=../small.png --set world.map_resample=nearest || fail "nearest resampling"
# A sweep over a model of the library by name: each run as `horizon run` gives it.
printf '[sweep]\nbase = segregation\nrun.seed = 1, 2\n[run]\nsteps = 5\n[output]\nframes_every = 0\n' \
    >"$T/sw.ini"
"$HZ" sweep "$T/sw.ini" --backend cpu --out "$T/sweep" --quiet || fail "sweep of a model by name"
"$HZ" run segregation --backend cpu --steps 5 --seed 2 --frames-every 0 --out "$T/seg2" --quiet ||
    fail "run segregation"
want=$(tail -1 "$T/seg2/stats.csv" | cut -d, -f8)
grep -q "^1,2,.*,$want," "$T/sweep/sweep.csv" ||
    fail "sweep run 1 (seed 2) does not have the checksum $want of horizon run: $(cat "$T/sweep/sweep.csv")"
# Named keys swept and fixed: each run as `horizon run --set` gives it, with the species' and
# fields' columns of stats.csv's last row; a misspelt section is refused with its line.
printf '[sweep]\nbase = wolf-sheep-grass\nspecies.wolves.metabolism = 0.8, 1.2\n[species.sheep]\nbirth_energy = 18\n[run]\nsteps = 12\n[output]\nframes_every = 0\n' \
    >"$T/swn.ini"
"$HZ" sweep "$T/swn.ini" --backend cpu --out "$T/sweepn" --quiet || fail "sweep of named keys"
"$HZ" run wolf-sheep-grass --backend cpu --steps 12 --frames-every 0 --out "$T/wsg12" --quiet \
    --set species.wolves.metabolism=1.2 --set species.sheep.birth_energy=18 || fail "run wsg"
head -1 "$T/sweepn/sweep.csv" | grep -q ",sheep.count,.*,wolf_scent.max,.*,mean_wolf_scent.max$" ||
    fail "sweep.csv lacks the model's columns: $(head -1 "$T/sweepn/sweep.csv")"
last=$(tail -1 "$T/wsg12/stats.csv")
sum=$(echo "$last" | cut -d, -f8)
groups=$(echo "$last" | cut -d, -f9-18) # the species groups (maxima print with 9 digits there)
row=$(grep "^1,1.2," "$T/sweepn/sweep.csv") || fail "no run 1 in $(cat "$T/sweepn/sweep.csv")"
echo "$row" | grep -q ",$sum," || fail "sweep run 1 checksum is not $sum: $row"
echo "$row" | grep -q "$groups," || fail "sweep run 1 columns are not stats.csv's ($groups): $row"
printf '[sweep]\nbase = wolf-sheep-grass\nspecies.wolfs.metabolism = 1\n' >"$T/swbad.ini"
rc=0
out=$("$HZ" sweep "$T/swbad.ini" --backend cpu --out "$T/sweepbad" --quiet 2>&1) || rc=$?
[ $rc -eq 2 ] || fail "a sweep of a missing species must exit 2 (got $rc)"
echo "$out" | grep -q "swbad.ini:3: species.wolfs.metabolism: the scenario has no \[species.wolfs\]" ||
    fail "message: $out"
[ ! -e "$T/sweepbad/sweep.csv" ] || fail "a refused sweep wrote sweep.csv"
rc=0
out=$("$HZ" run wolf-sheep-grass --set species.wolfs.energy=3 --out "$T/setbad" 2>&1) || rc=$?
[ $rc -eq 2 ] || fail "--set of a missing species must exit 2 (got $rc)"
echo "$out" | grep -q "no \[species.wolfs\] section (its species sections: sheep, wolves)" ||
    fail "message: $out"
echo "e2e_models: ok"
