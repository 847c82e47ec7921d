// Node, Deno and Bun: the .wasm is read from the package's own folder on first use.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import * as raw from '../wasm/dsh_session_search.js';
import { createApi } from '../lib/core.js';
import { helperOver } from '../lib/readers.js';

/** Helpers that read a large load's logs in parallel, each a worker thread. */
const readers = {
  cores: () => availableParallelism(),
  spawn() {
    // The compiled module is shared, so a helper neither compiles it again nor starts on
    // unoptimised code.
    const worker = new Worker(new URL('../lib/reader-node.js', import.meta.url), { workerData: compiled });
    const subscribe = (onMessage, onError) => {
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onError);
    };
    // A helper keeps the process alive only while it has work.
    const hold = (held) => (held ? worker.ref() : worker.unref());
    return helperOver(worker, subscribe, () => worker.terminate(), hold);
  },
};

let compiled;
const api = createApi(
  () => {
    compiled = new WebAssembly.Module(readFileSync(new URL('../wasm/dsh_session_search_bg.wasm', import.meta.url)));
    raw.initSync({ module: compiled });
    return raw;
  },
  readers,
  // `warmUp`'s log, read from the package's folder when a warm-up first asks for it.
  () => readFile(new URL('../data/warm-up.jsonl.zstd', import.meta.url)),
);

export const {
  SessionArchive,
  encodeSessionReferenceUri,
  decodeSessionReferenceUri,
  formatSessionReferenceMention,
  parseSessionReferenceText,
} = api;
export * from '../lib/exports.js';
