// The browser's load inputs, fetched from the test server: the export ZIP as an ArrayBuffer,
// the persistence root as {path, bytes: Blob} entries relative to the root.
export async function fetchInputs(kind) {
  if (kind === 'zip') {
    return [{ path: 'sample-archive.zip', bytes: await (await fetch('/inputs/zip')).arrayBuffer() }];
  }
  const paths = await (await fetch('/inputs/root.json')).json();
  return Promise.all(paths.map(async (path) => ({ path, bytes: await (await fetch(`/inputs/root/${path}`)).blob() })));
}

/** Runs the shared scenario for every input through `api`; also checks progress events arrive. */
export async function runAll(api, runScenario, kinds) {
  const results = { checks: {} };
  for (const kind of kinds) results[kind] = await runScenario(api, await fetchInputs(kind));
  // The root's logs read, and its index built, by two helper workers (nested ones for the
  // worker entry) answer alike.
  if (kinds.includes('root')) results.rootReaders = await runScenario(api, await fetchInputs('root'), { readers: 2 }, { builders: 2, stepBytes: 4096 });
  const archive = await api.SessionArchive.create();
  const progress = [];
  await archive.load(await fetchInputs('zip'), { onProgress: (p) => progress.push(p) });
  const aborted = await archive.searchSessions({ query: 'the' }, { signal: AbortSignal.abort() }).then(
    () => 'resolved',
    (error) => `${error.name} ${error.code}`,
  );
  results.checks.spill = await spillLocator(archive);
  archive.free();
  const closed = await archive.listSessions().then(() => 'resolved', (error) => `${error.name} ${error.code}`);
  results.checks = { ...results.checks, progressEvents: progress.length, lastProgress: progress.at(-1), aborted, closed, lazy: await lazySource(api), unsendable: await unsendableInput(api), loadOrder: await loadOrder(api), searchBeforeBuild: await searchBeforeBuild(api) };
  return results;
}

/** Opens an archive over an empty lazy source: the main entry takes it, the worker entry refuses it. */
async function lazySource(api) {
  const source = { list: async () => [], read: async () => new Uint8Array() };
  return api.SessionArchive.create({ source }).then(
    (archive) => {
      const listed = archive.sourceReport();
      archive.free();
      return `listed ${listed.sessions.length}`;
    },
    (error) => `${error.name} ${error.code}`,
  );
}

/** Prepares the largest session with shrinking budgets until it is truncated; returns the spill. */
async function spillLocator(archive) {
  const records = await archive.listSessions();
  const agent = { id: records[0].header.id };
  const sizes = await Promise.all(records.slice(1).map(async (r) => [JSON.stringify(await archive.readSurface(r.header.id)).length, r.header.id]));
  const [size, big] = sizes.sort((a, b) => b[0] - a[0])[0];
  for (let budget = size; budget > 256; budget = Math.floor(budget * 0.8)) {
    const result = await archive.prepare(agent, 'x', [{ sessionId: big }], {
      maxReferenceBytes: budget,
      spill: async (source) => `mem://${source.sessionId}@${source.capturedThroughSeq}`,
    });
    if (!result.references[0].truncated) continue;
    // The signal aborts while the store is still writing: cancelled, although the store completes.
    const controller = new AbortController();
    const cancelled = await archive
      .prepare(agent, 'x', [{ sessionId: big }], {
        maxReferenceBytes: budget,
        signal: controller.signal,
        spill: () => {
          controller.abort();
          return new Promise((resolve) => setTimeout(() => resolve('late'), 50));
        },
      })
      .then(() => 'resolved', (error) => `${error.name} ${error.code}`);
    return { ...result.references[0].spill, cancelled };
  }
  return null;
}

/**
 * A load of many inputs (the worker entry sends them ahead a few at a time) whose twelfth
 * cannot be posted fails as a bad argument, and the same archive then loads the sample whole.
 */
async function unsendableInput(api) {
  const archive = await api.SessionArchive.create();
  const inputs = Array.from({ length: 20 }, (_, i) => ({ path: `root/s${i}.jsonl`, bytes: i === 11 ? () => {} : new Uint8Array() }));
  const outcome = (call) => call.then(() => 'resolved', (error) => `${error.name} ${error.code}`);
  const failed = await outcome(archive.load(inputs));
  // One that cannot be posted, made in the same task as one that can (the worker entry posts
  // them in one message): only the first fails.
  const together = await Promise.all([outcome(archive.load([{ path: 'root/x.jsonl', bytes: () => {} }])), outcome(archive.listSessions())]);
  const report = await archive.load(await fetchInputs('zip'));
  archive.free();
  return { failed, together, sessionsAfter: report.sessions.length };
}

/**
 * Two loads called back to back, the first of many inputs (which the worker entry sends ahead
 * over several tasks): they run in call order, so the second finds its logs already loaded.
 */
async function loadOrder(api) {
  const archive = await api.SessionArchive.create();
  const inputs = await fetchInputs('root');
  const reports = await Promise.all([archive.load(inputs), archive.load(inputs.slice(0, 2))]);
  archive.free();
  const outcomes = (report) => [...new Set(report.sessions.map((s) => s.outcome))].sort().join(',');
  return reports.map(outcomes);
}

/**
 * A search asked right after a build starts in the background, as an app asks its first, is
 * answered before the build's first step reports (one event a step here, so there are many),
 * every time: through the worker entry too, whose worker starts calls a page makes one after
 * another in one task of its own. The page stays busy for 20 ms between the two calls, as a page
 * held up there (by other work, or by the system) would. Three fresh archives are tried, and
 * each must answer so. With the worker entry posting each call as it is made, the worker's
 * step comes first in every one.
 */
async function searchBeforeBuild(api) {
  const orders = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const archive = await api.SessionArchive.create();
    await archive.load(await fetchInputs('zip'));
    const order = [];
    const build = archive.buildIndex({ stepBytes: 1, onProgress: () => order.push('step') });
    const busyUntil = performance.now() + 20;
    while (performance.now() < busyUntil);
    const search = archive.searchSessions({ query: 'error' }).then(() => order.push('search'));
    await Promise.all([build, search]);
    archive.free();
    orders.push(order.slice(0, 2));
  }
  return orders.find((order) => order[0] !== 'search') ?? orders[0];
}
