// The installed package's parallel reads in Node: a load whose logs helper threads read ahead
// answers exactly as one that reads them alone, failures included, and the helpers did read
// (a File sent to a helper is a copy, so its counting `arrayBuffer` is not the one called).
// The helper an archive starts ahead of its loads does not keep a finished script running.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SessionArchive, SessionArgumentError, SessionLoadError } from 'dsh-session-search';
import { answers, countingFiles, storedEntries } from './files.mjs';

const logs = storedEntries(new Uint8Array(readFileSync(process.env.PKG_SAMPLE_ZIP)));

/** Loads `entries` as counted Files with `readers` helpers: the answers and this thread's reads. */
async function load(entries, readers) {
  const events = [];
  const archive = await SessionArchive.create();
  const report = await archive.load(countingFiles(entries, events), { readers });
  const result = { answers: await answers(archive, report), reads: events.filter(([kind]) => kind === 'whole').length };
  archive.free();
  return result;
}

test('logs read by helpers answer as logs read alone, and the helpers read some of them', async () => {
  const alone = await load(logs, 0);
  const helped = await load(logs, 2);
  assert.deepEqual(helped.answers, alone.answers);
  assert.equal(alone.reads, logs.length);
  assert.ok(helped.reads < logs.length, `${helped.reads} of ${logs.length} logs were read in this thread`);
});

test('a log a helper cannot read, or reads out of place, fails as it does read alone', async () => {
  const damaged = logs[2].bytes.slice();
  damaged.fill(0x41, damaged.length >> 1);
  const garbled = Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, ...new TextEncoder().encode('not a frame')]);
  // Another session's log under this one's directory: its header names another id.
  const [home, other] = [logs[5], logs[6]];
  const entries = logs.map((log, i) => {
    if (i === 2) return { ...log, bytes: damaged };
    if (i === 4) return { ...log, bytes: garbled };
    if (log === home) return { ...log, bytes: other.bytes };
    return log;
  });
  const alone = await load(entries, 0);
  const helped = await load(entries, 3);
  assert.deepEqual(helped.answers, alone.answers);
  const codes = alone.answers.failures.map((f) => f.code).sort();
  assert.deepEqual(codes, ['SESSION_LOAD_CORRUPT_FRAME', 'SESSION_LOAD_CORRUPT_FRAME', 'SESSION_LOAD_IDENTITY_MISMATCH'].sort());
});

test('an abort while helpers read stops the load and publishes nothing', async () => {
  const controller = new AbortController();
  const archive = await SessionArchive.create();
  const onProgress = (p) => {
    if (p.sessionsDone >= 3) controller.abort();
  };
  const load = archive.load(countingFiles(logs, []), { readers: 2, signal: controller.signal, onProgress });
  await assert.rejects(load, (error) => error instanceof SessionLoadError && error.code === 'SESSION_LOAD_ABORTED');
  assert.deepEqual(await archive.listSessions(), []);
  // The archive loads again, with helpers, as if the aborted load had never started.
  const report = await archive.load(countingFiles(logs, []), { readers: 2 });
  assert.equal(report.sessions.length, logs.length);
  archive.free();
});

test('readers must be a non-negative integer', async () => {
  const archive = await SessionArchive.create();
  for (const readers of [-1, 1.5, '2', null]) {
    const invalid = (error) => error instanceof SessionArgumentError && error.code === 'SESSION_INVALID_ARGUMENT' && error.message.includes('options.readers');
    await assert.rejects(archive.load([], { readers }), invalid, String(readers));
    await assert.rejects(SessionArchive.create({ readers }), invalid, `create ${readers}`);
  }
  archive.free();
  const none = await SessionArchive.create({ readers: 0, tokenizer: 'cjk' });
  assert.deepEqual(await none.listSessions(), []);
  none.free();
});

/** Runs ends.mjs with `args`: what it printed, once it ended. */
function runToEnd(args) {
  const started = performance.now();
  const run = spawnSync(process.execPath, [fileURLToPath(new URL('./ends.mjs', import.meta.url)), ...args], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(run.error, undefined, `the script ended (${(performance.now() - started).toFixed(0)} ms)`);
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.trim();
}

test('the helper standing by does not keep a script running, and a load that takes it loads every log', async () => {
  assert.equal(runToEnd([]), 'created');
  assert.equal(runToEnd([process.env.PKG_SAMPLE_ZIP]), `loaded ${logs.length}`);
});
