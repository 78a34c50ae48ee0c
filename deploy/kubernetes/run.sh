#!/usr/bin/env bash
# Runs the example with PAIRS master-slave pairs on the current kubectl context and namespace:
# renders the manifests (render.sh), starts the slaves and waits until all are ready, starts the
# masters (master I loads slave I) with their timed steps LEAD seconds from now, waits for them
# and stops at the first that fails, gathers each master's result document from its log, merges
# them in a pod and prints the merged report.
# Usage: deploy/kubernetes/run.sh [PAIRS [LEAD_SECONDS]]   (defaults: 2, and 60 s for the pods to
# be scheduled, pull the image and finish their set-up steps; a master not started by then fails
# the run)
# Environment: OUT, where the results go (default volley-results): master-I.json and master-I.txt
# (each master's document and report), merged.json and merged.txt; and render.sh's VOLLEY_*.
# Exit status: 0 when every master and the merge succeeded; 1 otherwise (what failed is printed);
# 2 bad usage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pairs=${1:-2}
lead=${2:-60}
out=${OUT:-volley-results}
[[ $lead =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: LEAD_SECONDS must be a positive integer" >&2; exit 2; }
manifests=$(mktemp -d)
trap 'rm -rf "$manifests"' EXIT
"$here/render.sh" "$pairs" "$manifests"

fail() { echo "run.sh: $*" >&2; exit 1; }
masters=(-l job-name=volley-master)  # selects the masters' pods

# poll SECONDS WHAT REGEX ARGS...: prints `kubectl get ARGS` once its output matches REGEX,
# trying every 2 s; fails naming WHAT after SECONDS.
poll() {
  local seconds=$1 what=$2 regex=$3 value end
  shift 3
  end=$(($(date +%s) + seconds))
  while :; do
    value=$(kubectl get "$@" 2>/dev/null || true)
    if [[ $value =~ $regex ]]; then echo "$value"; return; fi
    (($(date +%s) < end)) || fail "$what: not after ${seconds} s"
    sleep 2
  done
}

# Names the failed masters, prints the end of each one's report, and stops.
masters_failed() {
  kubectl get pods "${masters[@]}" -o wide >&2 || true
  kubectl get job volley-master \
    -o jsonpath='{range .status.conditions[*]}{.type}: {.reason}: {.message}{"\n"}{end}' >&2 || true
  for pod in $(kubectl get pods "${masters[@]}" --field-selector=status.phase=Failed -o name); do
    echo "== $pod, the end of its report:" >&2
    kubectl logs "$pod" -c volley --tail=20 >&2 || true
  done
  fail "the masters failed; the Job volley-master is left to look at (kubectl delete job volley-master)"
}

# Leftovers of an earlier run: its masters (with their pods, whose logs must not be taken for
# this run's) and its merge.
kubectl delete job volley-master --ignore-not-found --cascade=foreground
kubectl delete pod volley-merge --ignore-not-found

# The slaves' pre-shared key (docs/security.md), made once: 32 random bytes as hex.
if ! kubectl get secret volley-key >/dev/null 2>&1; then
  kubectl create secret generic volley-key --from-literal=key="$(openssl rand -hex 32)"
fi
kubectl apply -f "$manifests/slaves.yaml"
kubectl rollout status statefulset/volley-slave --timeout=300s ||
  fail "the $pairs slaves are not all ready (one per node: kubectl get pods -l app=volley-slave)"

# One start time for every master, however late its pod is scheduled: Unix seconds.
start_at=$(($(date +%s) + lead))
kubectl create configmap volley-start --dry-run=client -o yaml \
  --from-literal=start-at="$start_at" | kubectl apply -f -
kubectl apply -f "$manifests/masters.yaml"

# Every 2 s until the Job is complete. A failed master fails the Job at once (backoffLimit 0),
# and so the run; so does a master whose volley has not started 10 s after the start time.
while :; do
  state=$(kubectl get job volley-master \
    -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}')
  case " $state " in
    *" Complete "*) break ;;
    *" Failed "* | *" FailureTarget "*) masters_failed ;;
  esac
  if [[ -n $(kubectl get pods "${masters[@]}" --field-selector=status.phase=Failed -o name) ]]; then
    masters_failed
  fi
  if (($(date +%s) > start_at + 10)); then
    started=$(kubectl get pods "${masters[@]}" -o jsonpath='{range .items[*]}{.status.initContainerStatuses[0].state.running.startedAt}{.status.initContainerStatuses[0].state.terminated.startedAt}{"\n"}{end}' | grep -c . || true)
    if ((started < pairs)); then
      kubectl get pods "${masters[@]}" -o wide >&2 || true
      kubectl delete job volley-master --wait=false >&2
      fail "$((pairs - started)) of $pairs masters had not started by the start time (kubectl describe pod says why; a longer LEAD_SECONDS may do)"
    fi
  fi
  sleep 2
done

# Each master's document is the log of its container `result`; its report, of `volley`.
mkdir -p "$out"
rm -f "$out"/master-*.json "$out"/master-*.txt "$out"/merged.json "$out"/merged.txt
pods=$(kubectl get pods "${masters[@]}" --field-selector=status.phase=Succeeded \
  -o jsonpath='{range .items[*]}{.metadata.annotations.batch\.kubernetes\.io/job-completion-index}{" "}{.metadata.name}{"\n"}{end}')
documents=()
for ((i = 0; i < pairs; i++)); do
  pod=$(awk -v i="$i" '$1 == i { print $2; exit }' <<<"$pods")
  [[ -n $pod ]] || fail "no master of index $i succeeded"
  kubectl logs "$pod" -c volley >"$out/master-$i.txt"
  kubectl logs "$pod" -c result >"$out/master-$i.json"
  [[ -s $out/master-$i.json ]] || fail "$pod printed no result document"
  documents+=("master-$i.json")
done

# The merge: copy the documents into the waiting pod, then its log is the merged report.
kubectl apply -f "$manifests/merge.yaml"
poll 300 "the merge pod's container upload running" . \
  pod/volley-merge -o jsonpath='{.status.initContainerStatuses[0].state.running.startedAt}' >/dev/null
tar -C "$out" -cf - "${documents[@]}" |
  kubectl exec -i volley-merge -c upload -- sh -c 'tar -xf - -C /results && touch /results/uploaded'
phase=$(poll 300 "the merge pod ended" '^(Succeeded|Failed)$' pod/volley-merge -o jsonpath='{.status.phase}')
kubectl logs volley-merge -c volley | tee "$out/merged.txt"
[[ $phase == Succeeded ]] || fail "the merge failed (kubectl describe pod volley-merge)"
kubectl logs volley-merge -c result >"$out/merged.json"
kubectl delete pod volley-merge --wait=false
echo "run.sh: results in $out/: master-I.json and merged.json, their reports in *.txt"
