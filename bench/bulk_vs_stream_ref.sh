#!/usr/bin/env bash
# One-way bulk throughput, one stream of -s byte writes (64 KiB by default), volley against the
# plain-syscall reference `stream_ref -p`, alternating A B A B; each round's ratio, the ratio of
# medians (volley / stream_ref) and process CPU per KiB moved (volley: master = writer, slave =
# reader, and both; stream_ref -p: its sender and receiver processes together). Both are two
# processes, a blocking sender and a blocking reader against volley's master and slave. With
# BENCH_SENDFILE=FILE both send the file with sendfile(2) instead, over and over, in -s byte
# chunks (bench/sendfile_vs_stream_ref.sh passes it).
#
# Placement: each program's sender runs on one CPU and its reader on another, the same two for
# both programs (every thread of the sending process, then of the reading one, with taskset).
# Left to the scheduler, the two ends may share one CPU, and a stream on one CPU moves half as
# much (docs/performance.md, "Bulk, one stream"): a round's ratio would say which program the
# scheduler placed badly. The sender's CPU is the
# first this script may use, the reader's the second; BENCH_CPUS="S R" names them, and
# BENCH_CPUS=none leaves placement to the scheduler (the figures of an unpinned program).
#
# usage: bench/bulk_vs_stream_ref.sh [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES] [-b BUILD_DIR]
#   BENCH_CPUS="S R" | none: the sender's and the reader's CPU (above).
#   BENCH_RT=1: both programs real-time, at priority 5 (on a machine busy with other work, so that
#   the two ends get their CPU when they wake, as on an idle one): chrt -r 5 when pinned, since a
#   FIFO reader that never sleeps would keep its process's other threads (volley's control thread,
#   which must answer its master) off the one CPU they share; chrt -f 5 when not.
set -euo pipefail
rounds=3 seconds=3 size=65536
usage='[-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES] [-b BUILD_DIR]'
source "$(dirname "$0")/lib.sh"
bench_init "$@"
stream_ref=$(bench_ref stream_ref)
file=${BENCH_SENDFILE:-}
connect='<flowop type="connect" options="remotehost=$h protocol=tcp"/>'
if [[ -n $file ]]; then
  mode="sendfile of $file ($(stat -c %s "$file") bytes)"
  ref_args=(-f "$file")
  bench_profile "$work/bulk.xml" 1 "<flowop type=\"sendfile\" options=\"file=$file size=$size\"/>" \
    "$connect" '<flowop type="disconnect"/>'
else
  mode="write"
  ref_args=()
  bench_profile "$work/bulk.xml" 1 "<flowop type=\"write\" options=\"size=$size\"/>" \
    "$connect" '<flowop type="disconnect"/>'
fi

rt=()
if [[ ${BENCH_CPUS:-} == none ]]; then
  cpus=()
  placement="placed by the scheduler"
  [[ -n ${BENCH_RT:-} ]] && rt=(chrt -f 5)
else
  [[ -n ${BENCH_RT:-} ]] && rt=(chrt -r 5)
  read -r -a cpus <<<"${BENCH_CPUS:-$(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0))[:2])')}"
  ((${#cpus[@]} == 2)) || {
    echo "BENCH_CPUS: the sender's CPU and the reader's (got \"${cpus[*]}\"), or none" >&2
    exit 2
  }
  placement="sender on CPU ${cpus[0]}, reader on CPU ${cpus[1]}"
fi

# Every thread of process PID (and those it starts later, which inherit it) on CPU.
pin() { taskset -a -p -c "$2" "$1" >/dev/null; }
# The first child process of PID, once it has one (at most 10 s).
child_of() {
  local kids tries=200
  while ((tries-- > 0)); do
    kids=$(cat /proc/"$1"/task/*/children 2>/dev/null || true)
    [[ -n ${kids// /} ]] && { echo "${kids%% *}"; return 0; }
    sleep 0.05
  done
  return 1
}
# run_pinned SENDER_IS_CHILD COMMAND...: runs COMMAND (under chrt with BENCH_RT) and, with
# BENCH_CPUS, places its two processes: the parent starts on the CPU of the end it holds, and its
# child (the other end) is moved to its own CPU as soon as it exists, well inside the warm-up.
# The child is pinned twice, 0.2 s apart, to take the threads it was starting at the first time.
# stream_ref -p's child is its sender; volley's (--local's slave) is its reader.
run_pinned() {
  local child_sends=$1 parent_cpu child_cpu pid child
  shift
  if ((${#cpus[@]} == 0)); then
    "${rt[@]+"${rt[@]}"}" "$@"
    return
  fi
  if [[ $child_sends == 1 ]]; then parent_cpu=${cpus[1]} child_cpu=${cpus[0]}
  else parent_cpu=${cpus[0]} child_cpu=${cpus[1]}; fi
  taskset -c "$parent_cpu" "${rt[@]+"${rt[@]}"}" "$@" &
  pid=$!
  if child=$(child_of "$pid"); then
    pin "$child" "$child_cpu" || true
    sleep 0.2
    pin "$child" "$child_cpu" || true
  fi
  wait "$pid"
}

for f in ref vol refcpu m s b; do : >"$work/$f"; done
for ((r = 1; r <= rounds; r++)); do
  out=$(run_pinned 1 "$stream_ref" -p -n 1 -s "$size" -d "$seconds" -w "$warmup" "${ref_args[@]}")
  bench_field "$out" gbit_per_sec >>"$work/ref"
  bench_field "$out" us_cpu_per_kb >>"$work/refcpu"
  run_pinned 0 "$volley" run "$work/bulk.xml" --local --set h=127.0.0.1 -q --json "$work/v.json" \
    "${volley_args[@]+"${volley_args[@]}"}" >/dev/null
  bench_json "$work/v.json" gbit >>"$work/vol"
  bench_json "$work/v.json" us_kb_master >>"$work/m"
  bench_json "$work/v.json" us_kb_slave >>"$work/s"
  bench_json "$work/v.json" us_kb_both >>"$work/b"
done
ref=$(median <"$work/ref") vol=$(median <"$work/vol") refcpu=$(median <"$work/refcpu")
both=$(median <"$work/b")
echo "one stream, $mode, $size bytes per call; $placement${BENCH_RT:+; both under ${rt[*]}}"
echo "stream_ref: $(tr '\n' ' ' <"$work/ref")-> median $ref Gbit/s, $refcpu us CPU/KiB (both ends)"
echo "volley:     $(tr '\n' ' ' <"$work/vol")-> median $vol Gbit/s"
echo "each round, volley/stream_ref: $(paste -d' ' "$work/vol" "$work/ref" |
  awk '{printf "%.2f ", ($2 > 0 ? $1 / $2 : 0)}')(lowest $(paste -d' ' "$work/vol" "$work/ref" |
  awk '{r = ($2 > 0 ? $1 / $2 : 0); if (NR == 1 || r < lo) lo = r} END {printf "%.2f", lo}'))"
echo "volley CPU us/KiB: master (sender) $(median <"$work/m"), slave (receiver)" \
  "$(median <"$work/s"), both $both"
echo "ratio volley/stream_ref: throughput $(ratio "$vol" "$ref"), CPU per KiB $(ratio "$both" "$refcpu")"
bench_footer "the reference is two processes, one per end"
