#!/usr/bin/env bash
# Runs the LLM cases against the local model: starts the llama.cpp server (unless one is already
# running), runs crfix-e2e-llm (which starts and stops crfix-llm-proxy itself), and stops the
# server again if this script started it — also on failure, Ctrl-C or kill (which also stops the
# runner and the proxy it started).
#
#   scripts/e2e-llm/run.sh RUNNER [runner args...]
#
# The runner's exit code is passed on: 0 green, 1 red (a wrong fix was accepted, or a host
# error), 2 the runner could not run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
source "$here/common.sh"

[[ $# -ge 1 && -x "$1" ]] || die "usage: $0 RUNNER [args...] (RUNNER: the built crfix-e2e-llm)"
runner="$1"
shift

started=0
runner_pid=""
stop_all() {
  # The runner's own children (crfix-llm-proxy) first: a runner killed by a signal cannot stop
  # the proxy it started.
  if [[ -n "$runner_pid" ]]; then
    pkill -TERM -P "$runner_pid" 2>/dev/null || true
    kill -TERM "$runner_pid" 2>/dev/null || true
  fi
  if [[ "$started" == 1 ]]; then "$here/server.sh" stop || true; fi
}
trap stop_all EXIT
trap 'exit 130' INT TERM

if out="$("$here/server.sh" status 2>/dev/null)"; then
  log "using the llama.cpp server that is already running (it is left running)"
else
  started=1
  out="$("$here/server.sh" start)"
fi
url="$(sed -n 's/^LOCAL_LLM_URL=//p' <<<"$out")"
alias="$(sed -n 's/^CRFIX_LLM_MODEL_ALIAS=//p' <<<"$out")"
[[ -n "$url" ]] || die "server.sh did not report LOCAL_LLM_URL"
log "model server $url ($alias, ${CRFIX_LLM_THREADS:-2} thread(s)); load average $(cut -d' ' -f1-3 /proc/loadavg)"

rc=0
# In the background so that a signal reaches the trap while the runner is still running.
"$runner" --llm-url "$url" --model "$alias" "$@" &
runner_pid=$!
wait "$runner_pid" || rc=$?
runner_pid=""
exit "$rc"
