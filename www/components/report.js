// The load report: one entry per load (newest first) with what was read and every failure
// with its stable code.

import { el, replace } from './dom.js';

export class ReportView {
  /** `root` is the report section's list container. */
  constructor(root) {
    this.root = root;
    this.entries = [];
  }

  /** Adds the report of a load that returned (`report`) or threw (`error` with a code). */
  add({ label, report, error, skipped = 0 }) {
    this.entries.unshift({ label, report, error, skipped });
    this.render();
  }

  render() {
    if (this.entries.length === 0) {
      replace(this.root, el('p', { class: 'empty', text: 'Nothing loaded yet.' }));
      return;
    }
    replace(this.root, ...this.entries.map((entry) => this.#entry(entry)));
  }

  #entry({ label, report, error, skipped }) {
    const item = el('article', { class: 'load', 'data-label': label });
    if (error) {
      item.classList.add('load-failed');
      return replace(
        item,
        el('h3', { text: label }),
        el('p', {}, 'Load refused: ', el('code', { class: 'code', text: error.code }), ' ', error.message),
      );
    }
    const sessions = report.sessions ?? [];
    const failures = report.failures ?? [];
    const count = (outcome) => sessions.filter((s) => s.outcome === outcome).length;
    const parts = [`${count('added')} added`];
    if (count('replaced')) parts.push(`${count('replaced')} replaced`);
    if (count('duplicate')) parts.push(`${count('duplicate')} duplicate`);
    const closers = sessions.reduce((n, s) => n + (s.syntheticClosers ?? 0), 0);
    const inputs = (report.inputs ?? []).map(
      (i) => `${i.input} (${i.kind}: ${i.logs} logs, ${i.media} media, ${i.ignored} other)`,
    );
    if (failures.length) item.classList.add('load-partial');
    replace(
      item,
      el('h3', { text: label }),
      el(
        'p',
        { class: 'load-summary' },
        `Sessions: ${parts.join(', ')}; `,
        el('strong', { text: `${failures.length} ${failures.length === 1 ? 'failure' : 'failures'}` }),
        closers ? `; ${closers} synthetic closers added` : '',
        '.',
      ),
      inputs.length ? el('p', { class: 'muted', text: `Read: ${inputs.join('; ')}` }) : null,
      skipped ? el('p', { class: 'muted', text: `Not read (neither a log nor a ZIP): ${skipped} ${skipped === 1 ? 'file' : 'files'}.` }) : null,
      failures.length ? this.#failures(failures) : null,
    );
    return item;
  }

  #failures(failures) {
    return el(
      'table',
      { class: 'failures' },
      el('caption', { text: 'Failures' }),
      el('thead', {}, el('tr', {}, ...['Code', 'File', 'Session', 'Message'].map((h) => el('th', { scope: 'col', text: h })))),
      el(
        'tbody',
        {},
        ...failures.map((f) =>
          el(
            'tr',
            {},
            el('td', {}, el('code', { class: 'code', text: f.code })),
            el('td', { class: 'path', text: f.path ? `${f.input} › ${f.path}` : f.input }),
            el('td', { class: 'mono', text: f.sessionId ?? '—' }),
            el('td', { text: f.message }),
          ),
        ),
      ),
    );
  }
}
