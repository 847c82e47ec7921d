#!/usr/bin/env node
// Mount one persistence root (read-only use) through the real DSH JSONL
// backend + session-query engine and dump what DSH reports for it.
//
//   node dump.mjs --root DIR/zstd --out FILE.json [--compression zstd|none] [--live] [--search]
//
// A root named "live" (or --live) runs the live scenario; a root named
// "search" (or --search) records full-text search calls (lib/search.mjs).
// Shape: see README.md. Errors are recorded as {error:{code,name,message,cause?}}.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { SessionId } from '@deepseek-ai/dsh-session';
import { openReader, close, dshVersions, cacheListing } from './lib/dsh.mjs';
import { scanFrames } from './lib/zstd.mjs';
import { recorder, rootPlan, sessionPlan, edgePlan, TEXT_PROBES, TEXT_PROBES_SHORT } from './lib/calls.mjs';
import { liveScenario } from './lib/live.mjs';
import { recordSearchRoot, liveSearchScenario, openSearchService } from './lib/search.mjs';

const { values: argv } = parseArgs({ options: { root: { type: 'string' }, out: { type: 'string' }, compression: { type: 'string' }, live: { type: 'boolean' }, search: { type: 'boolean' } } });
if (!argv.root || !argv.out) { console.error('usage: node dump.mjs --root DIR --out FILE.json [--compression zstd|none] [--live] [--search]'); process.exit(2); }
const ROOT = path.resolve(argv.root);
// The live scenario runs on a root named "live" (generate.mjs copies "ids" there) or with --live.
const LIVE = argv.live || path.basename(ROOT) === 'live';
// Full-text search calls run on a root named "search" (clean sessions only) or with --search.
const SEARCH = !LIVE && (argv.search || path.basename(ROOT) === 'search');
// Per-session calls: the full suite on about this many sessions per root, a light one on the rest.
const FULL_SAMPLE = 30;
const CONCURRENCY = 8;

/** Every regular file under dir, relative, sorted by UTF-16 code units. */
function walk(dir, rel = '') {
  const out = [];
  for (const ent of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${ent.name}` : ent.name;
    if (ent.isDirectory()) out.push(...walk(dir, r));
    else if (ent.isFile()) out.push(r);
  }
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function treeDigest(dir) {
  const h = crypto.createHash('sha256');
  for (const f of walk(dir)) { h.update(f); h.update('\0'); h.update(fs.readFileSync(path.join(dir, f))); h.update('\0'); }
  return h.digest('hex');
}

const isTranscript = (f) => /(^|\/)session\.jsonl(\.zstd)?$/.test(f);

/** The header id of a transcript, read directly (for unlisted/isolated bookkeeping only). */
function headerId(file) {
  try {
    const buf = fs.readFileSync(file);
    let line;
    if (file.endsWith('.zstd')) {
      const f = scanFrames(buf)[0];
      if (!f?.complete) return undefined;
      line = zlib.zstdDecompressSync(buf.subarray(f.start, f.end)).toString('utf8');
    } else {
      const nl = buf.indexOf(0x0a);
      if (nl < 0) return undefined;
      line = buf.subarray(0, nl).toString('utf8');
    }
    const h = JSON.parse(line);
    return typeof h?.id === 'string' ? h.id : undefined;
  } catch { return undefined; }
}

/** Inverse of DSH's path-segment escape (~XXXX per UTF-16 unit): the id a session directory names. */
function dirId(f) {
  const parts = f.split('/');
  if (parts.length < 3) return undefined;
  return parts[parts.length - 2].replace(/~([0-9A-F]{4})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
}

function detectCompression(root) {
  if (argv.compression) return argv.compression;
  const t = walk(root).find(isTranscript);
  return t?.endsWith('.zstd') ? 'zstd' : 'none';
}

const roots = [ROOT];
function scrub(s) {
  let out = String(s);
  for (const r of [...roots].sort((a, b) => b.length - a.length)) out = out.split(r).join("<root>");
  return out;
}

function errorRecord(e) {
  const err = { code: e?.code ?? null, name: e?.name ?? typeof e, message: scrub(e?.message ?? e) };
  if (e?.cause !== undefined) err.cause = { name: e.cause?.name ?? null, message: scrub(e.cause?.message ?? e.cause) };
  return { error: err };
}

async function attempt(fn) {
  try {
    const v = await fn();
    return v === undefined ? null : v;
  } catch (e) {
    return errorRecord(e);
  }
}

async function readOne(q, id) {
  const sid = SessionId(id);
  return {
    listEvents: await attempt(() => q.listEvents(sid)),
    readSurface: await attempt(() => q.readSurface(sid)),
    filterEvents: await attempt(() => q.filterEvents(sid, [])),
    readSession: await attempt(() => q.readSession(sid)),
    readTitle: await attempt(() => q.readTitle(sid)),
  };
}

const before = treeDigest(ROOT);
const compression = detectCompression(ROOT);
const files = walk(ROOT);
const transcripts = files.filter(isTranscript);
const result = {
  root: path.basename(ROOT),
  compression,
  dsh: dshVersions(),
  collation: Intl.Collator().resolvedOptions().locale, // listSessions ties use localeCompare
  mode: 'listed',
  listSessions: null,
  sessions: [],
  unlisted: [],
  calls: [],
};
const call = recorder(scrub);
/** Run [method, params] pairs in order against one query service. */
async function runPlan(q, plan) {
  const out = [];
  for (const [m, p] of plan) out.push(await call(q, m, p));
  return out;
}

const tmpBase = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-oracle-'));
roots.push(tmpBase);
let scratchN = 0;

/** Copy one transcript alone into a scratch root (same relative path) and mount it. */
async function withScratch(f, fn) {
  const tmp = path.join(tmpBase, `r${String(scratchN++).padStart(6, '0')}`);
  fs.mkdirSync(path.dirname(path.join(tmp, f)), { recursive: true });
  fs.copyFileSync(path.join(ROOT, f), path.join(tmp, f));
  roots.push(tmp);
  const c = await openReader(tmp, f.endsWith('.zstd') ? 'zstd' : 'none');
  try { return await fn(c.sessionQuery); } finally {
    await close(c);
    roots.splice(roots.indexOf(tmp), 1);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function pool(n, count, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, count) }, async () => { while (next < count) { const i = next++; await fn(i); } }));
}

// The root does not change during a dump (checked at the end): list it once.
const ctx = cacheListing(await openReader(ROOT, compression));
const q = ctx.sessionQuery;
result.listSessions = await attempt(() => q.listSessions());
let searchNote = ''; // pages of the recorded pagination chains (search root)
const byHeaderId = new Map();
for (const f of transcripts) { const id = headerId(path.join(ROOT, f)); if (id !== undefined && !byHeaderId.has(id)) byHeaderId.set(id, f); }
if (Array.isArray(result.listSessions)) {
  const ids = result.listSessions.map((rec) => rec.header.id);
  const listed = new Set(ids);
  // Every query re-lists the whole root, which makes big roots slow. Since the
  // full listing succeeded, each session is read from a scratch root holding
  // only its own transcript at the same relative path (same DSH code paths and
  // results); the full root is used when the scratch listing disagrees.
  const entries = new Array(ids.length);
  const scratchOk = new Array(ids.length).fill(false);
  await pool(CONCURRENCY, ids.length, async (i) => {
    const id = ids[i];
    const f = byHeaderId.get(id);
    let entry;
    if (f !== undefined) {
      entry = await withScratch(f, async (sq) => {
        const l = await attempt(() => sq.listSessions());
        return Array.isArray(l) && l.length === 1 && l[0].header.id === id ? readOne(sq, id) : undefined;
      });
    }
    scratchOk[i] = entry !== undefined;
    entries[i] = { id, ...(entry ?? await readOne(q, id)) };
  });
  result.sessions.push(...entries);
  // Transcripts the listing skipped: what DSH says when asked for them by header id.
  for (const f of transcripts) {
    const hid = headerId(path.join(ROOT, f));
    if (hid !== undefined && listed.has(hid)) continue;
    const id = hid ?? dirId(f);
    result.unlisted.push({ path: f, headerId: hid ?? null, id: id ?? null, ...(id !== undefined ? await readOne(q, id) : {}) });
  }
  if (LIVE) {
    result.calls.push(...await liveScenario(ROOT, compression, call));
  } else if (SEARCH) {
    // The whole-root calls, then the search calls (the per-session suites run on the other roots).
    const corruptIds = result.sessions.filter((s) => s.listEvents?.error).map((s) => s.id);
    if (corruptIds.length > 0) throw new Error(`search root holds unreadable sessions: ${corruptIds.join(', ')}`);
    result.calls.push(...await runPlan(q, rootPlan(result.listSessions, { corruptIds, unlistedIds: [] })));
    // One search service (with a live store, as in the live scenario) answers the
    // persisted-only searches, then searches after live sessions are added.
    const service = await openSearchService(ROOT, compression);
    try {
      const chains = await recordSearchRoot(service.ctx.sessionQuery, call, result.calls, result.listSessions);
      chains.push(...await liveSearchScenario(service, call, result.calls, result.listSessions));
      searchNote = ` chains=${chains.map((c) => c.pages).join(',')}`;
    } finally {
      await service.dispose();
    }
  } else {
    // Root-level calls (whole corpus), then one block per session in listing order.
    const corruptIds = result.sessions.filter((s) => s.listEvents?.error).map((s) => s.id);
    const unlistedIds = result.unlisted.map((u) => u.id).filter((id) => id !== null);
    result.calls.push(...await runPlan(q, rootPlan(result.listSessions, { corruptIds, unlistedIds })));
    // The complete suite on every k-th session, a light one on the rest; argument
    // edge cases on the first light readable session, short text probes on the
    // second, the long probe list on the handmade `text-probes` session.
    const every = Math.max(1, Math.ceil(ids.length / FULL_SAMPLE));
    const readable = (i) => Array.isArray(entries[i].listEvents) && entries[i].listEvents.length > 0 && ids[i] !== 'text-probes';
    const light = ids.map((_, i) => i).filter((i) => readable(i) && i % every !== 0);
    const anyReadable = ids.map((_, i) => i).filter(readable);
    const edgeAt = light[0] ?? anyReadable[0];
    const shortAt = light[1] ?? anyReadable.find((i) => i !== edgeAt) ?? edgeAt;
    const blocks = new Array(ids.length);
    await pool(CONCURRENCY, ids.length, async (i) => {
      const id = ids[i];
      const probes = id === 'text-probes' ? TEXT_PROBES : i === shortAt ? TEXT_PROBES_SHORT : null;
      const full = i % every === 0 && i !== edgeAt && i !== shortAt && probes === null;
      const plan = sessionPlan(id, entries[i], { full, probes });
      if (i === edgeAt) plan.push(...edgePlan(id, entries[i].listEvents.length));
      const f = byHeaderId.get(id);
      const got = scratchOk[i] ? await withScratch(f, (sq) => runPlan(sq, plan)) : await runPlan(q, plan);
      // traceSession depends on the whole corpus: always the full root.
      blocks[i] = [await call(q, 'traceSession', [id]), ...got];
    });
    for (const b of blocks) result.calls.push(...b);
  }
  await close(ctx);
} else {
  // Listing fails for the whole root: read every transcript alone in a
  // scratch root with the same relative path.
  result.mode = 'isolated';
  for (const f of transcripts) {
    const entry = await withScratch(f, async (sq) => {
      const listing = await attempt(() => sq.listSessions());
      const id = Array.isArray(listing) && listing.length === 1 ? listing[0].header.id : headerId(path.join(ROOT, f)) ?? dirId(f);
      return { id: id ?? null, path: f, isolatedListSessions: listing, ...(id !== undefined ? await readOne(sq, id) : {}) };
    });
    result.sessions.push(entry);
  }
  // Calls against the whole (unlistable) root: every corpus read fails the same
  // way, except where DSH validates arguments first.
  const ids = [...new Set(result.sessions.map((s) => s.id).filter((id) => id !== null))];
  result.calls.push(...await runPlan(q, rootPlan(null, { ids })));
  for (const id of ids) {
    result.calls.push(await call(q, 'traceSession', [id]));
    result.calls.push(...await runPlan(q, sessionPlan(id, { listEvents: { error: {} } }, { full: false })));
    result.calls.push(await call(q, 'readEvent', [{ sessionId: id, seq: 0, after: 51 }]));
    result.calls.push(await call(q, 'listDocuments', [id]));
  }
  await close(ctx);
}
fs.rmSync(tmpBase, { recursive: true, force: true });

if (treeDigest(ROOT) !== before) throw new Error(`dump modified files under ${ROOT}`);
fs.mkdirSync(path.dirname(path.resolve(argv.out)), { recursive: true });
fs.writeFileSync(argv.out, JSON.stringify(result) + '\n');
const errs = result.sessions.filter((s) => s.listEvents?.error).length;
const callErrs = result.calls.filter((c) => c.error).length;
const nS = result.calls.filter((c) => c.method === 'searchSessions').length;
const nE = result.calls.filter((c) => c.method === 'searchEvents').length;
const searchCounts = nS + nE > 0 ? ` search=${nS}+${nE} cursorFrom=${result.calls.filter((c) => c.cursorFrom !== undefined).length}` : '';
console.log(`${result.root}: mode=${result.mode} listed=${Array.isArray(result.listSessions) ? result.listSessions.length : 'ERROR ' + result.listSessions.error.code} sessions=${result.sessions.length} listEventsErrors=${errs} unlisted=${result.unlisted.length} calls=${result.calls.length} (${callErrs} errors)${searchCounts}${searchNote}`);
