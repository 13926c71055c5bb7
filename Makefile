# hostclaim-apiserver: two commands do everything.
#   make dev    run the whole product locally (control plane, server, sample tenants)
#   make test   every check and test (what CI runs)
#
# Node 24 comes from the npm registry (package "node", pinned in package.json);
# every tool below runs on it through node_modules/.bin, never on the system Node.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

BIN := $(CURDIR)/node_modules/.bin
export PATH := $(BIN):$(PATH)
NODE := $(BIN)/node
DEPS_STAMP := node_modules/.deps-stamp

.PHONY: help
help: ## list targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | column -t -s $$'\t'

$(DEPS_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: deps
deps: $(DEPS_STAMP) ## install npm packages (Node 24 included)
	@echo "node $$($(NODE) --version) at $(NODE)"

.PHONY: controlplane
controlplane: ## build (or reuse cached) etcd, kube-apiserver, kube-controller-manager, kubectl from Go modules (the newest supported release; HOSTCLAIM_KUBERNETES_VERSION=vX.Y.Z for another)
	@test/controlplane/build/build.sh >/dev/null

.PHONY: bmo
bmo: ## build (or reuse cached) metal3 baremetal-operator v0.13.2 from Go modules, with its CRDs
	@test/bmo/build.sh >/dev/null

.PHONY: build
build: deps dist/native/malloc-trim.node ## compile the server to dist/
	tsc -p tsconfig.build.json

# malloc_trim for the server (src/observability/native-memory.ts).
dist/native/malloc-trim.node: native/malloc-trim.c native/build.sh $(DEPS_STAMP)
	native/build.sh $@

.PHONY: lint
lint: deps ## ESLint (typescript-eslint, type-checked rules)
	eslint .

.PHONY: lint-manifests
lint-manifests: deps controlplane ## validate every entry point of deploy/ with kubeconform (strict), against the schemas of the tested Kubernetes release
	tsx test/kubeconform/lint.ts

.PHONY: typecheck
typecheck: deps ## TypeScript strict type check of src and tests
	tsc --noEmit -p tsconfig.json

.PHONY: unit
REPORTS := .test-results
VITEST_REPORT = --reporter=default --reporter=json --outputFile.json=$(REPORTS)/$(1).json

unit: deps ## unit tests
	vitest run --project unit $(call VITEST_REPORT,unit)

.PHONY: integration
integration: deps build controlplane bmo ## integration and e2e tests against the real control plane through the aggregator
	vitest run --project integration $(call VITEST_REPORT,integration)

.PHONY: test
test: deps lint lint-manifests typecheck unit integration ## every check and test
	@tsx test/support/summary.ts $(REPORTS)/unit.json $(REPORTS)/integration.json

.PHONY: test-matrix
KUBERNETES_VERSIONS := $(shell grep -E '^v' test/controlplane/build/kubernetes-versions)
test-matrix: deps build bmo ## the integration suite against each supported Kubernetes minor (test/controlplane/build/kubernetes-versions), one after another
	@for v in $(KUBERNETES_VERSIONS); do test/controlplane/build/build.sh $$v >/dev/null; done
	@failed=""; for v in $(KUBERNETES_VERSIONS); do \
	  echo "== integration suite against Kubernetes $$v"; \
	  env -u HOSTCLAIM_CONTROLPLANE_BIN HOSTCLAIM_KUBERNETES_VERSION=$$v \
	    vitest run --project integration $(call VITEST_REPORT,integration-$$v) || failed="$$failed $$v"; \
	  echo "Kubernetes $$v: $$(tsx test/support/summary.ts $(REPORTS)/integration-$$v.json)"; \
	done; \
	if [[ -n "$$failed" ]]; then echo "test-matrix: failed on$$failed"; exit 1; fi; \
	echo "test-matrix: passed on $(KUBERNETES_VERSIONS)"

.PHONY: fuzz
fuzz: deps build controlplane ## fuzz every parsed input against kube's answers (FUZZ_RUNS=100000 FUZZ_SEED=20260515; see docs/reliability.md)
	tsx test/fuzz/cli.ts

.PHONY: bench
bench: deps build controlplane bmo ## benchmark against kube-apiserver serving the backing CRDs at issue #12's scale (~30 min; BENCH_* settings in test/bench/config.ts; see docs/performance.md)
	tsx test/bench/cli.ts

.PHONY: soak
soak: deps build controlplane bmo ## an hour of mixed load on two replicas with leader kills; RSS, errors, informer check (SOAK_MINUTES=60 SOAK_KILL_EVERY_MINUTES=10; see docs/reliability.md)
	tsx test/soak/cli.ts

.PHONY: dev
dev: deps build controlplane bmo ## run everything locally until Ctrl-C (see README)
	tsx test/controlplane/cli.ts dev

.PHONY: up
up: deps build controlplane bmo ## start the dev environment in the background; returns when the APIService and sample hosts are available
	tsx test/controlplane/cli.ts up

.PHONY: down
down: deps ## stop the background dev environment
	tsx test/controlplane/cli.ts down

.PHONY: clean
clean: ## remove build output and local dev state (keeps caches)
	rm -rf dist .dev $(REPORTS) .bench-results
