// DOM helpers shared by the viewer's components: elements are built node by node and every
// piece of archive data goes in through `textContent`, never through HTML parsing.

/**
 * Creates an element. `props` sets attributes (`class`, `aria-*`, `data-*`, …) and a few
 * properties (`text` → textContent, `on*` → listeners, booleans like `hidden`/`disabled`);
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
 * A snippet with its match ranges (`{start, end}` in UTF-16 code units, as the library gives
 * them with `highlights: true`) wrapped in <mark> elements. Ranges out of order, overlapping
 * or out of bounds are clamped rather than trusted.
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

/** A session id shortened for display (the full id stays in a tooltip). */
export function shortId(id) {
  return id.length > 13 ? `${id.slice(0, 8)}…` : id;
}

/** Milliseconds since the epoch as a readable local date and time (`short`: to the minute). */
export function formatTime(ms, { short = false } = {}) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '—';
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return '—';
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: short ? 'short' : 'medium' });
}

/** A session's display name: its title, else "Subagent <id>" or its short id. */
export function sessionLabel(header, title) {
  if (title) return title;
  return header.parentSession ? `Subagent ${shortId(header.id)}` : `Session ${shortId(header.id)}`;
}

/** The badge naming an event's surface label; the word is always shown, colour only helps. */
export function surfaceBadge(surface) {
  return el('span', { class: `badge badge-${surface}`, text: surface });
}
