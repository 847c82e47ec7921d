#!/usr/bin/env node
// The packed npm package in headless Chromium (Debian's /usr/bin/chromium through
// playwright-core, no browser download): web/index.html runs lib/protocol.mjs's `runPackage`
// through `dsh-session-search/worker` with the corpus as a dropped folder's entries. Pages,
// the installed package (--app) and the corpus are served by node:http on 127.0.0.1.
//
//   node chromium.mjs --app DIR --corpus DIR --plan PLAN.json --out FILE.json [--runs 5] [--reps 5]
import fs from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuTimes, listFiles } from './lib/measure.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const { values: argv } = parseArgs({ options: { app: { type: 'string' }, corpus: { type: 'string' }, plan: { type: 'string' }, out: { type: 'string' }, runs: { type: 'string', default: '5' }, reps: { type: 'string', default: '5' }, timeout: { type: 'string', default: '1800' }, warm: { type: 'boolean', default: false } } });
if (!argv.app || !argv.corpus || !argv.plan || !argv.out) { console.error('usage: node chromium.mjs --app DIR --corpus DIR --plan PLAN.json --out FILE.json [--runs N] [--reps N] [--warm]'); process.exit(2); }
// Cross-origin isolation: Chromium's performance.now() then ticks in 5 µs instead of 100 µs.
const ISOLATED = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };
const root = path.join(argv.corpus, 'root');
const files = listFiles(root);

/** URL path → file: /app/ the consumer project, /bench/ this folder, /corpus/ the corpus. */
function fileFor(urlPath) {
  const mounts = [['/app/', argv.app], ['/bench/', HERE], ['/corpus/', argv.corpus]];
  if (urlPath === '/plan.json') return argv.plan;
  for (const [prefix, dir] of mounts) {
    if (!urlPath.startsWith(prefix)) continue;
    const file = path.resolve(dir, `.${urlPath.slice(prefix.length - 1)}`);
    return file.startsWith(path.resolve(dir) + path.sep) ? file : null;
  }
  return null;
}

const server = createServer((req, res) => {
  const urlPath = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
  if (urlPath === '/corpus/files.json') {
    res.writeHead(200, { 'content-type': 'application/json', ...ISOLATED });
    res.end(JSON.stringify(files));
    return;
  }
  const file = fileFor(urlPath);
  if (file === null || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
    res.writeHead(404);
    res.end();
    return;
  }
  res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', ...ISOLATED });
  fs.createReadStream(file).pipe(res);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));

/**
 * Waits until the machine is quiet: all cores together under 10% busy over the last 300 ms
 * (Linux's /proc/stat), or 10 s have passed; resolves to the milliseconds waited. A freshly
 * launched Chromium keeps working for a second or more (its start-up renderers), on a core
 * the load would otherwise share; a user drops a folder into a browser long past that.
 */
async function quiet() {
  const started = performance.now();
  if (!fs.existsSync('/proc/stat')) return 0;
  const readings = [cpuTimes()];
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    readings.push(cpuTimes());
    if (readings.length > 4) readings.shift();
    const [first, last] = [readings[0], readings[readings.length - 1]];
    const busy = (last.busy - first.busy) / Math.max(1, last.total - first.total);
    const waited = performance.now() - started;
    if ((readings.length === 4 && busy < 0.1) || waited > 10_000) return waited;
  }
}

const { chromium } = await import(pathToFileURL(path.join(REPO, 'tests', 'pkg', 'node_modules', 'playwright-core', 'index.mjs')).href);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => { if (message.type() === 'error') problems.push(`console: ${message.text()}`); });
  await page.exposeFunction('benchSettle', quiet);
  const url = `http://127.0.0.1:${server.address().port}/bench/web/index.html?runs=${argv.runs}&reps=${argv.reps}${argv.warm ? '&warm=1' : ''}`;
  await page.goto(url);
  await page.waitForFunction(() => window.__bench !== undefined, null, { timeout: Number(argv.timeout) * 1000, polling: 500 });
  const { result, error } = await page.evaluate(() => window.__bench);
  if (error) throw new Error(`chromium: ${error}`);
  if (problems.length) throw new Error(`chromium: ${problems.join(' | ')}`);
  fs.writeFileSync(argv.out, JSON.stringify(result) + '\n');
  const warmed = result.warmUp ? `warm-up ${result.warmUp.ms.toFixed(0)} ms (${result.warmUp.rounds} rounds), ` : '';
  console.log(`${result.engine}: ${warmed}load ${result.loadMs.toFixed(0)} ms (after ${result.settledMs.toFixed(0)} ms settling), index ${result.indexMs.toFixed(0)} ms, first result ${result.firstResultMs.toFixed(0)} ms, p50 ${result.latency.all.p50?.toFixed(3) ?? "–"} ms, prepare ${result.prepare.one.ms.p50.toFixed(1)} / ${result.prepare.three.ms.p50.toFixed(1)} ms, appendLive ${result.appendLive.totalMs.p50.toFixed(1)} ms, wasm ${(result.memory.wasmPeak / 1e6).toFixed(0)} MB`);
} finally {
  await browser.close();
  server.close();
}
