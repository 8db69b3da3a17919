#!/usr/bin/env bash
# Starts, stops or reports the local llama.cpp server (llama-cpp-python) used by `make e2e-llm`.
#
#   server.sh start    start on 127.0.0.1 and wait until /v1/models answers; prints LOCAL_LLM_URL=...
#   server.sh stop     stop the server this script started (pid file), nothing else
#   server.sh status   exit 0 and print LOCAL_LLM_URL=... when running, exit 3 when not
#
#   CRFIX_LLM_PORT           port (default 18080; if unset and 18080 is taken, a free port is used)
#   CRFIX_LLM_MODEL          1.5b (default) or 0.5b
#   CRFIX_LLM_START_TIMEOUT  seconds to wait for the server to answer (default 180)
#   CRFIX_LLM_THREADS, CRFIX_LLM_CTX  --n_threads (default 2) and --n_ctx (default 4096)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
source "$here/common.sh"

PID_FILE="$RUN_DIR/server-$CRFIX_LLM_MODEL.pid"
PORT_FILE="$RUN_DIR/server-$CRFIX_LLM_MODEL.port"
LOG_FILE="$RUN_DIR/server-$CRFIX_LLM_MODEL.log"

# The pid in the pid file, if that process is still the llama server serving our model file.
our_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ -r "/proc/$pid/cmdline" ]] || return 1
  local cmd
  cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline")"
  [[ "$cmd" == *llama_cpp.server* && "$cmd" == *"$MODEL_PATH"* ]] || return 1
  echo "$pid"
}

port_in_use() {
  "$VENV_PY" - "$1" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: TIME_WAIT is not "in use"
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(0)
finally:
    s.close()
sys.exit(1)
PY
}

free_port() {
  "$VENV_PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

answers() { curl -fsS --max-time 2 "http://127.0.0.1:$1/v1/models" >/dev/null 2>&1; }

cmd_status() {
  local pid port
  if pid="$(our_pid)" && port="$(cat "$PORT_FILE" 2>/dev/null)" && answers "$port"; then
    echo "LOCAL_LLM_URL=http://127.0.0.1:$port/v1"
    echo "CRFIX_LLM_MODEL_ALIAS=$MODEL_ALIAS"
    log "running: pid $pid, model $MODEL_FILE, log $LOG_FILE"
    return 0
  fi
  log "not running"
  return 3
}

cmd_start() {
  if cmd_status 2>/dev/null; then return 0; fi
  llama_ready || die "llama-cpp-python is not installed; run scripts/e2e-llm/setup.sh first"
  model_ready || die "model $MODEL_PATH is missing or unverified; run scripts/e2e-llm/setup.sh first"
  local port="${CRFIX_LLM_PORT:-18080}"
  if port_in_use "$port"; then
    [[ -z "${CRFIX_LLM_PORT:-}" ]] || die "port $port (CRFIX_LLM_PORT) is already in use"
    port="$(free_port)"
    log "port 18080 is in use; using $port"
  fi
  mkdir -p "$RUN_DIR"
  log "starting llama_cpp.server on 127.0.0.1:$port with $MODEL_FILE (log: $LOG_FILE)"
  # setsid: own process group, so `stop` can end the server and anything it spawned.
  setsid "$VENV_PY" -m llama_cpp.server \
    --model "$MODEL_PATH" --model_alias "$MODEL_ALIAS" \
    --host 127.0.0.1 --port "$port" \
    --n_threads "${CRFIX_LLM_THREADS:-2}" --n_ctx "${CRFIX_LLM_CTX:-4096}" \
    >"$LOG_FILE" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$PID_FILE"
  echo "$port" >"$PORT_FILE"
  local deadline=$((SECONDS + ${CRFIX_LLM_START_TIMEOUT:-180}))
  until answers "$port"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PID_FILE"
      tail -n 30 "$LOG_FILE" >&2 || true
      die "llama_cpp.server exited during start-up (log above)"
    fi
    if ((SECONDS > deadline)); then
      cmd_stop || true
      die "llama_cpp.server did not answer /v1/models within ${CRFIX_LLM_START_TIMEOUT:-180} s"
    fi
    sleep 1
  done
  echo "LOCAL_LLM_URL=http://127.0.0.1:$port/v1"
  echo "CRFIX_LLM_MODEL_ALIAS=$MODEL_ALIAS"
  log "ready: pid $pid"
}

cmd_stop() {
  local pid
  if ! pid="$(our_pid)"; then
    rm -f "$PID_FILE" "$PORT_FILE"
    log "not running"
    return 0
  fi
  kill -TERM "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PID_FILE" "$PORT_FILE"
  log "stopped pid $pid"
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
