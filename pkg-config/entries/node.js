// Node, Deno and Bun: the .wasm is read from the package's own folder on first use.
import { readFileSync } from 'node:fs';
import * as raw from '../wasm/dsh_session_search.js';
import { createApi } from '../lib/core.js';

const api = createApi(() => {
  raw.initSync({ module: readFileSync(new URL('../wasm/dsh_session_search_bg.wasm', import.meta.url)) });
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
