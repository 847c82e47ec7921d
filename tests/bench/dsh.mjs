#!/usr/bin/env node
// DSH's own search over the benchmark corpus: the real `@deepseek-ai/dsh-session-query-sqlite`
// (SQLite FTS5, `path: ':memory:'` unless --db FILE) mounted with the JSONL persistence backend
// over the generated root. Measures the reconcile (the first search: DSH inspects every log and
// fills its FTS5 index), the query protocol of lib/protocol.mjs, and the plan's `prepare` calls
// through DSH's reference resolver (`@deepseek-ai/dsh-session-reference`, as
// tests/oracle/reference.mjs drives it); writes one run's JSON to --out.
//
//   node dsh.mjs --corpus DIR --plan PLAN.json --out FILE.json [--runs 5] [--reps 5] [--db :memory:]
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { oracleImport } from './lib/oracle.mjs';
import { FIRST_QUERY, peakRss, readCorpus, runPrepare, runQueries } from './lib/measure.mjs';

const { values: argv } = parseArgs({ options: { corpus: { type: 'string' }, plan: { type: 'string' }, out: { type: 'string' }, runs: { type: 'string', default: '5' }, reps: { type: 'string', default: '5' }, db: { type: 'string', default: ':memory:' } } });
if (!argv.corpus || !argv.plan || !argv.out) { console.error('usage: node dsh.mjs --corpus DIR --plan PLAN.json --out FILE.json [--runs N] [--reps N] [--db PATH]'); process.exit(2); }
const { manifest, queries, plan } = readCorpus(argv.corpus, argv.plan);
const { Context } = await oracleImport('@deepseek-ai/cordis');
const { default: SessionStore } = await oracleImport('@deepseek-ai/dsh-session');
const { default: JsonlSessionPersistence } = await oracleImport('@deepseek-ai/dsh-session-persistence-jsonl');
const { SqliteSessionQueryEngine } = await oracleImport('@deepseek-ai/dsh-session-query-sqlite');
const { SessionReferenceResolver } = await oracleImport('@deepseek-ai/dsh-session-reference');

if (argv.db !== ':memory:') fs.rmSync(argv.db, { force: true });
const ctx = new Context();
await ctx.plugin(SessionStore);
await ctx.plugin(JsonlSessionPersistence, { root: `${argv.corpus}/root`, compression: 'zstd' });
await ctx.plugin(SqliteSessionQueryEngine, { path: argv.db, openAt: 'startup' });
const q = ctx.sessionQuery;

global.gc?.();
const before = process.memoryUsage();
let t = performance.now();
await q.searchSessions({ query: FIRST_QUERY });
const reconcileMs = performance.now() - t;
global.gc?.();
const after = process.memoryUsage();

t = performance.now();
const result = await runQueries({
  sessions: (request) => q.searchSessions(request),
  events: (request) => q.searchEvents(request),
  queries,
  runs: Number(argv.runs),
  fallbackSession: manifest.largestSession.id,
});
const queryPhaseSeconds = (performance.now() - t) / 1000;

// DSH's agent shape from the plan's `{id, cwd?}`.
const resolver = new SessionReferenceResolver(ctx.isolate('sessionReferenceResolver'), {});
const agent = (a) => ({ id: a.id, session: { header: a.cwd === undefined ? {} : { cwd: a.cwd } } });
const prepare = await runPrepare({
  prepare: (a, content, references) => resolver.prepare(agent(a), content, references),
  plan,
  reps: Number(argv.reps),
});

const out = {
  engine: 'dsh/sqlite',
  events: manifest.events,
  textBytes: manifest.textBytes,
  loadMs: null,
  indexMs: reconcileMs,
  firstResultMs: reconcileMs,
  memory: { rssBytes: after.rss - before.rss, rssTotal: after.rss, heapUsed: after.heapUsed, rssPeak: peakRss() },
  ...result,
  prepare,
  appendLive: null,
  queryPhaseSeconds,
};
fs.writeFileSync(argv.out, JSON.stringify(out) + '\n');
console.log(`dsh/sqlite: reconcile ${reconcileMs.toFixed(0)} ms, p50 ${result.latency.all.p50?.toFixed(2) ?? "–"} ms, p95 ${result.latency.all.p95?.toFixed(2) ?? "–"} ms, prepare ${prepare.one.ms.p50.toFixed(1)} / ${prepare.three.ms.p50.toFixed(1)} ms`);
await ctx.fiber.dispose();
