#!/usr/bin/env bash
# e2e_reliability_badckpt.sh - `horizon run --resume` with damaged or hostile checkpoint files:
# corrupt (one flipped bit in the field), truncated, wrong format version, big-endian, no
# checkpoint at all, empty, a directory, a FIFO (refused, not waited on), missing. Each is refused with exit 2 and a message
# that says which, and the run directory is left exactly as it was.
# usage: e2e_reliability_badckpt.sh HORIZON_BINARY SOURCE_DIR
set -u
H=$1
SRC=$2
T=$(mktemp -d /tmp/hz_e2e_badckpt_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
poke() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }
snapshot() { (cd "$1" && find . -type f | sort | xargs md5sum); }

"$H" run --backend cpu --quiet --out "$T/run" --steps 10 --checkpoint-every 10 \
    --set world.width=64 --set world.height=48 --frames-every 5 || fail "setup run"
good="$T/run/checkpoint.hzc"
size=$(stat -c %s "$good")

# case name | how to damage a copy | expected words in the message
check() {
    local name=$1 want=$2
    local d="$T/$name"
    [ -e "$d/checkpoint.hzc" ] || [ "$name" = missing ] || fail "$name: setup"
    local before after err rc
    before=$(snapshot "$d")
    err=$(timeout 60 "$H" run --backend cpu --resume "$d/checkpoint.hzc" --steps 20 2>&1)
    rc=$?
    after=$(snapshot "$d")
    [ $rc = 2 ] || fail "$name: exit $rc, expected 2 ($err)"
    echo "$err" | grep -q -- "$want" || fail "$name: message '$err' does not say '$want'"
    [ "$before" = "$after" ] || fail "$name: the run directory was changed"
    echo "  $name: $err"
}
mk() { cp -r "$T/run" "$T/$1"; }

mk corrupt;   poke "$T/corrupt/checkpoint.hzc" $((size - 2000)) '\x5a'
check corrupt "corrupt checkpoint: field section CRC mismatch"
mk truncated; truncate -s $((size - 100)) "$T/truncated/checkpoint.hzc"
check truncated "truncated checkpoint: $((size - 100)) bytes, $size needed"
mk header;    truncate -s 20 "$T/header/checkpoint.hzc"
check header "shorter than the 36-byte header"
mk version;   poke "$T/version/checkpoint.hzc" 8 '\x03'
check version "checkpoint format version 3; this horizon reads versions 1 and 2"
mk endian;    poke "$T/endian/checkpoint.hzc" 12 '\x0a\x0b\x0c\x0d'
check endian "wrong byte order: the checkpoint is big-endian"
mk scenario;  cp "$SRC/assets/scenarios/default.ini" "$T/scenario/checkpoint.hzc"
check scenario "not a Horizon checkpoint (bad signature)"
mk empty;     : > "$T/empty/checkpoint.hzc"
check empty "truncated checkpoint: 0 bytes"
mk junk;      printf 'x' >> "$T/junk/checkpoint.hzc"
check junk "data after the end"
mk dir;       rm "$T/dir/checkpoint.hzc"; mkdir "$T/dir/checkpoint.hzc"
check dir "not a regular file"
mk fifo;      rm "$T/fifo/checkpoint.hzc"; mkfifo "$T/fifo/checkpoint.hzc" # must not wait
check fifo "not a regular file"
mk missing;   rm "$T/missing/checkpoint.hzc"
check missing "cannot open checkpoint: No such file or directory"

# The intact checkpoint still resumes.
"$H" run --backend cpu --quiet --resume "$good" --steps 20 || fail "the good checkpoint"
echo "ok: bad checkpoints refused"
