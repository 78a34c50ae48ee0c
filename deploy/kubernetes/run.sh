#!/usr/bin/env bash
# Runs the example end to end on the current kubectl context: slaves, then masters told to start
# their timed steps together LEAD seconds from now, then the merge. Prints the merged report.
# Usage: deploy/kubernetes/run.sh [LEAD_SECONDS]   (default 60: time for the pods to be scheduled,
# pull the image and finish their set-up steps; a master that is late says so in its result)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lead=${1:-60}
# The slaves' pre-shared key (docs/security.md), made once: 32 random bytes as hex.
if ! kubectl get secret volley-key >/dev/null 2>&1; then
  kubectl create secret generic volley-key --from-literal=key="$(openssl rand -hex 32)"
fi
kubectl apply -f "$here/results-pvc.yaml" -f "$here/slave.yaml"
kubectl rollout status deployment/volley-slave --timeout=300s
kubectl delete job volley-master volley-merge --ignore-not-found
kubectl create configmap volley-start --dry-run=client -o yaml \
  --from-literal=start-at="$(date -u -d "+${lead} seconds" +%Y-%m-%dT%H:%M:%SZ)" | kubectl apply -f -
kubectl apply -f "$here/master-job.yaml"
kubectl wait --for=condition=complete job/volley-master --timeout=1800s
kubectl apply -f "$here/merge-job.yaml"
kubectl wait --for=condition=complete job/volley-merge --timeout=300s
kubectl logs job/volley-merge
