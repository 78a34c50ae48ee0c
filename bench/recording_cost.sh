#!/usr/bin/env bash
# What a measurement costs: the same ping-pong with it and without it, alternating A B A B, every
# round's figures and its ratio, then the ratio of medians. What is switched off is one of
# volley run's cost switches, on both sides:
#   --no-latency   no clock reads or histogram updates per operation (the default)
#   --no-tcp-info  no TCP_INFO reads at transactions' and intervals' ends
#
# usage: bench/recording_cost.sh [-x SWITCH] [-c CONNS] [-r ROUNDS] [-d SECONDS] [-i INTERVAL]
#                                [-b BUILD_DIR]
#   -x SWITCH    the switch that turns the measurement off (default --no-latency)
#   -c CONNS     connections (strands) of the ping-pong (default 256)
#   -i INTERVAL  volley's --interval (default 1s; TCP_INFO is read at each interval's end)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
switch=--no-latency
conns=256
rounds=5
seconds=4
interval=1s
build="$root/build"
usage() { sed -n '8,12p' "$0" >&2; exit 2; }
while getopts "x:c:r:d:i:b:" opt; do
  case $opt in
    x) switch=$OPTARG ;;
    c) conns=$OPTARG ;;
    r) rounds=$OPTARG ;;
    d) seconds=$OPTARG ;;
    i) interval=$OPTARG ;;
    b) build=$OPTARG ;;
    *) usage ;;
  esac
done
case $switch in --no-latency | --no-tcp-info) ;; *) echo "-x: --no-latency or --no-tcp-info, not $switch" >&2; exit 2 ;; esac
volley="$build/src/volley"
[[ -x $volley ]] || { echo "build volley first (scripts/build.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed "s/duration=\"10s\"/duration=\"${seconds}s\"/" "$root/profiles/pingpong.xml" >"$work/pp.xml"

# Rate, and the process CPU of both ends (master and slave) per transaction in microseconds:
# steadier than the rate on a noisy machine, and what the measurement actually spends.
figures() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cpu = sum(s["process"]["user_s"] + s["process"]["sys_s"] for s in [d["cpu"]["local"]] + d["cpu"]["remote"])
print(d["totals"]["transactions_per_s"], cpu * 1e6 / d["totals"]["transactions"])
PY
}
median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
one_run() {  # one_run NAME [SWITCH]: appends "rate cpu" to $work/NAME
  "$volley" run "$work/pp.xml" --local --set "t=$conns" -q -i "$interval" "${@:2}" \
    --json "$work/$1.json" >/dev/null
  figures "$work/$1.json" >>"$work/$1"
}

: >"$work/on"; : >"$work/off"
echo "switch=$switch connections=$conns rounds=$rounds seconds=$seconds interval=$interval"
echo "round  with: txn/s  us/txn   without: txn/s  us/txn   rate with/without  CPU with/without"
for ((r = 1; r <= rounds; r++)); do
  one_run on
  one_run off "$switch"
  paste -d' ' <(tail -1 "$work/on") <(tail -1 "$work/off") |
    awk -v r="$r" '{printf "%5d  %12.0f %7.2f   %15.0f %7.2f   %17.3f %16.3f\n", r, $1, $2, $3, $4, $1/$3, $2/$4}'
done
on_rate=$(cut -d' ' -f1 "$work/on" | median); off_rate=$(cut -d' ' -f1 "$work/off" | median)
on_cpu=$(cut -d' ' -f2 "$work/on" | median); off_cpu=$(cut -d' ' -f2 "$work/off" | median)
awk -v a="$on_rate" -v b="$off_rate" -v c="$on_cpu" -v d="$off_cpu" 'BEGIN {
  printf "medians: rate with/without = %.3f, CPU per transaction with/without = %.3f (the measurement costs %.1f%%)\n", a/b, c/d, 100*(c/d-1) }'
