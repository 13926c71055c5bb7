#!/usr/bin/env bash
# Builds the metal3 baremetal-operator (BMO, see go.mod for the version) and
# prints the directory holding it:
#   <dir>/baremetal-operator   the binary
#   <dir>/crds/*.yaml          the CRDs it needs (config/base/crds/bases of the module)
#
# The directory is cached outside the checkout, keyed by everything that
# decides its content (module graph, toolchain, flags), so only the first run
# on a machine compiles; the Go module and build caches make a cold rebuild
# cheaper.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly
module=github.com/metal3-io/baremetal-operator

flags=(-trimpath -buildvcs=false -ldflags "-s -w")
key="$( { cat go.mod go.sum; go version; echo "${flags[*]}"; } | sha256sum | cut -c1-16)"
cache_root="${HOSTCLAIM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hostclaim-apiserver}"
out="$cache_root/bmo/$key"
if [[ -x "$out/baremetal-operator" && -d "$out/crds" ]]; then echo "$out"; exit 0; fi

mkdir -p "$cache_root/bmo"
tmp="$(mktemp -d "$cache_root/bmo/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
echo "bmo: building $module $(go list -m -f '{{.Version}}' "$module") into $out" >&2
go build "${flags[@]}" -o "$tmp/baremetal-operator" "$module" >&2
mkdir "$tmp/crds"
cp "$(go list -m -f '{{.Dir}}' "$module")"/config/base/crds/bases/*.yaml "$tmp/crds/"
chmod u+w "$tmp/crds"/*.yaml # the module cache is read-only; keep the copies removable
echo "bmo: built in $((SECONDS - start))s" >&2
# Another build may have finished first; both produced the same content.
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "$out"
