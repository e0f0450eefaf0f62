# The operator interface: `make run` and `make test` are the README's two set-up commands.
SHELL := /bin/bash
.DEFAULT_GOAL := help
export REDOCLY_TELEMETRY := off
export REDOCLY_SUPPRESS_UPDATE_NOTICE := true

SOURCES := $(shell find core handlers sandbox codegen bench scripts test generated portal/src -name '*.ts' 2>/dev/null)

.PHONY: help install generate check-generated build sdk-pack run sandbox test docs-check lint bench soak mutation clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-17s %s\n", $$1, $$2}'

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.package-lock.json ## Install dependencies (npm ci)

generate: install ## Regenerate generated/ (v1/, v2/, portal/) and sdk/src/generated/ from openapi/v1.yaml, openapi/v2.yaml, openapi/portal.yaml, sdk/openrpc/openrpc-dapp-api.json and core/ledger/token-standard.ts
	npx tsx scripts/generate.ts

check-generated: install ## Fail when generated/ or sdk/src/generated/ is stale against the specs (and the SDK's token-standard copy against core's)
	npx tsx scripts/generate.ts --check

# Regenerates generated/ when the spec or the generator changed since the last build, so `make run`
# on an edited spec never serves stale validators (CI still fails on an uncommitted difference).
dist/.generated: node_modules/.package-lock.json openapi/v1.yaml openapi/v2.yaml openapi/portal.yaml sdk/openrpc/openrpc-dapp-api.json core/ledger/token-standard.ts scripts/generate.ts $(wildcard codegen/*.ts)
	npx tsx scripts/generate.ts
	@mkdir -p dist && touch $@

SDK_SOURCES := $(shell find sdk/src -name '*.ts' 2>/dev/null)

# The SDK is built first: the tests use it as a partner does, through its package's exports.
sdk/dist/.built: dist/.generated sdk/package.json sdk/tsconfig.json sdk/tsconfig.node.json scripts/bundle-sdk.ts $(SDK_SOURCES)
	rm -rf sdk/dist
	npx tsc -p sdk && npx tsc -p sdk/tsconfig.node.json
	npx tsx scripts/bundle-sdk.ts
	@touch $@

dist/.built: dist/.generated sdk/dist/.built tsconfig.json $(SOURCES)
	npx tsc -p .
	@printf '{"build":"%s"}\n' "$$(git rev-parse --short HEAD 2>/dev/null || echo dev)" > dist/build-info.json
	@touch $@

PORTAL_SOURCES := $(shell find portal -type f 2>/dev/null)

# The key portal's page: type-checked against the generated portal types, bundled into dist/portal/.
dist/portal/.built: dist/.generated scripts/bundle-portal.ts $(PORTAL_SOURCES)
	npx tsc -p portal
	npx tsx scripts/bundle-portal.ts
	@touch $@

build: dist/.built dist/portal/.built ## Compile TypeScript into dist/ (the SDK into sdk/dist/, the portal page into dist/portal/)

# The tarball a partner installs (npm install ./dist/bestex-sdk-<version>.tgz), packed from the
# build above; publishing it to a registry is the operator's step (docs/sdk.md).
sdk-pack: sdk/dist/.built ## Pack the SDK into dist/bestex-sdk-<version>.tgz and print its path
	@mkdir -p dist
	@cd sdk && tarball=$$(npm pack --ignore-scripts --silent --pack-destination ../dist) && echo "dist/$$tarball"

run: build ## Run the service; it starts the sandbox as a child process (HOST, PORT, see docs/operations.md)
	node dist/handlers/main.js

sandbox: build ## Run the sandbox alone in the foreground; prints one JSON line with its URLs (SANDBOX_FLAGS=--without-batching-utility: a participant without Splice's batching utility)
	node dist/sandbox/main.js $(SANDBOX_FLAGS)

test: build ## Run every test; ends with "N passed, M failed, K skipped"
	npx tap -R ./dist/scripts/tap-summary-reporter.js 'dist/test/**/*.test.js'

docs-check: build ## Run the README's and docs/' runnable command blocks against a started service, and check every link and named path (part of make test)
	npx tap -R ./dist/scripts/tap-summary-reporter.js dist/test/repository/docs-check.test.js

lint: install ## Lint the specs (v1, v2 and its served bundle, the portal's) with Redocly's recommended rules and Spectral's OWASP API Security rules (.spectral.yaml)
	npx redocly lint openapi/v1.yaml openapi/v2.yaml generated/v2/openapi.yaml openapi/portal.yaml
	npx spectral lint --fail-severity error openapi/v1.yaml generated/v2/openapi.yaml openapi/portal.yaml

# The bench's own exit status says 0 (every gate passed), 1 (a gate failed or a run was invalid) or
# 3 (no gate failed, but one cannot be judged: the machine too busy); make reports it as "Error 1"
# or "Error 3" and exits 2 for either (docs/performance.md).
bench: build ## Benchmark quotes and plans against bare baselines, a hung venue (REDIS_URL: two instances too), plan status latency and open event streams; exit 1 a gate failed, 3 one cannot be judged
	node dist/bench/bench.js

soak: build ## Soak the service (not in make test): 10 minutes at 50 connections of mixed load; RSS every 30 s, answers by status, worst event-loop delay (SOAK_SECONDS, SOAK_CONNECTIONS)
	node dist/bench/soak.js

# Not part of `make test` or CI: see mutation/stryker.config.mjs. MUTATION_MODULES="a b" runs only those.
mutation: build ## Mutation-test the money paths (StrykerJS, incremental): the score per module and the surviving mutants
	node mutation/run.mjs $(MUTATION_MODULES)

clean: ## Remove build output
	rm -rf dist sdk/dist .tap .stryker-tmp reports
