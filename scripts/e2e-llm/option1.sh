#!/usr/bin/env bash
# Runs every LLM case against a fake model that answers option 1 to every choice (what the 1.5B
# model does in 46 of 47 choices, docs/llm.md "Certainty"): a check of every case in seconds,
# to see which cases a change moves before the real model is run. It is no measure of crfix.
# With CRFIX_REPLAY="RUN.json ..." the fake replays the real model's answers recorded in those
# runs instead (its written patches included, which option 1 never exercises); a prompt no run
# recorded gets the answer recorded for the same object and kind of question, else option 1.
#
#   [CRFIX_REPLAY="RUN.json ..."] scripts/e2e-llm/option1.sh WASM OUT.json [CASES_DIR]
#
# Needs `cargo build -p fake-llm -p crfix-e2e-tests -p crfix-llm-proxy` (debug builds).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[[ $# -ge 2 ]] || { echo "usage: $0 WASM OUT.json [CASES_DIR]" >&2; exit 2; }
wasm="$1" out="$2" cases="${3:-e2e-tests/llm-cases}"
url_file="$(mktemp)"
if [[ -n "${CRFIX_REPLAY:-}" ]]; then
  # shellcheck disable=SC2086 # a list of files
  target/debug/fake-llm --replay $CRFIX_REPLAY >"$url_file" 2>"${out%.json}.fake.log" &
else
  target/debug/fake-llm '{"choice": 1}' >"$url_file" 2>/dev/null &
fi
fake=$!
trap 'kill "$fake" 2>/dev/null || true; rm -f "$url_file"' EXIT
for _ in $(seq 100); do [[ -s "$url_file" ]] && break; sleep 0.1; done
url="$(head -1 "$url_file")"
[[ -n "$url" ]] || { echo "fake-llm did not start" >&2; exit 2; }
CRFIX_PROXY_BIN="${CRFIX_PROXY_BIN:-$PWD/target/debug/crfix-llm-proxy}" \
  target/debug/crfix-e2e-llm --llm-url "$url" --policy "$wasm" --json-out "$out" --cases "$cases" \
  >"${out%.json}.log" 2>&1 || true
python3 scripts/e2e-llm/batches.py "$out" | tail -1
if [[ -n "${CRFIX_REPLAY:-}" ]]; then
  echo "prompts no run recorded: $(grep -c 'not recorded' "${out%.json}.fake.log" || true)" \
    "(${out%.json}.fake.log)"
fi
