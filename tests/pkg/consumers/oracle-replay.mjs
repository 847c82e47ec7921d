// The recorded DSH calls of tests/oracle, replayed through the installed package in Node, with
// the rules tests/integration/differential.rs applies to the JSON-RPC replay: equal results (cursors by
// presence, rejection reasons by code), equal codes, host actions accepted, nothing compared
// after a source conflict or for a root whose listing DSH fails as a whole.
//   node oracle-replay.mjs <oracle dir>
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import * as api from 'dsh-session-search';

const { SessionArchive } = api;
const CLASS_BY_PREFIX = [
  ['SESSION_QUERY_', 'SessionQueryError'],
  ['SESSION_REFERENCE_', 'SessionReferenceError'],
  ['SESSION_LOAD_', 'SessionLoadError'],
  ['SESSION_INVALID_ARGUMENT', 'SessionArgumentError'],
];
const codes = new Set();
import { readInputs } from './inputs.mjs';

const dir = process.argv[2];
const opaque = (page) => (page && typeof page === 'object' && 'nextCursor' in page ? { ...page, nextCursor: true } : page);
const withoutMessages = (settled) =>
  Array.isArray(settled) ? settled.map((s) => (s.reason ? { ...s, reason: { code: s.reason.code } } : s)) : settled;

/** Keys DSH defines for each request object; DSH ignores others, the strict face refuses them. */
const REQUEST_KEYS = {
  searchSessions: ['query', 'sessionFilters', 'eventFilters', 'limit', 'cursor', 'highlights'],
  searchEvents: ['sessionId', 'query', 'filters', 'limit', 'cursor', 'highlights'],
  readEvent: ['sessionId', 'seq', 'before', 'after'],
  traceEvent: ['sessionId', 'seq'],
};
const FILTER_KEYS = ['kind', 'values', 'from', 'to', 'text'];

function hasUnknownKey(method, params) {
  const request = params[0];
  if (!(method in REQUEST_KEYS) || request === null || typeof request !== 'object' || Array.isArray(request)) return false;
  if (Object.keys(request).some((k) => !REQUEST_KEYS[method].includes(k))) return true;
  const filters = [request.sessionFilters, request.eventFilters, request.filters].filter(Array.isArray).flat();
  return filters.some((f) => f !== null && typeof f === 'object' && Object.keys(f).some((k) => !FILTER_KEYS.includes(k)));
}

const mismatches = [];
let replayed = 0;
let strictRefusals = 0;
for (const file of readdirSync(join(dir, 'dumps')).sort()) {
  const dump = JSON.parse(readFileSync(join(dir, 'dumps', file), 'utf8'));
  if (!Array.isArray(dump.calls)) continue;
  const archive = await SessionArchive.create();
  await archive.load(readInputs(join(dir, 'logs', dump.root)));
  const listingFailed = dump.mode === 'isolated';
  const cursors = [];
  let afterConflict = false;
  for (const [index, call] of dump.calls.entries()) {
    let params = call.params ?? [];
    if (call.cursorFrom !== undefined && cursors[call.cursorFrom] && params[0] && typeof params[0] === 'object') {
      params = [{ ...params[0], cursor: cursors[call.cursorFrom] }];
    }
    let ours;
    try {
      const result = await archive[call.method](...params);
      cursors.push(result && result.nextCursor);
      ours = { result };
    } catch (error) {
      cursors.push(undefined);
      if (!error.code) throw error;
      ours = { error: { code: error.code, name: error.name } };
      const expectedClass = CLASS_BY_PREFIX.find(([prefix]) => error.code.startsWith(prefix))?.[1];
      if (!(error instanceof Error) || error.name !== expectedClass || !(error instanceof api[expectedClass])) {
        mismatches.push(`${dump.root} #${index}: ${error.code} thrown as ${error.name}, not ${expectedClass}`);
      }
      codes.add(error.code);
    }
    replayed++;
    const what = `${dump.root} #${index} ${call.method} ${JSON.stringify(params).slice(0, 160)}`;
    const rootLevel = call.error && typeof call.error.message === 'string' && call.error.message.startsWith('session persistence listing failed');
    if ((listingFailed && (rootLevel || call.method === 'readTitleSnapshots')) || afterConflict) continue;
    if (call.error && call.error.code === 'SESSION_QUERY_SOURCE_CONFLICT') {
      afterConflict = true;
      continue;
    }
    if (call.method === 'addLive' || call.method === 'appendLive') {
      if (ours.error && !call.error) mismatches.push(`${what}: refused a host action DSH accepted: ${ours.error.code}`);
      continue;
    }
    // The package checks shapes strictly (unknown keys, values JSON cannot carry); DSH's face
    // tolerates some of those. They are counted, and only allowed where DSH did not succeed
    // with a well-formed request.
    if (ours.error && ours.error.code === 'SESSION_INVALID_ARGUMENT') {
      strictRefusals++;
      if (!call.error && !hasUnknownKey(call.method, params)) mismatches.push(`${what}: refused, DSH answered`);
      continue;
    }
    if (call.error) {
      if (call.error.code === null || call.error.code === undefined) continue; // DSH threw uncoded
      if (!ours.error) mismatches.push(`${what}: DSH fails with ${call.error.code}, we answered`);
      else if (ours.error.code !== call.error.code) mismatches.push(`${what}: DSH fails with ${call.error.code}, we with ${ours.error.code}`);
      continue;
    }
    if (ours.error) {
      mismatches.push(`${what}: DSH answered, we fail with ${ours.error.code}`);
      continue;
    }
    const [expected, actual] =
      call.method === 'readTitleSnapshots' ? [withoutMessages(call.result), withoutMessages(ours.result)] : [opaque(call.result), opaque(ours.result)];
    if (!isDeepStrictEqual(JSON.parse(JSON.stringify(actual ?? null)), expected)) {
      mismatches.push(`${what}: results differ\n    DSH  ${JSON.stringify(expected).slice(0, 300)}\n    ours ${JSON.stringify(actual).slice(0, 300)}`);
    }
  }
  archive.free();
}

if (replayed < 1000) {
  console.log(`only ${replayed} recorded calls found`);
  process.exit(1);
}
if (mismatches.length) {
  console.log(`${mismatches.length} mismatches with DSH (first 30):\n${mismatches.slice(0, 30).join('\n')}`);
  process.exit(1);
}
console.log(`replayed ${replayed} recorded DSH calls through the package, all equal, ${codes.size} distinct codes on their classes (${strictRefusals} refused by the strict argument checks where DSH also failed or the request had unknown keys)`);
