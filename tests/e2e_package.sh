# e2e_package.sh - the Debian package: `cpack -G DEB` from the build directory gives
# horizon_VERSION_ARCH.deb, whose control file declares Depends (the runtime libraries the binary
# links), a Maintainer and a Description, and which holds usr/bin/horizon, the model library and
# the README. Skipped (77) without cpack or dpkg-deb.
# usage: bash e2e_package.sh HORIZON_BINARY SOURCE_DIR
# environment (set by tests/CMakeLists.txt): HZ_BUILD_DIR, HZ_CPACK.
set -euo pipefail

HZ=$1
B=${HZ_BUILD_DIR:-$(cd "$(dirname "$HZ")/.." && pwd)}
CPACK=${HZ_CPACK:-cpack}
T=$(mktemp -d "${TMPDIR:-/tmp}/hz_e2e_package.XXXXXX")
trap 'rm -rf "$T"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

if ! command -v "$CPACK" >/dev/null || ! command -v dpkg-deb >/dev/null; then
    echo "e2e_package: SKIPPED (no cpack or dpkg-deb)"
    exit 77
fi
[ -f "$B/CPackConfig.cmake" ] || fail "no CPackConfig.cmake in $B"
# cpack installs the build into its own staging area under $T/pkg: the build directory stays
# as it was.
(cd "$T" && "$CPACK" -G DEB --config "$B/CPackConfig.cmake" -B "$T/pkg" >"$T/cpack.txt" 2>&1) ||
    { cat "$T/cpack.txt" >&2; fail "cpack -G DEB failed"; }
debs=("$T"/pkg/horizon_*_*.deb)
[ -f "${debs[0]}" ] || fail "no horizon_VERSION_ARCH.deb: $(ls "$T/pkg")"
DEB=${debs[0]}
dpkg-deb -I "$DEB" >"$T/info.txt"
for dep in libc6 libgomp1 libinih1 libpng16-16 zlib1g; do
    grep -Eq "^ Depends:.*\\b$dep\\b" "$T/info.txt" || fail ".deb Depends lacks $dep: $(grep Depends "$T/info.txt")"
done
if "$HZ" info | grep -q "viewer: SDL2"; then
    grep -Eq "^ Depends:.*libsdl2-2.0-0" "$T/info.txt" || fail ".deb Depends lacks libsdl2-2.0-0"
fi
grep -q "^ Maintainer: ." "$T/info.txt" || fail ".deb has no Maintainer"
grep -q "^ Description: ." "$T/info.txt" || fail ".deb has no Description"
dpkg-deb -c "$DEB" >"$T/contents.txt"
for f in ./usr/bin/horizon ./usr/share/horizon/models/aggregation.ini \
    ./usr/share/horizon/models/laplace.ini ./usr/share/doc/horizon/README.md; do
    grep -q " $f\$" "$T/contents.txt" || fail ".deb lacks $f"
done
# the packaged binary finds the packaged library, wherever the tree is unpacked
dpkg-deb -x "$DEB" "$T/x"
(cd "$T" && env -u HORIZON_DATA_DIR "$T/x/usr/bin/horizon" models >"$T/models.txt") ||
    fail "the packaged horizon models failed"
[ "$(head -n 1 "$T/models.txt")" = "models in $T/x/usr/share/horizon/models:" ] ||
    fail "the packaged binary did not find the packaged models: $(head -n 1 "$T/models.txt")"
echo "e2e_package: ok ($(basename "$DEB"): $(grep '^ Depends:' "$T/info.txt"))"
