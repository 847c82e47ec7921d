// Pages, bundlers, Web Workers: the .wasm is fetched next to this module and compiled on first use.
import init, * as raw from '../wasm/dsh_session_search.js';
import { createApi } from '../lib/core.js';
import { helperOver } from '../lib/readers.js';

/** The compiled module, kept to hand to helpers: none compiles it again or starts unoptimised. */
let compiled;

/** Compiles the .wasm as it downloads (or from its bytes, when the server's type is not wasm's). */
async function compile(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`);
  if (response.headers.get('Content-Type')?.startsWith('application/wasm')) return WebAssembly.compileStreaming(response);
  return WebAssembly.compile(await response.arrayBuffer());
}

/** Helpers that read a large load's logs in parallel, each a module Web Worker. */
const readers = {
  cores: () => globalThis.navigator?.hardwareConcurrency ?? 1,
  spawn() {
    const worker = new Worker(new URL('../lib/reader-web.js', import.meta.url), { type: 'module', name: 'dsh-session-search reader' });
    worker.postMessage({ module: compiled });
    const subscribe = (onMessage, onError) => {
      worker.addEventListener('message', (event) => onMessage(event.data));
      worker.addEventListener('error', onError);
    };
    return helperOver(worker, subscribe, () => worker.terminate());
  },
};

/** `warmUp`'s log, fetched next to this module when a warm-up first asks for it. */
async function warmUpLog() {
  const url = new URL('../data/warm-up.jsonl.zstd', import.meta.url);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`);
  return response.arrayBuffer();
}

const api = createApi(
  async () => {
    compiled = await compile(new URL('../wasm/dsh_session_search_bg.wasm', import.meta.url));
    await init({ module_or_path: compiled });
    return raw;
  },
  typeof Worker === 'function' ? readers : null,
  warmUpLog,
);

export const {
  SessionArchive,
  encodeSessionReferenceUri,
  decodeSessionReferenceUri,
  formatSessionReferenceMention,
  parseSessionReferenceText,
} = api;
export * from '../lib/exports.js';
