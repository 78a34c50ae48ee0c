#!/usr/bin/env bash
# volley's 64-byte TCP ping-pong against the plain-syscall reference pp_epoll on loopback, per
# connection count, alternating A B A B; ratio of medians (volley / pp_epoll) and process CPU per
# round trip (volley: master, slave and both; pp_epoll holds both ends in one process).
#
# usage: bench/pingpong_vs_pp_epoll.sh [-c "16 256 1024 4096"] [-r ROUNDS] [-d SECONDS]
#        [-w WARMUP] [-s MESSAGE_BYTES] [-b BUILD_DIR] [-a "VOLLEY RUN ARGS"]
set -euo pipefail
conns="16 256 1024 4096" rounds=3 seconds=3 size=64
usage='[-c "16 256 1024 4096"] [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES] [-b BUILD_DIR] [-a ARGS]'
source "$(dirname "$0")/lib.sh"
bench_init "$@"
pp_epoll=$(bench_ref pp_epoll)
bench_profile "$work/pp.xml" '$t' \
  "<flowop type=\"write\" options=\"size=$size\"/><flowop type=\"read\" options=\"size=$size\"/>" \
  '<flowop type="connect" options="remotehost=$h protocol=tcp"/>' '<flowop type="disconnect"/>'

printf "%-6s %10s %10s %6s | %8s | %8s %8s %8s %6s | %s\n" conns pp_epoll volley ratio \
  "ref us" "master" "slave" "both" "cpu" "rounds (pp_epoll; volley)"
for c in $conns; do
  for f in ref vol refcpu m s b; do : >"$work/$f"; done
  for ((r = 1; r <= rounds; r++)); do
    out=$("$pp_epoll" -c "$c" -s "$size" -d "$seconds" -w "$warmup")
    bench_field "$out" rt_per_sec >>"$work/ref"
    bench_field "$out" us_cpu_per_rt >>"$work/refcpu"
    bench_volley "$work/pp.xml" "$work/v.json" --set "t=$c"
    bench_json "$work/v.json" rate >>"$work/vol"
    bench_json "$work/v.json" us_master >>"$work/m"
    bench_json "$work/v.json" us_slave >>"$work/s"
    bench_json "$work/v.json" us_both >>"$work/b"
  done
  ref=$(median <"$work/ref") vol=$(median <"$work/vol") refcpu=$(median <"$work/refcpu")
  both=$(median <"$work/b")
  printf "%-6s %10.0f %10.0f %6s | %8.2f | %8.2f %8.2f %8.2f %6s | %s; %s\n" "$c" "$ref" "$vol" \
    "$(ratio "$vol" "$ref")" "$refcpu" "$(median <"$work/m")" "$(median <"$work/s")" "$both" \
    "$(ratio "$both" "$refcpu")" "$(spread <"$work/ref")" "$(spread <"$work/vol")"
done
echo "rates: round trips/s; CPU: us per round trip; ratio = volley/pp_epoll (cpu: both ends/ref);" \
  "rounds: the lowest and highest rate of each program's rounds"
bench_footer
