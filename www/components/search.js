// Full-text search: `searchSessions` across every session or `searchEvents` inside the open
// one, with highlighted snippets, "more results" paging through `nextCursor`, and a request
// counter so a slow or superseded request never overwrites newer results.

import { errorInfo } from '../archive.js';
import { el, highlighted, replace, sessionLabel, surfaceBadge } from './dom.js';

const PAGE = 10;
const DEBOUNCE_MS = 250;
const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));

export class SearchPanel {
  constructor({ form, input, scope, surface, status, results, more, archive, titleOf, currentSession, onOpenHit }) {
    Object.assign(this, { form, input, scope, surface, status, results, more, archive, titleOf, currentSession, onOpenHit });
    /** Bumped by every new search; a response whose ticket is no longer current is dropped. */
    this.ticket = 0;
    this.timer = null;
    this.page = null;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.run();
    });
    input.addEventListener('input', () => this.schedule());
    scope.addEventListener('change', () => this.run());
    surface.addEventListener('change', () => this.run());
    more.addEventListener('click', () => this.loadMore());
  }

  /** Enables the "open session" scope once a session is open. */
  setSessionOpen(open) {
    const option = this.scope.querySelector('option[value="session"]');
    option.disabled = !open;
    if (!open && this.scope.value === 'session') this.scope.value = 'sessions';
  }

  schedule() {
    clearTimeout(this.timer);
    this.ticket += 1; // whatever is in flight is already stale
    this.timer = setTimeout(() => this.run(), DEBOUNCE_MS);
  }

  /** Re-runs the current query (after a load or when the open session changes). */
  refresh() {
    if (this.input.value.trim() !== '') this.run();
  }

  #request(cursor) {
    const query = this.input.value;
    const labels = this.surface.value === 'any' ? null : [this.surface.value];
    if (this.scope.value === 'session' && this.currentSession()) {
      const request = { sessionId: this.currentSession(), query, limit: PAGE, highlights: true };
      if (labels) request.filters = [{ kind: 'surface', values: labels }];
      if (cursor) request.cursor = cursor;
      return ['searchEvents', request];
    }
    const request = { query, limit: PAGE, highlights: true };
    if (labels) request.eventFilters = [{ kind: 'surface', values: labels }];
    if (cursor) request.cursor = cursor;
    return ['searchSessions', request];
  }

  async run() {
    clearTimeout(this.timer);
    const ticket = ++this.ticket;
    if (this.input.value.trim() === '') {
      this.page = null;
      replace(this.results);
      this.more.hidden = true;
      this.#status('');
      return;
    }
    this.#status('Searching…');
    await nextFrame();
    if (ticket !== this.ticket) return;
    const [method, request] = this.#request(null);
    let page;
    try {
      page = this.archive.call(method, request);
    } catch (error) {
      if (ticket === this.ticket) this.#fail(error);
      return;
    }
    if (ticket !== this.ticket) return;
    this.page = { method, request, shown: 0, nextCursor: page.nextCursor ?? null };
    replace(this.results);
    this.#append(page);
  }

  async loadMore() {
    if (!this.page?.nextCursor) return;
    const ticket = this.ticket;
    const { method, request, nextCursor } = this.page;
    this.more.disabled = true;
    await nextFrame();
    if (ticket !== this.ticket) return;
    let page;
    try {
      page = this.archive.call(method, { ...request, cursor: nextCursor });
    } catch (error) {
      if (ticket === this.ticket) this.#fail(error);
      return;
    } finally {
      this.more.disabled = false;
    }
    if (ticket !== this.ticket) return;
    this.page.nextCursor = page.nextCursor ?? null;
    this.#append(page);
  }

  #append(page) {
    const method = this.page.method;
    const hits =
      method === 'searchSessions'
        ? page.items.map((item) => this.#sessionHit(item))
        : page.items.map((hit) => this.#eventHit(hit));
    this.results.append(...hits);
    this.page.shown += page.items.length;
    this.more.hidden = !this.page.nextCursor;
    const what = method === 'searchSessions' ? 'sessions' : 'events in this session';
    const n = this.page.shown;
    this.#status(
      n === 0
        ? `No ${what} match “${this.page.request.query.trim()}”.`
        : `Showing ${n} ${n === 1 ? what.replace('sessions', 'session').replace('events', 'event') : what}${
            this.page.nextCursor ? ', more available' : ''
          }.`,
    );
  }

  #sessionHit({ header, bestMatch }) {
    const title = sessionLabel(header, this.titleOf(header.id));
    return el(
      'li',
      { class: 'hit', 'data-session-id': header.id, 'data-seq': bestMatch.seq },
      el(
        'div',
        { class: 'hit-head' },
        el('button', {
          type: 'button',
          class: 'link hit-open',
          title: header.id,
          text: title,
          onclick: () => this.onOpenHit(header.id, bestMatch.seq),
        }),
        el('span', { class: 'path muted', text: header.cwd ?? '(no cwd)' }),
      ),
      this.#match(bestMatch),
    );
  }

  #eventHit(hit) {
    return el(
      'li',
      { class: 'hit', 'data-session-id': hit.sessionId, 'data-seq': hit.seq },
      el(
        'div',
        { class: 'hit-head' },
        el('button', {
          type: 'button',
          class: 'link hit-open',
          text: `Event #${hit.seq}`,
          onclick: () => this.onOpenHit(hit.sessionId, hit.seq),
        }),
      ),
      this.#match(hit),
    );
  }

  #match(hit) {
    return el(
      'div',
      { class: 'match' },
      el(
        'div',
        { class: 'event-meta' },
        el('span', { class: 'seq', text: `#${hit.seq}` }),
        surfaceBadge(hit.surface),
        el('span', { class: 'type', text: hit.type }),
      ),
      el('p', { class: 'snippet' }, highlighted(hit.snippet ?? '', hit.highlights ?? [])),
    );
  }

  #fail(error) {
    const { code, message } = errorInfo(error);
    this.page = null;
    replace(this.results);
    this.more.hidden = true;
    replace(this.status, el('span', { class: 'error' }, el('code', { class: 'code', text: code }), ' ', message));
  }

  #status(text) {
    this.status.textContent = text;
  }
}
