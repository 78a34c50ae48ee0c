#!/usr/bin/env bash
# Installs, from Debian 12 packages only, whatever volley needs to build and test that is not
# already present. Idempotent: a second run installs nothing and takes about a second.
# Usage: scripts/install-deps.sh [program]
#   program: only what building the `volley` program needs (scripts/run-pingpong.sh), without the
#   test, benchmark, fuzzing, packaging and bench/ tools.
set -euo pipefail

program_packages=(
  build-essential cmake ninja-build pkg-config
  libpugixml-dev libboost1.81-dev libfmt-dev nlohmann-json3-dev libcli11-dev libssl-dev
  liburing-dev  # the io_uring engine (--io uring)
)
packages=(
  "${program_packages[@]}"
  libgtest-dev libgmock-dev libbenchmark-dev
  iproute2 procps
  dpkg-dev man-db python3-yaml   # packaging (dpkg-shlibdeps), man page and manifest checks
  nftables                       # the UDP loss test (tests/netns), run as root
  clang valgrind strace ccache   # scripts/fuzz.sh (libFuzzer), bench/ instruction and syscall counts, CI's cache
  clang-format-14 clang-tidy-14  # scripts/style.sh (CI: formatting of the tree, clang-tidy on what changed)
  iperf3 jq                      # bench/udp_vs_iperf3.sh
  openssl                        # bench/tls_handshakes_vs_s_time.sh (openssl s_server, s_time)
  chromium                       # the HTML pages rendered headless (tests/integration/html_pages_test.cpp)
)

case ${1:-all} in
  program) packages=("${program_packages[@]}") ;;
  all) ;;
  *) echo "usage: $0 [program]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
