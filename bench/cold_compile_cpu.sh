#!/usr/bin/env bash
# CPU time (user + sys) of a cold compile of volley's translation units, without ccache: every
# EVERY-th compile of a configured build tree, or all of them with EVERY=1, each compiled once
# with that tree's own command into a scratch object. CPU time, not wall time: on a shared,
# loaded machine the wall time of a build says more about the other jobs than about the build.
#
# Usage: bench/cold_compile_cpu.sh BUILD_DIR [EVERY]   (EVERY defaults to 8)
# Compare two configurations by configuring two trees from the same sources (configuring is
# enough: nothing is built in them), e.g. CI's normal build as .ci/run configures it, before and
# after a change of flags:
#   cmake -S . -B /tmp/cold-a -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVOLLEY_WERROR=ON \
#     -DVOLLEY_TESTS_O1=OFF
#   cmake -S . -B /tmp/cold-b -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVOLLEY_WERROR=ON \
#     -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
#   nice -n 10 bench/cold_compile_cpu.sh /tmp/cold-a; nice -n 10 bench/cold_compile_cpu.sh /tmp/cold-b
# Prints one line per translation unit (seconds, path) and the totals for the library's and the
# tests' files. Link steps are not counted.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [EVERY]}
every=${2:-8}
[[ -f $build/build.ninja ]] || { echo "cold_compile_cpu: $build is not a configured Ninja tree" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export CCACHE_DISABLE=1
src_total=0 test_total=0 n=0 failed=0
mapfile -t objects < <(ninja -C "$build" -t targets all | sed -n 's/^\(.*\.cpp\.o\): CXX_COMPILER.*/\1/p' | sort)
for ((i = 0; i < ${#objects[@]}; i += every)); do
  object=${objects[i]}
  command=$(ninja -C "$build" -t commands "$object" | tail -1)
  command=${command#ccache }
  # The same compile, into a scratch object and without the dependency file.
  command=$(sed -E "s# -o [^ ]+# -o $scratch/o.o#; s# -MD -MT [^ ]+ -MF [^ ]+##" <<<"$command")
  if ! (cd "$build" && /usr/bin/time -f '%U %S' -o "$scratch/time" bash -c "$command" >/dev/null 2>&1); then
    failed=$((failed + 1))  # needs a file generated at build time: left out of both totals alike
    continue
  fi
  seconds=$(awk '{printf "%.2f", $1 + $2}' "$scratch/time")
  printf '%7.2f %s\n' "$seconds" "$object"
  n=$((n + 1))
  if [[ $object == tests/* ]]; then
    test_total=$(awk -v a="$test_total" -v b="$seconds" 'BEGIN{printf "%.2f", a + b}')
  else
    src_total=$(awk -v a="$src_total" -v b="$seconds" 'BEGIN{printf "%.2f", a + b}')
  fi
done
echo "translation units compiled: $n of ${#objects[@]} (every $every; $failed left out)"
echo "CPU seconds: library and tools $src_total, tests $test_total," \
  "total $(awk -v a="$src_total" -v b="$test_total" 'BEGIN{printf "%.2f", a + b}')"
