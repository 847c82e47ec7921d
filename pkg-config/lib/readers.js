// Parallel reads of a load's logs: helper workers, each with its own instance of the module,
// read logs ahead of the load (decompress, parse, validate) and hand back what they read; the
// archive's instance adopts each in the load's order. While the log it needs next is still in
// a helper's hands, the archive's thread reads the next unclaimed log itself (into the load,
// which keeps it until it gets there) instead of waiting. Any read that fails or is refused
// is read again by the load itself, which then reports it exactly as a load without helpers
// does. Whatever this thread reads, it asks for the bytes a little ahead (see Prefetch).

import { REPORT_EVERY_MS, settlesWithin, yieldToEventLoop } from './tasks.js';

/** Logs a load must hold in all before helpers are worth starting (their start costs ~0.1 s). */
export const PARALLEL_LOAD_BYTES = 16 << 20;
/** Helpers a load starts at most. */
const MAX_READERS = 4;
/**
 * Logs at least this large are never read ahead in the load's own thread, where a read is one
 * uninterruptible call: the load reads such a log in two steps, so progress is never held up.
 */
const READ_HERE_BYTES = 1 << 20;
/**
 * How far ahead of the load a helper's next log is chosen (the largest of so many). Over the
 * 100k bench corpus in Node, a first load took 530-583 ms with 8 (five runs) against
 * 634-664 ms with 1 (the next log), 621-653 ms with 4, 571-579 ms with 16 and 620-631 ms
 * with 64 (two runs each).
 */
const HELPER_WINDOW = 8;

/**
 * Logs whose bytes are asked for ahead of this thread's reads. A Blob's bytes (a dropped
 * file's) arrive asynchronously, 1-10 ms a log in Chromium; asked for before the load's next
 * step, which holds this thread for one log's read, they are there when it ends. Over the 100k
 * bench corpus in Chromium, this thread's waits for bytes fell from 61-106 ms to 9-23 ms a
 * load (timelines of four loads with, four without), at 1M from 0.76 s to 0.02 s (one each).
 */
const PREFETCH_LOGS = 2;

/**
 * Inputs' bytes asked for a little ahead of their use: `start(entry)` asks for them,
 * `take(entry)` resolves to them (asking now if nobody did), `drop(entry)` forgets a read
 * that another thread will make. `read(entry)` gives a promise of one input's bytes; inputs
 * already in memory are not worth asking for ahead (`worthIt(entry)` false).
 */
export class Prefetch {
  #reads = new Map();
  #read;
  #worthIt;

  constructor(read, worthIt) {
    this.#read = read;
    this.#worthIt = worthIt;
  }

  start(entry) {
    if (entry === undefined || this.#reads.has(entry) || !this.#worthIt(entry)) return;
    const read = this.#read(entry);
    // A read that fails is reported by whoever takes it; until then it is not unhandled.
    read.catch(() => {});
    this.#reads.set(entry, read);
  }

  take(entry) {
    const read = this.#reads.get(entry);
    this.#reads.delete(entry);
    return read ?? this.#read(entry);
  }

  drop(entry) {
    this.#reads.delete(entry);
  }

  clear() {
    this.#reads.clear();
  }
}

/** How many helpers a load of `bytes` starts: `requested`, or one less than the cores. */
export function readerCount(requested, bytes, cores) {
  if (requested !== undefined) return requested;
  if (bytes < PARALLEL_LOAD_BYTES) return 0;
  return Math.max(0, Math.min(MAX_READERS, (cores || 1) - 1));
}

/**
 * The warm-up's rounds (`SessionArchive.warmUp`, and a standing helper's) and where its log
 * sits (a dropped folder's path: the log's header agrees). Over the 100k bench corpus in Node
 * (one thread, V8's compiles counted), a load after 32 rounds took 15% fewer instructions
 * than a first load.
 */
export const WARM_UP_ROUNDS = 32;
export const WARM_UP_PATH = 'warm-up/--srv-build-web-ui--/9c1df3f9-1bdf-47ac-a5ff-26699fb617d7/session.jsonl.zstd';

/**
 * A helper over a worker (anything with `postMessage`): `subscribe(onMessage, onError)` wires
 * its replies and failures, `close()` ends it. `read(ticket, bytes)` resolves to what it read,
 * `build(job)` to the index segment it built, or null when it could not (every request
 * resolves null once the worker has failed). `recycle(buffer)` hands the buffer of a read
 * back (moved, not copied) once its bytes are adopted, for the helper's next read to fill.
 * `warmUp(log)` has a helper not yet given work warm the engine up over `log` meanwhile.
 * `hold(held)`, where the runtime lets a worker keep its process alive (Node), says whether
 * this one should: a helper standing by must not keep a finished script running.
 */
export function helperOver(worker, subscribe, close, hold = () => {}) {
  const pending = new Map();
  let next = 0;
  let failed = false;
  const failAll = () => {
    failed = true;
    for (const resolve of pending.values()) resolve(null);
    pending.clear();
  };
  subscribe(
    ({ id, result }) => {
      pending.get(id)?.(result instanceof Uint8Array ? result : null);
      pending.delete(id);
    },
    failAll,
  );
  const request = (message) => {
    if (failed) return Promise.resolve(null);
    const id = next++;
    return new Promise((resolve) => {
      pending.set(id, resolve);
      worker.postMessage({ id, ...message }, message.job === undefined ? [] : [message.job.buffer]);
    });
  };
  return {
    read: (ticket, bytes) => request({ ticket, bytes }),
    build: (job) => request({ job }),
    recycle(buffer) {
      if (!failed) worker.postMessage({ spare: buffer }, [buffer]);
    },
    warmUp(log) {
      if (!failed) worker.postMessage({ warmUp: log });
    },
    hold,
    close() {
      failAll();
      close();
    },
  };
}

/** Buffers a helper keeps for its next reads, at most (a helper has at most three reads out). */
const SPARE_BUFFERS = 3;

/**
 * The body of a helper worker: answers `{id, ticket, bytes}` (a log to read) and `{id, job}`
 * (an index segment to build) with `{id, result}`, null on failure, keeps `{spare}` buffers
 * handed back for its next reads, and on `{warmUp: log}` runs the warm-up's rounds over `log`,
 * one a task, until it is asked for anything. `work` is `{read(module, ticket, bytes, spare),
 * build(module, job), warmUp(module, round, path, log)}`; `read` fills `spare` (the largest
 * kept) when what it read fits.
 */
export function serveHelper(ready, work, reply) {
  let broken = false;
  let asked = false;
  const spares = [];
  const isTrap = (error) => !(error && typeof error === 'object' && 'code' in error);
  async function warmUp(log) {
    let module;
    try {
      module = await ready();
    } catch (error) {
      // As a read that found the module failed: nothing more from this instance.
      broken = isTrap(error);
      return;
    }
    for (let round = 0; round < WARM_UP_ROUNDS && !asked && !broken; round++) {
      try {
        work.warmUp(module, round, WARM_UP_PATH, log);
      } catch (error) {
        // A warm-up that fails only leaves the code cold; a trap leaves the instance unusable.
        broken = isTrap(error);
        return;
      }
      // Lets a request that arrived meanwhile in (it stops the warm-up).
      await yieldToEventLoop();
    }
  }
  return async ({ id, ticket, bytes, job, spare, warmUp: log }) => {
    if (log !== undefined) return warmUp(log);
    if (spare !== undefined) {
      spares.push(spare);
      spares.sort((a, b) => b.byteLength - a.byteLength);
      spares.length = Math.min(spares.length, SPARE_BUFFERS);
      return;
    }
    asked = true;
    let result = null;
    try {
      const module = await ready();
      if (broken) {
        // Nothing more from an instance that trapped.
      } else if (job !== undefined) {
        result = work.build(module, job);
      } else {
        const input = bytes instanceof Uint8Array ? bytes : new Uint8Array(await bytes.arrayBuffer());
        result = work.read(module, ticket, input, spares[0]);
        if (result.buffer === spares[0]) spares.shift();
      }
    } catch (error) {
      // A coded error is the request's (the archive does that work itself and reports what
      // fails); anything else (a trap) leaves this instance unusable.
      if (isTrap(error)) broken = true;
    }
    reply({ id, result }, result === null ? [] : [result.buffer]);
  };
}

/**
 * The logs of one load being read ahead: `take(entry)` resolves to what a helper (or this
 * thread, reading ahead while it waited) read of the log the load needs next, or null when
 * it should read the log itself.
 */
export class ReadAhead {
  #queue;
  #helpers;
  /** Reads each helper has been sent and not yet answered. */
  #underway;
  #reads = new Map();
  /** The helper that made each read taken and not yet released. */
  #madeBy = new WeakMap();
  /** Reads of `#reads` a helper was given (under way or unclaimed). */
  #byHelpers = 0;
  #ticket;
  #bytes;
  #size;
  #readHere;
  #prefetch;
  /** Entries read ahead (not yet taken) whose bytes and log `aheadDone` counts. */
  #counted = new Set();
  #doneBytes = 0;
  #doneLogs = 0;

  /**
   * `ahead`: entry numbers in the load's order; `ticket(entry)`, `bytes(entry)` and
   * `size(entry)` give what a read needs; `readHere(entry, bytes)` reads one log in this
   * thread (null on failure; what it returns otherwise is taken as a helper's read is);
   * `prefetch` (a Prefetch) gives this thread's reads their bytes, and is told which logs
   * this thread is likely to read next.
   */
  constructor({ ahead, helpers, ticket, bytes, size, readHere, prefetch }) {
    this.#queue = [...ahead];
    this.#helpers = helpers;
    this.#underway = new Map(helpers.map((helper) => [helper, 0]));
    this.#ticket = ticket;
    this.#bytes = bytes;
    this.#size = size;
    this.#readHere = readHere;
    this.#prefetch = prefetch;
    this.#dispatch();
    this.#prefetchNext();
  }

  /**
   * Hands helpers the next logs, two at a time each (so one waits at the helper while it reads
   * the other: this thread may be busy when a reply arrives), with at most three reads a helper
   * under way or unclaimed.
   */
  #dispatch() {
    for (;;) {
      const helper = this.#helpers.find((h) => this.#underway.get(h) < 2);
      if (helper === undefined || this.#queue.length === 0 || this.#byHelpers >= 3 * this.#helpers.length) return;
      const entry = this.#takeForHelper();
      const read = { done: false, value: null, byHelper: true };
      this.#byHelpers++;
      this.#underway.set(helper, this.#underway.get(helper) + 1);
      read.promise = Promise.resolve()
        .then(() => helper.read(this.#ticket(entry), this.#bytes(entry)))
        .catch(() => null)
        .then((value) => {
          if (value !== null) this.#madeBy.set(value, helper);
          Object.assign(read, { done: true, value });
          if (this.#reads.get(entry) === read) this.#noteDone(entry, value);
          this.#underway.set(helper, this.#underway.get(helper) - 1);
          this.#dispatch();
          return value;
        });
      this.#reads.set(entry, read);
    }
  }

  /**
   * The largest of the next HELPER_WINDOW logs, taken off the queue: a helper's read costs
   * this thread only its adoption, and this thread never reads a large log ahead, so large
   * logs go to helpers first, and none of them is left to a helper when the load is nearly
   * done (it would wait for it).
   */
  #takeForHelper() {
    const window = Math.min(this.#queue.length, HELPER_WINDOW);
    let at = 0;
    for (let i = 1; i < window; i++) if (this.#size(this.#queue[i]) > this.#size(this.#queue[at])) at = i;
    const [entry] = this.#queue.splice(at, 1);
    this.#prefetch.drop(entry);
    return entry;
  }

  /**
   * What was read of `entry`, the log the load needs next: `{read}` (null: read it yourself),
   * or `{pending: true}` once this thread has read one log ahead, or waited REPORT_EVERY_MS,
   * while a helper still reads `entry` (the caller reports progress and asks again).
   */
  async take(entry) {
    const read = this.#reads.get(entry);
    if (read === undefined) {
      const at = this.#queue.indexOf(entry);
      if (at >= 0) this.#queue.splice(at, 1);
      this.#prefetchNext();
      return { read: null };
    }
    if (!read.done && (await this.#readOneHere())) return { pending: true };
    if (!read.done && !(await settlesWithin(read.promise, REPORT_EVERY_MS))) return { pending: true };
    this.#reads.delete(entry);
    if (read.byHelper) this.#byHelpers--;
    const value = await read.promise;
    this.#forget(entry);
    this.#dispatch();
    this.#prefetchNext();
    return { read: value };
  }

  /**
   * Asks for the bytes of the logs this thread reads next if no helper takes them first: the
   * next unclaimed ones (the load's next needs) and the next small enough to read here.
   */
  #prefetchNext() {
    for (const entry of this.#queue.slice(0, PREFETCH_LOGS)) this.#prefetch.start(entry);
    this.#prefetch.start(this.#queue.find((entry) => this.#size(entry) < READ_HERE_BYTES));
  }

  /**
   * Reads the next unclaimed log small enough to read in one short call (a large one is left
   * to a helper, or to the load's own reads in two steps); `false` when there is none.
   */
  async #readOneHere() {
    const at = this.#queue.findIndex((entry) => this.#size(entry) < READ_HERE_BYTES);
    if (at < 0) return false;
    const [entry] = this.#queue.splice(at, 1);
    let bytes = null;
    try {
      bytes = await this.#prefetch.take(entry);
    } catch {
      // Bytes that cannot be read are the load's to report, when it gets to the log.
    }
    this.#prefetchNext();
    const value = bytes === null ? null : this.#readHere(entry, bytes);
    this.#reads.set(entry, { done: true, value, promise: Promise.resolve(value) });
    this.#noteDone(entry, value);
    return true;
  }

  /** Hands the buffer of a helper's read, once the load is done with it, back to that helper. */
  release(read) {
    const helper = this.#madeBy.get(read);
    if (helper === undefined) return;
    this.#madeBy.delete(read);
    helper.recycle(read.buffer);
  }

  /** Declared bytes and logs read ahead and not yet taken: progress the load has not counted. */
  aheadDone() {
    return { bytes: this.#doneBytes, logs: this.#doneLogs };
  }

  #noteDone(entry, value) {
    if (value === null) return;
    this.#counted.add(entry);
    this.#doneBytes += this.#size(entry);
    this.#doneLogs++;
  }

  #forget(entry) {
    if (!this.#counted.delete(entry)) return;
    this.#doneBytes -= this.#size(entry);
    this.#doneLogs--;
  }

  close() {
    for (const helper of this.#helpers) helper.close();
    this.#reads.clear();
    this.#prefetch.clear();
  }
}
