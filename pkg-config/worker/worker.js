// The Web Worker side of `dsh-session-search/worker`: one archive per worker, each request
// answered with {id, ok, value}, {id, ok, text} (the answer's JSON text, which the page parses)
// or {id, ok: false, error: {name, code, message}}; progress and spill requests travel as their
// own messages, aborts arrive as {op: 'abort', id}, and a load's many inputs may arrive ahead of
// its call as {op: 'inputs', id, items}.
import { SessionArchive, encodeSessionReferenceUri, decodeSessionReferenceUri, formatSessionReferenceMention, parseSessionReferenceText } from '../entries/browser.js';
import { answerInText, ResultText } from '../lib/core.js';
import { toTransferable } from '../lib/errors.js';

const STATICS = { encodeSessionReferenceUri, decodeSessionReferenceUri, formatSessionReferenceMention, parseSessionReferenceText };
const controllers = new Map();
const pendingSpills = new Map();
/** A load's inputs sent ahead of its call (client.js), by request id. */
const inputsAhead = new Map();
let archive = null;
let nextSpill = 0;

function reply(message) {
  self.postMessage(message);
}

/** Items per part of a large result (a session's events, documents or records). */
const PART_ITEMS = 1000;

/**
 * Sends a large result's arrays ahead in parts, each its own message, so the page decodes it in
 * short tasks instead of one long one; returns what the final message carries. Arrays at the top
 * level or as a property of the result (readSession's `events`) are split.
 */
function sendLargeInParts(id, value) {
  if (Array.isArray(value)) return sendParts(id, null, value);
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  const rest = { ...value };
  for (const [key, item] of Object.entries(value)) {
    if (Array.isArray(item)) rest[key] = sendParts(id, key, item);
  }
  return rest;
}

function sendParts(id, key, items) {
  let start = 0;
  for (; items.length - start > PART_ITEMS; start += PART_ITEMS) {
    reply({ id, part: { key, items: items.slice(start, start + PART_ITEMS) } });
  }
  return start === 0 ? items : items.slice(start);
}

/** The options object of a call, rebuilt with a local signal, progress and spill callbacks. */
function localOptions(id, message) {
  const options = message.options === undefined ? undefined : { ...message.options };
  if (message.signal) {
    const controller = new AbortController();
    controllers.set(id, controller);
    if (message.aborted) controller.abort();
    options.signal = controller.signal;
  }
  if (message.progress) options.onProgress = (progress) => reply({ id, progress });
  if (message.spill) {
    options.spill = (info) =>
      new Promise((resolve, reject) => {
        const spillId = nextSpill++;
        pendingSpills.set(spillId, { resolve, reject });
        reply({ id, spill: { spillId, info } });
      });
  }
  return options;
}

function takeInputsAhead(id) {
  const inputs = inputsAhead.get(id) ?? [];
  inputsAhead.delete(id);
  return inputs;
}

/** The worker's archive: it answers in JSON text the page parses (lib/core.js's ResultText). */
async function createArchive(options) {
  const created = await SessionArchive.create(options);
  answerInText(created);
  return created;
}

async function run(message) {
  switch (message.op) {
    case 'create':
      archive = await createArchive(message.options);
      return null;
    case 'static':
      return STATICS[message.method](...message.args);
    case 'call': {
      if (archive === null) archive = await createArchive();
      const options = localOptions(message.id, message);
      const given = message.inputsAhead ? [takeInputsAhead(message.id).concat(message.args[0]), ...message.args.slice(1)] : message.args;
      const args = options === undefined ? given : [...given, options];
      return archive[message.method](...args);
    }
    case 'free':
      if (archive !== null) archive.free();
      return null;
    default:
      throw new TypeError(`unknown worker request ${message.op}`);
  }
}

self.addEventListener('message', (event) => {
  const message = event.data;
  // Requests a page made one after another (client.js) start here in one task too, in order.
  if (message.op === 'batch') {
    for (const request of message.requests) handle(request);
  } else {
    handle(message);
  }
});

async function handle(message) {
  if (message.op === 'abort') {
    controllers.get(message.id)?.abort();
    return;
  }
  if (message.op === 'inputs') {
    const inputs = inputsAhead.get(message.id) ?? [];
    for (const item of message.items) inputs.push(item);
    inputsAhead.set(message.id, inputs);
    return;
  }
  if (message.op === 'inputs-drop') {
    inputsAhead.delete(message.id);
    return;
  }
  if (message.op === 'spill-result') {
    const pending = pendingSpills.get(message.spillId);
    pendingSpills.delete(message.spillId);
    if (message.ok) pending?.resolve(message.value);
    else pending?.reject(new Error(message.reason));
    return;
  }
  try {
    const answer = await run(message);
    if (answer instanceof ResultText) {
      self.postMessage({ id: message.id, ok: true, text: answer.text });
      return;
    }
    const value = sendLargeInParts(message.id, answer);
    const transfer = value instanceof Uint8Array ? [value.buffer] : [];
    self.postMessage({ id: message.id, ok: true, value }, transfer);
  } catch (error) {
    reply({ id: message.id, ok: false, error: toTransferable(error) });
  } finally {
    controllers.delete(message.id);
  }
}
