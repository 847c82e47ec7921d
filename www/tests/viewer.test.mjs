// End-to-end: the viewer in Debian's Chromium (driven by playwright-core, no downloaded
// browser), served by serve.mjs on an ephemeral port. Runs with `node --test www/tests/`.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, copyFile, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../serve.mjs';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const FLAGS = [
  '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-quic', '--no-first-run',
];
const SCREENSHOT = process.env.VIEWER_SCREENSHOT ?? join(tmpdir(), 'dsh-viewer.png');
// A sample session with 18 shadowed events (its compactions replaced them on the surface).
const COMPACTED = '9b40ec2a-5917-4d9a-a881-98b3355827fa';
const FIXTURE_LOG = fileURLToPath(new URL('../../tests/fixtures/spec/plain_appends.jsonl', import.meta.url));

let server, url, browser, page, folder;
const problems = [];

before(async () => {
  ({ server, url } = await startServer({ port: 0 }));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`console ${msg.type()}: ${msg.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()}`));
  page.on('response', (res) => res.status() >= 400 && problems.push(`HTTP ${res.status()}: ${res.url()}`));
  page.on('request', (req) => !req.url().startsWith(url) && !req.url().startsWith('data:') && problems.push(`off-site request: ${req.url()}`));
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
});

after(async () => {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
  if (folder) await rm(folder, { recursive: true, force: true });
});

const sessionRows = () => page.locator('#session-list tr[data-session-id]');

test('the server sends wasm and modules with their MIME types and hides dev files', async () => {
  const wasm = await fetch(new URL('pkg/dsh_session_search_bg.wasm', url));
  assert.equal(wasm.headers.get('content-type'), 'application/wasm');
  const js = await fetch(new URL('main.js', url));
  assert.match(js.headers.get('content-type'), /^text\/javascript/);
  assert.equal((await fetch(new URL('package.json', url))).status, 404);
  assert.equal((await fetch(new URL('..%2fMakefile', url))).status, 404);
});

test('the bundled sample loads: 25 sessions and a clean load report', async () => {
  await page.click('#load-sample');
  await page.waitForFunction(() => document.querySelectorAll('#session-list tr[data-session-id]').length === 25);
  assert.equal(await sessionRows().count(), 25);
  assert.equal(await page.textContent('#session-count'), '25 sessions');
  const summary = await page.textContent('#report-list .load-summary');
  assert.match(summary, /25 added/);
  assert.match(summary, /0 failures/);
  // Titles, cwd, event counts and parents come through.
  const row = sessionRows().filter({ has: page.locator(`button[title="${COMPACTED}"]`) });
  assert.equal(await row.locator('td').nth(0).innerText(), '修复分页错误');
  assert.equal(await row.locator('td').nth(1).innerText(), '/home/dev/web-ui');
  assert.equal(await row.locator('td').nth(2).innerText(), '331');
  const child = sessionRows().filter({ has: page.locator('button[title="f53d8cf1-82da-4087-bf7c-5b4dbc8d3434"]') });
  assert.equal(await child.locator('td').nth(3).innerText(), 'Speed up slow query');
});

test('an open session shows shadowed events as shadowed, and its current surface', async () => {
  await page.click(`#session-list button.session-open[title="${COMPACTED}"]`);
  await page.waitForSelector('#timeline-body .events .event');
  assert.equal(await page.textContent('#timeline-heading'), '修复分页错误');
  assert.equal(await page.locator('#timeline-body .events .event').count(), 331);
  const shadowed = page.locator('#timeline-body .events .event[data-surface="shadowed"]');
  assert.equal(await shadowed.count(), 18);
  assert.equal(await page.locator('#timeline-body .events .event.surface-shadowed').count(), 18);
  assert.deepEqual(new Set(await shadowed.locator('.badge').allInnerTexts()), new Set(['shadowed']));
  // Styled differently from current and log-only events.
  const style = (surface) =>
    page.$eval(`#timeline-body .event[data-surface="${surface}"]`, (node) => {
      const s = getComputedStyle(node);
      return `${s.borderLeftStyle} ${s.borderLeftColor} ${s.backgroundImage}`;
    });
  const [current, shadow, logOnly] = [await style('current'), await style('shadowed'), await style('log-only')];
  assert.notEqual(shadow, current);
  assert.notEqual(shadow, logOnly);
  assert.notEqual(current, logOnly);
  // The label filter shows only shadowed events.
  await page.check('input[name="surface-filter"][value="shadowed"]');
  assert.equal(await page.locator('#timeline-body .events .event').count(), 18);
  await page.check('input[name="surface-filter"][value="all"]');
  // The current surface: 16 current events.
  assert.match(await page.textContent('#timeline-body .surface summary'), /Current surface — \d+ events/);
  assert.equal(await page.locator('#timeline-body .surface-events > li').count(), 16);
});

test('search across sessions marks matches and pages through nextCursor', async () => {
  await page.selectOption('#search-scope', 'sessions');
  await page.fill('#search-query', 'tests');
  await page.press('#search-query', 'Enter');
  await page.waitForSelector('#search-results .hit mark');
  const hits = page.locator('#search-results .hit');
  assert.equal(await hits.count(), 10);
  const marks = await page.locator('#search-results .hit mark').allInnerTexts();
  assert.ok(marks.length >= 10);
  for (const mark of marks) assert.equal(mark.toLowerCase(), 'tests');
  assert.ok(await page.isVisible('#search-more'));
  const seen = new Set(await hits.evaluateAll((nodes) => nodes.map((n) => n.dataset.sessionId)));
  while (await page.isVisible('#search-more')) {
    const before = await hits.count();
    await page.click('#search-more');
    await page.waitForFunction((n) => document.querySelectorAll('#search-results .hit').length > n, before);
  }
  const all = await hits.evaluateAll((nodes) => nodes.map((n) => n.dataset.sessionId));
  assert.ok(all.length > 10, `pagination added hits (${all.length})`);
  assert.equal(new Set(all).size, all.length, 'one hit per session, no repeats across pages');
  for (const id of seen) assert.ok(all.includes(id));
  assert.match(await page.textContent('#search-status'), new RegExp(`Showing ${all.length} sessions\\.`));
});

test('search inside the open session, and a hit opens its event', async () => {
  await page.selectOption('#search-scope', 'session');
  await page.waitForFunction(() => document.querySelector('#search-results .hit-open')?.textContent.startsWith('Event #'));
  const ids = await page.locator('#search-results .hit').evaluateAll((nodes) => nodes.map((n) => n.dataset.sessionId));
  assert.ok(ids.length > 0);
  for (const id of ids) assert.equal(id, COMPACTED);
  const seq = await page.locator('#search-results .hit').first().getAttribute('data-seq');
  await page.locator('#search-results .hit-open').first().click();
  await page.waitForSelector(`#timeline-body .event.focused[data-seq="${seq}"]`);
});

test('a superseded search never overwrites the newer one (request counter)', async () => {
  await page.selectOption('#search-scope', 'sessions');
  // Type a query that would match nothing, then at once submit another: only the last counts.
  await page.fill('#search-query', 'zzqx-no-such-text');
  await page.fill('#search-query', 'migrations');
  await page.press('#search-query', 'Enter');
  await page.waitForSelector('#search-results .hit mark');
  await page.waitForTimeout(500); // longer than the typing debounce
  const marks = await page.locator('#search-results .hit mark').allInnerTexts();
  assert.ok(marks.length > 0);
  for (const mark of marks) assert.equal(mark.toLowerCase(), 'migrations');
  assert.doesNotMatch(await page.textContent('#search-status'), /No sessions match/);
});

test('corrupt uploads are reported with their codes and hide nothing else', async () => {
  await page.setInputFiles('#load-files', [
    { name: 'corrupt.zip', mimeType: 'application/zip', buffer: Buffer.from('PK\u0003\u0004 this is not a zip') },
    { name: 'broken.jsonl', mimeType: 'application/octet-stream', buffer: Buffer.from('{"not":"a header"}\n') },
  ]);
  await page.waitForSelector('#report-list .load[data-label="broken.jsonl"]');
  const zip = page.locator('#report-list .load[data-label="corrupt.zip"]');
  assert.equal(await zip.locator('.failures code.code').innerText(), 'SESSION_LOAD_INVALID_ARCHIVE');
  const jsonl = page.locator('#report-list .load[data-label="broken.jsonl"]');
  assert.equal(await jsonl.locator('.failures code.code').innerText(), 'SESSION_LOAD_INVALID_HEADER');
  assert.equal(await sessionRows().count(), 25);
});

test('strict loads refuse the whole file with a code', async () => {
  await page.check('#load-strict');
  await page.setInputFiles('#load-files', [
    { name: 'strict.zip', mimeType: 'application/zip', buffer: Buffer.from('PK\u0003\u0004 nope') },
  ]);
  await page.waitForSelector('#report-list .load[data-label="strict.zip"]');
  assert.equal(
    await page.locator('#report-list .load[data-label="strict.zip"] code.code').innerText(),
    'SESSION_QUERY_PERSISTENCE_FAILED',
  );
  await page.uncheck('#load-strict');
});

test('a picked folder loads through loadEntries', async () => {
  folder = await mkdtemp(join(tmpdir(), 'dsh-viewer-'));
  await copyFile(FIXTURE_LOG, join(folder, 'plain_appends.jsonl'));
  await writeFile(join(folder, 'notes.txt'), 'not a log\n');
  await page.setInputFiles('#load-folder', folder);
  await page.waitForFunction(() => document.querySelectorAll('#session-list tr[data-session-id]').length === 26);
  assert.match(await page.textContent('#report-list .load .load-summary'), /1 added/);
  assert.match(await page.textContent('#report-list .load'), /Not read \(neither a log nor a ZIP\): 1 file\./);
});

test('the page looks right and logged no errors', async () => {
  await page.click(`#session-list button.session-open[title="${COMPACTED}"]`);
  await page.fill('#search-query', 'tests');
  await page.press('#search-query', 'Enter');
  await page.waitForSelector('#search-results .hit mark');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: SCREENSHOT });
  console.log(`# screenshot: ${SCREENSHOT}`);
  assert.deepEqual(problems, []);
});
