// `dsh-session-search/worker`: the SessionArchive API with the engine in a Web Worker. The
// types of requests and results are the main entry's.
import type {
  SessionArchive as InProcessArchive,
  SessionArchiveOptions,
  ParsedReferenceText,
  SessionReferenceInput,
} from './index.js';

export * from './index.js';

export interface WorkerArchiveOptions {
  /** The worker to run in; by default `new Worker(new URL('./worker.js', import.meta.url), {type: 'module'})`
   *  inside this package (bundlers: `new Worker(new URL('dsh-session-search/worker-script', import.meta.url), {type: 'module'})`). */
  worker?: Worker;
}

/** A lazy source's functions cannot be posted to a worker: `sourceReport` is in-process only. */
type ArchiveMethods = Omit<InProcessArchive, 'free' | 'sourceReport'>;

/** Same methods and results as the in-process archive, each a Promise answered by the worker. */
export declare class SessionArchive implements ArchiveMethods {
  private constructor();
  /** No `source`: a lazy source's functions cannot cross to the worker (create it in a worker
   *  of your own with the main entry). */
  static create(options?: Omit<SessionArchiveOptions, 'source'>, worker?: WorkerArchiveOptions): Promise<SessionArchive>;
  load: ArchiveMethods['load'];
  listSessions: ArchiveMethods['listSessions'];
  filterSessions: ArchiveMethods['filterSessions'];
  readSession: ArchiveMethods['readSession'];
  listEvents: ArchiveMethods['listEvents'];
  readSurface: ArchiveMethods['readSurface'];
  readEvent: ArchiveMethods['readEvent'];
  traceSession: ArchiveMethods['traceSession'];
  traceEvent: ArchiveMethods['traceEvent'];
  readTitle: ArchiveMethods['readTitle'];
  readTitleSnapshots: ArchiveMethods['readTitleSnapshots'];
  filterEvents: ArchiveMethods['filterEvents'];
  listDocuments: ArchiveMethods['listDocuments'];
  searchSessions: ArchiveMethods['searchSessions'];
  searchEvents: ArchiveMethods['searchEvents'];
  addLive: ArchiveMethods['addLive'];
  appendLive: ArchiveMethods['appendLive'];
  listCandidates: ArchiveMethods['listCandidates'];
  prepare: ArchiveMethods['prepare'];
  encodeSessionReferenceUri: ArchiveMethods['encodeSessionReferenceUri'];
  decodeSessionReferenceUri: ArchiveMethods['decodeSessionReferenceUri'];
  formatSessionReferenceMention: ArchiveMethods['formatSessionReferenceMention'];
  parseSessionReferenceText: ArchiveMethods['parseSessionReferenceText'];
  buildIndex: ArchiveMethods['buildIndex'];
  exportIndex: ArchiveMethods['exportIndex'];
  importIndex: ArchiveMethods['importIndex'];
  /** Runs in the archive's worker, so the page's thread stays free. */
  warmUp: ArchiveMethods['warmUp'];
  /** Ends the worker; later calls fail with `SESSION_ARCHIVE_CLOSED`. */
  free(): void;
}

export declare function encodeSessionReferenceUri(sessionId: string): Promise<string>;
export declare function decodeSessionReferenceUri(uri: string): Promise<string>;
export declare function formatSessionReferenceMention(reference: SessionReferenceInput): Promise<string>;
export declare function parseSessionReferenceText(text: string): Promise<ParsedReferenceText>;
