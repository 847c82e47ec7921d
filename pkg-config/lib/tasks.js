// The package's way to let other work run between steps, shared by the engine (core.js) and
// the worker client.

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
