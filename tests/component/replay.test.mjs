// Recorded DSH calls of the oracle (`make oracle`) replayed through the component: DSH's
// answers and codes, compared as tests/integration/differential.rs and
// tests/integration/reference_differential.rs compare them for the native faces. The roots load as entries, as a host hands them over.
import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { attempt, entriesOf, loadComponent, opaqueCursor, oracleDir, same, short, value, withoutMessages } from './hosts.mjs';

const api = await loadComponent();

/** `dump.calls` of one root, with its root loaded into a fresh archive. */
function open(dumpPath) {
  assert.ok(existsSync(dumpPath), `${dumpPath} is missing: run \`make oracle\` first`);
  const dump = JSON.parse(readFileSync(dumpPath, 'utf8'));
  const archive = new api.Archive({});
  const logs = join(oracleDir, 'logs');
  const report = value(attempt(() => archive.load(entriesOf(join(logs, dump.root), logs), { strict: false })));
  assert.ok(report.sessions?.length > 0, `${dump.root} loads: ${short(report)}`);
  return { dump, archive };
}

const codeOf = (answer) => answer.error?.code ?? '(uncoded)';

/** Removes the first own `key` found in `value` (depth first); whether one was there. */
function removeKey(value, key) {
  if (!value || typeof value !== 'object') return false;
  if (!Array.isArray(value) && Object.hasOwn(value, key)) return delete value[key];
  return Object.values(value).some((item) => removeKey(item, key));
}

/**
 * Calls through the component's `call`. The component is strict about unknown keys (as the
 * package is) where DSH ignores them: such a refusal must name a key the call really holds,
 * and the call without it must then give DSH's answer, so the key is the only difference.
 */
function strictCall(archive, method, params, out) {
  let current = structuredClone(params);
  for (;;) {
    const answer = attempt(() => archive.call(method, JSON.stringify(current)));
    const key = answer.error?.code === 'SESSION_INVALID_ARGUMENT' && /has no key ("(?:[^"\\]|\\.)*")/.exec(answer.error.message);
    if (!key || !removeKey(current, JSON.parse(key[1]))) return answer;
    out.strictRefusals++;
  }
}

/** Replays the query calls of one dump; every `stride`-th call (cursor chains in full). */
function replayQueries(dumpPath, stride, out) {
  const { dump, archive } = open(dumpPath);
  const cursors = [];
  let afterConflict = false;
  dump.calls.forEach((call, index) => {
    if (index % stride !== 0 && call.cursorFrom === undefined) return cursors.push(undefined);
    let params = call.params ?? [];
    if (call.cursorFrom !== undefined && cursors[call.cursorFrom] && params[0] && typeof params[0] === 'object') {
      params = [{ ...params[0], cursor: cursors[call.cursorFrom] }];
    }
    const answer = strictCall(archive, call.method, params, out);
    const ours = value(answer);
    cursors.push(answer.ok ? ours?.nextCursor : undefined);
    out.calls++;
    const what = `${dump.root} #${index} ${call.method} ${short(params)}`;
    if (afterConflict) return;
    if (call.error?.code === 'SESSION_QUERY_SOURCE_CONFLICT') {
      // DSH then fails every listing; we fail only the conflicting id (fault isolation).
      afterConflict = true;
      return;
    }
    if (call.method === 'addLive' || call.method === 'appendLive') {
      if (answer.error && !call.error) out.fail(`${what}: a host action DSH accepted was refused: ${short(ours)}`);
      return;
    }
    if (call.error) {
      if (call.error.code === null) return; // DSH crashed without a code: no verdict
      if (codeOf(answer) !== call.error.code) out.fail(`${what}: DSH fails with ${call.error.code}, we answer ${short(ours)}`);
      else out.codes++;
      return;
    }
    const [expected, actual] = call.method === 'readTitleSnapshots'
      ? [withoutMessages(call.result), withoutMessages(ours)]
      : [opaqueCursor(call.result), opaqueCursor(ours)];
    if (!same(expected, actual)) out.fail(`${what}\n    DSH:  ${short(expected)}\n    ours: ${short(actual)}`);
  });
}

/** The readable and context messages with the (random) context message ids set aside. */
function withoutContextIds(value) {
  if (Array.isArray(value)) return value.map(withoutContextIds);
  if (!value || typeof value !== 'object') return value;
  const context = value.source?.kind === 'session-reference';
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, context && k === 'id' ? '<context id>' : withoutContextIds(v)]));
}

/** Replays the reference calls of one dump (candidates, prepare, URIs, mentions, parsing). */
function replayReferences(dumpPath, out) {
  const { dump, archive } = open(dumpPath);
  assert.deepEqual(dump.unreadable, [], 'every session of the root is readable (candidates compare whole)');
  dump.calls.forEach((call, index) => {
    const answer = strictCall(archive, call.method, call.params, out);
    const ours = value(answer);
    out.calls++;
    const what = `${dump.root} references #${index} ${call.method} ${short(call.params)}`;
    if (call.error) {
      if (codeOf(answer) !== call.error.code) out.fail(`${what}: DSH fails with ${call.error.code}, we answer ${short(ours)}`);
      else out.codes++;
      return;
    }
    if (answer.error) return out.fail(`${what}: DSH succeeds, we fail with ${answer.error.code}`);
    if (call.method !== 'prepare') {
      if (!same(call.result, ours)) out.fail(`${what}\n    DSH:  ${short(call.result)}\n    ours: ${short(ours)}`);
      return;
    }
    for (const key of ['content', 'additionalContext', 'messages']) {
      if (key === 'messages' && call.result.messages === undefined) continue;
      const [dsh, mine] = [withoutContextIds(call.result[key]), withoutContextIds(ours[key])];
      if (!same(dsh, mine)) out.fail(`${what}: ${key}\n    DSH:  ${short(dsh)}\n    ours: ${short(mine)}`);
    }
  });
}

function tally() {
  const lines = [];
  return { calls: 0, codes: 0, strictRefusals: 0, lines, fail: (line) => lines.push(line) };
}

function verdict(out, minCalls, minCodes) {
  assert.ok(out.calls >= minCalls, `at least ${minCalls} recorded calls replay (${out.calls})`);
  assert.ok(out.codes >= minCodes, `at least ${minCodes} of DSH's error codes come back (${out.codes})`);
  console.log(`${out.calls} calls replayed, ${out.codes} of DSH's error codes matched, ${out.strictRefusals} unknown keys refused (strict; DSH's answer without them)`);
  assert.equal(out.lines.length, 0, `${out.lines.length} answers differ from DSH's:\n${out.lines.slice(0, 30).join('\n')}`);
}

test('recorded search calls (all, cursor chains included) give DSH\'s answers', () => {
  const out = tally();
  replayQueries(join(oracleDir, 'dumps', 'search.json'), 1, out);
  verdict(out, 400, 50);
});

test('recorded live-session calls give DSH\'s answers', () => {
  const out = tally();
  replayQueries(join(oracleDir, 'dumps', 'live.json'), 1, out);
  verdict(out, 100, 5);
});

test('a sample of the recorded reads of the zstd root give DSH\'s answers', () => {
  const out = tally();
  replayQueries(join(oracleDir, 'dumps', 'zstd.json'), 3, out);
  verdict(out, 300, 20);
});

test('recorded reference calls give DSH\'s answers and codes', () => {
  const out = tally();
  replayReferences(join(oracleDir, 'references', 'search.json'), out);
  verdict(out, 150, 20);
});
