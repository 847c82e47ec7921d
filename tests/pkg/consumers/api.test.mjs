// The installed package's contract in Node, beyond equal answers: input kinds, progress, abort,
// spill, argument checking, codes on the right classes, use after free.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import * as api from 'dsh-session-search';
import { readInputs } from './inputs.mjs';

const {
  SessionArchive,
  SessionArgumentError,
  SessionLoadError,
  SessionQueryError,
  SessionReferenceError,
} = api;
const zipBytes = readFileSync(process.env.PKG_SAMPLE_ZIP);

async function loaded(bytes = zipBytes) {
  const archive = await SessionArchive.create();
  await archive.load([{ path: 'sample.zip', bytes }]);
  return archive;
}

async function rejects(promise, cls, code) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof cls, `${error.name} is not a ${cls.name}: ${error.message}`);
    assert.equal(error.name, cls.name);
    assert.equal(error.code, code, error.message);
    return true;
  });
}

test('Uint8Array, ArrayBuffer, Blob and File inputs load the same sessions', async () => {
  const reports = [];
  const ab = zipBytes.buffer.slice(zipBytes.byteOffset, zipBytes.byteOffset + zipBytes.byteLength);
  for (const input of [
    [{ path: 'a.zip', bytes: new Uint8Array(zipBytes) }],
    [{ path: 'a.zip', bytes: ab }],
    [{ path: 'a.zip', bytes: new Blob([zipBytes]) }],
    new File([zipBytes], 'a.zip'),
    [new File([zipBytes], 'a.zip')],
  ]) {
    const archive = await SessionArchive.create();
    const report = await archive.load(input);
    reports.push(report.sessions.map((s) => s.sessionId).sort().join());
    archive.free();
  }
  assert.equal(reports[0].split(',').length, 25);
  for (const r of reports) assert.equal(r, reports[0]);
});

test('a load report has the fields its types declare, for what loaded and what did not', async () => {
  const archive = await SessionArchive.create();
  const notZip = Uint8Array.from([0x50, 0x4b, 3, 4, 0, 0]);
  const notLog = Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2]);
  const report = await archive.load([{ path: 'sample.zip', bytes: zipBytes }, { path: 'lone.jsonl.zst', bytes: notLog }, { path: 'broken.zip', bytes: notZip }]);
  assert.deepEqual(Object.keys(report).sort(), ['failures', 'inputs', 'sessions']);
  // In path order, whatever order they were given in.
  assert.deepEqual(report.inputs.map((i) => [i.input, i.kind]), [['broken.zip', 'zip'], ['lone.jsonl.zst', 'file'], ['sample.zip', 'zip']]);
  for (const input of report.inputs) assert.deepEqual(Object.keys(input).sort(), ['ignored', 'input', 'kind', 'logs', 'media', 'nestedArchives']);
  assert.deepEqual(Object.keys(report.sessions[0]).sort(), ['encoding', 'events', 'input', 'outcome', 'path', 'sessionId', 'syntheticClosers', 'tornBytes']);
  // A path is a log's inside its input: none for an input that failed whole, or that is the log.
  assert.deepEqual(report.failures.map((f) => [f.input, f.path, f.code]), [['broken.zip', '', 'SESSION_LOAD_INVALID_ARCHIVE'], ['lone.jsonl.zst', '', 'SESSION_LOAD_INVALID_HEADER']]);
  assert.deepEqual(Object.keys(report.failures[0]).sort(), ['code', 'input', 'message', 'path']);
  archive.free();
});

test('a persistence root given as entries loads every session', { skip: !process.env.PKG_ROOT }, async () => {
  const archive = await SessionArchive.create();
  const progress = [];
  const report = await archive.load(readInputs(process.env.PKG_ROOT), { onProgress: (p) => progress.push(p) });
  assert.ok(report.sessions.length > 100, `${report.sessions.length} sessions`);
  assert.deepEqual(report.failures, []);
  assert.ok(progress.length >= 2, 'progress at the start and the end');
  const last = progress.at(-1);
  assert.deepEqual(Object.keys(last).sort(), ['bytesDone', 'bytesTotal', 'sessionsDone', 'sessionsTotal']);
  assert.equal(last.bytesDone, last.bytesTotal);
  assert.equal((await archive.listSessions()).length, report.sessions.length);
});

test('an aborted load throws SESSION_LOAD_ABORTED and publishes nothing', async () => {
  const archive = await SessionArchive.create();
  const controller = new AbortController();
  controller.abort();
  await rejects(archive.load([{ path: 'a.zip', bytes: zipBytes }], { signal: controller.signal }), SessionLoadError, 'SESSION_LOAD_ABORTED');
  assert.deepEqual(await archive.listSessions(), []);
  const again = new AbortController();
  const load = archive.load([{ path: 'a.zip', bytes: zipBytes }], { signal: again.signal, onProgress: () => again.abort() });
  await rejects(load, SessionLoadError, 'SESSION_LOAD_ABORTED');
  assert.deepEqual(await archive.listSessions(), []);
  const report = await archive.load([{ path: 'a.zip', bytes: zipBytes }]);
  assert.equal(report.sessions.length, 25);
});

test('a throwing onProgress fails the load, publishes nothing, and the archive loads again', async () => {
  const archive = await SessionArchive.create();
  const boom = new Error('boom');
  await assert.rejects(archive.load([{ path: 'a.zip', bytes: zipBytes }], { onProgress: () => { throw boom; } }), (error) => error === boom);
  assert.deepEqual(await archive.listSessions(), []);
  assert.equal((await archive.load([{ path: 'a.zip', bytes: zipBytes }])).sessions.length, 25);
});

test('strict load failure is a SessionQueryError and adds nothing', async () => {
  const archive = await SessionArchive.create();
  const bad = new TextEncoder().encode('{"not":"a header"}\n');
  const report = await archive.load([{ path: 'x.jsonl', bytes: bad }]);
  assert.equal(report.failures.length, 1);
  assert.match(report.failures[0].code, /^SESSION_LOAD_/);
  await rejects(archive.load([{ path: 'a.zip', bytes: zipBytes }, { path: 'x.jsonl', bytes: bad }], { strict: true }), SessionQueryError, 'SESSION_QUERY_PERSISTENCE_FAILED');
  assert.deepEqual(await archive.listSessions(), []);
});

test('every code family reaches JS on its class', async () => {
  const archive = await loaded();
  const [first, second] = (await archive.listSessions()).map((s) => s.header.id);
  await rejects(archive.readSurface('missing'), SessionQueryError, 'SESSION_QUERY_SESSION_NOT_FOUND');
  await rejects(archive.readEvent({ sessionId: first, seq: 1, before: 51 }), SessionQueryError, 'SESSION_QUERY_INVALID_WINDOW');
  await rejects(archive.searchSessions({ query: 'x', cursor: 'nope' }), SessionQueryError, 'SESSION_QUERY_INVALID_CURSOR');
  await rejects(archive.prepare({ id: first }, 'x', [{ sessionId: first }]), SessionReferenceError, 'SESSION_REFERENCE_SELF_REFERENCE');
  await rejects(archive.prepare({ id: first }, 'x', [{ sessionId: second }], { maxReferences: 9 }), SessionReferenceError, 'SESSION_REFERENCE_INVALID_CONFIG');
  await rejects(api.decodeSessionReferenceUri('http://x'), SessionReferenceError, 'SESSION_REFERENCE_INVALID_REFERENCE');
  await rejects(archive.importIndex(new Uint8Array([1, 2, 3])), SessionQueryError, 'SESSION_QUERY_INDEX_FAILED');
});

test('wrong argument types and unknown keys are SESSION_INVALID_ARGUMENT before the engine', async () => {
  const archive = await loaded();
  const bad = 'SESSION_INVALID_ARGUMENT';
  await rejects(archive.searchSessions({ query: 'x', limt: 5 }), SessionArgumentError, bad);
  await rejects(archive.searchSessions({ query: () => 'x' }), SessionArgumentError, bad);
  await rejects(archive.searchSessions({ query: 'x' }, { signal: 'no' }), SessionArgumentError, bad);
  await rejects(archive.listEvents(10n), SessionArgumentError, bad);
  await rejects(archive.readEvent({ sessionId: 'a', seq: NaN }), SessionArgumentError, bad);
  await rejects(archive.filterSessions(new Map()), SessionArgumentError, bad);
  const cyclic = { query: 'x' };
  cyclic.self = cyclic;
  await rejects(archive.searchSessions(cyclic), SessionArgumentError, bad);
  await rejects(archive.load([{ path: 'a.zip', bytes: 'text' }]), SessionArgumentError, bad);
  await rejects(archive.load([{ path: 'a.zip', bytes: [1, 2] }]), SessionArgumentError, bad);
  await rejects(archive.load([{ path: 'a.zip', bytes: zipBytes, extra: 1 }]), SessionArgumentError, bad);
  await rejects(archive.load({ path: 'a.zip', bytes: zipBytes }), SessionArgumentError, bad);
  await rejects(archive.load([], { strickt: true }), SessionArgumentError, bad);
  await rejects(SessionArchive.create({ tokeniser: 'cjk' }), SessionArgumentError, bad);
  await rejects(archive.prepare({ id: 'a' }, 'x', [], { spill: 'not a function' }), SessionArgumentError, bad);
  // A number where DSH expects an id is DSH's String(value): simply not found.
  await rejects(archive.listEvents(123), SessionQueryError, 'SESSION_QUERY_SESSION_NOT_FOUND');
  assert.equal((await archive.listSessions()).length, 25, 'the archive still works');
});

test('results are the JSON text the engine returned, lone surrogates included', async () => {
  const archive = await SessionArchive.create();
  const header = { version: 0, id: 'live\udc80one', createdAt: 1, cwd: '/w' };
  await archive.addLive(header, []);
  const [record] = await archive.listSessions();
  assert.equal(record.header.id, 'live\udc80one');
  const uri = await api.encodeSessionReferenceUri('x\udc80y');
  assert.match(uri, /^dsh-session:/);
  assert.equal(await archive.encodeSessionReferenceUri('x\udc80y'), uri);
  assert.equal(await api.decodeSessionReferenceUri(await api.encodeSessionReferenceUri('x y')), 'x y');
});

test('search and prepare signals: aborted means nothing returned, with DSH codes', async () => {
  const archive = await loaded();
  const [first, second] = (await archive.listSessions()).map((s) => s.header.id);
  const aborted = AbortSignal.abort();
  await rejects(archive.searchSessions({ query: 'the' }, { signal: aborted }), SessionQueryError, 'SESSION_QUERY_ABORTED');
  await rejects(archive.searchEvents({ sessionId: first, query: 'the' }, { signal: aborted }), SessionQueryError, 'SESSION_QUERY_ABORTED');
  // DSH validates the request before it looks at the signal.
  await rejects(archive.searchSessions({ query: 'the', limit: 0 }, { signal: aborted }), SessionQueryError, 'SESSION_QUERY_INVALID_LIMIT');
  await rejects(archive.prepare({ id: first }, 'x', [{ sessionId: second }], { signal: aborted }), SessionReferenceError, 'SESSION_REFERENCE_CANCELLED');
  await rejects(archive.listCandidates({ id: first }, '', 5, { signal: aborted }), SessionReferenceError, 'SESSION_REFERENCE_CANCELLED');
  const live = new AbortController();
  const page = await archive.searchSessions({ query: 'the' }, { signal: live.signal });
  assert.ok(Array.isArray(page.items));
});

test('spill: the store gets each truncated source; a throw is unavailable; an abort while it writes cancels', async () => {
  const archive = await loaded();
  const records = await archive.listSessions();
  const agent = { id: records[0].header.id };
  // The largest session, with a budget that forces truncation but still fits its header.
  const sizes = await Promise.all(records.slice(1).map(async (r) => [JSON.stringify(await archive.readSurface(r.header.id)).length, r.header.id]));
  const [size, big] = sizes.sort((a, b) => b[0] - a[0])[0];
  let budget = size;
  let result;
  for (; budget > 256; budget = Math.floor(budget * 0.8)) {
    try {
      result = await archive.prepare(agent, 'x', [{ sessionId: big }], { maxReferenceBytes: budget, messageId: 'a', contextMessageId: 'b' });
      if (result.references[0].truncated) break;
    } catch (error) {
      if (error.code !== 'SESSION_REFERENCE_BUDGET_EXCEEDED') throw error;
      break;
    }
  }
  assert.ok(result && result.references[0].truncated, 'a truncated source');
  assert.deepEqual(result.references[0].spill, { unavailable: 'no spill store configured' });
  const options = { maxReferenceBytes: budget, messageId: 'a', contextMessageId: 'b' };
  const seen = [];
  const stored = await archive.prepare(agent, 'x', [{ sessionId: big }], { ...options, spill: async (source) => { seen.push(source); return `mem://${source.sessionId}`; } });
  assert.deepEqual(stored.references[0].spill, { locator: `mem://${big}` });
  assert.equal(seen.length, 1);
  assert.equal(seen[0].sessionId, big);
  // The complete snapshot: at least the budget (as JSON in the prompt it no longer fits), through the last event.
  assert.ok(Buffer.byteLength(JSON.stringify(seen[0].snapshot)) >= budget, 'the complete snapshot does not fit the budget');
  assert.equal(seen[0].capturedThroughSeq, (await archive.readSurface(big)).capturedThroughSeq);
  const failed = await archive.prepare(agent, 'x', [{ sessionId: big }], { ...options, spill: async () => { throw new Error('disk full'); } });
  assert.deepEqual(failed.references[0].spill, { unavailable: 'disk full' });
  const controller = new AbortController();
  const slow = archive.prepare(agent, 'x', [{ sessionId: big }], {
    ...options,
    signal: controller.signal,
    spill: () => new Promise((resolve) => setTimeout(() => resolve('late'), 50)),
  });
  setTimeout(() => controller.abort(), 5);
  await rejects(slow, SessionReferenceError, 'SESSION_REFERENCE_CANCELLED');
});

test('buildIndex reports steps up to done; an aborted build resumes; searches equal a search-built index', async () => {
  const large = await loaded();
  const reports = [];
  const controller = new AbortController();
  const aborted = large.buildIndex({
    signal: controller.signal,
    stepBytes: 4096,
    onProgress: (p) => {
      reports.push(p);
      controller.abort();
    },
  });
  await rejects(aborted, SessionQueryError, 'SESSION_QUERY_ABORTED');
  assert.equal(reports.length, 1, 'stopped after the first step');
  assert.equal(reports[0].done, false, 'the sample takes more than one step');
  const more = [];
  const last = await large.buildIndex({ stepBytes: 4096, onProgress: (p) => more.push(p) });
  assert.deepEqual(more.at(-1), last);
  assert.equal(last.done, true);
  assert.equal(last.eventsDone, last.eventsTotal);
  assert.ok(more.every((p, i) => i === 0 || p.eventsDone >= more[i - 1].eventsDone), 'progress only moves on');
  assert.ok(reports[0].eventsDone + last.eventsTotal >= reports[0].eventsTotal, 'the resumed build counts from where it stopped');
  assert.equal((await large.buildIndex()).sessionsTotal, 0, 'nothing left to do');
  const plain = await loaded();
  for (const query of ['the', 'error', 'parser']) {
    const a = await large.searchSessions({ query, limit: 50 });
    const b = await plain.searchSessions({ query, limit: 50 });
    assert.deepEqual(a.items, b.items, query);
  }
  await rejects(large.buildIndex({ budget: 1 }), SessionArgumentError, 'SESSION_INVALID_ARGUMENT');
  await rejects(large.buildIndex({ stepBytes: 0 }), SessionArgumentError, 'SESSION_INVALID_ARGUMENT');
  large.free();
  plain.free();
});

test('searches while buildIndex runs do not wait for it, answer as the finished index, and page on after it', async () => {
  const building = await loaded();
  const plain = await loaded();
  const request = { query: 'the', limit: 3 };
  // A search started at every report of unfinished work runs before the next step.
  const during = [];
  const build = building.buildIndex({
    stepBytes: 1024,
    onProgress: (p) => {
      if (!p.done) during.push(building.searchSessions(request));
    },
  });
  assert.equal((await build).done, true);
  assert.ok(during.length >= 2, `searched ${during.length} times while the build was under way`);
  const expected = await plain.searchSessions(request);
  assert.ok(expected.items.length === 3 && expected.nextCursor);
  const pages = await Promise.all(during);
  for (const page of pages) assert.deepEqual(page.items, expected.items);
  const next = await building.searchSessions({ ...request, cursor: pages[0].nextCursor });
  const expectedNext = await plain.searchSessions({ ...request, cursor: expected.nextCursor });
  assert.deepEqual(next.items, expectedNext.items, 'a cursor given mid-build goes on after the build');
  building.free();
  plain.free();
});

test('warmUp runs its rounds while idle, stops for a load asked for meanwhile, and adds nothing', async () => {
  const idle = await SessionArchive.create();
  const warmed = await idle.warmUp();
  assert.equal(warmed.completed, true);
  assert.ok(warmed.rounds >= 10, `${warmed.rounds} rounds`);
  assert.deepEqual(await idle.listSessions(), [], 'the warm-up log is not in the archive');
  idle.free();
  await rejects(idle.warmUp(), SessionArgumentError, 'SESSION_ARCHIVE_CLOSED');

  const busy = await SessionArchive.create();
  const warming = busy.warmUp();
  const report = await busy.load([{ path: 'sample.zip', bytes: zipBytes }]);
  const stopped = await warming;
  assert.equal(stopped.completed, false, 'a load stops the warm-up');
  assert.ok(stopped.rounds <= 1, `${stopped.rounds} rounds ran beside the load`);
  const plain = await SessionArchive.create();
  assert.deepEqual(report, await plain.load([{ path: 'sample.zip', bytes: zipBytes }]), 'the load is reported as without a warm-up');
  assert.deepEqual(await busy.listSessions(), await plain.listSessions());
  busy.free();
  plain.free();
});

test('use after free is SESSION_ARCHIVE_CLOSED, never a wasm error', async () => {
  const archive = await loaded();
  const index = await archive.exportIndex();
  assert.ok(index instanceof Uint8Array && index.length > 0);
  archive.free();
  archive.free();
  for (const call of [() => archive.listSessions(), () => archive.searchSessions({ query: 'x' }), () => archive.load([]), () => archive.exportIndex(), () => archive.prepare({ id: 'a' }, 'x', [])]) {
    await rejects(call(), SessionArgumentError, 'SESSION_ARCHIVE_CLOSED');
  }
  const other = await loaded();
  await other.importIndex(index.buffer.slice(index.byteOffset, index.byteOffset + index.byteLength));
  assert.ok((await other.searchSessions({ query: 'the' })).items.length > 0);
});

test("a search asked a few microtasks after buildIndex() starts is answered before the build's first step", async () => {
  // The build's first step waits for a task of its own; searches started before that task,
  // however many microtasks after the build, go first. Without the wait, the step does.
  const archive = await loaded();
  const order = [];
  const build = archive.buildIndex({ stepBytes: 1, onProgress: () => order.push('step') });
  for (let i = 0; i < 10; i++) await null;
  const search = archive.searchSessions({ query: 'error' }).then(() => order.push('search'));
  await Promise.all([build, search]);
  archive.free();
  assert.deepEqual(order.slice(0, 2), ['search', 'step']);
});
