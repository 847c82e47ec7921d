// The sessions list: newest first, each with its title, cwd, creation time, live/persisted and
// event count; subagents nested under their parent (a parent → subagent tree); filtered by
// working directory and creation time.

import { el, inSlices, replace, sessionLabel, timeEl } from './dom.js';

const NO_CWD = '\u0000none';

export class SessionList {
  /** Rows are links to `#session=<id>`: opening one is a route change (main.js). */
  constructor({ root, count, cwd, from, to }) {
    Object.assign(this, { root, count, cwd, from, to });
    this.sessions = [];
    this.byId = new Map();
    this.selected = null;
    /** Bumped by every render, so the slices of an older one stop. */
    this.renderTicket = 0;
    /** Settles once the latest render's rows are all in. */
    this.rendered = Promise.resolve();
    for (const input of [cwd, from, to]) input.addEventListener('change', () => this.render());
    root.addEventListener('keydown', (e) => this.#keys(e));
  }

  /**
   * Shows `sessions`; resolves once every row is in. The same list again (a load's end lists
   * what its start listed) changes nothing on the page: rebuilding the rows of a large archive
   * costs the main thread a layout.
   */
  show(sessions) {
    const shown = listKey(sessions);
    if (shown === this.shownKey) return this.rendered;
    this.shownKey = shown;
    this.sessions = sessions;
    this.byId = new Map(sessions.map((s) => [s.id, s]));
    this.#folders([...new Set(sessions.map((s) => s.header.cwd ?? NO_CWD))].sort());
    return this.render();
  }

  /**
   * The folder filter's options after its first ("All folders"), which stays: replacing the
   * selected option would count as a change of the control, and Chromium lays the page out at
   * once on such a change (for autofill), inside the task that made it.
   */
  #folders(cwds) {
    const chosen = this.cwd.value;
    const [all, ...old] = this.cwd.options;
    if (cwds.join('\n') === old.map((o) => o.value).join('\n')) return;
    if (!cwds.includes(chosen) && chosen !== '') this.cwd.value = all.value;
    for (const option of old) option.remove();
    this.cwd.append(...cwds.map((c) => el('option', { value: c, text: c === NO_CWD ? '(no folder)' : c, selected: c === chosen })));
  }

  has(id) {
    return this.byId.has(id);
  }

  get(id) {
    return this.byId.get(id);
  }

  titleOf(id) {
    const s = this.byId.get(id);
    return s ? sessionLabel(s.header, s.title) : null;
  }

  childrenOf(id) {
    return this.sessions.filter((s) => s.header.parentSession === id).sort((a, b) => a.header.createdAt - b.header.createdAt);
  }

  select(id) {
    this.selected = id;
    for (const node of this.root.querySelectorAll('[aria-current]')) node.removeAttribute('aria-current');
    this.root.querySelector(`[data-session-id="${CSS.escape(id)}"] > .session-row`)?.setAttribute('aria-current', 'true');
  }

  #matches(s) {
    const cwd = this.cwd.value;
    if (cwd && (s.header.cwd ?? NO_CWD) !== cwd) return false;
    const from = this.from.valueAsNumber;
    const to = this.to.valueAsNumber;
    if (Number.isFinite(from) && s.header.createdAt < from) return false;
    if (Number.isFinite(to) && s.header.createdAt >= to + 86400000) return false;
    return true;
  }

  render() {
    const shown = this.sessions.filter((s) => this.#matches(s));
    const ids = new Set(shown.map((s) => s.id));
    // A session is a root of the tree when its parent is not shown.
    const roots = shown.filter((s) => !s.header.parentSession || !ids.has(s.header.parentSession));
    const kids = new Map();
    for (const s of shown) {
      if (s.header.parentSession && ids.has(s.header.parentSession)) {
        if (!kids.has(s.header.parentSession)) kids.set(s.header.parentSession, []);
        kids.get(s.header.parentSession).push(s);
      }
    }
    for (const list of kids.values()) list.sort((a, b) => a.header.createdAt - b.header.createdAt);
    const total = this.sessions.length;
    this.count.textContent = shown.length === total ? `${total} session${total === 1 ? '' : 's'}` : `${shown.length} of ${total} sessions`;
    const seen = new Set();
    const item = (s, depth) => {
      if (seen.has(s.id)) return null; // a parent cycle is shown once
      seen.add(s.id);
      const children = (kids.get(s.id) ?? []).map((c) => item(c, depth + 1)).filter(Boolean);
      return el('li', { 'data-session-id': s.id, role: 'none' },
        this.#row(s, depth),
        children.length ? el('ul', { class: 'subagents', role: 'group', 'aria-label': `Subagents of ${sessionLabel(s.header, s.title)}` }, ...children) : null);
    };
    replace(this.root, roots.length ? [] : el('li', { class: 'empty', text: total ? 'No session matches these filters.' : 'No sessions yet.' }));
    this.rendered = this.#fill(roots.map((s) => () => item(s, 0)));
    return this.rendered;
  }

  /**
   * Appends the rows `makers` make, a slice between frames (a large archive's rows, built and
   * laid out in one task, held the page for 200 ms); resolves once all are in, or a newer render
   * took over. The list is `aria-busy` until its rows are all in.
   */
  async #fill(makers) {
    const ticket = ++this.renderTicket;
    this.root.setAttribute('aria-busy', 'true');
    const append = (i) => {
      const row = makers[i]();
      if (row) this.root.append(row);
    };
    if (await inSlices(makers.length, append, () => ticket === this.renderTicket)) this.root.removeAttribute('aria-busy');
  }

  #row(s, depth) {
    const h = s.header;
    const state = s.live && s.persisted ? 'live + persisted' : s.live ? 'live' : 'persisted';
    return el('a', {
      class: 'session-row',
      href: `#session=${encodeURIComponent(s.id)}`,
      title: s.id,
      'data-depth': depth,
      'aria-current': s.id === this.selected ? 'true' : null,
    },
    el('span', { class: 'session-title', text: sessionLabel(h, s.title) }),
    el('span', { class: 'session-meta' },
      depth ? el('span', { class: 'tag tag-sub', text: h.agentPreset ?? 'subagent' }) : null,
      el('span', { class: 'path', text: h.cwd ?? '(no folder)' })),
    el('span', { class: 'session-meta muted dotted' },
      timeEl(h.createdAt),
      s.events === null ? null : el('span', { text: `${s.events} events` }),
      el('span', { class: s.live ? 'tag tag-live' : 'state', text: state })));
  }

  #keys(e) {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    const rows = [...this.root.querySelectorAll('.session-row')];
    const at = rows.indexOf(document.activeElement);
    if (at < 0) return;
    e.preventDefault();
    rows[Math.max(0, Math.min(rows.length - 1, at + (e.key === 'ArrowDown' ? 1 : -1)))].focus();
  }
}

/** What the list shows of each session, in order: equal keys render equal lists. */
function listKey(sessions) {
  return JSON.stringify(sessions.map((s) => [s.id, s.title, s.events, s.live, s.persisted, s.header]));
}
