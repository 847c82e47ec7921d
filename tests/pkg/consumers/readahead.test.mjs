// The installed package's read-ahead scheduler (lib/readers.js) with stand-in helpers: the load
// takes every log in its order, helpers never hold more than their share and are given the
// largest logs near the load first, a helper that fails leaves its logs to the load, logs read
// ahead count as progress once, the load's own thread never reads a large log ahead, and the
// bytes of the logs it reads next are asked for before it needs them. A helper fills the
// buffers of its earlier reads once the load hands them back.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

// Not an export of the package: the file itself, as installed.
const installed = dirname(createRequire(import.meta.url).resolve('dsh-session-search/package.json'));
const { Prefetch, ReadAhead, helperOver, readerCount, serveHelper } = await import(pathToFileURL(join(installed, 'lib', 'readers.js')));
const { createApi } = await import(pathToFileURL(join(installed, 'lib', 'core.js')));

/**
 * A helper whose reads resolve when `release()` is called, answering `read:<entry>` or null;
 * `spares` are the buffers handed back to it.
 */
function standIn({ fails = false } = {}) {
  const waiting = [];
  const spares = [];
  const worker = {
    postMessage: ({ id, ticket, spare }) => (spare === undefined ? waiting.push({ id, entry: ticket.entry }) : spares.push(spare)),
  };
  let onMessage;
  let onError;
  const helper = helperOver(worker, (message, error) => ([onMessage, onError] = [message, error]), () => {});
  return {
    helper,
    spares,
    held: () => waiting.map((w) => w.entry),
    release() {
      const next = waiting.shift();
      if (next === undefined) return false;
      if (fails) onError();
      else onMessage({ id: next.id, result: new TextEncoder().encode(`read:${next.entry}`) });
      return true;
    },
  };
}

const decode = (read) => (read === null ? null : new TextDecoder().decode(read));
const pause = () => new Promise((resolve) => setImmediate(resolve));

/** A Prefetch over stand-in inputs: `asked` lists the entries whose bytes were asked for. */
function prefetchOf(asked, read = (entry) => Promise.resolve(new Uint8Array([entry]))) {
  return new Prefetch(
    (entry) => {
      asked.push(entry);
      return read(entry);
    },
    () => true,
  );
}

function schedule(helpers, sizes, readHere = (entry) => new TextEncoder().encode(`here:${entry}`), read = undefined) {
  const hereReads = [];
  const asked = [];
  const ahead = new ReadAhead({
    ahead: sizes.map((_, entry) => entry),
    helpers: helpers.map((h) => h.helper),
    ticket: (entry) => ({ entry }),
    bytes: (entry) => new Uint8Array([entry]),
    size: (entry) => sizes[entry],
    readHere: (entry, bytes) => {
      hereReads.push(entry);
      return readHere(entry, bytes);
    },
    prefetch: prefetchOf(asked, read),
  });
  return { ahead, hereReads, asked };
}

test('every log is taken in order, from a helper or read here while a helper still reads', async () => {
  const helpers = [standIn(), standIn()];
  const sizes = Array.from({ length: 12 }, () => 1000);
  const { ahead, hereReads } = schedule(helpers, sizes);
  await pause();
  assert.deepEqual(helpers.map((h) => h.held()), [[0, 1], [2, 3]], 'two reads in flight a helper');
  const taken = [];
  for (let entry = 0; entry < sizes.length; entry++) {
    for (;;) {
      // Helpers answer one read between two looks of the load.
      helpers.forEach((h) => h.release());
      await pause();
      const result = await ahead.take(entry);
      if (result.pending) continue;
      taken.push(decode(result.read));
      break;
    }
  }
  ahead.close();
  assert.equal(taken.length, sizes.length);
  for (const [entry, read] of taken.entries()) {
    assert.ok(read === `read:${entry}` || read === `here:${entry}` || read === null, read);
  }
  assert.ok(taken.some((r) => r.startsWith('read:')), 'helpers read some');
  assert.ok(hereReads.every((entry) => taken[entry] === `here:${entry}`), 'what was read here is what was taken');
});

test('the buffer of a read goes back to the helper that made it once the load releases it', async () => {
  const helpers = [standIn(), standIn()];
  const { ahead } = schedule(helpers, [1000, 1000, 1000, 1000]);
  await pause();
  assert.deepEqual(helpers.map((h) => h.held()), [[0, 1], [2, 3]]);
  for (let round = 0; round < 2; round++) {
    helpers.forEach((h) => h.release());
    await pause();
  }
  const reads = [];
  for (let entry = 0; entry < 4; entry++) reads.push((await ahead.take(entry)).read);
  assert.deepEqual(reads.map(decode), ['read:0', 'read:1', 'read:2', 'read:3']);
  assert.deepEqual(helpers.map((h) => h.spares.length), [0, 0], 'nothing goes back before a release');
  ahead.release(reads[2]);
  ahead.release(reads[0]);
  ahead.release(reads[0]);
  ahead.release(new Uint8Array(4));
  assert.deepEqual(helpers.map((h) => h.spares), [[reads[0].buffer], [reads[2].buffer]], 'each to its maker, once; a read no helper made is not sent');
  ahead.close();
});

test('a helper fills the largest buffer handed back when a read fits, and keeps three at most', async () => {
  const given = [];
  const replies = [];
  // A stand-in read of `ticket.size` bytes: into the spare if it fits, else a new buffer.
  const work = {
    read: (_, ticket, bytes, spare) => {
      given.push(spare);
      const buffer = spare !== undefined && spare.byteLength >= ticket.size ? spare : new ArrayBuffer(ticket.size);
      return new Uint8Array(buffer, 0, ticket.size);
    },
  };
  const serve = serveHelper(async () => ({}), work, (message, transfer) => replies.push({ message, transfer }));
  const read = async (id, size) => {
    await serve({ id, ticket: { size }, bytes: new Uint8Array(1) });
    const { message, transfer } = replies.at(-1);
    assert.equal(message.id, id);
    assert.deepEqual(transfer, [message.result.buffer], 'the whole buffer moves with the read');
    return message.result.buffer;
  };
  await read(0, 100);
  assert.equal(given[0], undefined, 'none handed back yet');
  for (const size of [10, 400, 200, 300]) await serve({ spare: new ArrayBuffer(size) });
  assert.equal(replies.length, 1, 'a buffer handed back is not answered');
  assert.equal(await read(1, 350), given[1]);
  assert.equal(given[1].byteLength, 400, 'the largest');
  assert.notEqual(await read(2, 350), given[2], 'too small: a new buffer');
  assert.equal(given[2].byteLength, 300);
  assert.equal(await read(3, 250), given[3]);
  assert.equal(given[3], given[2], 'a spare too small for one read is kept for the next');
  assert.equal(await read(4, 150), given[4]);
  assert.equal(given[4].byteLength, 200, 'the 10-byte buffer was not kept: three at most');
  await read(5, 1);
  assert.equal(given[5], undefined, 'all used');
});

test('a failed helper leaves its logs to the load, which reads them itself', async () => {
  const broken = standIn({ fails: true });
  const { ahead } = schedule([broken], [1000, 1000, 1000]);
  await pause();
  broken.release();
  await pause();
  const first = await ahead.take(0);
  assert.deepEqual(first, { read: null }, 'the failed read: read it yourself');
  ahead.close();
});

test('logs read ahead count as progress until taken, and a large log is never read here', async () => {
  const slow = standIn();
  const big = 2 << 20;
  const { ahead, hereReads } = schedule([slow], [big, big, 10, big, 20, 30]);
  await pause();
  assert.deepEqual(slow.held(), [0, 1]);
  // The load waits for entry 0: it reads the next small unclaimed logs here, one per look.
  assert.deepEqual(await ahead.take(0), { pending: true });
  assert.deepEqual(await ahead.take(0), { pending: true });
  assert.deepEqual(hereReads, [2, 4], 'entry 3 is too large to read here');
  assert.deepEqual(ahead.aheadDone(), { bytes: 10 + 20, logs: 2 });
  slow.release();
  await pause();
  assert.deepEqual(ahead.aheadDone(), { bytes: big + 10 + 20, logs: 3 });
  assert.equal(decode((await ahead.take(0)).read), 'read:0');
  assert.deepEqual(ahead.aheadDone(), { bytes: 10 + 20, logs: 2 }, 'taken: the load counts it now');
  ahead.close();
});

test('a helper is given the largest of the next eight logs, the first of equals', async () => {
  const helper = standIn();
  const { ahead } = schedule([helper], [10, 80, 20, 80, 40, 50, 60, 30, 90, 95]);
  await pause();
  // Entry 8 is past the first eight until entry 1 is taken; entry 3 is as large as 1.
  assert.deepEqual(helper.held(), [1, 8]);
  helper.release();
  await pause();
  assert.deepEqual(helper.held(), [8, 9]);
  ahead.close();
});

test('the bytes of the logs the load reads next are asked for before it takes them', async () => {
  const helper = standIn();
  const big = 2 << 20;
  const { ahead, asked, hereReads } = schedule([helper], [big, big, 10, big, 20, 30]);
  await pause();
  assert.deepEqual(helper.held(), [0, 1]);
  // The next unclaimed logs (2, 3) and the next small one (2) are asked for, once.
  assert.deepEqual(asked, [2, 3]);
  assert.deepEqual(await ahead.take(0), { pending: true });
  assert.deepEqual(hereReads, [2], 'read here from the bytes asked for');
  assert.deepEqual(asked, [2, 3, 4], 'then the next small one');
  ahead.close();
});

test('a log whose bytes cannot be read here is left to the load, which reports it; the others go on', async () => {
  const slow = standIn();
  const big = 2 << 20;
  const gone = (entry) => (entry === 2 ? Promise.reject(new Error('gone')) : Promise.resolve(new Uint8Array([entry])));
  const { ahead, hereReads } = schedule([slow], [big, big, 10, 20], undefined, gone);
  await pause();
  assert.deepEqual(await ahead.take(0), { pending: true });
  assert.deepEqual(hereReads, [], 'entry 2 could not be read');
  assert.deepEqual(await ahead.take(0), { pending: true });
  assert.deepEqual(hereReads, [3], 'the next one is');
  slow.release();
  slow.release();
  await pause();
  assert.equal(decode((await ahead.take(0)).read), 'read:0');
  assert.equal(decode((await ahead.take(1)).read), 'read:1');
  assert.deepEqual(await ahead.take(2), { read: null }, 'the load reads entry 2 itself');
  assert.equal(decode((await ahead.take(3)).read), 'here:3');
  ahead.close();
});

test('a Prefetch hands over what it asked for once, asks again after, and forgets what is dropped', async () => {
  const asked = [];
  const failing = prefetchOf(asked, (entry) => (entry === 9 ? Promise.reject(new Error('gone')) : Promise.resolve(new Uint8Array([entry]))));
  failing.start(1);
  failing.start(1);
  failing.start(9);
  failing.start(undefined);
  assert.deepEqual(asked, [1, 9], 'one read an entry, none for no entry');
  assert.deepEqual(await failing.take(1), new Uint8Array([1]));
  assert.deepEqual(await failing.take(1), new Uint8Array([1]));
  assert.deepEqual(asked, [1, 9, 1], 'taken: asked again');
  await assert.rejects(failing.take(9), /gone/, 'a failed read fails its taker');
  failing.start(2);
  failing.drop(2);
  await failing.take(2);
  assert.deepEqual(asked, [1, 9, 1, 2, 2], 'dropped: asked again');
  const inMemory = new Prefetch(() => assert.fail('never read ahead'), () => false);
  inMemory.start(0);
});

test('helpers start by default only for large loads, and one less than the cores', () => {
  assert.equal(readerCount(undefined, 1 << 20, 8), 0);
  assert.equal(readerCount(undefined, 64 << 20, 2), 1);
  assert.equal(readerCount(undefined, 64 << 20, 1), 0);
  assert.equal(readerCount(undefined, 64 << 20, 32), 4);
  assert.equal(readerCount(3, 0, 1), 3, 'as asked');
});

test('a standing helper warms up one round a task until it is asked for anything; a trap in the warm-up, or a module that could not be set up, breaks it', async () => {
  const rounds = [];
  const replies = [];
  const work = {
    read: (_, ticket) => new Uint8Array(ticket.size),
    warmUp: (_, round, path, log) => rounds.push({ round, path, log }),
  };
  const serve = serveHelper(async () => ({}), work, (message) => replies.push(message));
  const log = new Uint8Array([1, 2, 3]);
  const warming = serve({ warmUp: log });
  await pause();
  await pause();
  assert.ok(rounds.length > 0 && rounds.length < 32, `${rounds.length} rounds before the read: one a task`);
  assert.deepEqual(rounds.map((r) => r.round), rounds.map((_, i) => i), 'rounds in order');
  assert.ok(rounds.every((r) => r.log === log && r.path.endsWith('/session.jsonl.zstd')));
  const before = rounds.length;
  await serve({ id: 0, ticket: { size: 4 }, bytes: new Uint8Array(1) });
  await warming;
  assert.ok(rounds.length <= before + 1, `${rounds.length - before} rounds after the read: at most the one under way`);
  assert.equal(replies[0].result.byteLength, 4, 'the read is answered');

  // Left alone, the warm-up runs every round; a trap in one ends it and every later request.
  const trapping = { ...work, warmUp: (_, round) => { if (round === 2) throw new RangeError('unreachable'); rounds.push(round); } };
  const broken = serveHelper(async () => ({}), trapping, (message) => replies.push(message));
  rounds.length = 0;
  await broken({ warmUp: log });
  assert.deepEqual(rounds, [0, 1], 'the warm-up stops at the trap');
  await broken({ id: 1, ticket: { size: 4 }, bytes: new Uint8Array(1) });
  assert.equal(replies.at(-1).result, null, 'an instance that trapped reads nothing more');

  // A coded error (the warm-up log refused) only ends the warm-up.
  const refusing = { ...work, warmUp: () => { throw Object.assign(new Error('refused'), { code: 'SESSION_LOAD_PARSE' }); } };
  const cold = serveHelper(async () => ({}), refusing, (message) => replies.push(message));
  await cold({ warmUp: log });
  await cold({ id: 2, ticket: { size: 4 }, bytes: new Uint8Array(1) });
  assert.equal(replies.at(-1).result.byteLength, 4, 'a helper whose warm-up failed still reads');

  const full = [];
  const idle = serveHelper(async () => ({}), { ...work, warmUp: (_, round) => full.push(round) }, () => {});
  await idle({ warmUp: log });
  assert.equal(full.length, 32, 'an idle helper runs all 32 rounds');

  // A module that could not be set up: the warm-up ends quietly, and the helper reads nothing.
  const unready = serveHelper(() => Promise.reject(new Error('no module')), work, (message) => replies.push(message));
  await unready({ warmUp: log });
  await unready({ id: 3, ticket: { size: 4 }, bytes: new Uint8Array(1) });
  assert.equal(replies.at(-1).result, null);
});

test('archives created keep as many helpers standing by as the last asked for, starting only those missing, each warmed up once', async () => {
  const started = [];
  const readers = {
    cores: () => 4,
    spawn() {
      const posted = [];
      const helper = helperOver({ postMessage: (message) => posted.push(message) }, () => {}, () => {});
      started.push(posted);
      return helper;
    },
  };
  const module = { WasmArchive: class { call() {} free() {} } };
  const { SessionArchive } = createApi(() => module, readers, () => new Uint8Array([7]));
  const warmUps = () => started.map((posted) => posted.filter((message) => message.warmUp !== undefined).length);
  await SessionArchive.create({ readers: 1 });
  assert.equal(started.length, 1);
  await SessionArchive.create({ readers: 3 });
  assert.equal(started.length, 3, 'two more, beside the one standing');
  await SessionArchive.create();
  assert.equal(started.length, 3, 'the default (one less than the cores) stands by already');
  await SessionArchive.create({ readers: 0 });
  assert.equal(started.length, 3);
  await pause();
  assert.deepEqual(warmUps(), [1, 1, 1], 'each warmed up once');
});

test('a build takes the helpers standing by even where no more can be started', async () => {
  let spawns = 0;
  const readers = {
    cores: () => 4,
    spawn() {
      // The first worker starts (at create); later ones are refused, as a policy might.
      if (spawns++ > 0) throw new Error('workers refused');
      return helperOver({ postMessage() {} }, () => {}, () => {});
    },
  };
  const slotsAsked = [];
  const steps = [
    { done: false, sessionsDone: 0, sessionsTotal: 1, eventsDone: 0, eventsTotal: 50_000 },
    { done: true, sessionsDone: 1, sessionsTotal: 1, eventsDone: 50_000, eventsTotal: 50_000 },
  ];
  const module = {
    WasmArchive: class {
      call() {}
      free() {}
      indexReclaimJobs() {}
      indexTakeJob() {}
      indexStep(_, slots) {
        slotsAsked.push(slots);
        return JSON.stringify(steps[slotsAsked.length - 1]);
      }
    },
  };
  const { SessionArchive } = createApi(() => module, readers, null);
  const archive = await SessionArchive.create({ readers: 1 });
  const shown = await archive.buildIndex({ builders: 3 });
  assert.equal(shown.done, true);
  assert.equal(spawns, 2, 'one started at create, one refused for the build');
  assert.ok(slotsAsked[1] > 0, `the build's second step has the standing helper's slots (${slotsAsked})`);
});
