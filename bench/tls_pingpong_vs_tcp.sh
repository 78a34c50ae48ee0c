#!/usr/bin/env bash
# What TLS costs a 64-byte ping-pong: volley's ping-pong over TLS 1.3 (connect protocol=tls with
# the -C suite) against the same profile over plain TCP, one connection per strand, per connection
# count (16 and 1024 by default), alternating TCP and TLS in each round; ratio of medians (TLS /
# TCP) of the rate and of the CPU per round trip, and the CPU per round trip of each end (master,
# slave, both). The connections, and so the handshakes, are made in a set-up transaction, outside
# the figures.
#
# usage: bench/tls_pingpong_vs_tcp.sh [-c "16 1024"] [-C aes128|chacha20|SUITE] [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES] [-b BUILD_DIR] [-a ARGS]
set -euo pipefail
conns="16 1024" rounds=3 seconds=3 size=64 cipher=aes128
usage='[-c "16 1024"] [-C aes128|chacha20|SUITE] [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-s BYTES] [-b BUILD_DIR] [-a ARGS]'
source "$(dirname "$0")/lib.sh"
bench_init "$@"
suite=$(tls_suite "$cipher")
pp="<flowop type=\"write\" options=\"size=$size\"/><flowop type=\"read\" options=\"size=$size\"/>"
bench_profile "$work/tcp.xml" '$t' "$pp" \
  '<flowop type="connect" options="remotehost=$h protocol=tcp"/>' '<flowop type="disconnect"/>'
bench_profile "$work/tls.xml" '$t' "$pp" \
  "<flowop type=\"connect\" options=\"remotehost=\$h protocol=tls tls_version=1.3 cipher=$suite\"/>" \
  '<flowop type="disconnect"/>'
tls_check "$work/tls.xml" --set t=1

echo "$size-byte ping-pong, TCP against TLS 1.3 ($suite); CPU: us per round trip"
printf "%-6s %9s %9s %6s | %7s %7s %7s | %7s %7s %7s %6s | %s\n" conns "tcp rt/s" "tls rt/s" \
  ratio "tcp m" "tcp s" "both" "tls m" "tls s" "both" "cpu" "rounds (tcp; tls)"
for c in $conns; do
  for f in tcp tls tcpm tcps tcpb tlsm tlss tlsb; do : >"$work/$f"; done
  for ((r = 1; r <= rounds; r++)); do
    for p in tcp tls; do
      bench_volley "$work/$p.xml" "$work/v.json" --set "t=$c"
      bench_json "$work/v.json" rate >>"$work/$p"
      bench_json "$work/v.json" us_master >>"$work/${p}m"
      bench_json "$work/v.json" us_slave >>"$work/${p}s"
      bench_json "$work/v.json" us_both >>"$work/${p}b"
    done
  done
  tcp=$(median <"$work/tcp") tls=$(median <"$work/tls")
  tcpb=$(median <"$work/tcpb") tlsb=$(median <"$work/tlsb")
  printf "%-6s %9.0f %9.0f %6s | %7.2f %7.2f %7.2f | %7.2f %7.2f %7.2f %6s | %s; %s\n" "$c" \
    "$tcp" "$tls" "$(ratio "$tls" "$tcp")" "$(median <"$work/tcpm")" "$(median <"$work/tcps")" \
    "$tcpb" "$(median <"$work/tlsm")" "$(median <"$work/tlss")" "$tlsb" "$(ratio "$tlsb" "$tcpb")" \
    "$(spread <"$work/tcp")" "$(spread <"$work/tls")"
done
echo "ratio and cpu: TLS / TCP of the rate and of both ends' CPU per round trip; m master, s slave;" \
  "rounds: the lowest and highest rate of each; the last TLS run's handshakes, full and resumed:" \
  "$(tls_handshakes "$work/v.json" all)"
bench_footer "both sides are volley"
