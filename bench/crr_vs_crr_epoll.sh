#!/usr/bin/env bash
# Connect / request / response / close (netperf TCP_CRR): each of -c strands connects, writes a
# 64-byte request, reads a 1 KiB response and disconnects, over and over; volley against the
# plain-syscall reference `crr_epoll -c N -q 64 -r 1024`, alternating A B A B; ratio of medians
# (volley / crr_epoll) and process CPU per connection (volley: master, slave and both).
#
# usage: bench/crr_vs_crr_epoll.sh [-c STRANDS] [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-b BUILD_DIR]
set -euo pipefail
conns=16 rounds=3 seconds=3
usage='[-c STRANDS] [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-b BUILD_DIR]'
source "$(dirname "$0")/lib.sh"
bench_init "$@"
crr_epoll=$(bench_ref crr_epoll)
bench_profile "$work/crr.xml" "$conns" \
  '<flowop type="connect" options="remotehost=$h protocol=tcp"/><flowop type="write" options="size=64"/><flowop type="read" options="size=1k"/><flowop type="disconnect"/>'

for f in ref vol refcpu m s b; do : >"$work/$f"; done
for ((r = 1; r <= rounds; r++)); do
  out=$("$crr_epoll" -c "$conns" -q 64 -r 1024 -d "$seconds" -w "$warmup")
  bench_field "$out" conn_per_sec >>"$work/ref"
  bench_field "$out" us_cpu_per_conn >>"$work/refcpu"
  bench_volley "$work/crr.xml" "$work/v.json"
  bench_json "$work/v.json" rate >>"$work/vol"
  bench_json "$work/v.json" us_master >>"$work/m"
  bench_json "$work/v.json" us_slave >>"$work/s"
  bench_json "$work/v.json" us_both >>"$work/b"
done
ref=$(median <"$work/ref") vol=$(median <"$work/vol") refcpu=$(median <"$work/refcpu")
both=$(median <"$work/b")
echo "$conns strands, 64 B request, 1 KiB response, close"
echo "crr_epoll: $(tr '\n' ' ' <"$work/ref")-> median $ref conn/s, $refcpu us CPU/conn (both ends)"
echo "volley:    $(tr '\n' ' ' <"$work/vol")-> median $vol conn/s"
echo "volley CPU us/conn: master $(median <"$work/m"), slave $(median <"$work/s"), both $both"
echo "ratio volley/crr_epoll: rate $(ratio "$vol" "$ref"), CPU per connection $(ratio "$both" "$refcpu")"
bench_footer
