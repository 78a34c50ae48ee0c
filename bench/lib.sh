# Shared code for the bench/*_vs_*.sh scripts: option parsing, building the references out of tree,
# running volley with a local slave, reading its JSON, CPU per operation of both ends, medians;
# and for any script (tests/killed_slave_repro.sh too) a free port and a `volley serve` started,
# waited for and stopped by PID. Sourced, not run. A script sets its defaults (conns, rounds, seconds, size) and its usage line
# in `usage`, then sources this file and calls bench_init "$@".
#
# Every script alternates volley and the reference in one run (A B A B ...) and prints the ratio of
# the medians: absolute figures move with machine load, the ratio much less, CPU per operation
# least. On a shared machine say so next to the figures.

bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${conns:=16}" "${rounds:=3}" "${seconds:=3}" "${size:=65536}" "${warmup:=1}"
build="$bench_root/build"
ref_src="${VOLLEY_BENCH_REF:-$bench_root/../shared/bench/ref}"
[[ -d $ref_src ]] || ref_src=/work/shared/bench/ref

bench_init() {
  local opt
  OPTIND=1
  volley_args=()
  while getopts "c:C:r:d:b:s:w:a:h" opt; do
    case $opt in
      a) read -r -a volley_args <<<"$OPTARG" ;;
      c) conns=$OPTARG ;;
      C) cipher=$OPTARG ;;
      r) rounds=$OPTARG ;;
      d) seconds=$OPTARG ;;
      b) build=$OPTARG ;;
      s) size=$OPTARG ;;
      w) warmup=$OPTARG ;;
      *) echo "usage: $0 ${usage:-[-c CONNS] [-r ROUNDS] [-d SECONDS] [-b BUILD_DIR]}" >&2; exit 2 ;;
    esac
  done
  volley="$build/src/volley"
  # A script that runs only references sets without_volley=1 first.
  [[ -n ${without_volley:-} || -x $volley ]] ||
    { echo "build volley first (scripts/build.sh $build)" >&2; exit 2; }
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
}

# A TCP port free on 127.0.0.1 now (the kernel picks it; bound, read, released).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until something accepts TCP connections on HOST:PORT, at most SECONDS (default 10);
# status 1 when nothing did.
wait_listening() {
  local host=$1 port=$2 tries=$(( ${3:-10} * 20 ))
  while ((tries-- > 0)); do
    (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# Starts `VOLLEY serve --listen 127.0.0.1:PORT ARGS...` in the background on a free port and waits
# until it listens; sets slave_pid and slave_port. Another process may take the port between the
# pick and the bind: then the serve exits, and another port is tried (five times at most).
#   start_slave VOLLEY [ARGS...]
start_slave() {
  local binary=$1 attempt
  shift
  for attempt in 1 2 3 4 5; do
    slave_port=$(free_port)
    "$binary" serve --listen "127.0.0.1:$slave_port" "$@" &
    slave_pid=$!
    if wait_listening 127.0.0.1 "$slave_port" && kill -0 "$slave_pid" 2>/dev/null; then
      return 0
    fi
    stop_pid "$slave_pid"
  done
  echo "start_slave: volley serve did not listen" >&2
  return 1
}

# Stops process PID (a child of this shell): SIGCONT (it may be frozen), SIGTERM, up to SECONDS
# (default 10) for it to exit, then SIGKILL; reaped without bash's "Killed" job notice. Safe
# under set -e (a process already gone, or its exit status, is no error).
stop_pid() {
  local pid=$1 tries=$(( ${2:-10} * 20 ))
  kill -CONT "$pid" 2>/dev/null || true
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null && ((tries-- > 0)); do sleep 0.05; done
  kill -KILL "$pid" 2>/dev/null || true
  { wait "$pid"; } 2>/dev/null || true
  return 0
}

# Builds a reference program into $work and prints its path: one of ../shared/bench/ref (pp_epoll,
# crr_epoll, stream_ref, pp_block; read-only there), or one of this repository's bench/ref
# (tls_stream, pp_uring, stream_uring, stream_ev), which include pp_common.h from ../shared.
# Further arguments are libraries to link:  bench_ref tls_stream -lssl -lcrypto
bench_ref() {
  local name=$1 src=$ref_src/$1.c
  shift
  [[ -f $bench_root/bench/ref/$name.c ]] && src=$bench_root/bench/ref/$name.c
  if [[ ! -x $work/$name ]]; then
    cc -O2 -g -Wall -Wextra -std=gnu11 -I "$ref_src" -o "$work/$name" "$src" -lpthread "$@" || exit 2
  fi
  echo "$work/$name"
}

# A profile of one timed transaction between set-up and tear-down transactions, written to $work.
#   bench_profile FILE NTHREADS TIMED_FLOWOPS [SETUP_FLOWOPS] [TEARDOWN_FLOWOPS]
# The timed transaction runs for $seconds after $warmup seconds of the same flowops (a warm-up
# transaction, not counted in the figures, like the references' -w).
bench_profile() {
  local file=$1 threads=$2 timed=$3 setup=${4:-} teardown=${5:-}
  {
    echo '<?xml version="1.0"?>'
    echo '<profile name="bench">'
    echo "  <group nthreads=\"$threads\">"
    [[ -n $setup ]] && echo "    <transaction iterations=\"1\">$setup</transaction>"
    [[ $warmup != 0 ]] && echo "    <transaction duration=\"${warmup}s\">$timed</transaction>"
    echo "    <transaction duration=\"${seconds}s\">$timed</transaction>"
    [[ -n $teardown ]] && echo "    <transaction iterations=\"1\">$teardown</transaction>"
    echo '  </group>'
    echo '</profile>'
  } >"$file"
}

# Runs volley with a local slave; the JSON document goes to FILE. Extra arguments go to `run`,
# after the script's -a ARGS (e.g. -a "--workers 1 --slave-workers 1").
bench_volley() {
  local profile=$1 json=$2
  shift 2
  "$volley" run "$profile" --local --set h=127.0.0.1 -q --json "$json" \
    "${volley_args[@]+"${volley_args[@]}"}" "$@" >/dev/null
}

# Figures from a volley JSON document, for the last timed step (the measured one, after warm-up):
#   bench_json FILE FIELD
# FIELD: rate (transactions/s), gbit (Gbit/s), us_master / us_slave / us_both (process CPU of
# that end per transaction), us_kb_master / us_kb_slave / us_kb_both (per KiB moved one way).
# Process CPU is the report's timed part (both duration steps, warm-up included; set-up excluded)
# over the transactions of those steps.
bench_json() {
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
field = sys.argv[2]
# The last timed step is the measured one (the one before it is the warm-up).
step = d["timed_steps"][-1]
txns = nbytes = 0
secs = 0.0
for g in d["groups"]:
    for t in g["transactions"]:
        if t["step"] == step:
            txns += t["transactions"]
            nbytes += t["bytes"]
            secs = max(secs, t["elapsed_s"])
cpu = {"master": d["cpu"]["local"]["process"], "slave": d["cpu"]["remote"][0]["process"]}
all_txns = d["totals"]["transactions"] or 1
all_bytes = d["totals"]["bytes"] or 1
def us(side):
    p = cpu[side]
    return (p["user_s"] + p["sys_s"]) * 1e6
if field == "rate":
    print(txns / secs)
elif field == "gbit":
    print(nbytes * 8 / secs / 1e9)
elif field.startswith("us_kb_"):
    side = field[len("us_kb_"):]
    # bytes counts read + written on the master: one-way bulk moves each byte once.
    total = us("master") + us("slave") if side == "both" else us(side)
    print(total / (all_bytes / 1024))
elif field.startswith("us_"):
    side = field[len("us_"):]
    total = us("master") + us("slave") if side == "both" else us(side)
    print(total / all_txns)
else:
    sys.exit("unknown field " + field)
PY
}

# A field `name=value` from a reference's output.
bench_field() { sed -n "s/.*$2=\([0-9.]*\).*/\1/p" <<<"$1" | head -1; }

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
# The rounds' lowest and highest, "min-max" (to 0 decimals): how far apart the rounds were, which
# on this machine is often more than the difference between the programs.
spread() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.0f-%.0f", lo, hi}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# The closing line; an argument replaces "the reference is one process holding both ends".
bench_footer() {
  echo "(medians of $rounds alternating rounds, ${seconds}s measured after ${warmup}s warm-up;" \
    "CPU = process user+sys; ${1:-the reference is one process holding both ends};" \
    "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg))"
}

# TLS (bench/tls_*.sh). The TLS 1.3 suite that -C names: aes128 (the default), aes256, chacha20,
# or a suite's own name (TLS_AES_128_GCM_SHA256), passed as it is.
tls_suite() {
  local name=${1:-aes128}
  case ${name,,} in
    aes128 | aes | aes-128-gcm | aes128-gcm) echo TLS_AES_128_GCM_SHA256 ;;
    aes256 | aes-256-gcm | aes256-gcm) echo TLS_AES_256_GCM_SHA384 ;;
    chacha | chacha20 | chacha20-poly1305) echo TLS_CHACHA20_POLY1305_SHA256 ;;
    *) echo "$name" ;;
  esac
}

# Exits 2 with `volley check`'s errors when this volley cannot run PROFILE (a volley without TLS
# rejects protocol=tls and the TLS options); its warnings are shown.
#   tls_check PROFILE [--set NAME=VALUE ...]
tls_check() {
  local profile=$1 out
  shift
  if ! out=$("$volley" check "$profile" --set h=127.0.0.1 "$@" 2>&1); then
    echo "$out" >&2
    echo "$volley cannot run this TLS profile (volley check failed, above): it needs a volley" \
      "with protocol=tls" >&2
    exit 2
  fi
  [[ $out == *" 0 warning(s)"* ]] || echo "$out" >&2
}

# volley's TLS handshakes in a JSON document, "FULL RESUMED", summed over the master's connect
# flowops of the measured step (or of every step with a second argument, all), "- -" when the
# document has no such counts: a TLS connect's "handshakes": {"full": {"ops": N, ...},
# "resumed": {"ops": M, ...}} (docs/results.md). The scripts' rates do not depend on it: one
# iteration of connect + disconnect is one handshake.
#   tls_handshakes FILE [all]
tls_handshakes() {
  python3 - "$1" "${2:-}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
step = None if sys.argv[2] == "all" else d["timed_steps"][-1]
full = resumed = None
for g in d["groups"]:
    for t in g["transactions"]:
        if step is not None and t["step"] != step:
            continue
        for f in t["flowops"]:
            h = f.get("handshakes")
            if f.get("type") == "connect" and isinstance(h, dict):
                full = (full or 0) + h["full"]["ops"]
                resumed = (resumed or 0) + h["resumed"]["ops"]
print("-" if full is None else full, "-" if resumed is None else resumed)
PY
}
