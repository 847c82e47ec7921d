#!/usr/bin/env node
// Build the demo sample: ~25 realistic sessions written through the real DSH
// Session API + JSONL persistence (zstd), zipped as a persistence root, plus
// one DSH-style export ZIP of a session with its subagents.
//
//   node make-sample.mjs --out /work/main/www/sample/ [--seed S]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SessionId } from '@deepseek-ai/dsh-session';
import { Rng, FakeClock } from './lib/prng.mjs';
import { Script } from './lib/script.mjs';
import { openWriter, openReader, close } from './lib/dsh.mjs';
import { makeZip, safeId } from './lib/zip.mjs';

const { values: argv } = parseArgs({ options: { out: { type: 'string' }, seed: { type: 'string', default: 'sample-1' } } });
if (!argv.out) { console.error('usage: node make-sample.mjs --out DIR'); process.exit(2); }
const OUT = path.resolve(argv.out);
const TARGET = 25;

const rng = new Rng(`dsh-sample:${argv.seed}`);
const clock = new FakeClock(1_764_547_200_000).install(); // 2025-12-01T00:00:00Z
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-sample-'));
const ROOT = path.join(tmp, 'root');
const ctx = await openWriter(ROOT, 'zstd');
const CWDS = ['/home/dev/app', '/home/dev/search-indexer', '/home/dev/web-ui', '/home/dev/billing-api', undefined];
let count = 0;

async function child(parentScript, call, depth, grand = false) {
  count++;
  const r = parentScript.rng.fork('child');
  const parent = parentScript.s;
  const preset = JSON.parse(call.arguments).agent;
  const s = ctx.sessions.create(SessionId(r.uuid()), { meta: { ...(parent.header.cwd ? { cwd: parent.header.cwd } : {}), parentSession: parent.id, origin: 'subagent', delegationDepth: depth, agentPreset: preset } });
  const cs = new Script(s, r, clock, { flush: () => ctx.sessions.flush(s), flavour: parentScript.flavour, tame: true, onSubagent: grand ? (sc, c) => child(sc, c, depth + 1) : undefined });
  await cs.fullTurn('completed', { prompt: call.task, steps: grand ? 2 : r.int(2, 3), forceTask: grand });
  await ctx.sessions.flush(s);
  const ans = [...s.events].reverse().find((e) => e.type === 'assistant/message' && e.data.message.content.some((b) => b.type === 'text'));
  return `Subagent ${s.id} (${preset}) finished.\n\n${ans ? ans.data.message.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n') : ''}`;
}

for (let i = 0; count < TARGET; i++) {
  const r = rng.fork(`s${i}`);
  clock.tick(r.int(20 * 60_000, 20 * 3_600_000));
  count++;
  const cwd = CWDS[i % CWDS.length];
  const session = ctx.sessions.create(SessionId(r.uuid()), { meta: cwd ? { cwd } : {} });
  const flavour = i % 5 === 2 ? 'cjk' : 'en';
  let spawned = 0;
  const s = new Script(session, r, clock, { flush: () => ctx.sessions.flush(session), flavour, tame: true, onSubagent: (sc, call) => child(sc, call, 1, i === 1 && spawned++ === 0) });
  const turns = r.int(2, 5);
  const taskTurns = i === 1 ? [1, 2] : i % 6 === 1 && count < TARGET - 1 ? [r.int(1, turns)] : [];
  for (let t = 1; t <= turns; t++) {
    if (t >= 3 && (i % 4 === 0 || r.chance(0.2))) s.compact(null);
    if (t >= 2 && r.chance(0.1)) s.prune();
    await s.fullTurn(r.weighted([[12, 'completed'], [1, 'aborted'], [1, 'max-tokens']]), { forceTask: taskTurns.includes(t), steps: taskTurns.includes(t) ? 2 : undefined });
    if (t === 1) s.title(r.chance(0.7) ? 'provider' : 'fallback');
    if (r.chance(0.3)) s.todo();
  }
  await ctx.sessions.flush(session);
  if (i === 3 && count < TARGET) {
    count++;
    clock.tick(3_600_000);
    const ends = session.events.filter((e) => e.type === 'turn/end').map((e) => e.seq);
    const f = ctx.sessions.fork(session, ends[0], SessionId(r.uuid()));
    await new Script(f, r.fork('fork'), clock, { flush: () => ctx.sessions.flush(f), flavour, tame: true }).fullTurn('completed');
    await ctx.sessions.flush(f);
  }
}
await close(ctx);

// Export-ZIP of the session with the most descendants (spec 01 §10 layout).
const rd = await openReader(ROOT, 'zstd');
const records = await rd.sessionQuery.listSessions();
const kids = new Map();
for (const rec of records) {
  const p = rec.header.parentSession;
  if (p !== undefined) { if (!kids.has(p)) kids.set(p, []); kids.get(p).push(rec.header); }
}
for (const list of kids.values()) list.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
const descendants = (id) => (kids.get(id) ?? []).flatMap((h) => [h.id, ...descendants(h.id)]);
const top = records.filter((rec) => rec.header.parentSession === undefined)
  .map((rec) => ({ id: rec.header.id, n: descendants(rec.header.id).length }))
  .sort((a, b) => b.n - a.n || (a.id < b.id ? -1 : 1))[0];
const exportEntries = [{ name: 'session.jsonl', data: (await rd.sessionPersistence.readRaw(SessionId(top.id))).content }];
for (const d of descendants(top.id)) exportEntries.push({ name: `subagents/${safeId(d)}/session.jsonl`, data: (await rd.sessionPersistence.readRaw(SessionId(d))).content });
await close(rd);

function walk(dir, rel = '') {
  const out = [];
  for (const ent of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${ent.name}` : ent.name;
    if (ent.isDirectory()) out.push(...walk(dir, r)); else out.push(r);
  }
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

fs.mkdirSync(OUT, { recursive: true });
for (const f of fs.readdirSync(OUT)) if (/^export-.*\.zip$/.test(f) || f === 'sample-archive.zip') fs.rmSync(path.join(OUT, f));
const archive = makeZip(walk(ROOT).map((f) => ({ name: f, data: fs.readFileSync(path.join(ROOT, f)) })));
fs.writeFileSync(path.join(OUT, 'sample-archive.zip'), archive);
const exportName = `export-${safeId(top.id)}.zip`;
const exp = makeZip(exportEntries);
fs.writeFileSync(path.join(OUT, exportName), exp);
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`sample: ${records.length} sessions; sample-archive.zip ${archive.length} B; ${exportName} ${exp.length} B (${exportEntries.length} logs)`);
