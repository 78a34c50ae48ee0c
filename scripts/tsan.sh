#!/usr/bin/env bash
# Builds volley with ThreadSanitizer and runs the unit and integration suites with every data
# race reported and fatal. .ci/tsan.supp lists only proven false
# positives, each with its reason. Built: only the volley binary and the binaries those two
# suites run, at -O1 -g1 (a cold build is the cost of this CI stage). The fault suite and the
# generated profiles run in the normal and ASan builds, not here; set VOLLEY_TSAN_FAULTS=1 to run
# the fault suite too.
# Left out as well: the unit suites that start no thread, no io_context and no program, and the
# fuzz corpus replays; scripts/tsan-suites.sh computes that list from the sources at every run (a
# data race needs two threads, so under TSan they could only repeat what the normal and ASan
# builds check, at the cost of compiling them a third time), and its check, a CTest test of the
# normal build, fails CI when a suite left out does start a thread or a program.
# Usage: scripts/tsan.sh [BUILD_DIR]   (.ci/run runs it as its third stage)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build-tsan"}
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DVOLLEY_WERROR=ON -DVOLLEY_SANITIZE=thread \
  -DVOLLEY_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" >/dev/null
# The targets: the volley binary, the unit suites scripts/tsan-suites.sh picks and the
# integration binaries; not the fault suite nor the generated profiles.
single_threaded=$("$root/scripts/tsan-suites.sh" skip | paste -s -d '|')
skip="volley_generated_tests|$single_threaded"
[ "${VOLLEY_TSAN_FAULTS:-0}" = 1 ] || skip="$skip|volley_faults_tests"
mapfile -t targets < <(ninja -C "$build" -t targets all |
  sed -n -E 's/^(volley|volley_[a-z]+_tests|fuzz_replay_[a-z_]+): phony$/\1/p' |
  grep -v -E "^($skip)$")
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
# atexit_sleep_ms=0: TSan's finalizer otherwise sleeps a second at every exit, _exit included, and
# the tests that time how fast a second Ctrl-C ends volley (at once, by _exit) would see it.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 atexit_sleep_ms=0 suppressions=$root/.ci/tsan.supp"
# (-LE fuzz: the corpus replays are not built here. A gtest binary left out stands in CTest only
# as an unlabelled `..._NOT_BUILT` placeholder, which -L unit passes over.)
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -L unit -LE fuzz
# One at a time (scripts/test.sh runs two at a time): under ThreadSanitizer these tests are bound
# by the CPU, not the clock, and two at a time took longer and failed timing checks (README.md,
# "Continuous integration").
ctest --test-dir "$build" --output-on-failure -L integration
if [ "${VOLLEY_TSAN_FAULTS:-0}" = 1 ]; then
  ctest --test-dir "$build" --output-on-failure -L faults
fi
