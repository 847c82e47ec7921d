// A lazy source over the logs a full load reads, in any runtime (no node: imports): the answers
// over it must equal the full load's, and its reads are counted, so a prepare of three sources
// can be held to reading three logs. `entries` are a persistence root's files as `load` takes
// them ([{path, bytes}], paths relative to the root's parent).

/** A source over `entries` whose reads are recorded; `fails(path, nth)` makes a read throw. */
export function countingSource(entries, { fails = () => false, prefix = false } = {}) {
  const bytes = new Map(entries.map((e) => [e.path, e.bytes]));
  const reads = [];
  const prefixReads = [];
  const source = {
    list: async () => entries.map((e) => ({ path: e.path, size: e.bytes.length })),
    read: async (path) => {
      const nth = reads.filter((p) => p === path).length;
      reads.push(path);
      if (fails(path, nth)) throw new Error(`the store did not answer for ${path}`);
      return bytes.get(path).slice();
    },
  };
  if (prefix) {
    source.readPrefix = async (path, length) => {
      prefixReads.push(path);
      return bytes.get(path).slice(0, length);
    };
  }
  return { source, reads, prefixReads };
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

async function outcome(run) {
  try {
    return { result: await run() };
  } catch (error) {
    return { error: { name: error.name, code: error.code ?? null } };
  }
}

function sorted(list) {
  return [...list].sort();
}

/** Runs the comparisons; returns what was checked (throws on the first difference). */
export async function runLazy(api, entries) {
  const { SessionArchive } = api;
  const full = await SessionArchive.create();
  await full.load(entries);
  const { source, reads } = countingSource(entries);
  const lazy = await SessionArchive.create({ source });
  const checked = [];
  // Cursors name their engine instance: only whether a page has one must agree.
  const text = (value) => JSON.stringify(value, (key, v) => (key === 'nextCursor' ? v !== null && v !== undefined : v));
  const same = async (what, run) => {
    const want = text(await outcome(() => run(full)));
    const got = text(await outcome(() => run(lazy)));
    check(got === want, `${what}: lazy differs from a full load\n  got      ${got.slice(0, 600)}\n  expected ${want.slice(0, 600)}`);
    checked.push(what);
  };

  check(reads.length === entries.length, `the listing read ${reads.length} logs, not each of ${entries.length} once`);
  await same('listSessions', (a) => a.listSessions());
  await same('filterSessions', (a) => a.filterSessions([{ kind: 'availability', values: ['persisted'] }]));
  // Lineage is the headers': every session's trace, and none reads a log.
  for (const record of await full.listSessions()) await same(`traceSession ${record.header.id}`, (a) => a.traceSession(record.header.id));
  check(reads.length === entries.length, 'listing or tracing read logs');

  const listing = await full.listSessions();
  const readable = [];
  for (const record of listing) {
    if ((await outcome(() => full.readSession(record.header.id))).result) readable.push(record.header.id);
  }
  check(readable.length >= 6, `only ${readable.length} readable sessions`);
  const [agent, ...rest] = readable;
  const three = rest.slice(0, 3);
  const pathsOf = (ids) => lazy.sourceReport().sessions.filter((s) => ids.includes(s.sessionId)).map((s) => s.path);

  const beforePrepare = reads.length;
  await same('prepare of three sources', (a) =>
    a.prepare({ id: agent }, 'compare these', three.map((id) => ({ sessionId: id, label: id })), { messageId: 'a', contextMessageId: 'b' }));
  const prepareReads = reads.slice(beforePrepare);
  check(
    JSON.stringify(sorted(prepareReads)) === JSON.stringify(sorted(pathsOf(three))),
    `prepare read ${JSON.stringify(prepareReads)}, not the three cited logs ${JSON.stringify(pathsOf(three))}`,
  );
  for (const id of three) await same(`readSession ${id}`, (a) => a.readSession(id));
  check(reads.length === beforePrepare + prepareReads.length, 'reading prepared sessions read their logs again');
  const beforeNamed = reads.length;
  await same('listEvents of another session', (a) => a.listEvents(readable[4]));
  await same('traceEvent in a sixth session', (a) => a.traceEvent({ sessionId: readable[5], seq: 1 }));
  const namedReads = reads.slice(beforeNamed);
  check(
    JSON.stringify(sorted(namedReads)) === JSON.stringify(sorted(pathsOf(readable.slice(4, 6)))),
    `listEvents and traceEvent read ${JSON.stringify(namedReads)}, not their sessions' logs`,
  );
  await same('readSession of a missing id', (a) => a.readSession('no-such-session'));

  // A live copy of a listed session shadows it as it shadows a loaded one.
  const liveHeader = listing.find((r) => r.header.id === readable[6])?.header;
  if (liveHeader !== undefined) {
    await same('addLive over a listed session', (a) => a.addLive(liveHeader, []));
    await same('listSessions with a live copy', (a) => a.listSessions());
  }

  const word = 'the';
  await same('searchSessions', (a) => a.searchSessions({ query: word, limit: 5 }));
  check(
    reads.length === entries.length * 2,
    `after the first search every log is read twice in all (listing, then once), not ${reads.length} reads of ${entries.length} logs`,
  );
  await same('searchEvents', (a) => a.searchEvents({ query: word, limit: 5 }));
  await same('listCandidates', (a) => a.listCandidates({ id: agent }, '', 5));
  await same('listSessions after the search', (a) => a.listSessions());
  check(reads.length === entries.length * 2, 'a later call read logs again');
  full.free();
  lazy.free();

  checked.push(...(await failingReads(api, entries, three)));
  checked.push(...(await prefixListing(api, entries)));
  checked.push(...(await badSources(api)));
  return { checked: checked.length, logs: entries.length, prepareReads: prepareReads.length };
}

/** A log the source cannot give: coded, and never hiding the others. */
async function failingReads(api, entries, three) {
  const { SessionArchive } = api;
  const full = await SessionArchive.create();
  await full.load(entries);
  const listed = await SessionArchive.create({ source: countingSource(entries).source });
  const report = listed.sourceReport();
  listed.free();
  const victimPath = report.sessions.find((s) => s.sessionId === three[0]).path;
  const victim = three[0];

  // At the listing: the log is reported and not listed; the rest list and read as before.
  const atListing = await SessionArchive.create({ source: countingSource(entries, { fails: (p) => p === victimPath }).source });
  const failure = atListing.sourceReport().failures.find((f) => f.code === 'SESSION_LOAD_IO');
  check(failure !== undefined, `no SESSION_LOAD_IO failure: ${JSON.stringify(atListing.sourceReport().failures)}`);
  const ids = (await atListing.listSessions()).map((s) => s.header.id);
  const fullIds = (await full.listSessions()).map((s) => s.header.id);
  check(JSON.stringify(ids) === JSON.stringify(fullIds.filter((id) => id !== victim)), 'a failed listing read hid other sessions');
  const other = JSON.stringify(await atListing.readSession(three[1]));
  check(other === JSON.stringify(await full.readSession(three[1])), 'another session read differently');

  // On demand: the session stays listed and its reads fail with DSH's codes.
  const onDemand = await SessionArchive.create({ source: countingSource(entries, { fails: (p, nth) => p === victimPath && nth > 0 }).source });
  check(JSON.stringify(await onDemand.listSessions()) === JSON.stringify(await full.listSessions()), 'the listing differs');
  const read = await outcome(() => onDemand.readSession(victim));
  check(read.error?.code === 'SESSION_QUERY_PERSISTENCE_FAILED' && read.error.name === 'SessionQueryError', `readSession of the failed log: ${JSON.stringify(read)}`);
  const prepared = await outcome(() => onDemand.prepare({ id: three[2] }, 'x', [{ sessionId: victim }, { sessionId: three[1] }]));
  check(prepared.error?.code === 'SESSION_REFERENCE_READ_FAILED', `prepare citing the failed log: ${JSON.stringify(prepared)}`);
  check(JSON.stringify(await onDemand.readSession(three[1])) === JSON.stringify(await full.readSession(three[1])), 'the other cited session reads differently');
  const search = await outcome(() => onDemand.searchSessions({ query: 'the', limit: 3 }));
  check(search.result !== undefined, `search after a failed read: ${JSON.stringify(search)}`);
  check(JSON.stringify(await onDemand.listSessions()) === JSON.stringify(await full.listSessions()), 'the listing changed after the failed read');
  check(onDemand.sourceReport().failures.some((f) => f.sessionId === victim && f.code === 'SESSION_LOAD_IO'), 'the failed read is not reported');
  for (const archive of [full, atListing, onDemand]) archive.free();
  return ['source read failing at the listing', 'source read failing on demand'];
}

/** With `readPrefix`, the listing reads prefixes only (whole logs only where a prefix lacks the header). */
async function prefixListing(api, entries) {
  const { SessionArchive } = api;
  const plain = await SessionArchive.create({ source: countingSource(entries).source });
  const { source, reads, prefixReads } = countingSource(entries, { prefix: true });
  const prefixed = await SessionArchive.create({ source });
  const small = entries.filter((e) => e.bytes.length <= 64 * 1024).length;
  check(prefixReads.length === entries.length - small, `${prefixReads.length} prefix reads for ${entries.length - small} logs over 64 KiB`);
  check(reads.length === small, `whole reads at the listing: ${reads.length}, expected ${small} (the small logs)`);
  check(JSON.stringify(await prefixed.listSessions()) === JSON.stringify(await plain.listSessions()), 'a prefix listing differs');
  plain.free();
  prefixed.free();
  return ['listing by prefixes'];
}

/** A source of the wrong shape is SESSION_INVALID_ARGUMENT; a failing list() is SESSION_LOAD_IO. */
async function badSources(api) {
  const { SessionArchive } = api;
  const cases = [
    [{}, 'SESSION_INVALID_ARGUMENT'],
    [{ list: () => [], read: 'no' }, 'SESSION_INVALID_ARGUMENT'],
    [{ list: () => [], read: () => null, readPrefix: 1 }, 'SESSION_INVALID_ARGUMENT'],
    [{ list: () => 'logs', read: () => null }, 'SESSION_INVALID_ARGUMENT'],
    [{ list: () => [{ path: 'a.jsonl' }, { path: '/a.jsonl' }], read: () => null }, 'SESSION_INVALID_ARGUMENT'],
    [{ list: () => { throw new Error('down'); }, read: () => null }, 'SESSION_LOAD_IO'],
  ];
  for (const [source, code] of cases) {
    const got = await outcome(() => SessionArchive.create({ source }));
    check(got.error?.code === code, `source ${JSON.stringify(Object.keys(source))}: ${JSON.stringify(got)}, expected ${code}`);
  }
  return ['malformed sources'];
}
