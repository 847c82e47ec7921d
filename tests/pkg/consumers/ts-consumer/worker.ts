// The worker entry has the same API, all Promises.
import { SessionArchive, SessionQueryError, encodeSessionReferenceUri } from 'dsh-session-search/worker';

export async function offMainThread(files: File[]): Promise<number> {
  const archive = await SessionArchive.create({ tokenizer: 'unicode61' });
  void archive.warmUp().then((warmed) => console.log(warmed.completed));
  await archive.load(files, { onProgress: (p) => console.log(p.sessionsDone) });
  const page = await archive.searchSessions({ query: 'x' }, { signal: AbortSignal.timeout(1000) });
  console.log(await encodeSessionReferenceUri('x'), SessionQueryError.name);
  archive.free();
  return page.items.length;
}
