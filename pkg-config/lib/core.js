// The public API over the raw wasm exports, shared by every runtime's entry: JS values in,
// JSON text across the boundary, JS values out, coded errors only. An entry gives `createApi`
// a function that returns the initialised raw module (or a Promise of it).

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

const LOAD_OPTION_KEYS = new Set(['strict', 'signal', 'onProgress']);
const BUILD_OPTION_KEYS = new Set(['signal', 'onProgress', 'stepBytes']);
/** Document text one index step reads: tens of milliseconds of wasm work between reports. */
const INDEX_STEP_BYTES = 256 * 1024;

/**
 * Lets queued messages (an abort, other calls) run. A MessageChannel round trip, not
 * setTimeout(0): nested timers are clamped to 4 ms, which over hundreds of steps adds seconds.
 */
function yieldToEventLoop() {
  if (typeof MessageChannel !== 'function') return new Promise((resolve) => setTimeout(resolve, 0));
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}

export function createApi(loadRaw) {
  let rawPromise;
  let broken = null;

  function raw() {
    if (rawPromise === undefined) {
      rawPromise = Promise.resolve().then(loadRaw).catch((error) => {
        rawPromise = undefined;
        throw internalError(error);
      });
    }
    return rawPromise;
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

    /** Use `SessionArchive.create(options)`. */
    constructor(handle) {
      if (handle === undefined || handle === null || typeof handle.call !== 'function') {
        throw argumentError('use `await SessionArchive.create(options)`');
      }
      this.#handle = handle;
    }

    static async create(options) {
      const settings = options === undefined ? {} : options;
      if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) {
        throw argumentError('SessionArchive.create options must be an object');
      }
      checkJsonValue(settings, 'SessionArchive.create options');
      const json = JSON.stringify(settings);
      const module = await raw();
      return new SessionArchive(guard(() => new module.WasmArchive(json)));
    }

    #open() {
      if (this.#handle === null) {
        throw new SessionArgumentError('SESSION_ARCHIVE_CLOSED', 'this SessionArchive was freed');
      }
      return this.#handle;
    }

    #call(method, args) {
      const json = paramsJson(method, args);
      const handle = this.#open();
      return JSON.parse(guard(() => handle.call(method, json)));
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
      const signal = checkSignal(settings.signal, 'load options');
      const onProgress = checkFunction(settings.onProgress, 'load options.onProgress');
      const entries = normaliseInputs(inputs);
      const handle = this.#open();
      const aborted = () => signal !== undefined && signal.aborted;
      const abortError = () => new SessionLoadError('SESSION_LOAD_ABORTED', 'the load was aborted; nothing was loaded');
      if (aborted()) throw abortError();
      guard(() => handle.loadBegin(JSON.stringify(settings.strict === undefined ? {} : { strict: settings.strict })));
      try {
        return await this.#runStagedLoad(handle, entries, aborted, abortError, onProgress);
      } catch (error) {
        // Whatever stopped the load (abort, a throwing onProgress, free()), nothing is published.
        if (this.#handle === handle && !broken) guard(() => handle.loadAbort());
        throw error;
      }
    }

    async #runStagedLoad(handle, entries, aborted, abortError, onProgress) {
      for (const [i, entry] of entries.entries()) {
        const bytes = await bytesOf(entry.bytes, `load inputs[${i}].bytes`);
        this.#open();
        if (aborted()) throw abortError();
        guard(() => handle.loadAdd(entry.path, bytes));
      }
      for (;;) {
        // One step is one log (the first also gathers the inputs); reporting after every step
        // keeps the gap between reports at one log's work.
        const progress = JSON.parse(guard(() => handle.loadStep()));
        if (onProgress !== undefined) {
          const { bytesDone, bytesTotal, sessionsDone, sessionsTotal } = progress;
          onProgress({ bytesDone, bytesTotal, sessionsDone, sessionsTotal });
        }
        if (progress.done) break;
        await yieldToEventLoop();
        this.#open();
        if (aborted()) throw abortError();
      }
      if (aborted()) throw abortError();
      return JSON.parse(guard(() => handle.loadCommit()));
    }

    // The JSON-RPC table's methods, by position, as DSH names them.
    async listSessions(...args) {
      return this.#call('listSessions', args);
    }

    async filterSessions(...args) {
      return this.#call('filterSessions', args);
    }

    async readSession(...args) {
      return this.#call('readSession', args);
    }

    async listEvents(...args) {
      return this.#call('listEvents', args);
    }

    async readSurface(...args) {
      return this.#call('readSurface', args);
    }

    async readEvent(...args) {
      return this.#call('readEvent', args);
    }

    async traceSession(...args) {
      return this.#call('traceSession', args);
    }

    async traceEvent(...args) {
      return this.#call('traceEvent', args);
    }

    async readTitle(...args) {
      return this.#call('readTitle', args);
    }

    async readTitleSnapshots(...args) {
      return this.#call('readTitleSnapshots', args);
    }

    async filterEvents(...args) {
      return this.#call('filterEvents', args);
    }

    async listDocuments(...args) {
      return this.#call('listDocuments', args);
    }

    async addLive(...args) {
      return this.#call('addLive', args);
    }

    async appendLive(...args) {
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
      return this.#search('searchSessions', request, options);
    }

    async searchEvents(request, options) {
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
      if (signal !== undefined && signal.aborted) settings.cancelled = true;
      const args = [agent, content, references];
      if (options !== undefined || Object.keys(settings).length > 0) args.push(settings);
      const json = paramsJson('prepare', args);
      const handle = this.#open();
      const { result, spills } = JSON.parse(guard(() => handle.prepare(json)));
      if (signal !== undefined && signal.aborted) throw referenceCancelled();
      if (spill !== undefined) await runSpills(result, spills, spill, signal);
      return result;
    }

    /**
     * Builds the search index now, with progress (otherwise the first search builds it whole).
     * Queued behind loads. An abort stops between steps (SESSION_QUERY_ABORTED); the work done
     * is kept, and the next call or search goes on from there.
     */
    buildIndex(options) {
      const run = this.#loading.then(() => this.#buildIndex(options));
      this.#loading = run.catch(() => {});
      return run;
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
      for (;;) {
        if (signal !== undefined && signal.aborted) throw searchAborted();
        const handle = this.#open();
        const progress = JSON.parse(guard(() => handle.indexStep(stepBytes)));
        if (onProgress !== undefined) {
          const { sessionsDone, sessionsTotal, eventsDone, eventsTotal, done } = progress;
          onProgress({ sessionsDone, sessionsTotal, eventsDone, eventsTotal, done });
        }
        if (progress.done) return progress;
        await yieldToEventLoop();
      }
    }

    async exportIndex() {
      const handle = this.#open();
      const bytes = guard(() => handle.exportIndex());
      return bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    }

    async importIndex(bytes) {
      const data = await bytesOf(bytes, 'importIndex bytes');
      const handle = this.#open();
      guard(() => handle.importIndex(data));
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

/** The codes DSH returns before it looks at the signal (spec 04 §3.3 steps 1–2). */
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
