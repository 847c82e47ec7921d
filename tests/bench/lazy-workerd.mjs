#!/usr/bin/env node
// The lazy source in workerd (`make bench-lazy`): a generated persistence root of N small
// sessions served by a fetch-backed store (an HTTP server on 127.0.0.1, bound to the Worker as
// a service), and in a fresh workerd each time, one of:
//   lazy: SessionArchive.create({source}) — the listing reads each log for its header only;
//   full: every log read from the store and loaded.
// Then the same listSessions and a prepare of three sources (and, last, a search, which reads
// a lazy source whole). Each step's time is the driver's round trip (workerd's clocks stand
// still while a request computes); memory is the package's wasm memory after the step (it
// only grows, so the last reading is the peak). Prints a table; writes target/bench/lazy-workerd.json.
//
//   node tests/bench/lazy-workerd.mjs --tarball PKG.tgz [--sessions 10000] [--events 12]
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { withWorkerd } from '../pkg/workerd.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const { values: argv } = parseArgs({ options: { tarball: { type: 'string' }, sessions: { type: 'string', default: '10000' }, events: { type: 'string', default: '12' } } });
if (!argv.tarball) {
  console.error('usage: node tests/bench/lazy-workerd.mjs --tarball PKG.tgz [--sessions N] [--events M]');
  process.exit(2);
}
const SESSIONS = Number(argv.sessions);
const EVENTS = Number(argv.events);
const out = join(repo, 'target', 'bench');
const app = join(out, 'lazy-app');
const tools = join(repo, 'tests', 'pkg', 'node_modules', '.bin');

/** A small log: a header and `events` user messages of a few sentences each. */
function sessionLog(n) {
  const id = `s-${String(n).padStart(5, '0')}`;
  const createdAt = 1_700_000_000_000 + n * 60_000;
  const lines = [JSON.stringify({ type: 'session', version: 0, id, createdAt, cwd: '/home/dev/app', delegationDepth: 0 })];
  for (let seq = 0; seq < EVENTS; seq++) {
    const text = `Session ${n} step ${seq}: the build of module ${(n * 31 + seq) % 997} failed on line ${seq * 7}; retried with cache ${n % 13} and compared the output against run ${(n + seq) % 101}.`;
    lines.push(JSON.stringify({
      type: 'user/message', seq, time: createdAt + seq + 1, surfaceOp: 'append',
      data: { id: `m${seq}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } },
    }));
  }
  return { id, path: `--home-dev-app--/${id}/session.jsonl`, bytes: Buffer.from(lines.join('\n') + '\n') };
}

const WORKER = `
import * as api from 'dsh-session-search';

// The package instantiates its module on first use: keep the instance to read its memory.
let instance;
const RealInstance = WebAssembly.Instance;
WebAssembly.Instance = function Instance(module, imports) {
  instance = new RealInstance(module, imports);
  return instance;
};
const wasmBytes = () => (instance ? instance.exports.memory.buffer.byteLength : 0);

let archive;
let reads = 0;
let readBytes = 0;

function store(env) {
  return {
    list: async () => (await env.STORE.fetch('http://store/list')).json(),
    read: async (path) => {
      const response = await env.STORE.fetch('http://store/log/' + encodeURIComponent(path));
      if (!response.ok) throw new Error('the store answered ' + response.status);
      const bytes = new Uint8Array(await response.arrayBuffer());
      reads++;
      readBytes += bytes.length;
      return bytes;
    },
  };
}

const steps = {
  async lazy(env) {
    archive = await api.SessionArchive.create({ source: store(env) });
  },
  async full(env) {
    const source = store(env);
    const entries = [];
    for (const log of await source.list()) entries.push({ path: log.path, bytes: await source.read(log.path) });
    archive = await api.SessionArchive.create();
    await archive.load(entries);
  },
  async listSessions() {
    return { sessions: (await archive.listSessions()).length };
  },
  async prepare(env, body) {
    const { agent, cited } = JSON.parse(body);
    const result = await archive.prepare({ id: agent }, 'compare these runs', cited.map((sessionId) => ({ sessionId })), { messageId: 'a', contextMessageId: 'b' });
    return { references: result.references.length, contextChars: JSON.stringify(result.additionalContext).length };
  },
  async search() {
    return { hits: (await archive.searchSessions({ query: 'retried', limit: 5 })).items.length };
  },
};

export default {
  async fetch(request, env) {
    const step = new URL(request.url).pathname.slice(1);
    try {
      const before = reads;
      const result = (await steps[step](env, await request.text())) ?? {};
      return Response.json({ ...result, wasmBytes: wasmBytes(), reads: reads - before, readBytes });
    } catch (error) {
      return new Response(String(error.stack || error), { status: 500 });
    }
  },
};
`;

function install() {
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'lazy-bench', private: true, type: 'module' }));
  const result = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--offline', resolve(argv.tarball)], { cwd: app, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`npm install: ${result.stderr}`);
}

function serveStore(logs) {
  const byPath = new Map(logs.map((l) => [l.path, l.bytes]));
  const listing = JSON.stringify(logs.map((l) => ({ path: l.path, size: l.bytes.length })));
  const server = createServer((request, response) => {
    const url = new URL(request.url, 'http://store');
    if (url.pathname === '/list') return response.end(listing);
    const bytes = url.pathname.startsWith('/log/') ? byPath.get(decodeURIComponent(url.pathname.slice(5))) : undefined;
    if (bytes === undefined) {
      response.statusCode = 404;
      return response.end();
    }
    response.end(bytes);
  });
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done(server)));
}

async function runMode(mode, port, prepareBody) {
  return withWorkerd({ app, tools, worker: WORKER, externals: { STORE: port } }, async (post, log) => {
    const results = {};
    for (const [step, body] of [[mode, ''], ['listSessions', ''], ['prepare', prepareBody], ['search', '']]) {
      const started = performance.now();
      const response = await post(body, step);
      const text = await response.text();
      if (!response.ok) throw new Error(`${mode} ${step}: workerd ${response.status}: ${text}\n${log()}`);
      results[step === mode ? 'open' : step] = { ms: performance.now() - started, ...JSON.parse(text) };
    }
    return results;
  });
}

install();
const logs = Array.from({ length: SESSIONS }, (_, i) => sessionLog(i + 1));
const totalBytes = logs.reduce((n, l) => n + l.bytes.length, 0);
// The agent and three sources from across the archive.
const pick = (f) => logs[Math.floor(f * (SESSIONS - 1))];
const cited = [pick(0.1), pick(0.5), pick(0.9)];
const citedBytes = cited.reduce((n, l) => n + l.bytes.length, 0);
const prepareBody = JSON.stringify({ agent: pick(0).id, cited: cited.map((l) => l.id) });
const server = await serveStore(logs);
const report = { sessions: SESSIONS, eventsPerSession: EVENTS, logBytes: totalBytes, citedBytes, modes: {} };
try {
  for (const mode of ['lazy', 'full']) report.modes[mode] = await runMode(mode, server.address().port, prepareBody);
} finally {
  server.close();
}
for (const mode of ['lazy', 'full']) {
  const r = report.modes[mode];
  if (r.listSessions.sessions !== SESSIONS || r.prepare.references !== 3) throw new Error(`${mode}: ${JSON.stringify(r)}`);
}
writeFileSync(join(out, 'lazy-workerd.json'), JSON.stringify(report, null, 2) + '\n');

const MB = (b) => `${(b / 1e6).toFixed(1)} MB`;
const ms = (t) => `${t.toFixed(0)} ms`;
console.log(`workerd, ${SESSIONS} sessions of ${EVENTS} events (${MB(totalBytes)} of logs; the three cited: ${(citedBytes / 1e3).toFixed(1)} kB)`);
console.log('mode   open (list | load)       listSessions            prepare 3 sources             search (first)');
for (const mode of ['lazy', 'full']) {
  const { open, listSessions, prepare, search } = report.modes[mode];
  console.log(
    `${mode.padEnd(6)} ${ms(open.ms).padStart(8)} wasm ${MB(open.wasmBytes).padStart(8)}  ${ms(listSessions.ms).padStart(6)} wasm ${MB(listSessions.wasmBytes).padStart(8)}  ` +
      `${ms(prepare.ms).padStart(6)} wasm ${MB(prepare.wasmBytes).padStart(8)} reads ${String(prepare.reads).padStart(2)}   ` +
      `${ms(search.ms).padStart(7)} wasm ${MB(search.wasmBytes).padStart(8)} reads ${search.reads}`,
  );
}
console.log(`peak wasm memory through the 3-source prepare: lazy ${MB(report.modes.lazy.prepare.wasmBytes)}, full ${MB(report.modes.full.prepare.wasmBytes)}`);
console.log(`search hits: lazy ${report.modes.lazy.search.hits}, full ${report.modes.full.search.hits}`);
if (report.modes.lazy.search.hits !== report.modes.full.search.hits || report.modes.full.search.hits === 0) throw new Error('the searches found nothing or disagree');
