#!/usr/bin/env bash
# What latency recording costs: the same ping-pong with and without it (--no-latency skips the
# clock reads and histogram updates on both sides), alternating A B A B, ratio of medians.
#
# usage: bench/latency_recording_cost.sh [-c CONNS] [-r ROUNDS] [-d SECONDS] [-b BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
conns=256
rounds=5
seconds=4
build="$root/build"
while getopts "c:r:d:b:" opt; do
  case $opt in
    c) conns=$OPTARG ;;
    r) rounds=$OPTARG ;;
    d) seconds=$OPTARG ;;
    b) build=$OPTARG ;;
    *) echo "usage: $0 [-c CONNS] [-r ROUNDS] [-d SECONDS] [-b BUILD_DIR]" >&2; exit 2 ;;
  esac
done
volley="$build/src/volley"
[[ -x $volley ]] || { echo "build volley first (scripts/build.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed "s/duration=\"10s\"/duration=\"${seconds}s\"/" "$root/profiles/pingpong.xml" >"$work/pp.xml"

rate() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["transactions_per_s"])' "$1"
}
# Process CPU of both ends (master and slave) per transaction, in microseconds: steadier than the
# rate on a noisy machine, and what recording actually spends.
cpu_per_txn() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cpu = sum(s["process"]["user_s"] + s["process"]["sys_s"] for s in [d["cpu"]["local"]] + d["cpu"]["remote"])
print(cpu * 1e6 / d["totals"]["transactions"])
PY
}
median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

: >"$work/on"; : >"$work/off"; : >"$work/on.cpu"; : >"$work/off.cpu"
for ((r = 1; r <= rounds; r++)); do
  "$volley" run "$work/pp.xml" --local --set "t=$conns" -q --json "$work/on.json" >/dev/null
  rate "$work/on.json" >>"$work/on"
  cpu_per_txn "$work/on.json" >>"$work/on.cpu"
  "$volley" run "$work/pp.xml" --local --set "t=$conns" -q --no-latency --json "$work/off.json" >/dev/null
  rate "$work/off.json" >>"$work/off"
  cpu_per_txn "$work/off.json" >>"$work/off.cpu"
done
on=$(median <"$work/on"); off=$(median <"$work/off")
echo "connections=$conns rounds=$rounds seconds=$seconds"
echo "with latency:    $(tr '\n' ' ' <"$work/on")-> median $on txn/s"
echo "without latency: $(tr '\n' ' ' <"$work/off")-> median $off txn/s"
awk -v a="$on" -v b="$off" 'BEGIN{printf "rate ratio with/without = %.3f\n", a/b}'
con=$(median <"$work/on.cpu"); coff=$(median <"$work/off.cpu")
echo "CPU us/txn (both ends) with:    $(tr '\n' ' ' <"$work/on.cpu")-> median $con"
echo "CPU us/txn (both ends) without: $(tr '\n' ' ' <"$work/off.cpu")-> median $coff"
awk -v a="$con" -v b="$coff" 'BEGIN{printf "CPU per transaction with/without = %.3f (recording costs %.1f%%)\n", a/b, 100*(a/b-1)}'
