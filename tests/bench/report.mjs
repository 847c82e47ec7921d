#!/usr/bin/env node
// The benchmark report over the runs of one or more tiers (run.sh): each tier directory holds
// round-N/ENGINE.json, one file per engine per round, the engines alternating within a round.
// Per engine and metric: the median over rounds and the spread (min–max); ratios are DSH's
// median over the engine's, DSH measured in the same rounds. Then the checks against DSH:
// every first page (items, order, snippets, headers, next-page presence) and, as information,
// the prepare answers (DSH's fields, context ids set aside) and the appendLive searches.
// Without a DSH run (BENCH_ENGINES left it out) the times are printed with no ratios or checks.
// Exits 1 when a first page differs from DSH's, or when --checks-only has no DSH run to check
// against; no time is ever judged.
//
//   node report.mjs TIER_DIR... [--json SUMMARY.json] [--checks-only]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: argv, positionals: tiers } = parseArgs({ allowPositionals: true, options: { json: { type: 'string' }, 'checks-only': { type: 'boolean', default: false } } });
if (tiers.length === 0) { console.error('usage: node report.mjs TIER_DIR... [--json SUMMARY.json] [--checks-only]'); process.exit(2); }

const ENGINE_ORDER = ['dsh/sqlite', 'native/tantivy', 'native/sqlite', 'pkg/node', 'pkg/chromium', 'pkg/chromium-warm'];
const MB = (b) => (b == null ? '–' : `${(b / 1e6).toFixed(0)} MB`);
const ms = (x) => (x == null ? '–' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
const pad = (s, n, left = false) => (left ? String(s).padEnd(n) : String(s).padStart(n));
const median = (xs) => { const s = xs.filter((x) => x != null).sort((a, b) => a - b); return s.length === 0 ? null : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };

/** JSON with sorted keys, so key order does not count as a difference. */
function canon(v) {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().filter((k) => v[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canon(v[k])}`).join(',')}}`;
  return JSON.stringify(v ?? null);
}

/** The per-round scalars the report aggregates; `null` where an engine has no such step. */
const METRICS = {
  warmUpMs: ['warm-up', (r) => r.warmUp?.ms, ms],
  ingestMs: ['ingest', (r) => r.loadMs, ms],
  indexMs: ['index', (r) => r.indexMs, ms],
  firstResultMs: ['first result', (r) => r.firstResultMs, ms],
  p50Ms: ['query p50', (r) => r.latency.all.p50, ms],
  p95Ms: ['query p95', (r) => r.latency.all.p95, ms],
  maxMs: ['query max', (r) => r.latency.all.max, ms],
  prepare1Ms: ['prepare 1', (r) => r.prepare?.one.ms.p50, ms],
  prepare3Ms: ['prepare 3', (r) => r.prepare?.three.ms.p50, ms],
  appendLiveMs: ['appendLive', (r) => r.appendLive?.totalMs.p50, ms],
  peakRssBytes: ['peak RSS', (r) => r.memory?.rssPeak, MB],
  wasmPeakBytes: ['peak wasm memory', (r) => r.memory?.wasmPeak, MB],
};

function aggregate(values) {
  const kept = values.filter((x) => x != null);
  if (kept.length === 0) return null;
  return { median: median(kept), min: Math.min(...kept), max: Math.max(...kept), runs: values };
}

function readTier(dir) {
  const rounds = fs.readdirSync(dir).filter((d) => /^round-\d+$/.test(d)).sort((a, b) => Number(a.slice(6)) - Number(b.slice(6)));
  const byEngine = new Map();
  for (const round of rounds) {
    for (const file of fs.readdirSync(path.join(dir, round)).filter((f) => f.endsWith('.json')).sort()) {
      const r = JSON.parse(fs.readFileSync(path.join(dir, round, file), 'utf8'));
      if (!byEngine.has(r.engine)) byEngine.set(r.engine, []);
      byEngine.get(r.engine).push(r);
    }
  }
  const engines = [...byEngine.keys()].sort((a, b) => ENGINE_ORDER.indexOf(a) - ENGINE_ORDER.indexOf(b));
  if (engines.length === 0) throw new Error(`${dir}: no engine's run`);
  // Without DSH (BENCH_ENGINES left it out) the times are still printed, with no ratios or checks.
  const hasDsh = engines[0] === 'dsh/sqlite';
  return { dir, rounds: rounds.length, engines, runs: byEngine, hasDsh };
}

/** First pages of `run` against DSH's: a list of differing queries. */
function pageDifferences(want, got) {
  const list = [];
  for (const [i, w] of want.pages.entries()) {
    const g = got.pages[i];
    if (g?.query !== w.query) { list.push(`${JSON.stringify(w.query)}: query order differs`); continue; }
    const diff = [];
    if (canon(g.sessions.items) !== canon(w.sessions.items)) diff.push('searchSessions items');
    if ((g.sessions.nextCursor === undefined) !== (w.sessions.nextCursor === undefined)) diff.push('searchSessions nextCursor presence');
    if (g.eventsSession !== w.eventsSession) diff.push(`searchEvents session (${g.eventsSession} vs DSH ${w.eventsSession})`);
    else {
      if (canon(g.events.items) !== canon(w.events.items)) diff.push('searchEvents items');
      if (canon(g.events.session) !== canon(w.events.session)) diff.push('searchEvents session header');
      if ((g.events.nextCursor === undefined) !== (w.events.nextCursor === undefined)) diff.push('searchEvents nextCursor presence');
    }
    if (diff.length) list.push(`${JSON.stringify(w.query)}: ${diff.join(', ')}`);
  }
  return list;
}

function checksOf(tier) {
  if (!tier.hasDsh) return null;
  const dsh = tier.runs.get('dsh/sqlite');
  const checks = {};
  for (const engine of tier.engines.slice(1)) {
    const pages = [], prepare = [], live = [];
    for (const [round, run] of tier.runs.get(engine).entries()) {
      const want = dsh[round] ?? dsh[0];
      for (const m of pageDifferences(want, run)) pages.push(`round ${round + 1}: ${m}`);
      for (const name of ['one', 'three']) {
        if (want.prepare && run.prepare && canon(want.prepare[name].result) !== canon(run.prepare[name].result)) prepare.push(`round ${round + 1}: prepare ${name} differs from DSH's`);
      }
      if (run.appendLive && run.appendLive.found !== run.appendLive.reps) live.push(`round ${round + 1}: ${run.appendLive.found} of ${run.appendLive.reps} searches found the appended event's session first`);
    }
    checks[engine] = { pages, prepare, appendLive: live };
  }
  // DSH against itself across rounds: its answers do not change between runs.
  const drift = dsh.slice(1).flatMap((run, i) => pageDifferences(dsh[0], run).map((m) => `round ${i + 2}: ${m}`));
  if (drift.length) checks['dsh/sqlite (rounds)'] = { pages: drift, prepare: [], appendLive: [] };
  return checks;
}

function summarizeTier(tier) {
  const first = tier.runs.get(tier.engines[0])[0];
  const engines = {};
  for (const engine of tier.engines) {
    const runs = tier.runs.get(engine);
    const metrics = Object.fromEntries(Object.entries(METRICS).map(([key, [, pick]]) => [key, aggregate(runs.map(pick))]));
    const classes = {};
    for (const category of Object.keys(runs[0].latency.categories ?? {})) {
      classes[category] = Object.fromEntries(['p50', 'p95', 'max'].map((p) => [p, aggregate(runs.map((r) => r.latency.categories[category].all[p]))]));
    }
    engines[engine] = { rounds: runs.length, metrics, classes, memory: runs.at(-1).memory };
  }
  const ratios = {};
  for (const engine of tier.hasDsh ? tier.engines.slice(1) : []) {
    ratios[engine] = {};
    for (const key of Object.keys(METRICS)) {
      const a = engines['dsh/sqlite'].metrics[key]?.median, b = engines[engine].metrics[key]?.median;
      ratios[engine][key] = a == null || b == null || b === 0 ? null : a / b;
    }
  }
  const live = Object.fromEntries(tier.engines.map((engine) => [engine, liveOf(tier.runs.get(engine))]).filter(([, l]) => l !== null));
  return { events: first.events, textBytes: first.textBytes, queries: first.perQuery.length, timedPasses: first.latency.sessions.n / first.perQuery.length, rounds: tier.rounds, engines, ratios, live, checks: checksOf(tier) };
}

function printTier(s) {
  console.log(`\n== ${s.events} events, ${(s.textBytes / 1e6).toFixed(1)} MB of text: ${s.rounds} rounds (engines alternating), ${s.queries} queries × ${s.timedPasses} timed passes × 2 methods per round ==`);
  if (!argv['checks-only']) printTimes(s);
  if (s.checks === null) {
    console.log('\nno DSH run in this tier: no ratios, and first pages not checked');
    return;
  }
  console.log(`\nfirst pages vs DSH (items, order, snippets, headers, next-page presence; ${s.queries} queries × 2 methods, every round):`);
  for (const [engine, c] of Object.entries(s.checks)) {
    console.log(`  ${pad(engine, 22, true)} ${c.pages.length === 0 ? 'identical' : `${c.pages.length} differ`}`);
    for (const m of c.pages.slice(0, 10)) console.log(`      ${m}`);
  }
  const info = Object.entries(s.checks).flatMap(([engine, c]) => [...c.prepare, ...c.appendLive].map((m) => `${engine} ${m}`));
  console.log(`prepare answers vs DSH's and appendLive searches: ${info.length === 0 ? 'all equal / found' : ''}`);
  for (const m of info.slice(0, 10)) console.log(`      ${m}`);
}

function printTimes(s) {
  const engines = Object.keys(s.engines);
  const cell = (a, fmt) => (a == null ? '–' : a.runs.length > 1 ? `${fmt(a.median)} [${fmt(a.min)}–${fmt(a.max)}]` : fmt(a.median));
  const width = 26;
  console.log(`median over rounds [min–max], times in ms; "× DSH": DSH's median / the engine's (above 1×: faster or smaller):`);
  console.log(`${pad('', 17, true)}${engines.map((e) => pad(e, width)).join('')}`);
  for (const [key, [label, , fmt]] of Object.entries(METRICS)) {
    console.log(`${pad(label, 17, true)}${engines.map((e) => pad(cell(s.engines[e].metrics[key], fmt), width)).join('')}`);
    const ratios = engines.map((e) => s.ratios[e]?.[key]);
    if (ratios.some((r) => r != null)) console.log(`${pad('  × DSH', 17, true)}${ratios.map((r) => pad(r == null ? '' : `${r.toFixed(r >= 10 ? 0 : 1)}×`, width)).join('')}`);
  }
  const classes = Object.keys(Object.values(s.engines)[0].classes);
  console.log(`\nper query class, both methods: p50 / p95 / max ms (medians over rounds):`);
  console.log(`${pad('engine', 15, true)} ${classes.map((c) => pad(c, 22)).join('')}`);
  for (const [engine, e] of Object.entries(s.engines)) {
    console.log(`${pad(engine, 15, true)} ${classes.map((c) => pad(['p50', 'p95', 'max'].map((p) => ms(e.classes[c]?.[p]?.median)).join(' / '), 22)).join('')}`);
  }
  const live = Object.entries(s.live);
  if (live.length) {
    console.log(`\nappendLive on a live copy of the largest session (${live[0][1].liveEvents} events), medians over rounds, ms:`);
    console.log(`${pad('engine', 15, true)} ${['addLive', 'index it', 'append 1', 'search again', 'appendLive'].map((h) => pad(h, 13)).join('')}`);
    for (const [engine, l] of live) console.log(`${pad(engine, 15, true)} ${[l.addLiveMs, l.indexLiveMs, l.appendMs, l.searchAfterMs, l.totalMs].map((x) => pad(ms(x), 13)).join('')}`);
  }
}

/** Medians over rounds of the appendLive step's parts. */
function liveOf(runs) {
  const with_ = runs.filter((r) => r.appendLive);
  if (with_.length === 0) return null;
  const m = (pick) => median(with_.map(pick));
  return {
    liveEvents: with_[0].appendLive.liveEvents,
    addLiveMs: m((r) => r.appendLive.addLiveMs),
    indexLiveMs: m((r) => r.appendLive.indexLiveMs),
    appendMs: m((r) => r.appendLive.appendMs.p50),
    searchAfterMs: m((r) => r.appendLive.searchAfterMs.p50),
    totalMs: m((r) => r.appendLive.totalMs.p50),
  };
}

const summaries = tiers.map((dir) => summarizeTier(readTier(dir)));
for (const s of summaries) printTier(s);
const failed = summaries.some((s) => Object.values(s.checks ?? {}).some((c) => c.pages.length > 0));
// A checks-only run (the smoke tier in `make test`) must have checked something.
const unchecked = argv['checks-only'] && summaries.some((s) => s.checks === null);
if (argv.json) {
  const machine = { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryBytes: os.totalmem(), node: process.version, platform: `${os.type()} ${os.release()}` };
  fs.writeFileSync(argv.json, JSON.stringify({ generatedAt: new Date().toISOString(), machine, tiers: summaries }, null, 1) + '\n');
  console.log(`\nsummary: ${argv.json}`);
}
if (failed) {
  console.log('\nFAIL: first pages differ from DSH\'s');
  process.exit(1);
}
if (unchecked) {
  console.log('\nFAIL: no DSH run to check the first pages against');
  process.exit(1);
}
