// A bundled app: a plain import of the package, bundled by `vite build`, served from dist/.
import * as api from 'dsh-session-search';
import * as workerApi from 'dsh-session-search/worker';
import { runScenario } from '../scenario.mjs';
import { runAll } from '../web/inputs.mjs';

const kinds = new URL(location.href).searchParams.get('kinds').split(',');
try {
  window.__results = { page: await runAll(api, runScenario, kinds), worker: await runAll(workerApi, runScenario, kinds) };
} catch (error) {
  window.__results = { error: String(error.stack || error) };
}
