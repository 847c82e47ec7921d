// One session: its header, every event with its surface label (current / shadowed /
// log-only, as DSH labels it) and the current model-facing surface.

import { errorInfo } from '../archive.js';
import { el, formatTime, replace, sessionLabel, shortId, surfaceBadge } from './dom.js';

const LABELS = ['current', 'shadowed', 'log-only'];
/** Events rendered at first (and per "show more"), so huge sessions stay responsive. */
const BATCH = 1000;
const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));

export class Timeline {
  /** `root` is the timeline section's body; `onOpen(id)` opens another session (a parent). */
  constructor({ root, heading, archive, titleOf, onOpen }) {
    this.root = root;
    this.heading = heading;
    this.archive = archive;
    this.titleOf = titleOf;
    this.onOpen = onOpen;
    this.sessionId = null;
    this.filter = 'all';
    this.textOnly = false;
    this.limit = BATCH;
    this.ticket = 0;
  }

  clear() {
    this.ticket += 1;
    this.sessionId = null;
    this.heading.textContent = 'Session';
    replace(this.root, el('p', { class: 'empty', text: 'Choose a session from the list or a search hit.' }));
  }

  /**
   * Opens `id` at its top (`keepScroll`: where it was, to redraw it after a load); with
   * `focusSeq`, scrolls to that event and shows every label. Returns false
   * if a newer open superseded this one before it rendered.
   */
  async open(id, { focusSeq, keepScroll = false } = {}) {
    const ticket = ++this.ticket;
    const reopened = keepScroll && this.sessionId === id;
    this.sessionId = id;
    this.root.setAttribute('aria-busy', 'true');
    await nextFrame();
    if (ticket !== this.ticket) return false;
    let data;
    try {
      data = {
        events: this.archive.call('listEvents', id),
        documents: this.archive.call('listDocuments', id),
        surface: this.archive.call('readSurface', id),
        title: this.archive.call('readTitle', id),
      };
    } catch (error) {
      const { code, message } = errorInfo(error);
      this.heading.textContent = `Session ${shortId(id)}`;
      replace(this.root, el('p', { class: 'error', role: 'alert' }, el('code', { class: 'code', text: code }), ' ', message));
      this.root.removeAttribute('aria-busy');
      return true;
    }
    if (focusSeq !== undefined) {
      this.filter = 'all';
      this.textOnly = false;
    }
    if (!reopened) this.limit = BATCH;
    this.data = data;
    this.texts = new Map(data.documents.map((d) => [d.seq, d.text]));
    const scroller = this.root.closest('.timeline');
    const scrollTop = scroller?.scrollTop ?? 0;
    this.#render();
    this.root.removeAttribute('aria-busy');
    if (focusSeq !== undefined) this.focus(focusSeq);
    else if (scroller) scroller.scrollTop = reopened ? scrollTop : 0;
    return true;
  }

  /** Scrolls to and marks the event `seq`. */
  focus(seq) {
    for (const node of this.root.querySelectorAll('.event.focused')) node.classList.remove('focused');
    const index = this.#shown().findIndex((e) => e.seq === Number(seq));
    if (index >= this.limit) {
      this.limit = Math.ceil((index + 1) / BATCH) * BATCH;
      this.#renderEvents();
    }
    const node = this.root.querySelector(`.events [data-seq="${Number(seq)}"]`);
    if (!node) return;
    node.classList.add('focused');
    node.scrollIntoView({ block: 'center' });
    node.focus({ preventScroll: true });
  }

  #render() {
    const { events, surface, title } = this.data;
    const header = surface.session;
    this.heading.textContent = sessionLabel(header, title?.title);
    const counts = Object.fromEntries(LABELS.map((l) => [l, events.filter((e) => e.surface === l).length]));
    replace(
      this.root,
      this.#facts(header, events.length),
      this.#surface(surface),
      this.#controls(counts, events.length),
      el('ol', { class: 'events', 'aria-label': 'Events' }),
    );
    this.#renderEvents();
  }

  #facts(header, eventCount) {
    const parent = header.parentSession;
    const rows = [
      ['Id', el('span', { class: 'mono', text: header.id })],
      ['Working directory', el('span', { class: 'path', text: header.cwd ?? '(no cwd)' })],
      ['Created', formatTime(header.createdAt)],
      ['Events', String(eventCount)],
    ];
    if (parent) {
      rows.push([
        'Parent',
        el('button', {
          type: 'button',
          class: 'link',
          title: parent,
          text: this.titleOf(parent) ?? parent,
          onclick: () => this.onOpen(parent),
        }),
      ]);
    }
    if (header.origin) rows.push(['Origin', `${header.origin}${header.agentPreset ? ` (${header.agentPreset})` : ''}`]);
    return el('dl', { class: 'facts' }, ...rows.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', {}, v)]));
  }

  #surface(surface) {
    const items = surface.events.map((event) =>
      el(
        'li',
        { class: 'surface-item', 'data-seq': event.seq },
        el(
          'div',
          { class: 'event-meta' },
          el('span', { class: 'seq', text: `#${event.seq}` }),
          el('span', { class: 'type', text: event.type }),
          event.surfaceOp ? el('span', { class: 'tag', text: event.surfaceOp }) : null,
        ),
        this.#text(this.texts.get(event.seq) ?? textOf(event.data)),
      ),
    );
    return el(
      'details',
      { class: 'surface' },
      el(
        'summary',
        {},
        el('strong', { text: 'Current surface' }),
        ` — ${surface.events.length} events the model sees now, captured through #${surface.capturedThroughSeq}`,
      ),
      items.length ? el('ol', { class: 'surface-events' }, ...items) : el('p', { class: 'empty', text: 'The surface is empty.' }),
    );
  }

  #controls(counts, total) {
    const options = [['all', `All (${total})`], ...LABELS.map((l) => [l, `${l} (${counts[l]})`])];
    const radios = options.map(([value, text]) =>
      el(
        'label',
        { class: `filter filter-${value}` },
        el('input', {
          type: 'radio',
          name: 'surface-filter',
          value,
          checked: this.filter === value,
          onchange: () => {
            this.filter = value;
            this.#renderEvents();
          },
        }),
        ` ${text}`,
      ),
    );
    return el(
      'div',
      { class: 'controls' },
      el('fieldset', { class: 'filters' }, el('legend', { text: 'Show events labelled' }), ...radios),
      el(
        'label',
        { class: 'filter' },
        el('input', {
          type: 'checkbox',
          checked: this.textOnly,
          onchange: (e) => {
            this.textOnly = e.target.checked;
            this.#renderEvents();
          },
        }),
        ' only events with searchable text',
      ),
    );
  }

  #shown() {
    return this.data.events.filter(
      (e) => (this.filter === 'all' || e.surface === this.filter) && (!this.textOnly || this.texts.has(e.seq)),
    );
  }

  #renderEvents() {
    const list = this.root.querySelector('ol.events');
    if (!list) return;
    const shown = this.#shown();
    this.root.querySelector('.events-more')?.remove();
    if (shown.length === 0) {
      replace(list, el('li', { class: 'empty', text: 'No events match.' }));
      return;
    }
    if (shown.length > this.limit) {
      list.after(
        el('button', {
          type: 'button',
          class: 'events-more',
          text: `Show ${Math.min(BATCH, shown.length - this.limit)} more of ${shown.length - this.limit} hidden events`,
          onclick: () => {
            this.limit += BATCH;
            this.#renderEvents();
          },
        }),
      );
    }
    replace(
      list,
      ...shown.slice(0, this.limit).map((event) =>
        el(
          'li',
          {
            class: `event surface-${event.surface}`,
            'data-seq': event.seq,
            'data-surface': event.surface,
            tabindex: '-1',
          },
          el(
            'div',
            { class: 'event-meta' },
            el('span', { class: 'seq', text: `#${event.seq}` }),
            surfaceBadge(event.surface),
            el('span', { class: 'type', text: event.type }),
            el('time', { class: 'muted', text: formatTime(event.time) }),
          ),
          this.texts.has(event.seq) ? this.#text(this.texts.get(event.seq)) : null,
        ),
      ),
    );
  }

  #text(text) {
    return text ? el('pre', { class: 'text', text }) : null;
  }
}

/** Text parts of a surface event's data, for events the library extracts no document from. */
function textOf(data, out = [], depth = 0) {
  if (depth > 8 || out.length > 20 || data === null || typeof data !== 'object') return out.join('\n');
  if (Array.isArray(data)) {
    for (const item of data) textOf(item, out, depth + 1);
  } else {
    if (typeof data.text === 'string') out.push(data.text);
    for (const [key, value] of Object.entries(data)) if (key !== 'text') textOf(value, out, depth + 1);
  }
  return out.join('\n');
}
