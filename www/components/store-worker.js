// The IndexedDB side of store.js, in its own worker: an exported index can be 100 MB, and
// IndexedDB serialises a value on the thread that puts it, so the page must not. Indexes are
// stored as Blobs, which travel between threads and into importIndex() by reference.
// Requests: {id, op: 'get' | 'put' | 'clear', key, bytes}; answers: {id, ok, value | error}.

const DB = 'dsh-session-viewer';
const STORE = 'indexes';
const USED = 'used';
const KEEP = 4;

let db = null;

function open() {
  db ??= new Promise((resolve, reject) => {
    const request = indexedDB.open(DB, 1);
    request.onupgradeneeded = () => {
      request.result.createObjectStore(STORE);
      request.result.createObjectStore(USED);
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  return db;
}

async function run(mode, store, fn) {
  const database = await open();
  return new Promise((resolve, reject) => {
    const tx = database.transaction(store, mode);
    const request = fn(tx.objectStore(store));
    tx.oncomplete = () => resolve(request.result);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

async function get(key) {
  const blob = await run('readonly', STORE, (s) => s.get(key));
  if (!blob) return null;
  await run('readwrite', USED, (s) => s.put(Date.now(), key));
  return blob;
}

async function put(key, bytes) {
  await run('readwrite', STORE, (s) => s.put(new Blob([bytes]), key));
  await run('readwrite', USED, (s) => s.put(Date.now(), key));
  const keys = await run('readonly', USED, (s) => s.getAllKeys());
  const times = await run('readonly', USED, (s) => s.getAll());
  const oldest = keys.map((k, i) => [k, times[i]]).sort((a, b) => b[1] - a[1]).slice(KEEP);
  for (const [k] of oldest) {
    await run('readwrite', STORE, (s) => s.delete(k));
    await run('readwrite', USED, (s) => s.delete(k));
  }
  return true;
}

async function clear() {
  await run('readwrite', STORE, (s) => s.clear());
  await run('readwrite', USED, (s) => s.clear());
  return true;
}

const OPS = { get, put, clear };

self.addEventListener('message', async ({ data }) => {
  try {
    self.postMessage({ id: data.id, ok: true, value: await OPS[data.op](data.key, data.bytes) });
  } catch (error) {
    self.postMessage({ id: data.id, ok: false, error: String(error?.message ?? error) });
  }
});
