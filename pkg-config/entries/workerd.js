// workerd / Cloudflare Workers: the platform imports the .wasm as a compiled WebAssembly.Module
// (fetching or reading files is not possible there, so `warmUp` has no log to warm up with:
// an isolate has no idle time before its first request anyway).
import wasmModule from '../wasm/dsh_session_search_bg.wasm';
import * as raw from '../wasm/dsh_session_search.js';
import { createApi } from '../lib/core.js';

const api = createApi(() => {
  raw.initSync({ module: wasmModule });
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
