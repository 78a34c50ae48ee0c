#!/usr/bin/env bash
# One-way bulk throughput over TLS 1.3, one stream of -s byte writes (64 KiB by default): volley
# (connect protocol=tls with the -C suite) against the plain OpenSSL reference bench/ref/tls_stream
# (blocking SSL_write loop against a blocking SSL_read loop, two processes, the same suite),
# alternating A B A B; ratio of medians (volley / tls_stream) and process CPU per KiB moved on
# each end (writer: volley's master, tls_stream's child; reader: volley's slave, tls_stream's
# parent) and both. -C: aes128 (TLS_AES_128_GCM_SHA256, the default), chacha20
# (TLS_CHACHA20_POLY1305_SHA256), aes256, or a TLS 1.3 suite's name. With BENCH_REF_ONLY=1 only
# tls_stream runs (for a volley without TLS: the script otherwise stops with status 2).
#
# usage: bench/tls_bulk_vs_tls_stream.sh [-C aes128|chacha20|SUITE] [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES] [-b BUILD_DIR] [-a ARGS]
set -euo pipefail
rounds=3 seconds=3 size=65536 cipher=aes128
usage='[-C aes128|chacha20|SUITE] [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES] [-b BUILD_DIR] [-a ARGS]'
source "$(dirname "$0")/lib.sh"
bench_init "$@"
suite=$(tls_suite "$cipher")
bench_profile "$work/bulk.xml" 1 "<flowop type=\"write\" options=\"size=$size\"/>" \
  "<flowop type=\"connect\" options=\"remotehost=\$h protocol=tls tls_version=1.3 cipher=$suite\"/>" \
  '<flowop type="disconnect"/>'
ref_only=${BENCH_REF_ONLY:-0}
[[ $ref_only == 1 ]] || tls_check "$work/bulk.xml"
tls_stream=$(bench_ref tls_stream -lssl -lcrypto)

for f in ref vol refw refr refb m s b; do : >"$work/$f"; done
for ((r = 1; r <= rounds; r++)); do
  out=$("$tls_stream" -c "$suite" -s "$size" -d "$seconds" -w "$warmup")
  bench_field "$out" gbit_per_sec >>"$work/ref"
  bench_field "$out" writer_us_per_kb >>"$work/refw"
  bench_field "$out" reader_us_per_kb >>"$work/refr"
  bench_field "$out" us_cpu_per_kb >>"$work/refb"
  [[ $ref_only == 1 ]] && continue
  bench_volley "$work/bulk.xml" "$work/v.json"
  bench_json "$work/v.json" gbit >>"$work/vol"
  bench_json "$work/v.json" us_kb_master >>"$work/m"
  bench_json "$work/v.json" us_kb_slave >>"$work/s"
  bench_json "$work/v.json" us_kb_both >>"$work/b"
done
ref=$(median <"$work/ref") refb=$(median <"$work/refb")
refw=$(median <"$work/refw") refr=$(median <"$work/refr")
echo "one stream over TLS 1.3, $suite, $size bytes per write"
echo "tls_stream: $(tr '\n' ' ' <"$work/ref")-> median $ref Gbit/s"
if [[ $ref_only == 1 ]]; then
  echo "CPU us/KiB: tls_stream writer $refw, reader $refr, both $refb (volley not run)"
  bench_footer "the reference is two processes, one per end"
  exit 0
fi
vol=$(median <"$work/vol") m=$(median <"$work/m") s=$(median <"$work/s") both=$(median <"$work/b")
echo "volley:     $(tr '\n' ' ' <"$work/vol")-> median $vol Gbit/s" \
  "(TLS handshakes of the last run, full and resumed: $(tls_handshakes "$work/v.json" all))"
echo "CPU us/KiB: tls_stream writer $refw, reader $refr, both $refb;" \
  "volley master (writer) $m, slave (reader) $s, both $both"
echo "ratio volley/tls_stream: throughput $(ratio "$vol" "$ref"), CPU per KiB writer" \
  "$(ratio "$m" "$refw"), reader $(ratio "$s" "$refr"), both $(ratio "$both" "$refb")"
bench_footer "the reference is two processes, one per end"
