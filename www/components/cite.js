// Cite: a composer acting as the open session. Candidates come from `listCandidates` (same
// workspace first, filtered as you type) and insert their canonical mentions; mentions can
// also be pasted. Prepare parses the text (`parseSessionReferenceText`), calls `prepare` with
// the text block and the cited sessions, and shows the exact context message the model would
// receive, the source records, the budget and its origin, with copy buttons; errors keep
// their codes.

import { copyButton, debounce, el, errorLine, replace, shortId, timeEl } from './dom.js';

export class Composer {
  constructor({ engine, sessions, currentSession }) {
    Object.assign(this, { engine, sessions, currentSession });
    const $ = (id) => document.getElementById(id);
    this.agentLine = $('cite-agent');
    this.message = $('message');
    this.find = $('cite-find');
    this.candidates = $('cite-candidates');
    this.prepareButton = $('prepare');
    this.budget = $('cite-budget');
    this.output = $('prepared');
    this.ticket = 0;
    this.lookup = debounce(() => this.#candidates(), 150);
    this.find.addEventListener('input', () => this.lookup());
    this.find.addEventListener('focus', () => this.#candidates());
    this.find.addEventListener('keydown', (e) => this.#findKeys(e));
    this.candidates.addEventListener('keydown', (e) => this.#listKeys(e));
    this.prepareButton.addEventListener('click', () => this.prepare());
    this.message.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        this.prepare();
      }
    });
    this.setAgent(null);
  }

  setAgent(id) {
    const enabled = Boolean(id);
    for (const node of [this.message, this.find, this.prepareButton, this.budget]) node.disabled = !enabled;
    if (!enabled) {
      this.agentLine.textContent = 'Open a session first: the composer writes as that session.';
      replace(this.candidates);
      return;
    }
    replace(this.agentLine, 'Writing as ', el('strong', { text: this.sessions.titleOf(id) ?? id }));
    if (document.activeElement === this.find) this.#candidates();
  }

  async #candidates() {
    const agent = this.currentSession();
    if (!agent) return;
    const ticket = ++this.ticket;
    try {
      const list = await this.engine.call('listCandidates', { id: agent }, this.find.value, 20);
      if (ticket !== this.ticket) return;
      replace(this.candidates, ...(list.length ? list.map((c) => this.#candidate(c)) : [el('li', { class: 'empty', text: 'No session matches.' })]));
    } catch (error) {
      if (ticket === this.ticket) replace(this.candidates, el('li', {}, errorLine(error)));
    }
  }

  #candidate(c) {
    const button = el('button', { type: 'button', class: 'candidate', 'data-session-id': c.sessionId, title: c.mention },
      el('span', { class: 'candidate-title', text: c.displayTitle ?? c.label }),
      el('span', { class: 'candidate-meta muted' },
        c.sameWorkspace ? el('span', { class: 'tag tag-same', text: 'same folder' }) : null,
        el('span', { class: 'mono', text: c.label }),
        el('span', { class: 'mono', text: shortId(c.sessionId) }),
        el('span', { class: 'path', text: c.cwd ?? '(no folder)' }),
        timeEl(c.createdAt)));
    button.addEventListener('click', () => this.#insert(c.mention));
    return el('li', {}, button);
  }

  #insert(mention) {
    const m = this.message;
    const start = m.selectionStart ?? m.value.length;
    const end = m.selectionEnd ?? start;
    const before = m.value.slice(0, start);
    const pad = before && !/\s$/.test(before) ? ' ' : '';
    const text = `${pad}${mention} `;
    m.value = before + text + m.value.slice(end);
    m.selectionStart = m.selectionEnd = start + text.length;
    m.focus();
  }

  #findKeys(e) {
    const first = this.candidates.querySelector('.candidate');
    if (e.key === 'ArrowDown' && first) {
      e.preventDefault();
      first.focus();
    } else if (e.key === 'Enter' && first) {
      e.preventDefault();
      first.click();
    }
  }

  #listKeys(e) {
    const all = [...this.candidates.querySelectorAll('.candidate')];
    const at = all.indexOf(document.activeElement);
    if (at < 0 || (e.key !== 'ArrowDown' && e.key !== 'ArrowUp')) return;
    e.preventDefault();
    const next = at + (e.key === 'ArrowDown' ? 1 : -1);
    if (next < 0) this.find.focus();
    else all[Math.min(all.length - 1, next)].focus();
  }

  async prepare() {
    const agent = this.currentSession();
    if (!agent) return;
    this.prepareButton.disabled = true;
    replace(this.output, el('p', { class: 'muted', text: 'Preparing…' }));
    try {
      const parsed = await this.engine.call('parseSessionReferenceText', this.message.value);
      const content = [{ type: 'text', text: parsed.text }];
      const options = {};
      const budget = this.budget.valueAsNumber;
      if (Number.isFinite(budget)) options.maxReferenceBytes = budget;
      const result = await this.engine.call('prepare', { id: agent }, content, parsed.references, options);
      this.#show(result, parsed);
    } catch (error) {
      replace(this.output, errorLine(error, 'Prepare failed'));
    } finally {
      this.prepareButton.disabled = false;
    }
  }

  #show(result, parsed) {
    const context = contextMessage(result);
    const text = context ? contentText(context.content) : null;
    replace(this.output,
      el('section', { class: 'prepared-block', 'aria-labelledby': 'prepared-context-heading' },
        el('div', { class: 'block-head' },
          el('h3', { id: 'prepared-context-heading', text: 'Context message' }),
          el('span', { class: 'copy-row' },
            text !== null ? copyButton('Copy context', () => text) : null,
            copyButton('Copy result JSON', () => JSON.stringify(result, null, 2)))),
        text !== null
          ? el('pre', { class: 'context', id: 'prepared-context', role: 'region', 'aria-label': 'Prepared context', tabindex: '0', text })
          : el('p', { class: 'muted', text: 'The text cites no session: nothing is added for the model.' })),
      el('section', { class: 'prepared-block' },
        el('h3', { text: 'Message as sent' }),
        el('pre', { class: 'readable', text: contentText(result.content) })),
      el('section', { class: 'prepared-block' },
        el('h3', { text: 'Sources' }),
        el('p', { class: 'muted', text: `Budget ${result.budget.maxReferenceBytes} bytes per source (from: ${result.budget.origin})` }),
        el('ul', { class: 'sources' }, ...result.references.map((r) => this.#source(r, context, parsed)))));
  }

  #source(ref, context, parsed) {
    const record = sourceRecords(context).find((s) => s.sessionId === ref.sessionId) ?? {};
    const cited = parsed.references.find((p) => p.sessionId === ref.sessionId);
    const facts = [
      ['Label', ref.label],
      ['Captured through', record.capturedThroughSeq === null || record.capturedThroughSeq === undefined ? '—' : `#${record.capturedThroughSeq}`],
      ['Omitted', omitted(record)],
      ['Truncated', ref.truncated ? 'yes' : 'no'],
      ['Spill', ref.spill ? ('locator' in ref.spill ? ref.spill.locator : `unavailable: ${ref.spill.unavailable}`) : '—'],
    ];
    const mention = `@[${cited?.label ?? ref.label}](dsh-session:${encodeURIComponent(ref.sessionId)})`;
    return el('li', { class: 'source' },
      el('div', { class: 'block-head' },
        el('strong', { text: this.sessions.titleOf(ref.sessionId) ?? ref.sessionId }),
        el('button', { type: 'button', class: 'ghost small', text: 'Copy mention', onclick: async (e) => {
          const exact = await this.engine.call('formatSessionReferenceMention', { sessionId: ref.sessionId, label: ref.label }).catch(() => mention);
          await navigator.clipboard.writeText(exact).catch(() => {});
          e.target.textContent = 'Copied';
        } })),
      el('dl', { class: 'facts small' }, ...facts.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: String(v) })])));
  }
}

/** The message that carries the referenced sessions (the one that is not the readable text). */
export function contextMessage(result) {
  return result.additionalContext ?? result.messages.find((m) => m.source?.kind === 'session-reference') ?? null;
}

function sourceRecords(context) {
  const sources = context?.source?.references ?? [];
  return Array.isArray(sources) ? sources : [];
}

function omitted(record) {
  if (record.omittedMessages === undefined && record.omittedBytes === undefined) return '—';
  const kept = record.retainedMessages === undefined ? '' : ` (${record.retainedMessages} of ${record.originalMessages} kept)`;
  return `${record.omittedMessages ?? 0} messages, ${record.omittedBytes ?? 0} bytes${kept}`;
}

function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return JSON.stringify(content);
  return content.map((b) => (typeof b === 'string' ? b : b?.text ?? '')).join('');
}
