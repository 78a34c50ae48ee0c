#!/usr/bin/env bash
# volley's UDP stream (one strand, 1472-byte datagrams, unpaced) against iperf3 -u -b 0 -l 1472 on
# loopback, alternating A B A B, and the ratio of the medians (volley / iperf3) of what the
# RECEIVER got, in Mb/s (UDP is counted where it arrives; both tools' senders can outrun it).
#
# Both send one datagram per system call (volley: one sendto per datagram, checked with
# strace -c -f on a --local run: 11167 sendto for 11133 datagrams; the receiver one recvfrom per
# datagram plus the EAGAIN that sends it back to epoll), so the ratio compares the same work.
# Prerequisites (scripts/install-deps.sh installs them): iperf3, jq.
# usage: bench/udp_vs_iperf3.sh [-r ROUNDS] [-d SECONDS] [-b BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=3
seconds=4
build="$root/build"
while getopts "r:d:b:" opt; do
  case $opt in
    r) rounds=$OPTARG ;;
    d) seconds=$OPTARG ;;
    b) build=$OPTARG ;;
    *) echo "usage: $0 [-r ROUNDS] [-d SECONDS] [-b BUILD_DIR]" >&2; exit 2 ;;
  esac
done
command -v iperf3 >/dev/null || { echo "iperf3 is not installed (apt-get install iperf3)" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq is not installed (apt-get install jq)" >&2; exit 2; }
volley="$build/src/volley"
[[ -x $volley ]] || { echo "build volley first (scripts/build.sh)" >&2; exit 2; }
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

cat >"$work/udp.xml" <<XML
<?xml version="1.0"?>
<profile name="udp stream bench">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=\$h protocol=udp"/></transaction>
    <transaction duration="${seconds}s"><flowop type="write" options="size=1472"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
XML

vport=$((22000 + RANDOM % 1000))
iport=$((23000 + RANDOM % 1000))
"$volley" serve --listen 127.0.0.1:$vport --workers 1 -q & pids+=($!)
iperf3 -s -p $iport >/dev/null 2>&1 & pids+=($!)
sleep 0.5

run_volley() {
  "$volley" run "$work/udp.xml" -P $vport --set h=127.0.0.1 --workers 1 -q --json "$work/v.json" >/dev/null
  # Received bytes at the slave over its window of the timed step (the nominal length if it has
  # none), in Mb/s.
  jq -r --argjson s "$seconds" \
    '.slaves[0].groups[0].transactions[1] as $t
     | $t.flowops[0].bytes_read * 8 / (if $t.elapsed_s > 0 then $t.elapsed_s else $s end) / 1e6' \
    "$work/v.json"
}
run_iperf3() {
  iperf3 -c 127.0.0.1 -p $iport -u -b 0 -l 1472 -t "$seconds" -J >"$work/i.json"
  jq -r '.end.sum.bytes * (1 - .end.sum.lost_percent / 100) * 8 / .end.sum.seconds / 1e6' "$work/i.json"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

: >"$work/a"; : >"$work/b"
for ((i = 1; i <= rounds; i++)); do
  a=$(run_volley); echo "round $i volley  received ${a} Mb/s"; echo "$a" >>"$work/a"
  b=$(run_iperf3); echo "round $i iperf3  received ${b} Mb/s"; echo "$b" >>"$work/b"
done
ma=$(median <"$work/a"); mb=$(median <"$work/b")
echo "median volley ${ma} Mb/s, iperf3 ${mb} Mb/s, ratio $(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.2f", a / b}')"
