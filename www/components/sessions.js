// The session list: title, working directory, event count, parent and creation time per
// session, newest first; choosing one opens it in the timeline.

import { el, formatTime, replace, sessionLabel, shortId } from './dom.js';

export class SessionList {
  /** `root` holds the table; `count` shows how many sessions; `onOpen(id)` opens one. */
  constructor({ root, count, onOpen }) {
    this.root = root;
    this.count = count;
    this.onOpen = onOpen;
    this.sessions = [];
    this.selected = null;
  }

  /** Session ids → titles, for other views (search hits, parents). */
  titleOf(id) {
    return this.sessions.find((s) => s.header.id === id)?.title ?? null;
  }

  has(id) {
    return this.sessions.some((s) => s.header.id === id);
  }

  show(sessions) {
    this.sessions = sessions;
    this.count.textContent = `${sessions.length} ${sessions.length === 1 ? 'session' : 'sessions'}`;
    if (sessions.length === 0) {
      replace(this.root, el('p', { class: 'empty', text: 'No sessions loaded.' }));
      return;
    }
    const rows = sessions.map((s) => this.#row(s));
    replace(
      this.root,
      el(
        'table',
        { class: 'sessions' },
        el('caption', { class: 'visually-hidden', text: 'Loaded sessions, newest first' }),
        el(
          'thead',
          {},
          el('tr', {}, ...['Title', 'Working directory', 'Events', 'Parent', 'Created'].map((h) => el('th', { scope: 'col', text: h }))),
        ),
        el('tbody', {}, ...rows),
      ),
    );
    this.select(this.selected);
  }

  /** Marks the open session's row. */
  select(id) {
    this.selected = id;
    for (const row of this.root.querySelectorAll('tr[data-session-id]')) {
      if (row.dataset.sessionId === id) row.setAttribute('aria-current', 'true');
      else row.removeAttribute('aria-current');
    }
  }

  #row({ header, title, events, live }) {
    const parent = header.parentSession;
    const parentCell = parent
      ? this.has(parent)
        ? el('button', {
            type: 'button',
            class: 'link',
            title: parent,
            text: this.titleOf(parent) ?? shortId(parent),
            onclick: () => this.onOpen(parent),
          })
        : el('span', { class: 'mono muted', title: `${parent} (not loaded)`, text: shortId(parent) })
      : el('span', { class: 'muted', text: '—' });
    const label = sessionLabel(header, title);
    return el(
      'tr',
      { 'data-session-id': header.id },
      el(
        'td',
        {},
        el('button', {
          type: 'button',
          class: `link session-open${title ? '' : ' untitled'}`,
          title: header.id,
          text: label,
          onclick: () => this.onOpen(header.id),
        }),
        header.agentPreset ? el('span', { class: 'tag', text: header.agentPreset }) : null,
        live ? el('span', { class: 'tag', text: 'live' }) : null,
      ),
      el('td', { class: 'path', text: header.cwd ?? '(no cwd)' }),
      el('td', { class: 'num', text: events ?? '—' }),
      el('td', {}, parentCell),
      el('td', { class: 'nowrap', text: formatTime(header.createdAt, { short: true }) }),
    );
  }
}
