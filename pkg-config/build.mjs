// Assembles the npm package from this template and the wasm-bindgen output:
//   node pkg-config/build.mjs <wasm-bindgen out dir> <package dir>
// Copies the template, adds the glue, the .wasm and LICENSE, writes the CommonJS entry (one
// bundled file, for `require`) and index.d.cts, and prints raw / gzip / brotli sizes.
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const [bindgenDir, outDir] = process.argv.slice(2).map((p) => resolve(p));
if (!bindgenDir || !outDir) throw new Error('usage: build.mjs <wasm-bindgen out dir> <package dir>');

const TEMPLATE = ['package.json', 'README.md', 'index.d.ts', 'worker.d.ts', 'data', 'entries', 'lib', 'worker'];
const GLUE = ['dsh_session_search.js', 'dsh_session_search_bg.wasm'];

rmSync(outDir, { recursive: true, force: true });
mkdirSync(join(outDir, 'wasm'), { recursive: true });
for (const item of TEMPLATE) cpSync(join(here, item), join(outDir, item), { recursive: true });
for (const file of GLUE) cpSync(join(bindgenDir, file), join(outDir, 'wasm', file));
cpSync(join(here, '..', 'LICENSE'), join(outDir, 'LICENSE'));
// The CommonJS face declares the same API; TypeScript wants it under a .d.cts name.
cpSync(join(outDir, 'index.d.ts'), join(outDir, 'index.d.cts'));

// `require('dsh-session-search')`: the Node entry and everything it imports, as one CJS file in
// the same folder, so `../wasm/…` still names the package's one .wasm.
const { build } = await import(join(here, '..', 'tests', 'pkg', 'node_modules', 'rolldown', 'dist', 'index.mjs'));
await build({
  input: join(outDir, 'entries', 'node.js'),
  platform: 'node',
  logLevel: 'warn',
  output: { format: 'cjs', file: join(outDir, 'entries', 'node.cjs'), exports: 'named' },
});

const sizes = (bytes) => ({
  raw: bytes.length,
  gzip: gzipSync(bytes, { level: 9 }).length,
  brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
});
const read = (files) => Buffer.concat(files.map((f) => readFileSync(join(outDir, f))));
const parts = {
  wasm: sizes(read(['wasm/dsh_session_search_bg.wasm'])),
  glue: sizes(read(['wasm/dsh_session_search.js'])),
  // Every module the browser entry and its helper workers load.
  wrapper: sizes(read(['entries/browser.js', 'lib/core.js', 'lib/errors.js', 'lib/exports.js', 'lib/readers.js', 'lib/reader-web.js', 'lib/segments.js', 'lib/tasks.js'])),
};
const total = (key) => parts.wasm[key] + parts.glue[key] + parts.wrapper[key];
const report = { ...parts, total: { raw: total('raw'), gzip: total('gzip'), brotli: total('brotli') } };
writeFileSync(join(outDir, '..', 'sizes.json'), JSON.stringify(report, null, 2) + '\n');
for (const [what, s] of Object.entries(report)) {
  console.log(`${what.padEnd(8)} raw ${s.raw} B, gzip -9 ${s.gzip} B, brotli -11 ${s.brotli} B`);
}
const kb = (n) => `${(n / 1000).toFixed(0)} kB`;
const table = [
  '| file | raw | gzip | brotli |',
  '|---|---:|---:|---:|',
  ['`wasm/dsh_session_search_bg.wasm`', report.wasm],
  ['`wasm/dsh_session_search.js` (wasm-bindgen glue)', report.glue],
  ['the wrapper (`lib/`, `entries/browser.js`)', report.wrapper],
  ['total a page downloads', report.total],
].map((row) => (typeof row === 'string' ? row : `| ${row[0]} | ${kb(row[1].raw)} | ${kb(row[1].gzip)} | ${kb(row[1].brotli)} |`));
const readme = join(outDir, 'README.md');
writeFileSync(readme, readFileSync(readme, 'utf8').replace('<!-- sizes: written by make pkg -->', table.join('\n')));
