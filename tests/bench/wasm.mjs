#!/usr/bin/env node
// Our wasm build under Node 24: the `SessionSearch` class of the wasm-bindgen package (built by
// run.sh into target/bench/pkg, `--target nodejs`) loads the generated root as a dropped folder
// (`loadEntries`), builds the tantivy index on the first search and answers the query protocol
// of lib/measure.mjs. Answers cross the boundary as JSON text and are parsed here, as a page
// would. Memory: the wasm linear memory after loading and after indexing, and process RSS.
//
//   node wasm.mjs --corpus DIR --pkg DIR --out FILE.json [--runs 5]
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { readCorpus, runQueries } from './lib/measure.mjs';

const { values: argv } = parseArgs({ options: { corpus: { type: 'string' }, pkg: { type: 'string' }, out: { type: 'string' }, runs: { type: 'string', default: '5' } } });
if (!argv.corpus || !argv.pkg || !argv.out) { console.error('usage: node wasm.mjs --corpus DIR --pkg DIR --out FILE.json [--runs N]'); process.exit(2); }
const { manifest, queries } = readCorpus(argv.corpus);
// The nodejs glue keeps its instance private: catch it as it is created to read its memory.
const RealInstance = WebAssembly.Instance;
let instance;
WebAssembly.Instance = function Instance(module, imports) { instance = new RealInstance(module, imports); return instance; };
const pkg = createRequire(import.meta.url)(path.resolve(argv.pkg, 'dsh_session_search.js'));
WebAssembly.Instance = RealInstance;
const memory = () => instance.exports.memory.buffer.byteLength;

function walk(dir, rel = '', out = []) {
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) walk(dir, r, out); else out.push(r);
  }
  return out;
}
const root = path.join(argv.corpus, 'root');
const paths = walk(root);
const contents = paths.map((p) => new Uint8Array(fs.readFileSync(path.join(root, p))));

global.gc?.();
const rss0 = process.memoryUsage().rss;
const search = new pkg.SessionSearch();
const wasm0 = memory();
let t = performance.now();
const report = JSON.parse(search.loadEntries('bench', paths, contents, false));
const loadMs = performance.now() - t;
if (report.failures?.length) throw new Error(`load failures: ${JSON.stringify(report.failures).slice(0, 500)}`);
const wasmLoaded = memory();
t = performance.now();
JSON.parse(search.searchSessions(JSON.stringify({ query: 'zzyzx qwertyuiop' })));
const indexMs = performance.now() - t;
const wasmIndexed = memory();
global.gc?.();
const rss1 = process.memoryUsage().rss;

const result = await runQueries({
  sessions: (request) => JSON.parse(search.searchSessions(JSON.stringify(request))),
  events: (request) => JSON.parse(search.searchEvents(JSON.stringify(request))),
  queries,
  runs: Number(argv.runs),
  fallbackSession: manifest.largestSession.id,
});
const out = {
  engine: 'wasm/tantivy',
  events: manifest.events,
  textBytes: manifest.textBytes,
  loadMs,
  indexMs,
  memory: {
    wasmStart: wasm0,
    wasmLoadBytes: wasmLoaded - wasm0,
    wasmIndexBytes: wasmIndexed - wasmLoaded,
    wasmTotal: wasmIndexed,
    wasmAfterQueries: memory(),
    rssTotal: rss1,
    rssBytes: rss1 - rss0,
  },
  ...result,
};
fs.writeFileSync(argv.out, JSON.stringify(out) + '\n');
console.log(`wasm/tantivy: load ${loadMs.toFixed(0)} ms, index ${indexMs.toFixed(0)} ms, p50 ${out.latency.all.p50.toFixed(3)} ms, p95 ${out.latency.all.p95.toFixed(3)} ms, wasm memory ${(wasmIndexed / 1e6).toFixed(0)} MB`);
