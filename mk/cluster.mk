# Kubewarden packaging and the cluster side of crfix. Included by the main Makefile.
#
#   make annotate                     = make annotated-policy.wasm (kwctl annotate, main Makefile)
#   make push REGISTRY=ghcr.io/<org>/policies [VERSION=0.1.0]
#   make e2e-kwctl                    kwctl tests (skipped with a message without kwctl)
#   make deploy                       Kind + OLM v1 + Kubewarden 1.37 + crfix-llm-proxy + the policy
#   make demo                         apply the invalid samples and show what crfix did
#   make undeploy / make kind-down
#
# deploy needs OPENAI_API_KEY or LOCAL_LLM_URL in the environment; neither is ever printed.
# From inside Kind, a LOCAL_LLM_URL on your machine is not 127.0.0.1: use the Docker host's
# address, e.g. http://host.docker.internal:11434/v1 or http://172.17.0.1:8080/v1.

KIND_CLUSTER        ?= crfix
KUBE_CONTEXT        ?= kind-$(KIND_CLUSTER)
KUBECTL             ?= kubectl --context $(KUBE_CONTEXT)
HELM                ?= helm --kube-context $(KUBE_CONTEXT)
VERSION             ?= 0.1.0
REGISTRY            ?=
POLICY_WASM         ?= target/wasm32-wasip1/release/crfix_policy.wasm
ANNOTATED_WASM      := annotated-policy.wasm
PROXY_IMAGE         ?= crfix-llm-proxy:dev
PROXY_DOCKERFILE    ?= policy-server/llm-proxy/Dockerfile
# CERTS=openssl: scripts/certs.sh; CERTS=cert-manager: config/cert-manager (OLM v1's installer
# brings cert-manager into the Kind cluster anyway).
CERTS               ?= openssl
# Empty: push the annotated policy to a local registry container reachable from Kind.
# Otherwise the policy module to use, e.g. registry://ghcr.io/<org>/policies/crfix:v0.1.0
POLICY_MODULE       ?=
LOCAL_REGISTRY      ?= crfix-registry
LOCAL_REGISTRY_PORT ?= 5001
# Kubewarden: the one version everything below follows. Supported: Kubewarden 1.37.x, installed
# from its single `admission-controller` Helm chart (1.37 deprecated the kubewarden-crds,
# kubewarden-controller and kubewarden-defaults charts). policy-server's major.minor must match
# the controller's, so the PolicyServer image (config/policy/policyserver.yaml and
# policy-server/policyserver.yaml), kwctl in .github/workflows and this pin move together;
# e2e-tests/tests/release.rs checks that they agree. A cluster still on the three 1.35/1.36 charts
# must migrate first (Kubewarden's chart migration guide); `make deploy` does not do it.
KUBEWARDEN_VERSION  ?= 1.37.2
# admission-controller chart 6.0.N ships Kubewarden 1.37.N.
KW_CHART_VERSION    ?= 6.0.$(word 3,$(subst ., ,$(KUBEWARDEN_VERSION)))
KW_POLICY_SERVER_IMAGE ?= ghcr.io/kubewarden/adm-controller/policy-server:v$(KUBEWARDEN_VERSION)
KUBEWARDEN_CHARTS   ?= https://charts.kubewarden.io
OLMV1_VERSION       ?= v1.11.0
KIND_OVERLAY_DIR    := config/generated/kind

# $(call require,tool ...): stop with a clear message when a tool is missing.
define require
	@for tool in $(1); do \
	  command -v $$tool >/dev/null 2>&1 && continue; \
	  case $$tool in \
	    kind) hint="https://kind.sigs.k8s.io/docs/user/quick-start/#installation";; \
	    kubectl) hint="https://kubernetes.io/docs/tasks/tools/";; \
	    helm) hint="https://helm.sh/docs/intro/install/";; \
	    docker) hint="https://docs.docker.com/get-docker/";; \
	    kwctl) hint="https://docs.kubewarden.io/howtos/install-kwctl";; \
	    openssl) hint="your package manager (openssl)";; \
	    curl) hint="your package manager (curl)";; \
	    *) hint="your package manager";; \
	  esac; \
	  echo "error: 'make $@' needs '$$tool', which is not on PATH. Install it: $$hint" >&2; \
	  exit 1; \
	done
endef

.PHONY: kubewarden-versions annotate push e2e-kwctl deploy deploy-kind deploy-olm deploy-kubewarden deploy-proxy-image \
	deploy-policy-module deploy-certs deploy-key deploy-apply undeploy kind-down demo

annotate: $(ANNOTATED_WASM) ## Embed metadata.yml and README.md in the policy: annotated-policy.wasm

push: annotate ## Push the annotated policy: make push REGISTRY=ghcr.io/<org>/policies
	$(call require,kwctl)
	@test -n "$(REGISTRY)" || { echo "error: set REGISTRY, e.g. make push REGISTRY=ghcr.io/<org>/policies" >&2; exit 1; }
	kwctl push $(ANNOTATED_WASM) registry://$(REGISTRY)/crfix:v$(VERSION)
	@echo "Pushed. Use it with: module: registry://$(REGISTRY)/crfix:v$(VERSION)"

e2e-kwctl: ## kwctl run tests (prints SKIPPED without kwctl)
	e2e-tests/kwctl/run.sh

deploy: deploy-kind deploy-olm deploy-kubewarden deploy-proxy-image deploy-policy-module deploy-certs deploy-key deploy-apply ## Everything, on Kind
	@echo
	@echo "crfix is running on Kind cluster '$(KIND_CLUSTER)'. Try: make demo"

deploy-kind:
	$(call require,kind kubectl docker)
	@kind get clusters 2>/dev/null | grep -qx '$(KIND_CLUSTER)' \
	  || kind create cluster --name $(KIND_CLUSTER) --wait 120s
	$(KUBECTL) cluster-info >/dev/null

deploy-olm: deploy-kind ## OLM v1 (operator-controller + catalogd, with cert-manager) from its release
	$(call require,kubectl curl)
	@if $(KUBECTL) get crd clusterextensions.olm.operatorframework.io >/dev/null 2>&1; then \
	  echo "OLM v1 is already installed"; \
	else \
	  set -e; tmp=$$(mktemp -d); \
	  curl -fsSL -o $$tmp/install.sh \
	    https://github.com/operator-framework/operator-controller/releases/download/$(OLMV1_VERSION)/install.sh; \
	  kubectl config use-context $(KUBE_CONTEXT) >/dev/null; \
	  bash $$tmp/install.sh; rm -rf $$tmp; \
	fi

deploy-kubewarden: deploy-kind ## Kubewarden (CRDs, controller, default PolicyServer): one chart
	$(call require,helm kubectl)
	$(HELM) repo add kubewarden $(KUBEWARDEN_CHARTS) --force-update >/dev/null
	$(HELM) upgrade --install --wait -n kubewarden --create-namespace \
	  kubewarden-controller kubewarden/admission-controller --version $(KW_CHART_VERSION)

kubewarden-versions: ## The Kubewarden pins (e2e-tests/tests/release.rs reads them)
	@echo "KUBEWARDEN_VERSION=$(KUBEWARDEN_VERSION)"
	@echo "KW_CHART_VERSION=$(KW_CHART_VERSION)"
	@echo "KW_POLICY_SERVER_IMAGE=$(KW_POLICY_SERVER_IMAGE)"

deploy-proxy-image: deploy-kind ## Build crfix-llm-proxy's image and load it into Kind
	$(call require,docker kind)
	@test -f $(PROXY_DOCKERFILE) || { echo "error: $(PROXY_DOCKERFILE) not found (set PROXY_DOCKERFILE)" >&2; exit 1; }
	docker build -t $(PROXY_IMAGE) -f $(PROXY_DOCKERFILE) .
	kind load docker-image $(PROXY_IMAGE) --name $(KIND_CLUSTER)

# The Kind overlay: the certificate overlay, plus where the policy module comes from and the
# proxy image. Written to config/generated/kind/ (git-ignored).
define KIND_KUSTOMIZATION
# Written by mk/cluster.mk (make deploy) - do not edit.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(if $(filter cert-manager,$(CERTS)),../../cert-manager,../certs)
images:
  - name: crfix-llm-proxy
    newName: $(firstword $(subst :, ,$(PROXY_IMAGE)))
    newTag: "$(or $(word 2,$(subst :, ,$(PROXY_IMAGE))),latest)"
patches:
  - target:
      kind: ClusterAdmissionPolicy
      name: crfix
    patch: |-
      - op: replace
        path: /spec/module
        value: __MODULE__
  - target:
      kind: PolicyServer
      name: crfix
    patch: |-
      - op: add
        path: /spec/insecureSources
        value: [__INSECURE__]
      - op: replace
        path: /spec/image
        value: $(KW_POLICY_SERVER_IMAGE)
endef
export KIND_KUSTOMIZATION

deploy-policy-module: deploy-kind ## Publish the policy where the Kind cluster can pull it
	@mkdir -p $(KIND_OVERLAY_DIR)
	@if [ -n "$(POLICY_MODULE)" ]; then \
	  module='$(POLICY_MODULE)'; insecure=''; \
	else \
	  set -e; \
	  command -v kwctl >/dev/null 2>&1 || { echo "error: 'make deploy' needs 'kwctl' to publish the policy to the local registry (https://docs.kubewarden.io/howtos/install-kwctl), or set POLICY_MODULE=registry://..." >&2; exit 1; }; \
	  $(MAKE) --no-print-directory annotate; \
	  if ! docker inspect $(LOCAL_REGISTRY) >/dev/null 2>&1; then \
	    docker run -d --restart=always --name $(LOCAL_REGISTRY) \
	      -p 127.0.0.1:$(LOCAL_REGISTRY_PORT):5000 --network kind registry:2 >/dev/null; \
	  fi; \
	  ip=$$(docker inspect -f '{{with index .NetworkSettings.Networks "kind"}}{{.IPAddress}}{{end}}' $(LOCAL_REGISTRY)); \
	  test -n "$$ip" || { echo "error: $(LOCAL_REGISTRY) is not on the 'kind' Docker network" >&2; exit 1; }; \
	  printf 'insecure_sources:\n  - "localhost:%s"\n' $(LOCAL_REGISTRY_PORT) > $(KIND_OVERLAY_DIR)/sources.yaml; \
	  kwctl push --force --sources-path $(KIND_OVERLAY_DIR)/sources.yaml $(ANNOTATED_WASM) \
	    registry://localhost:$(LOCAL_REGISTRY_PORT)/crfix:v$(VERSION); \
	  module="registry://$$ip:5000/crfix:v$(VERSION)"; insecure="\"$$ip:5000\""; \
	fi; \
	printf '%s\n' "$$KIND_KUSTOMIZATION" | sed -e "s|__MODULE__|$$module|" -e "s|__INSECURE__|$$insecure|" \
	  > $(KIND_OVERLAY_DIR)/kustomization.yaml; \
	echo "policy module: $$module"

deploy-certs: ## Serving certificate + caBundle (CERTS=openssl|cert-manager)
ifeq ($(CERTS),cert-manager)
	@echo "certificates: cert-manager (config/cert-manager)"
else
	$(call require,openssl)
	scripts/certs.sh
endif

deploy-key: deploy-kind ## The LLM key Secret, from OPENAI_API_KEY or LOCAL_LLM_URL (never printed)
	$(call require,kubectl)
	@if [ -z "$$OPENAI_API_KEY" ] && [ -z "$$LOCAL_LLM_URL" ]; then \
	  echo "error: set OPENAI_API_KEY or LOCAL_LLM_URL (an OpenAI-compatible endpoint reachable from the cluster)" >&2; \
	  exit 1; \
	fi
	@$(KUBECTL) apply -f config/proxy/namespace.yaml >/dev/null
	@set -e; umask 077; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	printf '%s' "$$OPENAI_API_KEY" > $$tmp/api-key; \
	printf '%s' "$$LOCAL_LLM_URL" > $$tmp/local-llm-url; \
	$(KUBECTL) -n crfix-system create secret generic crfix-llm-proxy-llm \
	  --from-file=api-key=$$tmp/api-key --from-file=local-llm-url=$$tmp/local-llm-url \
	  --dry-run=client -o yaml | $(KUBECTL) apply -f - >/dev/null; \
	echo "secret crfix-system/crfix-llm-proxy-llm is up to date"

deploy-apply: ## Apply config/ through the Kind overlay and wait until crfix is active
	$(call require,kubectl)
	@test -f $(KIND_OVERLAY_DIR)/kustomization.yaml || { echo "error: run 'make deploy' (the Kind overlay is missing)" >&2; exit 1; }
	$(KUBECTL) apply -k $(KIND_OVERLAY_DIR)
	$(KUBECTL) -n crfix-system rollout status deploy/crfix-llm-proxy --timeout=180s
	$(KUBECTL) wait --for=condition=Available apiservice/v1alpha1.crfix.dev --timeout=120s
	$(KUBECTL) wait --for=jsonpath='{.status.policyStatus}'=active clusteradmissionpolicy/crfix --timeout=300s

undeploy: ## Remove crfix from the cluster (the webhook first, then the aggregated API)
	$(call require,kubectl)
	-$(KUBECTL) delete clusteradmissionpolicy crfix --ignore-not-found --wait
	-$(KUBECTL) delete apiservice v1alpha1.crfix.dev --ignore-not-found
	-$(KUBECTL) delete policyserver crfix --ignore-not-found --wait
	@if [ -f $(KIND_OVERLAY_DIR)/kustomization.yaml ]; then \
	  $(KUBECTL) delete -k $(KIND_OVERLAY_DIR) --ignore-not-found; \
	else \
	  $(KUBECTL) delete -k config/default --ignore-not-found; \
	fi
	-$(KUBECTL) -n crfix-system delete secret crfix-llm-proxy-llm --ignore-not-found

kind-down: ## Delete the Kind cluster and the local registry container
	$(call require,kind docker)
	kind delete cluster --name $(KIND_CLUSTER)
	-docker rm -f $(LOCAL_REGISTRY)

DEMO_SAMPLES ?= lowercase-source-type v1alpha1-shaped missing-package-name hostile-annotation

demo: ## Apply each invalid sample, show crfix's warnings and the stored object
	$(call require,kubectl)
	@for sample in $(DEMO_SAMPLES); do \
	  file=config/samples/$$sample.yaml; \
	  name=$$($(KUBECTL) create --dry-run=client --validate=false -f $$file -o jsonpath='{.metadata.name}'); \
	  echo; echo "=== $$file"; \
	  echo "\$$ kubectl apply --validate=false -f $$file"; \
	  if $(KUBECTL) apply --validate=false -f $$file; then \
	    echo "\$$ kubectl get clusterextension $$name -o yaml   (spec and crfix's annotation)"; \
	    $(KUBECTL) get clusterextension $$name -o yaml \
	      | sed -n '/^metadata:/,/^  name:/p;/^spec:/,/^status:/p' | grep -v '^status:'; \
	  else \
	    echo "(rejected: the message above says why)"; \
	  fi; \
	done
	@echo; echo "Remove the samples with: kubectl delete --ignore-not-found -f config/samples/"
