#!/usr/bin/env bash
# Writes the serving certificate of hostclaim-apiserver for installs without
# cert-manager, into deploy/tls/ (or the directory given as $1):
#   ca.key ca.crt   a private CA (kept if ca.key already exists; 10 years)
#   tls.key tls.crt the serving certificate it signs (always renewed; 1 year),
#                   valid for hostclaim-apiserver.hostclaim-system.svc
# `kubectl apply -k deploy/` then puts tls.crt/tls.key/ca.crt in a Secret and
# ca.crt in the APIService's caBundle. ca.key never leaves this machine: keep
# it safe (it is what rotation reuses) and out of version control.
#
# Environment: SERVICE_NAME (hostclaim-apiserver), SERVICE_NAMESPACE
# (hostclaim-system), CERT_DAYS (365), CA_DAYS (3650).
set -euo pipefail
dir="${1:-$(cd "$(dirname "$0")" && pwd)/tls}"
service="${SERVICE_NAME:-hostclaim-apiserver}"
namespace="${SERVICE_NAMESPACE:-hostclaim-system}"
mkdir -p "$dir"
chmod 700 "$dir"
cd "$dir"
umask 077

if [[ ! -f ca.key ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 \
    -days "${CA_DAYS:-3650}" -subj "/CN=${service}-ca" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    -keyout ca.key -out ca.crt 2>/dev/null
  echo "created CA $dir/ca.crt" >&2
fi

openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=${service}" \
  -keyout tls.key.new -out tls.csr 2>/dev/null
openssl x509 -req -sha256 -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
  -days "${CERT_DAYS:-365}" -out tls.crt.new 2>/dev/null -extfile <(printf '%s\n' \
    "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature" \
    "extendedKeyUsage=serverAuth" \
    "subjectAltName=DNS:${service}.${namespace}.svc,DNS:${service}.${namespace}.svc.cluster.local")
mv tls.key.new tls.key
mv tls.crt.new tls.crt
rm -f tls.csr ca.srl
chmod 644 ca.crt tls.crt
echo "issued $dir/tls.crt for ${service}.${namespace}.svc, expires $(openssl x509 -noout -enddate -in tls.crt | cut -d= -f2)" >&2
