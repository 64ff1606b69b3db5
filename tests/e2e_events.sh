# e2e_events.sh - `horizon run --events FILE` end to end: the events file is copied to
# DIR/events.csv and recorded in run.json; stats.csv equals a run without events up to the first
# event's step and differs after it; a checkpoint holds the scenario its step ran with, and
# resuming (from the end of a shorter run, from an older checkpoint, after kill -9) reapplies
# DIR/events.csv to give the uninterrupted run's stats.csv byte for byte; --force removes
# events.csv; --events with --resume is refused; bad events files exit 2 with FILE:LINE and
# leave no output directory. A model with named sections (wolf-sheep-grass) takes its named
# keys (species.sheep.noise, ...) the same way, resume included, and refuses a key of a section
# it lacks, or a shorthand one, before anything is written.
# usage: bash e2e_events.sh HORIZON_BINARY SOURCE_DIR
set -euo pipefail

HZ=$1
T=$(mktemp -d "${TMPDIR:-/tmp}/hz_e2e_events.XXXXXX")
BG=
trap '[ -n "$BG" ] && kill -9 "$BG" 2>/dev/null; rm -rf "$T"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# Runs horizon, recording stdout, stderr and the exit code (set -e must not stop on failure).
run() {
    local rc=0
    "$HZ" "$@" >"$T/out.txt" 2>"$T/err.txt" || rc=$?
    echo "$rc"
}

checksum_of() { grep -o '"final_checksum": "[0-9a-f]*"' "$1/run.json"; }

SMALL=(--set world.width=64 --set world.height=48 --set agents.count=300 --set agents.radius=4
    --backend cpu --threads 2 --frames-every 0)

cat >"$T/ev.csv" <<'EOF'
step,event,value
# less noise from step 11 on
10,agents.noise,0.05
15,paint,20 30 5 4.5
15,agents.radius,6
22,field.diffusion,0.25
22,field.sweeps,3
22,field.decay,0.02
22,agents.deposit,1.5
EOF

# ---- help ----
"$HZ" run --help | grep -q -- "--events FILE" || fail "horizon run --help does not list --events"

# ---- the run with events against the run without ----
rc=$(run run "${SMALL[@]}" --steps 40 --out "$T/plain" --quiet)
[ "$rc" = 0 ] || fail "plain run exited $rc: $(cat "$T/err.txt")"
rc=$(run run "${SMALL[@]}" --steps 40 --out "$T/ev" --events "$T/ev.csv")
[ "$rc" = 0 ] || fail "events run exited $rc: $(cat "$T/err.txt")"
cmp -s "$T/ev.csv" "$T/ev/events.csv" || fail "DIR/events.csv is not a copy of the events file"
grep -q "events.csv" "$T/out.txt" || fail "the summary does not list events.csv: $(cat "$T/out.txt")"
[ ! -e "$T/plain/events.csv" ] || fail "a run without --events wrote events.csv"
[ "$(wc -l <"$T/ev/stats.csv")" -eq 41 ] || fail "events run: stats.csv incomplete"
# rows of steps 1..10 (before the first event takes effect) are the plain run's
head -n 11 "$T/plain/stats.csv" >"$T/a" && head -n 11 "$T/ev/stats.csv" >"$T/b"
cmp -s "$T/a" "$T/b" || fail "rows up to step 10 differ from the run without events"
# from step 11 on, every checksum differs
paste -d, <(cut -d, -f1,8 "$T/plain/stats.csv") <(cut -d, -f8 "$T/ev/stats.csv") |
    awk -F, 'NR > 11 && $2 == $3 { print "step " $1; exit 1 }' ||
    fail "the events did not change every row after step 10"
grep -q '"events": "events.csv"' "$T/ev/run.json" || fail "run.json lacks the events file"
grep -q '"events_count": 7' "$T/ev/run.json" || fail "run.json lacks the events count"
grep -q '"events_applied": 7' "$T/ev/run.json" || fail "run.json lacks the applied count"
grep -q '"radius": 6' "$T/ev/run.json" || fail "run.json's scenario is not the one at the end"
grep -q '"noise": 0.050000000000000003' "$T/ev/run.json" ||
    fail "run.json's scenario is not the one at the end: $(grep noise "$T/ev/run.json")"
last=$(tail -n 1 "$T/ev/stats.csv" | cut -d, -f8)
grep -q "\"final_checksum\": \"$last\"" "$T/ev/run.json" || fail "run.json final_checksum"
! grep -q '"events"' "$T/plain/run.json" || fail "run.json of a run without events names events"

# ---- resume: the uninterrupted run's bits ----
same_as_ev() {
    cmp -s "$T/ev/stats.csv" "$1/stats.csv" || fail "$1: stats.csv differs from the uninterrupted run"
    [ "$(checksum_of "$T/ev")" = "$(checksum_of "$1")" ] || fail "$1: final checksum differs"
    cmp -s "$T/ev.csv" "$1/events.csv" || fail "$1: events.csv changed"
}
# 1. a run of 10 steps ends just before the events of step 10: its checkpoint holds the old
# noise, nothing was applied, and the resume applies all of them
rc=$(run run "${SMALL[@]}" --steps 10 --checkpoint-every 5 --out "$T/r1" --events "$T/ev.csv")
[ "$rc" = 0 ] || fail "10 steps exited $rc: $(cat "$T/err.txt")"
grep -q "7 of the 7 events of $T/ev.csv are at steps >= 10" "$T/err.txt" ||
    fail "no notice of events after the last step: $(cat "$T/err.txt")"
grep -q '"events_applied": 0' "$T/r1/run.json" || fail "10 steps: events_applied is not 0"
grep -aq '^noise = 0.29999999999999999$' "$T/r1/checkpoint.hzc" ||
    fail "the checkpoint of step 10 does not hold the noise step 10 ran with"
rc=$(run run --resume "$T/r1/checkpoint.hzc" --steps 40 --threads 1 --quiet)
[ "$rc" = 0 ] || fail "resume at 10 exited $rc: $(cat "$T/err.txt")"
same_as_ev "$T/r1"
# 2. checkpoints at 15 (paint and radius pending) and 22 (four keys pending): resume from both
rc=$(run run "${SMALL[@]}" --steps 22 --checkpoint-every 15 --out "$T/r2" --events "$T/ev.csv" \
    --quiet)
[ "$rc" = 0 ] || fail "22 steps exited $rc: $(cat "$T/err.txt")"
grep -aq '^radius = 4$' "$T/r2/checkpoint.hzc.prev" || fail "checkpoint of step 15: radius"
grep -aq '^radius = 6$' "$T/r2/checkpoint.hzc" || fail "checkpoint of step 22: radius"
grep -aq '^sweeps = 2$' "$T/r2/checkpoint.hzc" || fail "checkpoint of step 22: sweeps"
cp -r "$T/r2" "$T/r3"
rc=$(run run --resume "$T/r2/checkpoint.hzc" --steps 40 --quiet)
[ "$rc" = 0 ] || fail "resume at 22 exited $rc: $(cat "$T/err.txt")"
same_as_ev "$T/r2"
rc=$(run run --resume "$T/r3/checkpoint.hzc.prev" --steps 40 --quiet)
[ "$rc" = 0 ] || fail "resume at 15 exited $rc: $(cat "$T/err.txt")"
same_as_ev "$T/r3"

# 3. kill -9 in the middle of a longer run with events spread over it, then resume
cat >"$T/long.csv" <<'EOF'
step,event,value
100,agents.noise,0.1
700,paint,5 5 8 20
700,field.decay,0.005
1500,agents.radius,2
EOF
LONG=("${SMALL[@]}" --steps 2000 --events "$T/long.csv" --quiet)
rc=$(run run "${LONG[@]}" --out "$T/long")
[ "$rc" = 0 ] || fail "long run exited $rc: $(cat "$T/err.txt")"
"$HZ" run "${LONG[@]}" --checkpoint-every 50 --threads 1 --out "$T/killed" 2>/dev/null &
BG=$!
for _ in $(seq 1 400); do
    [ -f "$T/killed/stats.csv" ] && [ "$(wc -l <"$T/killed/stats.csv")" -gt 400 ] && break
    sleep 0.02
done
kill -9 "$BG" 2>/dev/null || true
wait "$BG" 2>/dev/null || true
BG=
[ -f "$T/killed/checkpoint.hzc" ] || fail "killed run left no checkpoint"
rc=$(run run --resume "$T/killed/checkpoint.hzc" --quiet)
[ "$rc" = 0 ] || fail "resume after kill -9 exited $rc: $(cat "$T/err.txt")"
cmp -s "$T/long/stats.csv" "$T/killed/stats.csv" || fail "after kill -9 and resume: stats.csv differs"
[ "$(checksum_of "$T/long")" = "$(checksum_of "$T/killed")" ] || fail "after kill -9: checksum"

# 4. events can take the field below 0 where the scenario alone never does (a negative paint, a
# deposit negative for a while): such checkpoints still resume, because the run has events.csv
cat >"$T/neg.csv" <<'EOF'
step,event,value
3,paint,30 20 6 -500
3,agents.deposit,-0.5
8,agents.deposit,1
EOF
NEG=("${SMALL[@]}" --events "$T/neg.csv" --quiet)
rc=$(run run "${NEG[@]}" --steps 20 --out "$T/neg")
[ "$rc" = 0 ] || fail "negative run exited $rc: $(cat "$T/err.txt")"
awk -F, 'NR > 5 && $4 < 0 { neg = 1 } END { exit !neg }' "$T/neg/stats.csv" ||
    fail "the negative paint did not take the field total below 0"
rc=$(run run "${NEG[@]}" --steps 12 --checkpoint-every 6 --out "$T/neg2")
[ "$rc" = 0 ] || fail "negative run, 12 steps: exit $rc: $(cat "$T/err.txt")"
cp -r "$T/neg2" "$T/neg3"
rc=$(run run --resume "$T/neg2/checkpoint.hzc" --steps 20)
[ "$rc" = 0 ] || fail "resume of a run with field values below 0: exit $rc: $(cat "$T/err.txt")"
cmp -s "$T/neg/stats.csv" "$T/neg2/stats.csv" || fail "negative run resumed: stats.csv differs"
# without its events.csv the directory is a run without events, and the floor check is back
rm "$T/neg3/events.csv"
rc=$(run run --resume "$T/neg3/checkpoint.hzc" --steps 20)
[ "$rc" = 2 ] && grep -q "below 0" "$T/err.txt" ||
    fail "a checkpoint below 0 without events.csv: exit $rc: $(cat "$T/err.txt")"

# ---- --events with --resume is refused; a damaged events.csv in the run is refused ----
rc=$(run run --resume "$T/r1/checkpoint.hzc" --steps 41 --events "$T/ev.csv")
[ "$rc" = 2 ] || fail "--resume with --events: exit $rc, expected 2"
grep -q "resume" "$T/err.txt" && grep -q -- "--events" "$T/err.txt" ||
    fail "--resume with --events: unclear message: $(cat "$T/err.txt")"
cp "$T/r1/stats.csv" "$T/r1.stats"
printf '41,agents.noise,7\n' >>"$T/r1/events.csv"
rc=$(run run --resume "$T/r1/checkpoint.hzc" --steps 45)
[ "$rc" = 2 ] || fail "resume with a bad events.csv: exit $rc, expected 2"
grep -qF "$T/r1/events.csv:10: agents.noise: out of range '7'" "$T/err.txt" ||
    fail "resume with a bad events.csv: $(cat "$T/err.txt")"
cmp -s "$T/r1/stats.csv" "$T/r1.stats" || fail "a refused resume changed stats.csv"

# ---- --force removes the earlier run's events.csv (and a new --events writes its own) ----
rc=$(run run "${SMALL[@]}" --steps 3 --out "$T/ev" --force --quiet)
[ "$rc" = 0 ] || fail "--force run exited $rc: $(cat "$T/err.txt")"
[ ! -e "$T/ev/events.csv" ] || fail "--force kept the earlier run's events.csv"
grep -q "kept" "$T/err.txt" && fail "--force called events.csv someone else's: $(cat "$T/err.txt")"

# ---- a model with named sections (wolf-sheep-grass): its named keys ----
cat >"$T/named.csv" <<'EOF'
step,event,value
20,species.sheep.noise,0.9
20,field.wolf_scent.diffusion,0.1
30,species.wolves.radius,2
EOF
MODEL=(wolf-sheep-grass --backend cpu --threads 2 --frames-every 0 --quiet)
rc=$(run run "${MODEL[@]}" --steps 40 --out "$T/model")
[ "$rc" = 0 ] || fail "model run exited $rc: $(cat "$T/err.txt")"
rc=$(run run "${MODEL[@]}" --steps 40 --out "$T/model_ev" --events "$T/named.csv")
[ "$rc" = 0 ] || fail "model run with named events exited $rc: $(cat "$T/err.txt")"
[ "$(wc -l <"$T/model_ev/stats.csv")" -eq 41 ] || fail "model run with events: stats.csv incomplete"
head -n 21 "$T/model/stats.csv" >"$T/a" && head -n 21 "$T/model_ev/stats.csv" >"$T/b"
cmp -s "$T/a" "$T/b" || fail "model: rows up to step 20 differ from the run without events"
paste -d, <(cut -d, -f1,8 "$T/model/stats.csv") <(cut -d, -f8 "$T/model_ev/stats.csv") |
    awk -F, 'NR > 21 && $2 == $3 { print "step " $1; exit 1 }' ||
    fail "model: the named events did not change every row after step 20"
grep -q '"noise": 0.90000000000000002' "$T/model_ev/run.json" ||
    fail "model: run.json's scenario lacks species.sheep.noise = 0.9"
# a checkpoint between the events holds the named value it ran with; resuming reapplies the rest
rc=$(run run "${MODEL[@]}" --steps 25 --checkpoint-every 25 --out "$T/model_r" \
    --events "$T/named.csv")
[ "$rc" = 0 ] || fail "model, 25 steps: exit $rc: $(cat "$T/err.txt")"
grep -aq '^noise = 0.90000000000000002$' "$T/model_r/checkpoint.hzc" ||
    fail "model: the checkpoint of step 25 does not hold species.sheep.noise = 0.9"
rc=$(run run --resume "$T/model_r/checkpoint.hzc" --steps 40 --quiet)
[ "$rc" = 0 ] || fail "model resume exited $rc: $(cat "$T/err.txt")"
cmp -s "$T/model_ev/stats.csv" "$T/model_r/stats.csv" ||
    fail "model resumed after named events: stats.csv differs from the uninterrupted run"

# ---- bad events files: exit 2, "FILE:LINE: what" on one line, no output directory ----
CASE_ARGS=("${SMALL[@]}")
bad_case() { # name, line, expected words, file contents; run with CASE_ARGS
    local name=$1 line=$2 what=$3 text=$4
    local file="$T/$name.csv" out="$T/out_$name"
    printf '%b' "$text" >"$file"
    local rc
    rc=$(run run "${CASE_ARGS[@]}" --steps 5 --out "$out" --events "$file")
    [ "$rc" = 2 ] || fail "$name: exit $rc, expected 2"
    grep -qF "$file:$line: $what" "$T/err.txt" || fail "$name: stderr lacks '$file:$line: $what': $(cat "$T/err.txt")"
    [ "$(wc -l <"$T/err.txt")" -eq 1 ] || fail "$name: the error is not one line: $(cat "$T/err.txt")"
    [ ! -e "$out" ] || fail "$name: the output directory was created"
}
bad_case header 1 "header 'step,value'" 'step,value\n0,agents.noise,0.1\n'
bad_case unknown 3 "unknown event 'world.width' (allowed agents.noise|" \
    'step,event,value\n0,agents.noise,0.1\n1,world.width,32\n'
bad_case decreasing 4 "step 2 comes after step 5 (line 2)" \
    'step,event,value\n5,agents.noise,0.1\n\n2,agents.noise,0.2\n'
bad_case range 2 "field.decay: out of range '1.5' (allowed 0 .. 0.999999)" \
    'step,event,value\n0,field.decay,1.5\n'
bad_case badstep 2 "step '1e3' is not a step number" 'step,event,value\n1e3,agents.noise,0.1\n'
bad_case outside 3 "paint: x 64 is outside the 64x48 world (allowed 0 .. 63)" \
    'step,event,value\n0,paint,63 47 2 1\n1,paint,64 0 2 1\n'
bad_case nan 2 "paint: amount 'nan' is not a finite number" 'step,event,value\n0,paint,1 1 2 nan\n'
bad_case named_plain 3 "species.sheep.noise: the scenario has no [species.sheep] section (allowed \
the keys of its sections agents, field)" \
    'step,event,value\n0,agents.noise,0.1\n9,species.sheep.noise,0.1\n'
bad_case named_key 2 "unknown event 'species.sheep.count' (allowed agents.noise|" \
    'step,event,value\n0,species.sheep.count,3\n'
bad_case named_range 2 "field.grass.decay: out of range '1' (allowed 0 .. 0.999999)" \
    'step,event,value\n0,field.grass.decay,1\n'
CASE_ARGS=(wolf-sheep-grass --backend cpu --frames-every 0)
bad_case model_species 3 "species.wolf.noise: the scenario has no [species.wolf] section (allowed \
the keys of its sections species.sheep, species.wolves, field.grass, field.wolf_scent)" \
    'step,event,value\n0,species.sheep.noise,0.1\n4,species.wolf.noise,0.1\n'
bad_case model_shorthand 2 "agents.radius: the scenario has no [agents] section" \
    'step,event,value\n1,agents.radius,3\n'
rc=$(run run "${SMALL[@]}" --steps 5 --out "$T/out_missing" --events "$T/no-such.csv")
[ "$rc" = 2 ] || fail "missing events file: exit $rc, expected 2"
grep -q "no-such.csv: cannot open events file" "$T/err.txt" || fail "missing file: $(cat "$T/err.txt")"
[ ! -e "$T/out_missing" ] || fail "missing events file: output directory created"

echo "e2e_events: ok"
