// Replays the calls a consumer made through the package through the native binary's JSON-RPC
// face on the same input, and requires the same results (as JSON text) and the same codes.
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { summariseReport } from './scenario.mjs';

let binary = null;

/** The debug CLI (the build `make test-native` already made; release answers the same). */
function nativeBinary(repo) {
  if (binary === null) {
    execFileSync('cargo', ['build', '--quiet', '--bin', 'dsh-session-search'], { cwd: repo, stdio: 'inherit' });
    binary = join(process.env.CARGO_TARGET_DIR || join(repo, 'target'), 'debug', 'dsh-session-search');
  }
  return binary;
}

/** JSON-RPC responses to `requests` (each {method, params}), in order. */
export function rpc(repo, requests) {
  const lines = requests.map((r, i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: r.method, params: r.params }));
  const result = spawnSync(nativeBinary(repo), ['rpc'], { input: lines.join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 30 });
  if (result.status !== 0) throw new Error(`native rpc exited ${result.status}: ${result.stderr}`);
  const responses = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
  if (responses.length !== requests.length) throw new Error(`native rpc answered ${responses.length} of ${requests.length}`);
  return responses;
}

/** The package error code a native JSON-RPC error stands for. */
export function nativeCode(error) {
  if (error.code === -32000) return error.data.code;
  return 'SESSION_INVALID_ARGUMENT';
}

export function replayNative(repo, input, calls) {
  const replayed = calls.filter((c) => c.params !== undefined);
  const requests = [{ method: 'load', params: [[input]] }];
  const positions = new Map();
  for (const [n, call] of calls.entries()) {
    if (call.params === undefined) continue;
    positions.set(n, requests.length);
    requests.push({ method: call.method, params: call.params });
  }
  // A followed cursor is the one the native face itself returned for the call it continues.
  const responses = [];
  const batch = rpc(repo, requests);
  for (const [n, call] of calls.entries()) {
    if (call.cursorFrom === undefined) continue;
    const source = batch[positions.get(call.cursorFrom)];
    const params = structuredClone(call.params);
    params[0].cursor = source.result.nextCursor;
    requests[positions.get(n)] = { method: call.method, params };
  }
  responses.push(...rpc(repo, requests));
  const report = summariseReport(responses[0].result);
  const loaded = calls.find((c) => c.method === 'load');
  if (JSON.stringify(report) !== JSON.stringify(loaded.report)) {
    throw new Error(`load reports differ\n  package ${JSON.stringify(loaded.report)}\n  native  ${JSON.stringify(report)}`);
  }
  let compared = 0;
  for (const [n, call] of calls.entries()) {
    if (call.params === undefined) continue;
    const response = responses[positions.get(n)];
    const what = `${call.method}(${JSON.stringify(call.params).slice(0, 200)})`;
    if (call.error) {
      if (!response.error) throw new Error(`${what}: the package failed with ${call.error.code}, native answered`);
      if (nativeCode(response.error) !== call.error.code) {
        throw new Error(`${what}: package ${call.error.code}, native ${nativeCode(response.error)}`);
      }
    } else {
      if (response.error) throw new Error(`${what}: native failed with ${nativeCode(response.error)}: ${response.error.message}`);
      const a = JSON.stringify(call.result);
      const b = JSON.stringify(response.result);
      if (a !== b) throw new Error(`${what}: results differ\n  package ${a.slice(0, 600)}\n  native  ${b.slice(0, 600)}`);
    }
    compared++;
  }
  return `${compared} calls equal (${replayed.length - compared} skipped)`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A prepare result with its random message ids (UUID v4s) set aside. */
function withoutRandomIds(value) {
  if (typeof value === 'string') return UUID.test(value) ? '<uuid>' : value;
  if (Array.isArray(value)) return value.map(withoutRandomIds);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutRandomIds(v)]));
  return value;
}

/** The package's outcomes of the recorded reference calls against the native face's. */
export function compareReferenceReplay(repo, oracleDir, outcomes) {
  const byRoot = new Map();
  for (const outcome of outcomes) {
    if (!byRoot.has(outcome.root)) byRoot.set(outcome.root, []);
    byRoot.get(outcome.root).push(outcome);
  }
  const mismatches = [];
  let refused = 0;
  for (const [root, list] of byRoot) {
    const responses = rpc(repo, [{ method: 'load', params: [[join(oracleDir, 'logs', root)]] }, ...list.map((o) => ({ method: o.method, params: o.params }))]).slice(1);
    for (const [i, outcome] of list.entries()) {
      const native = responses[i];
      const what = `${root} #${i} ${outcome.method} ${JSON.stringify(outcome.params).slice(0, 160)}`;
      if (outcome.error) {
        if (!native.error) {
          mismatches.push(`${what}: package ${outcome.error.code}, native answered`);
        } else if (nativeCode(native.error) !== outcome.error.code) {
          // The package refuses what JSON cannot carry and unknown keys before the engine.
          if (outcome.error.code === 'SESSION_INVALID_ARGUMENT') refused++;
          else mismatches.push(`${what}: package ${outcome.error.code}, native ${nativeCode(native.error)}`);
        }
      } else if (native.error) {
        mismatches.push(`${what}: package answered, native ${nativeCode(native.error)}`);
      } else if (JSON.stringify(withoutRandomIds(outcome.result)) !== JSON.stringify(withoutRandomIds(native.result))) {
        mismatches.push(`${what}: results differ\n    package ${JSON.stringify(outcome.result).slice(0, 300)}\n    native  ${JSON.stringify(native.result).slice(0, 300)}`);
      }
    }
  }
  if (outcomes.length < 100) mismatches.push(`only ${outcomes.length} reference calls recorded`);
  if (mismatches.length) throw new Error(`${mismatches.length} mismatches (first 20):\n${mismatches.slice(0, 20).join('\n')}`);
  return `${outcomes.length} reference calls equal the native face (${refused} refused earlier with SESSION_INVALID_ARGUMENT where native failed too)`;
}
