// The public API over the raw wasm exports, shared by every runtime's entry: JS values in,
// JSON text across the boundary, JS values out, coded errors only. An entry gives `createApi`
// a function that returns the initialised raw module (or a Promise of it).

import { PARALLEL_LOAD_BYTES, Prefetch, ReadAhead, WARM_UP_PATH, WARM_UP_ROUNDS, readerCount } from './readers.js';
import { REPORT_EVERY_MS, settlesWithin, yieldToEventLoop } from './tasks.js';
import { SegmentBuilders, builderCount } from './segments.js';
import {
  SessionArgumentError,
  SessionInternalError,
  SessionLoadError,
  SessionQueryError,
  SessionReferenceError,
  argumentError,
  fromRaw,
  sessionError,
} from './errors.js';

const MAX_VALUE_DEPTH = 512;

/** What a load's own read ahead of it stands for: the archive's instance holds the log. */
const READ_HERE = Symbol('read here');

/** The corpus-free reference functions. */
const STATIC_METHODS = [
  'encodeSessionReferenceUri',
  'decodeSessionReferenceUri',
  'formatSessionReferenceMention',
  'parseSessionReferenceText',
];

/** Checks that `value` is what JSON carries unchanged; throws SESSION_INVALID_ARGUMENT. */
function checkJsonValue(value, where, seen = new Set(), depth = 0) {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw argumentError(`${where} must be a finite number, not ${value}`);
    return;
  }
  if (typeof value !== 'object') throw argumentError(`${where} cannot be a ${typeof value}`);
  if (depth > MAX_VALUE_DEPTH) throw argumentError(`${where} is nested deeper than ${MAX_VALUE_DEPTH}`);
  if (seen.has(value)) throw argumentError(`${where} contains a cycle`);
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (value[i] === undefined) throw argumentError(`${where}[${i}] is undefined`);
      checkJsonValue(value[i], `${where}[${i}]`, seen, depth + 1);
    }
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      const kind = value.constructor && value.constructor.name || 'object';
      throw argumentError(`${where} must be a plain object or array, not ${kind}`);
    }
    for (const key of Object.keys(value)) {
      if (value[key] !== undefined) checkJsonValue(value[key], `${where}.${key}`, seen, depth + 1);
    }
  }
  seen.delete(value);
}

/** Positional params as JSON text: trailing `undefined`s dropped, inner ones `null`. */
function paramsJson(method, args) {
  let end = args.length;
  while (end > 0 && args[end - 1] === undefined) end--;
  const params = [];
  for (let i = 0; i < end; i++) {
    const arg = args[i] === undefined ? null : args[i];
    checkJsonValue(arg, `${method} parameter ${i}`);
    params.push(arg);
  }
  return JSON.stringify(params);
}

function checkOptionsObject(options, where) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw argumentError(`${where} must be an object`);
  }
  return options;
}

function checkSignal(signal, where) {
  if (signal === undefined) return undefined;
  if (signal === null || typeof signal !== 'object' || typeof signal.aborted !== 'boolean') {
    throw argumentError(`${where}.signal must be an AbortSignal`);
  }
  return signal;
}

/** A count of helper workers (`readers`, `builders`). */
function checkHelperCount(count, where) {
  if (!(Number.isSafeInteger(count) && count >= 0)) throw argumentError(`${where} must be a non-negative integer`);
}

function checkFunction(fn, where) {
  if (fn !== undefined && typeof fn !== 'function') throw argumentError(`${where} must be a function`);
  return fn;
}

/** A wasm trap or any uncoded throw: the module's memory can no longer be trusted. */
function internalError(error) {
  const message = error && typeof error.message === 'string' ? error.message : String(error);
  return new SessionInternalError('SESSION_INTERNAL', `the wasm module failed: ${message}`, { cause: error });
}

/** Bytes of one load input or import as a Uint8Array; Blobs (and Files) are read. */
async function bytesOf(value, where) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (typeof Blob !== 'undefined' && value instanceof Blob) return new Uint8Array(await value.arrayBuffer());
  const kind = value === null ? 'null' : typeof value === 'object' ? value.constructor && value.constructor.name || 'object' : typeof value;
  throw argumentError(`${where} must be a Uint8Array, ArrayBuffer, Blob or File, not ${kind}`);
}

/** An input's bytes as a worker is sent them: a view of part of a buffer is copied alone. */
function postable(bytes) {
  if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes);
  if (bytes instanceof Uint8Array && (bytes.byteOffset !== 0 || bytes.byteLength !== bytes.buffer.byteLength)) return bytes.slice();
  return bytes;
}

/** Bytes the wasm side asks for when only an entry's first bytes tell a ZIP (HEAD_BYTES there). */
const HEAD_BYTES = 4;

/** The size of one input's bytes, known without reading them. */
function sizeOf(value) {
  return isBlob(value) ? value.size : value.byteLength;
}

/** The first bytes of one input (of a Blob, a slice that size is read). */
async function headOf(value) {
  if (isBlob(value)) return new Uint8Array(await value.slice(0, HEAD_BYTES).arrayBuffer());
  return (value instanceof Uint8Array ? value : new Uint8Array(value)).subarray(0, HEAD_BYTES);
}

function isBlob(value) {
  return typeof Blob !== 'undefined' && value instanceof Blob;
}

/** Load inputs as `[{path, bytes}]` in the caller's order; bytes not yet read. */
function normaliseInputs(inputs) {
  const list = isBlob(inputs) ? [inputs] : inputs;
  if (!Array.isArray(list)) throw argumentError('load inputs must be an array of {path, bytes} or Files');
  return list.map((input, i) => {
    const where = `load inputs[${i}]`;
    if (isBlob(input)) {
      const path = input.webkitRelativePath || input.name;
      if (typeof path !== 'string' || path === '') throw argumentError(`${where} is a Blob without a name; pass {path, bytes}`);
      return { path, bytes: input };
    }
    if (input === null || typeof input !== 'object') throw argumentError(`${where} must be {path, bytes} or a File`);
    for (const key of Object.keys(input)) {
      if (key !== 'path' && key !== 'bytes') throw argumentError(`${where} has an unknown key ${JSON.stringify(key)}`);
    }
    if (typeof input.path !== 'string' || input.path === '') throw argumentError(`${where}.path must be a non-empty string`);
    const bytes = input.bytes;
    if (!(bytes instanceof Uint8Array || bytes instanceof ArrayBuffer || isBlob(bytes))) {
      const kind = bytes === null ? 'null' : typeof bytes === 'object' ? bytes.constructor && bytes.constructor.name || 'object' : typeof bytes;
      throw argumentError(`${where}.bytes must be a Uint8Array, ArrayBuffer, Blob or File, not ${kind}`);
    }
    return { path: input.path.replace(/\\/g, '/'), bytes };
  });
}

/** Reads of a lazy source kept in flight (a fetch-backed store answers in round trips). */
const SOURCE_READS_IN_FLIGHT = 8;
/** Logs of listed sessions loaded together: few loads, little held at once. */
const BRING_IN_BATCH_BYTES = 1 << 20;
const BRING_IN_BATCH_LOGS = 256;

/**
 * Runs `read(item)` over `items` with up to `width` reads in flight; yields `{item, value}` or
 * `{item, error}` in the items' order (a read's failure is its item's, never a rejection).
 */
async function* readAhead(items, read, width) {
  const pending = [];
  let next = 0;
  const start = (item) => Promise.resolve().then(() => read(item)).then((value) => ({ item, value }), (error) => ({ item, error }));
  while (next < items.length && pending.length < width) pending.push(start(items[next++]));
  while (pending.length > 0) {
    const settled = await pending.shift();
    if (next < items.length) pending.push(start(items[next++]));
    yield settled;
  }
}

/** A log's bytes for its header: its prefix when the source reads ranges and the log is not small. */
async function readForListing(source, log) {
  if (source.readPrefix !== undefined && !(log.size !== undefined && log.size <= SOURCE_PREFIX_BYTES)) {
    const prefix = await source.readPrefix(log.path, SOURCE_PREFIX_BYTES);
    return { bytes: await sourceBytes(prefix, `source.readPrefix(${JSON.stringify(log.path)})`), whole: false };
  }
  return { bytes: await sourceBytes(await source.read(log.path), `source.read(${JSON.stringify(log.path)})`), whole: true };
}

/** Bytes of a log's start that `source.readPrefix` is asked for: enough for any usual header. */
const SOURCE_PREFIX_BYTES = 64 * 1024;

/** Checks a lazy source's shape: `list()` and `read(path)`, optionally `readPrefix(path, n)`. */
function checkSource(source) {
  if (source === null || typeof source !== 'object') {
    throw argumentError('SessionArchive.create options.source must be an object with list() and read(path)');
  }
  for (const name of ['list', 'read']) {
    if (typeof source[name] !== 'function') throw argumentError(`SessionArchive.create options.source.${name} must be a function`);
  }
  if (source.readPrefix !== undefined && typeof source.readPrefix !== 'function') {
    throw argumentError('SessionArchive.create options.source.readPrefix must be a function when given');
  }
  return source;
}

/** What `source.list()` gave, checked: `[{path, size?}]`, paths unique. */
function checkListing(listing) {
  if (!Array.isArray(listing)) throw argumentError('source.list() must give an array of {path, size?}');
  const seen = new Set();
  return listing.map((entry, i) => {
    const where = `source.list()[${i}]`;
    if (entry === null || typeof entry !== 'object') throw argumentError(`${where} must be {path, size?}`);
    if (typeof entry.path !== 'string' || entry.path === '') throw argumentError(`${where}.path must be a non-empty string`);
    if (entry.size !== undefined && !(Number.isSafeInteger(entry.size) && entry.size >= 0)) {
      throw argumentError(`${where}.size must be a non-negative integer when given`);
    }
    const key = sourceKey(entry.path);
    if (seen.has(key)) throw argumentError(`${where}.path ${JSON.stringify(entry.path)} is listed twice`);
    seen.add(key);
    return { path: entry.path, key, size: entry.size };
  });
}

/** A source path as the wasm side names it: `/` separators, no leading `/`. */
function sourceKey(path) {
  return path.replace(/\\/g, '/').replace(/^\/+/, '');
}

/** Bytes a source gave: a Uint8Array, ArrayBuffer, Blob, or anything with `arrayBuffer()` (a
 * Response, an R2 object body). Anything else is that log's read failure. */
async function sourceBytes(value, what) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (value !== null && typeof value === 'object' && typeof value.arrayBuffer === 'function') {
    return new Uint8Array(await value.arrayBuffer());
  }
  throw new Error(`${what} gave ${value === null ? 'null' : typeof value}, not bytes`);
}

function messageOf(error) {
  return error && typeof error.message === 'string' ? error.message : String(error);
}

/** A log the source could not give, as a load reports a failed file. */
function sourceFailure(key, message, sessionId) {
  const slash = key.indexOf('/');
  const failure = slash < 0 ? { input: key, path: '' } : { input: key.slice(0, slash), path: key };
  if (sessionId !== undefined) failure.sessionId = sessionId;
  return { ...failure, code: 'SESSION_LOAD_IO', message };
}

/** The session ids a call's arguments name, for the methods that read named sessions. */
const NAMED_SESSIONS = {
  readSession: (args) => [args[0]],
  listEvents: (args) => [args[0]],
  readSurface: (args) => [args[0]],
  readEvent: (args) => [args[0] !== null && typeof args[0] === 'object' ? args[0].sessionId : undefined],
  traceEvent: (args) => [args[0] !== null && typeof args[0] === 'object' ? args[0].sessionId : undefined],
  // Lineage comes from the listing's headers alone.
  traceSession: () => [],
  readTitle: (args) => [args[0]],
  readTitleSnapshots: (args) => (Array.isArray(args[0]) ? args[0] : []),
  filterEvents: (args) => [args[0]],
  listDocuments: (args) => [args[0]],
  addLive: (args) => [args[0] !== null && typeof args[0] === 'object' ? args[0].id : undefined],
  appendLive: (args) => [args[0]],
};

/** `prepare` reads at most this many distinct sources (`maxReferences` is 1 to 3). */
const MAX_PREPARE_SOURCES = 3;

/** The distinct session ids a prepare's references cite. */
function citedSessions(references) {
  if (!Array.isArray(references)) return [];
  const ids = references.map((r) => (r !== null && typeof r === 'object' ? r.sessionId : undefined));
  return [...new Set(ids.filter((id) => typeof id === 'string'))];
}

/**
 * A method's answer kept as the JSON text the module wrote, for an archive that answers a
 * worker's page ({@link answerInText}): posting text to the page costs one copy, where the parsed
 * answer costs this thread a parse and both threads a structured clone of every item (for a
 * page of hits, 0.15-0.3 ms in Chromium here, on top of a round trip of 0.12-0.3 ms that
 * carries nothing). The page parses it instead.
 */
export class ResultText {
  constructor(text) {
    this.text = text;
  }
}

/**
 * The longest answer passed on as text, in UTF-16 units (64 Ki, well under a millisecond to
 * parse). A longer one is parsed here, so the worker can send its items in parts the page
 * takes in short tasks.
 */
const RESULT_TEXT_MAX = 64 * 1024;

/** Archives whose method answers are {@link ResultText}s where short enough. */
const answersInText = new WeakSet();

/** Makes `archive`'s methods answer in JSON text (worker/worker.js): see {@link ResultText}. */
export function answerInText(archive) {
  answersInText.add(archive);
}

/** Methods that look at every session (titles, the index): a lazy source is read whole first. */
const EVERY_SESSION = new Set(['searchSessions', 'searchEvents', 'listCandidates']);

const LOAD_OPTION_KEYS = new Set(['strict', 'signal', 'onProgress', 'readers']);
const BUILD_OPTION_KEYS = new Set(['signal', 'onProgress', 'stepBytes', 'builders']);
/** Document text one index step reads: tens of milliseconds of wasm work between reports. */
const INDEX_STEP_BYTES = 256 * 1024;
/**
 * `loadRaw` returns the initialised raw module (or a Promise of it); `readers`, where the
 * runtime has workers, is `{cores(), spawn()}`: a helper that reads logs in parallel;
 * `warmUpLog`, where the runtime can read the package's files, returns (a Promise of) the
 * warm-up log's bytes.
 */
export function createApi(loadRaw, readers = null, warmUpLog = null) {
  let rawPromise;
  let broken = null;
  let warmUpPromise;

  /** The warm-up log's bytes, read once (`warmUpLog()`); asked for again after a failure. */
  function warmUpBytes() {
    warmUpPromise ??= Promise.resolve()
      .then(warmUpLog)
      .then((bytes) => new Uint8Array(bytes))
      .catch((error) => {
        warmUpPromise = undefined;
        throw new SessionInternalError('SESSION_INTERNAL', `the warm-up log could not be read: ${messageOf(error)}`, { cause: error });
      });
    return warmUpPromise;
  }

  function raw() {
    if (rawPromise === undefined) {
      rawPromise = Promise.resolve().then(loadRaw).catch((error) => {
        rawPromise = undefined;
        throw internalError(error);
      });
    }
    return rawPromise;
  }

  /** Helpers started before any load or build asked for them (`standBy`), idle until one takes them (`takeHelpers`). */
  const standing = [];

  /**
   * `count` new helper workers, or null when they cannot be started here after all (a
   * sandbox, a policy), and the work is done in this thread alone.
   */
  function startHelpers(count) {
    const helpers = [];
    try {
      while (helpers.length < count) helpers.push(readers.spawn());
    } catch {
      for (const helper of helpers) helper.close();
      return null;
    }
    return helpers;
  }

  /**
   * `count` helper workers for a load or build, those standing by first, or null when there
   * are none: none asked for, or none could be started.
   */
  function takeHelpers(count) {
    if (count === 0) return null;
    const taken = standing.splice(0, count);
    for (const helper of taken) helper.hold(true);
    // Those standing by still work where more cannot be started.
    const helpers = [...taken, ...(startHelpers(count - taken.length) ?? [])];
    return helpers.length === 0 ? null : helpers;
  }

  /**
   * Has `requested` helpers stand by (default: as many as a large load starts), starting
   * those missing, so that a load (or build) asked for later neither waits for their start
   * (50-100 ms) nor runs its first part on unoptimised code: meanwhile each new one warms the
   * engine's code up in its own thread (the engine shares optimised code among a module's
   * instances). Over the 100k bench corpus a first load took 303-328 ms in a Chromium worker
   * against 398-403 (three alternating runs each), 272-291 ms in Node against 320-392 (four).
   * The next load or build takes them; the next archive created starts others.
   */
  function standBy(requested) {
    if (readers === null) return;
    const count = readerCount(requested, PARALLEL_LOAD_BYTES, readers.cores()) - standing.length;
    if (count <= 0) return;
    const helpers = startHelpers(count) ?? [];
    for (const helper of helpers) helper.hold(false);
    standing.push(...helpers);
    if (warmUpLog === null || helpers.length === 0) return;
    warmUpBytes().then(
      (log) => {
        for (const helper of helpers) helper.warmUp(log);
      },
      // Without its log a helper only stands by.
      () => {},
    );
  }

  /** Runs one synchronous raw call; coded errors become the package's, traps poison the module. */
  function guard(fn) {
    if (broken) throw new SessionInternalError('SESSION_INTERNAL', `the wasm module failed earlier (${broken.message}); create a new page, worker or process`);
    try {
      return fn();
    } catch (error) {
      const coded = fromRaw(error);
      if (coded) throw coded;
      broken = internalError(error);
      throw broken;
    }
  }

  async function callStatic(method, args) {
    const json = paramsJson(method, args);
    const module = await raw();
    return JSON.parse(guard(() => module.callStatic(method, json)));
  }

  class SessionArchive {
    #handle;
    #loading = Promise.resolve();
    /** `buildIndex` calls not yet ended. */
    #building = 0;
    /** A lazy source: `{source, originals: Map(key → the source's path), report}`; else null. */
    #lazy = null;
    /** Calls that reached the module so far: a warm-up stops once anything else has. */
    #uses = 0;

    /** Use `SessionArchive.create(options)`. */
    constructor(handle) {
      if (handle === undefined || handle === null || typeof handle.call !== 'function') {
        throw argumentError('use `await SessionArchive.create(options)`');
      }
      this.#handle = handle;
    }

    static async create(options) {
      let settings = options === undefined ? {} : options;
      if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) {
        throw argumentError('SessionArchive.create options must be an object');
      }
      let source;
      if (settings.source !== undefined) {
        ({ source, ...settings } = settings);
        checkSource(source);
      }
      let readersAhead;
      if (settings.readers !== undefined) {
        ({ readers: readersAhead, ...settings } = settings);
        checkHelperCount(readersAhead, 'SessionArchive.create options.readers');
      }
      checkJsonValue(settings, 'SessionArchive.create options');
      const json = JSON.stringify(settings);
      const module = await raw();
      const archive = new SessionArchive(guard(() => new module.WasmArchive(json)));
      standBy(readersAhead);
      if (source === undefined) return archive;
      try {
        await archive.#list(source);
      } catch (error) {
        archive.free();
        throw error;
      }
      return archive;
    }

    /** Lists a lazy source by its logs' headers: each log read (or its prefix), its header taken, its bytes dropped. */
    async #list(source) {
      let listing;
      try {
        listing = await source.list();
      } catch (error) {
        throw new SessionLoadError('SESSION_LOAD_IO', `source.list() failed: ${messageOf(error)}`, { cause: error });
      }
      const logs = checkListing(listing);
      const lazy = { source, originals: new Map(logs.map((l) => [l.key, l.path])), report: { sessions: [], failures: [] } };
      const failed = (log, error) => lazy.report.failures.push(sourceFailure(log.key, `${log.path}: the source's read failed: ${messageOf(error)}`));
      const handle = this.#open();
      guard(() => handle.listBegin());
      for await (const { item: log, value, error } of readAhead(logs, (log) => readForListing(source, log), SOURCE_READS_IN_FLIGHT)) {
        if (error !== undefined) {
          failed(log, error);
        } else if (!guard(() => handle.listAdd(log.key, value.bytes, value.whole))) {
          // The prefix lacked the header line: the whole log, then.
          try {
            const bytes = await sourceBytes(await source.read(log.path), `source.read(${JSON.stringify(log.path)})`);
            guard(() => handle.listAdd(log.key, bytes, true));
          } catch (error) {
            if (error instanceof SessionInternalError) throw error;
            failed(log, error);
          }
        }
      }
      const report = JSON.parse(guard(() => handle.listCommit()));
      lazy.report.sessions = report.sessions;
      lazy.report.failures.push(...report.failures);
      this.#lazy = lazy;
    }

    /** What a lazy source's listing and reads reported: `{sessions, failures}`; null without a source. */
    sourceReport() {
      if (this.#lazy === null) return null;
      const { sessions, failures } = this.#lazy.report;
      return { sessions: sessions.map((s) => ({ ...s })), failures: failures.map((f) => ({ ...f })) };
    }

    /** Before a call: brings in the listed sessions it reads (`null`: every one), queued behind loads. */
    #need(ids) {
      if (this.#lazy === null) return undefined;
      const run = this.#loading.then(() => this.#bringIn(ids));
      this.#loading = run.catch(() => {});
      return run;
    }

    async #bringIn(ids) {
      if (this.#lazy === null) return;
      const { source, originals, report } = this.#lazy;
      const handle = this.#open();
      // A number stands for its string, as DSH looks up `String(value)`.
      const wanted = ids === null ? null : ids.filter((id) => typeof id === 'string' || Number.isFinite(id)).map(String);
      const listed = JSON.parse(guard(() => handle.listedPaths(JSON.stringify(wanted))));
      const reads = listed.flatMap(({ sessionId, paths }) => paths.map((key, i) => ({ sessionId, key, last: i === paths.length - 1 })));
      const read = async ({ key }) => {
        const path = originals.get(key) ?? key;
        return sourceBytes(await source.read(path), `source.read(${JSON.stringify(path)})`);
      };
      // Sessions whose logs are all read wait in a batch of at most BRING_IN_BATCH_BYTES,
      // loaded together; a session whose read fails stays listed, its reads coded.
      let batch = [];
      let batchBytes = 0;
      let session = [];
      let sessionFailed = false;
      for await (const { item, value, error } of readAhead(reads, read, SOURCE_READS_IN_FLIGHT)) {
        this.#open();
        if (error !== undefined && !sessionFailed) {
          sessionFailed = true;
          const message = `${originals.get(item.key) ?? item.key}: the source's read failed: ${messageOf(error)}`;
          report.failures.push(sourceFailure(item.key, message, item.sessionId));
          guard(() => handle.failListed(item.sessionId, message));
        } else if (error === undefined) {
          session.push({ sessionId: item.sessionId, key: item.key, bytes: value });
        }
        if (!item.last) continue;
        if (!sessionFailed) {
          batch.push(...session);
          batchBytes += session.reduce((n, e) => n + e.bytes.length, 0);
        }
        session = [];
        sessionFailed = false;
        if (batchBytes >= BRING_IN_BATCH_BYTES || batch.length >= BRING_IN_BATCH_LOGS) {
          this.#loadListed(handle, batch);
          batch = [];
          batchBytes = 0;
        }
      }
      if (batch.length > 0) this.#loadListed(handle, batch);
    }

    /** Loads read logs of listed sessions (all of each one's); one that does not come in stays listed, its reads coded. */
    #loadListed(handle, entries) {
      guard(() => handle.loadBegin('{}'));
      let loaded;
      try {
        for (const entry of entries) guard(() => handle.loadAdd(entry.key, entry.bytes));
        loaded = JSON.parse(guard(() => handle.loadCommit()));
      } catch (error) {
        if (this.#handle === handle && !broken) guard(() => handle.loadAbort());
        throw error;
      }
      this.#lazy.report.failures.push(...loaded.failures);
      const ids = [...new Set(entries.map((e) => e.sessionId))];
      for (const { sessionId } of JSON.parse(guard(() => handle.listedPaths(JSON.stringify(ids))))) {
        guard(() => handle.failListed(sessionId, `session ${JSON.stringify(sessionId)}: its logs did not load`));
      }
    }

    #open() {
      this.#uses += 1;
      if (this.#handle === null) {
        throw new SessionArgumentError('SESSION_ARCHIVE_CLOSED', 'this SessionArchive was freed');
      }
      return this.#handle;
    }

    #needFor(method, args) {
      if (this.#lazy === null) return undefined;
      if (EVERY_SESSION.has(method)) return this.#need(null);
      return this.#need(NAMED_SESSIONS[method](args));
    }

    #call(method, args) {
      const json = paramsJson(method, args);
      const handle = this.#open();
      const text = guard(() => handle.call(method, json));
      return answersInText.has(this) && text.length <= RESULT_TEXT_MAX ? new ResultText(text) : JSON.parse(text);
    }

    /** Loads inputs; nothing becomes visible until every input is read and the load commits. */
    load(inputs, options) {
      const run = this.#loading.then(() => this.#load(inputs, options));
      this.#loading = run.catch(() => {});
      return run;
    }

    async #load(inputs, options) {
      const settings = checkOptionsObject(options, 'load options');
      for (const key of Object.keys(settings)) {
        if (!LOAD_OPTION_KEYS.has(key)) throw argumentError(`load options has an unknown key ${JSON.stringify(key)}`);
      }
      if (settings.strict !== undefined && typeof settings.strict !== 'boolean') {
        throw argumentError('load options.strict must be a boolean');
      }
      if (settings.readers !== undefined) checkHelperCount(settings.readers, 'load options.readers');
      const signal = checkSignal(settings.signal, 'load options');
      const onProgress = checkFunction(settings.onProgress, 'load options.onProgress');
      const entries = normaliseInputs(inputs);
      const handle = this.#open();
      const aborted = () => signal !== undefined && signal.aborted;
      const abortError = () => new SessionLoadError('SESSION_LOAD_ABORTED', 'the load was aborted; nothing was loaded');
      if (aborted()) throw abortError();
      guard(() => handle.loadBegin(JSON.stringify(settings.strict === undefined ? {} : { strict: settings.strict })));
      try {
        return await this.#runStagedLoad(handle, entries, aborted, abortError, onProgress, settings.readers);
      } catch (error) {
        // Whatever stopped the load (abort, a throwing onProgress, free()), nothing is published.
        if (this.#handle === handle && !broken) guard(() => handle.loadAbort());
        throw error;
      }
    }

    async #runStagedLoad(handle, entries, aborted, abortError, onProgress, requestedReaders) {
      // Stops the load after any wait: between awaits the archive may be freed or the load aborted.
      const check = () => {
        this.#open();
        if (aborted()) throw abortError();
      };
      for (const [i, entry] of entries.entries()) await this.#stage(handle, entry, `load inputs[${i}].bytes`, check);
      let ahead;
      // Without helpers: each log's successor in the load's order, whose bytes are asked for
      // while the load reads it.
      let successors = new Map();
      const prefetch = new Prefetch(
        (entry) => bytesOf(entries[entry].bytes, `load inputs[${entry}].bytes`),
        (entry) => isBlob(entries[entry].bytes),
      );
      try {
        // Logs read ahead by helpers (or here, while one waits for a helper) count as read.
        const report = (progress) => {
          if (onProgress === undefined) return;
          const done = ahead?.aheadDone() ?? { bytes: 0, logs: 0 };
          const { bytesTotal, sessionsTotal } = progress;
          onProgress({ bytesDone: progress.bytesDone + done.bytes, bytesTotal, sessionsDone: progress.sessionsDone + done.logs, sessionsTotal });
        };
        for (;;) {
          // One step is one log (the first also gathers the inputs); reporting after every step
          // keeps the gap between reports at one log's work.
          const progress = JSON.parse(guard(() => handle.loadStep()));
          report(progress);
          if (progress.done) break;
          await yieldToEventLoop();
          check();
          if (progress.need === undefined) continue;
          const key = progress.need.entry;
          // Decided once, at the first log (null: read alone).
          if (ahead === undefined) {
            const order = JSON.parse(guard(() => handle.loadAhead()));
            ahead = await this.#readAhead(handle, entries, order, requestedReaders, progress.bytesTotal, prefetch);
            if (ahead === null) successors = new Map(order.map((entry, at) => [entry, order[at + 1]]));
          }
          let taken = { read: null };
          while (ahead !== null && (taken = await ahead.take(key)).pending) {
            report(progress);
            await yieldToEventLoop();
            check();
          }
          check();
          const { read } = taken;
          const supplied = this.#supplyRead(handle, key, read);
          // The load has copied a helper's read: its buffer goes back for the helper's next
          // (`release` knows which reads a helper made, and passes over the rest).
          ahead?.release(read);
          if (!supplied) {
            const bytes = prefetch.take(key);
            prefetch.start(successors.get(key));
            await this.#supply(handle, key, bytes, check);
          }
        }
      } finally {
        ahead?.close();
        prefetch.clear();
      }
      check();
      return JSON.parse(guard(() => handle.loadCommit()));
    }

    /** Helpers reading the load's logs (`order`, its entries yet to read) ahead of it, or null when it reads them alone. */
    async #readAhead(handle, entries, order, requested, bytesTotal, prefetch) {
      const count = readers === null ? 0 : readerCount(requested, bytesTotal, readers.cores());
      const helpers = takeHelpers(count);
      if (helpers === null) return null;
      // The load keeps what this thread reads ahead (READ_HERE) until it needs it; a read that
      // fails is read again when the load gets there, which reports the failure.
      const readHere = (entry, bytes) => {
        try {
          return guard(() => handle.loadReadAhead(entry, bytes)) ? READ_HERE : null;
        } catch (error) {
          if (error instanceof SessionInternalError) throw error;
          return null;
        }
      };
      return new ReadAhead({
        ahead: order,
        helpers,
        ticket: (entry) => guard(() => handle.loadTicket(entry)),
        bytes: (entry) => postable(entries[entry].bytes),
        size: (entry) => sizeOf(entries[entry].bytes),
        readHere,
        prefetch,
      });
    }

    /** Hands the load a read of the log it needs (a helper's, or READ_HERE); false: refused or none. */
    #supplyRead(handle, key, read) {
      if (read === null) return false;
      return guard(() => (read === READ_HERE ? handle.loadSupplyReadAhead(key) : handle.loadSupplyRead(key, read)));
    }

    /**
     * Offers one input to the staged load by its path and size: its bytes stay where they are
     * until the load reaches its log, unless gathering needs them now (a ZIP is expanded
     * whole) or needs its first bytes to tell whether it is a ZIP.
     */
    async #stage(handle, entry, where, check) {
      check();
      const size = BigInt(sizeOf(entry.bytes));
      let needs = JSON.parse(guard(() => handle.loadDefer(entry.path, size, undefined)));
      if (needs === 'head') {
        const head = await headOf(entry.bytes);
        check();
        needs = JSON.parse(guard(() => handle.loadDefer(entry.path, size, head)));
      }
      if (needs === 'bytes') {
        const bytes = await bytesOf(entry.bytes, where);
        check();
        guard(() => handle.loadAdd(entry.path, bytes));
      }
    }

    /** Hands over the input the load has reached, once `read` gives its bytes; a failed read fails that log only. */
    async #supply(handle, key, read, check) {
      let bytes;
      let failure;
      try {
        bytes = await read;
      } catch (error) {
        failure = error;
      }
      check();
      if (failure === undefined) guard(() => handle.loadSupply(key, bytes));
      else guard(() => handle.loadSupplyFailed(key, messageOf(failure)));
    }

    // The JSON-RPC table's methods, by position, as DSH names them.
    async listSessions(...args) {
      return this.#call('listSessions', args);
    }

    async filterSessions(...args) {
      return this.#call('filterSessions', args);
    }

    async readSession(...args) {
      await this.#needFor('readSession', args);
      return this.#call('readSession', args);
    }

    async listEvents(...args) {
      await this.#needFor('listEvents', args);
      return this.#call('listEvents', args);
    }

    async readSurface(...args) {
      await this.#needFor('readSurface', args);
      return this.#call('readSurface', args);
    }

    async readEvent(...args) {
      await this.#needFor('readEvent', args);
      return this.#call('readEvent', args);
    }

    async traceSession(...args) {
      await this.#needFor('traceSession', args);
      return this.#call('traceSession', args);
    }

    async traceEvent(...args) {
      await this.#needFor('traceEvent', args);
      return this.#call('traceEvent', args);
    }

    async readTitle(...args) {
      await this.#needFor('readTitle', args);
      return this.#call('readTitle', args);
    }

    async readTitleSnapshots(...args) {
      await this.#needFor('readTitleSnapshots', args);
      return this.#call('readTitleSnapshots', args);
    }

    async filterEvents(...args) {
      await this.#needFor('filterEvents', args);
      return this.#call('filterEvents', args);
    }

    async listDocuments(...args) {
      await this.#needFor('listDocuments', args);
      return this.#call('listDocuments', args);
    }

    async addLive(...args) {
      await this.#needFor('addLive', args);
      return this.#call('addLive', args);
    }

    async appendLive(...args) {
      await this.#needFor('appendLive', args);
      return this.#call('appendLive', args);
    }

    async encodeSessionReferenceUri(...args) {
      return callStatic('encodeSessionReferenceUri', args);
    }

    async decodeSessionReferenceUri(...args) {
      return callStatic('decodeSessionReferenceUri', args);
    }

    async formatSessionReferenceMention(...args) {
      return callStatic('formatSessionReferenceMention', args);
    }

    async parseSessionReferenceText(...args) {
      return callStatic('parseSessionReferenceText', args);
    }

    async searchSessions(request, options) {
      await this.#needFor('searchSessions', []);
      return this.#search('searchSessions', request, options);
    }

    async searchEvents(request, options) {
      await this.#needFor('searchEvents', []);
      return this.#search('searchEvents', request, options);
    }

    /** DSH validates a request before it looks at the signal, so its errors win over the abort. */
    #search(method, request, options) {
      const settings = checkOptionsObject(options, `${method} options`);
      for (const key of Object.keys(settings)) {
        if (key !== 'signal') throw argumentError(`${method} options has an unknown key ${JSON.stringify(key)}`);
      }
      const signal = checkSignal(settings.signal, `${method} options`);
      const abortedBefore = signal !== undefined && signal.aborted;
      let result;
      try {
        // Asked before the build's first step, a search would build the whole index itself:
        // one smallest step starts the build, and the search answers alongside it. A step that
        // fails is left for the search to report, after its own checks (as DSH orders them).
        if (this.#building > 0 && this.#handle !== null) {
          try {
            this.#handle.indexStep(1);
          } catch {}
        }
        result = this.#call(method, [request]);
      } catch (error) {
        if (abortedBefore && !isRequestError(error)) throw searchAborted();
        throw error;
      }
      if (signal !== undefined && signal.aborted) throw searchAborted();
      return result;
    }

    async listCandidates(agent, query, limit, options) {
      const settings = { ...checkOptionsObject(options, 'listCandidates options') };
      const signal = checkSignal(settings.signal, 'listCandidates options');
      delete settings.signal;
      await this.#needFor('listCandidates', []);
      if (signal !== undefined && signal.aborted) settings.cancelled = true;
      // With options after them, omitted query and limit take DSH's defaults ('' and 50), as
      // JavaScript default parameters would.
      const args = Object.keys(settings).length === 0 ? [agent, query, limit] : [agent, query === undefined ? '' : query, limit === undefined ? 50 : limit, settings];
      const result = this.#call('listCandidates', args);
      if (signal !== undefined && signal.aborted) throw referenceCancelled();
      return result;
    }

    async prepare(agent, content, references, options) {
      const settings = { ...checkOptionsObject(options, 'prepare options') };
      const signal = checkSignal(settings.signal, 'prepare options');
      const spill = checkFunction(settings.spill, 'prepare options.spill');
      delete settings.signal;
      delete settings.spill;
      // Only the cited sessions are read (the agent's cwd comes from its header). More than
      // prepare's most distinct sources fails before any is read, so none is read for it.
      const cited = citedSessions(references);
      if (cited.length <= MAX_PREPARE_SOURCES) await this.#need(cited);
      if (signal !== undefined && signal.aborted) settings.cancelled = true;
      const args = [agent, content, references];
      if (options !== undefined || Object.keys(settings).length > 0) args.push(settings);
      const json = paramsJson('prepare', args);
      const handle = this.#open();
      // Complete snapshots are built only for a spill store to take.
      const { result, spills } = JSON.parse(guard(() => handle.prepare(json, spill !== undefined)));
      if (signal !== undefined && signal.aborted) throw referenceCancelled();
      if (spill !== undefined) await runSpills(result, spills, spill, signal);
      return result;
    }

    /**
     * Builds the search index now, in steps with progress (otherwise the first search builds
     * it whole). It starts behind loads; while it runs, searches answer without waiting for it
     * (what the build has not published yet is read from the corpus), with the answers the
     * finished index gives. An abort stops between steps (SESSION_QUERY_ABORTED); the work done
     * is kept, and the next call goes on from there.
     */
    buildIndex(options) {
      const ready = this.#loading.then(() => this.#bringIn(null));
      // Only the start is queued: searches and loads run between the build's steps (a load
      // that lands part-way is followed by the steps after it).
      this.#loading = ready.catch(() => {});
      this.#building += 1;
      // The first step, too, waits for a task of its own, so a search asked right after the
      // build starts (an app's first search) is answered before it: in this thread, and through
      // the worker entry, which starts calls a page makes one after another in one task too.
      // In Chromium that first result came ~30 ms sooner over the 100k bench corpus.
      return ready.then(yieldToEventLoop).then(() => this.#buildIndex(options)).finally(() => {
        this.#building -= 1;
      });
    }

    async #buildIndex(options) {
      const settings = checkOptionsObject(options, 'buildIndex options');
      for (const key of Object.keys(settings)) {
        if (!BUILD_OPTION_KEYS.has(key)) throw argumentError(`buildIndex options has an unknown key ${JSON.stringify(key)}`);
      }
      const signal = checkSignal(settings.signal, 'buildIndex options');
      const onProgress = checkFunction(settings.onProgress, 'buildIndex options.onProgress');
      const stepBytes = settings.stepBytes ?? INDEX_STEP_BYTES;
      if (!Number.isSafeInteger(stepBytes) || stepBytes < 1) {
        throw argumentError('buildIndex options.stepBytes must be a positive integer');
      }
      if (settings.builders !== undefined) checkHelperCount(settings.builders, 'buildIndex options.builders');
      // Jobs handed out by an earlier build that was stopped have no helper any more.
      guard(() => this.#open().indexReclaimJobs());
      let builders = null;
      try {
        for (;;) {
          if (signal !== undefined && signal.aborted) throw searchAborted();
          const handle = this.#open();
          if (builders && builders.failed()) {
            guard(() => handle.indexReclaimJobs());
            builders.close();
            builders = false;
          }
          for (const segment of builders ? builders.takeBuilt() : []) guard(() => handle.indexSupplySegment(segment));
          const progress = JSON.parse(guard(() => handle.indexStep(stepBytes, builders ? builders.slots() : 0)));
          builders ??= this.#segmentBuilders(settings.builders, progress);
          for (let slots = builders ? builders.slots() : 0; slots > 0; slots--) {
            const job = guard(() => handle.indexTakeJob());
            if (job === undefined) break;
            builders.send(job);
          }
          const { sessionsDone, sessionsTotal, eventsDone, eventsTotal, done, waiting } = progress;
          const shown = { sessionsDone, sessionsTotal, eventsDone, eventsTotal, done };
          if (onProgress !== undefined) onProgress(shown);
          if (done) return shown;
          // Waiting for the helpers' last segments, the build still reports now and then, so
          // a progress display never looks stalled.
          if (waiting && builders) await settlesWithin(builders.answered(), REPORT_EVERY_MS);
          else await yieldToEventLoop();
        }
      } finally {
        if (builders) builders.close();
      }
    }

    /** Helpers building index segments, false when the build goes alone (decided once, after its first step). */
    #segmentBuilders(requested, progress) {
      const count = readers === null || progress.done ? 0 : builderCount(requested, progress.eventsTotal - progress.eventsDone, readers.cores());
      const helpers = takeHelpers(count);
      return helpers === null ? false : new SegmentBuilders(helpers);
    }

    async exportIndex() {
      await this.#need(null);
      const handle = this.#open();
      const bytes = guard(() => handle.exportIndex());
      return bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    }

    async importIndex(bytes) {
      const data = await bytesOf(bytes, 'importIndex bytes');
      await this.#need(null);
      const handle = this.#open();
      guard(() => handle.importIndex(data));
    }

    /**
     * Readies the module for a fast first load while the app is idle (say, right after
     * `create`, before the user picks files): loads the package's small warm-up log into a
     * throwaway archive a few dozen times, one round a task (every fourth one also searches
     * it while its index builds, as an app's first search does), so the engine has optimised
     * the load's and that search's hot functions before a real load needs them. Stops before
     * its next round once anything else uses this archive, so a load asked for meanwhile
     * waits one round at most (a few ms). Resolves to `{rounds, completed}`; where the entry has no way to the log
     * (workerd), to `{rounds: 0, completed: false}`.
     */
    async warmUp() {
      this.#open();
      if (warmUpLog === null) return { rounds: 0, completed: false };
      const [module, log] = await Promise.all([raw(), warmUpBytes()]);
      const uses = this.#uses;
      let rounds = 0;
      while (rounds < WARM_UP_ROUNDS && this.#uses === uses && this.#building === 0 && this.#handle !== null) {
        guard(() => module.warmUpRound(rounds, WARM_UP_PATH, log));
        rounds += 1;
        await yieldToEventLoop();
      }
      return { rounds, completed: rounds === WARM_UP_ROUNDS };
    }

    /** Releases the wasm memory; every later call fails with SESSION_ARCHIVE_CLOSED. */
    free() {
      const handle = this.#handle;
      this.#handle = null;
      if (handle !== null) guard(() => handle.free());
    }
  }

  const statics = Object.fromEntries(
    STATIC_METHODS.map((method) => [method, { async [method](...args) { return callStatic(method, args); } }[method]]),
  );

  return { SessionArchive, ...statics };
}

function isRequestError(error) {
  return error instanceof SessionArgumentError || (error instanceof SessionQueryError && REQUEST_CODES.has(error.code));
}

/** The codes DSH returns before it looks at the signal. */
const REQUEST_CODES = new Set([
  'SESSION_QUERY_SEARCH_DISABLED',
  'SESSION_QUERY_INVALID_FILTER',
  'SESSION_QUERY_INVALID_CURSOR',
  'SESSION_QUERY_INVALID_QUERY',
  'SESSION_QUERY_INVALID_LIMIT',
]);

function searchAborted() {
  return new SessionQueryError('SESSION_QUERY_ABORTED', 'the search was aborted');
}

function referenceCancelled() {
  return new SessionReferenceError('SESSION_REFERENCE_CANCELLED', 'the preparation was cancelled');
}

/** Hands each truncated source to the caller's store; an abort while it writes cancels all. */
async function runSpills(result, spills, spill, signal) {
  for (const entry of spills) {
    const info = {
      sessionId: entry.sessionId,
      label: entry.label,
      capturedThroughSeq: entry.capturedThroughSeq,
      snapshot: entry.snapshot,
    };
    let outcome;
    try {
      outcome = await raceAbort(Promise.resolve().then(() => spill(info)), signal);
    } catch (error) {
      if (error === ABORTED) throw referenceCancelled();
      outcome = { unavailable: String(error && error.message !== undefined ? error.message : error) };
      result.references[entry.reference].spill = outcome;
      continue;
    }
    if (signal !== undefined && signal.aborted) throw referenceCancelled();
    result.references[entry.reference].spill =
      typeof outcome === 'string' ? { locator: outcome } : { unavailable: 'the spill store returned no locator string' };
  }
  if (signal !== undefined && signal.aborted) throw referenceCancelled();
}

const ABORTED = Symbol('aborted');

function raceAbort(promise, signal) {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(ABORTED);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

export {
  SessionArgumentError,
  SessionInternalError,
  SessionLoadError,
  SessionQueryError,
  SessionReferenceError,
  sessionError,
};
