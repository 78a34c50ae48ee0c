#!/usr/bin/env bash
# Soak: runs N generated profiles (tests/support/profile_generator.hpp) through the real CLI, as
# the CI's generated-profile tests do for seeds 1..200, with the same checks: each run ends within
# its nominal time plus a bound and succeeds (exit 0, status ok, equal bytes on both sides): any
# failure of a valid profile counts. Seeds are split into J shards run side by side.
#
# usage: bench/generated_profiles_soak.sh [-n SEEDS] [-s FIRST] [-j JOBS] [-b BUILD_DIR] [-o OUT_DIR]
#   -n SEEDS   how many seeds (default 10000)
#   -s FIRST   first seed (default 1001: CI runs 1..200)
#   -j JOBS    shards run at once (default 2)
#   -o OUT_DIR where the shard logs go (default: a new directory under /tmp)
# A failing seed prints its profile, what was wrong and the command that reproduces it (in the
# shard's log); its files are kept under /tmp/volley-generated-seed-N. About 1-2 s per seed per
# shard: 10,000 seeds take 2-3 hours with -j 2 on two cores.
# Exit status: 0 every seed passed, 1 some failed, 2 bad usage.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seeds=10000
first=1001
jobs=2
build="$root/build"
out=""
while getopts "n:s:j:b:o:" opt; do
  case $opt in
    n) seeds=$OPTARG ;;
    s) first=$OPTARG ;;
    j) jobs=$OPTARG ;;
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    *) sed -n '2,15p' "$0" >&2; exit 2 ;;
  esac
done
tests="$build/tests/volley_generated_tests"
[[ -x $tests ]] || { echo "build the tests first (scripts/build.sh $build)" >&2; exit 2; }
out=${out:-$(mktemp -d /tmp/volley-soak.XXXXXX)}
mkdir -p "$out"

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT
per=$(((seeds + jobs - 1) / jobs))
start=$(date +%s)
for ((j = 0; j < jobs; j++)); do
  from=$((first + j * per))
  count=$((per < seeds - j * per ? per : seeds - j * per))
  ((count > 0)) || continue
  VOLLEY_SOAK_SEEDS="$from:$count" "$tests" --gtest_filter=GeneratedProfileSoak.Seeds \
    >"$out/shard-$j.log" 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || true; done
pids=()
passed=$(cat "$out"/shard-*.log | grep -c '^seed [0-9]* ok$' || true)
failed=$(cat "$out"/shard-*.log | grep '^seed [0-9]* FAILED$' | awk '{print $2}' | sort -n | tr '\n' ' ' || true)
n_failed=$(echo "$failed" | wc -w)
echo "soak: seeds $first..$((first + seeds - 1)): $passed passed, $n_failed failed, $(($(date +%s) - start)) s"
[[ -z $failed ]] || echo "failed seeds: $failed (details in $out/shard-*.log)"
((n_failed == 0 && passed == seeds))
