#!/usr/bin/env bash
# Which unit suites ThreadSanitizer (scripts/tsan.sh) runs, decided from the sources each time so
# the choice cannot go stale, and the check that the suites it leaves out are single-threaded.
#
# Rule: the unit suite of module M (tests/M/, registered in tests/CMakeLists.txt) runs under TSan
# when tests/M/, src/M/ or include/volley/M/ names anything that starts a thread or a process or
# shares memory between threads: std::thread, std::jthread, std::async, pthread_create, an Asio
# io_context, a mutex, an atomic or a condition variable, fork/exec/posix_spawn/popen, the child
# processes of src/process, or the test helpers that start `volley` (VOLLEY_BINARY, tests/support's
# serve, slave_process, local_run, process, pty_process, control_client, netns). A data race needs
# two threads, so a suite that names none of these can only repeat under TSan what the normal and
# ASan builds check. The fuzz corpus replays (one parser call per input) are left out too.
#
# The grep can miss a thread started indirectly (a suite calling into another module that starts
# one), so `check` runs every suite left out, in a build without sanitizers, under strace: a
# thread created (clone with CLONE_THREAD) or a program executed fails it. It is the CTest test
# `tsan_suites.single_threaded` (label "unit") of every build without sanitizers, so stage 1 of
# CI fails when a skipped suite starts one; the fix is then to extend the rule above.
#
# Usage: scripts/tsan-suites.sh run          the unit suites TSan runs (target names, one a line)
#        scripts/tsan-suites.sh skip         the unit suites and corpus replays it leaves out
#        scripts/tsan-suites.sh check BUILD  runs the left-out binaries of BUILD under strace
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# The modules whose suites carry the label "unit": the foreach list in tests/CMakeLists.txt.
modules() {
  sed -n -E 's/^foreach\(m ([a-z ]+)\)$/\1/p' "$root/tests/CMakeLists.txt" | tr ' ' '\n'
}

pattern='std::(thread|jthread|async)\b|pthread_create|io_context|std::(mutex|shared_mutex|atomic|condition_variable)\b'
pattern+='|\bfork\(|\bexec[lv]p?e?\(|posix_spawn|\bpopen\(|ChildProcess|process::'
pattern+='|VOLLEY_BINARY|support/(serve|slave_process|local_run|process|pty_process|control_client|netns)\.hpp'

threaded() {
  local m=$1 dirs=()
  for d in "tests/$m" "src/$m" "include/volley/$m"; do
    [ -d "$root/$d" ] && dirs+=("$root/$d")
  done
  grep -rqE "$pattern" "${dirs[@]}"
}

suites() {  # $1: run | skip
  local m
  modules | while read -r m; do
    [ -d "$root/tests/$m" ] || continue
    local verdict=skip
    if threaded "$m"; then verdict=run; fi
    if [ "$verdict" = "$1" ]; then echo "volley_${m}_tests"; fi
  done
  if [ "$1" = skip ]; then
    for f in "$root"/tests/fuzz/*_fuzz.cpp; do
      n=$(basename "$f" _fuzz.cpp)
      echo "fuzz_replay_$n"
    done
  fi
  return 0
}

check() {
  local build=$1 failed=0 t binary args log
  command -v strace >/dev/null || { echo "tsan-suites.sh: strace not found (scripts/install-deps.sh)" >&2; return 2; }
  log=$(mktemp)
  trap 'rm -f "$log"' RETURN
  for t in $(suites skip); do
    if [[ $t == fuzz_replay_* ]]; then
      binary="$build/tests/fuzz/$t"
      args=("$root/tests/fuzz/corpus/${t#fuzz_replay_}")
    else
      binary="$build/tests/$t"
      args=()
    fi
    if [ ! -x "$binary" ]; then
      echo "tsan-suites.sh: $binary is not built" >&2
      failed=1
      continue
    fi
    # -f follows every thread and process; the first execve is the binary itself.
    if ! strace -f -qq -e trace=clone,clone3,execve -o "$log" "$binary" "${args[@]}" >/dev/null 2>&1; then
      echo "tsan-suites.sh: $t failed (run it alone to see why)" >&2
      failed=1
      continue
    fi
    local threads programs
    threads=$(grep -c 'CLONE_THREAD' "$log" || true)
    programs=$(( $(grep -c 'execve(' "$log" || true) - 1 ))
    if ((threads > 0 || programs > 0)); then
      echo "tsan-suites.sh: $t is left out of the TSan stage as single-threaded, but started" \
        "$threads thread(s) and $programs program(s): extend the rule in scripts/tsan-suites.sh" >&2
      failed=1
    fi
  done
  return $failed
}

case "${1:-}" in
  run | skip) suites "$1" ;;
  check) check "${2:?usage: scripts/tsan-suites.sh check BUILD}" ;;
  *) echo "usage: scripts/tsan-suites.sh run|skip|check BUILD" >&2; exit 2 ;;
esac
