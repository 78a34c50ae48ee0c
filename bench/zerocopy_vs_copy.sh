#!/usr/bin/env bash
# What zerocopy buys volley's bulk writes on this machine: one stream of -s byte writes, plain
# (send copies the bytes into the socket) and with zerocopy (MSG_ZEROCOPY: the kernel sends from
# the pages and reports each send when done with it), alternating plain zerocopy in each round at
# each size. Prints every round (Gbit/s, CPU per KiB of the writer, the master, and of both ends),
# then per size the medians, each round's ratio zerocopy / plain and the lowest, and what the
# kernel said of the zero-copy sends of the measured step: how many it sent from the pages and how
# many it copied anyway. On loopback it copies every one (a local receiver gets a copy), so there
# zerocopy pays its own costs (pinning the pages, the completions) and saves no copy.
#
# usage: bench/zerocopy_vs_copy.sh [-s "65536 1048576"] [-r ROUNDS] [-d SECONDS] [-w WARMUP]
#        [-b BUILD_DIR] [-a "ARGS"]
set -euo pipefail
rounds=5 seconds=3 size="65536 1048576"
usage='[-s "65536 1048576"] [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-b BUILD_DIR] [-a "ARGS"]'
source "$(dirname "$0")/lib.sh"
bench_init "$@"
connect='<flowop type="connect" options="remotehost=$h protocol=tcp"/>'

# The measured step's zero-copy counts, summed over its flowops: "SENDS ZERO_COPIED COPIED".
zerocopy_counts() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
step = d["timed_steps"][-1]
sums = [0, 0, 0]
for g in d["groups"]:
    for t in g["transactions"]:
        if t["step"] != step:
            continue
        for f in t["flowops"]:
            z = f.get("zerocopy")
            if z:
                sums = [sums[0] + z["sends"], sums[1] + z["zero_copied"], sums[2] + z["copied"]]
print(*sums)
PY
}

echo "round size mode gbit us_kb_writer us_kb_both zc_sends zc_zero_copied zc_copied"
for s in $size; do
  bench_profile "$work/plain-$s.xml" 1 "<flowop type=\"write\" options=\"size=$s\"/>" \
    "$connect" '<flowop type="disconnect"/>'
  bench_profile "$work/zerocopy-$s.xml" 1 "<flowop type=\"write\" options=\"size=$s zerocopy\"/>" \
    "$connect" '<flowop type="disconnect"/>'
  for ((r = 1; r <= rounds; r++)); do
    for mode in plain zerocopy; do
      bench_volley "$work/$mode-$s.xml" "$work/v.json"
      counts="- - -"
      [[ $mode == zerocopy ]] && counts=$(zerocopy_counts "$work/v.json")
      echo "$r $s $mode $(bench_json "$work/v.json" gbit) $(bench_json "$work/v.json" us_kb_master)" \
        "$(bench_json "$work/v.json" us_kb_both) $counts" | tee -a "$work/runs"
    done
  done
done
echo
echo "one stream, medians; CPU in us per KiB moved (writer = master)"
echo "size      plain  zerocopy  zerocopy/plain each round (lowest)  writer z/p  both z/p  copied"
for s in $size; do
  col() { awk -v s="$s" -v m="$1" -v c="$2" '$2==s && $3==m {print $c}' "$work/runs"; }
  pg=$(col plain 4 | median) zg=$(col zerocopy 4 | median)
  pw=$(col plain 5 | median) zw=$(col zerocopy 5 | median)
  pb=$(col plain 6 | median) zb=$(col zerocopy 6 | median)
  each=$(paste -d' ' <(col zerocopy 4) <(col plain 4) |
    awk '{r = ($2 > 0 ? $1 / $2 : 0); printf "%.2f ", r; if (NR == 1 || r < lo) lo = r}
         END {printf "(%.2f)", lo}')
  copied=$(awk -v s="$s" '$2==s && $3=="zerocopy" {sends += $7; zc += $8; cp += $9}
    END {if (zc + cp > 0) printf "%d of %d sends reported (%.0f%%), %d from the pages", cp, zc + cp,
         100 * cp / (zc + cp), zc; else printf "no report"}' "$work/runs")
  printf "%-8s %6.1f %9.1f  %-34s %10s %9s  %s\n" "$s" "$pg" "$zg" "$each" "$(ratio "$zw" "$pw")" \
    "$(ratio "$zb" "$pb")" "$copied"
done
bench_footer "both are volley, master and a local slave"
