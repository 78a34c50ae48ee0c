#!/usr/bin/env bash
# The main job: build volley, then run the ping-pong profile (4 connections, 10 s) against a slave
# that volley starts on loopback for the run, and print the report.
# Extra arguments go to `volley run` (e.g. --set t=64 --json result.json).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" "$root/build"
exec "$root/build/src/volley" run "$root/profiles/pingpong.xml" --local --set t=4 "$@"
