#!/usr/bin/env bash
# The fault suite's long version: the same tests as CI's "faults" label, each fault repeated
# SCALE times (default 20: 30,000 malformed sessions, 200 masters killed), with the figures
# collected at the end. Run it on a quiet machine; it needs a built tree.
# Usage: tests/faults/soak.sh [BUILD_DIR] [SCALE] [extra gtest arguments...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-"$root/build"}
scale=${2:-20}
shift 2 || shift $# || true
binary="$build/tests/volley_faults_tests"
[[ -x $binary ]] || { echo "soak.sh: build first: scripts/build.sh $build" >&2; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
status=0
VOLLEY_FAULT_SCALE=$scale nice -n 10 "$binary" --gtest_random_seed=0 "$@" | tee "$log" || status=$?
echo "== fault soak, scale $scale, $(( $(date +%s) - start )) s, exit $status"
grep '^fault-figure ' "$log" | sed 's/^fault-figure /  /'
exit $status
