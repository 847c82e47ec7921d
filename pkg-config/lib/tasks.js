// Waiting in the package's steps, shared by the engine (core.js), its read-ahead (readers.js)
// and the worker client: letting other work run, and waiting for a helper no longer than a
// progress display may stand still.

/**
 * Lets queued messages (an abort, other calls) run. setImmediate where there is one (Node,
 * Bun): Node delivers a process's first MessageChannel message 50-70 ms late, a tenth of a
 * large first load. Else a MessageChannel round trip, not setTimeout(0): nested timers are
 * clamped to 4 ms, which over hundreds of steps adds seconds.
 */
export function yieldToEventLoop() {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  if (typeof MessageChannel !== 'function') return new Promise((resolve) => setTimeout(resolve, 0));
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}

/**
 * How long a load or a build waits for a helper before it reports its (unchanged) progress
 * again, so a progress display never looks stalled: a helper's first read, its start included,
 * or a large log's, or the last segments of a build, can take a few hundred ms.
 */
export const REPORT_EVERY_MS = 100;

/** True once `promise` (which never rejects) settles, false if `ms` pass first. */
export function settlesWithin(promise, ms) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([promise.then(() => true), late]).finally(() => clearTimeout(timer));
}
