#!/usr/bin/env bash
# Figures that do not move with machine load: instructions (valgrind --tool=callgrind) and system
# calls (strace -c -f) per transaction, volley's master and slave apart, against the reference.
#
# Instructions: volley runs the same profile twice, with N1 and N2 iterations per strand, each
# side under callgrind (the slave is `volley serve`); the difference divided by the difference in
# transactions cancels set-up and tear-down. The reference runs -d seconds under callgrind and
# its total is divided by the round trips it counted (its set-up is a few hundred instructions).
# System calls: the same volley runs under strace -c -f instead, same difference method.
#
# -m udp: one strand sending 1472-byte datagrams (the UDP stream of bench/udp_vs_iperf3.sh); a
# transaction is one datagram, the master's cost is per datagram sent, the slave's per datagram it
# received (from the master's --json; the slower sender under the tool keeps loss small). The
# reference is iperf3 -u -b 0 -l 1472 (its client under callgrind, per datagram it sent). -m udp-gso:
# the same with gso on the connection (super-buffers out, UDP_GRO in), against the same iperf3.
#
# Cache misses (-x cachegrind): the same two runs under valgrind --tool=cachegrind with a simulated
# first-level data cache of 32 KiB and a last level of 1 MiB (this machine's L1d and its per-core
# L2; the VM has no hardware counters to count the real ones): data reads and writes that miss
# each level, per transaction, user space only. Instructions do not move with the connection
# count; these do: at thousands of connections each round trip touches per-connection state
# (the strand, its connection, Asio's descriptor state, the coroutine frame) that is no longer
# in cache. Run it with -c 4096 against -c 16.
#
# usage: bench/callgrind_per_transaction.sh [-m pingpong|crr|bulk|udp|udp-gso] [-c CONNS] [-b BUILD_DIR]
#        [-n "N1 N2"] [-x callgrind|strace|both|cachegrind]
set -euo pipefail
shopt -s extglob
mode=pingpong conns=16 iters="200 1200" tools=both
args=()
while (($#)); do
  case $1 in
    -m) mode=$2; shift 2 ;;
    -n) iters=$2; shift 2 ;;
    -x) tools=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
usage='[-m pingpong|crr|bulk|udp|udp-gso] [-c CONNS] [-n "N1 N2"] [-x callgrind|strace|both|cachegrind] [-b BUILD_DIR]'
source "$(dirname "$0")/lib.sh"
bench_init "${args[@]+"${args[@]}"}"
read -r n1 n2 <<<"$iters"
connect='<flowop type="connect" options="remotehost=$h protocol=tcp"/>'
case $mode in
  pingpong)
    setup=$connect teardown='<flowop type="disconnect"/>'
    body='<flowop type="write" options="size=64"/><flowop type="read" options="size=64"/>'
    ref=(pp_epoll -c "$conns" -s 64) ref_count=rt_per_sec ;;
  crr)
    setup='' teardown=''
    body="$connect"'<flowop type="write" options="size=64"/><flowop type="read" options="size=1k"/><flowop type="disconnect"/>'
    ref=(crr_epoll -c "$conns" -q 64 -r 1024) ref_count=conn_per_sec ;;
  bulk)
    conns=1 setup=$connect teardown='<flowop type="disconnect"/>'
    body='<flowop type="write" options="size=64k"/>'
    ref=(stream_ref -n 1 -s 65536) ref_count=gbit_per_sec ;;
  udp|udp-gso)
    gso=; [[ $mode == udp-gso ]] && gso=' gso'
    conns=1 setup='<flowop type="connect" options="remotehost=$h protocol=udp'$gso'"/>'
    teardown='<flowop type="disconnect"/>' body='<flowop type="write" options="size=1472"/>'
    ref=(iperf3) ref_count=datagrams ;;
  *) echo "unknown -m $mode" >&2; exit 2 ;;
esac
profile() {  # FILE ITERATIONS
  {
    echo "<?xml version=\"1.0\"?><profile name=\"cost\"><group nthreads=\"$conns\">"
    [[ -n $setup ]] && echo "<transaction iterations=\"1\">$setup</transaction>"
    echo "<transaction iterations=\"$2\">$body</transaction>"
    [[ -n $teardown ]] && echo "<transaction iterations=\"1\">$teardown</transaction>"
    echo "</group></profile>"
  } >"$1"
}
# Below the ephemeral range (32768-60999 here): a run of thousands of connections leaves its
# local ports in TIME_WAIT, and the next run's slave could not listen on one of them.
port=$((20000 + RANDOM % 10000))
# One volley run with a slave, each side under a tool: TOOL is the command prefix, its output
# file follows it, joined to the last word when that ends in '=' (`strace -f -c -o`,
# `valgrind --tool=callgrind --callgrind-out-file=`).
run_pair() {  # TAG ITERATIONS TOOL...
  local tag=$1 n=$2
  shift 2
  profile "$work/$tag.xml" "$n"
  local -a tool=("$@")
  with() {  # OUTPUT_FILE COMMAND...: COMMAND under the tool
    local last=${tool[-1]} out=$1
    shift
    if [[ $last == *= ]]; then
      "${tool[@]:0:${#tool[@]}-1}" "$last$out" "$@"
    else
      "${tool[@]}" "$out" "$@"
    fi
  }
  with "$work/$tag.slave" "$volley" serve --listen "127.0.0.1:$port" --workers 1 -q \
    --hello-timeout 120s &
  local tool_pid=$!
  # A slave under valgrind on a loaded machine may take more than a few seconds to listen.
  wait_listening 127.0.0.1 "$port" 120 || echo "run $tag: the slave did not listen on $port" >&2
  with "$work/$tag.master" "$volley" run "$work/$tag.xml" --set h=127.0.0.1 -P "$port" \
    --workers 1 --slave-workers 1 --connect-timeout 60s --link-timeout 120s --step-grace 120s \
    -q --json "$work/$tag.json" >/dev/null || echo "run $tag failed" >&2
  # The slave is below the subshell (and below strace); valgrind keeps its process id and name.
  local slave=$tool_pid child
  while child=$(pgrep -P "$slave" | head -1) && [[ -n $child ]]; do
    slave=$child
    [[ $(cat "/proc/$slave/comm" 2>/dev/null) == @(volley|callgrind*) ]] && break
  done
  kill -INT "$slave" 2>/dev/null || true
  wait "$tool_pid" 2>/dev/null || true
  port=$((port + 1))
}
txns() { echo $((conns * $1)); }
per_txn() {  # A1 A2 [T1 T2]: (A2 - A1) / (T2 - T1)
  awk -v a="$1" -v b="$2" -v t1="${3:-$(txns "$n1")}" -v t2="${4:-$(txns "$n2")}" \
    'BEGIN{printf "%.0f", (b-a)/(t2-t1)}'
}
# Datagrams the slave received in run TAG (udp mode).
received() { jq '[.slaves[].groups[].transactions[].flowops[].datagrams.received // 0] | add' "$work/$1.json"; }
# iperf3's client under TOOL... for 2 s; prints the datagrams it sent.
iperf3_ref() {  # TOOL...
  local iport=$((port + 500))
  iperf3 -s -p "$iport" -1 >/dev/null 2>&1 &
  local server=$!
  # Not wait_listening: a probe connection would be iperf3 -1's one client.
  local tries=200
  until ss -Hltn "sport = :$iport" | grep -q . || ((tries-- == 0)); do sleep 0.05; done
  "$@" iperf3 -c 127.0.0.1 -p "$iport" -u -b 0 -l 1472 -t 2 -J >"$work/iperf3.json"
  wait "$server" 2>/dev/null || true
  jq '.end.sum.packets' "$work/iperf3.json"
}
echo "$mode, $conns connections; volley: difference of $n1 and $n2 iterations per strand"

if [[ $tools == callgrind || $tools == both ]]; then
  ir() { awk '/^summary:|^totals:/ {print $2; exit}' "$1"; }
  for n in $n1 $n2; do run_pair "cg$n" "$n" valgrind -q --tool=callgrind --callgrind-out-file=; done
  m=$(per_txn "$(ir "$work/cg$n1.master")" "$(ir "$work/cg$n2.master")")
  s=$(per_txn "$(ir "$work/cg$n1.slave")" "$(ir "$work/cg$n2.slave")")
  # The same over the worker threads alone (the strands' hot path): the whole-process totals
  # also hold the final JSON document, whose size (non-empty histogram buckets) moves from run
  # to run by more than the hot path's cost.
  wir() {  # CALLGRIND_FILE: inclusive instructions of the worker threads
    callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null | awk '
      /_State_impl<.*Worker::start\(\)::\{lambda/ { gsub(",", "", $1); if ($1 + 0 > w) w = $1 + 0 }
      END { print w + 0 }'
  }
  wm=$(per_txn "$(wir "$work/cg$n1.master")" "$(wir "$work/cg$n2.master")")
  ws=$(per_txn "$(wir "$work/cg$n1.slave")" "$(wir "$work/cg$n2.slave")")
  if [[ $mode == udp* ]]; then
    s=$(per_txn "$(ir "$work/cg$n1.slave")" "$(ir "$work/cg$n2.slave")" "$(received "cg$n1")" \
      "$(received "cg$n2")")
    count=$(iperf3_ref valgrind -q --tool=callgrind --callgrind-out-file="$work/ref.cg")
    r=$(awk -v i="$(ir "$work/ref.cg")" -v c="$count" 'BEGIN{printf "%.0f", i/c}')
    ws=$(per_txn "$(wir "$work/cg$n1.slave")" "$(wir "$work/cg$n2.slave")" \
      "$(received "cg$n1")" "$(received "cg$n2")")
    echo "instructions per datagram (user space): volley master (sender) $m, slave (receiver)" \
      "$s (per datagram received: $(received "cg$n1"), $(received "cg$n2")); iperf3 client $r"
    echo "instructions per datagram on the worker threads alone: volley master $wm, slave $ws"
    if [[ -n ${CALLGRIND_KEEP:-} ]]; then
      cp "$work/cg$n2.master" "$CALLGRIND_KEEP.master"; cp "$work/cg$n2.slave" "$CALLGRIND_KEEP.slave"
      cp "$work/ref.cg" "$CALLGRIND_KEEP.ref"
    fi
  fi
fi
if [[ ($tools == callgrind || $tools == both) && $mode != udp* ]]; then
  refbin=$(bench_ref "${ref[0]}")
  out=$(valgrind --tool=callgrind --callgrind-out-file="$work/ref.cg" "$refbin" "${ref[@]:1}" \
    -d 3 -w 0 2>/dev/null)
  count=$(awk -v r="$(bench_field "$out" "$ref_count")" -v d="$(bench_field "$out" duration)" \
    -v m="$mode" 'BEGIN{ if (m == "bulk") print r * 1e9 / 8 * d / 65536; else print r * d }')
  r=$(awk -v i="$(ir "$work/ref.cg")" -v c="$count" 'BEGIN{printf "%.0f", i/c}')
  unit=transaction; [[ $mode == bulk ]] && unit="64 KiB write"
  echo "instructions per $unit (user space): volley master $m, slave $s, both $((m + s));" \
    "${ref[0]} (both ends) $r; ratio $(ratio "$((m + s))" "$r")"
  echo "instructions per $unit on the worker threads alone: volley master $wm, slave $ws," \
    "both $((wm + ws)); ratio to ${ref[0]} $(ratio "$((wm + ws))" "$r")"
  if [[ -n ${CALLGRIND_KEEP:-} ]]; then
    cp "$work/cg$n2.master" "$CALLGRIND_KEEP.master"; cp "$work/cg$n2.slave" "$CALLGRIND_KEEP.slave"
    cp "$work/cg$n1.master" "$CALLGRIND_KEEP.n1.master"; cp "$work/cg$n1.slave" "$CALLGRIND_KEEP.n1.slave"
    cp "$work/ref.cg" "$CALLGRIND_KEEP.ref"
  fi
fi

if [[ $tools == cachegrind ]]; then
  cache=(valgrind -q --tool=cachegrind --cache-sim=yes --D1=32768,8,64 --LL=1048576,16,64
    --I1=32768,8,64 --cachegrind-out-file=)
  # EVENT of a cachegrind output file's summary (events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw).
  event() {  # FILE EVENT
    awk -v e="$2" '/^events:/ { for (i = 2; i <= NF; i++) if ($i == e) col = i - 1 }
      /^summary:/ { print $(col + 1); exit }' "$1"
  }
  misses() {  # FILE LEVEL(D1|DL): data reads and writes that missed LEVEL
    echo $(($(event "$1" "${2}mr") + $(event "$1" "${2}mw")))
  }
  for n in $n1 $n2; do run_pair "cc$n" "$n" "${cache[@]}"; done
  refbin=$(bench_ref "${ref[0]}")
  out=$("${cache[@]:0:${#cache[@]}-1}" "${cache[-1]}$work/ref.cc" "$refbin" "${ref[@]:1}" \
    -d 3 -w 0 2>/dev/null)
  count=$(awk -v r="$(bench_field "$out" "$ref_count")" -v d="$(bench_field "$out" duration)" \
    -v m="$mode" 'BEGIN{ if (m == "bulk") print r * 1e9 / 8 * d / 65536; else print r * d }')
  for level in D1 DL; do
    m=$(per_txn "$(misses "$work/cc$n1.master" $level)" "$(misses "$work/cc$n2.master" $level)")
    s=$(per_txn "$(misses "$work/cc$n1.slave" $level)" "$(misses "$work/cc$n2.slave" $level)")
    r=$(awk -v i="$(misses "$work/ref.cc" $level)" -v c="$count" 'BEGIN{printf "%.1f", i/c}')
    name=$([[ $level == D1 ]] && echo "first-level (32 KiB)" || echo "last-level (1 MiB)")
    echo "data cache misses per transaction, $name: volley master $m, slave $s," \
      "both $((m + s)); ${ref[0]} (both ends) $r"
  done
  if [[ -n ${CALLGRIND_KEEP:-} ]]; then
    # Both runs: cg_diff KEEP.n1.master KEEP.master | cg_annotate /dev/stdin shows one round trip's.
    cp "$work/cc$n2.master" "$CALLGRIND_KEEP.master"; cp "$work/cc$n2.slave" "$CALLGRIND_KEEP.slave"
    cp "$work/cc$n1.master" "$CALLGRIND_KEEP.n1.master"; cp "$work/cc$n1.slave" "$CALLGRIND_KEEP.n1.slave"
    cp "$work/ref.cc" "$CALLGRIND_KEEP.ref"
  fi
fi

if [[ $tools == strace || $tools == both ]]; then
  for n in $n1 $n2; do run_pair "st$n" "$n" strace -f -c -o; done
  # Per-syscall calls per transaction (failed ones, EAGAIN mostly, in brackets; two significant
  # digits, from 0.001): the difference of two strace -c tables over a difference of
  # transactions, or one table over a count.
  table() {  # LABEL TABLE_N2 TRANSACTIONS_N2 [TABLE_N1 TRANSACTIONS_N1]
    python3 - "$@" <<'PY'
import re, sys
def load(p):
    out = {}
    for line in open(p):
        f = line.split()
        if len(f) >= 5 and f[-1] != "total" and re.match(r"^[0-9.]+$", f[0]):
            out[f[-1]] = (int(f[3]), int(f[4]) if len(f) == 6 else 0)
    return out
b, tb = load(sys.argv[2]), float(sys.argv[3])
a, ta = (load(sys.argv[4]), float(sys.argv[5])) if len(sys.argv) > 4 else ({}, 0.0)
rows = []
for k in set(a) | set(b):
    c = (b.get(k, (0, 0))[0] - a.get(k, (0, 0))[0]) / (tb - ta)
    e = (b.get(k, (0, 0))[1] - a.get(k, (0, 0))[1]) / (tb - ta)
    if c >= 0.001:
        rows.append((c, k + f" {c:.2g}" + (f" ({e:.2g} failed)" if e >= 0.001 else "")))
total = sum(c for c, _ in rows)
print(f"system calls per transaction, {sys.argv[1]}: {total:.2g} = " +
      ", ".join(r for _, r in sorted(rows, reverse=True)))
PY
  }
  table "volley master" "$work/st$n2.master" "$(txns "$n2")" "$work/st$n1.master" "$(txns "$n1")"
  table "volley slave" "$work/st$n2.slave" "$(txns "$n2")" "$work/st$n1.slave" "$(txns "$n1")"
  if [[ $mode == udp* ]]; then
    table "iperf3 client" "$work/ref.st" "$(iperf3_ref strace -f -c -o "$work/ref.st")"
    exit 0
  fi
  refbin=$(bench_ref "${ref[0]}")
  out=$(strace -f -c -o "$work/ref.st" "$refbin" "${ref[@]:1}" -d 2 -w 0)
  count=$(awk -v r="$(bench_field "$out" "$ref_count")" -v d="$(bench_field "$out" duration)" \
    -v m="$mode" 'BEGIN{ if (m == "bulk") print r * 1e9 / 8 * d / 65536; else print r * d }')
  table "${ref[0]} (both ends)" "$work/ref.st" "$count"
fi
