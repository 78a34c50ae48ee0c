#!/usr/bin/env bash
# Builds the example's image from volley's Debian package: the build context is a temporary
# folder holding only the Dockerfile and the one volley_*.deb of BUILD_DIR (a few MB), not the
# build folder itself (GBs of objects).
# Usage: deploy/kubernetes/image.sh [BUILD_DIR [TAG]]   (defaults: build, volley:0.1.0)
# Environment: DOCKER, the command that builds (default docker; podman takes the same arguments).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
tag=${2:-volley:0.1.0}
shopt -s nullglob
debs=("$build"/volley_*.deb)
if [[ ${#debs[@]} -ne 1 ]]; then
  echo "image.sh: expected one volley_*.deb in $build, found ${#debs[@]} (scripts/package-check.sh builds it)" >&2
  exit 1
fi
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "$here/Dockerfile" "${debs[0]}" "$context/"
${DOCKER:-docker} build -t "$tag" "$context"
