// DOM helpers shared by the viewer's components: elements are built node by node and every
// piece of archive data goes in through text nodes, never through HTML parsing.

/**
 * Creates an element. `props` sets attributes (`class`, `aria-*`, `data-*`, …) and a few
 * properties (`text` → textContent, `on*` → listeners, `true` → an empty attribute);
 * children are nodes or strings (strings become text nodes).
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') node.textContent = String(value);
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, '');
    else node.setAttribute(key, String(value));
  }
  append(node, children);
  return node;
}

/** Appends nodes and strings (as text) to `parent`, skipping null/undefined/false. */
export function append(parent, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Removes every child of `node`, then appends `children`. */
export function replace(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

/**
 * A snippet with its match ranges (`{start, end}` in UTF-16 units, as the library gives them
 * with `highlights: true`) wrapped in <mark>. Ranges out of order, overlapping or out of
 * bounds are clamped rather than trusted.
 */
export function highlighted(snippet, highlights = []) {
  const fragment = document.createDocumentFragment();
  const ranges = [...highlights]
    .map(({ start, end }) => [Math.max(0, start | 0), Math.min(snippet.length, end | 0)])
    .filter(([start, end]) => end > start)
    .sort((a, b) => a[0] - b[0]);
  let at = 0;
  for (const [start, end] of ranges) {
    if (end <= at) continue;
    const from = Math.max(start, at);
    if (from > at) fragment.append(document.createTextNode(snippet.slice(at, from)));
    fragment.append(el('mark', { text: snippet.slice(from, end) }));
    at = end;
  }
  if (at < snippet.length) fragment.append(document.createTextNode(snippet.slice(at)));
  return fragment;
}

/** Resolves after the next frame is drawn: work split in slices lets the page render between them. */
export const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

/** Main-thread time per slice of rendering (a long task starts at 50 ms, and layout follows). */
const SLICE_MS = 16;

/**
 * Calls `step(i)` for each i below `count`, in slices of SLICE_MS with a frame between them,
 * while `current()` holds (a newer render stops an older one); resolves to whether every step ran.
 */
export async function inSlices(count, step, current) {
  let next = 0;
  while (next < count) {
    const started = performance.now();
    while (next < count && performance.now() - started < SLICE_MS) step(next++);
    if (next < count) await nextFrame();
    if (!current()) return false;
  }
  return true;
}

/** A session id shortened for display (the full id stays in a tooltip). */
export function shortId(id) {
  return id.length > 13 ? `${id.slice(0, 8)}…` : id;
}

let formats = null;

/**
 * The date formats, made when the page is first idle (or at first use, if sooner): the first
 * `Intl.DateTimeFormat` loads the locale's data, 60 ms of the page's start on this machine.
 */
function dateFormats() {
  formats ??= {
    dateTime: new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }),
    timeOnly: new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' }),
  };
  return formats;
}
if (typeof requestIdleCallback === 'function') requestIdleCallback(dateFormats);

/** Milliseconds since the epoch as a readable local date and time. */
export function formatTime(ms, { clock = false } = {}) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '—';
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return '—';
  const { dateTime, timeOnly } = dateFormats();
  return (clock ? timeOnly : dateTime).format(d);
}

/** `<time>` with an ISO 8601 machine value. */
export function timeEl(ms, options) {
  const valid = typeof ms === 'number' && Number.isFinite(ms) && !Number.isNaN(new Date(ms).getTime());
  return el('time', { datetime: valid ? new Date(ms).toISOString() : null, text: formatTime(ms, options) });
}

export function formatBytes(n) {
  if (!Number.isFinite(n)) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** A session's display name: its title, else "Subagent <id>" or "Session <id>". */
export function sessionLabel(header, title) {
  if (title) return title;
  return header.parentSession ? `Subagent ${shortId(header.id)}` : `Session ${shortId(header.id)}`;
}

/** The badge naming an event's surface label; the word is always shown, colour only helps. */
export function surfaceBadge(surface) {
  return el('span', { class: `badge badge-${surface}`, title: SURFACE_HINT[surface], text: surface });
}

const SURFACE_HINT = {
  current: 'The model sees this event now',
  shadowed: 'Replaced on the model surface (by a compaction or prune); kept in the log',
  'log-only': 'Recorded in the log only; never part of the model surface',
};

/** `{code, message}` of any thrown value (`VIEWER_ERROR` when it has no stable code). */
export function errorInfo(error) {
  return {
    code: typeof error?.code === 'string' ? error.code : 'VIEWER_ERROR',
    message: error?.message ? String(error.message) : String(error),
  };
}

/** An error line: its code in monospace, then its message. */
export function errorLine(error, prefix) {
  const { code, message } = errorInfo(error);
  return el('p', { class: 'error', role: 'alert' }, prefix ? `${prefix}: ` : null, el('code', { class: 'code', text: code }), ' ', message);
}

/** Copies text to the clipboard; resolves true when it worked. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** A button that copies `text()` and says so for a moment. */
export function copyButton(label, text) {
  const button = el('button', { type: 'button', class: 'ghost small' , text: label });
  button.addEventListener('click', async () => {
    const ok = await copyText(text());
    button.textContent = ok ? 'Copied' : 'Copy failed';
    setTimeout(() => (button.textContent = label), 1200);
  });
  return button;
}

/** Runs `fn` at most once per `ms` after the last call. */
export function debounce(fn, ms) {
  let timer = null;
  const run = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
  run.cancel = () => clearTimeout(timer);
  return run;
}
