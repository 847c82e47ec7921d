// Every public function and method of the package, typed as a user writes it; compiled with
// `tsc --strict --noEmit`. It must compile without casts and without `any`.
import {
  SessionArchive,
  SessionArgumentError,
  SessionError,
  SessionLoadError,
  SessionQueryError,
  SessionReferenceError,
  decodeSessionReferenceUri,
  encodeSessionReferenceUri,
  formatSessionReferenceMention,
  parseSessionReferenceText,
  type IndexProgress,
  type LoadReport,
  type PrepareResult,
  type ReferenceCandidate,
  type SessionErrorCode,
  type SessionEventRecord,
  type SessionQueryErrorCode,
  type SessionRecord,
  type SessionSearchCursor,
  type SessionSearchPage,
  type SessionSearchSessionHit,
  type SessionSource,
  type SourceReport,
  type SessionSurfaceSnapshot,
  type SpillRequest,
  type WarmUpResult,
} from 'dsh-session-search';

export async function everything(zip: ArrayBuffer, file: File): Promise<void> {
  const archive = await SessionArchive.create({ tokenizer: 'cjk', limits: { maxDecompressedBytes: 1 << 26, maxArchiveEntries: 10 } });
  const warmed: WarmUpResult = await archive.warmUp();
  console.log(warmed.rounds, warmed.completed);
  const controller = new AbortController();
  const report: LoadReport = await archive.load([{ path: 'a.zip', bytes: zip }, { path: 'root/p/s/session.jsonl', bytes: new Uint8Array(0) }, file], {
    strict: false,
    signal: controller.signal,
    onProgress: ({ bytesDone, bytesTotal, sessionsDone, sessionsTotal }) => console.log(bytesDone / bytesTotal, sessionsDone, sessionsTotal),
  });
  await archive.load(file);
  for (const failure of report.failures) console.log(failure.code, failure.path, failure.sessionId ?? '');
  for (const input of report.inputs) console.log(input.input, input.kind, input.logs + input.media + input.ignored + input.nestedArchives);
  const sessions: SessionRecord[] = await archive.listSessions();
  const id = sessions[0]?.header.id ?? 'none';
  await archive.filterSessions([{ kind: 'cwd', values: ['/w', null] }, { kind: 'created-at', from: 0 }]);
  const log = await archive.readSession(id);
  console.log(log.events.map((e) => e.seq + e.time + e.type.length));
  const events: SessionEventRecord[] = await archive.listEvents(id);
  const surface: SessionSurfaceSnapshot = await archive.readSurface(id);
  console.log(events.length, surface.capturedThroughSeq ?? -1);
  const window = await archive.readEvent({ sessionId: id, seq: 1, before: 2, after: 2 });
  console.log(window.startSeq, window.endSeq, window.target.type);
  const trace = await archive.traceSession(id);
  console.log(trace.complete, trace.root?.header.id, trace.unresolvedParentId, trace.descendants[0]?.session.live);
  const eventTrace = await archive.traceEvent({ sessionId: id, seq: 2 });
  console.log(eventTrace.replacedBy, eventTrace.sourceEventSeqs);
  const title = await archive.readTitle(id);
  console.log(title?.eventSeq, title?.title.length);
  for (const settled of await archive.readTitleSnapshots([id, 'x'])) {
    if (settled.status === "fulfilled") console.log(settled.value?.title);
    else console.log(settled.reason.code satisfies SessionQueryErrorCode);
  }
  const docs = await archive.filterEvents(id, [{ kind: 'surface', values: ['current', 'log-only'] }, { kind: 'text', text: 'x' }]);
  console.log(docs.map((d) => d.text), (await archive.listDocuments(id)).length);

  const page: SessionSearchPage<SessionSearchSessionHit> = await archive.searchSessions(
    { query: 'stack trace', eventFilters: [{ kind: 'surface', values: ['current'] }], limit: 5, highlights: true },
    { signal: controller.signal },
  );
  for (const hit of page.items) console.log(hit.header.id, hit.bestMatch.snippet, hit.bestMatch.highlights?.[0]?.start);
  const cursor: SessionSearchCursor | undefined = page.nextCursor;
  if (cursor !== undefined) await archive.searchSessions({ query: 'stack trace', cursor });
  const inSession = await archive.searchEvents({ sessionId: id, query: 'x', filters: [{ kind: 'seq', from: 1, to: 9 }] });
  console.log(inSession.session.id, inSession.items[0]?.seq);

  const added = await archive.addLive({ version: 0, id: 'live', createdAt: 1, cwd: '/w' }, [{ seq: 0, time: 1, type: 'session/end-seed' }]);
  console.log(added.live, (await archive.appendLive('live', [{ seq: 1, time: 2, type: 'message', role: 'user', content: 'hi' }])).eventCount);

  const candidates: ReferenceCandidate[] = await archive.listCandidates({ id, cwd: null }, 'query', 5, { signal: controller.signal });
  const prepared: PrepareResult = await archive.prepare({ id }, 'see @[x](dsh-session:abc)', [{ sessionId: candidates[0]?.sessionId ?? 'x', label: 'x' }], {
    maxReferences: 2,
    maxReferenceBytes: 4096,
    route: { contextWindow: 8192 },
    order: 'readable-first',
    messageId: 'a',
    contextMessageId: 'b',
    signal: controller.signal,
    spill: async (source: SpillRequest) => `blob:${source.sessionId}/${source.capturedThroughSeq ?? 0}`,
  });
  for (const ref of prepared.references) {
    if (ref.spill && 'locator' in ref.spill) console.log(ref.spill.locator);
  }
  console.log(prepared.budget.origin, prepared.messages[0]?.id);

  const uri: string = await encodeSessionReferenceUri(id);
  console.log(await decodeSessionReferenceUri(uri), await formatSessionReferenceMention({ sessionId: id }));
  console.log((await parseSessionReferenceText('text')).references.map((r) => r.label));
  console.log(await archive.encodeSessionReferenceUri(id), await archive.parseSessionReferenceText('x'));

  const built: IndexProgress = await archive.buildIndex({
    signal: new AbortController().signal,
    stepBytes: 65536,
    onProgress: (p: IndexProgress) => console.log(p.eventsDone, p.eventsTotal, p.sessionsDone, p.sessionsTotal, p.done),
  });
  console.log(built.done);
  const index: Uint8Array = await archive.exportIndex();
  await archive.importIndex(index);
  await archive.importIndex(new Blob([new Uint8Array(index)]));
  archive.free();

  try {
    await archive.listSessions();
  } catch (error) {
    if (error instanceof SessionQueryError) console.log(error.code satisfies SessionQueryErrorCode);
    if (error instanceof SessionReferenceError) console.log(error.code.startsWith('SESSION_REFERENCE_'));
    if (error instanceof SessionLoadError) console.log(error.code);
    if (error instanceof SessionArgumentError && error.code === 'SESSION_ARCHIVE_CLOSED') console.log(error.name);
    if (error instanceof SessionError) {
      const code: SessionErrorCode = error.code;
      console.log(code, error.message);
    }
  }
}

// @ts-expect-error a cursor is branded: a plain string is not one.
export const notACursor: SessionSearchCursor = 'abc';
export async function typo(archive: SessionArchive): Promise<void> {
  // @ts-expect-error unknown request keys are type errors, as they are runtime errors.
  await archive.searchSessions({ query: 'x', limt: 5 });
}

/** A lazy source over an R2-like bucket, typed as a Worker writes it. */
interface Bucket {
  list(): Promise<{ objects: { key: string; size: number }[] }>;
  get(key: string, options?: { range?: { offset: number; length: number } }): Promise<{ arrayBuffer(): Promise<ArrayBuffer> } | null>;
}

export async function lazy(bucket: Bucket): Promise<void> {
  const source: SessionSource = {
    list: async () => (await bucket.list()).objects.map((o) => ({ path: o.key, size: o.size })),
    read: async (path) => (await bucket.get(path)) ?? new Uint8Array(0),
    readPrefix: async (path, length) => (await bucket.get(path, { range: { offset: 0, length } })) ?? new Uint8Array(0),
  };
  const archive = await SessionArchive.create({ source, tokenizer: 'unicode61' });
  const report: SourceReport | null = archive.sourceReport();
  for (const log of report?.sessions ?? []) console.log(log.sessionId, log.path, log.outcome);
  for (const failure of report?.failures ?? []) console.log(failure.code, failure.message);
  const prepared: PrepareResult = await archive.prepare({ id: 'agent' }, 'see', [{ sessionId: 'a' }, { sessionId: 'b' }]);
  console.log(prepared.references.length);
  archive.free();
}
