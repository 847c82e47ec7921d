// The viewer's one handle on the wasm package: loads files into a `WasmArchive`, calls its
// JSON-RPC methods, parses their JSON text, and remembers per-session event counts from load
// reports.

import init, { WasmArchive } from './pkg/dsh_session_search.js';

/** An error from the library, with its stable code (or `VIEWER_ERROR` for anything else). */
export function errorInfo(error) {
  return {
    code: typeof error?.code === 'string' ? error.code : 'VIEWER_ERROR',
    message: error?.message ? String(error.message) : String(error),
  };
}

export class Archive {
  /** Fetches and instantiates the wasm module, then returns an empty archive. */
  static async open() {
    await init();
    return new Archive(new WasmArchive('{}'));
  }

  constructor(engine) {
    this.engine = engine;
    /** Events per session id, from the `events` of load reports (`added` / `replaced`). */
    this.eventCounts = new Map();
    /** Bumped after every load that changed something; views compare it to drop stale work. */
    this.generation = 0;
  }

  /** Calls a JSON-RPC method with by-position params; returns the parsed result. */
  call(method, ...params) {
    return JSON.parse(this.engine.call(method, JSON.stringify(params)));
  }

  /** Loads one file (ZIP, .jsonl or .jsonl.zstd); returns the load report. Throws coded errors. */
  loadFile(name, bytes, strict) {
    return this.#load([[name, bytes]], strict);
  }

  /** Loads a folder given as paths below it (its name first) and their bytes; returns the load report. */
  loadEntries(name, paths, contents, strict) {
    return this.#load(paths.map((path, i) => [path, contents[i]]), strict);
  }

  #load(entries, strict) {
    this.engine.loadBegin(JSON.stringify({ strict }));
    try {
      for (const [path, bytes] of entries) this.engine.loadAdd(path, bytes);
      return this.#remember(JSON.parse(this.engine.loadCommit()));
    } catch (error) {
      this.engine.loadAbort();
      throw error;
    }
  }

  #remember(report) {
    for (const session of report.sessions ?? []) {
      if (session.outcome !== 'duplicate') this.eventCounts.set(session.sessionId, session.events);
    }
    this.generation += 1;
    return report;
  }

  /** Every session, newest first, each with its latest title (or null) and event count. */
  sessions() {
    const records = this.call('listSessions');
    const ids = records.map((r) => r.header.id);
    const titles = new Map();
    if (ids.length > 0) {
      for (const snapshot of this.call('readTitleSnapshots', ids)) {
        if (snapshot.status === 'fulfilled') titles.set(snapshot.sessionId, snapshot.value?.title?.title ?? null);
      }
    }
    return records.map((record) => ({
      ...record,
      title: titles.get(record.header.id) ?? null,
      events: this.eventCounts.get(record.header.id) ?? null,
    }));
  }
}
