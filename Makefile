# crfix — build, run, test.
#
#   make run     set up, build, and evaluate the sample ClusterExtensions (README's first command)
#   make test    set up, build the .wasm once, fmt + clippy, unit and e2e tests (README's second)
#
# Cluster targets (deploy, undeploy, push, annotate, demo) live in mk/cluster.mk and the LLM
# end-to-end target in mk/e2e-llm.mk; both are included at the end.

SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

CARGO ?= cargo
WASM_TARGET := wasm32-wasip1
# The Makefile always uses the workspace's own ./target (simple on a fresh clone).
TARGET_DIR := $(CURDIR)/target
POLICY_WASM := $(TARGET_DIR)/$(WASM_TARGET)/release/crfix_policy.wasm
NOOP_WASM := $(TARGET_DIR)/$(WASM_TARGET)/release/crfix_noop_policy.wasm
# The evaluator uses the dev profile: it shares the wasmtime build with `cargo test`
# (dependencies are optimised in dev, see the root Cargo.toml).
CRFIX_EVAL := $(TARGET_DIR)/debug/crfix-eval
CE_CRD := e2e-tests/fixtures/crds/clusterextensions.olm.operatorframework.io.v1.yaml
REQUESTS := e2e-tests/requests

export CARGO_TARGET_DIR := $(TARGET_DIR)
export CRFIX_POLICY_WASM := $(POLICY_WASM)
export CRFIX_NOOP_WASM := $(NOOP_WASM)

.PHONY: help setup build build-wasm build-eval build-proxy build-dev run test e2e-tests bench fmt lint \
	clippy fmt-check clean cli install-cli fix-samples

help:
	@echo "make run        set up, build, evaluate the sample ClusterExtensions (validate, fix, valid)"
	@echo "make test       set up, build the policy .wasm, fmt check, clippy, all tests"
	@echo "make build      policy .wasm (release), no-op .wasm, crfix-llm-proxy (release), crfix-eval"
	@echo "make e2e-tests  the e2e crate's tests (+ kwctl tests when kwctl is on PATH)"
	@echo "make cli        crfix, the CLI that fixes manifests (crfix fix) | install-cli PREFIX=~/.local | fix-samples"
	@echo "make bench      policy evaluations through the .wasm vs the no-op policy; proxy load run"
	@echo "make e2e-llm    a real local model (Qwen2.5-Coder-1.5B on CPU) end to end; not part of make test"
	@echo "make policy.wasm | annotated-policy.wasm   the release module, and annotated with kwctl"
	@echo "make deploy | undeploy | demo | annotate | push   the Kind/OCI path (mk/cluster.mk)"
	@echo "make fmt | lint | clean | setup"

setup:
	@scripts/setup.sh

# One cargo invocation builds both modules (the no-op one is tiny).
build-wasm:
	$(CARGO) build --release --target $(WASM_TARGET) -p crfix-policy -p crfix-noop-policy
	@ls -l $(POLICY_WASM) $(NOOP_WASM)

build-eval:
	$(CARGO) build -p crfix-e2e-tests --bin crfix-eval

# The user CLI (`crfix fix` on manifests, `crfix run` as crfix-eval), in the dev profile that
# `make test` builds too (its dependencies are optimised; see the root Cargo.toml).
cli: setup build-wasm
	$(CARGO) build -p crfix-e2e-tests --bin crfix
	@echo "$(TARGET_DIR)/debug/crfix (module: $(POLICY_WASM))"

# crfix and its module under PREFIX: PREFIX/bin/crfix finds PREFIX/share/crfix/crfix_policy.wasm.
PREFIX ?= $(HOME)/.local
install-cli: cli
	install -d $(PREFIX)/bin $(PREFIX)/share/crfix
	install -m 0755 $(TARGET_DIR)/debug/crfix $(PREFIX)/bin/crfix
	install -m 0644 $(POLICY_WASM) $(PREFIX)/share/crfix/crfix_policy.wasm
	@echo "installed $(PREFIX)/bin/crfix and $(PREFIX)/share/crfix/crfix_policy.wasm"

# crfix fix on the sample repository (examples/repository): the findings, then the diff.
fix-samples: cli
	-$(TARGET_DIR)/debug/crfix fix --crd e2e-tests/fixtures/crds examples/repository

build-proxy:
	$(CARGO) build --release -p crfix-llm-proxy

# What `make run` builds: crfix-eval, crfix and the proxy in the dev profile, in one invocation and
# with the artifacts `make test` uses too (the release proxy is `make build-proxy`).
build-dev:
	$(CARGO) build -p crfix-e2e-tests -p crfix-llm-proxy --bin crfix-eval --bin crfix --bin crfix-llm-proxy

build: setup build-wasm build-proxy build-eval

# crfix-eval exits as `kwctl run` does: 0 when the request was evaluated, accepted or rejected;
# 1 on an error, which stops make.
define run_eval
@echo; echo "=== $(1)"; echo "\$$ crfix-eval $(2)"; $(CRFIX_EVAL) $(2)
endef

# Only what the evaluation uses: the policy .wasm and crfix-eval (not the proxy).
run: setup build-wasm build-dev
	$(call run_eval,invalid ClusterExtension in validate mode: crfix reports every error,--request-path $(REQUESTS)/cluster-extension-invalid.json --settings-path $(REQUESTS)/settings-inline-validate.yaml --crd $(CE_CRD))
	$(call run_eval,the same request in fix mode: deterministic repairs; warnings; patch; repaired object,--request-path $(REQUESTS)/cluster-extension-invalid.json --settings-path $(REQUESTS)/settings-inline-fix.yaml --crd $(CE_CRD))
	$(call run_eval,packageName missing: no rule can invent it (the LLM path can try; see make demo),--request-path $(REQUESTS)/cluster-extension-no-package.json --settings-path $(REQUESTS)/settings-inline-fix.yaml --crd $(CE_CRD))
	$(call run_eval,a valid ClusterExtension: accepted; untouched,--request-path $(REQUESTS)/cluster-extension-valid.json --settings-path $(REQUESTS)/settings-inline-fix.yaml --crd $(CE_CRD))
	@echo; echo "=== the same repair in a manifest, before the cluster: crfix fix prints the diff (--write edits the file)"
	@echo "\$$ crfix fix --crd $(CE_CRD) examples/repository/operators/argocd.yaml"
	@$(TARGET_DIR)/debug/crfix fix --crd $(CE_CRD) examples/repository/operators/argocd.yaml
	@echo; echo "=== the proxy that lets the policy reach an LLM: $(TARGET_DIR)/debug/crfix-llm-proxy --help (see docs/proxy.md)"

# `make fmt` formats on a workstation; in CI (the CI variable is set, as GitHub Actions does) it
# only checks, so CI never rewrites files. `make test` and `make lint` always check.
fmt:
ifdef CI
	$(CARGO) fmt --all -- --check
else
	$(CARGO) fmt --all
endif

fmt-check:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p crfix-policy --target $(WASM_TARGET) -- -D warnings

lint: fmt-check clippy

test: setup build-wasm lint
	$(CARGO) test --workspace --no-fail-fast

e2e-tests: setup build-wasm
	$(CARGO) test -p crfix-e2e-tests
	@if [ -x e2e-tests/kwctl/run.sh ] && command -v kwctl >/dev/null 2>&1; then \
		e2e-tests/kwctl/run.sh; \
	else \
		echo "kwctl tests skipped (needs kwctl on PATH and e2e-tests/kwctl/run.sh)"; \
	fi

# The bench binary is built with the dev profile (dependencies optimised, see Cargo.toml):
# the release profile's fat LTO of wasmtime would take longer than the measurements.
bench: setup build-wasm
	$(CARGO) bench --profile dev -p crfix-e2e-tests --bench policy
	$(CARGO) bench --profile dev -p crfix-e2e-tests --bench fix_cli
	$(CARGO) bench --profile dev -p crfix-llm-proxy --bench load

# Kubewarden's conventions for Rust policies (its shared CI runs `make annotated-policy.wasm`):
# policy.wasm is the release build, annotated-policy.wasm embeds metadata.yml and README.md.
policy.wasm: build-wasm
	cp $(POLICY_WASM) $@

annotated-policy.wasm: policy.wasm metadata.yml README.md
	$(call require,kwctl)
	kwctl annotate -m metadata.yml -u README.md -o $@ policy.wasm

clean:
	$(CARGO) clean
	rm -f policy.wasm annotated-policy.wasm

-include mk/*.mk
