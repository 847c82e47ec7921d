// Stored search indexes in IndexedDB, keyed by the loaded inputs (engine.js): the bytes of
// `exportIndex()`, given back to `importIndex()` when the same archive is opened again. The
// library refuses an index built over another corpus, so a stale key only costs a rebuild.
// Keeps the few most recently used indexes; storage failures only lose the cache.

const DB = 'dsh-session-viewer';
const STORE = 'indexes';
const USED = 'used';
const KEEP = 4;

export class IndexStore {
  #db = null;

  #open() {
    this.#db ??= new Promise((resolve, reject) => {
      const request = indexedDB.open(DB, 1);
      request.onupgradeneeded = () => {
        request.result.createObjectStore(STORE);
        request.result.createObjectStore(USED);
      };
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    return this.#db;
  }

  async #run(mode, fn, store = STORE) {
    const db = await this.#open();
    return new Promise((resolve, reject) => {
      const tx = db.transaction(store, mode);
      const result = fn(tx.objectStore(store));
      tx.oncomplete = () => resolve(result.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  }

  /** The stored index bytes for `key`, or null. */
  async get(key) {
    try {
      const bytes = await this.#run('readonly', (s) => s.get(key));
      if (!bytes) return null;
      await this.#run('readwrite', (s) => s.put(Date.now(), key), USED);
      return new Uint8Array(bytes);
    } catch {
      return null;
    }
  }

  /** Stores `bytes` under `key`, dropping the least recently used beyond KEEP; true if stored. */
  async put(key, bytes) {
    try {
      await this.#run('readwrite', (s) => s.put(bytes.slice().buffer, key));
      await this.#run('readwrite', (s) => s.put(Date.now(), key), USED);
      const keys = await this.#run('readonly', (s) => s.getAllKeys(), USED);
      const times = await this.#run('readonly', (s) => s.getAll(), USED);
      const oldest = keys.map((k, i) => [k, times[i]]).sort((a, b) => b[1] - a[1]).slice(KEEP);
      for (const [k] of oldest) {
        await this.#run('readwrite', (s) => s.delete(k));
        await this.#run('readwrite', (s) => s.delete(k), USED);
      }
      return true;
    } catch {
      return false;
    }
  }

  async clear() {
    try {
      await this.#run('readwrite', (s) => s.clear());
      await this.#run('readwrite', (s) => s.clear(), USED);
    } catch {
      /* nothing stored */
    }
  }
}
