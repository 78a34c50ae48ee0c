#!/usr/bin/env bash
# A stand-in for kubectl that answers deploy/kubernetes/run.sh's calls as a cluster would, for
# tests/cli/kubernetes_example_test.cpp. Every call is logged to $STATE/calls; a call it does not
# know fails. SCENARIO: succeed (default), every master succeeds and prints $DOCUMENT as its
# result; pod-failed, master 1's pod has failed and the Job is not yet marked; job-failed, the Job
# failed (its deadline) with no failed pod; not-started, no master's volley starts. The merge
# pod's upload and merge are real: the upload command runs here, and so does the merge command of
# the applied merge.yaml, with /results in $STATE/results and $VOLLEY for volley.
# Environment: FAKE_KUBECTL_STATE, FAKE_KUBECTL_SCENARIO, FAKE_KUBECTL_DOCUMENT, FAKE_KUBECTL_VOLLEY.
set -euo pipefail
state=$FAKE_KUBECTL_STATE
echo "$*" >>"$state/calls"
unknown() { echo "fake kubectl: unexpected call: $*" >&2; exit 64; }
pairs() { sed -n 's/^  completions: \([0-9]*\)$/\1/p' "$state/masters.yaml"; }
scenario=${FAKE_KUBECTL_SCENARIO:-succeed}
case "$*" in
  "delete "* | "rollout status statefulset/volley-slave "* | "get secret volley-key") ;;
  "apply -f -") cat >"$state/stdin.yaml" ;;
  "apply -f "*) cp "$3" "$state/$(basename "$3")" ;;
  "create configmap volley-start "*) echo "kind: ConfigMap" ;;
  "get job volley-master -o jsonpath={range .status.conditions[?(@.status==\"True\")]}"*)
    case $scenario in succeed) echo -n "Complete " ;; job-failed) echo -n "Failed " ;; esac ;;
  "get job volley-master -o jsonpath={range .status.conditions[*]}"*)
    [[ $scenario != job-failed ]] || echo "Failed: DeadlineExceeded: Job was active longer than specified deadline" ;;
  "get pods -l job-name=volley-master -o wide") echo "NAME STATUS" ;;
  "get pods -l job-name=volley-master --field-selector=status.phase=Failed -o name")
    [[ $scenario != pod-failed ]] || echo "pod/volley-master-1-bbbbb" ;;
  "get pods -l job-name=volley-master --field-selector=status.phase=Succeeded -o jsonpath="*)
    for ((i = 0; i < $(pairs); i++)); do echo "$i volley-master-$i-aaaaa"; done ;;
  "get pods -l job-name=volley-master -o jsonpath="*)
    for ((i = 0; i < $(pairs); i++)); do
      if [[ $scenario == not-started ]]; then echo; else echo "2026-01-01T00:00:00Z"; fi
    done ;;
  "logs pod/volley-master-1-bbbbb -c volley --tail=20") echo "volley run: slave lost" ;;
  "logs volley-master-"*" -c volley") echo "report of $2" ;;
  "logs volley-master-"*" -c result") cat "$FAKE_KUBECTL_DOCUMENT" ;;
  "get pod/volley-merge -o jsonpath={.status.initContainerStatuses[0].state.running.startedAt}")
    echo "2026-01-01T00:00:00Z" ;;
  "exec -i volley-merge -c upload -- sh -c "*)
    # The upload (reading the documents from standard input), then the pod's merge command.
    mkdir -p "$state/results"
    sh -c "${9//\/results/$state/results}"
    python3 - "$state" "$FAKE_KUBECTL_VOLLEY" <<'EOF' >"$state/merge.log" 2>&1 && echo Succeeded >"$state/phase" || echo Failed >"$state/phase"
import json, subprocess, sys
state, volley = sys.argv[1], sys.argv[2]
line = next(l for l in open(state + "/merge.yaml") if '"volley", "merge"' in l)
args = json.loads(line.split("command:", 1)[1])
args = [volley] + [a.replace("/results", state + "/results") for a in args[1:]]
sys.exit(subprocess.run(args).returncode)
EOF
    ;;
  "get pod/volley-merge -o jsonpath={.status.phase}") cat "$state/phase" ;;
  "logs volley-merge -c volley") cat "$state/merge.log" ;;
  "logs volley-merge -c result") cat "$state/results/merged.json" ;;
  *) unknown "$@" ;;
esac
