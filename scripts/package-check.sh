#!/usr/bin/env bash
# Builds the Debian package (CPack), unpacks it with dpkg-deb -x into a temporary root, and checks
# what a user would get: the package's fields and dependencies, the unpacked `volley --version`,
# `volley check` on the packaged profiles, the packaged man page under `man --warnings -l`, the
# bash completion and the docs. Nothing is installed on this machine.
# Usage: scripts/package-check.sh [BUILD_DIR]   (default: build, the folder scripts/test.sh uses)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
"$root/scripts/install-deps.sh"
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" --target volley -j "$(nproc)"
rm -f "$build"/volley_*.deb
(cd "$build" && cpack -G DEB >/dev/null)
debs=("$build"/volley_*.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || { echo "package-check: expected one volley_*.deb in $build" >&2; exit 1; }
deb=${debs[0]}

fail() { echo "package-check: $*" >&2; exit 1; }
field() { dpkg-deb -f "$deb" "$1"; }
version=$(field Version)
arch=$(field Architecture)
[[ $(basename "$deb") == "volley_${version}_${arch}.deb" ]] || fail "file name $(basename "$deb") is not volley_${version}_${arch}.deb"
[[ $arch == "$(dpkg --print-architecture)" ]] || fail "Architecture $arch"
depends=$(field Depends)
for lib in libc6 libstdc++6 libfmt9 libpugixml1v5 liburing2; do
  [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib (dpkg-shlibdeps): $depends"
done
[[ -n $(field Maintainer) && $(field Section) == net && -n $(field Description) ]] || fail "Maintainer, Section or Description missing"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp"
volley="$tmp/usr/bin/volley"
[[ -x $volley ]] || fail "no usr/bin/volley in the package"

"$volley" --version | tee "$tmp/version"
grep -Eq "^volley ${version} \(git [^ )]+\)$" "$tmp/version" || fail "--version does not name version $version and a commit"

"$volley" check "$tmp"/usr/share/volley/profiles/*.xml --set h=127.0.0.1 --set t=1 --set r=100 --set file=/etc/hostname --set s=127.0.0.1

page="$tmp/usr/share/man/man1/volley.1"
[[ -f $page ]] || fail "no usr/share/man/man1/volley.1"
MANWIDTH=80 man --warnings -l "$page" 2>"$tmp/man-warnings" >"$tmp/man-text"
[[ ! -s "$tmp/man-warnings" ]] || { cat "$tmp/man-warnings" >&2; fail "man page warnings"; }
grep -q "volley merge" "$tmp/man-text" || fail "the man page did not render"

completion="$tmp/usr/share/bash-completion/completions/volley"
bash -n "$completion" || fail "bash completion does not parse"
for doc in README.md results.md profile-reference.md many-hosts.md; do
  [[ -f "$tmp/usr/share/doc/volley/$doc" ]] || fail "no usr/share/doc/volley/$doc"
done

echo "package-check: ok: $(basename "$deb") ($(du -h "$deb" | cut -f1)), Depends: $depends"
