// `dsh-session-search/worker`: the SessionArchive API with the wasm module in a Web Worker, so
// loading and searching never block the page. Every method returns a Promise; errors keep their
// class, `name`, `code` and `message`; onProgress, spill and AbortSignal work across the boundary.
import { argumentError, fromTransferable, SessionArgumentError } from '../lib/errors.js';
import { yieldToEventLoop } from '../lib/tasks.js';

export * from '../lib/exports.js';

/** The methods whose last parameter is an options object that may hold a signal. */
const OPTION_POSITION = { load: 1, buildIndex: 0, searchSessions: 1, searchEvents: 1, listCandidates: 3, prepare: 3 };

const METHODS = [
  'load', 'listSessions', 'filterSessions', 'readSession', 'listEvents', 'readSurface', 'readEvent',
  'traceSession', 'traceEvent', 'readTitle', 'readTitleSnapshots', 'filterEvents', 'listDocuments',
  'searchSessions', 'searchEvents', 'addLive', 'appendLive', 'listCandidates', 'prepare',
  'buildIndex', 'exportIndex', 'importIndex', 'encodeSessionReferenceUri', 'decodeSessionReferenceUri',
  'formatSessionReferenceMention', 'parseSessionReferenceText', 'warmUp',
];

/**
 * Inputs per message when a load's inputs go to the worker ahead of the call. Serializing a
 * File the page picked costs a synchronous lookup of its size and date (about a millisecond
 * here), so a folder of thousands in one message would hold the page for seconds.
 */
const INPUTS_PER_MESSAGE = 8;

/** A load request's inputs when given as an array (those may be sent ahead), else none. */
function inputsOf(message) {
  return message.method === 'load' && Array.isArray(message.args[0]) ? message.args[0] : [];
}

function defaultWorker() {
  return new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'dsh-session-search' });
}

/** One worker and its pending requests. */
class Channel {
  #worker;
  #pending = new Map();
  #nextId = 0;
  /**
   * Settles once the requests posted in several tasks (a load's inputs sent ahead) are all
   * sent; null when none is under way. Requests made meanwhile are posted after it, so the
   * worker receives every call in the order it was made.
   */
  #sending = null;
  /**
   * Requests made since the last post, posted together at the next microtask (see #postSoon);
   * null when none waits.
   */
  #batch = null;

  constructor(worker) {
    this.#worker = worker;
    worker.addEventListener('message', (event) => this.#receive(event.data));
    worker.addEventListener('error', (event) => this.#failAll(event.message || 'the worker failed'));
  }

  #receive(message) {
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    if (message.progress !== undefined) {
      pending.onProgress?.(message.progress);
      return;
    }
    if (message.spill !== undefined) {
      this.#spill(message.id, pending, message.spill);
      return;
    }
    if (message.part !== undefined) {
      pending.parts ??= new Map();
      const { key, items } = message.part;
      const parts = pending.parts.get(key) ?? [];
      for (const item of items) parts.push(item);
      pending.parts.set(key, parts);
      return;
    }
    this.#pending.delete(message.id);
    pending.cleanup();
    if (message.ok) pending.resolve(message.text !== undefined ? JSON.parse(message.text) : joinParts(pending.parts, message.value));
    else pending.reject(fromTransferable(message.error));
  }

  async #spill(id, pending, { spillId, info }) {
    try {
      const value = await pending.spill(info);
      this.#worker.postMessage({ op: 'spill-result', id, spillId, ok: true, value });
    } catch (error) {
      const reason = error && error.message !== undefined ? error.message : String(error);
      this.#worker.postMessage({ op: 'spill-result', id, spillId, ok: false, reason: String(reason) });
    }
  }

  #failAll(message) {
    for (const pending of this.#pending.values()) {
      pending.cleanup();
      pending.reject(fromTransferable({ name: 'SessionInternalError', code: 'SESSION_INTERNAL', message }));
    }
    this.#pending.clear();
  }

  request(message, { signal, onProgress, spill } = {}) {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => this.#worker.postMessage({ op: 'abort', id });
      signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = () => signal?.removeEventListener('abort', onAbort);
      this.#pending.set(id, { resolve, reject, onProgress, spill, cleanup });
      const post = () => this.#post(id, message, signal);
      const sent = (this.#sending === null ? post() : this.#sending.then(post)).catch((error) => {
        this.#pending.delete(id);
        cleanup();
        reject(argumentError(`the arguments cannot be sent to the worker: ${error.message}`));
      });
      if (this.#sending !== null || inputsOf(message).length > INPUTS_PER_MESSAGE) {
        this.#sending = sent;
        sent.then(() => {
          if (this.#sending === sent) this.#sending = null;
        });
      }
    });
  }

  /**
   * Posts a request. A load of more than INPUTS_PER_MESSAGE inputs sends them ahead a few per
   * task, the first after the caller's task (a file picker's change event) has ended.
   */
  async #post(id, message, signal) {
    // An abort before the call is posted reached the worker ahead of it: say it again.
    const call = (fields) => ({ ...message, id, ...fields, ...(message.signal ? { aborted: message.aborted || signal.aborted } : {}) });
    const inputs = inputsOf(message);
    if (inputs.length <= INPUTS_PER_MESSAGE) {
      return this.#postSoon(() => call({}));
    }
    let at = 0;
    try {
      for (; inputs.length - at > INPUTS_PER_MESSAGE; at += INPUTS_PER_MESSAGE) {
        await yieldToEventLoop();
        this.#worker.postMessage({ op: 'inputs', id, items: inputs.slice(at, at + INPUTS_PER_MESSAGE) });
      }
      await yieldToEventLoop();
    } catch (error) {
      this.#worker.postMessage({ op: 'inputs-drop', id });
      throw error;
    }
    return this.#postSoon(() => call({ args: [inputs.slice(at), ...message.args.slice(1)], inputsAhead: true }));
  }

  /**
   * Posts a request at the next microtask, in one message with every other request made
   * before it (calls made one after another, with no `await` between them), which the worker
   * starts in one task, in order, as this thread would. An app's first search, asked right
   * after `buildIndex()`, is then answered before the build's first step, as it is in this
   * thread: posted one by one, the build's message sometimes reached the worker alone and its
   * first step ran before the search's message arrived (1 in 10 Chromium runs over the 100k
   * bench corpus, ~30 ms later).
   * `request` is called when the batch is posted, so a signal that aborted meanwhile is seen.
   * Settles once the request is posted; rejects if it cannot be (its arguments cannot be
   * cloned), and then only that request fails.
   */
  #postSoon(request) {
    if (this.#batch === null) {
      this.#batch = [];
      queueMicrotask(() => this.#postBatch());
    }
    return new Promise((resolve, reject) => this.#batch.push({ request, resolve, reject }));
  }

  #postBatch() {
    const batch = this.#batch;
    this.#batch = null;
    const requests = batch.map(({ request }) => request());
    try {
      this.#worker.postMessage({ op: 'batch', requests });
      for (const { resolve } of batch) resolve();
    } catch {
      // One of them cannot be sent: each goes alone, in order, and only those fail.
      batch.forEach(({ resolve, reject }, i) => {
        try {
          this.#worker.postMessage({ op: 'batch', requests: [requests[i]] });
          resolve();
        } catch (error) {
          reject(error);
        }
      });
    }
  }

  terminate() {
    this.#failAll('the archive was freed');
    this.#worker.terminate();
  }
}

function splitOptions(method, args) {
  const position = OPTION_POSITION[method];
  if (position === undefined || args.length <= position || args[position] === undefined) {
    return { args, wire: {}, local: {} };
  }
  const options = args[position];
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw argumentError(`${method} options must be an object`);
  }
  const { signal, onProgress, spill, ...rest } = options;
  for (const [name, fn] of [['onProgress', onProgress], ['spill', spill]]) {
    if (fn !== undefined && typeof fn !== 'function') throw argumentError(`${method} options.${name} must be a function`);
  }
  if (signal !== undefined && (signal === null || typeof signal.aborted !== 'boolean')) {
    throw argumentError(`${method} options.signal must be an AbortSignal`);
  }
  return {
    args: args.slice(0, position),
    wire: {
      options: rest,
      signal: signal !== undefined,
      aborted: signal?.aborted === true,
      progress: onProgress !== undefined,
      spill: spill !== undefined,
    },
    local: { signal, onProgress, spill },
  };
}

/** A result whose arrays arrived partly ahead (see the worker's sendLargeInParts), whole again. */
function joinParts(parts, value) {
  if (parts === undefined) return value;
  if (parts.has(null)) return parts.get(null).concat(value);
  for (const [key, items] of parts) value[key] = items.concat(value[key]);
  return value;
}

export class SessionArchive {
  #channel;

  /** Use `SessionArchive.create(options, {worker})`. */
  constructor(channel) {
    if (!(channel instanceof Channel)) throw argumentError('use `await SessionArchive.create(options)`');
    this.#channel = channel;
  }

  /** A new archive in its own worker (or in `worker`, e.g. one your bundler built). */
  static async create(options, { worker } = {}) {
    if (options !== null && typeof options === 'object' && options.source !== undefined) {
      throw argumentError('a lazy source cannot be posted to a worker: create the archive with the main entry inside a worker of your own');
    }
    const channel = new Channel(worker ?? defaultWorker());
    try {
      await channel.request({ op: 'create', options });
    } catch (error) {
      channel.terminate();
      throw error;
    }
    return new SessionArchive(channel);
  }

  async _request(method, args) {
    if (this.#channel === null) throw new SessionArgumentError('SESSION_ARCHIVE_CLOSED', 'this SessionArchive was freed');
    const { args: rest, wire, local } = splitOptions(method, args);
    return this.#channel.request({ op: 'call', method, args: rest, ...wire }, local);
  }

  /** Ends the worker and its memory; every later call fails with SESSION_ARCHIVE_CLOSED. */
  free() {
    this.#channel?.terminate();
    this.#channel = null;
  }
}

for (const method of METHODS) {
  Object.defineProperty(SessionArchive.prototype, method, {
    value: { async [method](...args) { return this._request(method, args); } }[method],
    writable: true,
    configurable: true,
  });
}
Object.defineProperty(SessionArchive.prototype, '_request', { enumerable: false });

let staticChannel = null;

function callStatic(method, args) {
  staticChannel ??= new Channel(defaultWorker());
  return staticChannel.request({ op: 'static', method, args });
}

export const encodeSessionReferenceUri = (...args) => callStatic('encodeSessionReferenceUri', args);
export const decodeSessionReferenceUri = (...args) => callStatic('decodeSessionReferenceUri', args);
export const formatSessionReferenceMention = (...args) => callStatic('formatSessionReferenceMention', args);
export const parseSessionReferenceText = (...args) => callStatic('parseSessionReferenceText', args);
