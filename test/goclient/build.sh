#!/usr/bin/env bash
# Builds hostclaim-goclient (a controller-runtime/client-go HostClaim client,
# see main.go) and prints the path of the binary.
#
# The binary is cached outside the checkout, keyed by everything that decides
# its content (module graph, sources, toolchain, flags), so only the first run
# on a machine compiles; the Go module and build caches make a cold rebuild
# cheaper.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly

flags=(-trimpath -buildvcs=false -ldflags "-s -w")
key="$( { cat go.mod go.sum; for f in $(LC_ALL=C ls -- *.go); do echo "$f"; cat "$f"; done; go version; echo "${flags[*]}"; } \
  | sha256sum | cut -c1-16)"
cache_root="${HOSTCLAIM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hostclaim-apiserver}"
out="$cache_root/goclient/$key"
bin="$out/hostclaim-goclient"
if [[ -x "$bin" ]]; then echo "$bin"; exit 0; fi

mkdir -p "$cache_root/goclient"
tmp="$(mktemp -d "$cache_root/goclient/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
echo "goclient: building into $out" >&2
go build "${flags[@]}" -o "$tmp/hostclaim-goclient" . >&2
echo "goclient: built in $((SECONDS - start))s" >&2
# Another build may have finished first; both produced the same content.
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "$bin"
