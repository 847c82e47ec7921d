// A lazy source (SessionArchive.create({source})) in Node over the oracle's persistence root:
// the comparisons of lazy.mjs, which workerd runs too.
import { test } from 'node:test';
import * as api from 'dsh-session-search';
import { readInputs } from './inputs.mjs';
import { runLazy } from './lazy.mjs';

test('a lazy source answers as a full load, reads only what each call needs, and codes its failures', { skip: !process.env.PKG_ROOT }, async () => {
  const summary = await runLazy(api, readInputs(process.env.PKG_ROOT));
  console.log(`lazy: ${summary.checked} checks over ${summary.logs} logs; prepare of three sources read ${summary.prepareReads} logs`);
});
