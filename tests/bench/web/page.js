// The Chromium engine's page: fetches the corpus into Blobs first (a dropped folder's files are
// on disk before the load starts), then runs lib/protocol.mjs's `runPackage` through the
// package's `dsh-session-search/worker` entry, in a worker that also reports its wasm memory
// (web/worker.js). Results land in `window.__bench`.
import { SessionArchive as WorkerArchive } from '/app/node_modules/dsh-session-search/worker/client.js';
import { runPackage } from '/bench/lib/protocol.mjs';

const json = async (url) => (await fetch(url)).json();

async function main() {
  const [files, queries, plan, manifest] = await Promise.all(['/corpus/files.json', '/corpus/queries.json', '/plan.json', '/corpus/manifest.json'].map(json));
  const settings = Object.fromEntries(new URL(location.href).searchParams);
  // chromium.mjs --warm: the archive is warmed up after create (the engine pkg/chromium-warm).
  const warm = settings.warm === '1';
  // A dropped folder: every file with its path under the folder's name.
  const entries = await Promise.all(files.map(async (path) => ({ path: `root/${path}`, bytes: await (await fetch(`/corpus/root/${path}`)).blob() })));
  const worker = new Worker('/bench/web/worker.js', { type: 'module', name: 'dsh-session-search' });
  let nextMemory = 0;
  const waiting = new Map();
  worker.addEventListener('message', (event) => {
    const reply = event.data?.benchMemory;
    if (reply !== undefined) { waiting.get(reply.id)?.(reply.bytes); waiting.delete(reply.id); }
  });
  const memory = () => new Promise((resolve) => {
    const id = nextMemory++;
    waiting.set(id, resolve);
    worker.postMessage({ op: 'bench-memory', memoryId: id });
  });
  const SessionArchive = { create: (options) => WorkerArchive.create(options, { worker }) };
  const result = await runPackage({
    SessionArchive, entries, queries, plan,
    fallbackSession: manifest.largestSession.id,
    runs: Number(settings.runs),
    reps: Number(settings.reps),
    memory,
    // Exposed by chromium.mjs: resolves once the machine is quiet.
    settle: typeof window.benchSettle === 'function' ? () => window.benchSettle() : undefined,
    warmUp: warm,
  });
  return { engine: warm ? 'pkg/chromium-warm' : 'pkg/chromium', events: manifest.events, textBytes: manifest.textBytes, userAgent: navigator.userAgent, crossOriginIsolated: self.crossOriginIsolated, ...result };
}

main().then((result) => { window.__bench = { result }; }, (error) => { window.__bench = { error: String(error.stack || error) }; });
