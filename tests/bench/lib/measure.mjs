// The measurement protocol every engine follows (the native example mirrors it in Rust):
// one warm-up pass records each query's first pages, then `runs` timed passes.
// Per query: `searchSessions({query})`, then `searchEvents({sessionId, query})` in the session of
// the first session hit (the largest session when there is none), as a UI would drill down.
import fs from 'node:fs';

/** Nearest-rank percentile of `samples` (ms). */
export function percentile(samples, p) {
  const sorted = [...samples].sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function summarize(samples) {
  return {
    n: samples.length,
    p50: percentile(samples, 50),
    p95: percentile(samples, 95),
    max: percentile(samples, 100),
    mean: samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length),
  };
}

/** Reads the corpus directory written by generate.mjs. */
export function readCorpus(dir) {
  return {
    manifest: JSON.parse(fs.readFileSync(`${dir}/manifest.json`, 'utf8')),
    queries: JSON.parse(fs.readFileSync(`${dir}/queries.json`, 'utf8')),
  };
}

/**
 * Runs the protocol. `sessions(request)` and `events(request)` return pages (objects).
 * Returns {latency, perQuery, pages}.
 */
export async function runQueries({ sessions, events, queries, runs, fallbackSession }) {
  const pages = [];
  const plan = [];
  for (const { query, category } of queries) {
    const s = await sessions({ query });
    const sessionId = s.items[0]?.header.id ?? fallbackSession;
    const e = await events({ sessionId, query });
    pages.push({ query, category, sessions: s, eventsSession: sessionId, events: e });
    plan.push({ query, category, sessionId, s: [], e: [] });
  }
  for (let run = 0; run < runs; run++) {
    for (const p of plan) {
      let t = performance.now();
      await sessions({ query: p.query });
      p.s.push(performance.now() - t);
      t = performance.now();
      await events({ sessionId: p.sessionId, query: p.query });
      p.e.push(performance.now() - t);
    }
  }
  const all = plan.flatMap((p) => [...p.s, ...p.e]);
  return {
    latency: {
      all: summarize(all),
      sessions: summarize(plan.flatMap((p) => p.s)),
      events: summarize(plan.flatMap((p) => p.e)),
    },
    perQuery: plan.map((p) => ({ query: p.query, category: p.category, sessionsMs: percentile(p.s, 50), eventsMs: percentile(p.e, 50), hits: pages.find((x) => x.query === p.query).sessions.items.length })),
    pages,
  };
}
