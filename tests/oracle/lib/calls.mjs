// Recorded DSH query calls (dump field `calls`) for the by-position JSON-RPC
// replay: which calls to make for a root or a session, and how to record them.
//
// A call entry is {method, params, result} or {method, params, error:{code,message}}.
// `params` are DSH's call arguments as an array, after a JSON round trip; the
// round-tripped copy is what DSH is called with, so what we record is exactly
// what DSH saw.

/** JSON round trip (lone surrogates survive; undefined members disappear). */
export const jsonCopy = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));

/** Returns `call(q, method, params)` → a recorded entry (never throws). */
export function recorder(scrub) {
  const errorOf = (e) => ({ code: e?.code ?? null, message: scrub(e instanceof Error ? e.message : String(e)) });
  return async function call(q, method, params = []) {
    const args = jsonCopy(params);
    const entry = { method, params: jsonCopy(params) };
    try {
      let v;
      // DSH has no listDocuments: our RPC's listDocuments is filterEvents(id, []).
      if (method === 'listDocuments') v = await q.filterEvents(args[0], []);
      else if (typeof q[method] !== 'function') throw new Error(`no DSH method ${method}`);
      else v = await q[method](...args);
      if (method === 'readTitleSnapshots' && Array.isArray(v)) {
        v = v.map((s) => (s.status === 'rejected' ? { sessionId: s.sessionId, status: s.status, reason: errorOf(s.reason) } : s));
      }
      entry.result = jsonCopy(v);
    } catch (e) {
      entry.error = errorOf(e);
    }
    return entry;
  };
}

export const MISSING = 'no-such-session-oracle';

/** Text probes for filterEvents (the handmade `text-probes` session has one document per probe family). */
export const TEXT_PROBES = [
  'hello world', 'HELLO WORLD', 'Hello   World', 'hello\tworld', 'world, again again',
  '(ai)+', '(AI)+', 'a.b', '[x] {y}', '$5 ^caret', 'back\\slash',
  '中文', '搜索 works', 'caf\u00e9', 'cafe\u0301', 'cafe', 'stra\u00dfe', 'strasse', '\u00df', 'ss',
  'kelvin', '\u212a', 'istanbul', '\u0130stanbul', '\u017ftop', 'STOP', '\ud83d\ude80', 'overloaded', 'trim me', '   ', '',
];
/** A smaller probe set for ordinary sessions. */
export const TEXT_PROBES_SHORT = ['(ai)+', 'a.b', '中文', 'caf\u00e9', 'cafe\u0301', '\u00df', 'kelvin', '\u212a', '\t \n'];

/** Malformed / edge event-filter lists (validated before the session is loaded, except text). */
export function eventFilterEdgeCases(N) {
  return [
    [{ kind: 'seq', from: 5, to: 1 }],
    [{ kind: 'seq', from: '1' }],
    [{ kind: 'seq', from: null }],
    [{ kind: 'seq', from: 1.5 }],
    [{ kind: 'seq', from: N, to: N + 100 }],
    [{ kind: 'time', to: 'x' }],
    [{ kind: 'time', from: 0, to: 0 }],
    [{ kind: 'surface', values: ['hidden'] }],
    [{ kind: 'type', values: 'user/message' }],
    [{ kind: 'type', values: [1] }],
    [{ kind: 'type' }],
    [{ kind: 'text' }],
    [{ kind: 'text', text: 42 }],
    [{ kind: 'text', text: '' }],
    [null],
    [{}],
    [{ kind: 'nope', values: [] }],
    [{ kind: 'type', values: ['user/message'], extra: true }],
    [{ kind: 'type', values: ['user/message'] }, { kind: 'seq', from: 5, to: 1 }],
  ];
}

const evenly = (arr, k) => {
  if (arr.length <= k) return arr;
  const out = [];
  for (let i = 0; i < k; i++) out.push(arr[Math.round((i * (arr.length - 1)) / (k - 1))]);
  return [...new Set(out)];
};

function words(docs) {
  if (!Array.isArray(docs) || docs.length === 0) return [];
  const doc = docs[Math.floor(docs.length / 2)];
  return doc.text.split(/\s+/u).filter((w) => w.length >= 3);
}

/**
 * Calls for one session read in its own (scratch or full) root.
 * @param id session id; r the readOne() reads (listEvents, readSession, filterEvents).
 * @param full whether this session gets the complete suite (else a light one).
 * @returns [method, params] pairs (traceSession is not here: it needs the whole corpus).
 */
export function sessionPlan(id, r, { full, probes = null }) {
  const plan = [];
  const add = (m, p) => plan.push([m, p]);
  const ev = Array.isArray(r.listEvents) ? r.listEvents : null;
  add('readTitle', [id]);
  if (ev === null) {
    add('readEvent', [{ sessionId: id, seq: 0, after: 3 }]);
    add('traceEvent', [{ sessionId: id, seq: 0 }]);
    add('filterEvents', [id, [{ kind: 'text', text: 'the' }]]);
    return plan;
  }
  const N = ev.length;
  const mid = Math.max(0, Math.floor((N - 1) / 2));
  const last = Math.max(0, N - 1);
  // readEvent
  add('readEvent', [{ sessionId: id, seq: 0, after: 3 }]);
  add('readEvent', [{ sessionId: id, seq: mid, before: 2, after: 2 }]);
  add('readEvent', [{ sessionId: id, seq: last, after: 50 }]);
  add('readEvent', [{ sessionId: id, seq: N }]);
  add('readEvent', [{ sessionId: id, seq: 1.5 }]);
  if (full) {
    add('readEvent', [{ sessionId: id, seq: 0, before: 50 }]);
    add('readEvent', [{ sessionId: id, seq: mid }]);
    add('readEvent', [{ sessionId: id, seq: mid, before: 51 }]);
    add('readEvent', [{ sessionId: id, seq: mid, after: 51 }]);
    add('readEvent', [{ sessionId: id, seq: mid, before: -1 }]);
    add('readEvent', [{ sessionId: id, seq: mid, after: 1.5 }]);
    add('readEvent', [{ sessionId: id, seq: mid, before: '2' }]);
    add('readEvent', [{ sessionId: id, seq: '0' }]);
    add('readEvent', [{ sessionId: id, seq: -1 }]);
  }
  // traceEvent: first, replacements, shadowed, one cited source, past the end.
  const events = Array.isArray(r.readSession?.events) ? r.readSession.events : [];
  const replacements = events.filter((e) => e.surfaceOp !== undefined && typeof e.surfaceOp === 'object').map((e) => e.seq);
  const shadowed = ev.filter((e) => e.surface === 'shadowed').map((e) => e.seq);
  const cited = events.find((e) => Array.isArray(e.sourceEventSeqs) && e.sourceEventSeqs.length > 0)?.sourceEventSeqs[0];
  const seqs = [0, ...evenly(replacements, full ? 3 : 2), ...evenly(shadowed, full ? 5 : 3), ...(cited === undefined ? [] : [cited])];
  for (const seq of [...new Set(seqs)]) if (seq < N) add('traceEvent', [{ sessionId: id, seq }]);
  add('traceEvent', [{ sessionId: id, seq: N }]);
  // filterEvents
  const w = words(r.filterEvents);
  const word = w[Math.floor(w.length / 2)];
  if (probes === null) add('filterEvents', [id, [{ kind: 'type', values: ['user/message'] }]]);
  if (word !== undefined && probes === null) add('filterEvents', [id, [{ kind: 'text', text: word.toUpperCase() }]]);
  if (full) {
    const times = ev.map((e) => e.time);
    const tmid = times[mid] ?? 0;
    add('filterEvents', [id, [{ kind: 'seq', from: mid }]]);
    add('filterEvents', [id, [{ kind: 'seq', to: mid }]]);
    add('filterEvents', [id, [{ kind: 'seq', from: Math.floor(N / 4), to: Math.floor((3 * N) / 4) }]]);
    add('filterEvents', [id, [{ kind: 'time', from: tmid }]]);
    add('filterEvents', [id, [{ kind: 'time', from: times[0] ?? 0, to: tmid }]]);
    add('filterEvents', [id, [{ kind: 'type', values: ['assistant/message', 'tool/result', 'tool/call', 'todo/write', 'turn/end'] }]]);
    add('filterEvents', [id, [{ kind: 'type', values: [] }]]);
    add('filterEvents', [id, [{ kind: 'surface', values: ['shadowed'] }]]);
    add('filterEvents', [id, [{ kind: 'surface', values: ['current', 'log-only'] }]]);
    if (word !== undefined) {
      const k = Math.floor(w.length / 2);
      if (w[k + 1] !== undefined) add('filterEvents', [id, [{ kind: 'text', text: ` ${w[k].toLowerCase()} \t  ${w[k + 1]} ` }]]);
      add('filterEvents', [id, [{ kind: 'surface', values: ['current'] }, { kind: 'type', values: ['user/message', 'assistant/message', 'tool/result'] }, { kind: 'text', text: word }]]);
    }
  }
  for (const text of probes ?? []) add('filterEvents', [id, [{ kind: 'text', text }]]);
  return plan;
}

/** Edge cases for one readable session with N events (run once per root). */
export function edgePlan(id, N) {
  const plan = [];
  const add = (m, p) => plan.push([m, p]);
  for (const f of eventFilterEdgeCases(N)) add('filterEvents', [id, f]);
  add('filterEvents', [id, { kind: 'type', values: ['user/message'] }]);
  add('filterEvents', [id, null]);
  add('traceEvent', [{ sessionId: id, seq: '0' }]);
  add('traceEvent', [{ sessionId: id, seq: 1.5 }]);
  add('traceEvent', [{ sessionId: id, seq: -1 }]);
  add('readEvent', [{ sessionId: id, seq: 0, before: null }]);
  add('readEvent', [{ sessionId: id, seq: 0, before: 0, after: 0 }]);
  return plan;
}

/** Calls against a whole root: listing, session filters, title batch, missing ids. */
export function rootPlan(listing, { ids: knownIds, corruptIds = [], unlistedIds = [] } = {}) {
  const plan = [];
  const add = (m, p) => plan.push([m, p]);
  add('listSessions', []);
  const recs = Array.isArray(listing) ? listing : [];
  const ids = knownIds ?? recs.map((r) => r.header.id);
  const cwd = recs.map((r) => r.header.cwd).find((c) => c !== undefined) ?? '/home/dev/app';
  const created = recs.map((r) => r.header.createdAt).sort((a, b) => a - b);
  const cMid = created[Math.floor(created.length / 2)] ?? 0;
  const cLo = created[Math.floor(created.length / 4)] ?? 0;
  const cHi = created[Math.floor((3 * created.length) / 4)] ?? 0;
  const parent = recs.map((r) => r.header.parentSession).find((p) => p !== undefined) ?? MISSING;
  const F = (...f) => add('filterSessions', [f]);
  F();
  F({ kind: 'id', values: [...ids.slice(0, 2), MISSING] });
  F({ kind: 'id', values: [] });
  F({ kind: 'cwd', values: [null] });
  F({ kind: 'cwd', values: [cwd, null] });
  F({ kind: 'cwd', values: [cwd] });
  F({ kind: 'cwd', values: [`${cwd}/`] });
  F({ kind: 'cwd', values: [] });
  F({ kind: 'created-at', from: cMid });
  F({ kind: 'created-at', to: cMid });
  F({ kind: 'created-at', from: cLo, to: cHi });
  F({ kind: 'created-at', from: cMid, to: cMid });
  F({ kind: 'created-at', from: cHi + 1, to: cLo });
  F({ kind: 'created-at', from: String(cMid) });
  F({ kind: 'created-at', to: null });
  F({ kind: 'created-at' });
  F({ kind: 'parent', values: [null] });
  F({ kind: 'parent', values: [parent] });
  F({ kind: 'parent', values: [parent, null] });
  F({ kind: 'parent', values: [] });
  F({ kind: 'availability', values: ['live'] });
  F({ kind: 'availability', values: ['persisted'] });
  F({ kind: 'availability', values: ['live', 'persisted'] });
  F({ kind: 'availability', values: [] });
  F({ kind: 'availability', values: ['archived'] });
  F({ kind: 'cwd', values: [cwd, null] }, { kind: 'created-at', from: cLo }, { kind: 'availability', values: ['persisted'] });
  F({ kind: 'parent', values: [null] }, { kind: 'id', values: ids.slice(0, 3) });
  F({ kind: 'title', values: ['x'] });
  F({});
  F(null);
  F({ kind: 'id' });
  F({ kind: 'id', values: 'abc' });
  F({ kind: 'id', values: [1] });
  F({ kind: 'cwd', values: [null, 3] });
  F({ kind: 'availability', values: ['persisted'] }, { kind: 'availability', values: ['nope'] });
  add('filterSessions', [{ kind: 'id', values: ids.slice(0, 1) }]);
  add('filterSessions', [null]);
  add('filterSessions', ['id']);
  // Title batch: duplicates, a missing id, corrupt ids, the empty id.
  const corrupt = corruptIds.slice(0, 2);
  add('readTitleSnapshots', [[...ids.slice(0, 2), ids[0] ?? MISSING, MISSING, ...corrupt, ids[2] ?? MISSING, ...corrupt.slice(0, 1), '']]);
  add('readTitleSnapshots', [[]]);
  // Missing and wrongly typed ids.
  add('readSession', [MISSING]);
  add('listEvents', [MISSING]);
  add('readSurface', [MISSING]);
  add('listDocuments', [MISSING]);
  add('readTitle', [MISSING]);
  add('traceSession', [MISSING]);
  add('readEvent', [{ sessionId: MISSING, seq: 0 }]);
  add('readEvent', [{ sessionId: MISSING, seq: 0, after: 51 }]);
  add('traceEvent', [{ sessionId: MISSING, seq: 0 }]);
  add('filterEvents', [MISSING, []]);
  add('filterEvents', [MISSING, [{ kind: 'text', text: '   ' }]]);
  add('filterEvents', [MISSING, [{ kind: 'bogus' }]]);
  add('readEvent', [{ seq: 0 }]);
  add('readTitle', [42]);
  add('traceSession', [null]);
  for (const id of unlistedIds) {
    add('readEvent', [{ sessionId: id, seq: 0, after: 3 }]);
    add('traceSession', [id]);
    add('readTitle', [id]);
    add('filterEvents', [id, [{ kind: 'text', text: '' }]]);
  }
  return plan;
}
