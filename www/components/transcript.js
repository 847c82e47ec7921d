// One session, as a person reads it: the transcript (user messages, assistant replies assembled
// from their chunks with reasoning collapsed, tool calls paired with their results, compaction
// summaries, subagent links), each with its surface label; a shadowed event shows what
// replaced it (traceEvent). Also the raw event list, each event's JSON, and the current
// surface the model sees. Every string from a log goes in as text.

import { el, errorLine, inSlices, nextFrame, replace, sessionLabel, surfaceBadge, timeEl } from './dom.js';

const RAW_BATCH = 400;

/** A surfaceOp marker as its chip names it: "append", or the op of an object marker ("replace"). */
function surfaceOpLabel(op) {
  if (typeof op === 'string') return op;
  if (op !== null && typeof op === 'object' && typeof op.op === 'string') return op.op;
  return JSON.stringify(op);
}

export class SessionView {
  constructor({ root, engine, sessions }) {
    Object.assign(this, { root, engine, sessions });
    this.sessionId = null;
    this.ticket = 0;
    this.renderTicket = 0;
    this.tab = 'transcript';
  }

  clear(content) {
    this.ticket += 1;
    this.renderTicket += 1;
    this.sessionId = null;
    replace(this.root, content);
  }

  /** Opens `id` (and marks `seq`); false when a newer open superseded this one. */
  async open(id, seq) {
    const ticket = ++this.ticket;
    const same = this.sessionId === id && this.data;
    this.sessionId = id;
    if (!same) {
      this.root.setAttribute('aria-busy', 'true');
      let data;
      try {
        const [log, records, surface, documents] = await Promise.all([
          this.engine.call('readSession', id),
          this.engine.call('listEvents', id),
          this.engine.call('readSurface', id),
          this.engine.call('listDocuments', id),
        ]);
        data = { log, surface, labels: new Map(records.map((r) => [r.seq, r.surface])), texts: new Map(documents.map((d) => [d.seq, d.text])) };
      } catch (error) {
        if (ticket !== this.ticket) return false;
        this.data = null;
        replace(this.root, errorLine(error, `Cannot open session ${id}`));
        this.root.removeAttribute('aria-busy');
        return true;
      }
      if (ticket !== this.ticket) return false;
      this.data = data;
      this.rawLimit = RAW_BATCH;
      this.#render();
      this.root.removeAttribute('aria-busy');
    }
    if (seq !== undefined) await this.focus(seq);
    else if (!same) this.root.scrollTop = 0;
    return true;
  }

  /** Redraws after a load (the session may have changed or gained events). */
  async reload() {
    if (!this.sessionId) return;
    const id = this.sessionId;
    this.data = null;
    await this.open(id);
  }

  #render() {
    const { log } = this.data;
    const header = log.session;
    const record = this.sessions.get(header.id);
    const title = sessionLabel(header, record?.title);
    const tabs = [['transcript', 'Transcript'], ['events', `Events (${log.events.length})`], ['surface', `Model surface (${this.data.surface.events.length})`]];
    const tablist = el('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Session views' },
      ...tabs.map(([key, label]) => el('button', {
        type: 'button', role: 'tab', id: `tab-${key}`, 'aria-controls': `panel-${key}`,
        'aria-selected': String(this.tab === key), tabindex: this.tab === key ? '0' : '-1', text: label,
        onclick: () => this.#switch(key),
      })));
    tablist.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
      const keys = tabs.map(([k]) => k);
      const next = keys[(keys.indexOf(this.tab) + (e.key === 'ArrowRight' ? 1 : keys.length - 1)) % keys.length];
      this.#switch(next);
      this.root.querySelector(`#tab-${next}`).focus();
    });
    replace(this.root,
      el('header', { class: 'session-head' },
        el('h2', { id: 'session-title', text: title }),
        this.#facts(header, record)),
      tablist,
      el('div', { id: 'panel-transcript', role: 'tabpanel', 'aria-labelledby': 'tab-transcript', hidden: this.tab !== 'transcript' }, this.#transcript()),
      el('div', { id: 'panel-events', role: 'tabpanel', 'aria-labelledby': 'tab-events', hidden: true }),
      el('div', { id: 'panel-surface', role: 'tabpanel', 'aria-labelledby': 'tab-surface', hidden: true }));
    if (this.tab !== 'transcript') this.#switch(this.tab);
  }

  #switch(key) {
    this.tab = key;
    for (const tab of this.root.querySelectorAll('[role="tab"]')) {
      const on = tab.id === `tab-${key}`;
      tab.setAttribute('aria-selected', String(on));
      tab.tabIndex = on ? 0 : -1;
    }
    for (const panel of this.root.querySelectorAll('[role="tabpanel"]')) panel.hidden = panel.id !== `panel-${key}`;
    // The event list and the surface are rendered on first view: a long session has thousands
    // of events, and opening it (a search hit) must not wait for rows nobody looks at yet.
    const panel = this.root.querySelector(`#panel-${key}`);
    if (key === 'events' && panel && !panel.firstChild) panel.append(this.#rawEvents());
    if (key === 'surface' && panel && !panel.firstChild) panel.append(this.#surface());
  }

  #facts(header, record) {
    const parent = header.parentSession;
    const children = this.sessions.childrenOf(header.id);
    return el('dl', { class: 'facts' },
      el('dt', { text: 'Folder' }), el('dd', { class: 'path', text: header.cwd ?? '(none)' }),
      el('dt', { text: 'Created' }), el('dd', {}, timeEl(header.createdAt)),
      el('dt', { text: 'State' }), el('dd', { text: record ? (record.live ? (record.persisted ? 'live + persisted' : 'live') : 'persisted') : '—' }),
      el('dt', { text: 'Id' }), el('dd', { class: 'mono', text: header.id }),
      parent ? [el('dt', { text: 'Parent' }), el('dd', {}, this.#sessionLink(parent))] : null,
      children.length ? [el('dt', { text: 'Subagents' }), el('dd', { class: 'links' }, ...children.map((c) => this.#sessionLink(c.id)))] : null);
  }

  #sessionLink(id) {
    return el('a', { href: `#session=${encodeURIComponent(id)}`, class: 'session-link', title: id, text: this.sessions.titleOf(id) ?? id });
  }

  // ---- transcript --------------------------------------------------------------------------

  /** The transcript list, filled in slices between frames so a long session never blocks. */
  #transcript() {
    const items = assemble(this.data.log.events, this.sessions.childrenOf(this.sessionId));
    this.seqItem = new Map();
    this.itemOfSeq = new Map();
    items.forEach((item, i) => item.seqs.forEach((seq) => this.itemOfSeq.set(seq, i)));
    const list = el('ol', { class: 'transcript', 'aria-label': 'Transcript' });
    if (items.length === 0) list.append(el('li', { class: 'empty', text: 'No messages in this session.' }));
    const ticket = ++this.renderTicket;
    const step = (i) => {
      const node = this.#item(items[i]);
      for (const seq of items[i].seqs) this.seqItem.set(seq, node);
      list.append(node);
    };
    this.filled = inSlices(items.length, step, () => ticket === this.renderTicket).then((done) => {
      if (done) list.dataset.complete = 'true';
    });
    return list;
  }

  #item(item) {
    const main = item.event;
    const label = main ? this.data.labels.get(main.seq) ?? 'log-only' : null;
    const node = el('li', { class: `turn turn-${item.kind}${label ? ` surface-${label}` : ''}`, 'data-seq': main?.seq, tabindex: '-1' });
    node.append(el('div', { class: 'turn-meta' },
      el('span', { class: 'who', text: WHO[item.kind] }),
      main ? this.#badge(main.seq) : null,
      main ? el('a', { class: 'seq', href: `#session=${encodeURIComponent(this.sessionId)}&seq=${main.seq}`, text: `#${main.seq}` }) : null,
      main ? timeEl(main.time, { clock: true }) : null,
      item.events.length ? this.#rawToggle(node, item.events) : null));
    node.append(...this.#body(item).filter(Boolean));
    return node;
  }

  #badge(seq) {
    const label = this.data.labels.get(seq) ?? 'log-only';
    const badge = surfaceBadge(label);
    if (label !== 'shadowed') return badge;
    const wrap = el('span', { class: 'badge-wrap' }, badge);
    const button = el('button', { type: 'button', class: 'ghost small', text: 'What replaced it?' });
    button.addEventListener('click', () => this.#trace(seq, wrap, button));
    wrap.append(button);
    return wrap;
  }

  async #trace(seq, wrap, button) {
    button.disabled = true;
    try {
      const trace = await this.engine.call('traceEvent', { sessionId: this.sessionId, seq });
      const by = trace.replacedBy;
      const event = this.data.log.events.find((e) => e.seq === by);
      const link = (s) => el('a', { href: `#session=${encodeURIComponent(this.sessionId)}&seq=${s}`, text: `#${s}` });
      button.replaceWith(el('span', { class: 'replaced-by' },
        by === undefined ? 'Not replaced by a later event' : ['Replaced by ', link(by), event ? ` (${event.type})` : null],
        trace.replacementChain.length > 1 ? [' · chain ', ...trace.replacementChain.flatMap((s, i) => [i ? ' → ' : '', link(s)])] : null));
    } catch (error) {
      button.replaceWith(errorLine(error));
    }
    return wrap;
  }

  #rawToggle(node, events) {
    const button = el('button', { type: 'button', class: 'ghost small raw-toggle', 'aria-expanded': 'false', text: 'JSON' });
    button.addEventListener('click', () => {
      const open = button.getAttribute('aria-expanded') === 'true';
      button.setAttribute('aria-expanded', String(!open));
      node.querySelector(':scope > .raw')?.remove();
      if (!open) node.append(el('pre', { class: 'raw', text: events.map((e) => JSON.stringify(e, null, 2)).join('\n') }));
    });
    return button;
  }

  #body(item) {
    switch (item.kind) {
      case 'user':
        return [textBlock(contentText(item.event.data?.content ?? item.event.data?.message?.content), 'user-text'), sourceNote(item.event.data?.source)];
      case 'assistant':
        return item.blocks.map((b) => this.#block(b, item));
      case 'draft':
        return [el('p', { class: 'muted small', text: 'Assembled from streamed chunks (no final message was recorded).' }), ...item.blocks.map((b) => this.#block(b, item))];
      case 'tool':
        return [this.#tool({ name: item.event.data?.name, arguments: item.event.data?.arguments, id: item.event.data?.callId }, item.result)];
      case 'result':
        return [this.#result(item.event)];
      case 'summary':
        return [el('p', { class: 'muted small', text: `Replaced ${(item.event.data?.shadowedSeqs ?? []).length} earlier events on the model surface` }),
          textBlock(contentText(item.event.data?.summary), 'summary-text')];
      case 'prune':
        return [el('p', { class: 'muted', text: `Pruned ${(item.event.data?.shadowedSeqs ?? []).length} events from the model surface` })];
      case 'title':
        return [el('p', {}, 'Titled ', el('q', { text: String(item.event.data?.title ?? '') }))];
      case 'end':
        return [el('p', { class: 'muted', text: `Turn ended: ${item.event.data?.reason?.kind ?? 'unknown'}` })];
      case 'subagent':
        return [el('p', {}, 'Started subagent ', this.#sessionLink(item.child.id), item.child.header.agentPreset ? ` (${item.child.header.agentPreset})` : '')];
      default:
        return [];
    }
  }

  #block(block, item) {
    if (block.type === 'reasoning') {
      return el('details', { class: 'reasoning' }, el('summary', { text: 'Reasoning' }), textBlock(block.text ?? '', 'reasoning-text'));
    }
    if (block.type === 'text') return textBlock(block.text ?? '', 'assistant-text');
    if (block.type === 'tool-call') return this.#tool(block, item.results.get(block.id));
    return el('pre', { class: 'raw', text: JSON.stringify(block, null, 2) });
  }

  #tool(call, result) {
    return el('div', { class: 'tool' },
      el('div', { class: 'tool-head' }, el('span', { class: 'tool-name mono', text: String(call.name ?? 'tool') }), el('span', { class: 'muted mono small', text: call.id ?? '' })),
      foldedText('pre', 'tool-args', prettyArgs(call.arguments)),
      result ? this.#result(result) : el('p', { class: 'muted small', text: 'No result recorded.' }));
  }

  #result(event) {
    const blocks = (event.data?.message?.content ?? []).filter((b) => b.type === 'tool-result');
    const error = blocks.some((b) => b.isError);
    return el('div', { class: `tool-result${error ? ' is-error' : ''}`, 'data-seq': event.seq },
      el('div', { class: 'turn-meta' }, el('span', { class: 'who', text: error ? 'Result (error)' : 'Result' }), this.#badge(event.seq),
        el('a', { class: 'seq', href: `#session=${encodeURIComponent(this.sessionId)}&seq=${event.seq}`, text: `#${event.seq}` })),
      textBlock(blocks.map((b) => contentText(b.content)).join('\n') || contentText(event.data?.message?.content), 'result-text'));
  }

  // ---- raw events and surface ----------------------------------------------------------------

  #rawEvents() {
    const events = this.data.log.events;
    const list = el('ol', { class: 'raw-events', 'aria-label': 'Events' });
    const fill = () => {
      const from = list.childElementCount;
      for (const event of events.slice(from, this.rawLimit)) list.append(this.#rawRow(event));
      more.hidden = this.rawLimit >= events.length;
      more.textContent = `Show ${Math.min(RAW_BATCH, events.length - this.rawLimit)} more of ${events.length - this.rawLimit}`;
    };
    const more = el('button', { type: 'button', class: 'ghost', onclick: () => { this.rawLimit += RAW_BATCH; fill(); } });
    this.fillRaw = (limit) => {
      this.rawLimit = Math.max(this.rawLimit, limit);
      fill();
    };
    fill();
    return el('div', {}, list, more);
  }

  #rawRow(event) {
    const node = el('li', { class: 'raw-event', 'data-seq': event.seq, tabindex: '-1' });
    node.append(el('div', { class: 'turn-meta' },
      el('span', { class: 'seq', text: `#${event.seq}` }), this.#badge(event.seq),
      el('span', { class: 'type mono', text: event.type }), timeEl(event.time, { clock: true }), this.#rawToggle(node, [event])));
    const text = this.data.texts.get(event.seq);
    if (text) node.append(textBlock(text, 'doc-text'));
    return node;
  }

  #surface() {
    const { surface } = this.data;
    return el('div', { class: 'surface' },
      el('p', { class: 'muted', text: `What the model sees now: ${surface.events.length} events, captured through #${surface.capturedThroughSeq ?? '—'}.` }),
      el('ol', { class: 'raw-events', 'aria-label': 'Model surface' }, ...surface.events.map((event) => {
        const node = el('li', { class: 'raw-event' });
        node.append(el('div', { class: 'turn-meta' }, el('span', { class: 'seq', text: `#${event.seq}` }), el('span', { class: 'type mono', text: event.type }),
          event.surfaceOp ? el('span', { class: 'tag surface-op', text: surfaceOpLabel(event.surfaceOp), title: `surfaceOp ${JSON.stringify(event.surfaceOp)}` }) : null, this.#rawToggle(node, [event])));
        const text = this.data.texts.get(event.seq) ?? contentText(event.data?.content ?? event.data?.message?.content ?? event.data?.summary);
        if (text) node.append(textBlock(text, 'doc-text'));
        return node;
      })));
  }

  /** Scrolls to and marks `seq`: its transcript item, else its row in the event list. */
  async focus(seq) {
    const ticket = this.renderTicket;
    if (this.itemOfSeq.has(seq)) {
      while (!this.seqItem.has(seq) && ticket === this.renderTicket) await nextFrame();
      if (ticket !== this.renderTicket) return;
    }
    for (const node of this.root.querySelectorAll('.focused')) node.classList.remove('focused');
    let node = this.seqItem.get(seq);
    if (node) {
      this.#switch('transcript');
      node = node.querySelector(`.tool-result[data-seq="${seq}"]`) ?? node;
    } else {
      this.#switch('events');
      const index = this.data.log.events.findIndex((e) => e.seq === seq);
      if (index < 0) return;
      this.fillRaw(index + 1);
      node = this.root.querySelector(`.raw-event[data-seq="${seq}"]`);
    }
    if (!node) return;
    node.classList.add('focused');
    node.setAttribute('tabindex', '-1');
    node.scrollIntoView({ block: 'center' });
    node.focus({ preventScroll: true });
  }
}

const WHO = {
  user: 'User', assistant: 'Assistant', draft: 'Assistant (partial)', tool: 'Tool call', result: 'Tool result',
  summary: 'Compaction summary', prune: 'Pruned', title: 'Title', end: 'Turn', subagent: 'Subagent',
};

/** Transcript items from a session's events, in order (see the module comment). */
export function assemble(events, children = []) {
  const key = (e) => `${e.data?.turn}:${e.data?.step}`;
  const messages = new Map();
  const resultsByCall = new Map();
  for (const e of events) {
    if (e.type === 'assistant/message') messages.set(key(e), e);
    if (e.type === 'tool/result') {
      for (const b of e.data?.message?.content ?? []) if (b?.type === 'tool-result') resultsByCall.set(b.toolCallId, e);
      if (e.data?.message?.source?.callId) resultsByCall.set(e.data.message.source.callId, e);
    }
  }
  const items = [];
  const absorbed = new Map(); // seq -> item that shows it
  const drafts = new Map();
  const folded = []; // [message seq, seq of a chunk or call it shows]
  const pending = [...children];
  const flushChildren = (time) => {
    while (pending.length && pending[0].header.createdAt <= time) items.push({ kind: 'subagent', child: pending.shift(), events: [], seqs: [] });
  };
  for (const e of events) {
    flushChildren(e.time);
    if (absorbed.has(e.seq)) continue;
    switch (e.type) {
      case 'user/message':
        items.push({ kind: 'user', event: e, events: [e], seqs: [e.seq] });
        break;
      case 'assistant/message': {
        const blocks = Array.isArray(e.data?.message?.content) ? e.data.message.content : [{ type: 'text', text: contentText(e.data?.message?.content) }];
        const item = { kind: 'assistant', event: e, events: [e], seqs: [e.seq], blocks, results: new Map() };
        for (const b of blocks) {
          if (b?.type !== 'tool-call') continue;
          const result = resultsByCall.get(b.id);
          if (result) {
            item.results.set(b.id, result);
            absorbed.set(result.seq, item);
            item.seqs.push(result.seq);
            item.events.push(result);
          }
        }
        items.push(item);
        break;
      }
      case 'assistant/chunk': {
        if (messages.has(key(e))) {
          folded.push([messages.get(key(e)).seq, e.seq]);
          break;
        }
        let draft = drafts.get(key(e));
        if (!draft) {
          draft = { kind: 'draft', event: e, events: [], seqs: [], parts: new Map(), blocks: [], results: new Map() };
          drafts.set(key(e), draft);
          items.push(draft);
        }
        draft.seqs.push(e.seq);
        draft.events.push(e);
        addChunk(draft, e.data?.chunk ?? {});
        break;
      }
      case 'tool/call': {
        const message = messages.get(key(e));
        if (message && (message.data?.message?.content ?? []).some?.((b) => b?.id === e.data?.callId)) {
          folded.push([message.seq, e.seq]);
          break;
        }
        const result = resultsByCall.get(e.data?.callId);
        if (result) absorbed.set(result.seq, true);
        items.push({ kind: 'tool', event: e, events: result ? [e, result] : [e], seqs: result ? [e.seq, result.seq] : [e.seq], result });
        break;
      }
      case 'tool/result':
        items.push({ kind: 'result', event: e, events: [e], seqs: [e.seq] });
        break;
      case 'compaction/summary':
        items.push({ kind: 'summary', event: e, events: [e], seqs: [e.seq] });
        break;
      case 'compaction/prune':
        items.push({ kind: 'prune', event: e, events: [e], seqs: [e.seq] });
        break;
      case 'session/title':
        items.push({ kind: 'title', event: e, events: [e], seqs: [e.seq] });
        break;
      case 'turn/end':
        if (e.data?.reason?.kind && e.data.reason.kind !== 'completed') items.push({ kind: 'end', event: e, events: [e], seqs: [e.seq] });
        break;
      default:
        break;
    }
  }
  flushChildren(Infinity);
  const bySeq = new Map(items.filter((i) => i.event).map((i) => [i.event.seq, i]));
  for (const [message, seq] of folded) bySeq.get(message)?.seqs.push(seq);
  for (const draft of drafts.values()) draft.blocks = [...draft.parts.values()];
  return items;
}

function addChunk(draft, chunk) {
  const part = (type) => {
    if (!draft.parts.has(chunk.index)) draft.parts.set(chunk.index, { type, text: '' });
    return draft.parts.get(chunk.index);
  };
  if (chunk.type === 'block-start') part(chunk.blockType === 'reasoning' ? 'reasoning' : chunk.blockType ?? 'text');
  else if (chunk.type === 'text-delta') part('text').text += chunk.text ?? '';
  else if (chunk.type === 'reasoning-delta') part('reasoning').text += chunk.text ?? '';
  else if (chunk.type === 'tool-call-delta') {
    const p = part('tool-call');
    p.type = 'tool-call';
    p.id ??= chunk.id;
    p.name ??= chunk.name;
    p.arguments = (p.arguments ?? '') + (chunk.argumentsDelta ?? '');
  } else if (chunk.type === 'block-end' && chunk.block) draft.parts.set(chunk.index, { ...chunk.block });
}

/** The text of a message content: a string, or text of its blocks (nested tool results too). */
export function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b) => {
    if (typeof b === 'string') return b;
    if (b?.type === 'text' || b?.type === 'reasoning') return b.text ?? '';
    if (b?.type === 'tool-result') return contentText(b.content);
    if (b?.type) return `[${b.type}]`;
    return '';
  }).filter(Boolean).join('\n');
}

/** Characters of a long text shown until asked: laying out a tool's 100 KB output stalls the page. */
const FOLD_CHARS = 4000;

function textBlock(text, cls) {
  return foldedText('div', `text ${cls}`, text);
}

/** `text` in a `tag`, its start only when it is long, with a button for the rest. */
function foldedText(tag, cls, text) {
  if (text.length <= FOLD_CHARS) return el(tag, { class: cls, text });
  const node = el(tag, { class: cls, text: text.slice(0, FOLD_CHARS) });
  const more = el('button', {
    type: 'button',
    class: 'ghost small show-all',
    text: `Show all ${text.length.toLocaleString('en')} characters`,
    onclick: () => {
      node.textContent = text;
      more.remove();
    },
  });
  return el('div', { class: 'folded' }, node, more);
}

function sourceNote(source) {
  if (!source || source.kind === 'user' || !source.kind) return null;
  return el('p', { class: 'muted small', text: `Injected by ${source.kind}` });
}

function prettyArgs(args) {
  if (typeof args !== 'string') return JSON.stringify(args ?? null, null, 2);
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}
