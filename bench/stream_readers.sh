#!/usr/bin/env bash
# One-way bulk, one stream, with no volley in it: stream_ref's blocking sender against receivers
# that read and wait in different ways (bench/ref/stream_ev.c: a blocking read, or an epoll loop
# reading with recvmsg and TCP_INQ as volley does, each with a read size and a wake-up mark),
# alternating in each round; Gbit/s each round, the medians, and each median over the blocking
# reader's. What the way a reader reads and waits does, apart from any program around it.
#
# usage: bench/stream_readers.sh [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES]
#   READERS="NAME:ARGS;...": the receivers (stream_ev's -R, -A and -L), the first the baseline;
#   by default a blocking read of -s bytes, then epoll loops reading -s bytes, 256 KiB and
#   16 KiB at a time, then 256 KiB at a time woken once 256 KiB are there (-L).
#   BENCH_SENDFILE=1: the sender sends a 16 MiB file with sendfile(2), -s bytes a call.
#   BENCH_RT=1: every run under chrt -f 5 (on a machine busy with other work).
set -euo pipefail
rounds=3 seconds=2 size=65536
usage='[-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES]'
without_volley=1
source "$(dirname "$0")/lib.sh"
bench_init "$@"
stream_ev=$(bench_ref stream_ev)
readers=${READERS:-"block:-R block;epoll $size:-R epoll;epoll 256K:-R epoll -A 262144;epoll 16K:-R epoll -A 16384;epoll 256K, mark 256K:-R epoll -A 262144 -L 262144"}
file_args=()
if [[ -n ${BENCH_SENDFILE:-} ]]; then
  head -c 16777216 /dev/urandom >"$work/payload"
  file_args=(-f "$work/payload")
fi
rt=()
[[ -n ${BENCH_RT:-} ]] && rt=(chrt -f 5)
IFS=';' read -r -a list <<<"$readers"
for ((i = 0; i < ${#list[@]}; i++)); do : >"$work/r$i"; done
for ((r = 1; r <= rounds; r++)); do
  for ((i = 0; i < ${#list[@]}; i++)); do
    read -r -a args <<<"${list[i]#*:}"
    out=$("${rt[@]}" "$stream_ev" -p -n 1 -s "$size" -d "$seconds" -w "$warmup" \
      "${file_args[@]}" "${args[@]}")
    bench_field "$out" gbit_per_sec >>"$work/r$i"
  done
done
echo "one stream, ${BENCH_SENDFILE:+sendfile, }$size bytes per call, Gbit/s per round -> median (/ the first)"
base=$(median <"$work/r0")
for ((i = 0; i < ${#list[@]}; i++)); do
  m=$(median <"$work/r$i")
  printf '%-26s %s-> %s (%s)\n' "${list[i]%%:*}" "$(tr '\n' ' ' <"$work/r$i")" "$m" "$(ratio "$m" "$base")"
done
echo "(${seconds}s measured after ${warmup}s warm-up; $(nproc) CPUs, load average" \
  "$(cut -d' ' -f1-3 /proc/loadavg)${BENCH_RT:+; chrt -f 5})"
