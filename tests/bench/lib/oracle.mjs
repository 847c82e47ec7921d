// The real DSH packages are installed once, for the oracle (tests/oracle/node_modules); the
// benchmark scripts load them from there.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const require = createRequire(new URL('../../oracle/package.json', import.meta.url));

/** Imports one of the oracle's packages (e.g. `@deepseek-ai/dsh-session`). */
export function oracleImport(name) {
  return import(pathToFileURL(require.resolve(name)).href);
}
