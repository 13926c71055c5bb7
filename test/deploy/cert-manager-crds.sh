#!/usr/bin/env bash
# Prints a directory holding cert-manager's CRDs (deploy/crds of its Go
# module, see CERT_MANAGER_VERSION), for the server-side dry-run of
# deploy/overlays/cert-manager. The Go module cache is the cache: only the
# first run on a machine downloads.
set -euo pipefail
version="${CERT_MANAGER_VERSION:-v1.21.2}"
module=github.com/cert-manager/cert-manager
dir="$(GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [[ -z "$dir" || ! -d "$dir/deploy/crds" ]]; then
  echo "cert-manager-crds: $module@$version has no deploy/crds" >&2
  exit 1
fi
echo "$dir/deploy/crds"
