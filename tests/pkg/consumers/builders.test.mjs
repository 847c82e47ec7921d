// The installed package's parallel index build in Node: segments built by helper threads
// answer exactly as an index built in this thread, an abort keeps what was built, and the
// option is checked.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { SessionArchive, SessionArgumentError, SessionQueryError } from 'dsh-session-search';
import { storedEntries } from './files.mjs';

const logs = storedEntries(new Uint8Array(readFileSync(process.env.PKG_SAMPLE_ZIP)));
const QUERIES = ['error', 'the', 'session search', 'build'];

async function loaded() {
  const archive = await SessionArchive.create();
  await archive.load(logs.map(({ name, bytes }) => ({ path: name, bytes })));
  return archive;
}

/** Every query's first page of sessions and, in the first hit's session, of events. */
async function searches(archive) {
  const out = [];
  for (const query of QUERIES) {
    const page = await archive.searchSessions({ query, limit: 5 });
    out.push(page);
    const first = page.items[0]?.header.id;
    if (first !== undefined) out.push(await archive.searchEvents({ sessionId: first, query, limit: 5 }));
  }
  return JSON.parse(JSON.stringify(out, (key, value) => (key === 'nextCursor' ? value !== undefined : value)));
}

test('an index whose segments helpers built answers as one built in this thread', async () => {
  const alone = await loaded();
  const built = await alone.buildIndex({ builders: 0 });
  const expected = await searches(alone);
  alone.free();
  assert.ok(expected[0].items.length > 0, 'the queries match');
  // One event a step: this thread extracts the documents, and nearly all of them go to a job.
  const helped = await loaded();
  const steps = [];
  const progress = await helped.buildIndex({ builders: 2, stepBytes: 1, onProgress: (p) => steps.push(p) });
  assert.deepEqual(progress, built);
  assert.deepEqual(await searches(helped), expected);
  assert.ok(steps.every((p, i) => i === 0 || p.eventsDone >= steps[i - 1].eventsDone), 'progress never goes back');
  assert.ok(steps.at(-1).done && steps.filter((p) => p.done).length === 1, 'one final report');
  helped.free();
});

test('an abort while helpers build keeps the work, and the next build finishes it', async () => {
  const reference = await loaded();
  await reference.buildIndex({ builders: 0 });
  const expected = await searches(reference);
  reference.free();
  const archive = await loaded();
  const controller = new AbortController();
  const onProgress = (p) => {
    if (p.eventsDone * 2 >= p.eventsTotal) controller.abort();
  };
  const build = archive.buildIndex({ builders: 2, stepBytes: 1, signal: controller.signal, onProgress });
  await assert.rejects(build, (error) => error instanceof SessionQueryError && error.code === 'SESSION_QUERY_ABORTED');
  // Searches answer during the interrupted build, and a new build with helpers finishes it.
  assert.deepEqual(await searches(archive), expected);
  assert.ok((await archive.buildIndex({ builders: 2 })).done);
  assert.deepEqual(await searches(archive), expected);
  archive.free();
});

test('builders must be a non-negative integer', async () => {
  const archive = await loaded();
  for (const builders of [-1, 1.5, '2', null]) {
    await assert.rejects(archive.buildIndex({ builders }), (error) => error instanceof SessionArgumentError && error.code === 'SESSION_INVALID_ARGUMENT', String(builders));
  }
  archive.free();
});
