// The two hosts the component test compares: the component transpiled by jco (run in Node
// with WASI 0.2 from preview2-shim) and the native program's JSON-RPC face on the same inputs.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const here = new URL('.', import.meta.url).pathname;
export const repo = resolve(here, '..', '..');
const target = process.env.CARGO_TARGET_DIR ? resolve(process.env.CARGO_TARGET_DIR) : join(repo, 'target');
/** The jco output of `make test-component`. */
export const componentJs = process.env.COMPONENT_JS ?? join(here, 'out', 'dsh_session_search.js');
/** The native program (`cargo build --bin dsh-session-search`). */
export const nativeBin = process.env.NATIVE_BIN ?? join(target, 'debug', 'dsh-session-search');
export const oracleDir = process.env.DSH_ORACLE_DIR ?? join(target, 'oracle');

/** The component's `session-search` interface. */
export async function loadComponent() {
  const module = await import(pathToFileURL(componentJs).href);
  return module.sessionSearch ?? module['dsh:session-search/session-search@0.1.0'];
}

/**
 * Calls a component function; `{ok: text}` or `{error: {code, message}}` (jco throws the
 * WIT error record as a ComponentError's payload).
 */
export function attempt(fn) {
  try {
    return { ok: fn() };
  } catch (e) {
    if (e?.payload && typeof e.payload.code === 'string') return { error: e.payload };
    throw e;
  }
}

/** A component answer as the value it stands for, or `{error: {code}}`. */
export function value(answer) {
  return answer.error ? { error: { code: answer.error.code } } : JSON.parse(answer.ok);
}

/** Every file below `dir` as a `{path, bytes}` entry, paths relative to `base` with `/`, sorted. */
export function entriesOf(dir, base) {
  const out = [];
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push({ path: relative(base, p).split('\\').join('/'), bytes: new Uint8Array(readFileSync(p)) });
    }
  };
  walk(dir);
  // In path order, as a folder on disk is read.
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The native `rpc` face: one JSON-RPC request per line, answers in order. */
export class NativeRpc {
  constructor(cwd) {
    this.child = spawn(nativeBin, ['rpc'], { cwd, stdio: ['pipe', 'pipe', 'inherit'] });
    this.waiting = [];
    this.nextId = 1;
    createInterface({ input: this.child.stdout }).on('line', (line) => this.waiting.shift()(line));
  }

  /** `{ok: JSON-RPC result}` or `{error: {code, message}}` with the library's stable code. */
  async call(method, params) {
    const id = this.nextId++;
    const line = await new Promise((resolve) => {
      this.waiting.push(resolve);
      this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
    const response = JSON.parse(line);
    if (response.id !== id) throw new Error(`answer ${response.id} for request ${id}`);
    if (!response.error) return { ok: response.result };
    return { error: { code: response.error.data?.code ?? String(response.error.code), message: response.error.message } };
  }

  close() {
    this.child.stdin.end();
  }
}

/** The native answer as `value` gives the component's. */
export function nativeValue(answer) {
  return answer.error ? { error: { code: answer.error.code } } : answer.ok;
}

/** A search page with its cursor reduced to its presence (cursors are instance-bound). */
export function opaqueCursor(page) {
  if (page && typeof page === 'object' && 'nextCursor' in page) return { ...page, nextCursor: true };
  return page;
}

/** Settlements with each rejection reduced to its code (messages are prose). */
export function withoutMessages(settlements) {
  if (!Array.isArray(settlements)) return settlements;
  return settlements.map((s) => (s?.reason ? { ...s, reason: { code: s.reason.code } } : s));
}

export const same = isDeepStrictEqual;

/** Where two values first differ: `path: a ≠ b`, or `null` when they are the same. */
export function firstDifference(a, b, path = '$') {
  if (isDeepStrictEqual(a, b)) return null;
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const found = firstDifference(a[key], b[key], Array.isArray(a) ? `${path}[${key}]` : `${path}.${key}`);
      if (found) return found;
    }
  }
  return `${path}: ${short(a)} ≠ ${short(b)}`;
}

/** The first 400 characters of a value, for a mismatch line. */
export function short(value) {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}
