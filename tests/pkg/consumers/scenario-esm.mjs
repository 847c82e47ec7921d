// `import` consumer: node scenario-esm.mjs <input> (also run by Deno and Bun).
import * as api from 'dsh-session-search';
import { readInputs } from './inputs.mjs';
import { runScenario } from './scenario.mjs';

// PKG_READERS: the load's `readers` (helper threads reading its logs) and the index build's
// `builders` (helper threads building its segments, handed a job every 4 kB step); unset, the
// defaults, and the first search builds the index.
const helpers = process.env.PKG_READERS === undefined ? undefined : Number(process.env.PKG_READERS);
const readers = helpers === undefined ? undefined : { readers: helpers };
const build = helpers === undefined ? undefined : { builders: helpers, stepBytes: 4096 };
const calls = await runScenario(api, readInputs(process.argv[2]), readers, build);
process.stdout.write(JSON.stringify(calls) + '\n');
