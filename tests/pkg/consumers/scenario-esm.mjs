// `import` consumer: node scenario-esm.mjs <input> (also run by Deno and Bun).
import * as api from 'dsh-session-search';
import { readInputs } from './inputs.mjs';
import { runScenario } from './scenario.mjs';

const calls = await runScenario(api, readInputs(process.argv[2]));
process.stdout.write(JSON.stringify(calls) + '\n');
