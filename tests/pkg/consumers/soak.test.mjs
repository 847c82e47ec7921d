// Under load, in wasm: several JS tasks loading and searching at once answer as one task alone
// does, and 100 load / search / free cycles leave the wasm memory where it was (wasm memory
// never shrinks, so a cycle that kept anything would grow it).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { SessionArchive } from 'dsh-session-search';

const zipBytes = readFileSync(process.env.PKG_SAMPLE_ZIP);
const QUERIES = ['error', 'slow query', 'test', '修复'];

async function loaded() {
  const archive = await SessionArchive.create();
  await archive.load([{ path: 'sample.zip', bytes: zipBytes }]);
  return archive;
}

/** The answers of one task; cursors are bound to their archive, so only their presence counts. */
async function answers(archive) {
  const out = [];
  for (const query of QUERIES) {
    const { nextCursor, ...page } = await archive.searchSessions({ query, limit: 5 });
    out.push(JSON.stringify({ ...page, more: nextCursor !== undefined }));
  }
  out.push(JSON.stringify(await archive.listSessions()));
  return out;
}

/** The instance's memory: the package's own module, reached through its glue's `initSync`. */
async function wasmMemory() {
  const glue = new URL('./node_modules/dsh-session-search/wasm/dsh_session_search.js', import.meta.url);
  const wasm = new URL('./node_modules/dsh-session-search/wasm/dsh_session_search_bg.wasm', import.meta.url);
  const raw = await import(glue.href);
  // Already initialised by the package: initSync hands back the live instance's exports.
  return raw.initSync({ module: readFileSync(wasm) }).memory;
}

test('concurrent tasks, with their own archives and with one shared archive, answer as a serial run', async () => {
  const alone = await loaded();
  const serial = await answers(alone);
  const own = await Promise.all(
    Array.from({ length: 6 }, async () => {
      const archive = await loaded();
      const result = await answers(archive);
      archive.free();
      return result;
    }),
  );
  for (const result of own) assert.deepEqual(result, serial);
  const shared = await Promise.all(Array.from({ length: 6 }, () => answers(alone)));
  for (const result of shared) assert.deepEqual(result, serial);
  alone.free();
});

test('100 load / search / free cycles keep the wasm memory at its size', async () => {
  const cycle = async () => {
    const archive = await loaded();
    await archive.searchSessions({ query: 'error' });
    archive.free();
  };
  for (let i = 0; i < 5; i += 1) await cycle();
  const memory = await wasmMemory();
  const baseline = memory.buffer.byteLength;
  for (let i = 0; i < 100; i += 1) await cycle();
  const grown = memory.buffer.byteLength - baseline;
  assert.ok(grown <= 4 << 20, `wasm memory grew by ${grown} bytes over 100 cycles (from ${baseline})`);
  console.log(`wasm memory ${baseline} bytes before and after 100 cycles (grew ${grown})`);
});

/** A word that does not repeat across the logs (so that their text compresses little). */
function word(k) {
  return (Math.imul(k, 2654435761) >>> 0).toString(36);
}

/**
 * A small persisted log: a header and a few user messages. Their words do not repeat: a log's
 * text is held compressed once it is folded, so repeated text would make the load need almost
 * no memory, and how much it grew would depend on what earlier tests left free in the heap.
 */
function smallLog(n) {
  const id = `small-${String(n).padStart(5, '0')}`;
  const createdAt = 1_700_000_000_000 + n * 60_000;
  const lines = [JSON.stringify({ type: 'session', version: 0, id, createdAt, cwd: '/home/dev/app', delegationDepth: 0 })];
  for (let seq = 0; seq < 8; seq += 1) {
    const words = Array.from({ length: 64 }, (_, w) => word(n * 1000 + seq * 100 + w)).join(' ');
    const text = `Session ${n} step ${seq}: module ${(n * 31 + seq) % 997} failed on line ${seq * 7}: ${words}`;
    lines.push(JSON.stringify({
      type: 'user/message', seq, time: createdAt + seq + 1, surfaceOp: 'append',
      data: { id: `m${seq}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } },
    }));
  }
  return { path: `root/--home-dev-app--/${id}/session.jsonl`, bytes: new TextEncoder().encode(`${lines.join('\n')}\n`) };
}

test('a load of thousands of small logs grows the wasm memory in few large steps', async () => {
  // Grown by what each allocation lacked, memory grew one 64 KiB page at a time (629 times
  // here) and such a load took quadratic time; by an eighth at a time it grows a few dozen
  // times at most.
  const memory = await wasmMemory();
  const archive = await SessionArchive.create();
  const logs = Array.from({ length: 4000 }, (_, n) => smallLog(n));
  const sizes = [memory.buffer.byteLength];
  const seen = () => {
    const size = memory.buffer.byteLength;
    if (size !== sizes.at(-1)) sizes.push(size);
  };
  const report = await archive.load(logs, { onProgress: seen });
  seen();
  assert.equal(report.sessions.length, 4000);
  assert.equal((await archive.listSessions()).length, 4000);
  const grownBy = sizes.at(-1) - sizes[0];
  assert.ok(grownBy > 8 << 20, `the load needs memory: grew by ${grownBy} bytes`);
  assert.ok(sizes.length - 1 <= 40, `memory grew ${sizes.length - 1} times over 4000 load steps (${sizes[0]} → ${sizes.at(-1)} bytes; first steps: ${sizes.slice(1, 6).join(', ')})`);
  console.log(`wasm memory grew ${sizes.length - 1} times over a load of 4000 logs (${sizes[0]} → ${sizes.at(-1)} bytes)`);
  archive.free();
});
