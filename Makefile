# dsh-session-search: every command a contributor or CI needs. `make help` lists them.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PORT ?= 8000
ORACLE_DIR ?= target/oracle
ORACLE_SESSIONS ?= 240
BENCH_EVENTS ?= 100000
WASM_TARGET := wasm32-unknown-unknown
WASM_BINDGEN_VERSION := 0.2.130
WASM_PKG := www/pkg/dsh_session_search_bg.wasm
WASM_PKG_SOURCES := $(shell find src -name '*.rs') Cargo.toml Cargo.lock
COMPONENT_TARGET := wasm32-wasip2
COMPONENT_DIR := target/component
COMPONENT := $(COMPONENT_DIR)/dsh_session_search.wasm
WASM_TOOLS_VERSION := 1.263.0

.PHONY: help serve test setup fmt-check lint test-native test-wasm test-e2e oracle test-differential wasm-pkg component test-component bench clean

help: ## List the targets.
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

serve: wasm-pkg ## Serve the archive viewer (www/) on 127.0.0.1 (PORT=8000); its button loads the bundled sample.
	node www/serve.mjs --port $(PORT)

wasm-pkg: $(WASM_PKG) ## Build the viewer's wasm package (release) into www/pkg when missing or outdated.

$(WASM_PKG): $(WASM_PKG_SOURCES)
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)
	@[ "$$(wasm-bindgen --version 2>/dev/null)" = "wasm-bindgen $(WASM_BINDGEN_VERSION)" ] || cargo install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION)
	cargo build --release --lib --no-default-features --target $(WASM_TARGET)
	wasm-bindgen --target web --remove-name-section --remove-producers-section --out-dir www/pkg \
		"$${CARGO_TARGET_DIR:-target}/$(WASM_TARGET)/release/dsh_session_search.wasm"
	@touch $@

test: setup fmt-check lint test-native test-wasm test-e2e test-differential test-component ## Run every test (installs what it lacks).

setup: ## Install the wasm target, wasm-bindgen CLI and the oracle's Node packages if missing.
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)
	@[ "$$(wasm-bindgen --version 2>/dev/null)" = "wasm-bindgen $(WASM_BINDGEN_VERSION)" ] || cargo install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION)
	@tests/oracle/run.sh --install-only


fmt-check: ## Check formatting.
	cargo fmt --all -- --check

lint: ## Clippy with warnings as errors, native and wasm.
	cargo clippy --all-targets -- -D warnings
	cargo clippy --lib --tests --no-default-features --target $(WASM_TARGET) -- -D warnings

test-native: ## Unit, golden, bad-input, provider (SQLite included) and CLI tests on the host.
	cargo test --features sqlite

test-wasm: ## Build for wasm32 and run the wasm tests under Node.
	cargo build --lib --no-default-features --target $(WASM_TARGET)
	WASM_BINDGEN_TEST_ONLY_NODE=1 cargo test --no-default-features --target $(WASM_TARGET) --test wasm --test provider_contract --test snapshot

test-e2e: wasm-pkg ## Drive the viewer in Debian's Chromium (playwright-core; no browser download).
	@[ -d www/node_modules/playwright-core ] || (cd www && npm ci --no-audit --no-fund)
	node --test www/tests/

oracle: ## Generate corpora with real DSH (Node 24) and dump DSH's view of them.
	tests/oracle/run.sh $(ORACLE_DIR) $(ORACLE_SESSIONS) 1

test-differential: oracle ## Compare our reads with DSH's on the generated corpora.
	DSH_ORACLE_DIR=$(abspath $(ORACLE_DIR)) cargo test --test differential --test reference_differential -- --nocapture

component: ## Build the WebAssembly Component (wasm32-wasip2, release, stripped) into target/component and print its size.
	@rustup target list --installed | grep -qx $(COMPONENT_TARGET) || rustup target add $(COMPONENT_TARGET)
	cargo build --profile component --lib --no-default-features --features component --target $(COMPONENT_TARGET)
	@mkdir -p $(COMPONENT_DIR)
	cp "$${CARGO_TARGET_DIR:-target}/$(COMPONENT_TARGET)/component/dsh_session_search.wasm" $(COMPONENT)
	@echo "$(COMPONENT): $$(stat -c %s $(COMPONENT)) bytes ($$(gzip -9c $(COMPONENT) | wc -c) gzipped)"

test-component: component ## Validate the component, check its WIT against wit/, and run it under jco + Node against native and DSH.
	@[ "$$(wasm-tools --version 2>/dev/null | cut -d' ' -f2)" = "$(WASM_TOOLS_VERSION)" ] || \
		cargo install wasm-tools --version $(WASM_TOOLS_VERSION) --no-default-features --features validate,component
	cargo clippy --lib --no-default-features --features component --target $(COMPONENT_TARGET) -- -D warnings
	wasm-tools validate $(COMPONENT)
	tests/component/check-wit.sh $(COMPONENT) wit
	@[ -d $(ORACLE_DIR)/dumps ] || $(MAKE) oracle
	cargo build --bin dsh-session-search
	@[ -x tests/component/node_modules/.bin/jco ] || (cd tests/component && npm ci --ignore-scripts --no-audit --no-fund)
	tests/component/node_modules/.bin/jco transpile $(COMPONENT) --name dsh_session_search --no-typescript -q -o tests/component/out
	DSH_ORACLE_DIR=$(abspath $(ORACLE_DIR)) node --test tests/component/

bench: ## Benchmark against DSH's own search on BENCH_EVENTS generated events (not part of `test`).
	tests/bench/run.sh $(BENCH_EVENTS)

clean: ## Remove build outputs and generated corpora.
	cargo clean
