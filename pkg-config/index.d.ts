// Types of dsh-session-search: DSH's names and shapes. Every function and method returns a
// Promise (the same API works over a Web Worker, see `dsh-session-search/worker`); `free()` is
// the one synchronous method.

/** Any value JSON carries: what DSH stores in events and what requests are made of. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

// ---------------------------------------------------------------------------------------------
// Error codes

/** DSH's 17 query codes. */
export type SessionQueryErrorCode =
  | 'SESSION_QUERY_ABORTED'
  | 'SESSION_QUERY_CORRUPT_SESSION'
  | 'SESSION_QUERY_EVENT_NOT_FOUND'
  | 'SESSION_QUERY_INDEX_FAILED'
  | 'SESSION_QUERY_INVALID_CONFIG'
  | 'SESSION_QUERY_INVALID_CURSOR'
  | 'SESSION_QUERY_INVALID_FILTER'
  | 'SESSION_QUERY_INVALID_LIMIT'
  | 'SESSION_QUERY_INVALID_QUERY'
  | 'SESSION_QUERY_INVALID_LINEAGE'
  | 'SESSION_QUERY_INVALID_SURFACE'
  | 'SESSION_QUERY_INVALID_WINDOW'
  | 'SESSION_QUERY_PERSISTENCE_FAILED'
  | 'SESSION_QUERY_SEARCH_DISABLED'
  | 'SESSION_QUERY_SESSION_NOT_FOUND'
  | 'SESSION_QUERY_STALE_CURSOR'
  | 'SESSION_QUERY_SOURCE_CONFLICT';

/** DSH's 7 cross-session reference codes. */
export type SessionReferenceErrorCode =
  | 'SESSION_REFERENCE_INVALID_CONFIG'
  | 'SESSION_REFERENCE_INVALID_REFERENCE'
  | 'SESSION_REFERENCE_SELF_REFERENCE'
  | 'SESSION_REFERENCE_TOO_MANY'
  | 'SESSION_REFERENCE_READ_FAILED'
  | 'SESSION_REFERENCE_BUDGET_EXCEEDED'
  | 'SESSION_REFERENCE_CANCELLED';

/** Why one file or session did not load (in a LoadReport), or why a load was stopped. */
export type SessionLoadErrorCode =
  | 'SESSION_LOAD_CORRUPT'
  | 'SESSION_LOAD_DAMAGED'
  | 'SESSION_LOAD_INVALID_HEADER'
  | 'SESSION_LOAD_CORRUPT_FRAME'
  | 'SESSION_LOAD_UNSUPPORTED_VERSION'
  | 'SESSION_LOAD_UNKNOWN_EVENT_TYPE'
  | 'SESSION_LOAD_LIMIT_EXCEEDED'
  | 'SESSION_LOAD_IDENTITY_MISMATCH'
  | 'SESSION_LOAD_LAYOUT'
  | 'SESSION_LOAD_INVALID_ARCHIVE'
  | 'SESSION_LOAD_IO'
  | 'SESSION_LOAD_ABORTED';

/** A call the package refused before it reached the engine, or a freed archive. */
export type SessionArgumentErrorCode = 'SESSION_INVALID_ARGUMENT' | 'SESSION_ARCHIVE_CLOSED';

/** The wasm module failed (a trap); the module refuses every later call. */
export type SessionInternalErrorCode = 'SESSION_INTERNAL';

/** Every stable code this package throws. */
export type SessionErrorCode =
  | SessionQueryErrorCode
  | SessionReferenceErrorCode
  | SessionLoadErrorCode
  | SessionArgumentErrorCode
  | SessionInternalErrorCode;

export class SessionError<Code extends SessionErrorCode = SessionErrorCode> extends Error {
  readonly code: Code;
  constructor(code: Code, message: string, options?: ErrorOptions);
}
export class SessionQueryError extends SessionError<SessionQueryErrorCode> {
  readonly name: 'SessionQueryError';
}
export class SessionReferenceError extends SessionError<SessionReferenceErrorCode> {
  readonly name: 'SessionReferenceError';
}
export class SessionLoadError extends SessionError<SessionLoadErrorCode> {
  readonly name: 'SessionLoadError';
}
export class SessionArgumentError extends SessionError<SessionArgumentErrorCode> {
  readonly name: 'SessionArgumentError';
}
export class SessionInternalError extends SessionError<SessionInternalErrorCode> {
  readonly name: 'SessionInternalError';
}

// ---------------------------------------------------------------------------------------------
// Archive options and loading

export type SessionTokenizer = 'unicode61' | 'cjk';

export interface SessionLoadLimits {
  /** Per log, decompressed (default 1 GiB). */
  maxDecompressedBytes?: number;
  /** One JSONL line (default 256 MiB). */
  maxLineBytes?: number;
  /** Nesting of one record (default 512). */
  maxJsonDepth?: number;
  /** Total decompressed from one ZIP (default 4 GiB). */
  maxArchiveBytes?: number;
  /** Entries in one ZIP (default 100 000). */
  maxArchiveEntries?: number;
}

export interface SessionArchiveOptions {
  /** `unicode61` (DSH's recall, default) or `cjk` (Han/Kana/Hangul/Thai runs also as bigrams). */
  tokenizer?: SessionTokenizer;
  limits?: SessionLoadLimits;
  /** A lazy source: the archive lists its logs by their headers and reads each log's bytes
   *  only when a call needs that session (every log before the first search). */
  source?: SessionSource;
  /**
   * Helper workers started now, ahead of the load or index build that will take them: that
   * load then neither waits for their start nor runs its first part on unoptimised code, for
   * meanwhile each warms the module's code up in its own thread, as `warmUp()` does. Default:
   * as many as a large load starts (one less than the cores, at most 4; none where workers are
   * not available, as in workerd); `0` starts none. They never keep a Node process running;
   * the next load or build takes them, and the next archive created starts others.
   */
  readers?: number;
}

/** One stored log of a lazy source. `path` binds it as a load entry's path does (a
 *  persistence root's `<project>/<session>/session.jsonl`, or a top-level log); `size`, when
 *  known, spares a `readPrefix` of a log small enough to read whole. */
export interface SessionSourceLog {
  path: string;
  size?: number;
}

/** What a source's reads may give: bytes, or anything with `arrayBuffer()` (a `Response`, an
 *  R2 object body). */
export type SessionSourceBytes = Uint8Array | ArrayBuffer | Blob | { arrayBuffer(): Promise<ArrayBuffer> };

/** A store of logs read on demand: an R2 bucket, KV, `fetch`, a directory. Logs are `.jsonl`
 *  or `.jsonl.zstd` files (not ZIPs). A throw (or no bytes) from `read` is that log's
 *  failure (`SESSION_LOAD_IO`): it never hides the other logs. */
export interface SessionSource {
  list(): SessionSourceLog[] | Promise<SessionSourceLog[]>;
  read(path: string): SessionSourceBytes | Promise<SessionSourceBytes>;
  /** Optional ranged read: the log's first `length` bytes (fewer if it is shorter). The
   *  listing then reads prefixes, and reads a log whole only when its prefix lacks the header. */
  readPrefix?(path: string, length: number): SessionSourceBytes | Promise<SessionSourceBytes>;
}

/** One log a lazy source's listing took: `outcome` is `listed`, or `loaded` when the id was
 *  already loaded. */
export interface ListedSourceLog {
  sessionId: string;
  path: string;
  outcome: 'listed' | 'loaded';
}

/** What a lazy source's listing and its reads reported so far. */
export interface SourceReport {
  sessions: ListedSourceLog[];
  failures: LoadFailure[];
}

/** The bytes of one input: what `fetch`, a file picker or a drop gives. */
export type SessionBytes = Uint8Array | ArrayBuffer | Blob;

/** One file of a load. Entries that share a folder form that folder (a persistence root or an
 *  unpacked export, paths relative to it); a top-level `.zip` is an export; a top-level
 *  `.jsonl` / `.jsonl.zstd` is one log. */
export interface LoadEntry {
  path: string;
  bytes: SessionBytes;
}

/** A `File` stands for itself: its `webkitRelativePath` or `name` is its path. */
export type LoadInput = LoadEntry | Blob;

export interface LoadProgress {
  bytesDone: number;
  bytesTotal: number;
  sessionsDone: number;
  sessionsTotal: number;
}

export interface LoadOptions {
  /** Any failure fails the whole load (`SESSION_QUERY_PERSISTENCE_FAILED`); nothing is added. */
  strict?: boolean;
  /** Aborting stops the load (`SESSION_LOAD_ABORTED`); nothing is added. */
  signal?: AbortSignal;
  /** Called after each log is read (the first call also covers gathering the inputs) and at the end. */
  onProgress?: (progress: LoadProgress) => void;
  /**
   * Helper workers that read logs ahead of the load, each with its own instance of the module
   * (a Web Worker in browsers, a worker thread in Node, Deno and Bun), while this thread adopts
   * what they read and reads logs too. Default: one less than the cores (at most 4) for loads
   * of 16 MiB of logs or more, none for smaller ones or where workers are not available
   * (workerd). `0` reads every log in this thread. Only logs passed as their own inputs are
   * read in parallel (a ZIP is expanded in this thread). The answers are the same either way.
   */
  readers?: number;
}

export interface IndexProgress {
  sessionsDone: number;
  sessionsTotal: number;
  eventsDone: number;
  eventsTotal: number;
  /** The index is up to date and searchable. */
  done: boolean;
}

export interface BuildIndexOptions {
  /** Aborting stops between steps (`SESSION_QUERY_ABORTED`); the work done is kept. */
  signal?: AbortSignal;
  /** Called after each step and at the end. */
  onProgress?: (progress: IndexProgress) => void;
  /** Document text one step reads (default 262144: tens of milliseconds per step in a browser). */
  stepBytes?: number;
  /**
   * Helper workers (as for `LoadOptions.readers`) that build index segments from documents
   * this thread hands them, while it extracts the next ones and indexes the rest itself.
   * Default: one less than the cores (at most 4) for builds of 10,000 events or more, none
   * for smaller ones or where workers are not available (workerd). `0` builds in this thread
   * alone. The answers are the same either way.
   */
  builders?: number;
}

/** What one input held: a ZIP, a lone log, or the entries of a folder given by their paths. */
export interface InputSummary {
  /**
   * The input's label: a ZIP's or a lone log's path; for a folder's entries, the first segment
   * of their paths when they all share it (`root` for `root/…`), else `entries`.
   */
  input: string;
  /** How it was read: `zip`, `entries` or `file`. */
  kind: string;
  /** Session logs found. */
  logs: number;
  /** Media files seen (counted, kept out of the corpus). */
  media: number;
  /** Other files passed over. */
  ignored: number;
  /** ZIPs inside a ZIP, passed over unopened. */
  nestedArchives: number;
}

/** A session the load read: where from, how, and what became of it. */
export interface LoadedSession {
  sessionId: string;
  /** The input it came from (as `InputSummary.input`). */
  input: string;
  /** Its log's path inside that input; empty for a lone log (the input is the log). */
  path: string;
  encoding: 'raw' | 'zstd';
  /** Events in the log as read, closers added for an interrupted last turn included. */
  events: number;
  /** Closing events added in memory for an interrupted last turn. */
  syntheticClosers: number;
  /** Bytes at the end of the log left out as a torn tail. */
  tornBytes: number;
  /** `replaced`: a longer copy of a session already known; `duplicate`: the known copy kept. */
  outcome: 'added' | 'replaced' | 'duplicate';
}

/** A log or an input that did not load; the rest of the load goes on without it. */
export interface LoadFailure {
  /** The input it belongs to (as `InputSummary.input`). */
  input: string;
  /** The log's path inside that input; empty for a lone log, and when the whole input failed (a ZIP that cannot be opened). */
  path: string;
  /** The session's id, when its header could be read. */
  sessionId?: string;
  code: SessionLoadErrorCode | 'SESSION_QUERY_SOURCE_CONFLICT';
  message: string;
}

export interface LoadReport {
  /** One summary per input: the files given at the top level (ZIPs, lone logs) in path order, then a folder's entries as one. */
  inputs: InputSummary[];
  sessions: LoadedSession[];
  failures: LoadFailure[];
}

// ---------------------------------------------------------------------------------------------
// Sessions, events, reads

export interface SessionHeader {
  version: number;
  id: string;
  createdAt: number;
  cwd?: string;
  parentSession?: string;
  seedLength?: number;
  origin?: string;
  delegationDepth?: number;
  agentPreset?: string;
}

/** A listing record. */
export interface SessionRecord {
  header: SessionHeader;
  live: boolean;
  persisted: boolean;
}

export type SessionSurfaceLabel = 'current' | 'shadowed' | 'log-only';

/** One DSH event as stored: its envelope plus its type's fields. */
export interface SessionEvent {
  seq: number;
  time: number;
  type: string;
  [field: string]: JsonValue;
}

export interface SessionEventRecord {
  sessionId: string;
  seq: number;
  type: string;
  time: number;
  surface: SessionSurfaceLabel;
}

/** A semantic document: an event record and the text DSH extracts from it. */
export interface SessionDocument extends SessionEventRecord {
  text: string;
}

export interface SessionLogSnapshot {
  session: SessionHeader;
  events: SessionEvent[];
}

export interface SessionSurfaceSnapshot {
  session: SessionHeader;
  capturedThroughSeq: number | null;
  events: SessionEvent[];
}

export interface SessionEventReadRequest {
  sessionId: string;
  seq: number;
  /** 0–50 (default 0). */
  before?: number;
  /** 0–50 (default 0). */
  after?: number;
}

export interface SessionEventWindow {
  session: SessionHeader;
  target: SessionEvent;
  events: SessionEvent[];
  startSeq: number;
  endSeq: number;
}

export interface SessionLineageNode {
  session: SessionRecord;
  descendants: SessionLineageNode[];
}

export interface SessionTrace {
  target: SessionRecord;
  ancestors: SessionRecord[];
  descendants: SessionLineageNode[];
  complete: boolean;
  root?: SessionRecord;
  unresolvedParentId?: string;
}

export interface SessionEventTraceRequest {
  sessionId: string;
  seq: number;
}

export interface SessionEventTrace {
  session: SessionHeader;
  target: SessionEventRecord;
  replacedBy?: number;
  replacementChain: number[];
  replacedEventSeqs: number[];
  sourceEventSeqs: number[];
  derivedEventSeqs: number[];
}

/** The latest `session/title` event's title. */
export interface SessionTitleSnapshot {
  title: string;
  messageSeqs: number[];
  source: { kind: string; [field: string]: JsonValue };
  eventSeq: number;
  updatedAt: number;
}

export type SessionTitleSettlement =
  | { sessionId: string; status: 'fulfilled'; value: SessionTitleSnapshot | null }
  | { sessionId: string; status: 'rejected'; reason: { code: SessionQueryErrorCode; message: string } };

// ---------------------------------------------------------------------------------------------
// Filters

export type SessionFilter =
  | { kind: 'id'; values: string[] }
  | { kind: 'cwd'; values: (string | null)[] }
  | { kind: 'created-at'; from?: number; to?: number }
  | { kind: 'parent'; values: (string | null)[] }
  | { kind: 'availability'; values: ('live' | 'persisted')[] };

export type SessionEventMetadataFilter =
  | { kind: 'seq'; from?: number; to?: number }
  | { kind: 'time'; from?: number; to?: number }
  | { kind: 'type'; values: string[] }
  | { kind: 'surface'; values: SessionSurfaceLabel[] };

/** `filterEvents` also takes DSH's literal text clause. */
export type SessionEventFilter = SessionEventMetadataFilter | { kind: 'text'; text: string };

// ---------------------------------------------------------------------------------------------
// Search

declare const sessionSearchCursorBrand: unique symbol;
/** An opaque continuation token, bound to its request and to the index generation. */
export type SessionSearchCursor = string & { readonly [sessionSearchCursorBrand]: true };

export interface SessionSearchRequest {
  query: string;
  sessionFilters?: SessionFilter[];
  eventFilters?: SessionEventMetadataFilter[];
  /** Sessions per page, 1–100 (default 20). */
  limit?: number;
  cursor?: SessionSearchCursor;
  /** Mark the matches inside each snippet (`highlights`). */
  highlights?: boolean;
}

export interface SessionEventSearchRequest {
  sessionId: string;
  query: string;
  filters?: SessionEventMetadataFilter[];
  /** Events per page, 1–100 (default 20). */
  limit?: number;
  cursor?: SessionSearchCursor;
  highlights?: boolean;
}

/** A match range inside a snippet, in UTF-16 units. */
export interface SessionSearchHighlight {
  start: number;
  end: number;
}

/** One matching event, with DSH's snippet (240 code points, `…` at cut ends). */
export interface SessionSearchHit extends SessionEventRecord {
  snippet: string;
  highlights?: SessionSearchHighlight[];
}

/** One session of a `searchSessions` page, with its strongest event. */
export interface SessionSearchSessionHit {
  header: SessionHeader;
  live: boolean;
  persisted: boolean;
  bestMatch: SessionSearchHit;
}

export interface SessionSearchPage<T> {
  items: T[];
  nextCursor?: SessionSearchCursor;
}

export interface SessionEventSearchPage extends SessionSearchPage<SessionSearchHit> {
  session: SessionHeader;
}

export interface SearchOptions {
  /** Aborted before or during the call: `SESSION_QUERY_ABORTED` (request errors still win, as in DSH). */
  signal?: AbortSignal;
}

// ---------------------------------------------------------------------------------------------
// Live sessions

export interface LiveSessionAdded {
  header: SessionHeader;
  live: boolean;
  persisted: boolean;
}

export interface LiveSessionAppended {
  sessionId: string;
  eventCount: number;
}

// ---------------------------------------------------------------------------------------------
// References

/** The session that asks: without `cwd`, its own header's; `cwd: null` means none. */
export interface ReferenceAgent {
  id: string;
  cwd?: string | null;
}

export interface SessionReferenceInput {
  sessionId: string;
  label?: string;
}

export interface SessionReference {
  sessionId: string;
  label: string;
}

export interface ReferenceCandidate {
  sessionId: string;
  label: string;
  cwd?: string;
  createdAt: number;
  mention: string;
  sameWorkspace: boolean;
  displayTitle?: string;
}

export interface ListCandidatesOptions {
  /** Aborted: `SESSION_REFERENCE_CANCELLED`. */
  signal?: AbortSignal;
}

/** What a spill store receives for a truncated source: its complete, untruncated snapshot. */
export interface SpillRequest {
  sessionId: string;
  label: string;
  capturedThroughSeq: number | null;
  snapshot: { [key: string]: JsonValue };
}

/** A spill store: resolves to the locator of the stored snapshot. A throw gives
 *  `spill: {unavailable: reason}` for that source; the call still succeeds. */
export type SpillStore = (source: SpillRequest) => Promise<string> | string;

export interface PrepareOptions {
  /** 1–3 (default 3). */
  maxReferences?: number;
  /** Per source, bytes of its snapshot JSON. */
  maxReferenceBytes?: number;
  /** The last model route: budget `contextWindow / 2` bytes. */
  route?: { contextWindow: number };
  agentOptions?: { maxReferenceBytes?: number };
  order?: 'context-first' | 'readable-first';
  messageId?: string;
  contextMessageId?: string;
  /** Aborted before the call or while the spill store writes: `SESSION_REFERENCE_CANCELLED`. */
  signal?: AbortSignal;
  spill?: SpillStore;
}

export type SpillOutcome = { locator: string } | { unavailable: string };

export interface PreparedReference {
  sessionId: string;
  label: string;
  truncated: boolean;
  spill?: SpillOutcome;
}

/** A message DSH appends: the readable original or the context message. */
export interface PreparedMessage {
  id: string;
  role: 'user';
  content: JsonValue;
  source?: { [key: string]: JsonValue };
  [field: string]: JsonValue | undefined;
}

export interface PrepareResult {
  content: JsonValue;
  additionalContext?: JsonValue;
  messages: PreparedMessage[];
  budget: { maxReferenceBytes: number; origin: 'call' | 'route' | 'agent' | 'default' };
  references: PreparedReference[];
}

export interface ParsedReferenceText {
  text: string;
  references: SessionReference[];
}

// ---------------------------------------------------------------------------------------------
// The archive

/** Loaded sessions and DSH's query, search and reference services over them. */
export declare class SessionArchive {
  private constructor();
  /** A new, empty archive; loads the wasm module on first use (no manual init). With
   *  `options.source`, the archive lists that source's logs by their headers (bytes dropped as
   *  each header is taken); a call reads the logs of the sessions it names first. */
  static create(options?: SessionArchiveOptions): Promise<SessionArchive>;

  /** What the lazy source's listing and reads reported (null for an archive without one). */
  sourceReport(): SourceReport | null;

  load(inputs: LoadInput[] | Blob, options?: LoadOptions): Promise<LoadReport>;

  listSessions(): Promise<SessionRecord[]>;
  filterSessions(filters?: SessionFilter[]): Promise<SessionRecord[]>;
  readSession(sessionId: string): Promise<SessionLogSnapshot>;
  listEvents(sessionId: string): Promise<SessionEventRecord[]>;
  readSurface(sessionId: string): Promise<SessionSurfaceSnapshot>;
  readEvent(request: SessionEventReadRequest): Promise<SessionEventWindow>;
  traceSession(sessionId: string): Promise<SessionTrace>;
  traceEvent(request: SessionEventTraceRequest): Promise<SessionEventTrace>;
  readTitle(sessionId: string): Promise<SessionTitleSnapshot | null>;
  readTitleSnapshots(sessionIds: string[]): Promise<SessionTitleSettlement[]>;
  filterEvents(sessionId: string, filters?: SessionEventFilter[]): Promise<SessionDocument[]>;
  listDocuments(sessionId: string): Promise<SessionDocument[]>;

  searchSessions(request: SessionSearchRequest, options?: SearchOptions): Promise<SessionSearchPage<SessionSearchSessionHit>>;
  searchEvents(request: SessionEventSearchRequest, options?: SearchOptions): Promise<SessionEventSearchPage>;

  addLive(header: SessionHeader, events?: SessionEvent[]): Promise<LiveSessionAdded>;
  appendLive(sessionId: string, events: SessionEvent[]): Promise<LiveSessionAppended>;

  listCandidates(agent: ReferenceAgent, query?: string, limit?: number, options?: ListCandidatesOptions): Promise<ReferenceCandidate[]>;
  prepare(agent: ReferenceAgent, content: JsonValue, references: SessionReferenceInput[], options?: PrepareOptions): Promise<PrepareResult>;

  encodeSessionReferenceUri(sessionId: string): Promise<string>;
  decodeSessionReferenceUri(uri: string): Promise<string>;
  formatSessionReferenceMention(reference: SessionReferenceInput): Promise<string>;
  parseSessionReferenceText(text: string): Promise<ParsedReferenceText>;

  /**
   * Builds the search index now, in steps with progress; otherwise the first search builds it
   * whole. Searches made while it runs do not wait for it: they give the finished index's
   * answers (sessions not yet indexed are read directly), and their cursors go on after it.
   */
  buildIndex(options?: BuildIndexOptions): Promise<IndexProgress>;
  /** The built search index as bytes (e.g. for IndexedDB), reopened by `importIndex`. */
  exportIndex(): Promise<Uint8Array>;
  /** `SESSION_QUERY_INDEX_FAILED` for another corpus, version or tokenizer. */
  importIndex(bytes: SessionBytes): Promise<void>;

  /**
   * Readies the module for a fast first load while the app is idle (right after `create`,
   * before the user picks files): loads the package's small warm-up log (`data/`, read on the
   * first call) a few dozen times, one round a task, and searches it now and then while its
   * index builds, so the engine optimises the hot functions of a load and of a first search
   * first. Stops before its next round once anything else uses the archive, so a
   * load asked for meanwhile waits one round at most. In workerd it runs no round. Where the
   * archive started helpers at `create` (`SessionArchiveOptions.readers`), they run the same
   * warm-up in their own threads, and this adds little.
   */
  warmUp(): Promise<WarmUpResult>;

  /** Releases the wasm memory now; later calls fail with `SESSION_ARCHIVE_CLOSED`. */
  free(): void;
}

/** What `warmUp` did: its rounds, and whether it ran them all (false: something else used the archive first). */
export interface WarmUpResult {
  rounds: number;
  completed: boolean;
}

export declare function encodeSessionReferenceUri(sessionId: string): Promise<string>;
export declare function decodeSessionReferenceUri(uri: string): Promise<string>;
export declare function formatSessionReferenceMention(reference: SessionReferenceInput): Promise<string>;
export declare function parseSessionReferenceText(text: string): Promise<ParsedReferenceText>;
