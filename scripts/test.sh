#!/usr/bin/env bash
# Builds volley and runs every test suite (unit and loopback integration) with CTest.
# Usage: scripts/test.sh [BUILD_DIR] [extra cmake arguments...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
shift || true
"$root/scripts/build.sh" "$build" "$@"
# Integration tests start real slaves and measure for a second or two each: run them one at a
# time so they do not compete for the two cores with each other.
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -LE "integration|generated|faults"
ctest --test-dir "$build" --output-on-failure -L integration
# The fault suite (tests/faults, about a minute): malformed sessions, killed masters, idle
# connections, a killed or frozen slave; alone, since it watches the slave's memory and files.
ctest --test-dir "$build" --output-on-failure -L faults
# The generated-profile suite (tests/generated, 200 seeds) still finds open defects (issue 8: a
# master that only reads in a duration step leaves the slave's bytes in flight unread; a few
# seeds hang): it runs when asked, VOLLEY_GENERATED=1 scripts/test.sh, and in the soak script.
if [ "${VOLLEY_GENERATED:-0}" = 1 ]; then
  ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -L generated
fi
