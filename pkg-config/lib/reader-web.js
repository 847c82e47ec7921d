// A Web Worker that helps an archive in another thread (see readers.js and segments.js): it
// reads logs for a load and builds index segments. Its first message is the compiled module
// of the instance that started it.
import init, { buildIndexSegment, readLogForTransfer, warmUpRound } from '../wasm/dsh_session_search.js';
import { serveHelper } from './readers.js';

let ready;
const work = {
  read: (_, ticket, bytes, spare) => readLogForTransfer(ticket, bytes, spare),
  build: (_, job) => buildIndexSegment(job),
  warmUp: (_, round, path, log) => warmUpRound(round, path, log),
};
const serve = serveHelper(() => ready, work, (message, transfer) => self.postMessage(message, transfer));
self.addEventListener('message', (event) => {
  if (event.data.module !== undefined) ready = init({ module_or_path: event.data.module });
  else serve(event.data);
});
