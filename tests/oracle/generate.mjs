#!/usr/bin/env node
// Generate DSH session logs through the real DSH Session API and JSONL
// persistence backend, then damage some copies and add hand-written logs.
//
//   node generate.mjs --out DIR [--sessions N] [--seed S]
//
// Output roots (see README.md): DIR/zstd, DIR/raw, DIR/ids, DIR/handmade,
// DIR/layout-*, DIR/search, plus DIR/manifest.json describing every session.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Session, SessionId } from '@deepseek-ai/dsh-session';
import { Rng, FakeClock } from './lib/prng.mjs';
import { Script } from './lib/script.mjs';
import { openWriter, close } from './lib/dsh.mjs';
import { RAW_DAMAGE, ZSTD_DAMAGE, applyDamage } from './lib/damage.mjs';
import { writeHandmade } from './lib/handmade.mjs';
import { writeSearchProbes } from './lib/search.mjs';

const { values: argv } = parseArgs({ options: { out: { type: 'string' }, sessions: { type: 'string', default: '240' }, seed: { type: 'string', default: '1' } } });
if (!argv.out) { console.error('usage: node generate.mjs --out DIR [--sessions N] [--seed S]'); process.exit(2); }
const OUT = path.resolve(argv.out);
const N = Number(argv.sessions);
const SEED = argv.seed;
if (!Number.isSafeInteger(N) || N < 1) throw new Error('--sessions must be a positive integer');
for (const sub of fs.existsSync(OUT) ? fs.readdirSync(OUT) : []) {
  if (['zstd', 'raw', 'ids', 'live', 'handmade', 'search', 'manifest.json'].includes(sub) || sub.startsWith('layout-')) fs.rmSync(path.join(OUT, sub), { recursive: true, force: true });
}
fs.mkdirSync(OUT, { recursive: true });

const rng = new Rng(`dsh-oracle:${SEED}`);
const clock = new FakeClock(1_750_000_000_000 + rng.int(0, 1_000_000_000)).install();
const manifest = { seed: SEED, requestedSessions: N, sessions: [] };

const CWDS = [
  [25, undefined],
  [20, '/home/dev/app'],
  [6, '/home/dev/my project'],
  [5, '/home/dév/プロジェクト/search'],
  [4, '/home/dev/~backup/old-app'],
  [3, '/srv/build:v2/a\\b'],
  [2, '/'],
  [3, '/home/dev//double//slash/'],
  [3, '/Users/Dev/Code/CaseSensitive'],
  [3, '/home/dev/cafe\u0301'],
  [2, '/tmp/emoji-🚀-dir'],
  [2, `/home/dev/${'very-long-directory-name-'.repeat(11)}alpha`],
  [2, `/home/dev/${'very-long-directory-name-'.repeat(11)}beta`],
];

function topId(r) {
  return r.weighted([
    [20, () => r.uuid()],
    [2, () => `sess-${r.hex(12)}`],
    [1, () => `Sess ünï~${r.hex(6)}`],
    [1, () => `run:${r.hex(8)}/${r.int(1, 9)}`],
  ])();
}

const roots = {
  zstd: { ctx: await openWriter(path.join(OUT, 'zstd'), 'zstd'), damage: [] },
  raw: { ctx: await openWriter(path.join(OUT, 'raw'), 'none'), damage: [] },
};
let budget = N;
const pendingDamage = [];

function record(root, session, kind, features, extra = {}) {
  manifest.sessions.push({ root, id: session.id, kind, parentSession: session.header.parentSession, cwd: session.header.cwd ?? null, events: session.events.length, features: [...features].sort(), ...extra });
}

function turnKind(r) {
  return r.weighted([[80, 'completed'], [6, 'aborted'], [5, 'error'], [5, 'max-tokens'], [1, 'blocked']]);
}

async function runChild(ctx, rootName, parentScript, call, depth) {
  if (budget <= 0) return 'Error: subagent budget exhausted; do the task yourself.';
  budget--;
  const r = parentScript.rng.fork('child');
  const parent = parentScript.s;
  const id = r.uuid();
  const preset = JSON.parse(call.arguments).agent;
  const child = ctx.sessions.create(SessionId(id), { meta: { ...(parent.header.cwd !== undefined ? { cwd: parent.header.cwd } : {}), parentSession: parent.id, origin: 'subagent', delegationDepth: depth, agentPreset: preset } });
  const features = new Set(['subagent-child']);
  const cs = new Script(child, r, clock, {
    flush: () => ctx.sessions.flush(child), features, flavour: parentScript.flavour,
    onSubagent: depth < 2 && r.chance(0.25) ? (s, c) => runChild(ctx, rootName, s, c, depth + 1) : undefined,
  });
  const wantGrandchild = cs.onSubagent !== undefined;
  await cs.fullTurn('completed', { prompt: call.task, source: { kind: 'user' }, steps: wantGrandchild ? 2 : r.int(1, 3), forceTask: wantGrandchild });
  if (r.chance(0.3)) await cs.fullTurn(turnKind(r));
  await ctx.sessions.flush(child);
  record(rootName, child, 'subagent', features, { delegationDepth: depth });
  const answer = [...child.events].reverse().find((e) => e.type === 'assistant/message' && e.data.message.content.some((b) => b.type === 'text'));
  const text = answer ? answer.data.message.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n') : '(no answer)';
  return `Subagent ${id} (${preset}) finished.\n\n${text}`;
}

/** One top-level session (plus children it spawns). */
async function runTop(ctx, rootName, id, cwd, contentSeed, plan) {
  const r = new Rng(contentSeed);
  const features = new Set();
  const meta = cwd !== undefined ? { cwd } : {};
  let session;
  let s;
  let turnsDone = 0;
  const onSubagent = (scr, call) => runChild(ctx, rootName, scr, call, 1);
  if (plan.resumedIgnorable) {
    // First part of the history as a detached Session; then the live session is
    // created from that seed plus ignorable unknown-type events (a resume).
    const det = Session.create(SessionId(id));
    const s1 = new Script(det, r, clock, { features, flavour: plan.flavour });
    const k = Math.max(1, plan.nTurns - 1);
    for (; turnsDone < k; turnsDone++) await s1.fullTurn(turnKind(r));
    clock.tick(r.int(60_000, 3_600_000));
    const seed = [...det.events];
    seed.push({ type: 'x-telemetry/sample', seq: seed.length, time: clock.tick(5), data: { cpu: 0.42, rssMb: 512, note: 'ignorable unknown event' }, ignorable: true });
    if (r.chance(0.5)) seed.push({ type: 'metrics/sample', seq: seed.length, time: clock.tick(5), data: { text: 'not searchable', nested: { a: [1, 2, 3] } }, ignorable: true });
    features.add('ignorable-unknown');
    features.add('resumed');
    session = ctx.sessions.create(SessionId(id), { seed, meta: { ...meta, createdAt: det.header.createdAt } });
    await ctx.sessions.flush(session);
  } else {
    session = ctx.sessions.create(SessionId(id), { meta });
  }
  s = new Script(session, r, clock, { flush: () => ctx.sessions.flush(session), features, flavour: plan.flavour, onSubagent });
  for (let t = turnsDone + 1; t <= plan.nTurns; t++) {
    if (t >= 3 && r.chance(0.35)) s.compact(null);
    if (t >= 2 && r.chance(0.15)) s.prune();
    if (plan.unknownRequired && t === plan.nTurns) { s.ap('x-future/required', { note: 'a required event this build does not know' }); features.add('unknown-required'); }
    const task = plan.taskTurns.includes(t);
    const inTurnCompact = t >= 2 && r.chance(0.08);
    await s.fullTurn(turnKind(r), {
      forceTask: task,
      steps: task ? r.int(2, 3) : undefined,
      beforeStep: inTurnCompact ? async (turn) => { s.compact(turn); } : undefined,
    });
    if (t === 1 && r.chance(0.6)) s.title('fallback');
    else if (t > 1 && r.chance(0.25)) s.title('provider');
    if (r.chance(0.08)) s.title('user');
    if (r.chance(0.25)) s.todo();
  }
  if (plan.extraCompactions) { s.compact(null); s.compact(null); }
  if (plan.open) await s.openTurn(plan.open);
  await ctx.sessions.flush(session);
  return { session, features, r };
}

let fam = 0;
while (budget > 0) {
  const fr = rng.fork(`family:${fam++}`);
  const rootName = fr.chance(0.5) ? 'zstd' : 'raw';
  const root = roots[rootName];
  const ctx = root.ctx;
  clock.tick(fr.int(60_000, 36 * 3_600_000));
  const id = topId(fr);
  const cwd = fr.weighted(CWDS);
  const contentSeed = `${SEED}:${fr.u32()}`;
  const wantTwin = budget >= 2 && fr.chance(0.22);
  if (wantTwin && root.damage.length === 0) root.damage.push(...(rootName === 'zstd' ? ZSTD_DAMAGE : RAW_DAMAGE));
  const plan = {
    flavour: fr.weighted([[12, 'en'], [3, 'cjk'], [2, 'emoji'], [1, 'combining'], [1, 'adversarial']]),
    nTurns: wantTwin ? fr.int(2, 5) : fr.int(1, 6),
    taskTurns: [],
    resumedIgnorable: !wantTwin && fr.chance(0.08),
    unknownRequired: !wantTwin && fr.chance(0.02),
    open: !wantTwin && fr.chance(0.14) ? fr.pick(['tool-pending', 'tool-pending', 'mid-stream', 'no-step', 'between-steps']) : null,
    extraCompactions: fr.chance(0.06),
  };
  if (!wantTwin && budget >= 3 && fr.chance(0.15)) {
    const n = fr.int(1, 2);
    for (let i = 0; i < n; i++) plan.taskTurns.push(fr.int(Math.min(plan.nTurns, 1 + (plan.resumedIgnorable ? plan.nTurns - 1 : 0)), plan.nTurns));
  }
  budget--;
  const start = clock.now;
  const { session, features, r } = await runTop(ctx, rootName, id, cwd, contentSeed, plan);
  record(rootName, session, 'top', features, { flavour: plan.flavour });

  // Fork: a live child seeded from a completed-turn prefix.
  if (!plan.open && budget > 0 && fr.chance(0.1)) {
    const ends = session.events.filter((e) => e.type === 'turn/end').map((e) => e.seq);
    if (ends.length > 0) {
      budget--;
      const fr2 = r.fork('fork');
      clock.tick(fr2.int(1000, 600_000));
      const forkId = fr2.uuid();
      const f = ctx.sessions.fork(session, fr2.pick(ends), SessionId(forkId));
      const ffeat = new Set(['fork']);
      const fs2 = new Script(f, fr2, clock, { flush: () => ctx.sessions.flush(f), features: ffeat, flavour: plan.flavour });
      await fs2.fullTurn('completed');
      if (fr2.chance(0.4)) await fs2.fullTurn(turnKind(fr2));
      await ctx.sessions.flush(f);
      record(rootName, f, 'fork', ffeat, { seedLength: f.header.seedLength });
    }
  }

  if (wantTwin) {
    // Identical content and times under another id; this copy gets damaged.
    budget--;
    const end = clock.now;
    clock.set(start); // same createdAt and event times as the original
    const twinId = fr.weighted([[3, () => fr.uuid()], [1, () => id.toUpperCase() === id ? `${id}-copy` : id.toUpperCase()], [1, () => `${id}_dmg`]])();
    const twin = await runTop(ctx, rootName, twinId, cwd, contentSeed, plan);
    clock.set(Math.max(end, clock.now));
    const damage = root.damage.shift();
    record(rootName, twin.session, 'twin', twin.features, { twinOf: id, damage });
    pendingDamage.push({ rootName, header: twin.session.header, lastSeq: twin.session.events.length - 1, damage });
  }
}

for (const [name, root] of Object.entries(roots)) {
  const loc = (h) => root.ctx.sessionPersistence.locate(h).path;
  for (const d of pendingDamage.filter((p) => p.rootName === name)) d.file = loc(d.header);
  await close(root.ctx);
}
for (const d of pendingDamage) applyDamage(d.file, d.damage, { lastSeq: d.lastSeq });

// Special ids and createdAt ties (raw root "ids").
{
  const ctx = await openWriter(path.join(OUT, 'ids'), 'none');
  const r = rng.fork('ids');
  clock.tick(86_400_000);
  const tie = clock.now;
  const ids = ['.', '..', 'a/b\\c:d', 'Sess ünï~x', '🚀 launch', 'lone\udc80surrogate', 'abc', 'ABC', 'Abd', 'abc-1', 'abc_1', 'abc~1', 'ábc', 'abc 1', '_x', '-x', '10', '9', 'z', 'Z', 'résumé', 'resume'];
  const cwds = [undefined, '/', '/home/dev/app', `/home/dev/${'very-long-directory-name-'.repeat(11)}gamma`];
  for (const [i, id] of ids.entries()) {
    clock.set(i >= 6 ? tie : tie - 10_000 + i * 1000);
    const cwd = cwds[i % cwds.length];
    const session = ctx.sessions.create(SessionId(id), { meta: cwd ? { cwd } : {} });
    const features = new Set(['special-id']);
    const s = new Script(session, r.fork(id), clock, { flush: () => ctx.sessions.flush(session), features });
    await s.fullTurn('completed', { steps: 1 });
    record('ids', session, 'special-id', features);
  }
  await close(ctx);
}

// The live scenario (dump.mjs on a root named "live") starts from a byte copy of "ids".
fs.cpSync(path.join(OUT, 'ids'), path.join(OUT, 'live'), { recursive: true });
manifest.live = { copyOf: 'ids', note: 'persisted part of the live scenario; live sessions exist only inside dump.mjs' };

manifest.handmade = await writeHandmade(OUT);
manifest.damageKinds = { raw: RAW_DAMAGE, zstd: ZSTD_DAMAGE };

// The full-text search root "search" (zstd). DSH fails every search when any
// persisted session of the root is unreadable, so it holds only clean sessions:
// fresh generated ones (no damaged twins, no unknown required events) plus the
// search probe sessions of lib/search.mjs. Generated last, so the other roots
// do not depend on it.
{
  const ctx = await openWriter(path.join(OUT, 'search'), 'zstd');
  const sr = rng.fork('search');
  budget = Math.max(10, Math.ceil((N * 9) / 16)); // 135 (+ 16 probe sessions) for the default 240
  for (let k = 0; budget > 0; k++) {
    const fr = sr.fork(`family:${k}`);
    clock.tick(fr.int(60_000, 12 * 3_600_000));
    const id = topId(fr);
    const cwd = fr.weighted(CWDS);
    const plan = {
      flavour: fr.weighted([[12, 'en'], [3, 'cjk'], [2, 'emoji'], [1, 'combining'], [1, 'adversarial']]),
      nTurns: fr.int(1, 4),
      taskTurns: [],
      resumedIgnorable: fr.chance(0.06),
      unknownRequired: false,
      open: fr.chance(0.1) ? fr.pick(['tool-pending', 'mid-stream', 'no-step', 'between-steps']) : null,
      extraCompactions: fr.chance(0.06),
    };
    if (budget >= 3 && fr.chance(0.15)) plan.taskTurns.push(fr.int(Math.min(plan.nTurns, 1 + (plan.resumedIgnorable ? plan.nTurns - 1 : 0)), plan.nTurns));
    budget--;
    const { session, features, r } = await runTop(ctx, 'search', id, cwd, `${SEED}:search:${fr.u32()}`, plan);
    record('search', session, 'top', features, { flavour: plan.flavour });
    if (!plan.open && budget > 0 && fr.chance(0.1)) {
      const ends = session.events.filter((e) => e.type === 'turn/end').map((e) => e.seq);
      if (ends.length > 0) {
        budget--;
        const fr2 = r.fork('fork');
        clock.tick(fr2.int(1000, 600_000));
        const f = ctx.sessions.fork(session, fr2.pick(ends), SessionId(fr2.uuid()));
        const ffeat = new Set(['fork']);
        await new Script(f, fr2, clock, { flush: () => ctx.sessions.flush(f), features: ffeat, flavour: plan.flavour }).fullTurn('completed');
        await ctx.sessions.flush(f);
        record('search', f, 'fork', ffeat, { seedLength: f.header.seedLength });
      }
    }
  }
  manifest.sessions.push(...await writeSearchProbes(ctx, clock));
  await close(ctx);
}
fs.writeFileSync(path.join(OUT, 'manifest.json'), JSON.stringify(manifest, null, 1) + '\n');
const counts = {};
for (const s of manifest.sessions) counts[s.root] = (counts[s.root] ?? 0) + 1;
console.log(`generated ${manifest.sessions.length} API sessions (${Object.entries(counts).map(([k, v]) => `${k}=${v}`).join(' ')}), ${pendingDamage.length} damaged twins, ${manifest.handmade.length} handmade files`);
