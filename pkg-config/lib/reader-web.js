// A Web Worker that reads logs for a load in another thread (see readers.js). Its first
// message is the compiled module of the instance that started it.
import init, { readLogForTransfer } from '../wasm/dsh_session_search.js';
import { serveReads } from './readers.js';

let ready;
const serve = serveReads(() => ready, (_, ticket, bytes) => readLogForTransfer(ticket, bytes), (message, transfer) => self.postMessage(message, transfer));
self.addEventListener('message', (event) => {
  if (event.data.module !== undefined) ready = init({ module_or_path: event.data.module });
  else serve(event.data);
});
