#!/usr/bin/env bash
# Repro loop for a slave killed mid-run: serve on a port, run a 20 s ping-pong against it,
# SIGKILL the slave after 1.5 s, and time how long the master takes to exit. A killed slave's
# kernel closes its sockets at once, so the master should fail within milliseconds (a dead link
# must be noticed within 3 s); a run that takes longer is reported LATE.
# Usage: tests/killed_slave_repro.sh [BUILD_DIR] [RUNS] [KILL_AFTER_S] [SIGNAL]
#   SIGNAL: KILL (default) or STOP (a frozen slave: the link timeout, 2.5 s, must notice it).
# Set VOLLEY_TRACE_CONTROL=1 to get the master's control events on its stderr (kept per run in
# the work directory). Exit status: 0 when no run was late or wrong, 1 otherwise.
set -u
# shellcheck source=../bench/lib.sh
source "$(dirname "$0")/../bench/lib.sh"  # start_slave, stop_pid
build=${1:-build}
runs=${2:-50}
kill_after=${3:-1.5}
sig=${4:-KILL}
volley=$(realpath "$build/src/volley")
work=$(mktemp -d /tmp/killed_slave_repro.XXXXXX)
cat >"$work/pp.xml" <<'XML'
<?xml version="1.0"?>
<profile name="pp">
  <group nthreads="4">
    <transaction iterations="1"><flowop type="connect" options="remotehost=127.0.0.1 protocol=tcp"/></transaction>
    <transaction duration="20s">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
XML
late=0
wrong=0
for i in $(seq 1 "$runs"); do
  start_slave "$volley" -q 2>/dev/null || { echo "volley serve did not start" >&2; exit 2; }
  serve=$slave_pid
  "$volley" run "$work/pp.xml" -P "$slave_port" -q >"$work/out.$i" 2>"$work/err.$i" &
  master=$!
  sleep "$kill_after"
  kill -s "$sig" "$serve"
  t0=$(date +%s.%N)
  wait "$master"
  rc=$?
  t1=$(date +%s.%N)
  stop_pid "$serve"
  took=$(echo "$t1 - $t0" | bc)
  reason=$(grep -m1 -E 'lost slave|silent|did not report|Broken pipe|error' "$work/err.$i" | cut -c1-150)
  verdict=ok
  if (( $(echo "$took > 3.0" | bc) )); then verdict=LATE; late=$((late + 1)); fi
  if [ "$rc" -ne 1 ] || ! grep -q '127.0.0.1' <<<"$reason"; then verdict="$verdict,WRONG"; wrong=$((wrong + 1)); fi
  printf '%3d rc=%d %6.3fs %-8s %s\n' "$i" "$rc" "$took" "$verdict" "$reason"
done
echo "runs=$runs late=$late wrong=$wrong (logs in $work)"
[ "$late" -eq 0 ] && [ "$wrong" -eq 0 ]
