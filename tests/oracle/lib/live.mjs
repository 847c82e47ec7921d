// The live scenario: DSH's query service over a persisted root plus live
// sessions created through the real `ctx.sessions` API, with events appended
// between reads. Host actions are recorded as calls too:
//   {method:'addLive', params:[header, events]}     events = session.events right after creation
//   {method:'appendLive', params:[id, events]}      events = the new tail of session.events
// A refused host action carries `error` (and what was attempted as params).
//
// The live sessions live in a store that has no persistence write path: the
// query service gets a read-only `sessionPersistence` that forwards list() and
// inspect() to the real JSONL backend (mounted in a second context over the
// same root). So nothing reaches disk, the root stays byte-identical, and
// `persisted` flags only ever come from the files.
//
// Full-text search runs here too (SQLite index in memory): the read-only
// persistence also forwards listSnapshots(), which search uses to observe the
// root. Search calls are recorded like reads; page-following calls carry
// `cursorFrom` (see lib/search.mjs). A cross-session cursor taken before the
// appends goes stale (in this root it would anyway: the lone-surrogate id makes
// DSH re-index on every search, NOTES.md); within-session cursors on untouched
// sessions survive.
import { Context, Service } from '@deepseek-ai/cordis';
import SessionStore, { Session, SessionId } from '@deepseek-ai/dsh-session';
import { SqliteSessionQueryEngine } from '@deepseek-ai/dsh-session-query-sqlite';
import { openReader, close, cacheListing, withSeededUuids } from './dsh.mjs';
import { Rng, FakeClock } from './prng.mjs';
import { Script } from './script.mjs';
import { jsonCopy, MISSING } from './calls.mjs';
import { searchRecorder, commonWords } from './search.mjs';

export async function liveScenario(root, compression, call) {
  const calls = [];
  const pctx = cacheListing(await openReader(root, compression));
  const backend = pctx.sessionPersistence;
  class ReadOnlyPersistence extends Service {
    constructor(ctx) { super(ctx, 'sessionPersistence'); }
    list(signal) { return backend.list(signal); }
    inspect(id, signal) { return backend.inspect(id, signal); }
    listSnapshots(signal) { return backend.listSnapshots(signal); }
  }
  const ctx = new Context();
  await ctx.plugin(SessionStore);
  await ctx.plugin(ReadOnlyPersistence);
  // Search on (in-memory index); the seeded instance id keeps cursors deterministic.
  await withSeededUuids('dsh-oracle-live', () => ctx.plugin(SqliteSessionQueryEngine, { path: ':memory:', openAt: 'startup' }));
  const q = ctx.sessionQuery;
  const { push, chain, follow } = searchRecorder(q, call, calls);
  const realNow = Date.now;
  const rng = new Rng('dsh-oracle-live');

  const read = async (method, ...params) => { calls.push(await call(q, method, params)); };
  const host = (method, params, fn) => {
    try {
      fn();
      calls.push({ method, params: jsonCopy(params()) });
    } catch (e) {
      calls.push({ method, params: jsonCopy(params()), error: { code: e?.code ?? null, message: e instanceof Error ? e.message : String(e) } });
    }
  };
  const addLive = (id, options) => {
    let session;
    host('addLive', () => (session ? [session.header, session.events] : [{ version: 0, id, createdAt: Date.now(), ...options.meta }, options.seed ?? []]), () => {
      session = ctx.sessions.create(SessionId(id), options);
    });
    return session;
  };
  const appendLive = async (session, fn) => {
    const from = session.events.length;
    await fn();
    calls.push({ method: 'appendLive', params: jsonCopy([session.id, session.events.slice(from)]) });
  };
  /** A realistic detached log to seed a live session with. */
  const detachedLog = async (id, turns, { compact = false, title = false } = {}) => {
    const det = Session.create(SessionId(id));
    const s = new Script(det, rng.fork(id), clock, { flavour: 'en', tame: true });
    for (let t = 1; t <= turns; t++) {
      if (compact && t === turns) s.compact(null);
      await s.fullTurn('completed');
      if (title && t === 1) s.title('fallback');
    }
    return det.events;
  };

  let clock;
  try {
    const listing = await q.listSessions();
    const byId = new Map(listing.map((r) => [r.header.id, r.header]));
    const pick = (want, i) => (byId.has(want) ? want : listing[i % listing.length].header.id);
    const P1 = pick('abc', 0); // shadowed with an identical header
    const P2 = pick('résumé', 1); // parent of a live-only child
    const P3 = pick('Abd', 2); // shadowed with a header lacking delegationDepth
    const P4 = pick('ABC', 3); // conflicting header (createdAt + 1)
    clock = new FakeClock(Math.max(...listing.map((r) => r.header.createdAt)) + 3_600_000).install();

    await read('listSessions');
    await read('filterSessions', [{ kind: 'availability', values: ['live'] }]);

    // (a) shadow P1 with an identical header; the seed is its stored log (a resume).
    const s1 = await backend.inspect(P1);
    clock.tick(60_000);
    const L_P1 = addLive(P1, { seed: s1.events, meta: { ...s1.meta } });
    // (b) live-only sessions: a top session, a child of persisted P2, and a fork of the top one.
    clock.tick(60_000);
    const seedTop = await detachedLog('live-top', 3, { compact: true, title: true });
    clock.tick(60_000);
    const L_top = addLive('live-top', { seed: seedTop, meta: { cwd: '/home/dev/app' } });
    clock.tick(60_000);
    const seedKid = await detachedLog('live-kid', 1);
    clock.tick(60_000);
    addLive('live-kid', { seed: seedKid, meta: { parentSession: P2, origin: 'subagent', delegationDepth: 1, agentPreset: 'reviewer' } });
    clock.tick(60_000);
    const boundary = L_top.events.filter((e) => e.type === 'turn/end')[0].seq;
    let L_fork;
    host('addLive', () => [L_fork.header, L_fork.events], () => { L_fork = ctx.sessions.fork(L_top, boundary, SessionId('live-fork')); });
    // (a') shadow P3 with a header that omits delegationDepth (DSH compares it as ?? 0).
    const s3 = await backend.inspect(P3);
    const { delegationDepth: _omit, ...meta3 } = s3.meta;
    addLive(P3, { seed: s3.events, meta: meta3 });
    // Refused host actions: a duplicate live id, and a seed with a seq gap.
    addLive('live-top', { seed: seedTop, meta: { cwd: '/home/dev/app' } });
    addLive('live-bad-seed', { seed: [seedTop[0], { ...seedTop[1], seq: 5 }], meta: {} });

    // Reads over live + persisted.
    await read('listSessions');
    await read('filterSessions', [{ kind: 'availability', values: ['live'] }]);
    await read('filterSessions', [{ kind: 'availability', values: ['persisted'] }]);
    await read('filterSessions', [{ kind: 'availability', values: ['live'] }, { kind: 'availability', values: ['persisted'] }]);
    await read('filterSessions', [{ kind: 'parent', values: [P2, 'live-top'] }]);
    await read('filterSessions', [{ kind: 'cwd', values: ['/home/dev/app'] }, { kind: 'created-at', from: L_P1.header.createdAt }]);
    for (const id of ['live-top', 'live-fork', 'live-kid', P2, P1, P3]) await read('traceSession', id);
    for (const id of ['live-top', P1, P3]) {
      await read('readSession', id);
      await read('listEvents', id);
      await read('readSurface', id);
      await read('listDocuments', id);
      await read('readTitle', id);
    }
    await read('readSession', 'live-fork');
    await read('readSurface', 'live-kid');
    await read('readTitleSnapshots', ['live-top', P1, 'live-fork', MISSING, P1, P2, 'live-kid']);
    const nTop = L_top.events.length;
    await read('readEvent', { sessionId: 'live-top', seq: 0, after: 3 });
    await read('readEvent', { sessionId: 'live-top', seq: Math.floor(nTop / 2), before: 2, after: 2 });
    await read('readEvent', { sessionId: 'live-top', seq: nTop - 1, after: 50 });
    await read('readEvent', { sessionId: 'live-top', seq: nTop });
    await read('readEvent', { sessionId: P1, seq: L_P1.events.length - 1, before: 2 });
    const topEvents = L_top.events;
    const repl = topEvents.filter((e) => typeof e.surfaceOp === 'object').map((e) => e.seq);
    const shadowed = repl.length ? [...topEvents[repl[0]].sourceEventSeqs].filter((s) => topEvents[s]?.surfaceOp !== undefined) : [];
    for (const seq of [0, ...repl, ...shadowed.slice(0, 3), nTop]) await read('traceEvent', { sessionId: 'live-top', seq });
    await read('filterEvents', 'live-top', [{ kind: 'surface', values: ['shadowed'] }]);
    await read('filterEvents', 'live-top', [{ kind: 'text', text: 'the' }, { kind: 'type', values: ['assistant/message'] }]);
    await read('filterEvents', 'live-kid', [{ kind: 'seq', from: 2 }]);

    // Full-text search over live + persisted sessions. Query words are picked
    // from the documents (unrecorded exact reads): one shared by many sessions,
    // and per target session one found in at least two of its documents.
    const docs = async (id) => q.filterEvents(SessionId(id), []);
    // DSH's SQLite index stores a lone surrogate of a session id as U+FFFD (see
    // NOTES.md), so search hits on such a session carry a different id: the shared
    // word is chosen so that those sessions do not match it.
    const lone = (id) => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(id);
    const perSession = [];
    const avoid = new Set();
    for (const rec of await q.listSessions()) {
      const ws = commonWords(await docs(rec.header.id), 1);
      if (lone(rec.header.id)) for (const w of ws) avoid.add(w);
      else perSession.push(ws);
    }
    const wAll = commonWords(perSession.map((ws) => ({ text: ws.filter((w) => !avoid.has(w)).join(' ') })), 2)[0];
    const loneId = listing.map((r) => r.header.id).find(lone);
    const wOf = async (id) => commonWords(await docs(id), 2)[0];
    const [wFork, wTop, wP1, wP3] = [await wOf('live-fork'), await wOf('live-top'), await wOf(P1), await wOf(P3)];
    // An untouched persisted target (P2 if it has a word in two documents).
    let Q2;
    let wP2;
    for (const id of [P2, ...listing.map((r) => r.header.id)]) {
      if ([P1, P3, P4].includes(id)) continue;
      wP2 = await wOf(id);
      if (wP2 !== undefined) { Q2 = id; break; }
    }
    const reqAll = { query: wAll, limit: 1 };
    const reqFork = { sessionId: 'live-fork', query: wFork, limit: 1 };
    const reqP2 = { sessionId: Q2, query: wP2, limit: 1 };
    const reqTop = { sessionId: 'live-top', query: wTop, limit: 1 };
    const reqP1 = { sessionId: P1, query: wP1, limit: 1 };
    const iAll = await push('searchSessions', reqAll);
    const iFork = await push('searchEvents', reqFork);
    const iP2 = await push('searchEvents', reqP2);
    const iTop = await push('searchEvents', reqTop);
    const iP1 = wP1 === undefined ? undefined : await push('searchEvents', reqP1);
    await push('searchSessions', { query: wAll });
    await push('searchSessions', { query: wAll, sessionFilters: [{ kind: 'availability', values: ['live'] }] });
    await push('searchSessions', { query: wAll, sessionFilters: [{ kind: 'availability', values: ['persisted'] }] });
    await push('searchSessions', { query: wAll, sessionFilters: [{ kind: 'availability', values: ['live'] }, { kind: 'availability', values: ['persisted'] }] });
    await push('searchSessions', { query: wAll, sessionFilters: [{ kind: 'parent', values: [P2, 'live-top'] }] });
    await push('searchSessions', { query: wAll, sessionFilters: [{ kind: 'cwd', values: ['/home/dev/app'] }], eventFilters: [{ kind: 'surface', values: ['shadowed', 'log-only'] }] });
    await push('searchEvents', { sessionId: P3, query: wP3 ?? wAll });
    await push('searchEvents', { sessionId: 'live-kid', query: wAll });
    await push('searchEvents', { sessionId: 'live-top', query: wTop, filters: [{ kind: 'surface', values: ['shadowed'] }] });
    await push('searchEvents', { sessionId: MISSING, query: wAll });
    if (loneId !== undefined) {
      // The lone-surrogate id comes back as U+FFFD in header.id and sessionId.
      const w = commonWords(await docs(loneId), 1)[0];
      await push('searchEvents', { sessionId: loneId, query: w, limit: 1 });
      await push('searchSessions', { query: w, sessionFilters: [{ kind: 'id', values: [loneId] }] });
    }

    // Events appended between reads: a completed turn on live-top and on the P1 shadow.
    await appendLive(L_top, async () => { clock.tick(30_000); await new Script(L_top, rng.fork('top-2'), clock, { flavour: 'cjk', tame: true }).fullTurn('completed'); });
    await appendLive(L_P1, async () => { clock.tick(30_000); const s = new Script(L_P1, rng.fork('p1-2'), clock, { tame: true }); await s.fullTurn('completed'); s.title('user'); });
    const nTop2 = L_top.events.length;
    await read('listEvents', 'live-top');
    await read('readEvent', { sessionId: 'live-top', seq: nTop2 - 1, before: 3 });
    await read('readEvent', { sessionId: 'live-top', seq: nTop - 1, after: 50 });
    await read('filterEvents', 'live-top', [{ kind: 'seq', from: nTop }]);
    await read('readSurface', 'live-top');
    await read('readTitle', 'live-top');
    await read('readSession', P1);
    await read('readTitle', P1);
    await read('readTitleSnapshots', [P1, 'live-top']);
    await read('listSessions');
    // Cursors taken before the appends: the cross-session one is stale, and so are
    // within-session ones on appended sessions; untouched sessions' cursors survive.
    await follow('searchSessions', iAll, reqAll);
    await follow('searchEvents', iFork, reqFork);
    await follow('searchEvents', iP2, reqP2);
    await follow('searchEvents', iTop, reqTop);
    if (iP1 !== undefined) await follow('searchEvents', iP1, reqP1);
    // (No cross-session chain here: with a lone-surrogate id in the root, every DSH
    // search re-indexes that session and so makes all cross-session cursors stale.)
    await chain('searchEvents', { ...reqTop, limit: 2 });
    await push('searchSessions', { query: wAll, sessionFilters: [{ kind: 'id', values: [P1, 'live-top'] }] });
    // An open turn on a live session (no synthetic closers for live logs?).
    await appendLive(L_top, async () => { clock.tick(30_000); await new Script(L_top, rng.fork('top-open'), clock, { tame: true }).openTurn('tool-pending'); });
    const nTop3 = L_top.events.length;
    await read('listEvents', 'live-top');
    await read('readSurface', 'live-top');
    await read('readSession', 'live-top');
    await read('readEvent', { sessionId: 'live-top', seq: nTop3 - 1, before: 4, after: 1 });
    await read('traceEvent', { sessionId: 'live-top', seq: nTop3 - 1 });
    await read('listDocuments', 'live-top');
    await push('searchEvents', { sessionId: 'live-top', query: wTop });
    await push('searchSessions', { query: wTop, sessionFilters: [{ kind: 'availability', values: ['live'] }] });
    await chain('searchEvents', { ...reqFork, limit: 1 });

    // (c) a live session whose header conflicts with the persisted one (createdAt + 1).
    const s4 = await backend.inspect(P4);
    addLive(P4, { seed: s4.events, meta: { ...s4.meta, createdAt: s4.meta.createdAt + 1 } });
    await read('listSessions');
    await read('filterSessions', []);
    await read('filterSessions', [{ kind: 'nope' }]);
    await read('traceSession', 'live-top');
    await read('traceSession', P4);
    await read('readSession', P4);
    await read('listEvents', P4);
    await read('readSurface', P4);
    await read('readTitle', P4);
    await read('readTitleSnapshots', [P4, P1, 'live-top', MISSING]);
    await read('readEvent', { sessionId: P4, seq: 0, after: 2 });
    await read('traceEvent', { sessionId: P4, seq: 0 });
    await read('filterEvents', P4, []);
    await read('listDocuments', P2);
    await read('readEvent', { sessionId: P2, seq: 0 });
    // Search observes the whole corpus: the header conflict fails every search.
    await push('searchSessions', { query: wAll });
    await push('searchEvents', reqFork);
  } finally {
    Date.now = realNow;
    await ctx.fiber.dispose();
    await close(pctx);
  }
  return calls;
}
