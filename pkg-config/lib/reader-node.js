// A worker thread that reads logs for a load in another thread (see readers.js): Node, Deno, Bun.
import { parentPort, workerData } from 'node:worker_threads';
import * as raw from '../wasm/dsh_session_search.js';
import { serveReads } from './readers.js';

let ready = false;
const module = () => {
  if (!ready) raw.initSync({ module: workerData });
  ready = true;
  return raw;
};
const serve = serveReads(module, (m, ticket, bytes) => m.readLogForTransfer(ticket, bytes), (message, transfer) => parentPort.postMessage(message, transfer));
parentPort.on('message', serve);
