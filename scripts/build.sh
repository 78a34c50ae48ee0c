#!/usr/bin/env bash
# Installs what is missing (Debian packages only), then configures and builds volley.
# Usage: scripts/build.sh [BUILD_DIR] [extra cmake arguments...]
# This is the developer and CI build: warnings are errors (-DVOLLEY_WERROR=ON). A plain
# `cmake -DCMAKE_BUILD_TYPE=Release` (a packager's build) leaves them warnings.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
shift || true
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVOLLEY_WERROR=ON "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
