// The archive viewer: wires the wasm-backed archive to the loader, load report, session list,
// timeline and search components. Everything runs in this page; nothing leaves it.

import { Archive, errorInfo } from './archive.js';
import { Loader } from './components/loader.js';
import { ReportView } from './components/report.js';
import { SearchPanel } from './components/search.js';
import { SessionList } from './components/sessions.js';
import { Timeline } from './components/timeline.js';
import { el, replace } from './components/dom.js';

const $ = (id) => document.getElementById(id);

async function main() {
  let archive;
  try {
    archive = await Archive.open();
  } catch (error) {
    const { code, message } = errorInfo(error);
    replace($('app-status'), el('span', { class: 'error', role: 'alert' }, `Could not start the viewer (${code}): ${message}`));
    return;
  }

  const report = new ReportView($('report-list'));
  const sessions = new SessionList({ root: $('session-list'), count: $('session-count'), onOpen: (id) => open(id) });
  const timeline = new Timeline({
    root: $('timeline-body'),
    heading: $('timeline-heading'),
    archive,
    titleOf: (id) => sessions.titleOf(id),
    onOpen: (id) => open(id),
  });
  const search = new SearchPanel({
    form: $('search-form'),
    input: $('search-query'),
    scope: $('search-scope'),
    surface: $('search-surface'),
    status: $('search-status'),
    results: $('search-results'),
    more: $('search-more'),
    archive,
    titleOf: (id) => sessions.titleOf(id),
    currentSession: () => timeline.sessionId,
    onOpenHit: (id, seq) => open(id, seq),
  });

  async function open(id, seq) {
    const changed = timeline.sessionId !== id;
    sessions.select(id);
    search.setSessionOpen(true);
    if (await timeline.open(id, { focusSeq: seq })) {
      if (changed && search.scope.value === 'session') search.refresh();
      if (seq === undefined) $('timeline').scrollIntoView({ block: 'start' });
    }
  }

  function loaded(entry) {
    report.add(entry);
    if (entry.error) return;
    try {
      sessions.show(archive.sessions());
    } catch (error) {
      report.add({ label: 'listing sessions', error: errorInfo(error) });
    }
    if (timeline.sessionId && sessions.has(timeline.sessionId)) timeline.open(timeline.sessionId, { keepScroll: true });
    search.refresh(); // cursors of the old corpus are stale now
  }

  new Loader({
    sampleButton: $('load-sample'),
    filesInput: $('load-files'),
    folderInput: $('load-folder'),
    strict: $('load-strict'),
    status: $('app-status'),
    archive,
    onLoaded: loaded,
  });

  report.render();
  sessions.show([]);
  timeline.clear();
  search.setSessionOpen(false);
  document.body.dataset.ready = 'true';
  $('app-status').textContent = '';
  if (new URLSearchParams(location.search).has('sample')) $('load-sample').click();
}

main();
