// Opening archives: drops anywhere on the page (files, and folders through their directory
// entries), the file and folder pickers, the bundled sample; a progress bar with bytes and
// sessions while the worker decodes and indexes, and a Cancel button (AbortSignal).

import { el, errorInfo, formatBytes } from './dom.js';

const SAMPLE = 'sample/sample-archive.zip';

export class Opener {
  constructor({ engine, onLoaded, onListed, onStatus }) {
    this.engine = engine;
    this.onLoaded = onLoaded;
    /** Called once the sessions can be listed and searched while the index is still building. */
    this.onListed = onListed;
    this.onStatus = onStatus;
    this.controller = null;
    this.bar = document.getElementById('progress');
    this.meter = document.getElementById('progress-meter');
    this.text = document.getElementById('progress-text');
    this.cancel = document.getElementById('progress-cancel');
    this.strict = document.getElementById('load-strict');
    this.cancel.addEventListener('click', () => this.controller?.abort());
    for (const id of ['open-files', 'open-folder']) {
      const input = document.getElementById(id);
      input.addEventListener('change', () => {
        const files = [...input.files];
        input.value = '';
        const folder = files[0]?.webkitRelativePath?.split('/')[0];
        if (files.length) this.load(files, folder || (files.length === 1 ? files[0].name : `${files.length} files`));
      });
    }
    // Delegated: the welcome screen's buttons come and go.
    document.addEventListener('click', (e) => {
      const button = e.target.closest?.('[data-open]');
      if (!button) return;
      const kind = button.dataset.open;
      if (kind === 'sample') this.loadSample();
      else document.getElementById(kind === 'folder' ? 'open-folder' : 'open-files').click();
    });
    this.#dropZone();
  }

  #dropZone() {
    let depth = 0;
    const body = document.body;
    const isFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes('Files');
    window.addEventListener('dragenter', (e) => {
      if (!isFiles(e)) return;
      depth += 1;
      body.classList.add('dragging');
    });
    window.addEventListener('dragleave', () => {
      depth = Math.max(0, depth - 1);
      if (depth === 0) body.classList.remove('dragging');
    });
    window.addEventListener('dragover', (e) => {
      if (!isFiles(e)) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = 'copy';
    });
    window.addEventListener('drop', async (e) => {
      if (!isFiles(e)) return;
      e.preventDefault();
      depth = 0;
      body.classList.remove('dragging');
      const entries = [...e.dataTransfer.items].map((item) => item.webkitGetAsEntry?.()).filter(Boolean);
      const files = entries.length ? await filesOfEntries(entries) : [...e.dataTransfer.files];
      if (files.length) this.load(files, dropName(entries, files));
    });
  }

  async loadSample() {
    this.onStatus('Fetching the bundled sample…');
    try {
      const response = await fetch(SAMPLE);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const bytes = await response.arrayBuffer();
      await this.load([{ path: 'sample-archive.zip', bytes }], 'the bundled sample');
    } catch (error) {
      this.onStatus(`Could not fetch the sample: ${errorInfo(error).message}`);
    }
  }

  /** Loads inputs through the worker with progress and cancel; one load at a time. */
  async load(inputs, name) {
    if (this.controller) this.controller.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.#showProgress(name);
    const onProgress = (p) => this.#progress(p);
    try {
      const onIndexing = () => {
        // Restoring a stored index reports nothing: indeterminate until building reports.
        this.meter.removeAttribute('value');
        this.meter.dataset.updates = String(Number(this.meter.dataset.updates ?? 0) + 1);
        this.text.textContent = 'Preparing the search index…';
      };
      const onIndexProgress = (p) => this.#indexProgress(p);
      const onBuilding = () => {
        if (this.controller === controller) this.onListed?.({ name });
      };
      const result = await this.engine.load(inputs, { strict: this.strict.checked, signal: controller.signal, onProgress, onIndexing, onIndexProgress, onBuilding });
      if (this.controller === controller) this.onLoaded({ name, ...result });
    } catch (error) {
      if (this.controller === controller) this.onLoaded({ name, error: errorInfo(error) });
    } finally {
      if (this.controller === controller) {
        this.controller = null;
        this.bar.hidden = true;
      }
    }
  }

  #showProgress(name) {
    this.bar.hidden = false;
    this.meter.value = 0;
    this.meter.max = 1;
    this.bar.querySelector('.progress-name').textContent = `Opening ${name}`;
    this.text.textContent = 'Reading…';
    this.onStatus(`Opening ${name}…`);
  }

  #progress({ bytesDone, bytesTotal, sessionsDone, sessionsTotal }) {
    this.#meterAt(bytesDone, bytesTotal);
    this.text.textContent = `${formatBytes(bytesDone)} of ${formatBytes(bytesTotal)} · ${sessionsDone} of ${sessionsTotal} sessions`;
  }

  #indexProgress({ eventsDone, eventsTotal, sessionsDone, sessionsTotal, done }) {
    this.#meterAt(eventsDone, eventsTotal);
    const count = `${eventsDone.toLocaleString('en')} of ${eventsTotal.toLocaleString('en')} events · ${sessionsDone} of ${sessionsTotal} sessions`;
    this.text.textContent = done ? `Indexed ${count}; saving the index for next time…` : `Indexing ${count}`;
  }

  #meterAt(done, total) {
    this.meter.max = Math.max(1, total);
    this.meter.value = done;
    this.meter.dataset.updates = String(Number(this.meter.dataset.updates ?? 0) + 1);
  }
}

/** Every file below dropped entries, each with its path from the dropped item's parent. */
async function filesOfEntries(entries) {
  const files = [];
  const walk = async (entry) => {
    if (entry.isFile) {
      const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
      files.push({ path: entry.fullPath.replace(/^\/+/, ''), bytes: file, lastModified: file.lastModified });
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
        if (batch.length === 0) break;
        for (const child of batch) await walk(child);
      }
    }
  };
  for (const entry of entries) await walk(entry);
  return files.map(({ path, bytes }) => ({ path, bytes }));
}

function dropName(entries, files) {
  if (entries.length === 1) return entries[0].name;
  return `${files.length} dropped files`;
}

/** The empty state: a large drop target with the three ways in. */
export function emptyState() {
  return el(
    'div',
    { class: 'welcome' },
    el('h2', { text: 'Open a DSH session archive' }),
    el('p', { class: 'muted', text: 'Drop an export ZIP, a sessions folder or single logs anywhere on this page. Everything stays in this tab: nothing is uploaded.' }),
    el(
      'div',
      { class: 'welcome-actions' },
      el('button', { type: 'button', class: 'primary', 'data-open': 'files', text: 'Open files…' }),
      el('button', { type: 'button', 'data-open': 'folder', text: 'Open folder…' }),
      el('button', { type: 'button', 'data-open': 'sample', text: 'Try the sample' }),
    ),
    el('ul', { class: 'welcome-keys muted' },
      el('li', {}, el('kbd', { text: 'Ctrl' }), ' + ', el('kbd', { text: 'K' }), ' search'),
      el('li', {}, el('kbd', { text: '↑' }), ' ', el('kbd', { text: '↓' }), ' move through results'),
      el('li', {}, el('kbd', { text: 'Enter' }), ' open in the transcript'),
      el('li', {}, el('kbd', { text: 'Esc' }), ' back to the search box')),
  );
}
