#!/usr/bin/env bash
# volley's 64-byte TCP ping-pong against the physical-limit reference (../shared/bench/ref/pp_epoll)
# on loopback, alternating A B A B, and the ratio of medians (volley / pp_epoll) per connection
# count. Both sides run client and server on this machine; volley's master and slave are separate
# processes (as in real use), pp_epoll is one process.
#
# usage: bench/pingpong_vs_pp_epoll.sh [-c "1 16 256 1024"] [-r ROUNDS] [-d SECONDS] [-b BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
conns="1 16 256 1024"
rounds=3
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
ref_src="$root/../shared/bench/ref"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Build the reference out of tree: ../shared is read-only for us.
cc -O2 -g -Wall -Wextra -std=gnu11 -o "$work/pp_epoll" "$ref_src/pp_epoll.c" -lpthread
volley="$build/src/volley"
[[ -x $volley ]] || { echo "build volley first (scripts/build.sh)" >&2; exit 2; }

cat >"$work/pp.xml" <<XML
<?xml version="1.0"?>
<profile name="pingpong bench">
  <group nthreads="\$t">
    <transaction iterations="1"><flowop type="connect" options="remotehost=\$h protocol=tcp"/></transaction>
    <transaction duration="${seconds}s">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
XML

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

printf "%-6s %12s %12s %7s %14s %14s\n" conns pp_epoll volley ratio pp_us_cpu/rt volley_us_cpu/rt
for c in $conns; do
  : >"$work/ref.$c"; : >"$work/vol.$c"; : >"$work/refcpu.$c"; : >"$work/volcpu.$c"
  for ((r = 1; r <= rounds; r++)); do
    out=$("$work/pp_epoll" -c "$c" -d "$seconds" -w 1)
    sed -n 's/.*rt_per_sec=\([0-9.]*\).*/\1/p' <<<"$out" >>"$work/ref.$c"
    sed -n 's/.*us_cpu_per_rt=\([0-9.]*\).*/\1/p' <<<"$out" >>"$work/refcpu.$c"
    "$volley" run "$work/pp.xml" --local --set "t=$c" -q --json "$work/v.json" >/dev/null
    python3 - "$work/v.json" >>"$work/vol.$c" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(d["totals"]["transactions_per_s"])
PY
    python3 - "$work/v.json" >>"$work/volcpu.$c" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["totals"]["transactions"]
cpu = 0.0
for side in [d["cpu"]["local"]] + d["cpu"]["remote"]:
    p = side["process"]
    cpu += p["user_s"] + p["sys_s"]
print(cpu * 1e6 / t if t else 0)
PY
  done
  ref=$(median <"$work/ref.$c"); vol=$(median <"$work/vol.$c")
  refcpu=$(median <"$work/refcpu.$c"); volcpu=$(median <"$work/volcpu.$c")
  printf "%-6s %12.0f %12.0f %7.2f %14.2f %14.2f\n" "$c" "$ref" "$vol" \
    "$(awk -v a="$vol" -v b="$ref" 'BEGIN{print a/b}')" "$refcpu" "$volcpu"
done
echo "(medians of $rounds alternating rounds of ${seconds}s each; us_cpu/rt = process CPU per round trip, both ends)"
