#!/usr/bin/env bash
# Does the master's memory grow with run length? Runs a long 4-connection ping-pong against a
# local slave with a 100 ms interval (10 interval samples a second, the series kept for the JSON
# and CSV) and samples the master's resident memory (VmRSS in /proc/PID/status) every few
# seconds: the first sample once the timed step is running (set-up allocations done), the last
# just before the step ends. Prints both and the growth in MB. The goal: less than
# 10 MB over 10 minutes.
#
# usage: bench/memory_growth.sh [-d SECONDS (600)] [-i INTERVAL (100ms)] [-t STRANDS (4)]
#                               [-b BUILD_DIR] [-l] (-l: also stream a --latency-log to a file)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=600
interval=100ms
strands=4
build="$root/build"
latency_log=
while getopts "d:i:t:b:l" opt; do
  case $opt in
    d) seconds=$OPTARG ;;
    i) interval=$OPTARG ;;
    t) strands=$OPTARG ;;
    b) build=$OPTARG ;;
    l) latency_log=1 ;;
    *) echo "usage: $0 [-d SECONDS] [-i INTERVAL] [-t STRANDS] [-b BUILD_DIR] [-l]" >&2; exit 2 ;;
  esac
done
volley="$build/src/volley"
[[ -x $volley ]] || { echo "build volley first (scripts/build.sh)" >&2; exit 2; }
(( seconds >= 30 )) || { echo "-d: at least 30 seconds" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/pp.xml" <<XML
<?xml version="1.0"?>
<profile name="memory growth">
  <group nthreads="$strands">
    <transaction iterations="1"><flowop type="connect" options="remotehost=127.0.0.1 protocol=tcp"/></transaction>
    <transaction duration="${seconds}s">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
XML
extra=()
[[ -n $latency_log ]] && extra=(--latency-log "$work/latency.csv")
"$volley" run "$work/pp.xml" --local -i "$interval" -q --json "$work/r.json" "${extra[@]}" \
  >"$work/out.txt" 2>"$work/err.txt" &
pid=$!
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo; }
sleep 10  # connections made, the timed step running, the first intervals taken
first=$(rss_kb)
last=$first
started=$SECONDS
# Sample until 5 s before the timed step ends (10 s already gone).
while (( SECONDS - started < seconds - 15 )); do
  sleep 5
  now=$(rss_kb)
  [[ -n $now ]] || break
  last=$now
done
status=0
wait "$pid" || status=$?
if (( status != 0 )); then
  echo "volley exited $status:" >&2
  cat "$work/err.txt" >&2
  exit 1
fi
intervals=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["intervals"]))' "$work/r.json")
awk -v a="$first" -v b="$last" -v s="$seconds" -v i="$interval" -v n="$intervals" 'BEGIN {
  printf "run %d s at -i %s (%d intervals): master VmRSS %.1f MB at start, %.1f MB at end, growth %.2f MB\n",
         s, i, n, a / 1024, b / 1024, (b - a) / 1024 }'
