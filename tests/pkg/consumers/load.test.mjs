// The installed package's load of Files in Node: each input offered by its size, a log's bytes
// read only when the load reaches that log or the one before it (reads counted), answers equal
// to the same logs loaded from their ZIP, and a file that cannot be read failing alone.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { SessionArchive, SessionLoadError } from 'dsh-session-search';
import { answers, countingFiles, storedEntries } from './files.mjs';

const zipBytes = new Uint8Array(readFileSync(process.env.PKG_SAMPLE_ZIP));

const logs = storedEntries(zipBytes);
const media = { name: 'media/screenshot.png', bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10]) };

test('Files are read a log at a time, each when the step before its own reaches it, and answer as their ZIP', async () => {
  const eager = await SessionArchive.create();
  const expected = await answers(eager, await eager.load([{ path: 'sample.zip', bytes: zipBytes }]));
  eager.free();
  assert.equal(expected.sessions.length, 25);

  const events = [];
  const archive = await SessionArchive.create();
  const progress = [];
  const onProgress = (p) => {
    events.push(['step', p.sessionsDone]);
    progress.push(p);
  };
  const report = await archive.load(countingFiles([...logs, media], events), { onProgress });
  assert.deepEqual(await answers(archive, report), expected);

  const wholes = events.filter(([kind]) => kind === 'whole').map(([, name]) => name);
  assert.deepEqual([...wholes].sort(), logs.map((l) => l.name).sort(), 'every log read once, the media file never');
  assert.deepEqual(events.filter(([kind]) => kind === 'head'), [['head', media.name]], 'only the media file, to tell it from a ZIP');
  // A log's bytes are asked for while the load reads the log before it (they arrive
  // asynchronously): never more than one log ahead of the steps, never behind them.
  let steps = 0;
  let reads = 0;
  for (const [kind] of events) {
    if (kind === 'step') {
      steps++;
      assert.ok(reads >= Math.min(steps - 1, logs.length), `${reads} reads by step ${steps}`);
    }
    if (kind === 'whole') {
      reads++;
      assert.ok(reads <= steps + 1, `read ${reads} after ${steps} steps`);
    }
  }
  const total = logs.reduce((sum, l) => sum + l.bytes.length, 0);
  assert.ok(progress.every((p) => p.bytesTotal === total), 'the declared sizes are the total from the first step');
  assert.equal(progress.at(-1).bytesDone, total);
});

test('a File that cannot be read, or reads short, fails its log alone with SESSION_LOAD_IO', async () => {
  const [unreadable, short] = [logs[3].name, logs[7].name];
  const archive = await SessionArchive.create();
  const report = await archive.load(countingFiles(logs, [], { [unreadable]: 'unreadable', [short]: 'short' }));
  const failed = report.failures.map((f) => [f.path, f.code]).sort();
  assert.deepEqual(failed, [[`sample/${unreadable}`, 'SESSION_LOAD_IO'], [`sample/${short}`, 'SESSION_LOAD_IO']].sort());
  assert.equal(report.sessions.length, logs.length - 2);
  assert.equal((await archive.listSessions()).length, logs.length - 2);
});

test('an abort stops the reads and publishes nothing', async () => {
  const events = [];
  const controller = new AbortController();
  const archive = await SessionArchive.create();
  const reads = () => events.filter(([kind]) => kind === 'whole').length;
  let readsAtAbort;
  const onProgress = (p) => {
    if (p.sessionsDone !== 3) return;
    readsAtAbort = reads();
    controller.abort();
  };
  const load = archive.load(countingFiles(logs, events), { signal: controller.signal, onProgress });
  await assert.rejects(load, (error) => error instanceof SessionLoadError && error.code === 'SESSION_LOAD_ABORTED');
  assert.ok(readsAtAbort <= 4, `${readsAtAbort} logs read by the third: at most one ahead`);
  assert.equal(reads(), readsAtAbort, 'no log read after the abort');
  assert.deepEqual(await archive.listSessions(), []);
});
