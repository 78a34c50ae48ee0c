#!/usr/bin/env bash
# One-way bulk, one stream, per GB moved: what each end does (system calls by kind, failed reads,
# bytes per read and per write, context switches, wake-ups it issued, CPU) and how often the
# sender's TCP paced a segment with a timer, for `stream_ref -p` and volley --local alternately.
# Counts per GB depend far less on the machine's load than rates do. perf stat --per-thread -a
# counts every thread over -d seconds while the program runs (after -w of warm-up); a thread is
# the receiver when it mostly reads, the sender when it mostly writes. Needs root (system-wide
# perf, and /proc/kallsyms for tcp_pace_kick, the pacing timer's function).
#
# usage: bench/bulk_per_gb.sh [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES] [-b BUILD_DIR]
#   BENCH_SENDFILE=1: both send a 16 MiB file with sendfile(2), -s bytes a call.
#   BENCH_RT=1: both programs under chrt -f 5 (on a machine busy with other work, so that the two
#   ends get a CPU when they wake, as on an idle one).
set -euo pipefail
rounds=1 seconds=2 size=65536
usage='[-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES] [-b BUILD_DIR]'
source "$(dirname "$0")/lib.sh"
bench_init "$@"
stream_ref=$(bench_ref stream_ref)
command -v perf >/dev/null || { echo "perf is needed" >&2; exit 2; }
pace=$(awk '$3 == "tcp_pace_kick" {print "0x" $1}' /proc/kallsyms)
flow="<flowop type=\"write\" options=\"size=$size\"/>"
ref_args=()
if [[ -n ${BENCH_SENDFILE:-} ]]; then
  head -c 16777216 /dev/urandom >"$work/payload"
  flow="<flowop type=\"sendfile\" options=\"file=$work/payload size=$size\"/>"
  ref_args=(-f "$work/payload")
fi
# Both run 3 s longer than the counted window, which starts after their warm-up (perf takes a
# moment to open its counters on every thread).
run_for=$(awk -v s="$seconds" 'BEGIN {print s + 3}')
seconds=$run_for bench_profile "$work/bulk.xml" 1 "$flow" \
  '<flowop type="connect" options="remotehost=$h protocol=tcp"/>' '<flowop type="disconnect"/>'
rt=()
[[ -n ${BENCH_RT:-} ]] && rt=(chrt -f 5)

events=(-e task-clock -e context-switches -e sched:sched_wakeup)
for c in read write recvmsg recvfrom sendto sendfile64 epoll_wait setsockopt; do
  events+=(-e "syscalls:sys_enter_$c")
done
for c in read recvmsg recvfrom; do events+=(-e "syscalls:sys_exit_$c" --filter 'ret < 0'); done
[[ -n $pace ]] && events+=(-e timer:hrtimer_start --filter "function == $pace")

# Bytes received so far on the TCP connections of processes PIDS... (ss: the data connection's
# bytes_received, and the control connection's few).
received() {
  date +%s.%N
  ss -tinp state established 2>/dev/null | awk -v list="$*" '
    BEGIN { n = split(list, p, " "); for (i = 1; i <= n; i++) ours[p[i]] = 1 }
    !/^\t/ { owner = match($0, /pid=[0-9]+/) ? substr($0, RSTART + 4, RLENGTH - 4) : "" }
    /^\t/ && (owner in ours) && match($0, /bytes_received:[0-9]+/) {
      sum += substr($0, RSTART + 15, RLENGTH - 15)
    }
    END { printf "%.0f\n", sum }'
  date +%s.%N
}
export -f received

# measure NAME COMMAND...: runs COMMAND, counts over the window, prints the figures.
measure() {
  local name=$1
  shift
  "${rt[@]}" "$@" >"$work/out" 2>/dev/null &
  local pid=$!
  sleep "$(awk -v w="$warmup" 'BEGIN {print w + 0.3}')"
  local pids
  pids="$pid $(pgrep -P "$pid" | tr '\n' ' ')"
  # The bytes are read inside the counted command, so that both count the same span.
  perf stat --per-thread -a -x, "${events[@]}" -- bash -c "received $pids >'$work/before';
    sleep $seconds; received $pids >'$work/after'" 2>"$work/perf" || true
  wait "$pid"
  python3 - "$name" "$work" <<'PY'
import sys
name, work = sys.argv[1], sys.argv[2]
def snap(f):
    start, nbytes, end = open(f"{work}/{f}").read().split()
    return float(start), int(nbytes), float(end)
(s0, b0, e0), (s1, b1, e1) = snap("before"), snap("after")
# The rate between the two readings; the counts span both readings whole.
gbit = (b1 - b0) * 8 / ((s1 + e1) / 2 - (s0 + e0) / 2) / 1e9
secs = e1 - s0
# the local slave is started as /proc/self/exe
comms = ("stream_ref",) if name == "stream_ref" else ("volley", "exe")
threads, pace = {}, 0.0
for line in open(f"{work}/perf"):
    f = line.strip().split(",")
    if len(f) < 4:
        continue
    try:
        v = float(f[1])
    except ValueError:
        continue
    if f[3] == "timer:hrtimer_start":
        pace += v
    if f[0].rsplit("-", 1)[0] in comms:
        threads.setdefault(f[0], {})[f[3]] = v
gb = gbit / 8 * secs
reads = ("read", "recvmsg", "recvfrom")
writes = ("write", "sendto", "sendfile64")
def calls(t, kinds):
    return sum(t.get(f"syscalls:sys_enter_{k}", 0) for k in kinds)
ends = {"sender": {}, "receiver": {}}
for t in threads.values():
    r, w = calls(t, reads), calls(t, writes)
    end = "receiver" if r > w and r > 100 else "sender" if w > 100 else None
    if end:
        for k, v in t.items():
            ends[end][k] = ends[end].get(k, 0) + v
print(f"{name}: {gbit:.2f} Gbit/s; per GB: pacing timers {pace / gb:.0f}")
for end, t in ends.items():
    parts = [f"CPU {t.get('task-clock', 0) / gb:.0f} ms",
             f"context switches {t.get('context-switches', 0) / gb:.0f}",
             f"wake-ups issued {t.get('sched:sched_wakeup', 0) / gb:.0f}"]
    for k in reads + writes + ("epoll_wait", "setsockopt"):
        if t.get(f"syscalls:sys_enter_{k}", 0):
            parts.append(f"{k} {t[f'syscalls:sys_enter_{k}'] / gb:.0f}")
    failed = sum(t.get(f"syscalls:sys_exit_{k}", 0) for k in reads)
    if end == "receiver":
        parts.append(f"failed reads {failed / gb:.0f}")
        n = calls(t, reads)
        parts.append(f"KiB per read {gb * 1e9 / n / 1024:.1f}" if n else "")
    else:
        n = calls(t, writes)
        parts.append(f"KiB per write {gb * 1e9 / n / 1024:.1f}" if n else "")
    print(f"  {end:8}: " + ", ".join(p for p in parts if p))
PY
}

echo "one stream, ${BENCH_SENDFILE:+sendfile, }$size bytes per call${BENCH_RT:+, both under chrt -f 5}"
for ((r = 1; r <= rounds; r++)); do
  measure stream_ref "$stream_ref" -p -n 1 -s "$size" -d "$run_for" -w "$warmup" "${ref_args[@]}"
  measure volley "$volley" run "$work/bulk.xml" --local --set h=127.0.0.1 -q --json "$work/v.json" \
    "${volley_args[@]+"${volley_args[@]}"}"
done
echo "(${seconds}s counted after ${warmup}s of warm-up; $(nproc) CPUs, load average" \
  "$(cut -d' ' -f1-3 /proc/loadavg))"
