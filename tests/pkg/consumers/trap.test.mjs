// A wasm trap (here: JSON nested far deeper than the engine's stack, allowed by a raised
// maxJsonDepth) reaches the caller as SESSION_INTERNAL, and the module refuses every later call
// instead of running on possibly corrupt memory. Its own file: node --test runs each file in a
// process of its own, and this one poisons its module.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SessionArchive, SessionInternalError } from 'dsh-session-search';

test('a trap is SESSION_INTERNAL and poisons the module', async () => {
  const archive = await SessionArchive.create({ limits: { maxJsonDepth: 100_000_000, maxLineBytes: 100_000_000 } });
  const depth = 2_000_000;
  const line = new TextEncoder().encode('['.repeat(depth) + ']'.repeat(depth) + '\n');
  const internal = (error) => error instanceof SessionInternalError && error.name === 'SessionInternalError' && error.code === 'SESSION_INTERNAL';
  await assert.rejects(archive.load([{ path: 'deep.jsonl', bytes: line }]), internal);
  await assert.rejects(archive.listSessions(), internal);
  await assert.rejects(SessionArchive.create(), internal);
});
