#!/usr/bin/env bash
# A user's first command: build the program alone, then run the ping-pong profile (4 connections,
# 10 s) against a slave that volley starts on loopback for the run, and print the report.
# Extra arguments go to `volley run` (e.g. --set t=64 --json result.json).
#
# The build is the one a user or packager gets, not the developers' (scripts/build.sh): a Release
# build of the `volley` target only (no tests, benchmarks or fuzzers configured), warnings left
# as warnings (a newer compiler's new warning must not stop a user), in a folder of its own
# (VOLLEY_RELEASE_BUILD, default build-release) so it never changes the test build's settings.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VOLLEY_RELEASE_BUILD:-"$root/build-release"}
"$root/scripts/install-deps.sh" program
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVOLLEY_WERROR=OFF \
  -DVOLLEY_BUILD_TESTS=OFF -DVOLLEY_BUILD_BENCH=OFF -DVOLLEY_FUZZ=OFF >/dev/null
cmake --build "$build" --target volley -j "$(nproc)"
exec "$build/src/volley" run "$root/profiles/pingpong.xml" --local --set t=4 "$@"
