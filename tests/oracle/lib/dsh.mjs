// Wiring of the real DSH packages into a cordis Context.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { Context } from '@deepseek-ai/cordis';
import SessionStore from '@deepseek-ai/dsh-session';
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-persistence-jsonl';
import { SqliteSessionQueryEngine } from '@deepseek-ai/dsh-session-query-sqlite';
import { Rng } from './prng.mjs';

/** A context with the session store and the JSONL backend mounted at `root`. */
export async function openWriter(root, compression) {
  const ctx = new Context();
  await ctx.plugin(SessionStore);
  await ctx.plugin(JsonlSessionPersistence, {
    root,
    compression,
    packChunks: true,
    // Only explicit ctx.sessions.flush() writes: frames/batches are then deterministic.
    writeBatchMaxDelayMs: 2_000_000_000,
  });
  return ctx;
}

/** A context with store + JSONL backend + the query engine (exact reads only, no SQLite). */
export async function openReader(root, compression) {
  const ctx = new Context();
  await ctx.plugin(SessionStore);
  await ctx.plugin(JsonlSessionPersistence, { root, compression });
  await ctx.plugin(SqliteSessionQueryEngine, { path: ':memory:', openAt: 'never' });
  return ctx;
}

export async function close(ctx) {
  await ctx.fiber.dispose();
}

/** Versions of the DSH packages actually loaded (for the dump header). */
export function dshVersions() {
  const req = createRequire(import.meta.url);
  const out = {};
  const dir = path.join(path.dirname(req.resolve('@deepseek-ai/dsh-session/package.json')), '..');
  for (const name of fs.readdirSync(dir).sort()) {
    try { out[`@deepseek-ai/${name}`] = JSON.parse(fs.readFileSync(path.join(dir, name, 'package.json'), 'utf8')).version; } catch { /* not a package */ }
  }
  return out;
}

/**
 * Cache `sessionPersistence.list()` for a reader whose root does not change
 * (dump.mjs checks the root's digest afterwards). DSH's query service lists
 * the whole root on every call; the cache returns a fresh deep copy of the
 * first listing (or the same failure), so results are unchanged but a root
 * with many sessions is listed once instead of once per call. The same holds
 * for `listSnapshots()` (file revisions do not change either).
 */
export function cacheListing(ctx) {
  const p = ctx.sessionPersistence;
  const list = p.list.bind(p);
  const listSnapshots = p.listSnapshots.bind(p);
  let first;
  let firstSnapshots;
  p.list = (signal) => {
    signal?.throwIfAborted();
    first ??= list();
    return first.then((headers) => structuredClone(headers));
  };
  // Search observes the root through listSnapshots (headers + file revisions), twice per call.
  p.listSnapshots = (signal) => {
    signal?.throwIfAborted();
    firstSnapshots ??= listSnapshots();
    return firstSnapshots.then((snapshots) => structuredClone(snapshots));
  };
  return ctx;
}

/**
 * Run `fn` with `crypto.randomUUID` drawn from a seeded PRNG. The SQLite search
 * engine names its service instance with randomUUID() when it is constructed,
 * and that instance id is part of every cursor it issues; seeding it keeps the
 * recorded cursors (and so the dumps) deterministic. Nothing else changes.
 */
export async function withSeededUuids(seed, fn) {
  const real = crypto.randomUUID;
  const rng = new Rng(seed);
  crypto.randomUUID = () => rng.uuid();
  syncBuiltinESMExports();
  try {
    return await fn();
  } finally {
    crypto.randomUUID = real;
    syncBuiltinESMExports();
  }
}
