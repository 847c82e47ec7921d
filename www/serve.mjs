#!/usr/bin/env node
// Serves the viewer (this directory) on 127.0.0.1 with node:http only: no dependencies.
// Usage: node www/serve.mjs [--port N]   (N = 0 picks a free port; default 8000 or $PORT)

import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = dirname(fileURLToPath(import.meta.url));
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.zip': 'application/zip',
  '.zstd': 'application/zstd',
  '.jsonl': 'application/jsonl; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};
// Never served: development files that are not part of the page. Of node_modules only the
// library package is served (the page imports its ESM files and its worker runs from there).
const HIDDEN = ['node_modules', 'tests', 'package.json', 'package-lock.json', 'serve.mjs', 'README.md'];
const SERVED_PACKAGE = ['node_modules', 'dsh-session-search'];
// The same policy as index.html's meta tag, also for the worker (a worker's CSP comes from its
// own response): this origin only, no inline script, wasm compilation allowed.
export const CSP = [
  "default-src 'self'", "script-src 'self' 'wasm-unsafe-eval'", "worker-src 'self'", "connect-src 'self'",
  "style-src 'self'", "img-src 'self' data:", "font-src 'self'", "object-src 'none'", "base-uri 'none'",
  "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

/** Starts the server; resolves to `{ server, url }` once it listens. */
export function startServer({ port = 8000, host = '127.0.0.1', root = ROOT } = {}) {
  const server = createServer(async (req, res) => {
    const send = (status, text) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(text);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n');
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      return send(400, 'bad request\n');
    }
    if (path.endsWith('/')) path += 'index.html';
    const file = resolve(join(root, path));
    const parts = file.slice(root.length + 1).split(sep);
    const packaged = parts[0] === SERVED_PACKAGE[0] && parts[1] === SERVED_PACKAGE[1] && parts.length > 2;
    if (!file.startsWith(root + sep) || (HIDDEN.includes(parts[0]) && !packaged) || path.includes('\0')) return send(404, 'not found\n');
    let info;
    try {
      info = await stat(file);
    } catch {
      return send(404, 'not found\n');
    }
    if (!info.isFile()) return send(404, 'not found\n');
    res.writeHead(200, {
      'content-type': TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
      'content-length': info.size,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      'content-security-policy': CSP,
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
    });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  });
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: actual } = server.address();
      resolvePromise({ server, url: `http://${host}:${actual}/` });
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const at = process.argv.indexOf('--port');
  const port = Number(at >= 0 ? process.argv[at + 1] : (process.env.PORT ?? 8000));
  startServer({ port }).then(
    ({ url }) => {
      console.log(`Archive viewer: ${url}`);
      console.log(`With the bundled sample loaded: ${url}?sample`);
      console.log('Press Ctrl+C to stop.');
    },
    (error) => {
      console.error(`cannot serve on 127.0.0.1:${port}: ${error.message}`);
      process.exit(1);
    },
  );
}
