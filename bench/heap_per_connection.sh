#!/usr/bin/env bash
# The live heap per connection of a held-open paced ping-pong, on each side, and what holds it.
# Runs profiles/many-connections-paced.xml's traffic (one connection per strand, a 64-byte round
# trip every 5 s) with N strands in one process on each side, master and slave (`volley serve`)
# each under heaptrack; in the middle of the timed step it kills both (SIGKILL), so that what
# heaptrack saw allocated and never freed is what the connections and their waiting strands hold
# at that moment. Prints, per side, the live heap over N and its largest holders (by the
# innermost volley function on the allocation's stack), and the resident anonymous memory
# (RssAnon) at the kill, which also holds the process's own start and malloc's holes.
#
# Asio's per-thread cache reuses a freed block for the next allocation it fits, so a waiting
# operation can sit in a block an earlier phase allocated: heaptrack then names that phase.
#
# usage: bench/heap_per_connection.sh [-c CONNECTIONS (8000)] [-b BUILD_DIR]
# Needs heaptrack (Debian package heaptrack). Exit status 2 when something it needs is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"  # free_port, wait_listening
conns=8000
build="$root/build"
while getopts "c:b:" opt; do
  case $opt in
    c) conns=$OPTARG ;;
    b) build=$OPTARG ;;
    *) echo "usage: $0 [-c CONNECTIONS] [-b BUILD_DIR]" >&2; exit 2 ;;
  esac
done
volley="$build/src/volley"
[[ -x $volley ]] || { echo "build volley first (scripts/build.sh)" >&2; exit 2; }
command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null ||
  { echo "needs heaptrack: apt-get install heaptrack" >&2; exit 2; }
(( conns + 200 <= $(ulimit -Hn) )) || { echo "-c: more than the open-file limit allows" >&2; exit 2; }
ulimit -n "$(ulimit -Hn)"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

sed 's/duration="60s"/duration="30s"/' "$root/profiles/many-connections-paced.xml" \
  | sed 's/nprocs="\$t"/nthreads="$t"/' >"$work/profile.xml"
port=$(free_port)
heaptrack -o "$work/slave" "$volley" serve --listen "127.0.0.1:$port" -q --processes 1 \
  >"$work/slave.log" 2>&1 &
pids+=($!)
wait_listening 127.0.0.1 "$port" 20 || { echo "the slave did not start" >&2; exit 1; }
heaptrack -o "$work/master" "$volley" run "$work/profile.xml" -P "$port" --set h=127.0.0.1 \
  --set "t=$conns" --set r=0.2 --set s=127.0.0.1 --processes 1 -q >"$work/master.log" 2>&1 &
pids+=($!)
# The connect step takes a second or two at 8,000; the timed step runs 30 s. Kill at 15 s in.
sleep 17
for side in master slave; do
  case $side in
    master) pattern="$volley run $work/profile.xml" ;;
    slave) pattern="$volley serve --listen 127.0.0.1:$port" ;;
  esac
  pid=$(pgrep -f -- "^$pattern" | head -1 || true)
  [[ -n $pid ]] || { echo "the $side is not running: it ended before the kill" >&2; exit 1; }
  rss=$(awk '/RssAnon/ {print $2}' "/proc/$pid/status")
  echo "$rss" >"$work/$side.rss"
  kill -9 "$pid"
done
sleep 3  # heaptrack writes what it was sent
for side in master slave; do
  file=$(ls "$work/$side".*zst 2>/dev/null | head -1)
  [[ -n $file ]] || { echo "no heaptrack data for the $side" >&2; exit 1; }
  heaptrack_print -f "$file" --print-peaks 0 --print-allocators 0 --print-temporary 0 \
    --print-leaks 1 -F "$work/$side.stacks" --flamegraph-cost-type leaked >/dev/null 2>&1
  python3 - "$side" "$work/$side.stacks" "$conns" "$(cat "$work/$side.rss")" <<'EOF'
import collections, sys
side, path, conns, rss_kib = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
holders = collections.Counter()
for line in open(path):
    stack, _, n = line.rstrip().rpartition(' ')
    frames = stack.split(';')
    inner = next((f.split('(')[0] for f in reversed(frames) if 'volley::' in f),
                 "outside volley's code (Asio's operations, threads)")
    holders[inner] += int(n)
total = sum(holders.values())
print(f"{side}: live heap {total / conns:,.0f} B a connection ({total / 2**20:.1f} MiB over {conns:,}); "
      f"RssAnon at the kill {rss_kib * 1024 / conns:,.0f} B a connection")
for name, n in holders.most_common(8):
    print(f"  {n / conns:6,.0f} B  {name}")
EOF
done
