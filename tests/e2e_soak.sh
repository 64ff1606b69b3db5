#!/usr/bin/env bash
# e2e_soak.sh - soak test (ctest label soak, not in CI): 100k steps of the default scenario
# (SOAK_STEPS overrides, for trying the script), stats every 1000 steps, a checkpoint every
# half. Resident memory (VmRSS, sampled every 2 s) must stay flat once the run is going, and a
# run resumed from the mid-way checkpoint must reproduce the second half's stats.csv rows,
# checksums included, byte for byte. Takes about an hour on two cores.
# usage: e2e_soak.sh HORIZON_BINARY SOURCE_DIR
set -u
H=$1
STEPS=${SOAK_STEPS:-100000}
HALF=$((STEPS / 2))
T=$(mktemp -d /tmp/hz_e2e_soak_XXXXXX)
PID=
trap '[ -n "$PID" ] && kill -9 "$PID" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

opts=(--backend cpu --frames-every 0 --stats-every 1000 --quiet)
t0=$(date +%s)
"$H" run "${opts[@]}" --out "$T/a" --steps "$STEPS" --checkpoint-every "$HALF" &
PID=$!
: > "$T/rss"
while kill -0 $PID 2>/dev/null; do
    r=$(awk '/^VmRSS:/ {print $2}' /proc/$PID/status 2>/dev/null)
    [ -n "$r" ] && echo "$(($(date +%s) - t0)) $r" >> "$T/rss"
    sleep 2
done
wait $PID || fail "the soak run failed"
PID=
secs=$(($(date +%s) - t0))
[ "$(wc -l < "$T/a/stats.csv")" = $((STEPS / 1000 + 1)) ] || fail "stats rows"

# Flat: after the first 10% of the run, the peak of the last quarter of the samples is at most
# 1 MiB above the peak of the first quarter.
n=$(wc -l < "$T/rss")
[ "$n" -ge 8 ] || fail "only $n RSS samples"
read -r early late first last <<< "$(awk -v n="$n" '
    NR > n / 10 { v[++m] = $2 }
    END {
        q = int(m / 4); if (q < 1) q = 1
        for (i = 1; i <= q; i++) if (v[i] > a) a = v[i]
        for (i = m - q + 1; i <= m; i++) if (v[i] > b) b = v[i]
        print a, b, v[1], v[m]
    }' "$T/rss")"
echo "soak: $STEPS steps in ${secs}s; VmRSS $first kB early, $last kB at the end; peaks $early kB" \
     "(first quarter) and $late kB (last quarter), $n samples"
[ $((late - early)) -le 1024 ] || fail "resident memory grew by $((late - early)) kB"

# The second half again, resumed from the mid-way checkpoint (kept as checkpoint.hzc.prev).
mkdir "$T/b"
cp "$T/a/checkpoint.hzc.prev" "$T/b/checkpoint.hzc"
head -n $((HALF / 1000 + 1)) "$T/a/stats.csv" > "$T/b/stats.csv"
"$H" run "${opts[@]}" --resume "$T/b/checkpoint.hzc" || fail "the resumed run failed"
cmp "$T/a/stats.csv" "$T/b/stats.csv" || fail "resumed stats.csv differs from the straight run"
a=$(grep final_checksum "$T/a/run.json")
b=$(grep final_checksum "$T/b/run.json")
[ "$a" = "$b" ] || fail "final checksums: $a vs $b"
echo "ok: soak, resumed from step $HALF to $STEPS with identical rows; $a"
