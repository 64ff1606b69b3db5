# e2e_install.sh - the installed horizon and its model library: `cmake --install` into a temporary
# prefix, then from outside the source tree `horizon models` lists the installed library, a
# model runs by name, an unknown name is refused (exit 2, one line), and HORIZON_DATA_DIR comes
# first. (The Debian package: e2e_package.sh.)
# usage: bash e2e_install.sh HORIZON_BINARY SOURCE_DIR
# environment (set by tests/CMakeLists.txt): HZ_BUILD_DIR, HZ_CMAKE.
set -euo pipefail

HZ=$1
SRC=$2
B=${HZ_BUILD_DIR:-$(cd "$(dirname "$HZ")/.." && pwd)}
CMAKE=${HZ_CMAKE:-cmake}
T=$(mktemp -d "${TMPDIR:-/tmp}/hz_e2e_install.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

[ -f "$B/cmake_install.cmake" ] || fail "no cmake_install.cmake in the build directory $B"

# ---- install into a temporary prefix ----
P=$T/p
"$CMAKE" --install "$B" --prefix "$P" >"$T/install.txt" 2>&1 || { cat "$T/install.txt" >&2; fail "cmake --install failed"; }
[ -x "$P/bin/horizon" ] || fail "no $P/bin/horizon"
for f in share/horizon/models/aggregation.ini share/horizon/models/laplace.ini \
    share/horizon/scenarios/default.ini share/doc/horizon/README.md; do
    [ -f "$P/$f" ] || fail "not installed: $f"
done
# every file of the library is installed (PNG maps included)
(cd "$SRC/assets/models" && find . -type f | sort) >"$T/src_models.txt"
(cd "$P/share/horizon/models" && find . -type f | sort) >"$T/inst_models.txt"
diff "$T/src_models.txt" "$T/inst_models.txt" >/dev/null ||
    fail "installed models differ from assets/models: $(diff "$T/src_models.txt" "$T/inst_models.txt" | tr '\n' ' ')"

# From here on, outside the source tree and with no HORIZON_DATA_DIR from the caller.
cd "$T"
unset HORIZON_DATA_DIR
HZI=$P/bin/horizon

# Runs a command, recording stdout, stderr and the exit code (set -e must not stop on failure).
run() {
    local rc=0
    "$@" >"$T/out.txt" 2>"$T/err.txt" || rc=$?
    echo "$rc"
}

# ---- horizon models: the installed library (not the source tree's), sorted, described ----
grep -q "models" <("$HZI" --help) || fail "horizon --help does not mention models"
rc=$(run "$HZI" models --help)
[ "$rc" = 0 ] || fail "horizon models --help: exit $rc"
grep -q "HORIZON_DATA_DIR" "$T/out.txt" || fail "horizon models --help does not name HORIZON_DATA_DIR"
rc=$(run "$HZI" models)
[ "$rc" = 0 ] || { cat "$T/err.txt" >&2; fail "horizon models: exit $rc"; }
[ "$(head -n 1 "$T/out.txt")" = "models in $P/share/horizon/models:" ] ||
    fail "horizon models did not list the installed library: $(head -n 1 "$T/out.txt")"
grep -Eq '^  aggregation +Agents climb' "$T/out.txt" || fail "aggregation not listed: $(cat "$T/out.txt")"
grep -Eq '^  laplace +[^ (]' "$T/out.txt" || fail "laplace not listed with a description: $(cat "$T/out.txt")"
names=$(tail -n +2 "$T/out.txt" | awk '{print $1}')
[ "$names" = "$(printf '%s\n' "$names" | LC_ALL=C sort)" ] || fail "models not sorted: $names"
rc=$(run "$HZI" models extra)
[ "$rc" = 2 ] || fail "horizon models extra: exit $rc, expected 2"

# ---- a model by name: horizon run laplace, horizon info laplace ----
SMALL=(--set world.width=48 --set world.height=24 --set run.steps=3 --set output.frames_every=0
    --backend cpu --threads 2 --quiet)
rc=$(run "$HZI" run laplace "${SMALL[@]}" --set "output.dir=$T/out")
[ "$rc" = 0 ] || { cat "$T/err.txt" >&2; fail "horizon run laplace: exit $rc"; }
[ "$(wc -l <"$T/out/stats.csv")" -eq 4 ] || fail "horizon run laplace: stats.csv incomplete"
grep -q '"boundary": "fixed"' "$T/out/run.json" || fail "horizon run laplace did not run laplace.ini"
rc=$(run "$HZI" info laplace --set world.width=64 --set world.height=32)
[ "$rc" = 0 ] || { cat "$T/err.txt" >&2; fail "horizon info laplace: exit $rc"; }
grep -q "scenario: 64x32 fixed" "$T/out.txt" || fail "horizon info laplace: $(cat "$T/out.txt")"
# a model that only the installed library holds: found there, not through the source tree
cp "$P/share/horizon/models/laplace.ini" "$P/share/horizon/models/only-installed.ini"
rc=$(run "$HZI" run only-installed "${SMALL[@]}" --set "output.dir=$T/out2")
[ "$rc" = 0 ] || { cat "$T/err.txt" >&2; fail "a model only in the installed library: exit $rc"; }
rm "$P/share/horizon/models/only-installed.ini"

# ---- an unknown name: exit 2, one line naming where it looked, nothing created ----
rc=$(run "$HZI" run no-such-model --set "output.dir=$T/out3")
[ "$rc" = 2 ] || fail "unknown model: exit $rc, expected 2"
grep -qF "horizon: no scenario file or model named 'no-such-model' (see \`horizon models\`; looked in" \
    "$T/err.txt" || fail "unknown model: $(cat "$T/err.txt")"
grep -qF "$P/share/horizon/models" "$T/err.txt" || fail "unknown model: the installed library not named"
[ "$(wc -l <"$T/err.txt")" -eq 1 ] || fail "unknown model: the error is not one line"
[ ! -e "$T/out3" ] || fail "unknown model: output directory created"
# a file path is not a name: a missing laplace.ini is the parser's missing file
rc=$(run "$HZI" run laplace.ini --set "output.dir=$T/out3")
[ "$rc" = 2 ] || fail "missing laplace.ini: exit $rc, expected 2"
! grep -q "model named" "$T/err.txt" || fail "laplace.ini was taken for a model name"
# an existing file of the name wins over the library
cp "$P/share/horizon/models/aggregation.ini" "$T/laplace"
rc=$(run "$HZI" info laplace)
grep -q "scenario: 512x512 periodic" "$T/out.txt" || fail "./laplace (a file) lost to the model"
rm "$T/laplace"

# ---- HORIZON_DATA_DIR comes first ----
mkdir -p "$T/data/models"
printf '[model]\ndescription = my own laplace\n[world]\nwidth = 40\nheight = 20\nboundary = wall\n[agents]\ncount = 0\n' \
    >"$T/data/models/laplace.ini"
printf '[world]\nwidht = 4\n' >"$T/data/models/broken.ini"
printf '[world]\nwidth = 40\n' >"$T/data/models/plain.ini"
printf 'not a model\n' >"$T/data/models/notes.txt"
rc=$(HORIZON_DATA_DIR=$T/data run "$HZI" models)
[ "$rc" = 0 ] || fail "HORIZON_DATA_DIR: horizon models exit $rc"
[ "$(head -n 1 "$T/out.txt")" = "models in $T/data/models:" ] ||
    fail "HORIZON_DATA_DIR not listed first: $(head -n 1 "$T/out.txt")"
grep -Eq '^  laplace +my own laplace$' "$T/out.txt" || fail "HORIZON_DATA_DIR: $(cat "$T/out.txt")"
grep -Eq '^  broken +\(does not parse: broken.ini:2: world.widht' "$T/out.txt" ||
    fail "a broken model is not listed as such: $(cat "$T/out.txt")"
grep -Eq '^  plain +\(no description\)$' "$T/out.txt" || fail "plain.ini: $(cat "$T/out.txt")"
! grep -q notes "$T/out.txt" || fail "notes.txt listed as a model"
[ "$(tail -n +2 "$T/out.txt" | awk '{print $1}' | tr '\n' ' ')" = "broken laplace plain " ] ||
    fail "HORIZON_DATA_DIR: not sorted by name: $(cat "$T/out.txt")"
rc=$(HORIZON_DATA_DIR=$T/data run "$HZI" run laplace --set run.steps=2 --set output.frames_every=0 \
    --backend cpu --threads 2 --quiet --set "output.dir=$T/out4")
[ "$rc" = 0 ] || { cat "$T/err.txt" >&2; fail "HORIZON_DATA_DIR: run exit $rc"; }
grep -q '"width": 40' "$T/out4/run.json" || fail "HORIZON_DATA_DIR's laplace was not the one run"
# a name it lacks is still found in the installed library
rc=$(HORIZON_DATA_DIR=$T/data run "$HZI" info aggregation)
grep -q "scenario: 512x512 periodic" "$T/out.txt" || fail "HORIZON_DATA_DIR: aggregation not found after it"
rc=$(HORIZON_DATA_DIR=$T/data run "$HZI" run broken --set "output.dir=$T/out5")
[ "$rc" = 2 ] || fail "a broken model: exit $rc, expected 2"
grep -qF "$T/data/models/broken.ini:2: world.widht" "$T/err.txt" || fail "a broken model: $(cat "$T/err.txt")"

# ---- a copy of the binary in a bare prefix: the source tree it was built from is its last resort ----
mkdir -p "$T/bare/bin"
cp "$HZI" "$T/bare/bin/horizon"
rc=$(HORIZON_DATA_DIR=$T/nowhere run "$T/bare/bin/horizon" models)
if [ -d "$SRC/assets/models" ]; then
    # the source tree is the last resort of a binary built from it
    if [ "$rc" != 0 ] || ! grep -qF "models in $(cd "$SRC/assets/models" && pwd -P):" "$T/out.txt"; then
        fail "a bare binary did not fall back to the source tree: $(cat "$T/out.txt" "$T/err.txt")"
    fi
fi

echo "e2e_install: ok"
