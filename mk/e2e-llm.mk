# make e2e-llm — crfix against a real local model (Qwen2.5-Coder-1.5B on CPU, llama.cpp server).
# Not part of `make test` or CI. See the README, section "End to end with a real local model".
#
#   make e2e-llm                                 all cases in e2e-tests/llm-cases
#   make e2e-llm E2E_LLM_ARGS="--filter 04"      one case
#   CRFIX_LLM_THREADS=1 make e2e-llm             on a busy machine (see scripts/e2e-llm/FINDINGS.md)
#
# Order: model server + weights (idempotent) → .wasm, proxy, runner → server start → cases
# (the runner starts and stops crfix-llm-proxy) → server stop, always.

E2E_LLM_DIR := scripts/e2e-llm
CRFIX_E2E_LLM := $(TARGET_DIR)/debug/crfix-e2e-llm
E2E_LLM_PROXY_BIN ?= $(TARGET_DIR)/release/crfix-llm-proxy
E2E_LLM_OUT ?= $(TARGET_DIR)/e2e-llm/results.json
E2E_LLM_ARGS ?=

# Only for this target: `make test` must find the proxy its own cargo build made.
e2e-llm: export CRFIX_PROXY_BIN = $(E2E_LLM_PROXY_BIN)

.PHONY: e2e-llm e2e-llm-setup build-e2e-llm

e2e-llm-setup:
	@$(E2E_LLM_DIR)/setup.sh >/dev/null

build-e2e-llm:
	$(CARGO) build -p crfix-e2e-tests --bin crfix-e2e-llm

# Prerequisites run in this order (no -j): setup first, then the builds.
e2e-llm: setup e2e-llm-setup build-wasm build-proxy build-e2e-llm
	@mkdir -p $(dir $(E2E_LLM_OUT))
	@$(E2E_LLM_DIR)/run.sh $(CRFIX_E2E_LLM) --json-out $(E2E_LLM_OUT) $(E2E_LLM_ARGS)
