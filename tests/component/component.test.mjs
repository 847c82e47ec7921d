// The WebAssembly Component in a real component host (jco + Node, WASI 0.2 from preview2-shim):
// every answer equals the native library's on the same inputs, and the recorded DSH calls of
// the oracle replay through it with DSH's answers and codes. Run by `make test-component`.
import test from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  NativeRpc, attempt, entriesOf, firstDifference, loadComponent, nativeValue, opaqueCursor, oracleDir, repo, same, short, value,
} from './hosts.mjs';

const api = await loadComponent();
const logs = join(oracleDir, 'logs');
assert.ok(existsSync(join(logs, 'search')), `no oracle at ${oracleDir}: run \`make oracle\` first`);

/** A fresh component archive with default options. */
const newArchive = () => new api.Archive({});

/** The search root and the sample export ZIP, side by side in a scratch folder. */
function scratchInputs() {
  const work = mkdtempSync(join(tmpdir(), 'dsh-component-'));
  symlinkSync(join(logs, 'search'), join(work, 'search'));
  copyFileSync(join(repo, 'www', 'sample', 'sample-archive.zip'), join(work, 'sample-archive.zip'));
  const entries = [...entriesOf(join(work, 'search'), work), {
    path: 'sample-archive.zip', bytes: new Uint8Array(readFileSync(join(work, 'sample-archive.zip'))),
  }];
  return { work, entries };
}

/** Compares one call's answers; returns the component's value. */
function expectSame(what, component, native) {
  const ours = opaqueCursor(value(component));
  const theirs = opaqueCursor(nativeValue(native));
  assert.ok(same(ours, theirs), `${what} (component ≠ native) at ${firstDifference(ours, theirs)}`);
  return value(component);
}

test('the component answers as the native library on a zstd root and an export ZIP', async () => {
  const { work, entries } = scratchInputs();
  const native = new NativeRpc(work);
  const archive = newArchive();
  try {
    // Entries group as loadEntries groups them: top-level files first, then the folder. The
    // report says how the folder arrived (kind `entries`, not `directory`) and gives its logs'
    // paths from the folder's parent (`search/…`, not `…` below the root); the rest of the
    // report (every session, count and failure) is the native one.
    const load = attempt(() => archive.load(entries, { strict: false }));
    const nativeLoad = await native.call('load', [['sample-archive.zip', 'search']]);
    const asLoose = (i) => (i.kind === 'directory' ? { ...i, kind: 'entries' } : i);
    const fromParent = (row) => (row.input === 'search' && row.path ? { ...row, path: `search/${row.path}` } : row);
    nativeLoad.ok.inputs = nativeLoad.ok.inputs.map(asLoose);
    nativeLoad.ok.sessions = nativeLoad.ok.sessions.map(fromParent);
    nativeLoad.ok.failures = nativeLoad.ok.failures.map(fromParent);
    const report = expectSame('load', load, nativeLoad);
    assert.ok(report.sessions.length > 100, `the root and the ZIP load: ${report.sessions.length} sessions`);
    assert.ok(report.inputs.some((i) => JSON.stringify(i).includes('sample-archive.zip')), 'the ZIP is an input');

    const sessions = expectSame('listSessions', attempt(() => archive.listSessions()), await native.call('listSessions', []));
    const ids = sessions.map((s) => s.header.id);
    let compared = 0;
    const both = async (method, params, typed) => {
      compared += typed ? 2 : 1;
      const expected = await native.call(method, params);
      if (typed) expectSame(`${method} (typed) ${short(params)}`, attempt(typed), expected);
      return expectSame(`${method} (call) ${short(params)}`, attempt(() => archive.call(method, JSON.stringify(params))), expected);
    };

    // Searches: hits, misses, a bad request, and a cursor chain followed on each side.
    let hits = 0;
    for (const query of ['tiebreak marker', 'error', 'the', '東京', 'zzzz-no-such-word', '']) {
      const page = await both('searchSessions', [{ query, limit: 3 }], () => archive.searchSessions(JSON.stringify({ query, limit: 3 })));
      hits += page.items?.length ?? 0;
    }
    assert.ok(hits > 3, `searches find something (${hits} hits)`);
    const request = { query: 'tiebreak marker', limit: 1 };
    let [ours, theirs] = [value(attempt(() => archive.searchSessions(JSON.stringify(request)))), (await native.call('searchSessions', [request])).ok];
    for (let page = 0; ours.nextCursor && page < 5; page++) {
      const next = attempt(() => archive.searchSessions(JSON.stringify({ ...request, cursor: ours.nextCursor })));
      const expected = await native.call('searchSessions', [{ ...request, cursor: theirs.nextCursor }]);
      ours = expectSame(`searchSessions page ${page + 2}`, next, expected);
      theirs = expected.ok;
    }
    const hit = value(attempt(() => archive.searchSessions(JSON.stringify({ query: 'tiebreak marker' })))).items[0];
    const sessionId = hit.header.id;
    await both('searchEvents', [{ sessionId, query: 'tiebreak marker' }], () => archive.searchEvents(JSON.stringify({ sessionId, query: 'tiebreak marker' })));
    await both('searchEvents', [{ sessionId, query: 'x', limit: 0 }], () => archive.searchEvents(JSON.stringify({ sessionId, query: 'x', limit: 0 })));

    // Reads of a few sessions through `call`.
    for (const id of [ids[0], ids[ids.length - 1], sessionId, 'no-such-session']) {
      for (const method of ['readSession', 'listEvents', 'readSurface', 'traceSession', 'readTitle', 'listDocuments']) {
        await both(method, [id]);
      }
      await both('readEvent', [{ sessionId: id, seq: 1, before: 2, after: 2 }]);
    }

    // References: candidates, and a prepared reference to the session the search found.
    const agent = { id: ids[0] };
    await both('listCandidates', [agent, '', 5], () => archive.listCandidates(JSON.stringify(agent), '""', 5));
    await both('listCandidates', [agent, 'tie'], () => archive.listCandidates(JSON.stringify(agent), '"tie"', undefined));
    const uri = attempt(() => api.encodeSessionReferenceUri(JSON.stringify(sessionId))).ok;
    const content = [{ type: 'text', text: `compare with @[found](${uri})` }];
    const references = [{ sessionId, label: 'found' }];
    const options = { messageId: 'm-1', contextMessageId: 'c-1', maxReferenceBytes: 4096 };
    const prepared = await both('prepare', [agent, content, references, options],
      () => archive.prepare(JSON.stringify(agent), JSON.stringify(content), JSON.stringify(references), JSON.stringify(options)));
    assert.ok(prepared.additionalContext?.content?.[0]?.text.length > 0, 'the reference is prepared');
    await both('prepare', [agent, content, [{ sessionId: ids[0] }]],
      () => archive.prepare(JSON.stringify(agent), JSON.stringify(content), JSON.stringify([{ sessionId: ids[0] }]), undefined));
    console.log(`${compared} component answers equal the native ones (typed functions and call)`);
  } finally {
    native.close();
    rmSync(work, { recursive: true, force: true });
  }
});

test('the index builds in bounded steps with progress, and searches equal a build in one go', async () => {
  const { work, entries } = scratchInputs();
  try {
    const stepped = newArchive();
    const whole = newArchive();
    for (const archive of [stepped, whole]) attempt(() => archive.load(entries, { strict: false }));
    const steps = [];
    for (let progress; !progress?.done && steps.length < 10_000;) {
      progress = attempt(() => stepped.indexStep(4096n)).ok;
      assert.ok(progress, 'a step answers');
      steps.push(progress);
    }
    const last = steps.at(-1);
    assert.ok(last.done, `the build ends (${steps.length} steps)`);
    assert.ok(steps.length > 10, `a 4 KiB budget takes many steps: ${steps.length}`);
    assert.equal(last.eventsDone, last.eventsTotal);
    assert.equal(last.sessionsDone, last.sessionsTotal);
    assert.ok(last.sessionsTotal > 100n, `every session is indexed: ${last.sessionsTotal}`);
    assert.ok(steps.every((s, i) => i === 0 || s.eventsDone >= steps[i - 1].eventsDone), 'progress never goes back');
    for (const query of ['tiebreak marker', 'error', 'the', '東京']) {
      const request = JSON.stringify({ query, limit: 5 });
      const ours = opaqueCursor(value(attempt(() => stepped.searchSessions(request))));
      const theirs = opaqueCursor(value(attempt(() => whole.searchSessions(request))));
      assert.ok(same(ours, theirs), `${query}: stepped ≠ whole at ${firstDifference(ours, theirs)}`);
    }
    const again = attempt(() => stepped.indexStep(4096n)).ok;
    assert.ok(again.done && again.sessionsTotal === 0n, 'nothing left to index');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('typed archive options reach the library as the JSON-RPC load options do', async () => {
  const { work, entries } = scratchInputs();
  const native = new NativeRpc(work);
  try {
    const archive = new api.Archive({ tokenizer: 'cjk', limits: { maxLineBytes: 2000n, maxArchiveEntries: 20n } });
    const expected = await native.call('load', [['sample-archive.zip', 'search'], { tokenizer: 'cjk', maxLineBytes: 2000, maxArchiveEntries: 20 }]);
    const report = value(attempt(() => archive.load(entries, { strict: false })));
    assert.ok(report.failures.length > 0 && report.failures.length === expected.ok.failures.length,
      `the limits fail the same logs (${report.failures.length} and ${expected.ok.failures.length})`);
    assert.deepEqual(report.failures.map((f) => [f.sessionId, f.code]), expected.ok.failures.map((f) => [f.sessionId, f.code]));
    // `テキスト` inside `日本語のテキスト` is found only by the cjk tokenizer's bigrams.
    for (const query of ['テキスト', '中文分词', 'needle']) {
      const ours = value(attempt(() => archive.searchSessions(JSON.stringify({ query }))));
      const theirs = nativeValue(await native.call('searchSessions', [{ query }]));
      assert.ok(ours.items.length > 0, `the cjk archive finds ${query}`);
      assert.ok(same(opaqueCursor(ours), opaqueCursor(theirs)), `cjk search ${query}: ${firstDifference(ours, theirs)}`);
    }
  } finally {
    native.close();
    rmSync(work, { recursive: true, force: true });
  }
});

test('the reference text functions answer as the native library, lone surrogates included', async () => {
  const native = new NativeRpc(tmpdir());
  try {
    for (const id of ['s1', 'lone\udc80surrogate', 'naïve 東京', '']) {
      const encoded = attempt(() => api.encodeSessionReferenceUri(JSON.stringify(id)));
      const expected = await native.call('encodeSessionReferenceUri', [id]);
      assert.deepEqual(encoded.ok ?? { error: encoded.error.code }, expected.ok ?? { error: expected.error.code }, `encode ${JSON.stringify(id)}`);
      if (!encoded.ok) continue;
      const decoded = attempt(() => api.decodeSessionReferenceUri(encoded.ok));
      expectSame(`decode ${encoded.ok}`, decoded, await native.call('decodeSessionReferenceUri', [encoded.ok]));
      assert.equal(JSON.parse(decoded.ok), id, 'decode(encode(id)) is the id');
      if (id.includes('\udc80')) assert.ok(decoded.ok.includes('\\udc80'), `the lone surrogate stays escaped: ${decoded.ok}`);
      const mention = { sessionId: id, label: 'L' };
      expectSame('format', attempt(() => api.formatSessionReferenceMention(JSON.stringify(mention))),
        await native.call('formatSessionReferenceMention', [mention]));
      const text = `see ${value(attempt(() => api.formatSessionReferenceMention(JSON.stringify(mention))))}`;
      expectSame('parse', attempt(() => api.parseSessionReferenceText(JSON.stringify(text))),
        await native.call('parseSessionReferenceText', [text]));
    }
    expectSame('decode of a non-canonical URI', attempt(() => api.decodeSessionReferenceUri('dsh-session:x=')),
      await native.call('decodeSessionReferenceUri', ['dsh-session:x=']));
  } finally {
    native.close();
  }
});

test('failures are error records with stable codes', () => {
  const tooBig = attempt(() => new api.Archive({ limits: { maxLineBytes: 2n ** 60n } }));
  assert.equal(tooBig.error?.code, 'SESSION_INVALID_ARGUMENT', 'an out-of-range limit fails the constructor');
  const zero = attempt(() => new api.Archive({ limits: { maxCompressionRatio: 0n } }));
  assert.equal(zero.error?.code, 'SESSION_LOAD_INVALID_OPTION', 'a zero bound is refused');
  const tight = new api.Archive({ limits: { maxLoadBytes: 1n << 30n, maxObjectKeys: 4n } });
  const header = '{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0}\n';
  const over = value(attempt(() => tight.load([{ path: 's1.jsonl', bytes: new TextEncoder().encode(header) }], { strict: false })));
  assert.equal(over.failures?.[0]?.code, 'SESSION_LOAD_LIMIT_EXCEEDED', 'the keys-per-object bound reaches the library');
  const cjk = new api.Archive({ tokenizer: 'cjk', limits: { maxArchiveEntries: 10n } });
  assert.deepEqual(value(attempt(() => cjk.listSessions())), []);
  const archive = newArchive();
  assert.equal(attempt(() => archive.call('nope', '[]')).error?.code, 'SESSION_INVALID_ARGUMENT');
  assert.equal(attempt(() => archive.call('load', '[["/"]]')).error?.code, 'SESSION_INVALID_ARGUMENT');
  assert.equal(attempt(() => archive.call('listEvents', '{')).error?.code, 'SESSION_INVALID_ARGUMENT');
  assert.equal(attempt(() => archive.call('listEvents', '["none"]')).error?.code, 'SESSION_QUERY_SESSION_NOT_FOUND');
  assert.equal(attempt(() => archive.searchSessions('{"query":"a","bogus":1}')).error?.code, 'SESSION_INVALID_ARGUMENT',
    'strict about unknown keys, as the package is');
  const strict = attempt(() => archive.load([{ path: 'broken.jsonl', bytes: new Uint8Array([123, 10]) }], { strict: true }));
  assert.match(strict.error?.code ?? '', /^SESSION_/, `a strict load of a broken log fails: ${short(strict)}`);
  assert.deepEqual(value(attempt(() => archive.listSessions())), [], 'and publishes nothing');
});
