#!/usr/bin/env bash
# What io_uring buys on this kernel, before volley has an io_uring engine: the plain-syscall
# ping-pong references side by side, pp_epoll (../shared/bench/ref) and pp_uring (bench/ref, its
# io_uring twin: same options, same output), alternating pp_epoll pp_uring in each round at each
# connection count. Prints every run, then per count the medians and the ratios uring/epoll of
# the rate and of the CPU per round trip (the process's, both ends being in it).
#
# usage: bench/pp_uring_vs_pp_epoll.sh [-c "16 256 1024 4096"] [-r ROUNDS] [-d SECONDS] [-w WARMUP]
# Needs liburing-dev (scripts/install-deps.sh installs it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
counts="16 256 1024 4096"
rounds=5
seconds=3
warmup=1
while getopts "c:r:d:w:" opt; do
  case $opt in
    c) counts=$OPTARG ;;
    r) rounds=$OPTARG ;;
    d) seconds=$OPTARG ;;
    w) warmup=$OPTARG ;;
    *) sed -n '8p' "$0" >&2; exit 2 ;;
  esac
done
ref_src="${VOLLEY_BENCH_REF:-$root/../shared/bench/ref}"
[[ -d $ref_src ]] || ref_src=/work/shared/bench/ref
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -g -Wall -Wextra -std=gnu11 -o "$work/pp_epoll" "$ref_src/pp_epoll.c" -lpthread
cc -O2 -g -Wall -Wextra -std=gnu11 -I "$ref_src" -o "$work/pp_uring" "$root/bench/ref/pp_uring.c" \
  -lpthread -luring || { echo "pp_uring needs liburing-dev (scripts/install-deps.sh)" >&2; exit 2; }

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
field() { grep -o "$1=[0-9.]*" | head -1 | cut -d= -f2; }

echo "round conns program rt_per_sec us_cpu_per_rt"
for c in $counts; do
  for ((r = 1; r <= rounds; r++)); do
    for p in pp_epoll pp_uring; do
      out=$("$work/$p" -c "$c" -d "$seconds" -w "$warmup")
      rate=$(field rt_per_sec <<<"$out")
      cpu=$(field us_cpu_per_rt <<<"$out")
      echo "$r $c $p $rate $cpu" | tee -a "$work/runs"
    done
  done
done
echo
echo "conns epoll_rt/s uring_rt/s rate_uring/epoll epoll_us/rt uring_us/rt cpu_uring/epoll"
for c in $counts; do
  er=$(awk -v c="$c" '$2==c && $3=="pp_epoll" {print $4}' "$work/runs" | median)
  ur=$(awk -v c="$c" '$2==c && $3=="pp_uring" {print $4}' "$work/runs" | median)
  ec=$(awk -v c="$c" '$2==c && $3=="pp_epoll" {print $5}' "$work/runs" | median)
  uc=$(awk -v c="$c" '$2==c && $3=="pp_uring" {print $5}' "$work/runs" | median)
  awk -v c="$c" -v er="$er" -v ur="$ur" -v ec="$ec" -v uc="$uc" \
    'BEGIN {printf "%5d %11.0f %10.0f %16.3f %11.3f %11.3f %15.3f\n", c, er, ur, ur/er, ec, uc, uc/ec}'
done
