// Run by readers.test.mjs, which checks that it ends and what it prints: creates an archive,
// waits long enough for the helper it starts ahead of a load to start and warm up, then (with
// a ZIP's path as its argument) loads the ZIP's logs with one helper, the one standing by,
// and prints the sessions loaded.
import { readFileSync } from 'node:fs';
import { SessionArchive } from 'dsh-session-search';
import { storedEntries } from './files.mjs';

const archive = await SessionArchive.create();
await new Promise((resolve) => setTimeout(resolve, 300));
const zip = process.argv[2];
if (zip === undefined) {
  console.log('created');
} else {
  const entries = storedEntries(new Uint8Array(readFileSync(zip))).map(({ name, bytes }) => ({ path: name, bytes }));
  const report = await archive.load(entries, { readers: 1 });
  console.log(`loaded ${report.sessions.length}`);
}
