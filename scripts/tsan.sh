#!/usr/bin/env bash
# Builds volley with ThreadSanitizer and runs the unit, integration and fault suites with every
# data race reported and fatal. .ci/tsan.supp lists only proven false positives, each with its
# reason. The generated profiles run in the normal and ASan builds, not here.
# Usage: scripts/tsan.sh [BUILD_DIR]   (CI runs it with VOLLEY_CI_TSAN=1 bash .ci/run)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build-tsan"}
VOLLEY_GENERATED=0 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$root/.ci/tsan.supp" \
  "$root/scripts/test.sh" "$build" -DVOLLEY_SANITIZE=thread -DVOLLEY_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1"
