#!/usr/bin/env bash
# Many concurrent TCP connections held open at a low rate on one machine:
# profiles/many-connections-paced.xml (`<group nprocs="$t">`, one connection per strand, from
# 127.0.0.x source addresses in turn, a 64-byte round trip per connection every 1/RATE seconds
# for -d seconds) against a local slave (--local), master and slave on loopback. One process may
# hold 20,000 descriptors here, so each side spreads its strands over processes
# (docs/architecture.md, "Processes").
#
# Before the run it checks what the kernel and the machine must allow (descriptors, ports,
# fs.file-max, tcp_mem, connection tracking, free memory) and says what to set when something
# falls short; it changes no setting itself. It prints, per run:
#   - the connections established on each side and the processes each side used;
#   - the ramp: the connect step's connections per second (its window, from the run's JSON);
#   - user memory per connection on each side: the run's own figure (resident growth from before
#     the run was built to the end of the timed step, over the side's processes), and the peak
#     of anonymous resident memory (RssAnon: heap, stacks, what malloc holds) sampled every
#     0.5 s and summed over all of the side's processes, the slave's relay included;
#   - the kernel's socket memory from /proc/net/sockstat during the timed step (TCP inuse, and
#     mem pages as bytes: median and peak), and the connection-tracking count if it moved;
#   - every connection's bytes: the end-of-step drain's per-connection check (connections on
#     which each side read exactly what the other wrote, both ways; the run fails on any that
#     falls short) next to the totals of both sides;
#   - errors, and what was left behind (processes, sockets).
# It stops what it started by PID (the master; its children and the local slave's die with it).
#
# usage: bench/many_connections.sh [-c CONNECTIONS (50000)] [-d SECONDS (10)] [-r RUNS (1)]
#          [-R RATE (0.2: round trips per connection per second)]
#          [-s SOURCES (0: one 127.0.0.x per 10,000 connections)] [-p PROCESSES (0: decide)]
#          [-k KEEP_DIR] [-b BUILD_DIR]
# (-d rewrites the profile's 60 s timed step in a copy; -k keeps each run's output, JSON document
# and samples in KEEP_DIR as out-N.txt, r-N.json and samples-N.json.)
# Exit status: 0 when every run was clean (status ok, no error, both sides' bytes equal and every
# connection read exactly both ways, nothing left behind); 1 otherwise; 2 when the machine cannot
# hold the run (nothing was started).
set -euo pipefail
conns=50000 rounds=1 seconds=10 processes=0 keep= rate=0.2 sources=0
usage='[-c CONNECTIONS] [-d SECONDS] [-r RUNS] [-R RATE] [-s SOURCES] [-p PROCESSES] [-k KEEP_DIR] [-b BUILD_DIR]'
args=()
while (($#)); do
  case $1 in
    -p) processes=$2; shift 2 ;;
    -k) keep=$2; mkdir -p "$keep"; shift 2 ;;
    -R) rate=$2; shift 2 ;;
    -s) sources=$2; shift 2 ;;
    -n) args+=(-c "$2"); shift 2 ;;  # the older spelling of -c
    *) args+=("$1"); shift ;;
  esac
done
source "$(dirname "$0")/lib.sh"
bench_init "${args[@]+"${args[@]}"}"

master_pid= sampler_pid=
cleanup() {
  # What this script started, by PID: the master (its child processes and the local slave ask
  # the kernel to kill them when it dies) and the sampler.
  [[ -n $master_pid ]] && stop_pid "$master_pid"
  [[ -n $sampler_pid ]] && stop_pid "$sampler_pid"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A counter of /proc/net/netstat (TcpExt), e.g. ListenOverflows.
tcp_ext() { awk -v k="$1" '/^TcpExt:/ { if (!n) { split($0, h); n = 1 } else { for (i = 2; i <= NF; i++) if (h[i] == k) print $i } }' /proc/net/netstat; }
sysctl_value() { tr '\t' ' ' <"/proc/sys/$1" 2>/dev/null || echo "?"; }

((sources == 0)) && sources=$(((conns + 9999) / 10000))
((sources >= 1 && sources <= 4096)) || { echo "-s: 1 to 4096 source addresses" >&2; exit 2; }
src=127.0.0.1  # and then the next SOURCES-1 addresses: the last is 127.0.0.0 + SOURCES
((sources > 1)) && src="127.0.0.1-127.0.$((sources / 256)).$((sources % 256))"

# --- What the run needs from the kernel and the machine (checked, never changed) ---
read -r port_low port_high < <(sysctl_value net/ipv4/ip_local_port_range)
read -r _ _ tcp_mem_high < <(sysctl_value net/ipv4/tcp_mem)
open_files=$(ulimit -Hn)
file_max=$(sysctl_value fs/file-max)
page=$(getconf PAGESIZE)
available_kib=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
budget=$((open_files - 256 - open_files / 10))
per_side=$(((conns + budget - 1) / budget))
conntrack_max=$(sysctl_value net/netfilter/nf_conntrack_max)
echo "limits: open files $open_files per process (hard): $per_side processes a side at least;" \
  "ports $port_low-$port_high ($((port_high - port_low + 1)) per source address towards each destination port);" \
  "somaxconn $(sysctl_value net/core/somaxconn), tcp_max_syn_backlog $(sysctl_value net/ipv4/tcp_max_syn_backlog);" \
  "fs.file-max $file_max; tcp_mem $(sysctl_value net/ipv4/tcp_mem) pages;" \
  "tcp_max_tw_buckets $(sysctl_value net/ipv4/tcp_max_tw_buckets);" \
  "nf_conntrack_max $conntrack_max"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
  "$((available_kib / 1048576)) GiB available"
short=()
((per_side <= 64)) ||
  short+=("$conns connections need $per_side processes a side at $open_files open files each (64 at most): raise the hard open-file limit (ulimit -Hn, limits.conf)")
# Every connection is two sockets here, each a descriptor somewhere on the machine.
[[ $file_max == "?" ]] || ((file_max > 2 * conns + 10000)) ||
  short+=("fs.file-max $file_max is below two descriptors per connection: sysctl -w fs.file-max=$((2 * conns + 100000))")
# Under a burst each socket may hold a page of buffers; past tcp_mem's third figure the kernel
# drops what it cannot charge.
[[ -z $tcp_mem_high ]] || ((tcp_mem_high > 2 * conns)) ||
  short+=("net.ipv4.tcp_mem's pressure maximum ($tcp_mem_high pages) is below a page per socket: sysctl -w net.ipv4.tcp_mem=\"... ... $((4 * conns))\"")
# User memory (4 KiB a connection a side at most) and the kernel's (a few KiB a socket).
need_kib=$((conns * 24))
((available_kib > need_kib)) ||
  short+=("$((available_kib / 1024)) MiB available, about $((need_kib / 1024)) MiB needed (24 KiB a connection, both sides, user and kernel)")
if ((${#short[@]})); then
  printf 'cannot hold %s connections here:\n' "$conns" >&2
  printf '  %s\n' "${short[@]}" >&2
  exit 2
fi
if [[ $conntrack_max != "?" ]] && ((conntrack_max < conns)); then
  echo "note: nf_conntrack_max $conntrack_max < $conns: should the kernel track these connections" \
    "(the count below moves), raise it (sysctl -w net.netfilter.nf_conntrack_max=$((2 * conns)))"
fi
echo "run: $conns connections, a 64-byte round trip each every $(awk -v r="$rate" 'BEGIN {printf "%g", 1 / r}') s" \
  "(rate $rate/s per connection), ${seconds} s timed, from $src ($sources source addresses)"

sed "s/duration=\"60s\"/duration=\"${seconds}s\"/" "$bench_root/profiles/many-connections-paced.xml" >"$work/profile.xml"
final=0
for ((r = 1; r <= rounds; r++)); do
  status=0
  rm -f "$work/r.json" "$work/samples.json"  # a run that writes none must not report the last run's
  overflows=$(tcp_ext ListenOverflows) drops=$(tcp_ext ListenDrops)
  before=$(awk '/^TCP:/ {print $3}' /proc/net/sockstat)
  started=$(date +%s.%N)
  # --link-timeout: some 26 busy processes share the cores with whatever else the machine runs,
  # and a slave off the CPU for a few seconds is not a lost one (the default, 2.5 s, failed one
  # run here at a load average of 25).
  nice -n 10 "$volley" run "$work/profile.xml" --local --set "t=$conns" --set "r=$rate" \
    --set "s=$src" --processes "$processes" --link-timeout 10s -q --json "$work/r.json" \
    >"$work/out.txt" 2>&1 &
  master_pid=$!
  nice -n 5 python3 "$bench_root/bench/sample_run.py" "$master_pid" "$work/samples.json" 0.5 &
  sampler_pid=$!
  wait "$master_pid" || status=$?
  master_pid=
  wait "$sampler_pid" || true
  sampler_pid=
  ended=$(date +%s.%N)
  overflows=$(($(tcp_ext ListenOverflows) - overflows)) drops=$(($(tcp_ext ListenDrops) - drops))
  # Left behind: any process the sampler saw under the master still there (stopped by PID), and
  # the TCP sockets the run's processes held (closed with them; TIME_WAIT is the kernel's).
  left=0
  if [[ -s $work/samples.json ]]; then
    sleep 2  # a child whose parent just exited is on its way out
    # Only a process the sampler saw, with the same start time (never a later one given its PID).
    for pid in $(python3 "$bench_root/bench/sample_run.py" --still-running "$work/samples.json"); do
      left=$((left + 1))
      kill -KILL "$pid" 2>/dev/null || true
    done
  fi
  for _ in $(seq 1 100); do  # sockets of exited processes go within moments
    ((($(awk '/^TCP:/ {print $3}' /proc/net/sockstat)) <= before + 100)) && break
    sleep 0.1
  done
  after=$(awk '/^TCP:/ {print $3, $7}' /proc/net/sockstat)
  echo "run $r of $rounds"
  if [[ -n $keep ]]; then
    cp "$work/out.txt" "$keep/out-$r.txt"
    [[ -s $work/r.json ]] && cp "$work/r.json" "$keep/r-$r.json"
    [[ -s $work/samples.json ]] && cp "$work/samples.json" "$keep/samples-$r.json"
  fi
  if [[ ! -s $work/r.json ]]; then
    echo "status  no JSON document (exit $status):"; tail -5 "$work/out.txt"
    final=1
    continue
  fi
  verdict=0
  python3 - "$work/r.json" "$work/samples.json" "$status" "$started" "$ended" "$overflows" \
    "$page" "$before" "$after" "$left" "$drops" <<'PY' || verdict=$?
import json, statistics, sys
doc = json.load(open(sys.argv[1]))
try:
    sampled = json.load(open(sys.argv[2]))
except (OSError, ValueError):
    sampled = {"samples": [], "processes": {}}
status, started, ended, overflows = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
page, before = int(sys.argv[7]), int(sys.argv[8])
inuse_after, tw_after = (int(x) for x in sys.argv[9].split())
left, drops = int(sys.argv[10]), int(sys.argv[11])
master = doc["totals"]
slave_doc = doc["slaves"][0]
slave = slave_doc.get("totals") or {}
cmp = doc["comparison"][0] if doc.get("comparison") else {}
timed = doc["timed_steps"]
mib = 1048576
problems = []

def side(name, t, roles):
    procs = t.get("processes", [])
    conns = t.get("connections_established", 0) or 0
    growth = [p["rss_growth_bytes"] for p in procs]
    strands = [p["strands"] for p in procs]
    print(f"{name:7} connections {conns:>7} of {t.get('connections_requested', 0):>7}  "
          f"processes {len(procs)}  errors {t.get('errors', {}).get('total', 0)}")
    if procs:
        print(f"          strands {min(strands)}-{max(strands)} a process, resident growth "
              f"{min(growth) / mib:.1f}-{max(growth) / mib:.1f} MiB a process")
    print(f"          memory {t.get('memory_per_connection_bytes', 0):6.0f} B/connection "
          "(the run's figure: resident growth to the end of the timed step)")
    seen = [p for p in sampled["processes"].values() if p["role"] in roles]
    if seen and conns:
        peak = sum(p["rss_anon_max"] for p in seen)
        print(f"          peak   {peak / conns:6.0f} B/connection (RssAnon, the most each of its "
              f"{len(seen)} processes held, summed: {peak / mib:.0f} MiB)")
    if t.get("errors", {}).get("total", 0):
        problems.append(f"{name}: errors")
    return conns

established = side("master", master, ("master", "master child"))
side("slave", slave, ("slave relay", "slave child"))

# The ramp: the first step, the connects.
windows = doc.get("windows", [])
connect = None
for g in doc["groups"]:
    for t in g["transactions"]:
        if t["step"] == 0:
            for f in t["flowops"]:
                if f["type"] == "connect":
                    connect = f
if windows and connect:
    secs = windows[0]["elapsed_ns"] / 1e9
    lat = connect["latency_ns"]
    print(f"ramp    {connect['ops']} connections in {secs:.2f} s: {connect['ops'] / secs:,.0f} "
          f"connections/s (connect latency p50 {lat['p50'] / 1e9:.2f} s, max {lat['max'] / 1e9:.2f} s)")

# The kernel's sockets during the timed step(s).
spans = [(windows[s]["start_unix_ns"] / 1e9, (windows[s]["start_unix_ns"] + windows[s]["elapsed_ns"]) / 1e9)
         for s in timed if s < len(windows)]
inside = [s for s in sampled["samples"] if any(a <= s["t"] <= b for a, b in spans)]
if inside:
    inuse = [s["tcp"].get("inuse", 0) for s in inside]
    mem = [s["tcp"].get("mem", 0) * page for s in inside]
    orphan = max(s["tcp"].get("orphan", 0) for s in inside)
    median = statistics.median(mem)
    print(f"kernel  TCP sockets in use {min(inuse)}-{max(inuse)} (before the run: {before}); socket "
          f"memory (sockstat mem, {page} B pages) median {median / mib:.0f} MiB, peak "
          f"{max(mem) / mib:.0f} MiB = {median / max(established, 1):.0f} B and "
          f"{max(mem) / max(established, 1):.0f} B a connection (both ends); orphans at most {orphan}; "
          f"{len(inside)} samples")
    tracked = [s["conntrack"] for s in inside if s["conntrack"] is not None]
    if tracked and max(tracked) > 0:
        print(f"        connection tracking: up to {max(tracked)} entries")
print(f"        {overflows} handshakes dropped for a full accept queue (ListenOverflows), {drops} SYNs "
      "dropped at a listener (ListenDrops; both over the whole machine)")

# Every connection's bytes, both ways: the drain's count of connections read exactly.
def exact(windows):
    return sum(windows[s].get("connections_read_exactly", 0) for s in timed if s < len(windows))
by_slave, by_master = exact(slave_doc.get("windows", [])), exact(windows)
same = cmp.get("master_bytes") == cmp.get("slave_bytes")
every = by_slave == established and by_master == established
print(f"bytes   master {cmp.get('master_bytes')}  slave {cmp.get('slave_bytes')} "
      f"({'equal' if same else 'DIFFERENT'}); per connection, timed step: the slave read exactly "
      f"what the master wrote on {by_slave}, the master what the slave wrote on {by_master}, "
      f"of {established} ({'all agree' if every else 'NOT ALL'})")
if not same or not every:
    problems.append("bytes")
print(f"rate    {master.get('transactions_per_s', 0):,.0f} round trips/s over {master.get('seconds', 0):.2f} s "
      f"(timed step); whole run {ended - started:.1f} s wall")
print(f"after   {left} processes left behind; TCP sockets in use {inuse_after} "
      f"(before: {before}), {tw_after} in TIME_WAIT (the kernel's, closed by the master)")
if left:
    problems.append("left behind")
print(f"status  {doc['status']}{': ' + doc['failure'] if doc.get('failure') else ''} (exit {status})")
if doc["status"] != "ok" or status != 0:
    problems.append("status")
if problems:
    print("FAILED: " + ", ".join(problems))
    sys.exit(1)
PY
  if ((status != 0 || verdict != 0)); then
    final=1
    echo "what the run said (errors):"
    grep -iE "error|refused|reset|timed out|expired|closed" "$work/out.txt" | head -8 | sed 's/^/  /' || true
  fi
done
echo "(load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs)"
exit "$final"
