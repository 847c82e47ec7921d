// Shared by the viewer's browser tests: serve.mjs on an ephemeral port, Debian's Chromium
// through playwright-core (no downloaded browser), a fresh page per test that records every
// console error, page error, failed request and request outside the page's origin, and
// screenshots in light and dark at 360 and 1440 px under target/e2e/.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../serve.mjs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SHOTS = join(ROOT, 'target', 'e2e');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const FLAGS = [
  '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-quic', '--no-first-run',
];

export async function startBrowser() {
  const { server, url } = await startServer({ port: 0 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  await mkdir(SHOTS, { recursive: true });
  return {
    url,
    browser,
    async close() {
      await browser.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A new page (its own context, so its own IndexedDB unless `context` is given) with checks. */
export async function openPage(env, { context, path = '', viewport = { width: 1440, height: 900 } } = {}) {
  const ctx = context ?? (await env.browser.newContext({ viewport }));
  const page = await ctx.newPage();
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.__longTasks.push({ start: entry.startTime, duration: entry.duration });
    }).observe({ type: 'longtask', buffered: true });
    // What a long frame spent its time on (scripts by source, style and layout, paint), so a
    // failed bound says whether page code or the browser's own work held the thread.
    window.__longFrames = [];
    new PerformanceObserver((list) => {
      for (const f of list.getEntries()) {
        const ms = (v) => Math.round(v);
        window.__longFrames.push({
          at: ms(f.startTime), ms: ms(f.duration), blocking: ms(f.blockingDuration),
          styleAndLayout: f.styleAndLayoutStart ? ms(f.startTime + f.duration - f.styleAndLayoutStart) : 0,
          scripts: f.scripts.map((s) => `${s.invoker} ${s.sourceURL.split('/').pop()}:${s.sourceFunctionName || '?'} ${ms(s.duration)} ms`),
        });
      }
    }).observe({ type: 'long-animation-frame', buffered: true });
  });
  const problems = [];
  const origin = new URL(env.url).origin;
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`console ${msg.type()}: ${msg.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));
  page.on('response', (res) => res.status() >= 400 && problems.push(`HTTP ${res.status()}: ${res.url()}`));
  ctx.on('request', (req) => {
    const u = req.url();
    if (!u.startsWith(`${origin}/`) && !u.startsWith('data:') && !u.startsWith('blob:')) problems.push(`request outside the origin: ${u}`);
  });
  page.on('dialog', (dialog) => {
    problems.push(`dialog opened: ${dialog.message()}`);
    dialog.dismiss();
  });
  await page.goto(env.url + path);
  await page.waitForSelector('body[data-ready="true"]');
  return {
    page,
    context: ctx,
    problems,
    /** No console error, no failed or off-origin request so far. */
    assertClean() {
      assert.deepEqual(problems, [], problems.join('\n'));
    },
    async close() {
      if (!context) await ctx.close();
      else await page.close();
    },
  };
}

/** Forgets the long tasks and frames `page` recorded so far: what follows is measured alone. */
export function clearLongTasks(page) {
  return page.evaluate(() => {
    window.__longTasks.length = 0;
    window.__longFrames.length = 0;
  });
}

/**
 * Runs `scenario(t)` on a fresh page and checks that no main-thread task took over `boundMs`;
 * resolves to `{ t, value }` (the page, still open, and what the scenario returned).
 *
 * A long task is wall-clock time, and a shared machine can stall the renderer for a moment
 * that no page code causes (the CI host once turned the sample's first CJK render into one
 * 528 ms task). Page code that blocks the thread blocks it in every attempt, so the scenario
 * runs in up to `attempts` fresh pages and one clean run passes; when none is clean, the
 * failure lists every attempt's long tasks and what their frames ran. A failed assertion
 * inside the scenario fails at once: only the timing is retried.
 */
export async function withinTaskBound(env, scenario, { boundMs = 100, attempts = 3 } = {}) {
  const seen = [];
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    const t = await openPage(env);
    await clearLongTasks(t.page);
    const value = await scenario(t);
    const { tasks, frames } = await t.page.evaluate((bound) => ({
      tasks: window.__longTasks.map((l) => Math.round(l.duration)).filter((d) => d > bound),
      frames: window.__longFrames.filter((f) => f.ms > bound),
    }), boundMs);
    if (tasks.length === 0) return { t, value };
    seen.push(`attempt ${attempt}: tasks ${tasks.join(', ')} ms; frames ${JSON.stringify(frames)}`);
    await t.close();
  }
  assert.fail(`main-thread tasks over ${boundMs} ms in each of ${attempts} fresh pages:\n${seen.join('\n')}`);
}

/**
 * Light and dark, 360 and 1440 px wide, each with `focus` (a selector) scrolled into view;
 * restores the page's viewport and scheme afterwards.
 */
export async function screenshots(page, name, { focus } = {}) {
  const original = page.viewportSize();
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [360, 1440]) {
      await page.setViewportSize({ width, height: width === 360 ? 780 : 900 });
      if (focus) await page.locator(focus).first().evaluate((n) => n.scrollIntoView({ block: 'start' }));
      await page.screenshot({ path: join(SHOTS, `${name}-${scheme}-${width}.png`) });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(original);
}

/** Waits until the page has loaded `n` times (each load bumps body[data-loads]). */
export async function waitForLoads(page, n) {
  await page.waitForFunction((count) => Number(document.body.dataset.loads ?? 0) >= count, n, { timeout: 60000 });
}

/**
 * Drops `files` ({path, base64}) on the page as one folder would arrive: DataTransfer items
 * whose `webkitGetAsEntry()` gives FileSystemDirectoryEntry-shaped objects (a real OS drag
 * cannot be scripted over CDP, so the entries are built in the page from real Files; the
 * viewer's drop handler walks them through the same API: createReader/readEntries/file).
 */
export async function dropFolder(page, folderName, files) {
  await page.evaluate(({ folderName, files }) => {
    const decode = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const fileEntry = (path, file) => ({ isFile: true, isDirectory: false, name: file.name, fullPath: `/${path}`, file: (ok) => setTimeout(() => ok(file)) });
    const dirEntry = (path, children) => ({
      isFile: false, isDirectory: true, name: path.split('/').pop(), fullPath: `/${path}`,
      createReader() {
        let given = false;
        // Like Chromium: children in batches, then an empty batch.
        return { readEntries: (ok) => setTimeout(() => { ok(given ? [] : children); given = true; }) };
      },
    });
    const tree = new Map();
    for (const { path, base64 } of files) {
      const parts = path.split('/');
      for (let i = 1; i < parts.length; i++) {
        const dir = [folderName, ...parts.slice(0, i - 1)].join('/');
        const child = [folderName, ...parts.slice(0, i)].join('/');
        if (!tree.has(dir)) tree.set(dir, new Map());
        if (!tree.get(dir).has(child)) tree.get(dir).set(child, null);
      }
      const dir = [folderName, ...parts.slice(0, -1)].join('/');
      if (!tree.has(dir)) tree.set(dir, new Map());
      tree.get(dir).set(`${folderName}/${path}`, new File([decode(base64)], parts.at(-1)));
    }
    const build = (path) => dirEntry(path, [...(tree.get(path) ?? new Map())].map(([child, file]) => (file ? fileEntry(child, file) : build(child))));
    const root = build(folderName);
    const event = new DragEvent('drop', { bubbles: true, cancelable: true });
    Object.defineProperty(event, 'dataTransfer', {
      value: { types: ['Files'], items: [{ kind: 'file', webkitGetAsEntry: () => root }], files: [] },
    });
    document.body.dispatchEvent(event);
  }, { folderName, files });
}
