#!/usr/bin/env bash
# Builds kubeconform (see go.mod for the version) and prints the path of the
# binary. Cached outside the checkout, keyed by everything that decides its
# content (module graph, toolchain, flags), like test/bmo/build.sh: only the
# first run on a machine compiles (about a minute).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly
package=github.com/yannh/kubeconform/cmd/kubeconform

flags=(-trimpath -buildvcs=false -ldflags "-s -w")
key="$( { cat go.mod go.sum; go version; echo "${flags[*]}"; } | sha256sum | cut -c1-16)"
cache_root="${HOSTCLAIM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hostclaim-apiserver}"
out="$cache_root/kubeconform/$key/kubeconform"
if [[ -x "$out" ]]; then echo "$out"; exit 0; fi

mkdir -p "$cache_root/kubeconform"
tmp="$(mktemp -d "$cache_root/kubeconform/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
echo "kubeconform: building $package $(go list -m -f '{{.Version}}' github.com/yannh/kubeconform) into $out" >&2
go build "${flags[@]}" -o "$tmp/kubeconform" "$package" >&2
echo "kubeconform: built in $((SECONDS - start))s" >&2
# Another build may have finished first; both produced the same content.
rm -rf "$(dirname "$out")"
mv "$tmp" "$(dirname "$out")"
trap - EXIT
echo "$out"
