// Pages, bundlers, Web Workers: the .wasm is fetched next to this module on first use.
import init, * as raw from '../wasm/dsh_session_search.js';
import { createApi } from '../lib/core.js';

const api = createApi(async () => {
  await init({ module_or_path: new URL('../wasm/dsh_session_search_bg.wasm', import.meta.url) });
  return raw;
});

export const {
  SessionArchive,
  encodeSessionReferenceUri,
  decodeSessionReferenceUri,
  formatSessionReferenceMention,
  parseSessionReferenceText,
} = api;
export * from '../lib/exports.js';
