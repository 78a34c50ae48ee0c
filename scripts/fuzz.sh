#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan + UBSan, coverage instrumented) in
# their own build folder and runs each for SECONDS (default 60), starting from its seed corpus in
# tests/fuzz/corpus/<target>/. New inputs libFuzzer finds go to the work folder, not the
# repository; a crash, hang (-timeout) or memory blow-up (-rss_limit_mb) stops the target, leaves
# its input in the work folder, and makes this script exit 1.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]      (targets: the *_fuzz.cpp names without _fuzz)
# Environment: FUZZ_BUILD (default build-fuzz), FUZZ_WORK (default $FUZZ_BUILD/fuzz-work),
#              FUZZ_JOBS (parallel targets, default 1), CC/CXX (default clang-14/clang++-14),
#              FUZZ_TIMEOUT (seconds one input may take before it counts as a hang, default 10;
#              libFuzzer counts wall time, so under `nice` on a loaded machine, where a fuzzer
#              can wait tens of seconds for a core, raise it, e.g. to 120).
# A finding: fix the code with a test, then copy the input into tests/fuzz/corpus/<target>/ so
# the corpus replay test (every build) keeps it fixed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
build=${FUZZ_BUILD:-"$root/build-fuzz"}
work=${FUZZ_WORK:-"$build/fuzz-work"}
jobs=${FUZZ_JOBS:-1}
timeout=${FUZZ_TIMEOUT:-10}

targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in "$root"/tests/fuzz/*_fuzz.cpp; do
    n=$(basename "$f" .cpp)
    targets+=("${n%_fuzz}")
  done
fi

"$root/scripts/install-deps.sh"
cc=${CC:-clang-14}
cxx=${CXX:-clang++-14}
command -v "$cxx" >/dev/null || { echo "fuzz.sh: $cxx not found (apt-get install clang-14)" >&2; exit 2; }
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVOLLEY_FUZZ=ON -DVOLLEY_SANITIZE="address;undefined" \
  -DVOLLEY_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"

run_one() {
  local t=$1 dir="$work/$1"
  mkdir -p "$dir/corpus" "$dir/findings"
  echo "== fuzz $t for ${seconds}s"
  # Seeds are read from the repository's corpus, new inputs written to the work folder only.
  # -timeout: an input taking more than FUZZ_TIMEOUT seconds is a hang; -rss_limit_mb: more than 2 GB is a leak
  # or an unbounded allocation; -max_len: profiles and frames of up to 64 KiB.
  (cd "$dir" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$dir/findings/" \
      "$dir/corpus" "$root/tests/fuzz/corpus/$t" >"$dir/log" 2>&1)
  local rc=$?
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+ *DONE' "$dir/log" | sed "s/^/$t: /"
  if ((rc != 0)); then
    echo "fuzz.sh: $t FOUND A PROBLEM (exit $rc): see $dir/log and $dir/findings/" >&2
    grep -E 'ERROR:|SUMMARY:|Test unit written' "$dir/log" | head -5 >&2
  fi
  return $rc
}

status=0
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if ((${#pids[@]} >= jobs)); then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
