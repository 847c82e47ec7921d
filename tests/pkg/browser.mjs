// The package in headless Chromium (Debian's, driven by playwright-core): a plain page with an
// import map, and the `vite build` output of a bundled app; each runs the shared scenario on
// the main thread and through `dsh-session-search/worker`, served by node:http on 127.0.0.1.
import { createReadStream, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, relative, sep } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

function listFiles(root) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else out.push(relative(root, full).split(sep).join('/'));
    }
  };
  walk(root);
  return out;
}

function serve(app, inputs) {
  const rootFiles = inputs.root ? listFiles(inputs.root) : [];
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    let file = null;
    if (path === '/inputs/zip') file = inputs.zip;
    else if (path === '/inputs/root.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(rootFiles));
      return;
    } else if (path.startsWith('/inputs/root/') && inputs.root) file = join(inputs.root, normalize(path.slice('/inputs/root/'.length)));
    else if (path.startsWith('/app/')) file = join(app, normalize(path.slice('/app/'.length)));
    else if (path.startsWith('/vite/')) file = join(app, 'vite-app', 'dist', normalize(path.slice('/vite/'.length)));
    if (file !== null && !file.includes('..')) {
      try {
        if (statSync(file).isDirectory()) file = join(file, 'index.html');
        statSync(file);
        res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream' });
        createReadStream(file).pipe(res);
        return;
      } catch {}
    }
    res.writeHead(404);
    res.end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function compare(results, expected, where) {
  if (results.error) throw new Error(`${where}: ${results.error}`);
  for (const side of ['page', 'worker']) {
    const runs = Object.entries(expected);
    if (expected.root) runs.push(['rootReaders', expected.root]);
    for (const [kind, calls] of runs) {
      const got = results[side][kind];
      if (!isDeepStrictEqual(got, calls)) {
        const i = got.findIndex((c, n) => !isDeepStrictEqual(c, calls[n]));
        throw new Error(`${where} ${side} ${kind}: call ${i} differs\n  got      ${JSON.stringify(got[i]).slice(0, 600)}\n  expected ${JSON.stringify(calls[i]).slice(0, 600)}`);
      }
    }
    const checks = results[side].checks;
    if (checks.progressEvents < 2 || checks.lastProgress.bytesDone !== checks.lastProgress.bytesTotal) {
      throw new Error(`${where} ${side}: progress ${JSON.stringify(checks)}`);
    }
    if (checks.aborted !== 'SessionQueryError SESSION_QUERY_ABORTED') throw new Error(`${where} ${side}: abort gave ${checks.aborted}`);
    if (!checks.spill || !/^mem:\/\/.+@\d+$/.test(checks.spill.locator) || checks.spill.cancelled !== 'SessionReferenceError SESSION_REFERENCE_CANCELLED') throw new Error(`${where} ${side}: spill ${JSON.stringify(checks.spill)}`);
    if (checks.closed !== 'SessionArgumentError SESSION_ARCHIVE_CLOSED') throw new Error(`${where} ${side}: after free ${checks.closed}`);
    // A lazy source's callbacks cannot be posted to a worker: its entry refuses the source.
    const lazy = side === 'page' ? 'listed 0' : 'SessionArgumentError SESSION_INVALID_ARGUMENT';
    if (checks.lazy !== lazy) throw new Error(`${where} ${side}: a lazy source gave ${checks.lazy}, not ${lazy}`);
    if (checks.loadOrder?.[1] !== 'duplicate') throw new Error(`${where} ${side}: two loads called back to back gave ${JSON.stringify(checks.loadOrder)}`);
    if (checks.searchBeforeBuild?.[0] !== 'search') throw new Error(`${where} ${side}: a search asked as a build started was answered after its first step ${JSON.stringify(checks.searchBeforeBuild)}`);
    const { failed, together, sessionsAfter } = checks.unsendable;
    const togetherExpected = ['SessionArgumentError SESSION_INVALID_ARGUMENT', 'resolved'];
    if (failed !== 'SessionArgumentError SESSION_INVALID_ARGUMENT' || !isDeepStrictEqual(together, togetherExpected) || sessionsAfter < 1) throw new Error(`${where} ${side}: a load with an input that cannot be posted gave ${JSON.stringify(checks.unsendable)}`);
  }
}

export async function runBrowser({ app, tools, inputs, expected, mode }) {
  const { chromium } = await import(join(tools, '..', 'playwright-core', 'index.mjs'));
  const server = await serve(app, inputs);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') errors.push(message.text());
    });
    const kinds = Object.keys(expected).join(',');
    const base = `http://127.0.0.1:${server.address().port}`;
    const url = mode === 'vite' ? `${base}/vite/index.html?kinds=${kinds}` : `${base}/app/web/index.html?kinds=${kinds}`;
    await page.goto(url);
    await page.waitForFunction(() => window.__results !== undefined, null, { timeout: 240_000 });
    const results = await page.evaluate(() => window.__results);
    compare(results, expected, mode);
    if (errors.length) throw new Error(`${mode}: console errors: ${errors.join(' | ')}`);
    return `page and worker equal Node for ${kinds}`;
  } finally {
    await browser.close();
    server.close();
  }
}
