#!/usr/bin/env bash
# kwctl tests: run the built crfix policy with kwctl, as Kubewarden would, against the cases in
# e2e-tests/kwctl/cases/. Skipped (exit 0, with a visible message) when kwctl is not on PATH.
#
#   e2e-tests/kwctl/run.sh [CASE...]
#
# Each case directory holds:
#   request.json     the AdmissionReview
#   settings.yaml    policy settings (inline-crds.txt, if present, lists CRD files appended as
#                    `crds:` - schemaSource inline)
#   session.yml      kwctl --replay-host-capabilities-interactions session: the host's answers
#                    to the policy's kubernetes/get_resource calls (the CRD for schemaSource
#                    cluster, the Correction for the LLM path). Derived from host.yaml; the
#                    e2e manifests test checks it and rewrites it with CRFIX_BLESS=1.
#   expect.json      what kwctl's AdmissionResponse must show (check.py)
#
# The policy is taken from $CRFIX_POLICY_WASM (default target/wasm32-wasip1/release/
# crfix_policy.wasm) and annotated with metadata.yml into a temporary file.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

if ! command -v kwctl >/dev/null 2>&1; then
  echo "SKIPPED: kwctl not found on PATH - the kwctl tests did not run."
  echo "         Install kwctl (https://docs.kubewarden.io/howtos/install-kwctl) to run them."
  exit 0
fi
command -v python3 >/dev/null 2>&1 || { echo "error: the kwctl tests need python3 (check.py)" >&2; exit 1; }

WASM=${CRFIX_POLICY_WASM:-$ROOT/target/wasm32-wasip1/release/crfix_policy.wasm}
if [ ! -f "$WASM" ]; then
  echo "error: $WASM not found: build the policy first (make build-wasm)" >&2
  exit 1
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "kwctl $(kwctl --version 2>/dev/null | head -n1)"
if ! kwctl annotate "$WASM" --metadata-path "$ROOT/metadata.yml" --output-path "$WORK/policy.wasm" \
  >"$WORK/annotate.log" 2>&1; then
  echo "FAIL: kwctl annotate"
  cat "$WORK/annotate.log"
  exit 1
fi

if [ $# -gt 0 ]; then
  cases=()
  for name in "$@"; do cases+=("$HERE/cases/$name"); done
else
  cases=("$HERE"/cases/*/)
fi

passed=0
failed=0
for dir in "${cases[@]}"; do
  dir=${dir%/}
  name=$(basename "$dir")
  [ -f "$dir/request.json" ] || { echo "FAIL $name: no request.json"; failed=$((failed + 1)); continue; }

  settings="$WORK/$name.settings.yaml"
  cp "$dir/settings.yaml" "$settings"
  if [ -f "$dir/inline-crds.txt" ]; then
    echo "crds:" >>"$settings"
    while IFS= read -r crd || [ -n "$crd" ]; do
      [ -n "$crd" ] || continue
      echo "  -" >>"$settings"
      sed 's/^/    /' "$ROOT/$crd" >>"$settings"
    done <"$dir/inline-crds.txt"
  fi

  args=(run --settings-path "$settings" --request-path "$dir/request.json")
  if [ -f "$dir/session.yml" ]; then
    # Context-aware access only where a session answers the host calls: with the flag and no
    # session, kwctl builds a Kubernetes client and fails without a kubeconfig.
    args+=(--allow-context-aware --replay-host-capabilities-interactions "$dir/session.yml")
  elif [ -f "$dir/host.yaml" ]; then
    echo "FAIL $name: host.yaml without session.yml (CRFIX_BLESS=1 cargo test -p crfix-e2e-tests --test manifests)"
    failed=$((failed + 1))
    continue
  fi

  if ! kwctl "${args[@]}" "$WORK/policy.wasm" >"$WORK/$name.out" 2>"$WORK/$name.err"; then
    echo "FAIL $name: kwctl run exited with an error"
    sed 's/^/    /' "$WORK/$name.err" | tail -n 20
    failed=$((failed + 1))
    continue
  fi
  if grep -q "Replay error" "$WORK/$name.err"; then
    echo "FAIL $name: the policy's host calls differ from session.yml"
    grep "Replay error" "$WORK/$name.err" | sed 's/^/    /' | cut -c1-400
    failed=$((failed + 1))
    continue
  fi
  if python3 "$HERE/check.py" "$dir/request.json" "$dir/expect.json" "$WORK/$name.out" >"$WORK/$name.check" 2>&1; then
    echo "ok   $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name"
    cat "$WORK/$name.check"
    echo "    kwctl output: $(head -c 600 "$WORK/$name.out")"
    failed=$((failed + 1))
  fi
done

echo "kwctl tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
