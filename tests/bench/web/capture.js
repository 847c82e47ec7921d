// Evaluated before the package's worker script: keeps the wasm instance the package creates
// (wasm-bindgen's web glue instantiates through `instantiateStreaming` or `instantiate`) and
// answers {op: 'bench-memory', memoryId} with the byte length of its memory. The package's own
// listener answers such a message with an error for id `undefined`, which its client ignores.
let memory = null;
const keep = (result) => {
  const instance = result instanceof WebAssembly.Instance ? result : result.instance;
  if (instance?.exports?.memory instanceof WebAssembly.Memory) memory = instance.exports.memory;
  return result;
};
const { instantiate, instantiateStreaming } = WebAssembly;
WebAssembly.instantiate = (...args) => instantiate(...args).then(keep);
WebAssembly.instantiateStreaming = (...args) => instantiateStreaming(...args).then(keep);

self.addEventListener('message', (event) => {
  if (event.data?.op !== 'bench-memory') return;
  self.postMessage({ benchMemory: { id: event.data.memoryId, bytes: memory === null ? 0 : memory.buffer.byteLength } });
});
