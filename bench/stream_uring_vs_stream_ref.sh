#!/usr/bin/env bash
# What io_uring buys for bulk on this kernel, before volley has an io_uring engine: the one-stream
# references side by side, stream_ref -p (../shared/bench/ref: a blocking write loop against a
# blocking read loop, two processes) and stream_uring -p (bench/ref, its io_uring twin: same options,
# same output), alternating stream_ref stream_uring in each round at each write size. Prints every
# run, then per size the medians, each round's ratio uring / ref and the lowest, and the ratio of the
# CPU per KiB (both processes). With BENCH_SENDFILE=FILE both send that file over and over instead
# (sendfile(2) against io_uring's two linked splices through a pipe), -s bytes a call.
#
# usage: bench/stream_uring_vs_stream_ref.sh [-s "16384 65536 1048576"] [-r ROUNDS] [-d SECONDS] [-w WARMUP]
# Needs liburing-dev (scripts/install-deps.sh installs it).
set -euo pipefail
rounds=5 seconds=3 size="16384 65536 1048576"
usage='[-s "16384 65536 1048576"] [-r ROUNDS] [-d SECONDS] [-w WARMUP]'
without_volley=1
source "$(dirname "$0")/lib.sh"
bench_init "$@"
stream_ref=$(bench_ref stream_ref)
stream_uring=$(bench_ref stream_uring -luring) ||
  { echo "stream_uring needs liburing-dev (scripts/install-deps.sh)" >&2; exit 2; }
args=()
mode=write
if [[ -n ${BENCH_SENDFILE:-} ]]; then
  args=(-f "$BENCH_SENDFILE")
  mode="sendfile of $BENCH_SENDFILE ($(stat -c %s "$BENCH_SENDFILE") bytes)"
fi

echo "round size program gbit_per_sec us_cpu_per_kb"
for s in $size; do
  for ((r = 1; r <= rounds; r++)); do
    for p in stream_ref stream_uring; do
      out=$("$work/$p" -p -n 1 -s "$s" -d "$seconds" -w "$warmup" "${args[@]+"${args[@]}"}")
      echo "$r $s $p $(bench_field "$out" gbit_per_sec) $(bench_field "$out" us_cpu_per_kb)" |
        tee -a "$work/runs"
    done
  done
done
echo
echo "one stream, $mode; medians, Gbit/s and us of CPU per KiB (both processes)"
echo "size       ref  uring  uring/ref each round (lowest)          ref_us/KiB uring_us/KiB cpu_uring/ref"
for s in $size; do
  col() { awk -v s="$s" -v p="$1" -v c="$2" '$2==s && $3==p {print $c}' "$work/runs"; }
  rr=$(col stream_ref 4 | median) ur=$(col stream_uring 4 | median)
  rc=$(col stream_ref 5 | median) uc=$(col stream_uring 5 | median)
  rounds_text=$(paste -d' ' <(col stream_uring 4) <(col stream_ref 4) |
    awk '{r = ($2 > 0 ? $1 / $2 : 0); printf "%.2f ", r; if (NR == 1 || r < lo) lo = r}
         END {printf "(%.2f)", lo}')
  printf "%-8s %6.1f %6.1f  %-36s %10.3f %12.3f %13s\n" "$s" "$rr" "$ur" "$rounds_text" "$rc" "$uc" \
    "$(ratio "$uc" "$rc")"
done
bench_footer "both references are two processes, one per end"
