// Getting archives in: the bundled sample (fetched from this server), files the user picks
// (.zip, .jsonl, .jsonl.zstd) and a picked folder (a DSH persistence root or an unpacked export).

import { errorInfo } from '../archive.js';

const SAMPLE = 'sample/sample-archive.zip';
const READABLE = /\.(zip|jsonl|jsonl\.zstd)$/i;

export class Loader {
  constructor({ sampleButton, filesInput, folderInput, strict, status, archive, onLoaded }) {
    Object.assign(this, { sampleButton, filesInput, folderInput, strict, status, archive, onLoaded });
    this.busy = 0;
    sampleButton.addEventListener('click', () => this.loadSample());
    filesInput.addEventListener('change', () => this.loadFiles([...filesInput.files]).finally(() => (filesInput.value = '')));
    folderInput.addEventListener('change', () => this.loadFolder([...folderInput.files]).finally(() => (folderInput.value = '')));
  }

  async loadSample() {
    await this.#run('the bundled sample', async () => {
      const response = await fetch(SAMPLE);
      if (!response.ok) throw Object.assign(new Error(`${SAMPLE}: HTTP ${response.status}`), { code: 'VIEWER_FETCH_FAILED' });
      const bytes = new Uint8Array(await response.arrayBuffer());
      this.#load('sample-archive.zip', () => this.archive.loadFile('sample-archive.zip', bytes, this.strict.checked));
    });
  }

  async loadFiles(files) {
    for (const file of files) {
      await this.#run(file.name, async () => {
        const bytes = new Uint8Array(await file.arrayBuffer());
        this.#load(file.name, () => this.archive.loadFile(file.name, bytes, this.strict.checked));
      });
    }
  }

  async loadFolder(files) {
    if (files.length === 0) return;
    const name = (files[0].webkitRelativePath || files[0].name).split('/')[0] || 'folder';
    const wanted = files.filter((f) => READABLE.test(f.name));
    await this.#run(name, async () => {
      const paths = wanted.map((f) => f.webkitRelativePath || f.name);
      const contents = await Promise.all(wanted.map(async (f) => new Uint8Array(await f.arrayBuffer())));
      this.#load(name, () => this.archive.loadEntries(name, paths, contents, this.strict.checked), files.length - wanted.length);
    });
  }

  /** Runs one load, reporting either its report or its coded error. */
  #load(label, load, skipped = 0) {
    try {
      this.onLoaded({ label, report: load(), skipped });
    } catch (error) {
      this.onLoaded({ label, error: errorInfo(error) });
    }
  }

  async #run(label, work) {
    this.busy += 1;
    this.#setBusy(`Loading ${label}…`);
    try {
      await work();
    } catch (error) {
      this.onLoaded({ label, error: errorInfo(error) });
    } finally {
      this.busy -= 1;
      this.#setBusy(this.busy ? 'Loading…' : '');
    }
  }

  #setBusy(text) {
    this.status.textContent = text;
    this.sampleButton.disabled = this.busy > 0;
    document.body.toggleAttribute('data-busy', this.busy > 0);
  }
}
