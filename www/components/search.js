// Search as you type: `searchSessions` across every session or `searchEvents` inside the open
// one, debounced; each new request aborts the one in flight (AbortSignal through the worker)
// and carries a ticket, so a superseded answer never overwrites a newer one. Chips for the
// three surface labels, type and time filters, highlighted snippets, "More results" through
// cursors, and a clear message when the corpus changed and a cursor went stale.

import { debounce, el, errorInfo, highlighted, replace, sessionLabel, surfaceBadge, timeEl } from './dom.js';

const PAGE = 10;
const DEBOUNCE_MS = 180;
const LABELS = ['current', 'shadowed', 'log-only'];

export class SearchPanel {
  constructor({ engine, sessions, currentSession, onOpenHit, onActive }) {
    Object.assign(this, { engine, sessions, currentSession, onOpenHit, onActive });
    const $ = (id) => document.getElementById(id);
    this.input = $('search');
    this.results = $('search-results');
    this.status = $('search-status');
    this.more = $('search-more');
    this.type = $('search-type');
    this.from = $('search-from');
    this.to = $('search-to');
    this.scopeInputs = [...document.querySelectorAll('input[name="search-scope"]')];
    this.chips = [...document.querySelectorAll('.chip[data-surface]')];
    this.ticket = 0;
    this.controller = null;
    this.request = null;
    this.schedule = debounce(() => this.run(), DEBOUNCE_MS);
    this.input.addEventListener('input', () => {
      this.ticket += 1; // whatever is in flight is already stale
      this.schedule();
    });
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowDown') {
        e.preventDefault();
        this.#hits()[0]?.focus();
      } else if (e.key === 'Enter') {
        e.preventDefault();
        this.schedule.cancel();
        if (this.#hits().length && this.request?.query === this.input.value) this.#hits()[0].click();
        else this.run();
      }
    });
    for (const chip of this.chips) {
      chip.addEventListener('click', () => {
        chip.setAttribute('aria-pressed', String(chip.getAttribute('aria-pressed') !== 'true'));
        this.run();
      });
    }
    for (const input of [this.type, this.from, this.to, ...this.scopeInputs]) input.addEventListener('change', () => this.run());
    this.more.addEventListener('click', () => this.run({ more: true }));
    this.results.addEventListener('keydown', (e) => this.#keys(e));
  }

  #hits() {
    return [...this.results.querySelectorAll('.hit')];
  }

  #keys(e) {
    const hits = this.#hits();
    const at = hits.indexOf(document.activeElement);
    if (at < 0) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const next = at + (e.key === 'ArrowDown' ? 1 : -1);
      if (next < 0) this.input.focus();
      else hits[Math.min(hits.length - 1, next)].focus();
    } else if (e.key === 'Home' || e.key === 'End') {
      e.preventDefault();
      hits[e.key === 'Home' ? 0 : hits.length - 1].focus();
    }
  }

  /** The open session changed or the corpus did: re-run what is shown. */
  refresh() {
    if (this.input.value.trim() !== '') this.run();
  }

  scope() {
    const chosen = this.scopeInputs.find((i) => i.checked)?.value ?? 'all';
    return chosen === 'session' && this.currentSession() ? 'session' : 'all';
  }

  setSessionOpen(open) {
    const input = this.scopeInputs.find((i) => i.value === 'session');
    input.disabled = !open;
    if (!open) this.scopeInputs.find((i) => i.value === 'all').checked = true;
  }

  #filters() {
    const filters = [];
    const labels = this.chips.filter((c) => c.getAttribute('aria-pressed') === 'true').map((c) => c.dataset.surface);
    if (labels.length && labels.length < LABELS.length) filters.push({ kind: 'surface', values: labels });
    if (this.type.value) filters.push({ kind: 'type', values: [this.type.value] });
    const from = this.from.valueAsNumber;
    const to = this.to.valueAsNumber;
    if (Number.isFinite(from) || Number.isFinite(to)) {
      const range = { kind: 'time' };
      if (Number.isFinite(from)) range.from = from + new Date(from).getTimezoneOffset() * 60000;
      if (Number.isFinite(to)) range.to = to + new Date(to).getTimezoneOffset() * 60000 + 86400000 - 1;
      filters.push(range);
    }
    return filters;
  }

  #build(cursor) {
    const query = this.input.value;
    const filters = this.#filters();
    if (this.scope() === 'session') {
      const request = { sessionId: this.currentSession(), query, limit: PAGE, highlights: true };
      if (filters.length) request.filters = filters;
      if (cursor) request.cursor = cursor;
      return { method: 'searchEvents', request, query };
    }
    const request = { query, limit: PAGE, highlights: true };
    if (filters.length) request.eventFilters = filters;
    if (cursor) request.cursor = cursor;
    return { method: 'searchSessions', request, query };
  }

  async run({ more = false } = {}) {
    this.schedule.cancel();
    const ticket = ++this.ticket;
    this.controller?.abort();
    if (!more && this.input.value.trim() === '') {
      this.request = null;
      replace(this.results);
      this.status.textContent = '';
      this.more.hidden = true;
      this.onActive(false);
      return;
    }
    this.onActive(true);
    const controller = new AbortController();
    this.controller = controller;
    const call = this.#build(more ? this.nextCursor : undefined);
    this.results.setAttribute('aria-busy', 'true');
    if (!more) this.status.textContent = 'Searching…';
    try {
      const page = await this.engine.call(call.method, call.request, { signal: controller.signal });
      if (ticket !== this.ticket) return;
      this.request = call;
      this.#show(page, call, more);
    } catch (error) {
      if (ticket !== this.ticket) return;
      this.#failed(error, more);
    } finally {
      if (ticket === this.ticket) this.results.removeAttribute('aria-busy');
    }
  }

  #show(page, call, more) {
    const items = page.items.map((item) => (call.method === 'searchSessions' ? this.#sessionHit(item) : this.#eventHit(item, page.session)));
    if (more) this.results.append(...items);
    else replace(this.results, ...items);
    const shown = this.results.childElementCount;
    this.nextCursor = page.nextCursor;
    this.more.hidden = !page.nextCursor;
    const one = shown === 1 && !page.nextCursor;
    const where = call.method === 'searchSessions' ? (one ? 'session matches' : 'sessions match') : (one ? 'event in this session matches' : 'events in this session match');
    this.status.textContent = shown === 0 ? `No match for “${call.query}”.` : `${shown}${page.nextCursor ? '+' : ''} ${where}`;
    if (more) items[0]?.querySelector('.hit')?.focus();
  }

  #failed(error, more) {
    const { code, message } = errorInfo(error);
    if (code === 'SESSION_QUERY_ABORTED') return;
    this.more.hidden = true;
    if (code === 'SESSION_QUERY_STALE_CURSOR') {
      replace(this.status, el('span', { class: 'error', role: 'alert' }, 'The archive changed since these results were found, so “more” cannot continue them. ',
        el('button', { type: 'button', class: 'link', text: 'Search again', onclick: () => this.run() })));
      return;
    }
    if (!more) replace(this.results);
    replace(this.status, el('span', { class: 'error', role: 'alert' }, el('code', { class: 'code', text: code }), ' ', message));
  }

  #sessionHit(item) {
    const hit = item.bestMatch;
    const record = this.sessions.get(item.header.id);
    return this.#hitItem(hit, sessionLabel(item.header, record?.title), item.header.cwd);
  }

  #eventHit(hit, session) {
    return this.#hitItem(hit, sessionLabel(session, this.sessions.get(session.id)?.title), null);
  }

  #hitItem(hit, title, cwd) {
    const button = el('a', {
      class: 'hit',
      href: `#session=${encodeURIComponent(hit.sessionId)}&seq=${hit.seq}`,
      'data-session-id': hit.sessionId,
      'data-seq': hit.seq,
    },
    el('span', { class: 'hit-head' },
      el('span', { class: 'hit-title', text: title }),
      surfaceBadge(hit.surface)),
    el('span', { class: 'hit-snippet' }, highlighted(hit.snippet, hit.highlights)),
    el('span', { class: 'hit-meta muted' },
      el('span', { class: 'mono', text: `${hit.type} #${hit.seq}` }), timeEl(hit.time), cwd ? el('span', { class: 'path', text: cwd }) : null));
    button.addEventListener('click', (e) => {
      e.preventDefault();
      this.onOpenHit(hit.sessionId, hit.seq);
    });
    return el('li', {}, button);
  }
}
