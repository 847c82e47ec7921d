#!/usr/bin/env node
// Prints the benchmark table from the JSON files of one run: DSH first (the baseline measured
// in the same run), then each of our engines with ratios against it, the targets of the
// performance issue (met or not), and the first-page comparison with DSH for every query.
//
//   node report.mjs DSH.json OURS.json... [--targets-engine wasm/tantivy] [--json SUMMARY.json]
import fs from 'node:fs';
import { parseArgs } from 'node:util';

const { values: argv, positionals } = parseArgs({ allowPositionals: true, options: { 'targets-engine': { type: 'string', default: 'wasm/tantivy' }, json: { type: 'string' } } });
const [dsh, ...ours] = positionals.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
const MB = (b) => (b == null ? '–' : `${(b / 1e6).toFixed(0)} MB`);
const ms = (x) => (x == null ? '–' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
const ratio = (a, b) => (a == null || b == null || b === 0 ? '–' : `${(a / b).toFixed(a / b >= 10 ? 0 : 1)}×`);
const pad = (s, n, right = false) => (right ? String(s).padEnd(n) : String(s).padStart(n));

/** JSON with sorted keys, so key order does not count as a difference. */
function canon(v) {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canon(v[k])}`).join(',')}}`;
  return JSON.stringify(v);
}
function memoryOf(r) {
  const m = r.memory ?? {};
  if (m.wasmIndexBytes != null) return { index: m.wasmIndexBytes, total: m.wasmTotal, label: `wasm +${MB(m.wasmIndexBytes)} index, ${MB(m.wasmTotal)} total` };
  if (m.rssIndexBytes != null) return { index: m.rssIndexBytes, total: m.rssTotal, label: `rss +${MB(m.rssIndexBytes)} index, ${MB(m.rssTotal)} total` };
  return { index: m.rssBytes, total: m.rssTotal, label: `rss +${MB(m.rssBytes)} (logs+index), ${MB(m.rssTotal)} total` };
}

const N = dsh.events, text = dsh.textBytes;
console.log(`\n== make bench: ${N} events, ${(text / 1e6).toFixed(1)} MB of text; ${dsh.perQuery.length} queries × ${dsh.latency.sessions.n / dsh.perQuery.length} timed runs × 2 methods; p50/p95 over all ${dsh.latency.all.n} calls ==`);
console.log(`${pad('engine', 16, true)} ${pad('load ms', 8)} ${pad('index ms', 9)} ${pad('p50 ms', 8)} ${pad('p95 ms', 8)} ${pad('p50 vs DSH', 11)} ${pad('p95 vs DSH', 11)} ${pad('load+index vs DSH', 18)}  memory`);
for (const r of [dsh, ...ours]) {
  const isDsh = r === dsh;
  const build = (r.loadMs ?? 0) + r.indexMs;
  console.log(`${pad(r.engine, 16, true)} ${pad(ms(r.loadMs), 8)} ${pad(ms(r.indexMs), 9)} ${pad(ms(r.latency.all.p50), 8)} ${pad(ms(r.latency.all.p95), 8)} ${pad(isDsh ? 'baseline' : ratio(dsh.latency.all.p50, r.latency.all.p50), 11)} ${pad(isDsh ? 'baseline' : ratio(dsh.latency.all.p95, r.latency.all.p95), 11)} ${pad(isDsh ? 'baseline' : ratio(dsh.indexMs, build), 18)}  ${memoryOf(r).label}`);
}

// Per category: the median over the category's queries of each query's median time.
const cats = [...new Set(dsh.perQuery.map((q) => q.category))];
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor((s.length - 1) / 2)]; };
console.log(`\nper query category, median ms (searchSessions / searchEvents):`);
console.log(`${pad('engine', 16, true)} ${cats.map((c) => pad(c, 16)).join(' ')}`);
for (const r of [dsh, ...ours]) {
  const cells = cats.map((c) => { const qs = r.perQuery.filter((q) => q.category === c); return pad(`${ms(median(qs.map((q) => q.sessionsMs)))} / ${ms(median(qs.map((q) => q.eventsMs)))}`, 16); });
  console.log(`${pad(r.engine, 16, true)} ${cells.join(' ')}`);
}

// First pages against DSH's.
const mismatches = {};
for (const r of ours) {
  const list = [];
  for (const [i, want] of dsh.pages.entries()) {
    const got = r.pages[i];
    const diff = [];
    if (got.query !== want.query) { list.push(`${want.query}: query order differs`); continue; }
    if (canon(got.sessions.items) !== canon(want.sessions.items)) diff.push('searchSessions items');
    if ((got.sessions.nextCursor === undefined) !== (want.sessions.nextCursor === undefined)) diff.push('searchSessions nextCursor presence');
    if (got.eventsSession !== want.eventsSession) diff.push(`searchEvents session (${got.eventsSession} vs DSH ${want.eventsSession})`);
    else {
      if (canon(got.events.items) !== canon(want.events.items)) diff.push('searchEvents items');
      if (canon(got.events.session) !== canon(want.events.session)) diff.push('searchEvents session header');
      if ((got.events.nextCursor === undefined) !== (want.events.nextCursor === undefined)) diff.push('searchEvents nextCursor presence');
    }
    if (diff.length) list.push(`${JSON.stringify(want.query)}: ${diff.join(', ')}`);
  }
  mismatches[r.engine] = list;
}
console.log(`\nfirst pages vs DSH (items, order, snippets, headers, next-page presence; ${dsh.pages.length} queries × 2 methods):`);
for (const [engine, list] of Object.entries(mismatches)) {
  console.log(`  ${pad(engine, 16, true)} ${list.length === 0 ? 'identical' : `${list.length} queries differ`}`);
  for (const m of list.slice(0, 10)) console.log(`      ${m}`);
}

// The issue's targets, judged on one engine (wasm by default).
const t = ours.find((r) => r.engine === argv['targets-engine']);
const targets = [];
if (t) {
  const mem = memoryOf(t);
  const p50 = dsh.latency.all.p50 / t.latency.all.p50, p95 = dsh.latency.all.p95 / t.latency.all.p95;
  const build = (t.loadMs ?? 0) + t.indexMs;
  const perEvent = mem.total / N;
  const at1M = perEvent * 1e6;
  targets.push(['DSH\'s exact order and snippets (every query, both methods)', mismatches[t.engine].length === 0, `${mismatches[t.engine].length} differing queries`]);
  targets.push(['p50 ≥ 20× faster than DSH', p50 >= 20, `${p50.toFixed(1)}× (${ms(t.latency.all.p50)} vs ${ms(dsh.latency.all.p50)} ms)`]);
  targets.push(['p95 ≥ 30× faster than DSH', p95 >= 30, `${p95.toFixed(1)}× (${ms(t.latency.all.p95)} vs ${ms(dsh.latency.all.p95)} ms)`]);
  targets.push([`index ${N} events faster than DSH reconciles them`, build < dsh.indexMs, `load ${ms(t.loadMs)} + index ${ms(t.indexMs)} = ${ms(build)} ms vs DSH ${ms(dsh.indexMs)} ms`]);
  targets.push(['index memory ≤ 0.5× the text', mem.index <= 0.5 * text, `${(mem.index / text).toFixed(2)}× (${MB(mem.index)} for ${MB(text)} of text)`]);
  targets.push(['1,000,000 events in one tab (wasm32: 4 GiB)', at1M < 4 * 2 ** 30, `extrapolated ${(at1M / 2 ** 30).toFixed(2)} GiB total wasm memory (${(perEvent / 1024).toFixed(1)} KiB/event × 1M, linear from ${N})`]);
  console.log(`\ntargets (${t.engine}, measured against DSH in this run):`);
  for (const [name, ok, detail] of targets) console.log(`  ${ok ? 'MET ' : 'MISS'}  ${pad(name, 56, true)} ${detail}`);
}
if (argv.json) fs.writeFileSync(argv.json, JSON.stringify({ events: N, textBytes: text, engines: [dsh, ...ours].map((r) => ({ engine: r.engine, loadMs: r.loadMs, indexMs: r.indexMs, latency: r.latency, memory: r.memory })), mismatches, targets }, null, 1) + '\n');
