// Full-text search: probe sessions for the clean `search` root (written through
// the real Session API) and the recorded `searchSessions`/`searchEvents` calls.
//
// A page-following call carries `cursorFrom`: the index (in the dump's `calls`)
// of the call whose `nextCursor` it uses. Cursors are bound to the DSH service
// instance, so the replay substitutes the cursor its own earlier page returned.
import { Context, Service } from '@deepseek-ai/cordis';
import SessionStore, { SessionId } from '@deepseek-ai/dsh-session';
import { SqliteSessionQueryEngine } from '@deepseek-ai/dsh-session-query-sqlite';
import { openReader, close, cacheListing, withSeededUuids } from './dsh.mjs';
import { FakeClock } from './prng.mjs';
import { MISSING, jsonCopy } from './calls.mjs';

const MODEL = { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' };

/** Appends hand-picked turns to one live Session with explicit control of the clock. */
class ProbeWriter {
  constructor(ctx, clock, id, meta = {}) {
    this.ctx = ctx;
    this.clock = clock;
    this.id = id;
    this.s = ctx.sessions.create(SessionId(id), { meta });
    this.turn = 0;
    this.n = 0;
  }
  ev(type, data, opts, dt = 7) {
    this.clock.tick(dt);
    return opts === undefined ? this.s.append(type, data) : this.s.append(type, data, opts);
  }
  msgId() { return `msg-${this.id}-${this.n++}`; }
  user(text, dt) {
    return this.ev('user/message', { id: this.msgId(), role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } }, { surfaceOp: 'append' }, dt);
  }
  assistant(turn, step, content, dt) {
    if (typeof content === 'string') content = [{ type: 'text', text: content }];
    return this.ev('assistant/message', { turn, step, message: { id: this.msgId(), role: 'assistant', content, source: MODEL } }, { surfaceOp: 'append' }, dt);
  }
  /** One turn: a user message, optionally an assistant reply (dt: clock step before the reply). */
  say(text, { reply, replyDt = 7, reason = { kind: 'completed' } } = {}) {
    const turn = ++this.turn;
    this.ev('turn/start', { turn });
    const u = this.user(text);
    let a;
    if (reply !== undefined) {
      this.ev('step/start', { turn, step: 1 }, undefined, 0);
      a = this.assistant(turn, 1, reply, replyDt);
      this.ev('step/end', { turn, step: 1 }, undefined, 0);
    }
    this.ev('turn/end', { turn, reason });
    return { u, a };
  }
  async flush() { await this.ctx.sessions.flush(this.s); }
}

const FILLER = (n) => {
  const words = ['lorem', 'ipsum', 'dolor', 'sit', 'amet,', 'consectetur', 'adipiscing', 'elit'];
  let out = '';
  for (let i = 0; out.length < n; i++) out += (out ? ' ' : '') + words[i % words.length];
  return out.slice(0, n);
};

/** One document per probe family (user messages; a few also as assistant replies). */
export const PROBE_TEXTS = [
  // case
  'Parser CRASH in Release Mode', 'parser crash in debug mode',
  // diacritics and folding
  'Meet me at the caf\u00e9 at nine', 'CAFE OPENS AT NINE', 'a na\u00efve approach', '\u00c5ngstr\u00f6m is a unit of length',
  'Stra\u00dfe und Weg', 'strasse and road', '\u0130stanbul trip planned', 'dotless \u0131 and dotted i', 'Ti\u1ebfng Vi\u1ec7t text',
  '\ufb01le ligature', '\uff46\uff55\uff4c\uff4c width and full width', '\u212aelvin scale', '\u03a3\u03af\u03c3\u03c5\u03c6\u03bf\u03c2 \u03a3\u038a\u03a3\u03a5\u03a6\u039f\u03a3',
  // CJK, Korean, Thai
  '\u6211\u559c\u6b22\u6570\u636e\u5e93', '\u6211\u559c\u6b22\uff0c\u6570\u636e\u5e93\u3002', '\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8', '\u6570\u636e\u5e93',
  '\ub370\uc774\ud130\ubca0\uc774\uc2a4 \uac80\uc0c9 \uae30\ub2a5\uc744 \ucd94\uac00\ud588\uc2b5\ub2c8\ub2e4', '\u0e10\u0e32\u0e19\u0e02\u0e49\u0e2d\u0e21\u0e39\u0e25 \u0e01\u0e32\u0e23\u0e04\u0e49\u0e19\u0e2b\u0e32',
  // emoji old and new
  'old emoji \ud83d\ude00 smile', 'new emoji it\ud83e\udd70 love', 'melting \ud83e\udee0 face', 'rocket\ud83d\ude80launch',
  // code identifiers, numbers
  'call foo_bar then fooBar', 'release v1.2.3 tagged', "don't panic", 'snake_case_name and camelCaseName', 'x\u00b2 and \u00bd and \u216b',
  // stack traces
  'at Parser.parse (src/parser.ts:42:13)\n    at main (src/index.ts:7:1)', "TypeError: Cannot read properties of undefined (reading 'length')",
  // FTS syntax as data
  'say "quoted" exactly', 'glob a* star', 'NEAR(a b) operator', 'x AND y', 'col:val pair', '^start caret', 'needle OR absent', 'minus -term NOT this',
  // repeated words (span counting)
  'needle needle', 'needle in a haystack', 'a a a', 'x y x y', 'one two three two three',
  'a a b a a', 'x y q x y', 'two three q two three', // same phrases, more spans but longer
  // controls (no NUL), JS whitespace oddities, reserved noncharacters
  'ctrl\u0001bell\u0007esc\u001b[0m end', 'tab\tvertical\u000bformfeed\fend',
  'alpha\ufeffbeta', 'gamma\u0085delta', 'ideo\u3000graphic', 'line\u2028separator', 'nbsp\u00a0space', 'zero\u200bwidth',
  'marker\ufdd0inside\ufdd1text',
];

/** Long documents: snippet edges at both ends, astral characters, whitespace collapse. */
export const LONG_TEXTS = [
  `startmatch ${FILLER(300)}`,
  `${FILLER(150)} midmatch ${FILLER(150)}`,
  `${FILLER(300)} endmatch`,
  `${FILLER(250)} tailmatch tail`,
  `${'\ud835\udd18\ud835\udd2b\ud835\udd26\ud835\udd20\ud835\udd2c\ud835\udd21\ud835\udd22 '.repeat(20)}astralmatch ${FILLER(200)}`,
  `${'\ud83d\ude00'.repeat(100)} emojirun ${'\ud83e\udd70'.repeat(150)}`,
  `${'x'.repeat(229)} exactmatch`, // 240 code points: the whole text
  `${'x'.repeat(230)} exactmatch`, // 241 code points
  `exactmatch ${'y'.repeat(230)}`, // 241 code points, match first
  `   \n\t ${'spaced  \n\n  '.repeat(30)}spacedmatch${'\u3000 '.repeat(40)}`,
  `${'\n'.repeat(5)}${FILLER(100)}\u2028\u2028doublematch ${FILLER(60)} doublematch ${FILLER(120)}\n\n`,
];

/** The id tie group: identical documents at identical times (order by id, code point). */
export const TIE_IDS = ['tie-a', 'tie-b', 'tie-B', 'tie-\u00e1', 'tie-\uff21', 'tie-\ud83d\ude00', 'tie-a b', 'tie-a-b'];
export const TIE_TEXT = 'tiebreak marker';

/**
 * Write the probe sessions into an open writer context (JSONL backend mounted).
 * @returns manifest entries {id, kind:'search-probe', note, parentSession?}.
 */
export async function writeSearchProbes(ctx, clock) {
  const out = [];
  const done = async (w, note) => {
    await w.flush();
    out.push({ root: 'search', id: w.id, kind: 'search-probe', cwd: w.s.header.cwd ?? null, parentSession: w.s.header.parentSession, events: w.s.events.length, features: [], note });
  };
  // (1) one document per probe family; a few texts also answered by the assistant.
  clock.tick(3_600_000);
  const p = new ProbeWriter(ctx, clock, 'search-probes', { cwd: '/home/dev/search' });
  for (const [i, text] of PROBE_TEXTS.entries()) p.say(text, i % 7 === 0 ? { reply: `ack: ${text}` } : {});
  await done(p, 'one document per search probe family');

  // (2) long documents.
  clock.tick(600_000);
  const l = new ProbeWriter(ctx, clock, 'search-long', { cwd: '/home/dev/search' });
  for (const text of LONG_TEXTS) l.say(text);
  l.say('lorem ipsum short');
  await done(l, 'long documents for snippet edges');

  // (3) surfaces: shadowed (compacted), current, log-only (tool call, todo, failed turn).
  clock.tick(600_000);
  const s = new ProbeWriter(ctx, clock, 'search-surface', { cwd: '/home/dev/search' });
  {
    s.ev('turn/start', { turn: 1 });
    const u = s.user('quartz original question');
    s.ev('step/start', { turn: 1, step: 1 });
    const a = s.assistant(1, 1, 'quartz original answer quartz');
    s.ev('step/end', { turn: 1, step: 1 });
    s.ev('turn/end', { turn: 1, reason: { kind: 'completed' } });
    s.turn = 1;
    const cs = s.ev('compaction/start', { compactionId: 'q-cmp', turn: null });
    const sm = s.ev('compaction/summary', { compactionId: 'q-cmp', summary: [{ type: 'text', text: 'quartz summary' }], shadowedRange: { start: u.seq, end: a.seq }, shadowedSeqs: [u.seq, a.seq], shadowedTokenCount: 10, provider: 'deepseek', model: 'deepseek-chat' });
    s.ev('user/message', { id: s.msgId(), role: 'user', content: [{ type: 'text', text: 'Summary: quartz was discussed' }], source: { kind: 'plugin', plugin: 'compact', compactionId: 'q-cmp' } },
      { surfaceOp: { op: 'replace', start: u.seq, end: a.seq }, sourceEventSeqs: [cs.seq, sm.seq, u.seq, a.seq] });
    s.ev('compaction/end', { compactionId: 'q-cmp', turn: null });
    s.ev('turn/start', { turn: 2 });
    s.user('scan for quartz please');
    s.ev('step/start', { turn: 2, step: 1 });
    s.assistant(2, 1, [{ type: 'text', text: 'running the quartz scan' }, { type: 'tool-call', id: 'qc1', name: 'quartz_scan', arguments: '{"pattern":"quartz"}' }]);
    const call = s.ev('tool/call', { turn: 2, step: 1, callId: 'qc1', name: 'quartz_scan', arguments: '{"pattern":"quartz"}' });
    s.ev('tool/result', { turn: 2, step: 1, message: { id: s.msgId(), role: 'user', content: [{ type: 'tool-result', toolCallId: 'qc1', content: [{ type: 'text', text: 'quartz found 3 times' }], isError: false }], source: { kind: 'tool', callId: 'qc1' } } },
      { surfaceOp: 'append', sourceEventSeqs: [call.seq] });
    s.ev('step/end', { turn: 2, step: 1 });
    s.ev('turn/end', { turn: 2, reason: { kind: 'error', error: { message: 'quartz provider failure', code: 'OVERLOADED' } } });
    s.ev('todo/write', { todos: [{ content: 'polish the quartz', status: 'pending' }, { content: 'quartz quartz report', status: 'completed' }] });
    s.turn = 2;
    s.say('quartz follow-up', { reply: 'quartz', reason: { kind: 'aborted', reason: { kind: 'user' } } });
  }
  await done(s, 'a compacted (shadowed) turn, current messages and log-only documents');

  // (4) tie-breaks. Every tie session has the same documents at the same times:
  // turn 1 "tiebreak marker" twice (user and assistant at the same time: seq desc decides).
  clock.tick(600_000);
  const created = clock.now;
  const T = created + 60_000;
  const tie = async (id, i, texts, at = T, meta = { cwd: '/home/dev/ties' }) => {
    clock.set(created + i * 1000);
    const w = new ProbeWriter(ctx, clock, id, meta);
    clock.set(at - 14);
    for (const [q, a] of texts) w.say(q, a === undefined ? {} : { reply: a, replyDt: 0 });
    await done(w, 'tie-break probe');
  };
  for (const [i, id] of TIE_IDS.entries()) await tie(id, i, [[TIE_TEXT, TIE_TEXT]]);
  await tie('tie-later', 10, [[TIE_TEXT, TIE_TEXT]], T + 5000);
  await tie('tie-double', 11, [[`${TIE_TEXT} ${TIE_TEXT}`]], T - 5000);
  await tie('tie-long', 12, [[`${TIE_TEXT} with more words`]], T + 9000);
  await tie('tie-child', 13, [[TIE_TEXT, TIE_TEXT]], T, { cwd: '/home/dev/ties', parentSession: 'tie-a', origin: 'subagent', delegationDepth: 1, agentPreset: 'reviewer' });
  clock.set(T + 60_000);
  // (5) a fork of the probe session (header with seedLength).
  const f = ctx.sessions.fork(p.s, p.s.events.filter((e) => e.type === 'turn/end')[2].seq, SessionId('search-probes-fork'));
  const fw = Object.assign(Object.create(ProbeWriter.prototype), { ctx, clock, id: 'search-probes-fork', s: f, turn: 3, n: 0 });
  fw.say('needle needle needle in the fork');
  await done(fw, 'fork of search-probes');
  return out;
}

// ---------------------------------------------------------------------------
// Recorded calls.

/** Compiled predicates of a filter list (spec 04 §6.3) — used to build budget probes. */
function predicates(filters) {
  let n = 0;
  for (const f of filters) {
    if (f.kind === 'availability') n += new Set(f.values).size === 2 ? 0 : 1;
    else if ('values' in f) n += 1;
    else n += (f.from !== undefined ? 1 : 0) + (f.to !== undefined ? 1 : 0);
  }
  return n;
}

/**
 * A small helper bound to one query service and one `calls` array.
 * push(): record one call (optionally with cursorFrom); chain(): follow nextCursor to the end.
 */
export function searchRecorder(q, call, calls) {
  const push = async (method, request, cursorFrom) => {
    const e = await call(q, method, [request]);
    const { method: m, params, ...rest } = e;
    calls.push(cursorFrom === undefined ? e : { method: m, params, cursorFrom, ...rest });
    return calls.length - 1;
  };
  const cursorOf = (i) => calls[i]?.result?.nextCursor;
  const chain = async (method, request, maxPages = 40) => {
    let i = await push(method, request);
    const first = i;
    for (let n = 1; cursorOf(i) !== undefined && n < maxPages; n++) i = await push(method, { ...request, cursor: cursorOf(i) }, i);
    return { first, last: i, pages: i - first + 1 };
  };
  /** A follow-up request using the cursor of call i (recorded with cursorFrom). */
  const follow = async (method, i, request) => {
    const cursor = cursorOf(i);
    if (cursor === undefined) throw new Error(`oracle: call #${i} has no nextCursor: ${JSON.stringify(calls[i]).slice(0, 600)}`);
    return push(method, { ...request, cursor }, i);
  };
  return { push, chain, follow, cursorOf };
}

const S = 'searchSessions';
const E = 'searchEvents';

/** Every recorded search call for the clean `search` root. Returns chain statistics. */
export async function recordSearchRoot(q, call, calls, listing) {
  const { push, chain, follow } = searchRecorder(q, call, calls);
  const chains = [];
  const ids = new Set(listing.map((r) => r.header.id));
  for (const need of ['search-probes', 'search-long', 'search-surface', 'tie-a']) if (!ids.has(need)) throw new Error(`oracle: search root lacks ${need}`);
  const created = listing.map((r) => r.header.createdAt).sort((a, b) => a - b);
  const cMid = created[Math.floor(created.length / 2)];
  const child = listing.find((r) => r.header.parentSession !== undefined && r.header.agentPreset !== undefined && !r.header.id.startsWith('tie-'))?.header;
  const fork = listing.find((r) => r.header.seedLength !== undefined && r.header.id !== 'search-probes-fork')?.header;
  const odd = listing.find((r) => /[^\x21-\x7e]|[:/]/.test(r.header.id) && !r.header.id.startsWith('tie-'))?.header;

  // Single words, phrases, identifiers, stack traces, CJK, diacritics, case, FTS syntax, no tokens, whitespace.
  const QUERIES = [
    'tokenizer', 'Parser crash', 'PARSER CRASH', '  parser \t\n crash  ', 'parser crashes', 'Release Mode', 'release-mode',
    'cafe', 'CAF\u00c9', 'caf\u00e9', 'cafe\u0301', 'naive', 'NA\u00cfVE', 'angstrom', 'strasse', 'stra\u00dfe', 'STRASSE', 'istanbul', '\u0130STANBUL', 'i', '\u0131',
    'tieng viet', 'ti\u1ebfng', 'file', '\ufb01le', 'full', '\uff46\uff55\uff4c\uff4c', 'kelvin', '\u03c3\u03af\u03c3\u03c5\u03c6\u03bf\u03c3',
    '\u6570\u636e\u5e93', '\u6211\u559c\u6b22\u6570\u636e\u5e93', '\u6211\u559c\u6b22', '\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8', '\u30c6\u30ad\u30b9\u30c8', '\u4e2d\u6587\u5206\u8bcd',
    '\ub370\uc774\ud130\ubca0\uc774\uc2a4', '\uac80\uc0c9 \uae30\ub2a5\uc744', '\u0e10\u0e32\u0e19\u0e02\u0e49\u0e2d\u0e21\u0e39\u0e25', '\u0e02',
    'it', 'it\ud83e\udd70', '\ud83e\udd70', '\ud83d\ude00', 'emoji smile', 'rocket launch', 'melting \ud83e\udee0 face',
    'foo bar', 'foo_bar', 'fooBar', 'foobar', 'v1.2.3', 'v1 2 3', "don't", 'don t', 'snake case name', 'x\u00b2', '\u00bd',
    'Parser.parse', 'src/parser.ts:42:13', 'at Parser.parse (src/parser.ts:42:13)', 'TypeError: Cannot read properties of undefined', 'cannot read properties',
    '"quoted"', 'say "quoted" exactly', 'a*', 'a', 'NEAR(a b)', 'x AND y', 'AND', 'col:val', 'col', '^start', 'needle OR absent', 'NOT this', '-term',
    'needle', 'a a', 'x y', 'two three', 'needle needle', 'needle needle needle',
    '!!!', '*', '""', '\u2026', '\uff0c\u3002',
    '\ufeff needle \u3000', 'alpha beta', 'gamma delta', 'gamma\u0085delta', 'ideo graphic', 'line\u2028separator', 'nbsp space', 'zero width', 'ctrl bell esc', 'formfeed end',
    'marker\ufdd0inside', 'marker inside text', '\ufdd0',
    'broken terminal', 'ab\udc00cd', 'ab cd', 'abcd', '\ud800 alone', 'cd alone',
    'quartz', TIE_TEXT, 'lorem ipsum',
  ];
  for (const query of QUERIES) await push(S, { query });
  // Invalid queries.
  for (const query of [42, null, '', '   \n\t', '\ufeff\u3000', 'a\u0000b', ['needle']]) await push(S, { query });
  await push(S, {});
  await push(S, { query: '\u0085' });
  // Limits.
  for (const limit of [1, 100, 101, 0, 1.5, '5', -1, null, 2 ** 53, 1e300]) await push(S, { query: 'tokenizer', limit });
  await push(S, { query: 'tokenizer', limit: 5, bogus: true });

  // Session filters (every kind, empty values, null members) and event filters.
  const SF = [
    [{ kind: 'id', values: ['tie-a', 'tie-B', 'tie-\ud83d\ude00', MISSING] }],
    [{ kind: 'id', values: [] }],
    [{ kind: 'cwd', values: [null] }],
    [{ kind: 'cwd', values: ['/home/dev/app', null] }],
    [{ kind: 'cwd', values: ['/home/dev/ties'] }],
    [{ kind: 'cwd', values: [] }],
    [{ kind: 'created-at', from: cMid }],
    [{ kind: 'created-at', to: cMid }],
    [{ kind: 'created-at', from: created[0], to: cMid }],
    [{ kind: 'created-at', from: cMid + 0.5 }],
    [{ kind: 'parent', values: [null] }],
    [{ kind: 'parent', values: ['tie-a'] }],
    [{ kind: 'parent', values: ['tie-a', null] }],
    [{ kind: 'parent', values: [] }],
    [{ kind: 'availability', values: ['persisted'] }],
    [{ kind: 'availability', values: ['live'] }],
    [{ kind: 'availability', values: ['live', 'persisted'] }],
    [{ kind: 'availability', values: [] }],
    [{ kind: 'availability', values: ['persisted', 'persisted'] }],
    [{ kind: 'cwd', values: ['/home/dev/ties'] }, { kind: 'parent', values: [null] }, { kind: 'availability', values: ['persisted'] }],
    [{ kind: 'id', values: ['tie-a', 'tie-b'] }, { kind: 'id', values: ['tie-b', 'tie-long'] }],
  ];
  for (const sessionFilters of SF) await push(S, { query: TIE_TEXT, sessionFilters });
  await push(S, { query: 'tokenizer', sessionFilters: [{ kind: 'cwd', values: [null] }], limit: 100 });
  const EF = [
    [{ kind: 'seq', from: 2 }],
    [{ kind: 'seq', to: 1 }],
    [{ kind: 'seq', from: 1, to: 1.5 }],
    [{ kind: 'time', from: cMid }],
    [{ kind: 'time', to: 0 }],
    [{ kind: 'type', values: ['assistant/message'] }],
    [{ kind: 'type', values: ['tool/call', 'tool/result'] }],
    [{ kind: 'type', values: ['turn/end', 'todo/write'] }],
    [{ kind: 'type', values: ['x-nothing'] }],
    [{ kind: 'type', values: [] }],
    [{ kind: 'surface', values: ['current'] }],
    [{ kind: 'surface', values: ['shadowed'] }],
    [{ kind: 'surface', values: ['log-only'] }],
    [{ kind: 'surface', values: [] }],
    [{ kind: 'surface', values: ['current'] }, { kind: 'type', values: ['user/message'] }, { kind: 'seq', from: 1 }],
  ];
  for (const eventFilters of EF) await push(S, { query: 'quartz', eventFilters });
  await push(S, { query: 'tokenizer', eventFilters: [{ kind: 'type', values: ['tool/call'] }], sessionFilters: [{ kind: 'cwd', values: ['/home/dev/app'] }] });
  await push(S, { query: TIE_TEXT, eventFilters: [{ kind: 'type', values: ['user/message'] }] });
  // Malformed filters.
  const BAD = [
    { sessionFilters: [{ kind: 'title', values: ['x'] }] },
    { sessionFilters: [{ kind: 'created-at', from: 5, to: 1 }] },
    { sessionFilters: [{ kind: 'availability', values: ['archived'] }] },
    { sessionFilters: [{ kind: 'cwd', values: [1] }] },
    { sessionFilters: {} },
    { sessionFilters: 'id' },
    { sessionFilters: null },
    { sessionFilters: [null] },
    { eventFilters: [{ kind: 'text', text: 'needle' }] },
    { eventFilters: [{ kind: 'surface', values: ['hidden'] }] },
    { eventFilters: [{ kind: 'seq', from: '1' }] },
    { eventFilters: [{ kind: 'time', from: null }] },
    { eventFilters: [{ kind: 'id', values: ['tie-a'] }] },
    { eventFilters: {} },
    { eventFilters: 'seq' },
    { eventFilters: null },
    { eventFilters: [null] },
    { eventFilters: [{}] },
  ];
  for (const b of BAD) await push(S, { query: 'needle', ...b });

  // Budgets: 14 compiled predicates pass, 15 fail; >32,754 filter bindings fail.
  const sess6 = [
    { kind: 'id', values: [...TIE_IDS, 'tie-later'] }, { kind: 'cwd', values: ['/home/dev/ties', null] }, { kind: 'created-at', from: created[0], to: created.at(-1) },
    { kind: 'parent', values: [null, 'tie-a'] }, { kind: 'availability', values: ['persisted'] },
  ];
  const ev8 = [
    { kind: 'seq', from: 0, to: 100 }, { kind: 'time', from: 0, to: 9e15 }, { kind: 'type', values: ['user/message', 'assistant/message'] },
    { kind: 'surface', values: ['current', 'shadowed', 'log-only'] }, { kind: 'type', values: ['assistant/message'] }, { kind: 'seq', from: 1 },
  ];
  if (predicates(sess6) + predicates(ev8) !== 14) throw new Error('oracle: budget probe is not 14 predicates');
  await push(S, { query: TIE_TEXT, sessionFilters: sess6, eventFilters: ev8 });
  await push(S, { query: TIE_TEXT, sessionFilters: [...sess6, { kind: 'availability', values: ['live', 'persisted'] }], eventFilters: ev8 });
  await push(S, { query: TIE_TEXT, sessionFilters: sess6, eventFilters: [...ev8, { kind: 'time', to: 9e15 }] });
  const sess15 = Array.from({ length: 15 }, () => ({ kind: 'cwd', values: ['/home/dev/ties'] }));
  await push(S, { query: TIE_TEXT, sessionFilters: sess15 });
  await push(S, { query: TIE_TEXT, sessionFilters: sess15.slice(1) });
  await push(S, { query: TIE_TEXT, eventFilters: Array.from({ length: 15 }, () => ({ kind: 'surface', values: ['current'] })) });
  const fill = (n, first) => [first, ...new Array(n - 1).fill('')];
  await push(S, { query: TIE_TEXT, sessionFilters: [{ kind: 'id', values: fill(32754, 'tie-a') }] });
  await push(S, { query: TIE_TEXT, sessionFilters: [{ kind: 'id', values: fill(32755, 'tie-a') }] });
  await push(S, { query: TIE_TEXT, sessionFilters: [{ kind: 'id', values: fill(30000, 'tie-b') }, { kind: 'cwd', values: [...fill(2754, '/home/dev/ties'), null] }] });
  await push(S, { query: TIE_TEXT, sessionFilters: [{ kind: 'id', values: fill(30000, 'tie-b') }, { kind: 'cwd', values: [...fill(2754, '/home/dev/ties'), null] }, { kind: 'created-at', from: 0 }] });
  await push(S, { query: TIE_TEXT, sessionFilters: [{ kind: 'availability', values: new Array(32800).fill('persisted') }] });
  await push(S, { query: TIE_TEXT, eventFilters: [{ kind: 'type', values: fill(32754, 'user/message') }] });
  await push(S, { query: TIE_TEXT, eventFilters: [{ kind: 'type', values: fill(32755, 'user/message') }] });

  // Error precedence: several errors at once, peeled off one by one.
  const bad15 = sess15;
  await push(S, { query: 42, sessionFilters: [{ kind: 'bogus' }], eventFilters: [{ kind: 'text', text: 'x' }], cursor: 7, limit: 0 });
  await push(S, { query: 42, eventFilters: [{ kind: 'text', text: 'x' }], cursor: 7, limit: 0 });
  await push(S, { query: 42, cursor: 7, limit: 0 });
  await push(S, { query: 42, cursor: 'garbage', limit: 0 });
  await push(S, { query: 'needle', cursor: 'garbage', limit: 0 });
  await push(S, { query: 'needle', cursor: 'garbage', sessionFilters: bad15 });
  await push(S, { query: '!!!', cursor: 'garbage' });

  // Cursors: garbage, non-string, foreign shapes.
  const b64 = (s) => Buffer.from(s, 'utf8').toString('base64url');
  const forged = b64(JSON.stringify({ version: 1, instance: '00000000-0000-4000-8000-000000000000', scope: 'sessions', fingerprint: '{}', generation: '0', offset: 1 }));
  for (const cursor of ['garbage', '', '%%%', b64('null'), b64('{}'), b64('[]'), b64('42'), forged, 42, null, {}, ['x'], true]) await push(S, { query: TIE_TEXT, limit: 2, cursor });

  // Pagination chains (limit 1–3, followed to the end).
  const tieChain = await chain(S, { query: TIE_TEXT, limit: 2 });
  chains.push(tieChain);
  chains.push(await chain(S, { query: 'needle', limit: 1 }));
  chains.push(await chain(S, { query: 'tokenizer', eventFilters: [{ kind: 'type', values: ['tool/call', 'user/message'] }], sessionFilters: [{ kind: 'cwd', values: [null] }], limit: 3 }));
  chains.push(await chain(S, { query: 'quartz', limit: 1, eventFilters: [{ kind: 'surface', values: ['log-only', 'shadowed'] }] }));
  // A cursor continues only the identical normalised request.
  const p1 = tieChain.first;
  await follow(S, p1, { query: 'tiebreak', limit: 2 });
  await follow(S, p1, { query: TIE_TEXT, limit: 3 });
  await follow(S, p1, { query: TIE_TEXT });
  await follow(S, p1, { query: 'Tiebreak Marker', limit: 2 });
  await follow(S, p1, { query: `  ${TIE_TEXT.replace(' ', ' \n\t ')}\u3000`, limit: 2 });
  await follow(S, p1, { query: TIE_TEXT, limit: 2, sessionFilters: [], eventFilters: [] });
  await follow(S, p1, { query: TIE_TEXT, limit: 2, eventFilters: [{ kind: 'surface', values: ['current'] }] });
  await follow(E, p1, { sessionId: 'tie-a', query: TIE_TEXT, limit: 2 });
  // Reordered clauses and permuted values are the same request; a duplicate value is not.
  const fA = { kind: 'cwd', values: ['/home/dev/ties', null] };
  const fB = { kind: 'id', values: ['tie-a', 'tie-b', 'tie-B', 'tie-later'] };
  const fC = { kind: 'seq', from: 0 };
  const fD = { kind: 'type', values: ['user/message', 'assistant/message'] };
  const base = await chain(S, { query: TIE_TEXT, limit: 1, sessionFilters: [fA, fB], eventFilters: [fC, fD] }, 1);
  await follow(S, base.first, { query: TIE_TEXT, limit: 1, sessionFilters: [fB, { ...fA, values: [null, '/home/dev/ties'] }], eventFilters: [{ ...fD, values: [...fD.values].reverse() }, fC] });
  await follow(S, base.first, { query: TIE_TEXT, limit: 1, sessionFilters: [fA, { ...fB, values: [...fB.values, 'tie-a'] }], eventFilters: [fC, fD] });
  await follow(S, base.first, { query: TIE_TEXT, limit: 1, sessionFilters: [fA, fB], eventFilters: [{ ...fC, to: 1e9 }, fD] });
  await follow(S, base.first, { query: TIE_TEXT, limit: 1, sessionFilters: [fA, fB], eventFilters: [fD] });
  await follow(S, base.first, { query: TIE_TEXT, limit: 1, sessionFilters: [fA, fB, fA], eventFilters: [fC, fD] });
  // An omitted limit equals the default.
  const dflt = await push(S, { query: 'tokenizer' });
  if (calls[dflt].result?.nextCursor !== undefined) {
    await follow(S, dflt, { query: 'tokenizer', limit: 20 });
    await follow(S, dflt, { query: 'tokenizer ', sessionFilters: [] });
  }

  // ---- searchEvents ----
  const EQ = [
    ['search-probes', ['needle', 'a a', 'x y', 'two three', 'PARSER crash', 'cafe', 'CAF\u00c9', 'naive', 'angstrom', 'strasse', '\u0130stanbul', '\u0131',
      '\u6570\u636e\u5e93', '\u6211\u559c\u6b22', '\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8', '\uac80\uc0c9', 'it', 'it\ud83e\udd70', 'melting face', 'rocket launch',
      'foo bar', 'fooBar', 'v1.2.3', "don't", 'Parser.parse (src/parser.ts:42:13)', "reading 'length'", '"quoted"', 'NEAR(a b)', 'x AND y', 'col:val', '^start',
      'alpha beta', 'gamma delta', 'line separator', 'marker\ufdd1inside', 'bell esc', 'ack', '!!!', 'the', 'file', '\u0e10\u0e32\u0e19\u0e02', 'tieng']],
    ['search-long', ['startmatch', 'midmatch', 'endmatch', 'tailmatch', 'tail', 'astralmatch', 'emojirun', 'exactmatch', 'spacedmatch', 'doublematch', 'lorem ipsum', 'elit lorem', 'amet consectetur']],
    ['search-surface', ['quartz', 'quartz original', 'quartz scan', 'quartz_scan', 'pattern quartz', 'error quartz', 'aborted', 'pending polish', 'completed quartz', 'summary']],
    ['search-probes-fork', ['needle', 'parser crash', 'needle needle needle']],
    ['tie-child', [TIE_TEXT]],
  ];
  for (const [sessionId, queries] of EQ) for (const query of queries) await push(E, { sessionId, query });
  for (const h of [child, fork, odd]) if (h) await push(E, { sessionId: h.id, query: 'the', limit: 5 });
  // Event filters within one session.
  const EFE = [
    [{ kind: 'surface', values: ['current'] }], [{ kind: 'surface', values: ['shadowed'] }], [{ kind: 'surface', values: ['log-only'] }],
    [{ kind: 'surface', values: ['log-only', 'shadowed'] }], [{ kind: 'surface', values: [] }],
    [{ kind: 'type', values: ['tool/call', 'tool/result'] }], [{ kind: 'type', values: ['todo/write'] }], [{ kind: 'type', values: ['turn/end'] }], [{ kind: 'type', values: [] }],
    [{ kind: 'seq', from: 5 }], [{ kind: 'seq', to: 4 }], [{ kind: 'seq', from: 3, to: 12 }], [{ kind: 'seq', from: 4.5, to: 4.5 }],
    [{ kind: 'time', from: 0 }], [{ kind: 'time', to: 0 }],
    [{ kind: 'surface', values: ['current'] }, { kind: 'type', values: ['user/message', 'assistant/message'] }],
  ];
  for (const filters of EFE) await push(E, { sessionId: 'search-surface', query: 'quartz', filters });
  // Invalid searchEvents requests.
  for (const r of [
    { query: 'needle' }, { sessionId: 42, query: 'needle' }, { sessionId: null, query: 'needle' }, { sessionId: ['search-probes'], query: 'needle' },
    { sessionId: MISSING, query: 'needle' }, { sessionId: '', query: 'needle' }, { sessionId: 'SEARCH-PROBES', query: 'needle' },
    { sessionId: 'search-probes' }, { sessionId: 'search-probes', query: '  ' }, { sessionId: 'search-probes', query: 'x\u0000' },
    { sessionId: 'search-probes', query: 'needle', filters: [{ kind: 'text', text: 'needle' }] },
    { sessionId: 'search-probes', query: 'needle', filters: [{ kind: 'id', values: ['search-probes'] }] },
    { sessionId: 'search-probes', query: 'needle', filters: {} },
    { sessionId: 'search-probes', query: 'needle', filters: null },
    { sessionId: 'search-probes', query: 'needle', filters: [null] },
    { sessionId: 'search-probes', query: 'needle', eventFilters: [{ kind: 'type', values: [] }] },
    { sessionId: 'search-probes', query: 'needle', sessionFilters: [{ kind: 'bogus' }] },
    { sessionId: MISSING, query: '!!!' },
  ]) await push(E, r);
  for (const limit of [1, 100, 101, 0, 1.5, '5', null]) await push(E, { sessionId: 'search-long', query: 'lorem ipsum', limit });
  // Budgets: 13 event predicates pass, 14 fail; bindings: 32,753 pass, 32,754 fail.
  const ev13 = [...ev8, { kind: 'time', to: 9e15 }, { kind: 'seq', to: 99 }, { kind: 'type', values: ['user/message', 'assistant/message', 'tool/result'] }, { kind: 'surface', values: ['current'] }, { kind: 'surface', values: ['current', 'log-only'] }];
  if (predicates(ev13) !== 13) throw new Error('oracle: budget probe is not 13 predicates');
  await push(E, { sessionId: 'tie-a', query: TIE_TEXT, filters: ev13 });
  await push(E, { sessionId: 'tie-a', query: TIE_TEXT, filters: [...ev13, { kind: 'type', values: ['user/message'] }] });
  await push(E, { sessionId: 'tie-a', query: TIE_TEXT, filters: [{ kind: 'type', values: fill(32753, 'user/message') }] });
  await push(E, { sessionId: 'tie-a', query: TIE_TEXT, filters: [{ kind: 'type', values: fill(32754, 'user/message') }] });
  await push(E, { sessionId: 'tie-a', query: TIE_TEXT, filters: [{ kind: 'type', values: fill(32752, 'user/message') }, { kind: 'seq', from: 0 }] });
  await push(E, { sessionId: 'tie-a', query: TIE_TEXT, filters: [{ kind: 'type', values: fill(32752, 'user/message') }, { kind: 'seq', from: 0, to: 9 }] });
  // Error precedence.
  const ev14 = [...ev13, { kind: 'type', values: ['user/message'] }];
  await push(E, { sessionId: 5, query: '', filters: [{ kind: 'text', text: 'x' }], cursor: 1, limit: 101 });
  await push(E, { sessionId: MISSING, query: '', filters: [{ kind: 'text', text: 'x' }], cursor: 1, limit: 101 });
  await push(E, { sessionId: MISSING, query: '', cursor: 1, limit: 101 });
  await push(E, { sessionId: MISSING, query: '', cursor: 'garbage', limit: 101 });
  await push(E, { sessionId: MISSING, query: 'needle', cursor: 'garbage', limit: 101 });
  await push(E, { sessionId: MISSING, query: 'needle', cursor: 'garbage', limit: 1 });
  await push(E, { sessionId: MISSING, query: 'needle', filters: ev14 });
  await push(E, { sessionId: 'tie-a', query: TIE_TEXT, cursor: 'garbage', filters: ev14 });
  await push(E, { sessionId: 'tie-a', query: TIE_TEXT, filters: ev14 });
  for (const cursor of ['garbage', b64('null'), b64('{"version":1}'), 42, null]) await push(E, { sessionId: 'tie-a', query: TIE_TEXT, cursor });
  // Chains and cursor reuse.
  const tieEv = await chain(E, { sessionId: 'tie-a', query: TIE_TEXT, limit: 1 });
  chains.push(tieEv);
  chains.push(await chain(E, { sessionId: 'search-long', query: 'lorem ipsum', limit: 2 }));
  chains.push(await chain(E, { sessionId: 'search-surface', query: 'quartz', limit: 3 }));
  chains.push(await chain(E, { sessionId: 'search-probes', query: 'needle', limit: 1, filters: [{ kind: 'type', values: ['user/message', 'assistant/message'] }] }));
  await follow(E, tieEv.first, { sessionId: 'tie-b', query: TIE_TEXT, limit: 1 });
  await follow(E, tieEv.first, { sessionId: 'tie-a', query: TIE_TEXT, limit: 1, filters: [] });
  await follow(E, tieEv.first, { sessionId: 'tie-a', query: TIE_TEXT.toUpperCase(), limit: 1 });
  await follow(E, tieEv.first, { sessionId: MISSING, query: TIE_TEXT, limit: 1 });
  await follow(S, tieEv.first, { query: TIE_TEXT, limit: 1 });
  return chains;
}

/** Words (ASCII letters, ≥ 3) occurring in at least `min` documents, most frequent first. */
export function commonWords(docs, min = 2) {
  const count = new Map();
  for (const d of docs) {
    for (const w of new Set(d.text.toLowerCase().split(/[^a-z0-9\u0080-\uffff]+/u).filter((x) => /^[a-z]{3,}$/.test(x)))) count.set(w, (count.get(w) ?? 0) + 1);
  }
  return [...count].filter(([, n]) => n >= min).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w);
}

/**
 * A search service over a persisted root that can also hold live sessions, as in
 * the live scenario: store + a read-only persistence forwarding list(),
 * listSnapshots() and inspect() to the real JSONL backend (nothing is written) +
 * the SQLite engine with its defaults and an in-memory index.
 * @returns {ctx, backend, dispose}
 */
export async function openSearchService(root, compression) {
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
  await withSeededUuids('dsh-oracle-search', () => ctx.plugin(SqliteSessionQueryEngine, { path: ':memory:', openAt: 'startup' }));
  return { ctx, backend, dispose: async () => { await ctx.fiber.dispose(); await close(pctx); } };
}

/**
 * Live sessions over the clean search root, on the service that answered the
 * persisted-only calls: host actions as in live.mjs ({method:'addLive'|'appendLive'}),
 * a cross-session chain that stays valid while nothing changes, then cursors taken
 * before an append: the cross-session one and the appended session's
 * within-session one go stale, within-session cursors on untouched sessions
 * (persisted, and a live shadow) survive.
 */
export async function liveSearchScenario({ ctx, backend }, call, calls, listing) {
  const q = ctx.sessionQuery;
  const realNow = Date.now;
  const { push, chain, follow } = searchRecorder(q, call, calls);
  const host = (method, params) => calls.push({ method, params: jsonCopy(params) });
  const clock = new FakeClock(Math.max(...listing.map((r) => r.header.createdAt)) + 3_600_000).install();
  const chains = [];
  try {
    // A live-only session, appended turn by turn.
    const w = new ProbeWriter(ctx, clock, 'live-needle', { cwd: '/home/dev/search' });
    host('addLive', [w.s.header, w.s.events]);
    let from = w.s.events.length;
    w.say('needle live one');
    w.say('needle needle live two', { reply: TIE_TEXT });
    host('appendLive', [w.id, w.s.events.slice(from)]);
    // A live shadow of persisted tie-b (same header, seeded with its stored log).
    clock.tick(60_000);
    const stored = await backend.inspect('tie-b');
    const shadow = ctx.sessions.create(SessionId('tie-b'), { seed: stored.events, meta: { ...stored.meta } });
    host('addLive', [shadow.header, shadow.events]);

    chains.push(await chain(S, { query: TIE_TEXT, limit: 3 }));
    await push(S, { query: TIE_TEXT, sessionFilters: [{ kind: 'availability', values: ['live'] }] });
    await push(S, { query: TIE_TEXT, sessionFilters: [{ kind: 'availability', values: ['live'] }, { kind: 'availability', values: ['persisted'] }] });
    await push(S, { query: 'needle', sessionFilters: [{ kind: 'availability', values: ['persisted'] }] });
    await push(E, { sessionId: 'tie-b', query: TIE_TEXT });
    const reqS = { query: 'needle', limit: 1 };
    const reqLong = { sessionId: 'search-long', query: 'lorem ipsum', limit: 2 };
    const reqShadow = { sessionId: 'tie-b', query: TIE_TEXT, limit: 1 };
    const reqLive = { sessionId: 'live-needle', query: 'needle', limit: 1 };
    const iS = await push(S, reqS);
    const iLong = await push(E, reqLong);
    const iShadow = await push(E, reqShadow);
    const iLive = await push(E, reqLive);
    // Unchanged corpus: the cursors continue.
    await follow(S, iS, reqS);
    await follow(E, iLive, reqLive);
    // An append to live-needle.
    clock.tick(60_000);
    from = w.s.events.length;
    w.say('needle after the cursors');
    host('appendLive', [w.id, w.s.events.slice(from)]);
    await follow(S, iS, reqS);
    await follow(E, iLong, reqLong);
    await follow(E, iShadow, reqShadow);
    await follow(E, iLive, reqLive);
    chains.push(await chain(S, reqS));
    chains.push(await chain(E, reqLive));
  } finally {
    Date.now = realNow;
  }
  return chains;
}
