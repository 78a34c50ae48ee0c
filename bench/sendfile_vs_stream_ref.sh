#!/usr/bin/env bash
# One-way bulk with sendfile(2): volley's sendfile flowop against `stream_ref -f FILE`, both
# sending the same file (made here, -m MiB, 16 by default, from the page cache) over and over in
# -s byte chunks. The measuring and the placement (each end on a CPU of its own) are
# bench/bulk_vs_stream_ref.sh's; see there for the figures.
#
# usage: bench/sendfile_vs_stream_ref.sh [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES]
#        [-b BUILD_DIR]   (BENCH_FILE_MIB=N for the file's size; BENCH_CPUS="S R" | none and
#        BENCH_RT=1 as bench/bulk_vs_stream_ref.sh takes them)
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
head -c "$((${BENCH_FILE_MIB:-16} * 1048576))" /dev/urandom >"$dir/payload"
BENCH_SENDFILE="$dir/payload" "$(dirname "$0")/bulk_vs_stream_ref.sh" "$@"
