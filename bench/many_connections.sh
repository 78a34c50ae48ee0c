#!/usr/bin/env bash
# 50,000 concurrent ping-pong connections on one machine: profiles/many-connections.xml
# (`<group nprocs="$n">`, one connection per strand, 64-byte request and answer for $d) against a
# local slave (--local). One process may hold 20,000 descriptors here, so each side spreads its
# strands over processes (docs/architecture.md, "Processes"). Prints, from the run's JSON: the
# connections established on each side, the processes each side used, the bytes each side
# counted (equal, or the run failed), transactions per second, and the memory each side held per
# connection (resident growth from before the run was built to the end of the timed step, summed
# over the side's processes, divided by its connections; the issue's bound is 4 KiB).
#
# usage: bench/many_connections.sh [-n CONNECTIONS (50000)] [-d DURATION (10s)] [-p PROCESSES (0:
#                                  decide)] [-b BUILD_DIR]
# (-d rewrites the profile's 10 s timed step in a copy.)
# Exit status: volley's (0 when the run was clean and both sides counted the same bytes).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
connections=50000
duration=10s
processes=0
build="$root/build"
while getopts "n:d:p:b:" opt; do
  case $opt in
    n) connections=$OPTARG ;;
    d) duration=$OPTARG ;;
    p) processes=$OPTARG ;;
    b) build=$OPTARG ;;
    *) echo "usage: $0 [-n CONNECTIONS] [-d DURATION] [-p PROCESSES] [-b BUILD_DIR]" >&2; exit 2 ;;
  esac
done
volley="$build/src/volley"
[[ -x $volley ]] || { echo "build volley first (scripts/build.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "limits: open files $(ulimit -Hn) per process (hard), ports $(tr '\t' '-' </proc/sys/net/ipv4/ip_local_port_range)," \
     "somaxconn $(cat /proc/sys/net/core/somaxconn)"
status=0
started=$(date +%s.%N)
sed "s/duration=\"10s\"/duration=\"$duration\"/" "$root/profiles/many-connections.xml" >"$work/profile.xml"
nice -n 10 "$volley" run "$work/profile.xml" --local --set "t=$connections" --processes "$processes" -q --json "$work/r.json" >"$work/out.txt" 2>&1 || status=$?
ended=$(date +%s.%N)
python3 - "$work/r.json" "$status" "$started" "$ended" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
status, started, ended = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
master = doc["totals"]
slave = doc["slaves"][0].get("totals") or {}
cmp = doc["comparison"][0] if doc.get("comparison") else {}
def side(name, t):
    procs = t.get("processes", [])
    print(f"{name:7} connections {t.get('connections_established', 0):>6} of "
          f"{t.get('connections_requested', 0):>6}  processes {len(procs)}  "
          f"memory {t.get('memory_per_connection_bytes', 0):6.0f} B/connection  "
          f"errors {t.get('errors', {}).get('total', 0)}")
    for p in procs:
        print(f"          {p['name']:24} pid {p['pid']:>7}  strands {p['strands']:>6}  "
              f"rss +{p['rss_growth_bytes'] / 1048576:6.1f} MiB  cpu {p['cpu_user_s']:.2f}+{p['cpu_sys_s']:.2f} s")
side("master", master)
side("slave", slave)
print(f"bytes   master {cmp.get('master_bytes')}  slave {cmp.get('slave_bytes')}  "
      f"({'equal' if cmp.get('master_bytes') == cmp.get('slave_bytes') else 'DIFFERENT'})")
print(f"rate    {master.get('transactions_per_s', 0):.0f} txn/s over {master.get('seconds', 0):.2f} s "
      f"(timed step); whole run {ended - started:.1f} s wall")
print(f"status  {doc['status']}{': ' + doc['failure'] if doc.get('failure') else ''} (exit {status})")
PY
exit "$status"
