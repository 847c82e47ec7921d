// TEMPORARY: the contract's WasmArchive over the older SessionSearch exports, so the package
// can be exercised before the staged-load exports exist. Removed once src/wasm.rs has them.
export function adaptRaw(raw) {
  if (typeof raw.WasmArchive === 'function') return raw;
  class WasmArchive {
    constructor(optionsJson) {
      const options = JSON.parse(optionsJson);
      for (const key of Object.keys(options)) {
        if (key !== 'tokenizer' && key !== 'limits') throw coded('SESSION_INVALID_ARGUMENT', `unknown option ${key}`);
      }
      this.inner = new raw.SessionSearch();
      this.staged = null;
    }
    call(method, params) { return this.inner.call(method, params); }
    loadBegin(options) { this.staged = { strict: !!JSON.parse(options).strict, entries: [] }; }
    loadAdd(path, bytes) { this.staged.entries.push([path, bytes]); }
    loadStep() {
      const total = this.staged.entries.reduce((n, [, b]) => n + b.byteLength, 0);
      return JSON.stringify({ done: true, bytesDone: total, bytesTotal: total, sessionsDone: 0, sessionsTotal: 0 });
    }
    loadCommit() {
      const { strict, entries } = this.staged;
      this.staged = null;
      const files = entries.filter(([p]) => !p.includes('/'));
      const folder = entries.filter(([p]) => p.includes('/'));
      let report = null;
      for (const [p, b] of files) report = merge(report, JSON.parse(this.inner.loadFile(p, b, strict)));
      if (folder.length) report = merge(report, JSON.parse(this.inner.loadEntries('entries', folder.map(([p]) => p), folder.map(([, b]) => b), strict)));
      return JSON.stringify(report);
    }
    loadAbort() { this.staged = null; }
    prepare(params) { return JSON.stringify({ result: JSON.parse(this.inner.call('prepare', params)), spills: [] }); }
    exportIndex() { return this.inner.exportIndex(); }
    importIndex(bytes) { return this.inner.importIndex(bytes); }
    free() { this.inner.free(); }
  }
  function merge(a, b) {
    if (a === null) return b;
    for (const key of Object.keys(b)) if (Array.isArray(a[key])) a[key] = a[key].concat(b[key]);
    return a;
  }
  function coded(code, message) { const e = new Error(message); e.code = code; return e; }
  const scratch = () => new raw.SessionSearch();
  return {
    WasmArchive,
    callStatic(method, params) { const s = scratch(); try { return s.call(method, params); } finally { s.free(); } },
  };
}
