// The load report as a diagnostics panel: one entry per load (inputs, sessions added /
// replaced / duplicate, how the search index was obtained and how long it took), and every
// file or session that failed, with its stable code and message. The rest stays usable.

import { el, formatBytes, replace } from './dom.js';

export class Diagnostics {
  constructor({ root, summary, badge }) {
    this.root = root;
    this.summary = summary;
    this.badge = badge;
    this.entries = [];
  }

  add(entry) {
    this.entries.unshift(entry);
    this.render();
    if (entry.error || entry.report?.failures.length) this.root.closest('details').open = true;
  }

  failures() {
    return this.entries.reduce((n, e) => n + (e.error ? 1 : e.report.failures.length), 0);
  }

  render() {
    const failures = this.failures();
    this.badge.textContent = failures ? String(failures) : '';
    this.badge.hidden = failures === 0;
    this.summary.textContent = this.entries.length === 0 ? 'Nothing loaded yet' : `${this.entries.length} load${this.entries.length === 1 ? '' : 's'} · ${failures} problem${failures === 1 ? '' : 's'}`;
    replace(this.root, ...this.entries.map((e) => this.#entry(e)));
  }

  #entry({ name, report, index, error }) {
    if (error) {
      return el('article', { class: 'diag diag-failed' },
        el('h3', { text: name }),
        el('p', { class: 'error', role: 'alert' }, 'Nothing was loaded: ', el('code', { class: 'code', text: error.code }), ' ', error.message));
    }
    const count = (outcome) => report.sessions.filter((s) => s.outcome === outcome).length;
    const events = report.sessions.reduce((n, s) => n + (s.outcome === 'duplicate' ? 0 : s.events), 0);
    const facts = [
      `${count('added')} added`,
      `${count('replaced')} replaced`,
      `${count('duplicate')} duplicate`,
      `${report.failures.length} failure${report.failures.length === 1 ? '' : 's'}`,
      `${events} events`,
    ];
    return el('article', { class: 'diag' },
      el('h3', { text: name }),
      el('p', { class: 'load-summary', text: facts.join(' · ') }),
      el('p', { class: 'muted index-note', 'data-index': index.how, text: indexNote(index) }),
      report.inputs.length
        ? el('ul', { class: 'diag-inputs muted' }, ...report.inputs.map((i) =>
          el('li', {}, el('span', { class: 'mono', text: i.input }), ` — ${i.kind}, ${i.logs} log${i.logs === 1 ? '' : 's'}${i.media ? `, ${i.media} media` : ''}${i.ignored ? `, ${i.ignored} ignored` : ''}`)))
        : null,
      report.failures.length
        ? el('ul', { class: 'diag-failures', 'aria-label': 'Load failures' }, ...report.failures.map((f) =>
          el('li', { class: 'failure' },
            el('code', { class: 'code', text: f.code }),
            el('span', { class: 'mono path', text: f.path || f.input }),
            f.sessionId ? el('span', { class: 'muted', text: `session ${f.sessionId}` }) : null,
            el('span', { class: 'failure-message', text: f.message }))))
        : null,
    );
  }
}

function indexNote({ how, ms, loadMs, bytes }) {
  const decode = `decoded in ${Math.round(loadMs)} ms`;
  if (how === 'restored') return `${decode}; search index restored from this browser's storage in ${Math.round(ms)} ms (${formatBytes(bytes)}), no re-indexing`;
  if (how === 'built') return `${decode}; search index built in ${Math.round(ms)} ms and kept for the next time (${formatBytes(bytes)})`;
  if (how === 'skipped') return `${decode}; cancelled before indexing`;
  return `${decode}; nothing new to index`;
}
