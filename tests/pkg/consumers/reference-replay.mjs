// The recorded DSH reference calls of tests/oracle (references/<root>.json), made through the
// installed package over the same roots; prints each outcome as JSON for the driver, which
// compares them with the native JSON-RPC face's (itself compared with DSH by
// tests/integration/reference_differential.rs).
//   node reference-replay.mjs <oracle dir>
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SessionArchive } from 'dsh-session-search';
import { readInputs } from './inputs.mjs';

const dir = process.argv[2];
const out = [];
for (const file of readdirSync(join(dir, 'references')).sort()) {
  const dump = JSON.parse(readFileSync(join(dir, 'references', file), 'utf8'));
  const archive = await SessionArchive.create();
  await archive.load(readInputs(join(dir, 'logs', dump.root)));
  for (const call of dump.calls) {
    const params = call.params ?? [];
    try {
      out.push({ root: dump.root, method: call.method, params, result: await archive[call.method](...params) });
    } catch (error) {
      out.push({ root: dump.root, method: call.method, params, error: { name: error.name, code: error.code ?? null } });
    }
  }
  archive.free();
}
process.stdout.write(JSON.stringify(out) + '\n');
