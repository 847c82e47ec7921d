// The measurement protocol every engine follows, free of Node APIs so the Chromium page runs
// the very same code (the native example mirrors it in Rust):
// - queries: one warm-up pass records each query's first pages, then `runs` timed passes. Per
//   query: `searchSessions({query})`, then `searchEvents({sessionId, query})` in the session of
//   the first session hit (the largest session when there is none), as a UI would drill down.
// - prepare: the plan's one-source and three-source references, `reps` timed calls each; the
//   first answer is kept (DSH's fields, context ids set aside) to compare with DSH's.
// - appendLive: the plan's source session becomes a live session (`addLive` with its events);
//   then `reps` times one event is appended and the event's unique word searched for, which
//   must find the live session first.

/**
 * Every engine's first search, asked as soon as it can be: one common word (about one line in
 * seven of the bench corpus's logs holds it), the kind of search a user types first. Where the
 * index does not answer yet, it reads every event and extracts the many that may hold it; a
 * phrase found nowhere, the first search until this was set, extracts none.
 */
export const FIRST_QUERY = 'error';

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
    mean: samples.length === 0 ? null : samples.reduce((a, b) => a + b, 0) / samples.length,
  };
}

/** Latency summaries over every call, per method, and per query category (both methods). */
function latencyOf(plan) {
  const categories = {};
  for (const category of new Set(plan.map((p) => p.category))) {
    const inCategory = plan.filter((p) => p.category === category);
    categories[category] = {
      all: summarize(inCategory.flatMap((p) => [...p.s, ...p.e])),
      sessions: summarize(inCategory.flatMap((p) => p.s)),
      events: summarize(inCategory.flatMap((p) => p.e)),
    };
  }
  return {
    all: summarize(plan.flatMap((p) => [...p.s, ...p.e])),
    sessions: summarize(plan.flatMap((p) => p.s)),
    events: summarize(plan.flatMap((p) => p.e)),
    categories,
  };
}

/**
 * Runs the query protocol. `sessions(request)` and `events(request)` return pages (objects).
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
  return {
    latency: latencyOf(plan),
    perQuery: plan.map((p, i) => ({ query: p.query, category: p.category, sessionsMs: percentile(p.s, 50), eventsMs: percentile(p.e, 50), hits: pages[i].sessions.items.length })),
    pages,
  };
}

/** A copy of `value` with the (random) id of every context message replaced by a placeholder. */
export function withoutContextIds(value) {
  if (Array.isArray(value)) return value.map(withoutContextIds);
  if (value === null || typeof value !== 'object') return value;
  const isContext = value.source?.kind === 'session-reference';
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isContext && k === 'id' ? '<context id>' : withoutContextIds(v)]));
}

/** DSH's own fields of a prepare answer, comparable across engines. */
export function prepareFields(result) {
  return withoutContextIds({ content: result.content, additionalContext: result.additionalContext ?? null });
}

/** Times `reps` calls of `prepare(references)` for each reference set of the plan. */
export async function runPrepare({ prepare, plan, reps }) {
  const out = {};
  for (const [name, references] of [['one', plan.prepare.one], ['three', plan.prepare.three]]) {
    const samples = [];
    let first;
    for (let i = 0; i < Math.max(1, reps); i++) {
      const t = performance.now();
      const result = await prepare(plan.prepare.agent, plan.prepare.content, references);
      samples.push(performance.now() - t);
      first ??= prepareFields(result);
    }
    out[name] = { ms: summarize(samples), sources: references.length, result: first };
  }
  return out;
}

/** The event appended in repetition `i` after the source's last event `last`. */
export function liveEvent(plan, last, i) {
  return {
    type: 'user/message',
    seq: last.seq + 1 + i,
    time: last.time + 1 + i,
    data: { id: `bench-live-${i}`, role: 'user', content: [{ type: 'text', text: `${plan.live.text} ${plan.live.token}${i}` }], source: { kind: 'user' } },
    surfaceOp: 'append',
  };
}

/**
 * The appendLive protocol over an archive-like `api` (async readSession, addLive, appendLive,
 * searchSessions). Returns times and whether every search found the appended event's session.
 */
export async function runAppendLive({ api, plan, reps }) {
  const source = await api.readSession(plan.live.sourceId);
  const header = { ...source.session, id: plan.live.id };
  let t = performance.now();
  await api.addLive(header, source.events);
  const addLiveMs = performance.now() - t;
  t = performance.now();
  await api.searchSessions({ query: plan.live.token });
  const indexLiveMs = performance.now() - t;
  const last = source.events.at(-1);
  const append = [], search = [], total = [];
  let found = 0;
  for (let i = 0; i < Math.max(1, reps); i++) {
    t = performance.now();
    await api.appendLive(plan.live.id, [liveEvent(plan, last, i)]);
    const appended = performance.now();
    const page = await api.searchSessions({ query: `${plan.live.token}${i}` });
    const done = performance.now();
    append.push(appended - t);
    search.push(done - appended);
    total.push(done - t);
    if (page.items[0]?.header.id === plan.live.id) found++;
  }
  return { liveEvents: source.events.length, addLiveMs, indexLiveMs, appendMs: summarize(append), searchAfterMs: summarize(search), totalMs: summarize(total), found, reps: total.length };
}

/**
 * One run of the packed package: `SessionArchive` from `dsh-session-search` (or its `/worker`
 * entry), `entries` the corpus as a dropped folder gives it ([{path, bytes}]), `memory()` the
 * module's wasm memory in bytes (it only grows, so the last reading is the peak; it is also read
 * after each phase, so the peak can be told apart by what raised it). `settle()`, if given, is
 * awaited between creating the archive and loading it, and resolves to the milliseconds it
 * waited (chromium.mjs: until the browser's own start-up work is over). With `warmUp`, the
 * archive is warmed up (`warmUp()`) right after it is created, as an app does while idle, and
 * the settling that follows waits for the engine's compiles it started.
 */
export async function runPackage({ SessionArchive, entries, queries, plan, fallbackSession, runs, reps, memory, settle, warmUp = false }) {
  const archive = await SessionArchive.create();
  let warmed;
  if (warmUp) {
    const t = performance.now();
    warmed = { ...(await archive.warmUp()), ms: performance.now() - t };
    if (!warmed.completed) throw new Error(`the warm-up stopped early: ${JSON.stringify(warmed)}`);
  }
  const wasmStart = await memory();
  const settledMs = settle === undefined ? 0 : await settle();
  const start = performance.now();
  const report = await archive.load(entries);
  const loaded = performance.now();
  if (report.failures?.length) throw new Error(`load failures: ${JSON.stringify(report.failures).slice(0, 500)}`);
  const wasmLoaded = await memory();
  // As an app would: the index builds in the background (in steps) and the first search does
  // not wait for it. Then the build is let finish.
  const build = archive.buildIndex();
  await archive.searchSessions({ query: FIRST_QUERY });
  const firstResult = performance.now();
  await build;
  const indexed = performance.now();
  const wasmIndexed = await memory();
  const result = await runQueries({
    sessions: (request) => archive.searchSessions(request),
    events: (request) => archive.searchEvents(request),
    queries,
    runs,
    fallbackSession,
  });
  const wasmQueried = await memory();
  const prepare = await runPrepare({ prepare: (...args) => archive.prepare(...args), plan, reps });
  const wasmPrepared = await memory();
  const appendLive = await runAppendLive({ api: archive, plan, reps });
  const wasmPeak = await memory();
  archive.free();
  return {
    warmUp: warmed,
    settledMs,
    loadMs: loaded - start,
    // The load's start and end by the wall clock (ms since the epoch), to cut a profile of the
    // whole machine to the load (cpu-profile.mjs).
    loadWindow: { start: performance.timeOrigin + start, end: performance.timeOrigin + loaded },
    indexMs: indexed - loaded,
    firstResultMs: firstResult - start,
    memory: { wasmStart, wasmLoadBytes: wasmLoaded - wasmStart, wasmIndexBytes: wasmIndexed - wasmLoaded, wasmTotal: wasmIndexed, wasmQueried, wasmPrepared, wasmPeak },
    ...result,
    prepare,
    appendLive,
  };
}
