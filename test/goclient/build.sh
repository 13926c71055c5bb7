#!/usr/bin/env bash
# Builds one of this module's commands and prints the path of the binary:
#   build.sh              hostclaim-goclient (CRUD and informers, main.go)
#   build.sh capm3flow    hostclaim-capm3flow (the CAPM3 HostClaim-mode flow)
#
# The binary is cached outside the checkout, keyed by everything that decides
# its content (this script, module graph, this module's and api/go's sources, toolchain,
# flags), so only the first run on a machine compiles; the Go module and
# build caches make a cold rebuild cheaper.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly

case "${1:-}" in
  "") package=. name=hostclaim-goclient ;;
  capm3flow) package=./capm3flow name=hostclaim-capm3flow ;;
  *) echo "usage: $0 [capm3flow]" >&2; exit 2 ;;
esac

flags=(-trimpath -buildvcs=false -ldflags "-s -w")
# api/go is required through a replace directive: its sources are inputs too.
sources="$(cd "$here/../.." && LC_ALL=C find test/goclient api/go -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) | LC_ALL=C sort)"
key="$( { echo "$package"; cat "$here/build.sh"; for f in $sources; do echo "$f"; cat "$here/../../$f"; done; go version; echo "${flags[*]}"; } \
  | sha256sum | cut -c1-16)"
cache_root="${HOSTCLAIM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hostclaim-apiserver}"
out="$cache_root/goclient/$key"
bin="$out/$name"
if [[ -x "$bin" ]]; then echo "$bin"; exit 0; fi

mkdir -p "$cache_root/goclient"
tmp="$(mktemp -d "$cache_root/goclient/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
echo "goclient: building $name into $out" >&2
go build "${flags[@]}" -o "$tmp/$name" "$package" >&2
# The Go API package the commands use, with its compiled example (docs/go-client.md).
(cd ../../api/go && go vet ./... >&2)
echo "goclient: built in $((SECONDS - start))s" >&2
# Another build may have finished first; both produced the same content.
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "$bin"
