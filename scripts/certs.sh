#!/usr/bin/env bash
# Serving certificate for crfix-llm-proxy, and the kustomize overlay that installs it.
#
#   scripts/certs.sh [--out DIR] [--namespace NS] [--service NAME] [--days N] [--force]
#   scripts/certs.sh --cert-manager
#
# Writes into DIR (default config/generated/certs/, git-ignored):
#   ca.crt ca.key          a private CA that only the APIService trusts
#   tls.crt tls.key        the proxy's serving certificate for NAME.NS.svc, signed by the CA
#   apiservice-cabundle.yaml  patch: the APIService caBundle = ca.crt
#   kustomization.yaml     overlay: config/default + the TLS Secret + the caBundle patch
# Then: kubectl apply -k DIR
#
# Safe to re-run: a CA and a certificate that are valid for more than 30 more days, match their
# keys and names, and chain to each other are kept as they are; otherwise what needs it is
# renewed. The TLS Secret gets a content-hash suffix, so a renewed certificate rolls the proxy.
#
# --cert-manager: do nothing here; cert-manager issues the certificate and injects the
# caBundle (kubectl apply -k config/cert-manager).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT="$ROOT/config/generated/certs"
NAMESPACE=crfix-system
SERVICE=crfix-llm-proxy
DAYS=365
CA_DAYS=3650
RENEW_SECONDS=$((30 * 24 * 3600))
FORCE=0

die() {
  echo "certs.sh: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT=${2:?--out needs a directory}; shift 2 ;;
    --namespace) NAMESPACE=${2:?--namespace needs a value}; shift 2 ;;
    --service) SERVICE=${2:?--service needs a value}; shift 2 ;;
    --days) DAYS=${2:?--days needs a value}; shift 2 ;;
    --force) FORCE=1; shift ;;
    --cert-manager)
      echo "certs.sh: cert-manager mode: nothing to generate."
      echo "  Install cert-manager, then: kubectl apply -k config/cert-manager"
      exit 0 ;;
    -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

command -v openssl >/dev/null 2>&1 || die "openssl not found on PATH: install OpenSSL (or use --cert-manager)"
case "$DAYS" in ''|*[!0-9]*) die "--days must be a number of days" ;; esac
[ "$DAYS" -gt 30 ] || die "--days must be more than 30 (certificates are renewed 30 days before they expire)"

DNS1="$SERVICE.$NAMESPACE.svc"
DNS2="$SERVICE.$NAMESPACE.svc.cluster.local"
DNS3="$SERVICE.$NAMESPACE"

mkdir -p "$OUT"
umask 077
WORK=$(mktemp -d "$OUT/.certs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

valid_for_a_while() { # cert
  [ -s "$1" ] && openssl x509 -in "$1" -noout -checkend "$RENEW_SECONDS" >/dev/null 2>&1
}

key_matches() { # cert key
  [ -s "$2" ] || return 1
  local a b
  a=$(openssl x509 -in "$1" -noout -pubkey 2>/dev/null | openssl sha256) || return 1
  b=$(openssl pkey -in "$2" -pubout 2>/dev/null | openssl sha256) || return 1
  [ -n "$a" ] && [ "$a" = "$b" ]
}

names_match() { # cert
  local text
  text=$(openssl x509 -in "$1" -noout -text 2>/dev/null) || return 1
  for name in "$DNS1" "$DNS2" "$DNS3"; do
    printf '%s' "$text" | grep -q "DNS:$name\(,\|$\)" || return 1
  done
}

new_key() { # path
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null \
    || die "openssl could not generate an EC P-256 key"
}

renew_ca=1
if [ "$FORCE" = 0 ] && valid_for_a_while "$OUT/ca.crt" && key_matches "$OUT/ca.crt" "$OUT/ca.key"; then
  renew_ca=0
fi

if [ "$renew_ca" = 1 ]; then
  echo "certs.sh: creating a new CA in $OUT"
  new_key "$WORK/ca.key"
  cat >"$WORK/ca.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
x509_extensions = ext
[dn]
CN = crfix-llm-proxy-ca
[ext]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
EOF
  openssl req -x509 -new -key "$WORK/ca.key" -sha256 -days "$CA_DAYS" \
    -config "$WORK/ca.cnf" -out "$WORK/ca.crt" 2>/dev/null || die "openssl could not create the CA"
  mv -f "$WORK/ca.key" "$OUT/ca.key"
  mv -f "$WORK/ca.crt" "$OUT/ca.crt"
fi

renew_cert=1
if [ "$renew_ca" = 0 ] && valid_for_a_while "$OUT/tls.crt" && key_matches "$OUT/tls.crt" "$OUT/tls.key" \
  && names_match "$OUT/tls.crt" \
  && openssl verify -CAfile "$OUT/ca.crt" "$OUT/tls.crt" >/dev/null 2>&1; then
  renew_cert=0
fi

if [ "$renew_cert" = 1 ]; then
  echo "certs.sh: issuing the serving certificate for $DNS1"
  new_key "$WORK/tls.key"
  cat >"$WORK/tls.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = $DNS1
[ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:$DNS1, DNS:$DNS2, DNS:$DNS3
authorityKeyIdentifier = keyid
subjectKeyIdentifier = hash
EOF
  openssl req -new -key "$WORK/tls.key" -config "$WORK/tls.cnf" -out "$WORK/tls.csr" 2>/dev/null \
    || die "openssl could not create the certificate request"
  openssl x509 -req -in "$WORK/tls.csr" -CA "$OUT/ca.crt" -CAkey "$OUT/ca.key" -CAcreateserial \
    -CAserial "$WORK/ca.srl" -sha256 -days "$DAYS" -extfile "$WORK/tls.cnf" -extensions ext \
    -out "$WORK/tls.crt" 2>/dev/null || die "openssl could not sign the serving certificate"
  openssl verify -CAfile "$OUT/ca.crt" "$WORK/tls.crt" >/dev/null || die "the new certificate does not verify"
  mv -f "$WORK/tls.key" "$OUT/tls.key"
  mv -f "$WORK/tls.crt" "$OUT/tls.crt"
else
  echo "certs.sh: keeping the current CA and serving certificate (valid for more than 30 days)"
fi

# Manifests: always rewritten from the files above, so they never disagree with them.
umask 022
CA_BUNDLE=$(openssl base64 -A -in "$OUT/ca.crt")
REL_DEFAULT=$(python3 -c 'import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' \
  "$ROOT/config/default" "$OUT" 2>/dev/null || echo "../default")

cat >"$WORK/apiservice-cabundle.yaml" <<EOF
# Written by scripts/certs.sh - do not edit. The CA that signed crfix-llm-proxy's certificate.
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1alpha1.crfix.dev
spec:
  caBundle: $CA_BUNDLE
EOF
cat >"$WORK/kustomization.yaml" <<EOF
# Written by scripts/certs.sh - do not edit; re-run the script instead.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $REL_DEFAULT
secretGenerator:
  - name: $SERVICE-tls
    namespace: $NAMESPACE
    type: kubernetes.io/tls
    files:
      - tls.crt
      - tls.key
patches:
  - path: apiservice-cabundle.yaml
EOF
mv -f "$WORK/apiservice-cabundle.yaml" "$OUT/apiservice-cabundle.yaml"
mv -f "$WORK/kustomization.yaml" "$OUT/kustomization.yaml"
chmod 600 "$OUT/ca.key" "$OUT/tls.key"

echo "certs.sh: $OUT is ready: kubectl apply -k $OUT"
echo "  serving certificate expires: $(openssl x509 -in "$OUT/tls.crt" -noout -enddate | cut -d= -f2)"
