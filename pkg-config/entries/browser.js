// Pages, bundlers, Web Workers: the .wasm is fetched next to this module on first use.
import init, * as raw from '../wasm/dsh_session_search.js';
import { createApi } from '../lib/core.js';
import { helperOver } from '../lib/readers.js';

/** Helpers that read a large load's logs in parallel, each a module Web Worker. */
const readers = {
  cores: () => globalThis.navigator?.hardwareConcurrency ?? 1,
  spawn() {
    const worker = new Worker(new URL('../lib/reader-web.js', import.meta.url), { type: 'module', name: 'dsh-session-search reader' });
    const subscribe = (onMessage, onError) => {
      worker.addEventListener('message', (event) => onMessage(event.data));
      worker.addEventListener('error', onError);
    };
    return helperOver(worker, subscribe, () => worker.terminate());
  },
};

const api = createApi(async () => {
  await init({ module_or_path: new URL('../wasm/dsh_session_search_bg.wasm', import.meta.url) });
  return raw;
}, typeof Worker === 'function' ? readers : null);

export const {
  SessionArchive,
  encodeSessionReferenceUri,
  decodeSessionReferenceUri,
  formatSessionReferenceMention,
  parseSessionReferenceText,
} = api;
export * from '../lib/exports.js';
