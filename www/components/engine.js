// The viewer's one handle on the library: the published package's worker entry (every call is
// a Promise answered by a Web Worker, so the page never blocks), plus what the viewer keeps
// around it: event counts from load reports, a generation counter that tells views their data
// changed, and the stored search index (IndexedDB) so reopening an archive skips indexing.

import { SessionArchive } from '../node_modules/dsh-session-search/worker/client.js';
import { IndexStore } from './store.js';

export class Engine {
  static async create() {
    const archive = await SessionArchive.create();
    // While the page waits for files, the worker gets the load's code optimised, so a first
    // load runs at full speed from its start; any call the viewer makes stops the warm-up.
    archive.warmUp().catch((error) => console.warn('dsh-session-search warm-up:', error));
    return new Engine(archive);
  }

  constructor(archive) {
    this.archive = archive;
    /** Events per session id, from the load reports (`added` / `replaced`). */
    this.eventCounts = new Map();
    /** One key per loaded input, in load order: the stored index is keyed by all of them. */
    this.inputKeys = [];
    this.generation = 0;
    this.store = new IndexStore();
  }

  /**
   * Loads `inputs` (Files or `{path, bytes}`); `onProgress` gets the package's progress.
   * Resolves to `{report, index}` where `index` says how the search index was obtained.
   * `onBuilding` is called once an index build has started: from then on the sessions can be
   * listed and searched (the package answers searches while its build runs).
   */
  async load(inputs, { strict = false, signal, onProgress, onIndexing, onIndexProgress, onBuilding } = {}) {
    const started = performance.now();
    performance.mark('viewer:decoding');
    // The stored-index key and the store are got ready while the worker decodes, so indexing
    // (or restoring) starts as soon as the load is in.
    const key = inputKey(inputs);
    key.catch(() => {});
    this.store.open();
    const report = await this.archive.load(inputs, { strict, signal, onProgress });
    const loadMs = performance.now() - started;
    performance.mark('viewer:decoded');
    for (const session of report.sessions) {
      if (session.outcome !== 'duplicate') this.eventCounts.set(session.sessionId, session.events);
    }
    const changed = report.sessions.some((s) => s.outcome !== 'duplicate');
    if (changed) {
      onIndexing?.();
      this.generation += 1;
      this.inputKeys.push(await key);
    }
    const index = changed ? await this.#index(signal, onIndexProgress, onBuilding) : { how: 'unchanged', ms: 0 };
    return { report, index: { ...index, loadMs } };
  }

  /** Restores the stored index for this corpus, or builds it now and stores it. */
  async #index(signal, onProgress, onBuilding) {
    const key = this.inputKeys.join('\n');
    const started = performance.now();
    const stored = await this.store.get(key);
    if (stored) {
      try {
        await this.archive.importIndex(stored);
        return { how: 'restored', ms: performance.now() - started, bytes: stored.size };
      } catch (error) {
        // Another version or corpus under the same key: rebuild below and overwrite it.
        console.info(`stored index refused (${error.code}); rebuilding`);
      }
    }
    if (signal?.aborted) return { how: 'skipped', ms: 0 };
    try {
      const building = this.archive.buildIndex({ signal, onProgress });
      // Not before: a search then would build the whole index itself, and a stored index
      // (restored above) comes quicker than any build.
      onBuilding?.();
      await building;
    } catch (error) {
      // Cancelled while indexing: what was built stays, and the first search finishes it.
      if (error.code === 'SESSION_QUERY_ABORTED') return { how: 'skipped', ms: 0 };
      throw error;
    }
    performance.mark('viewer:built');
    const bytes = await this.archive.exportIndex();
    performance.mark('viewer:indexed');
    const ms = performance.now() - started;
    const size = bytes.byteLength;
    const saved = await this.store.put(key, bytes);
    performance.mark('viewer:stored');
    return { how: 'built', ms, bytes: size, saved };
  }

  /** Every session with its title, newest first. */
  async sessions() {
    const records = await this.archive.listSessions();
    const ids = records.map((r) => r.header.id);
    const titles = new Map();
    if (ids.length > 0) {
      for (const s of await this.archive.readTitleSnapshots(ids)) {
        if (s.status === 'fulfilled' && typeof s.value?.title?.title === 'string') titles.set(s.sessionId, s.value.title.title);
      }
    }
    return records
      .map((record) => ({
        ...record,
        id: record.header.id,
        title: titles.get(record.header.id) ?? null,
        events: this.eventCounts.get(record.header.id) ?? null,
      }))
      .sort((a, b) => b.header.createdAt - a.header.createdAt || (a.id < b.id ? -1 : 1));
  }

  call(method, ...args) {
    return this.archive[method](...args);
  }
}

/** A key naming one load's inputs: their paths, sizes, dates and a hash of their first bytes. */
async function inputKey(inputs) {
  const list = Array.isArray(inputs) ? inputs : [inputs];
  const parts = [];
  for (const input of list) {
    const blob = input instanceof Blob ? input : input.bytes instanceof Blob ? input.bytes : new Blob([input.bytes]);
    const path = input instanceof Blob ? input.webkitRelativePath || input.name : input.path;
    const head = new Uint8Array(await blob.slice(0, 65536).arrayBuffer());
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', head));
    const hex = [...digest.slice(0, 12)].map((b) => b.toString(16).padStart(2, '0')).join('');
    parts.push(`${path}\u0000${blob.size}\u0000${input.lastModified ?? ''}\u0000${hex}`);
  }
  parts.sort();
  const whole = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(parts.join('\n'))));
  return [...whole].map((b) => b.toString(16).padStart(2, '0')).join('');
}
