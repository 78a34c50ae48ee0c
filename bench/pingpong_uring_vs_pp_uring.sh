#!/usr/bin/env bash
# volley's io_uring engine (--io uring) against the io_uring ping-pong reference pp_uring
# (bench/ref/pp_uring.c) on loopback: 64-byte ping-pong, one connection per strand, per
# connection count, alternating pp_uring, volley --io uring and volley --io epoll in each round.
# Prints every round with its ratios (volley uring / pp_uring, volley uring / volley epoll), then
# per count the medians and the lowest round's ratio: a target is met when every round meets it.
#
# usage: bench/pingpong_uring_vs_pp_uring.sh [-c "16 256 1024 4096"] [-r ROUNDS] [-d SECONDS]
#        [-w WARMUP] [-s MESSAGE_BYTES] [-b BUILD_DIR] [-a "VOLLEY RUN ARGS"]
# Needs liburing-dev (scripts/install-deps.sh installs it).
set -euo pipefail
conns="16 256 1024 4096" rounds=5 seconds=2 size=64
usage='[-c "16 256 1024 4096"] [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES] [-b BUILD_DIR] [-a ARGS]'
source "$(dirname "$0")/lib.sh"
bench_init "$@"
pp_uring=$(bench_ref pp_uring -luring)
bench_profile "$work/pp.xml" '$t' \
  "<flowop type=\"write\" options=\"size=$size\"/><flowop type=\"read\" options=\"size=$size\"/>" \
  '<flowop type="connect" options="remotehost=$h protocol=tcp"/>' '<flowop type="disconnect"/>'

echo "round conns pp_uring_rt/s uring_rt/s epoll_rt/s uring/pp_uring uring/epoll" \
  "pp_uring_us/rt uring_us/rt(both) epoll_us/rt(both)"
for c in $conns; do
  for ((r = 1; r <= rounds; r++)); do
    out=$("$pp_uring" -c "$c" -s "$size" -d "$seconds" -w "$warmup")
    ref=$(bench_field "$out" rt_per_sec) refcpu=$(bench_field "$out" us_cpu_per_rt)
    bench_volley "$work/pp.xml" "$work/u.json" --set "t=$c" --io uring
    bench_volley "$work/pp.xml" "$work/e.json" --set "t=$c" --io epoll
    u=$(bench_json "$work/u.json" rate) e=$(bench_json "$work/e.json" rate)
    ucpu=$(bench_json "$work/u.json" us_both) ecpu=$(bench_json "$work/e.json" us_both)
    printf "%5d %5d %13.0f %10.0f %10.0f %14s %11s %14.2f %16.2f %16.2f\n" "$r" "$c" "$ref" "$u" \
      "$e" "$(ratio "$u" "$ref")" "$(ratio "$u" "$e")" "$refcpu" "$ucpu" "$ecpu" |
      tee -a "$work/runs"
  done
done
echo
echo "conns median: pp_uring uring epoll | uring/pp_uring: median lowest | uring/epoll: median lowest"
for c in $conns; do
  col() { awk -v c="$c" -v k="$1" '$2 == c {print $k}' "$work/runs"; }
  printf "%5d %10.0f %10.0f %10.0f | %6.2f %6.2f | %6.2f %6.2f\n" "$c" "$(col 3 | median)" \
    "$(col 4 | median)" "$(col 5 | median)" "$(col 6 | median)" "$(col 6 | sort -g | head -1)" \
    "$(col 7 | median)" "$(col 7 | sort -g | head -1)"
done
bench_footer
