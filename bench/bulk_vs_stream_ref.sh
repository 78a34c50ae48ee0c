#!/usr/bin/env bash
# One-way bulk throughput, one stream of -s byte writes (64 KiB by default), volley against the
# plain-syscall reference `stream_ref -p`, alternating A B A B; each round's ratio, the ratio of
# medians (volley / stream_ref) and process CPU per KiB moved (volley: master = writer, slave =
# reader, and both; stream_ref -p: its sender and receiver processes together). Both are two
# processes, a blocking sender and a blocking reader against volley's master and slave. With
# BENCH_SENDFILE=FILE both send the file with sendfile(2) instead, over and over, in -s byte
# chunks (bench/sendfile_vs_stream_ref.sh passes it).
#
# usage: bench/bulk_vs_stream_ref.sh [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES] [-b BUILD_DIR]
set -euo pipefail
rounds=3 seconds=3 size=65536
usage='[-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES] [-b BUILD_DIR]'
source "$(dirname "$0")/lib.sh"
bench_init "$@"
stream_ref=$(bench_ref stream_ref)
file=${BENCH_SENDFILE:-}
connect='<flowop type="connect" options="remotehost=$h protocol=tcp"/>'
if [[ -n $file ]]; then
  mode="sendfile of $file ($(stat -c %s "$file") bytes)"
  ref_args=(-f "$file")
  bench_profile "$work/bulk.xml" 1 "<flowop type=\"sendfile\" options=\"file=$file size=$size\"/>" \
    "$connect" '<flowop type="disconnect"/>'
else
  mode="write"
  ref_args=()
  bench_profile "$work/bulk.xml" 1 "<flowop type=\"write\" options=\"size=$size\"/>" \
    "$connect" '<flowop type="disconnect"/>'
fi

for f in ref vol refcpu m s b; do : >"$work/$f"; done
for ((r = 1; r <= rounds; r++)); do
  out=$("$stream_ref" -p -n 1 -s "$size" -d "$seconds" -w "$warmup" "${ref_args[@]}")
  bench_field "$out" gbit_per_sec >>"$work/ref"
  bench_field "$out" us_cpu_per_kb >>"$work/refcpu"
  bench_volley "$work/bulk.xml" "$work/v.json"
  bench_json "$work/v.json" gbit >>"$work/vol"
  bench_json "$work/v.json" us_kb_master >>"$work/m"
  bench_json "$work/v.json" us_kb_slave >>"$work/s"
  bench_json "$work/v.json" us_kb_both >>"$work/b"
done
ref=$(median <"$work/ref") vol=$(median <"$work/vol") refcpu=$(median <"$work/refcpu")
both=$(median <"$work/b")
echo "one stream, $mode, $size bytes per call"
echo "stream_ref: $(tr '\n' ' ' <"$work/ref")-> median $ref Gbit/s, $refcpu us CPU/KiB (both ends)"
echo "volley:     $(tr '\n' ' ' <"$work/vol")-> median $vol Gbit/s"
echo "each round, volley/stream_ref: $(paste -d' ' "$work/vol" "$work/ref" |
  awk '{printf "%.2f ", ($2 > 0 ? $1 / $2 : 0)}')(lowest $(paste -d' ' "$work/vol" "$work/ref" |
  awk '{r = ($2 > 0 ? $1 / $2 : 0); if (NR == 1 || r < lo) lo = r} END {printf "%.2f", lo}'))"
echo "volley CPU us/KiB: master (sender) $(median <"$work/m"), slave (receiver)" \
  "$(median <"$work/s"), both $both"
echo "ratio volley/stream_ref: throughput $(ratio "$vol" "$ref"), CPU per KiB $(ratio "$both" "$refcpu")"
bench_footer "the reference is two processes, one per end"
