// Stored search indexes, keyed by the loaded inputs (engine.js): the bytes of `exportIndex()`,
// given back to `importIndex()` when the same archive is opened again. The library refuses an
// index built over another corpus, so a stale key only costs a rebuild. IndexedDB runs in
// store-worker.js (a 100 MB put would block the page); the bytes are transferred to it and
// come back as a Blob. Storage failures only lose the cache.

export class IndexStore {
  #worker = null;
  #pending = new Map();
  #next = 0;

  /** Starts the store's worker (and its database) ahead of the first lookup. */
  open() {
    this.get('').catch(() => {});
  }

  #call(op, key, bytes) {
    if (!this.#worker) {
      this.#worker = new Worker(new URL('./store-worker.js', import.meta.url), { type: 'module', name: 'index-store' });
      this.#worker.addEventListener('message', ({ data }) => {
        const pending = this.#pending.get(data.id);
        this.#pending.delete(data.id);
        if (data.ok) pending?.resolve(data.value);
        else pending?.reject(new Error(data.error));
      });
    }
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ id, op, key, bytes }, bytes ? [bytes.buffer] : []);
    });
  }

  /** The stored index for `key` as a Blob, or null. */
  async get(key) {
    try {
      return await this.#call('get', key);
    } catch {
      return null;
    }
  }

  /** Stores `bytes` (transferred: unusable here afterwards); true if stored. */
  async put(key, bytes) {
    try {
      return await this.#call('put', key, bytes);
    } catch {
      return false;
    }
  }

  async clear() {
    try {
      await this.#call('clear');
    } catch {
      /* nothing stored */
    }
  }
}
