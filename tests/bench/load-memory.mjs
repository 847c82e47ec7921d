#!/usr/bin/env node
// Where the packed package's wasm memory goes during a load, in Node: the corpus handed over as
// a dropped folder's Blobs (as the Chromium engine hands it), the module's memory read after the
// inputs are handed over (the first `loadStep`), after the load, and after the index build, with
// the input bytes and the bytes the package read from the Blobs.
//
//   node load-memory.mjs --app DIR --corpus DIR [--out FILE.json]
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { listFiles } from './lib/measure.mjs';

const { values: argv } = parseArgs({ options: { app: { type: 'string' }, corpus: { type: 'string' }, out: { type: 'string' } } });
if (!argv.app || !argv.corpus) { console.error('usage: node load-memory.mjs --app DIR --corpus DIR [--out FILE.json]'); process.exit(2); }

let instance;
const RealInstance = WebAssembly.Instance;
WebAssembly.Instance = function Instance(module, imports) { instance = new RealInstance(module, imports); return instance; };
const pkg = path.join(argv.app, 'node_modules', 'dsh-session-search');
const raw = await import(pathToFileURL(path.join(pkg, 'wasm', 'dsh_session_search.js')).href);
const { SessionArchive } = await import(pathToFileURL(path.join(pkg, 'entries', 'node.js')).href);
const memory = () => instance?.exports.memory.buffer.byteLength ?? 0;

// The memory when the first step starts: every input the package hands over before reading
// (all of them, when the load copies every input in first).
let firstStep = null;
const realStep = raw.WasmArchive.prototype.loadStep;
raw.WasmArchive.prototype.loadStep = function loadStep(...args) {
  if (firstStep === null) firstStep = memory();
  return realStep.apply(this, args);
};

const root = path.join(argv.corpus, 'root');
let bytesRead = 0;
/** A file as a dropped folder gives it, counting what the package reads of it. */
function blobOf(file) {
  const size = fs.statSync(file).size;
  const blob = new Blob([]);
  const read = async () => {
    const bytes = fs.readFileSync(file);
    bytesRead += bytes.length;
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
  };
  return Object.defineProperties(blob, {
    size: { value: size },
    arrayBuffer: { value: read },
    slice: { value: (start = 0, end = size) => { const b = fs.readFileSync(file).subarray(start, end); return new Blob([b]); } },
  });
}
const files = listFiles(root);
const inputBytes = files.reduce((sum, p) => sum + fs.statSync(path.join(root, p)).size, 0);
const entries = files.map((p) => ({ path: `root/${p}`, bytes: blobOf(path.join(root, p)) }));

const archive = await SessionArchive.create();
const start = memory();
let t = performance.now();
const report = await archive.load(entries);
const loadMs = performance.now() - t;
const loaded = memory();
t = performance.now();
await archive.searchSessions({ query: 'zzyzx qwertyuiop' });
const indexMs = performance.now() - t;
const indexed = memory();
const out = {
  files: files.length,
  inputBytes,
  bytesRead,
  sessions: report.sessions.length,
  failures: report.failures.length,
  memory: { start, firstStep, loaded, indexed },
  loadMs,
  indexMs,
};
archive.free();
if (argv.out) fs.writeFileSync(argv.out, JSON.stringify(out) + '\n');
const mb = (n) => `${(n / 1e6).toFixed(0)} MB`;
console.log(`${files.length} files, ${mb(inputBytes)} of input; wasm: start ${mb(start)}, first step ${mb(firstStep)}, loaded ${mb(loaded)}, indexed ${mb(indexed)}; load ${loadMs.toFixed(0)} ms, index ${indexMs.toFixed(0)} ms; ${report.sessions.length} sessions, ${report.failures.length} failures`);
