#!/usr/bin/env node
// The packed npm package in Node 24, installed from its tarball into target/bench/app as a user
// installs it (run.sh), through `import { SessionArchive } from 'dsh-session-search'`: loads the
// corpus as a dropped folder's entries ({path, bytes}, paths under the folder's name), then
// runs lib/protocol.mjs's `runPackage` (queries, prepare, appendLive). Memory: the module's wasm
// memory (its instance is caught as the package creates it) and the process's peak RSS.
//
//   node pkg-node.mjs --app DIR --corpus DIR --plan PLAN.json --out FILE.json [--runs 5] [--reps 5]
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { listFiles, peakRss, readCorpus, runPackage } from './lib/measure.mjs';

const { values: argv } = parseArgs({ options: { app: { type: 'string' }, corpus: { type: 'string' }, plan: { type: 'string' }, out: { type: 'string' }, runs: { type: 'string', default: '5' }, reps: { type: 'string', default: '5' } } });
if (!argv.app || !argv.corpus || !argv.plan || !argv.out) { console.error('usage: node pkg-node.mjs --app DIR --corpus DIR --plan PLAN.json --out FILE.json [--runs N] [--reps N]'); process.exit(2); }
const { manifest, queries, plan } = readCorpus(argv.corpus, argv.plan);

// The Node entry instantiates synchronously on first use; keep the instance to read its memory.
let instance;
const RealInstance = WebAssembly.Instance;
WebAssembly.Instance = function Instance(module, imports) { instance = new RealInstance(module, imports); return instance; };
const entry = path.join(argv.app, 'node_modules', 'dsh-session-search', 'entries', 'node.js');
const { SessionArchive } = await import(pathToFileURL(entry).href);

const root = path.join(argv.corpus, 'root');
const entries = listFiles(root).map((p) => ({ path: `root/${p}`, bytes: new Uint8Array(fs.readFileSync(path.join(root, p))) }));
const out = {
  engine: 'pkg/node',
  events: manifest.events,
  textBytes: manifest.textBytes,
  ...(await runPackage({
    SessionArchive, entries, queries, plan,
    fallbackSession: manifest.largestSession.id,
    runs: Number(argv.runs),
    reps: Number(argv.reps),
    memory: () => instance?.exports.memory.buffer.byteLength ?? 0,
  })),
};
out.memory.rssPeak = peakRss();
fs.writeFileSync(argv.out, JSON.stringify(out) + '\n');
console.log(`pkg/node: load ${out.loadMs.toFixed(0)} ms, index ${out.indexMs.toFixed(0)} ms, p50 ${out.latency.all.p50?.toFixed(3) ?? "–"} ms, prepare ${out.prepare.one.ms.p50.toFixed(1)} / ${out.prepare.three.ms.p50.toFixed(1)} ms, appendLive ${out.appendLive.totalMs.p50.toFixed(1)} ms, wasm ${(out.memory.wasmPeak / 1e6).toFixed(0)} MB`);
