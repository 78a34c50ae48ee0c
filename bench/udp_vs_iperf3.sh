#!/usr/bin/env bash
# volley's UDP stream (one strand, 1472-byte datagrams, unpaced) against iperf3 -u -b 0 -l 1472 on
# loopback, alternating A B A B, each round's ratio and the lowest, and the ratio of the medians
# (volley / iperf3) of what the RECEIVER got, in Mb/s (UDP is counted where it arrives; both
# tools' senders can outrun it).
#
# volley batches a stream's datagrams (sendmmsg on the sender, recvmmsg on the receiver: about
# 0.03 system calls per datagram on the sender, 0.1 on the receiver, checked with
# bench/callgrind_per_transaction.sh -m udp -x strace); iperf3 makes one system call per datagram
# on each end (and a select() every few). Each round also prints what sets the received rate:
# datagrams sent and received, the loss (on loopback every loss is a receive-buffer overflow,
# /proc/net/snmp RcvbufErrors), and the CPU (user+sys, /proc/PID/stat, which with tick accounting
# includes the softirq that delivers the datagram, run on the sender's core on loopback) per
# datagram sent for the sender and per datagram received for the receiver. These move far less
# with machine load than Mb/s do.
#
# -g: volley's connection has gso (super-buffers of 44 datagrams out, UDP_GRO in), and every round
# also runs bench/ref/udp_gso_ref -m gso, the same with plain blocking system calls: the limit
# for gso, which iperf3 3.12 does not have. The rounds then print volley / udp_gso_ref too.
# BENCH_RT=1: every program under chrt -f 5 (on a machine busy with other work, each end gets a
# CPU as soon as it wakes, as it would find one idle on a quiet machine).
# Prerequisites (scripts/install-deps.sh installs them): iperf3, jq, a C compiler.
# usage: bench/udp_vs_iperf3.sh [-r ROUNDS] [-d SECONDS] [-b BUILD_DIR] [-g]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=3
seconds=4
build="$root/build"
gso=
while getopts "r:d:b:g" opt; do
  case $opt in
    r) rounds=$OPTARG ;;
    d) seconds=$OPTARG ;;
    b) build=$OPTARG ;;
    g) gso=1 ;;
    *) echo "usage: $0 [-r ROUNDS] [-d SECONDS] [-b BUILD_DIR] [-g]" >&2; exit 2 ;;
  esac
done
command -v iperf3 >/dev/null || { echo "iperf3 is not installed (apt-get install iperf3)" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq is not installed (apt-get install jq)" >&2; exit 2; }
volley="$build/src/volley"
[[ -x $volley ]] || { echo "build volley first (scripts/build.sh)" >&2; exit 2; }
rt=()
[[ -n ${BENCH_RT:-} ]] && rt=(chrt -f 5)
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
if [[ -n $gso ]]; then
  cc -O2 -Wall -Wextra -std=gnu11 -I "$root/../shared/bench/ref" -I /work/shared/bench/ref \
    -o "$work/udp_gso_ref" "$root/bench/ref/udp_gso_ref.c" || exit 2
fi

cat >"$work/udp.xml" <<XML
<?xml version="1.0"?>
<profile name="udp stream bench">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=\$h protocol=udp${gso:+ gso}"/></transaction>
    <transaction duration="${seconds}s"><flowop type="write" options="size=1472"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
XML

vport=$((22000 + RANDOM % 1000))
iport=$((23000 + RANDOM % 1000))
"${rt[@]}" "$volley" serve --listen 127.0.0.1:$vport --workers 1 -q & vpid=$!; pids+=($vpid)
"${rt[@]}" iperf3 -s -p $iport >/dev/null 2>&1 & ipid=$!; pids+=($ipid)
sleep 0.5

# CPU seconds (user+sys) of a process so far.
cpu_s() { awk -v t="$(getconf CLK_TCK)" '{print ($14 + $15) / t}' "/proc/$1/stat"; }
# The CPU of the last command run by `timed` (the sender), from bash's `times` in a subshell.
timed() { ( "$@" >/dev/null; times ) | awk 'NR == 2 {
  split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }'; }
# One line: received Mb/s, then sent, received, loss %, sender us per datagram sent, receiver us
# per datagram received.
cost_line() {  # MBPS SENT RECEIVED SENDER_CPU_S RECEIVER_CPU_S
  awk -v m="$1" -v s="$2" -v r="$3" -v cs="$4" -v cr="$5" 'BEGIN {
    printf "%.1f %d %d %.1f %.2f %.2f\n", m, s, r, (s > r ? 100 * (s - r) / s : 0),
      (s ? cs * 1e6 / s : 0), (r ? cr * 1e6 / r : 0) }'
}
run_volley() {
  local c0 c1 sender
  c0=$(cpu_s "$vpid")
  sender=$(timed "${rt[@]}" "$volley" run "$work/udp.xml" -P $vport --set h=127.0.0.1 --workers 1 \
    -q --json "$work/v.json")
  c1=$(cpu_s "$vpid")
  # Received bytes at the slave over its window of the timed step (the nominal length if it has
  # none), in Mb/s.
  cost_line "$(jq -r --argjson s "$seconds" \
    '.slaves[0].groups[0].transactions[1] as $t
     | $t.flowops[0].bytes_read * 8 / (if $t.elapsed_s > 0 then $t.elapsed_s else $s end) / 1e6' \
    "$work/v.json")" \
    "$(jq -r '.groups[0].transactions[1].flowops[0].datagrams.sent' "$work/v.json")" \
    "$(jq -r '.slaves[0].groups[0].transactions[1].flowops[0].datagrams.received' "$work/v.json")" \
    "$sender" "$(awk -v a="$c0" -v b="$c1" 'BEGIN {print b - a}')"
}
run_iperf3() {
  local c0 c1 sender
  c0=$(cpu_s "$ipid")
  rm -f "$work/i.json"
  sender=$(timed "${rt[@]}" iperf3 -c 127.0.0.1 -p $iport -u -b 0 -l 1472 -t "$seconds" -J \
    --logfile "$work/i.json")
  c1=$(cpu_s "$ipid")
  cost_line "$(jq -r '.end.sum.bytes * (1 - .end.sum.lost_percent / 100) * 8 / .end.sum.seconds / 1e6' \
    "$work/i.json")" \
    "$(jq -r '.end.sum.packets' "$work/i.json")" \
    "$(jq -r '.end.sum.packets - .end.sum.lost_packets' "$work/i.json")" \
    "$sender" "$(awk -v a="$c0" -v b="$c1" 'BEGIN {print b - a}')"
}
# The reference prints its own counts (its sender is a child process; CPU of each end).
run_ref() {
  local out
  out=$("${rt[@]}" "$work/udp_gso_ref" -m gso -s 1472 -d "$seconds" -w 0)
  awk '{for (i = 1; i <= NF; i++) {split($i, kv, "="); v[kv[1]] = kv[2]}}
    END {printf "%.1f %d %d %.1f %.2f %.2f\n", v["mbit_per_sec"], v["sent"], v["received"],
      v["loss_pct"], v["sender_us_per_datagram"], v["receiver_us_per_datagram"]}' <<<"$out"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# Each round's ratio of column 1 of files A and B, then the lowest.
rounds_ratio() {
  paste -d' ' "$1" "$2" | awk '{r = ($7 > 0 ? $1 / $7 : 0); printf "%.2f ", r
    if (NR == 1 || r < lo) lo = r} END {printf "(lowest %.2f)", lo}'
}

: >"$work/a"; : >"$work/b"; : >"$work/c"
echo "            Mb/s received, sent, received, loss %, sender us/sent, receiver us/received"
for ((i = 1; i <= rounds; i++)); do
  a=$(run_volley); echo "round $i volley  $a"; echo "$a" >>"$work/a"
  b=$(run_iperf3); echo "round $i iperf3  $b"; echo "$b" >>"$work/b"
  if [[ -n $gso ]]; then c=$(run_ref); echo "round $i gso ref $c"; echo "$c" >>"$work/c"; fi
done
col() { awk -v c="$1" '{print $c}' "$2" | median; }
ma=$(col 1 "$work/a"); mb=$(col 1 "$work/b")
echo "each round, volley/iperf3: $(rounds_ratio "$work/a" "$work/b")"
[[ -n $gso ]] && echo "each round, volley/udp_gso_ref: $(rounds_ratio "$work/a" "$work/c")"
echo "median volley ${ma} Mb/s, iperf3 ${mb} Mb/s, ratio $(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.2f", a / b}')"
[[ -n $gso ]] && echo "median udp_gso_ref $(col 1 "$work/c") Mb/s (volley with gso; udp_gso_ref -m gso)"
echo "median loss %: volley $(col 4 "$work/a"), iperf3 $(col 4 "$work/b");" \
  "sender us/datagram: volley $(col 5 "$work/a"), iperf3 $(col 5 "$work/b");" \
  "receiver us/datagram: volley $(col 6 "$work/a"), iperf3 $(col 6 "$work/b")"
[[ -n $gso ]] && echo "udp_gso_ref: loss % $(col 4 "$work/c"), sender us/datagram" \
  "$(col 5 "$work/c"), receiver us/datagram $(col 6 "$work/c")"
echo "($(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)${BENCH_RT:+; chrt -f 5})"
