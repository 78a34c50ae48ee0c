#!/usr/bin/env bash
# TLS 1.3 handshakes per second on one strand: volley (a transaction of connect protocol=tls and
# disconnect, over and over) against `openssl s_time -new` talking to `openssl s_server`, with the
# -C suite and an ECDSA P-256 self-signed certificate on both (volley's slave makes its own per
# run); then resumed handshakes, volley's connect option `resume` against `s_time -reuse`.
# Alternating A B A B; every run, then per mode the medians and the ratios volley / openssl of the
# rate and of the CPU per handshake of each end (client: volley's master, s_time; server: volley's
# slave, s_server). Then volley alone with -c strands (16 and 256 by default), full handshakes:
# the rate and the CPU per handshake of each end.
#
# volley's rate is the transactions per second of its measured step (one handshake each); the
# handshake counts of its JSON (tls_handshakes in lib.sh) are only shown, as a check (resumed %).
# s_time's own rate divides by whole seconds of time(), and it runs up to a second past -time: the
# script times the process itself (wall clock, start-up included) and takes its CPU from
# getrusage, s_server's from /proc/PID/stat over the measured s_time only. In TLS 1.3 the session
# ticket comes after the handshake and s_time reads it only when it fetches a page, so -reuse runs
# with -www /r (a 19-byte GET of an empty file from s_server -WWW, a 45-byte reply) and the
# script counts the connections s_time marks resumed ("r"). -d and -w are whole seconds.
# With BENCH_REF_ONLY=1 only openssl runs (for a volley without TLS: the script otherwise stops
# with status 2).
#
# usage: bench/tls_handshakes_vs_s_time.sh [-c "16 256"] [-C aes128|chacha20|SUITE] [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-b BUILD_DIR] [-a ARGS]
set -euo pipefail
conns="16 256" rounds=3 seconds=3 cipher=aes128
usage='[-c "16 256"] [-C aes128|chacha20|SUITE] [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-b BUILD_DIR] [-a ARGS]'
source "$(dirname "$0")/lib.sh"
bench_init "$@"
[[ $seconds =~ ^[1-9][0-9]*$ && $warmup =~ ^[0-9]+$ ]] ||
  { echo "s_time counts whole seconds: -d and -w must be whole numbers" >&2; exit 2; }
suite=$(tls_suite "$cipher")
ref_only=${BENCH_REF_ONLY:-0}
connect="<flowop type=\"connect\" options=\"remotehost=\$h protocol=tls tls_version=1.3 cipher=$suite"
bench_profile "$work/full.xml" '$t' "$connect\"/><flowop type=\"disconnect\"/>"
bench_profile "$work/resumed.xml" '$t' "$connect resume\"/><flowop type=\"disconnect\"/>"
if [[ $ref_only != 1 ]]; then
  tls_check "$work/full.xml" --set t=1
  tls_check "$work/resumed.xml" --set t=1
fi

# The reference's certificate, and the empty page s_time -reuse fetches.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -keyout "$work/k.pem" -out "$work/c.pem" 2>/dev/null
: >"$work/r"

# `openssl s_server` on a free port of 127.0.0.1, serving $work's files (-WWW), started and
# stopped by PID: sets s_server_pid and s_port.
s_server_pid=
trap '[[ -n $s_server_pid ]] && stop_pid "$s_server_pid"; rm -rf "$work"' EXIT
start_s_server() {
  local attempt
  for attempt in 1 2 3 4 5; do
    s_port=$(free_port)
    (cd "$work" && exec openssl s_server -accept "127.0.0.1:$s_port" -cert c.pem -key k.pem \
      -tls1_3 -ciphersuites "$suite" -WWW -quiet) </dev/null >"$work/s_server.log" 2>&1 &
    s_server_pid=$!
    if wait_listening 127.0.0.1 "$s_port" && kill -0 "$s_server_pid" 2>/dev/null; then
      return 0
    fi
    stop_pid "$s_server_pid"
  done
  cat "$work/s_server.log" >&2
  echo "openssl s_server did not listen" >&2
  exit 2
}

# user + system CPU seconds of process PID so far.
proc_cpu() { sed 's/.*) //' "/proc/$1/stat" | awk -v hz="$(getconf CLK_TCK)" '{print ($12 + $13) / hz}'; }

# Runs COMMAND..., its output, then a line "wall_s=W cpu_s=C": its wall-clock time and CPU.
timed_run() {
  python3 -c '
import resource, subprocess, sys, time
t0 = time.monotonic()
rc = subprocess.run(sys.argv[1:]).returncode
wall = time.monotonic() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"\nwall_s={wall:.6f} cpu_s={r.ru_utime + r.ru_stime:.6f}")
sys.exit(rc)' "$@"
}

# One measured s_time run against the s_server, after a warm-up run of the same kind. MODE is
# full (-new) or resumed (-reuse). Prints "RATE US_CLIENT US_SERVER US_BOTH RESUMED_PCT".
s_time_run() {
  local mode=$1 args=(-new) out n wall cpu s0 s1 resumed
  [[ $mode == resumed ]] && args=(-reuse -www /r)
  local cmd=(openssl s_time -connect "127.0.0.1:$s_port" "${args[@]}" -tls1_3 -ciphersuites "$suite")
  ((warmup > 0)) && "${cmd[@]}" -time "$warmup" >/dev/null
  s0=$(proc_cpu "$s_server_pid")
  out=$(timed_run "${cmd[@]}" -time "$seconds")
  s1=$(proc_cpu "$s_server_pid")
  # "1924 connections in 3 real seconds, 0 bytes read per connection"
  n=$(sed -n 's/^\([0-9]*\) connections in [0-9]* real seconds.*/\1/p' <<<"$out")
  if [[ -z $n || $n == 0 ]]; then
    echo "$out" >&2
    echo "openssl s_time made no connection (s_server's log: $(tail -3 "$work/s_server.log"))" >&2
    exit 1
  fi
  wall=$(bench_field "$out" wall_s) cpu=$(bench_field "$out" cpu_s)
  # one mark per connection: "r" resumed, "*" (or a version letter) new
  resumed=$(grep -E '^[*rt3]+$' <<<"$out" | tr -cd r | wc -c)
  awk -v n="$n" -v w="$wall" -v c="$cpu" -v s0="$s0" -v s1="$s1" -v r="$resumed" \
    'BEGIN {printf "%.1f %.1f %.1f %.1f %.0f\n", n / w, c * 1e6 / n, (s1 - s0) * 1e6 / n,
      (c + s1 - s0) * 1e6 / n, 100 * r / n}'
}

# One volley run of MODE's profile on T strands. Prints the same five figures.
volley_run() {
  local mode=$1 t=$2 hs
  bench_volley "$work/$mode.xml" "$work/v.json" --set "t=$t" || exit 1
  hs=$(tls_handshakes "$work/v.json")
  awk -v rate="$(bench_json "$work/v.json" rate)" -v m="$(bench_json "$work/v.json" us_master)" \
    -v s="$(bench_json "$work/v.json" us_slave)" -v b="$(bench_json "$work/v.json" us_both)" \
    -v f="${hs% *}" -v r="${hs#* }" 'BEGIN {
      printf "%.1f %.1f %.1f %.1f %s\n", rate, m, s, b,
        (f == "-" || f + r == 0) ? "-" : sprintf("%.0f", 100 * r / (f + r)) }'
}

start_s_server
echo "TLS 1.3, $suite, ECDSA P-256 certificates; one strand (volley) or connection at a time (s_time)"
echo "round mode program handshakes_per_s us_client us_server us_both resumed_pct"
: >"$work/runs"
for ((r = 1; r <= rounds; r++)); do
  for mode in full resumed; do
    line=$(s_time_run "$mode")
    echo "$r $mode openssl $line" | tee -a "$work/runs"
    [[ $ref_only == 1 ]] && continue
    line=$(volley_run "$mode" 1)
    echo "$r $mode volley $line" | tee -a "$work/runs"
  done
done
stop_pid "$s_server_pid"
s_server_pid=

# The median of column COL (4 rate, 5 client, 6 server, 7 both) of MODE's PROGRAM runs.
med() { awk -v m="$1" -v p="$2" -v c="$3" '$2 == m && $3 == p {print $c}' "$work/runs" | median; }
echo
printf "%-8s %-8s %12s %10s %10s %10s\n" mode program handshakes/s "client us" "server us" "both us"
for mode in full resumed; do
  for p in openssl volley; do
    [[ $p == volley && $ref_only == 1 ]] && continue
    printf "%-8s %-8s %12.0f %10.1f %10.1f %10.1f\n" "$mode" "$p" "$(med "$mode" "$p" 4)" \
      "$(med "$mode" "$p" 5)" "$(med "$mode" "$p" 6)" "$(med "$mode" "$p" 7)"
  done
  [[ $ref_only == 1 ]] && continue
  echo "$mode, ratio volley/openssl: rate $(ratio "$(med "$mode" volley 4)" "$(med "$mode" openssl 4)")," \
    "CPU per handshake client $(ratio "$(med "$mode" volley 5)" "$(med "$mode" openssl 5)")," \
    "server $(ratio "$(med "$mode" volley 6)" "$(med "$mode" openssl 6)")," \
    "both $(ratio "$(med "$mode" volley 7)" "$(med "$mode" openssl 7)")"
done

if [[ $ref_only != 1 ]]; then
  echo
  echo "volley alone, full handshakes, per strand count (CPU: us per handshake)"
  printf "%-8s %12s %10s %10s %10s %9s | %s\n" strands handshakes/s master slave both resumed% \
    "rounds (handshakes/s)"
  for c in $conns; do
    : >"$work/many"
    for ((r = 1; r <= rounds; r++)); do volley_run full "$c" >>"$work/many"; done
    col() { awk -v c="$1" '{print $c}' "$work/many"; }
    printf "%-8s %12.0f %10.1f %10.1f %10.1f %9s | %s\n" "$c" "$(col 1 | median)" \
      "$(col 2 | median)" "$(col 3 | median)" "$(col 4 | median)" "$(col 5 | tail -1)" \
      "$(col 1 | spread)"
  done
fi
echo "(resumed_pct: the share of the measured handshakes that were resumed, s_time's \"r\" marks or" \
  "volley's JSON counts; - when volley's JSON has none)"
bench_footer "the reference is two processes, s_time and s_server, one connection at a time"
