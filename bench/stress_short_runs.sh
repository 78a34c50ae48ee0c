#!/usr/bin/env bash
# Many short ping-pong runs (--local) under CPU load, each with a time limit: finds runs that
# hang instead of ending (for example, the master's timed step ends on time and the slave never
# sends step_done). A run that has not ended by its limit is a hang: the script saves both
# processes' thread stacks (gdb) and the run's output, kills that run by PID, and goes on.
#
# usage: bench/stress_short_runs.sh [-n RUNS] [-t STRANDS] [-d SECONDS] [-i INTERVAL] [-k HOGS]
#                                   [-l LIMIT_S] [-c CPUS] [-p PROFILE] [-o OUT_DIR] [-b BUILD_DIR]
#   -n RUNS      runs to make (default 40)
#   -t STRANDS   strands (default 64)
#   -d SECONDS   duration of the timed step (default 4)
#   -i INTERVAL  live-line interval (default 1s)
#   -k HOGS      busy-loop processes competing for the CPUs during the runs (default 2)
#   -l LIMIT_S   a run not finished after duration + LIMIT_S seconds is a hang (default 20)
#   -c CPUS      pin the runs and the hogs to these CPUs (taskset list, e.g. 0): with everything
#                on one CPU, threads are preempted far more often (default: not pinned)
#   -p PROFILE   run this profile instead of the built-in ping-pong ($t, $h are set)
#   -o OUT_DIR   where hang reports go (default: a new directory under /tmp)
# Exit status: 0 no hang, 1 at least one hang (or a run that crashed), 2 bad usage.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=40
strands=64
seconds=4
interval=1s
hogs=2
limit=20
profile=""
cpus=""
out=""
build="$root/build"
while getopts "n:t:d:i:k:l:c:p:o:b:" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    t) strands=$OPTARG ;;
    d) seconds=$OPTARG ;;
    i) interval=$OPTARG ;;
    k) hogs=$OPTARG ;;
    l) limit=$OPTARG ;;
    c) cpus=$OPTARG ;;
    p) profile=$OPTARG ;;
    o) out=$OPTARG ;;
    b) build=$OPTARG ;;
    *) sed -n '2,19p' "$0" >&2; exit 2 ;;
  esac
done
volley="$build/src/volley"
[[ -x $volley ]] || { echo "build volley first (scripts/build.sh $build)" >&2; exit 2; }
out=${out:-$(mktemp -d /tmp/volley-stress.XXXXXX)}
mkdir -p "$out"
work=$(mktemp -d)
pin=()
[[ -z $cpus ]] || pin=(taskset -c "$cpus")

hog_pids=()
run_pid=""
cleanup() {
  for pid in "${hog_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [[ -n $run_pid ]]; then kill -KILL "$run_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

if [[ -z $profile ]]; then
  profile="$work/pp.xml"
  cat >"$profile" <<XML
<?xml version="1.0"?>
<profile name="stress pingpong">
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
fi

for ((h = 0; h < hogs; h++)); do
  "${pin[@]}" bash -c 'while :; do :; done' &
  hog_pids+=($!)
done

# Thread stacks of a process and of its children (the --local slave), into FILE.
dump_stacks() {
  local pid=$1 file=$2
  for p in "$pid" $(pgrep -P "$pid" || true); do
    {
      echo "=== pid $p: $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)"
      timeout 60 gdb -p "$p" -batch -ex 'thread apply all bt' 2>&1 | grep -v '^\[New LWP' || true
    } >>"$file"
  done
}

hangs=0
crashes=0
failed=0
ok=0
start=$(date +%s)
for ((i = 1; i <= runs; i++)); do
  "${pin[@]}" "$volley" run "$profile" --local --set "t=$strands" -i "$interval" --json "$work/r.json" \
    >"$work/out.txt" 2>"$work/err.txt" &
  run_pid=$!
  deadline=$(($(date +%s) + seconds + limit))
  while kill -0 "$run_pid" 2>/dev/null && (($(date +%s) < deadline)); do sleep 0.2; done
  if kill -0 "$run_pid" 2>/dev/null; then
    hangs=$((hangs + 1))
    report="$out/hang-$i"
    mkdir -p "$report"
    cp "$work/out.txt" "$work/err.txt" "$report/"
    dump_stacks "$run_pid" "$report/stacks.txt"
    echo "run $i: HANG (not finished after $((seconds + limit)) s); stacks and output in $report"
    pkill -KILL -P "$run_pid" 2>/dev/null || true  # the run's own --local slave
    kill -KILL "$run_pid" 2>/dev/null || true
    wait "$run_pid" 2>/dev/null || true
  else
    rc=0
    wait "$run_pid" || rc=$?
    if ((rc == 0)); then
      ok=$((ok + 1))
    elif ((rc == 1)); then
      failed=$((failed + 1))
      echo "run $i: exit 1: $(grep -m1 -i 'fail\|error' "$work/err.txt" "$work/out.txt" | head -1)"
    else
      crashes=$((crashes + 1))
      mkdir -p "$out/crash-$i"
      cp "$work/out.txt" "$work/err.txt" "$out/crash-$i/"
      echo "run $i: exit $rc (crash?); output in $out/crash-$i"
    fi
  fi
  run_pid=""
done
echo "runs $runs: ok $ok, failed (exit 1) $failed, hangs $hangs, other exits $crashes;" \
  "$strands strands, ${seconds}s, -i $interval, $hogs CPU hogs${cpus:+ on CPUs $cpus}, $(($(date +%s) - start)) s"
((hangs == 0 && crashes == 0))
