#!/usr/bin/env bash
# Repro for data connections lost to the slave's header deadline in a connect storm (the
# 50,000-connection case). A master process that started every connect of a large batch before
# finishing any would send the first connections' 20-byte headers only after the whole batch had
# started: seconds on a loaded host with 16,667 connects per process, longer than the slave's
# 5 s --header-timeout, which then closes them ("no header within"). Each worker's connect gate
# (src/engine/connect_gate.hpp) bounds the connects in flight, so a header leaves within the time
# of 128 connects. Here the same shape at a small scale: CONNS connections from one master
# process (one worker) against a slave whose --header-timeout is short (default 20 ms, about
# what 2,000 connects take to start on an idle core): without the gate every connection is lost.
# Usage: tests/connect_storm_repro.sh [BUILD_DIR] [RUNS] [CONNS] [HEADER_TIMEOUT]
# Prints per run the connections the slave accepted, the master's errors, and whether the slave's
# log (throttled: one line a second) names the late header.
# Exit status: 0 when no run lost a connection, 1 otherwise.
set -u
# shellcheck source=../bench/lib.sh
source "$(dirname "$0")/../bench/lib.sh"  # start_slave, stop_pid
build=${1:-build}
runs=${2:-3}
conns=${3:-2000}
header_timeout=${4:-20ms}
volley=$(realpath "$build/src/volley")
work=$(mktemp -d /tmp/connect_storm_repro.XXXXXX)
cat >"$work/storm.xml" <<'XML'
<?xml version="1.0"?>
<profile name="storm">
  <group nthreads="$t">
    <transaction iterations="1"><flowop type="connect" options="remotehost=127.0.0.1 protocol=tcp"/></transaction>
    <transaction iterations="4">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
XML
bad=0
for i in $(seq 1 "$runs"); do
  start_slave "$volley" --processes 1 --header-timeout "$header_timeout" >"$work/serve-$i.txt" 2>&1 ||
    { echo "volley serve did not start" >&2; exit 2; }
  status=0
  timeout 300 "$volley" run "$work/storm.xml" -P "$slave_port" --set "t=$conns" --processes 1 \
    --workers 1 -q --json "$work/run-$i.json" >"$work/run-$i.txt" 2>&1 || status=$?
  stop_pid "$slave_pid"
  # What each side counted (the slave's log names the cause: "no header within").
  late=$(grep -c "closed: no header within" "$work/serve-$i.txt")
  python3 - "$work/run-$i.json" "$i" "$status" "$late" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    doc = {}
master, slave = doc.get("totals", {}), (doc.get("slaves") or [{}])[0].get("totals") or {}
print(f"run {sys.argv[2]}: slave accepted {slave.get('connections_established', '?')} of "
      f"{master.get('connections_requested', '?')} connections, master errors "
      f"{master.get('errors', {}).get('total', '?')}, slave log lines 'no header within' "
      f"{sys.argv[4]}; master exit {sys.argv[3]}")
PY
  if ((late > 0 || status != 0)); then bad=1; fi
done
echo "(logs in $work; load average $(cut -d' ' -f1-3 /proc/loadavg))"
exit "$bad"
