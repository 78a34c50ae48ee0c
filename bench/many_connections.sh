#!/usr/bin/env bash
# 50,000 concurrent ping-pong connections on one machine: profiles/many-connections.xml
# (`<group nprocs="$n">`, one connection per strand, 64-byte request and answer for -d seconds)
# against a local slave (--local). One process may hold 20,000 descriptors here, so each side
# spreads its strands over processes (docs/architecture.md, "Processes"). Prints, from the run's
# JSON: the connections established on each side, the processes each side used, the bytes each
# side counted (equal, or the run failed), transactions per second, the memory each side held per
# connection (resident growth from before the run was built to the end of the timed step, summed
# over the side's processes, divided by its connections; the goal is under 4 KiB), and the
# kernel's count of handshakes dropped because an accept queue was full (ListenOverflows, over
# the whole machine: other programs' listeners count too).
#
# usage: bench/many_connections.sh [-c CONNECTIONS (50000)] [-d SECONDS (10)] [-r RUNS (1)]
#                                  [-p PROCESSES (0: decide)] [-k KEEP_DIR] [-b BUILD_DIR]
# (-d rewrites the profile's 10 s timed step in a copy; -k keeps each run's output and JSON
# document in KEEP_DIR as out-N.txt and r-N.json.)
# Exit status: 0 when every run was clean and both sides counted the same bytes, else the last
# failing run's.
set -euo pipefail
conns=50000 rounds=1 seconds=10 processes=0 keep=
usage='[-c CONNECTIONS] [-d SECONDS] [-r RUNS] [-p PROCESSES] [-k KEEP_DIR] [-b BUILD_DIR]'
args=()
while (($#)); do
  case $1 in
    -p) processes=$2; shift 2 ;;
    -k) keep=$2; mkdir -p "$keep"; shift 2 ;;
    -n) args+=(-c "$2"); shift 2 ;;  # the older spelling of -c
    *) args+=("$1"); shift ;;
  esac
done
source "$(dirname "$0")/lib.sh"
bench_init "${args[@]+"${args[@]}"}"

# A counter of /proc/net/netstat (TcpExt), e.g. ListenOverflows.
tcp_ext() { awk -v k="$1" '/^TcpExt:/ { if (!n) { split($0, h); n = 1 } else { for (i = 2; i <= NF; i++) if (h[i] == k) print $i } }' /proc/net/netstat; }

echo "limits: open files $(ulimit -Hn) per process (hard), ports $(tr '\t' '-' </proc/sys/net/ipv4/ip_local_port_range)," \
     "somaxconn $(cat /proc/sys/net/core/somaxconn), tcp_max_syn_backlog $(cat /proc/sys/net/ipv4/tcp_max_syn_backlog)"
sed "s/duration=\"10s\"/duration=\"${seconds}s\"/" "$bench_root/profiles/many-connections.xml" >"$work/profile.xml"
final=0
for ((r = 1; r <= rounds; r++)); do
  status=0
  rm -f "$work/r.json"  # a run that writes none must not report the last run's
  overflows=$(tcp_ext ListenOverflows)
  started=$(date +%s.%N)
  nice -n 10 "$volley" run "$work/profile.xml" --local --set "t=$conns" --processes "$processes" -q \
    --json "$work/r.json" >"$work/out.txt" 2>&1 || status=$?
  ended=$(date +%s.%N)
  overflows=$(($(tcp_ext ListenOverflows) - overflows))
  echo "run $r of $rounds"
  if [[ -n $keep ]]; then
    cp "$work/out.txt" "$keep/out-$r.txt"
    [[ -s $work/r.json ]] && cp "$work/r.json" "$keep/r-$r.json"
  fi
  if [[ ! -s $work/r.json ]]; then
    echo "status  no JSON document (exit $status):"; tail -5 "$work/out.txt"
    final=$status
    continue
  fi
  python3 - "$work/r.json" "$status" "$started" "$ended" "$overflows" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
status, started, ended, overflows = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
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
print(f"kernel  {overflows} handshakes dropped for a full accept queue (ListenOverflows, whole machine)")
print(f"status  {doc['status']}{': ' + doc['failure'] if doc.get('failure') else ''} (exit {status})")
PY
  if ((status != 0)); then
    final=$status
    echo "what the run said (errors):"
    grep -iE "error|refused|reset|timed out|expired|closed" "$work/out.txt" | head -8 | sed 's/^/  /'
  fi
done
echo "(load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs)"
exit "$final"
