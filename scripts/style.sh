#!/usr/bin/env bash
# Style held by tools: clang-format (.clang-format) over every C++ file of the tree, and
# clang-tidy (.clang-tidy: bugprone-* and performance-*) over the sources that changed since the
# tree was last checked whole (.ci/tidy-base). .ci/run runs the check after the normal build.
#
# usage: scripts/style.sh [--fix] [--tidy-all] [BUILD_DIR]
#   (no flag)   check: formatting of the whole tree (fast), clang-tidy on the .cpp files under src/
#               changed since the commit in .ci/tidy-base (and on every source that includes a
#               header under include/ or src/ that changed since then); exit 1 on any finding.
#   --fix       rewrite the files clang-format would change, and nothing else (clang-tidy's
#               findings are for a person to fix).
#   --tidy-all  clang-tidy on every .cpp under src/ (about 10 minutes on two cores); when it is
#               clean, record HEAD in .ci/tidy-base so CI checks only what changes after it.
# BUILD_DIR (default build) must hold a compile_commands.json (scripts/build.sh makes one).
# Exit status: 0 clean, 1 findings, 2 bad usage or missing tools.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
fix=0
tidy_all=0
build=build
for arg in "$@"; do
  case "$arg" in
    --fix) fix=1 ;;
    --tidy-all) tidy_all=1 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) sed -n '2,15p' "$0" >&2; exit 2 ;;
    *) build=$arg ;;
  esac
done
format=$(command -v clang-format-14 || command -v clang-format || true)
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
if [ -z "$format" ] || [ -z "$tidy" ]; then
  echo "style: clang-format and clang-tidy are needed (scripts/install-deps.sh installs them)" >&2
  exit 2
fi
# Sources clang-format owns: everything but generated files and test data.
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.c' '*.h' | grep -v -E '^tests/(data|fuzz/corpus)/')
status=0
if [ "$fix" = 1 ]; then
  "$format" -i --style=file "${files[@]}"
  exit 0
else
  if ! "$format" --dry-run -Werror --style=file "${files[@]}" 2> /tmp/volley-format.$$; then
    grep -E '^[^ ].*: (warning|error):' /tmp/volley-format.$$ | sed 's/: error: code should be clang-formatted.*/: not formatted (scripts\/style.sh --fix)/' | sort -u | head -50
    echo "style: $(grep -c -E ': (warning|error):' /tmp/volley-format.$$) lines not formatted" >&2
    status=1
  fi
  rm -f /tmp/volley-format.$$
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "style: $build/compile_commands.json is missing: run scripts/build.sh $build first" >&2
  exit 2
fi
base=$(cat .ci/tidy-base 2>/dev/null || true)
if [ "$tidy_all" = 1 ] || [ -z "$base" ] || ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  mapfile -t sources < <(git ls-files -- 'src/*.cpp')
  tidy_all=1
else
  mapfile -t changed < <(git diff --name-only "$base" -- src include)
  sources=()
  for f in "${changed[@]}"; do
    case "$f" in
      *.cpp) [ -f "$f" ] && sources+=("$f") ;;
      *.hpp) # a header: every source that names it
        name=${f#include/}
        name=${name#src/*/}
        while IFS= read -r user; do sources+=("$user"); done < <(git grep -l -F "$name" -- 'src/*.cpp' || true) ;;
    esac
  done
  mapfile -t sources < <(printf '%s\n' "${sources[@]}" | sort -u | grep . || true)
fi
if [ "${#sources[@]}" -gt 0 ]; then
  echo "style: clang-tidy on ${#sources[@]} source(s)"
  log=$(mktemp)
  printf '%s\n' "${sources[@]}" |
    xargs -P "$(nproc)" -n 4 "$tidy" -p "$build" --quiet 2>/dev/null > "$log" || true
  if grep -q -E ': (warning|error):' "$log"; then
    grep -E -A3 ': (warning|error):' "$log"
    echo "style: clang-tidy: $(grep -c -E ': (warning|error):' "$log") findings" >&2
    status=1
  elif [ "$tidy_all" = 1 ]; then
    git rev-parse HEAD > .ci/tidy-base
    echo "style: the whole tree is clean; .ci/tidy-base is now $(cat .ci/tidy-base) (commit it)"
  fi
  rm -f "$log"
fi
exit "$status"
