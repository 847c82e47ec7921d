// The calls every consumer makes through the installed package, whatever its runtime: load one
// input, read, search (with a followed cursor), list candidates, prepare a reference, the free
// reference functions and one failure per code family. Each call is recorded as
// {method, params, result} or {method, params, error: {name, code}}, so the driver can replay
// the same calls through the native JSON-RPC face and compare the results text for text.
//
// `api` is the package's module namespace (or the worker entry's); `inputs` what `load` takes.

const WORD = /[A-Za-z]{5,}/;

export async function runScenario(api, inputs, loadOptions, buildOptions) {
  const calls = [];
  const archive = await api.SessionArchive.create();
  const record = async (method, params, run, extra = {}) => {
    try {
      const result = await run();
      calls.push({ method, params, result, ...extra });
      return result;
    } catch (error) {
      calls.push({ method, params, error: { name: error.name, code: error.code ?? null }, ...extra });
      return undefined;
    }
  };
  const call = (method, ...params) => record(method, params, () => archive[method](...params));

  // Warmed first, as an app does while idle: every round, before the load. workerd's entry has
  // no way to the warm-up log, and says so by running no round.
  const warmed = await archive.warmUp();
  const inWorkerd = globalThis.navigator?.userAgent === 'Cloudflare-Workers';
  const expected = inWorkerd ? warmed.rounds === 0 && !warmed.completed : warmed.rounds > 0 && warmed.completed;
  if (!expected) throw new Error(`warmUp: ${JSON.stringify(warmed)}`);
  const report = await archive.load(inputs, loadOptions);
  calls.push({ method: 'load', report: summariseReport(report) });
  // Built ahead (with helpers, say) or, when not, by the first search: the answers are alike.
  if (buildOptions !== undefined) await archive.buildIndex(buildOptions);
  const sessions = (await call('listSessions')) ?? [];
  const ids = sessions.map((s) => s.header.id);
  for (const id of ids.slice(0, 3)) {
    await call('readSurface', id);
    await call('listEvents', id);
    await call('readEvent', { sessionId: id, seq: 1, before: 1, after: 2 });
    await call('traceSession', id);
    await call('readTitle', id);
  }
  const documents = ids.length ? ((await call('listDocuments', ids[0])) ?? []) : [];
  const word = documents.map((d) => (WORD.exec(d.text) || [])[0]).find(Boolean) ?? 'error';
  const first = await call('searchSessions', { query: word, limit: 2, highlights: true });
  if (first && first.nextCursor) {
    await record(
      'searchSessions',
      [{ query: word, limit: 2, highlights: true, cursor: first.nextCursor }],
      () => archive.searchSessions({ query: word, limit: 2, highlights: true, cursor: first.nextCursor }),
      { cursorFrom: calls.length - 1 },
    );
  }
  if (ids.length) await call('searchEvents', { sessionId: ids[0], query: word, limit: 3 });
  await call('filterSessions', [{ kind: 'availability', values: ['persisted'] }]);
  if (ids.length > 1) {
    const agent = { id: ids[0] };
    await call('listCandidates', agent, '', 5);
    const mention = await api.formatSessionReferenceMention({ sessionId: ids[1], label: 'earlier' });
    await call('prepare', agent, `compare with ${mention}`, [], { messageId: 'm-readable', contextMessageId: 'm-context' });
    const prepared = await call('prepare', agent, 'what did we decide?', [{ sessionId: ids[1], label: 'earlier' }], { messageId: 'a', contextMessageId: 'b' });
    if (!prepared || prepared.references.length !== 1 || prepared.messages.length !== 2) throw new Error(`prepare prepared no reference: ${JSON.stringify(prepared)}`);
    await call('prepare', agent, 'see', [{ sessionId: ids[0] }], { messageId: 'a', contextMessageId: 'b' });
    await call('parseSessionReferenceText', `compare with ${mention}`);
  }
  // One failure per family, through the archive and the free functions.
  await call('readSurface', 'no-such-session');
  await call('searchSessions', { query: word, limit: 0 });
  await call('decodeSessionReferenceUri', 'dsh-session:not%2canonical');
  await call('encodeSessionReferenceUri', ids[0] ?? 'x');
  await call('parseSessionReferenceText', 'see @[a](dsh-session:abc) and @[b](dsh-session:def)');
  // A session long enough that the worker sends its events, records and documents in parts.
  const long = 'long-live-session';
  const events = Array.from({ length: 2500 }, (_, seq) => ({
    type: 'user/message', seq, time: 1700000000000 + seq, surfaceOp: 'append',
    data: { id: `m${seq}`, role: 'user', content: [{ type: 'text', text: `message ${seq} about ${word}` }], source: { kind: 'user' } },
  }));
  await call('addLive', { version: 0, id: long, createdAt: 1700000000000, cwd: '/tmp', delegationDepth: 0 }, events);
  await call('readSession', long);
  await call('listEvents', long);
  await call('listDocuments', long);
  await call('searchEvents', { sessionId: long, query: 'message 2499', limit: 3 });
  const free = await api.encodeSessionReferenceUri(ids[0] ?? 'x');
  calls.push({ method: 'encodeSessionReferenceUri', params: [ids[0] ?? 'x'], result: free });
  archive.free();
  return calls;
}

/** What must agree between the native and the package loads of the same bytes. */
export function summariseReport(report) {
  return {
    sessions: report.sessions
      .map((s) => [s.sessionId, s.encoding, s.events, s.syntheticClosers, s.tornBytes, s.outcome].join(' '))
      .sort(),
    failures: report.failures.map((f) => [f.sessionId ?? '-', f.code].join(' ')).sort(),
  };
}
