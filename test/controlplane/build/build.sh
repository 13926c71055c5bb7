#!/usr/bin/env bash
# Usage: build.sh [vX.Y.Z]
# Builds etcd, kube-apiserver, kube-controller-manager and kubectl of one
# Kubernetes release from Go modules (v<major>.<minor>/go.mod) and prints the
# directory holding them. Without an argument: the default release, the first
# line of ./kubernetes-versions (the newest supported one), or
# $HOSTCLAIM_KUBERNETES_VERSION when set.
#
# Binaries are cached outside the checkout, keyed by everything that decides
# their content, so a second start - or a fresh clone on the same machine -
# never rebuilds. The Go module and build caches make a cold rebuild cheaper.
# Different releases build in different directories, so they may build at once.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
kube="${1:-${HOSTCLAIM_KUBERNETES_VERSION:-$(grep -m1 -E '^v' kubernetes-versions)}}"
moddir="${kube%.*}"
if ! grep -qsE "^(require )?[[:space:]]*k8s.io/kubernetes $kube( |$)" "$moddir/go.mod"; then
  echo "controlplane: no go.mod for $kube yet; generating $moddir/go.mod" >&2
  ./gen-gomod.sh "$kube"
  (cd "$moddir" && GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod tidy >&2)
fi
cd "$moddir"

minor="${kube#v1.}"; minor="${minor%%.*}"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube \
  -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
  -X k8s.io/component-base/version.gitTreeState=clean"
# The cache key covers what decides the binaries: module graph, toolchain, flags.
key="$( { cat go.mod go.sum; go version; echo "$ldflags"; } | sha256sum | cut -c1-16)"
cache_root="${HOSTCLAIM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hostclaim-apiserver}"
out="$cache_root/controlplane/$kube-$key"
binaries=(etcd kube-apiserver kube-controller-manager kubectl)
complete=1
for b in "${binaries[@]}"; do [[ -x "$out/$b" ]] || complete=0; done
if [[ $complete == 1 ]]; then echo "$out"; exit 0; fi

tmp="$(mktemp -d "$cache_root/controlplane/.build-XXXXXX" 2>/dev/null || { mkdir -p "$cache_root/controlplane"; mktemp -d "$cache_root/controlplane/.build-XXXXXX"; })"
trap 'rm -rf "$tmp"' EXIT
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
start=$SECONDS
echo "controlplane: building Kubernetes $kube binaries into $out (cold build: tens of minutes)" >&2
go build -trimpath -o "$tmp/etcd" go.etcd.io/etcd/server/v3 >&2
for cmd in kube-apiserver kube-controller-manager kubectl; do
  go build -trimpath -ldflags "$ldflags" -o "$tmp/$cmd" "k8s.io/kubernetes/cmd/$cmd" >&2
done
echo "controlplane: built in $((SECONDS - start))s" >&2
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "$out"
