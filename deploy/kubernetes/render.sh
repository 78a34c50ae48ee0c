#!/usr/bin/env bash
# Writes the example's manifests for PAIRS master-slave pairs into DIR, from the templates beside
# this script: slaves.yaml (StatefulSet and headless Service volley-slave, PAIRS pods),
# masters.yaml (Indexed Job volley-master, PAIRS pods; master I loads volley-slave-I) and
# merge.yaml (Pod volley-merge, merging master-0.json ... master-<PAIRS-1>.json).
# Usage: deploy/kubernetes/render.sh PAIRS DIR
# Environment (defaults in brackets): VOLLEY_IMAGE [volley:0.1.0]; VOLLEY_CPUS [2], whole CPUs of
# each slave and master (requests = limits, and their --workers); VOLLEY_MEMORY [256Mi];
# VOLLEY_STRANDS [16], the profile's t; VOLLEY_DEADLINE [3600], seconds the masters' Job may take.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: render.sh PAIRS DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
pairs=$1
dir=$2
image=${VOLLEY_IMAGE:-volley:0.1.0}
cpus=${VOLLEY_CPUS:-2}
memory=${VOLLEY_MEMORY:-256Mi}
strands=${VOLLEY_STRANDS:-16}
deadline=${VOLLEY_DEADLINE:-3600}
# Each value must be what its field takes (and has no character that sed would read).
check() { [[ $2 =~ $3 ]] || { echo "render.sh: $1 '$2' is not $4" >&2; exit 2; }; }
check PAIRS "$pairs" '^[1-9][0-9]*$' "a positive integer"
check VOLLEY_IMAGE "$image" '^[A-Za-z0-9][A-Za-z0-9._/:@-]*$' "an image reference"
check VOLLEY_CPUS "$cpus" '^[1-9][0-9]*$' "a whole number of CPUs"
check VOLLEY_MEMORY "$memory" '^[1-9][0-9]*(Ki|Mi|Gi)?$' "a quantity such as 256Mi"
check VOLLEY_STRANDS "$strands" '^[1-9][0-9]*$' "a positive integer"
check VOLLEY_DEADLINE "$deadline" '^[1-9][0-9]*$' "a positive number of seconds"
# The merge's inputs, as the items of a flow sequence: "/results/master-0.json", ...
results="\"/results/master-0.json\""
for ((i = 1; i < pairs; i++)); do results+=", \"/results/master-$i.json\""; done
mkdir -p "$dir"
for name in slaves masters merge; do
  sed -e "s|@PAIRS@|$pairs|g" -e "s|@IMAGE@|$image|g" -e "s|@CPUS@|$cpus|g" \
      -e "s|@MEMORY@|$memory|g" -e "s|@STRANDS@|$strands|g" -e "s|@DEADLINE@|$deadline|g" \
      -e "s|@RESULTS@|$results|g" "$here/$name.yaml.in" > "$dir/$name.yaml"
done
