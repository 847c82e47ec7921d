// A Web Worker that reads logs for a load in another thread (see readers.js).
import init, { readLogForTransfer } from '../wasm/dsh_session_search.js';
import { serveReads } from './readers.js';

let ready;
const module = () => (ready ??= init({ module_or_path: new URL('../wasm/dsh_session_search_bg.wasm', import.meta.url) }));
const serve = serveReads(module, (_, ticket, bytes) => readLogForTransfer(ticket, bytes), (message, transfer) => self.postMessage(message, transfer));
self.addEventListener('message', (event) => serve(event.data));
