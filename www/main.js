// The archive viewer: the library in a Web Worker (through the package's worker entry) wired
// to the opener, load report, sessions list, session view, search and cite composer. Routes
// are the URL hash: `#session=<id>` and `#session=<id>&seq=<n>`. Nothing leaves the page.

import { Engine } from './components/engine.js';
import { Opener, emptyState } from './components/open.js';
import { Diagnostics } from './components/diagnostics.js';
import { SessionList } from './components/sessions.js';
import { SessionView } from './components/transcript.js';
import { SearchPanel } from './components/search.js';
import { Composer } from './components/cite.js';
import { el, errorInfo, replace } from './components/dom.js';

const $ = (id) => document.getElementById(id);
const status = (text) => ($('app-status').textContent = text);

function theme() {
  const order = ['system', 'light', 'dark'];
  const button = $('theme');
  const apply = (mode) => {
    if (mode === 'system') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = mode;
    button.setAttribute('aria-label', `Colour theme: ${mode}`);
    button.title = `Colour theme: ${mode}`;
  };
  let mode = localStorage.getItem('theme') ?? 'system';
  apply(mode);
  button.addEventListener('click', () => {
    mode = order[(order.indexOf(mode) + 1) % order.length];
    localStorage.setItem('theme', mode);
    apply(mode);
  });
}

/** `{id, seq}` from `#session=<id>&seq=<n>`, or null. */
function route() {
  const params = new URLSearchParams(location.hash.slice(1));
  const id = params.get('session');
  if (!id) return null;
  const seq = params.has('seq') ? Number(params.get('seq')) : undefined;
  return { id, seq: Number.isInteger(seq) ? seq : undefined };
}

async function main() {
  theme();
  let engine;
  try {
    engine = await Engine.create();
  } catch (error) {
    const { code, message } = errorInfo(error);
    replace($('session-view'), el('p', { class: 'error', role: 'alert' }, `The viewer could not start (${code}): ${message}`));
    return;
  }
  const view = $('session-view');
  const diagnostics = new Diagnostics({ root: $('diagnostics'), summary: $('diag-summary'), badge: $('diag-badge') });
  const sessions = new SessionList({ root: $('session-list'), count: $('session-count'), cwd: $('session-cwd'), from: $('session-from'), to: $('session-to') });
  const session = new SessionView({ root: view, engine, sessions });
  const search = new SearchPanel({
    engine,
    sessions,
    currentSession: () => session.sessionId,
    onOpenHit: (id, seq) => go(id, seq),
    onActive: (active) => ($('results-panel').hidden = !active),
  });
  const composer = new Composer({ engine, sessions, currentSession: () => session.sessionId });

  function go(id, seq) {
    const hash = `#session=${encodeURIComponent(id)}${seq === undefined ? '' : `&seq=${seq}`}`;
    if (location.hash === hash) openRoute();
    else location.hash = hash;
  }

  async function openRoute() {
    const r = route();
    if (!r || !sessions.has(r.id)) {
      if (r && sessions.sessions.length) replace(view, el('p', { class: 'error', role: 'alert' }, el('code', { class: 'code', text: 'SESSION_QUERY_SESSION_NOT_FOUND' }), ' No loaded session has the id ', el('span', { class: 'mono', text: r.id })));
      return;
    }
    const changed = session.sessionId !== r.id;
    sessions.select(r.id);
    if (await session.open(r.id, r.seq)) {
      document.body.dataset.session = r.id;
      search.setSessionOpen(true);
      composer.setAgent(r.id);
      if (changed && search.scope() === 'session') search.refresh();
      if (r.seq === undefined && changed) view.focus({ preventScroll: true });
    }
  }

  /** The archive is decoded and its index is building: list it, and let searches in. */
  async function listed(entry) {
    // The worker answers the listing between build steps; the marks let a test tell that
    // wait from a stall of the build.
    performance.mark('viewer:listing');
    let list;
    try {
      list = await engine.sessions();
    } catch (error) {
      diagnostics.add({ name: 'listing sessions', error: errorInfo(error) });
      return;
    } finally {
      performance.mark('viewer:listing-done');
    }
    document.body.dataset.index = 'indexing';
    await sessions.show(list);
    // The load may have ended while the rows went in: its end has said the rest.
    if (document.body.dataset.index !== 'indexing') return;
    document.body.dataset.listed = String(Number(document.body.dataset.listed ?? 0) + 1);
    status(`Loaded ${entry.name}: ${sessions.sessions.length} sessions; indexing, searches answer meanwhile`);
    if (!session.sessionId && !route()) showLoaded();
  }

  /** The "N sessions loaded" welcome, unless the view shows it already (a load's end repeats its start). */
  function showLoaded() {
    const count = sessions.sessions.length;
    if (view.querySelector(':scope > .welcome > h2')?.textContent !== loadedTitle(count)) session.clear(loadedState(count));
  }

  async function loaded(entry) {
    diagnostics.add(entry);
    if (entry.error) {
      status(`Loading ${entry.name} failed: ${entry.error.code}`);
      return;
    }
    try {
      const list = await engine.sessions();
      performance.mark('viewer:listed');
      await sessions.show(list);
      performance.mark('viewer:shown');
    } catch (error) {
      diagnostics.add({ name: 'listing sessions', error: errorInfo(error) });
    }
    status(`Loaded ${entry.name}: ${sessions.sessions.length} sessions`);
    document.body.dataset.loads = String(Number(document.body.dataset.loads ?? 0) + 1);
    document.body.dataset.index = entry.index.how;
    if (session.sessionId && sessions.has(session.sessionId)) await session.reload();
    else if (route()) await openRoute();
    else if (!session.sessionId) showLoaded();
    if (search.request) {
      // Page 1 is re-run on the next keystroke; a "more" from the old corpus shows the stale cursor.
      $('search-status').textContent = 'The archive changed since this search.';
    }
  }

  new Opener({ engine, onLoaded: loaded, onListed: listed, onStatus: status });
  window.addEventListener('hashchange', openRoute);
  keyboard(search);

  replace(view, emptyState());
  diagnostics.render();
  sessions.show([]);
  search.setSessionOpen(false);
  document.body.dataset.ready = 'true';
  status('Ready');
  if (new URLSearchParams(location.search).has('sample')) $('load-sample').click();
}

function loadedTitle(count) {
  return `${count} session${count === 1 ? '' : 's'} loaded`;
}

function loadedState(count) {
  return el('div', { class: 'welcome' },
    el('h2', { text: loadedTitle(count) }),
    el('p', { class: 'muted', text: 'Pick one from the list, or search: every message, tool result and summary is indexed.' }));
}

/** Ctrl/⌘+K focuses search; Esc goes back to it (or clears it when already there). */
function keyboard(search) {
  document.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k') {
      e.preventDefault();
      search.input.focus();
      search.input.select();
    } else if (e.key === 'Escape') {
      if (document.activeElement === search.input) {
        if (search.input.value) {
          search.input.value = '';
          search.run();
        }
      } else if (!e.target.closest?.('details[open] summary')) {
        search.input.focus();
      }
    }
  });
}

main();
