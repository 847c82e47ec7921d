// The package in workerd (the Cloudflare Workers runtime, from its npm package). A worker module
// imports 'dsh-session-search'; the config lists the package's files as wrangler's bundle would
// after resolving the `workerd` export condition: JavaScript as ES modules, the .wasm as a
// compiled wasm module. The driver POSTs each input and compares the scenario's calls.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative, sep } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { readInputs } from './consumers/inputs.mjs';

/**
 * A Worker module that decodes the posted `{entries}` (base64 bytes) and answers with
 * `run(api, inputs)` imported from `module`, or a 500 with the error's stack.
 */
function workerSource(module, run) {
  return `
import * as api from 'dsh-session-search';
import { ${run} } from './${module}';

function decode(b64) {
  const text = atob(b64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

export default {
  async fetch(request) {
    const { entries } = await request.json();
    const inputs = entries.map((e) => ({ path: e.path, bytes: decode(e.bytes) }));
    try {
      return Response.json(await ${run}(api, inputs));
    } catch (error) {
      return new Response(String(error.stack || error), { status: 500 });
    }
  },
};
`;
}

const WORKER = workerSource('scenario.mjs', 'runScenario');

function packageModules(app) {
  const pkg = join(app, 'node_modules', 'dsh-session-search');
  const exports = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).exports['.'];
  const entry = exports.workerd.default;
  const modules = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.(js|wasm)$/.test(name) && !full.includes(`${sep}worker${sep}`)) {
        const moduleName = relative(app, full).split(sep).join('/');
        modules.push(name.endsWith('.wasm') ? `(name = "${moduleName}", wasm = embed "${moduleName}")` : `(name = "${moduleName}", esModule = embed "${moduleName}")`);
      }
    }
  };
  walk(pkg);
  const shim = `export * from './node_modules/dsh-session-search/${entry.replace(/^\.\//, '')}';`;
  modules.push(`(name = "dsh-session-search", esModule = ${JSON.stringify(shim)})`);
  return modules;
}

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Serves `worker` (module text, as worker.js) with the package and `modules` ({name: text}) in
 * workerd; `use(post, log)` talks to it (`post(body, path?)`). `externals` ({NAME: port})
 * become service bindings `env.NAME` to HTTP servers on 127.0.0.1. The process is killed when
 * `use` settles.
 */
export async function withWorkerd({ app, tools, worker, modules = {}, externals = {} }, use) {
  const port = await freePort();
  writeFileSync(join(app, 'worker.js'), worker);
  for (const [name, text] of Object.entries(modules)) writeFileSync(join(app, name), text);
  const embedded = ['worker.js', ...Object.keys(modules)].map((name) => `(name = "${name}", esModule = embed "${name}")`);
  const config = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    ${['(name = "main", worker = .consumer)', ...Object.entries(externals).map(([name, at]) => `(name = "ext-${name}", external = (address = "127.0.0.1:${at}", http = ()))`)].join(',\n    ')}
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const consumer :Workerd.Worker = (
  modules = [
    ${[...embedded, ...packageModules(app)].join(',\n    ')}
  ],
  bindings = [${Object.keys(externals).map((name) => `(name = "${name}", service = "ext-${name}")`).join(', ')}],
  compatibilityDate = "2026-11-01",
);
`;
  writeFileSync(join(app, 'workerd.capnp'), config);
  // The platform package's binary itself: killing the npm wrapper would leave it running.
  const binary = join(tools, '..', '@cloudflare', 'workerd-linux-64', 'bin', 'workerd');
  const child = spawn(existsSync(binary) ? binary : join(tools, 'workerd'), ['serve', join(app, 'workerd.capnp')], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  const url = `http://127.0.0.1:${port}/`;
  const post = async (body, path = '') => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fetch(url + path, { method: 'POST', body });
      } catch (error) {
        if (attempt > 100 || child.exitCode !== null) throw new Error(`workerd did not answer: ${error.message}\n${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  try {
    return await use(post, () => log);
  } finally {
    child.kill('SIGKILL');
  }
}

export async function runWorkerd({ app, tools, inputs, expected }) {
  const scenario = readFileSync(join(app, 'scenario.mjs'), 'utf8');
  return withWorkerd({ app, tools, worker: WORKER, modules: { 'scenario.mjs': scenario } }, async (post, log) => {
    for (const [kind, calls] of Object.entries(expected)) {
      const entries = readInputs(inputs[kind]).map((e) => ({ path: e.path, bytes: Buffer.from(e.bytes).toString('base64') }));
      const response = await post(JSON.stringify({ entries }));
      const text = await response.text();
      if (!response.ok) throw new Error(`workerd ${response.status}: ${text}\n${log()}`);
      const got = JSON.parse(text);
      if (!isDeepStrictEqual(got, calls)) {
        const i = got.findIndex((c, n) => !isDeepStrictEqual(c, calls[n]));
        throw new Error(`workerd ${kind}: call ${i} differs\n  got      ${JSON.stringify(got[i]).slice(0, 600)}\n  expected ${JSON.stringify(calls[i]).slice(0, 600)}`);
      }
    }
    return `equal Node for ${Object.keys(expected).join(', ')}`;
  });
}

const LAZY_WORKER = workerSource('lazy.mjs', 'runLazy');

/** lazy.mjs's comparisons of a lazy source with a full load, inside a Worker. */
export async function runWorkerdLazy({ app, tools, root }) {
  const lazy = readFileSync(join(app, 'lazy.mjs'), 'utf8');
  return withWorkerd({ app, tools, worker: LAZY_WORKER, modules: { 'lazy.mjs': lazy } }, async (post, log) => {
    const entries = readInputs(root).map((e) => ({ path: e.path, bytes: Buffer.from(e.bytes).toString('base64') }));
    const response = await post(JSON.stringify({ entries }));
    const text = await response.text();
    if (!response.ok) throw new Error(`workerd ${response.status}: ${text}\n${log()}`);
    const summary = JSON.parse(text);
    return `${summary.checked} checks over ${summary.logs} logs; prepare of three sources read ${summary.prepareReads} logs`;
  });
}
