// `import` consumer: node scenario-esm.mjs <input> (also run by Deno and Bun).
import * as api from 'dsh-session-search';
import { readInputs } from './inputs.mjs';
import { runScenario } from './scenario.mjs';

// PKG_READERS: the load's `readers` (helper threads reading its logs); unset, the default.
const readers = process.env.PKG_READERS === undefined ? undefined : { readers: Number(process.env.PKG_READERS) };
const calls = await runScenario(api, readInputs(process.argv[2]), readers);
process.stdout.write(JSON.stringify(calls) + '\n');
