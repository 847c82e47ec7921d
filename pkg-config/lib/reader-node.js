// A worker thread that helps an archive in another thread (see readers.js and segments.js):
// it reads logs for a load and builds index segments. Node, Deno and Bun.
import { parentPort, workerData } from 'node:worker_threads';
import * as raw from '../wasm/dsh_session_search.js';
import { serveHelper } from './readers.js';

let ready = false;
const module = () => {
  if (!ready) raw.initSync({ module: workerData });
  ready = true;
  return raw;
};
const work = {
  read: (m, ticket, bytes, spare) => m.readLogForTransfer(ticket, bytes, spare),
  build: (m, job) => m.buildIndexSegment(job),
  warmUp: (m, round, path, log) => m.warmUpRound(round, path, log),
};
const serve = serveHelper(module, work, (message, transfer) => parentPort.postMessage(message, transfer));
parentPort.on('message', serve);
