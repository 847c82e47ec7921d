#!/usr/bin/env node
// The run plan of one corpus, the same for every engine: which sessions `prepare` cites (the
// largest, then the three largest by log bytes) for which agent, and which session becomes the
// large live session of the appendLive step (the largest), with the word its appended events
// carry (absent from the corpus).
//
//   node plan.mjs --corpus DIR --out PLAN.json
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { listFiles } from './lib/measure.mjs';

const { values: argv } = parseArgs({ options: { corpus: { type: 'string' }, out: { type: 'string' } } });
if (!argv.corpus || !argv.out) { console.error('usage: node plan.mjs --corpus DIR --out PLAN.json'); process.exit(2); }
const root = path.join(argv.corpus, 'root');
// A session's files live in its own folder `<workspace>/<session id>/`.
const bytes = new Map();
for (const file of listFiles(root)) {
  const id = file.split('/').at(-2);
  bytes.set(id, (bytes.get(id) ?? 0) + fs.statSync(path.join(root, file)).size);
}
const largest = [...bytes].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([id]) => id);
if (largest.length < 3) throw new Error(`${root}: ${largest.length} sessions; the plan cites three`);
const plan = {
  prepare: {
    agent: { id: 'bench-agent', cwd: '/home/dev/app' },
    content: [{ type: 'text', text: 'Recall what the cited sessions decided.' }],
    one: [{ sessionId: largest[0] }],
    three: largest.slice(0, 3).map((sessionId, i) => ({ sessionId, label: `source ${i + 1}` })),
  },
  live: { sourceId: largest[0], id: 'bench-live-session', token: 'benchliveappend', text: 'Appended while the session is live:' },
};
fs.writeFileSync(argv.out, JSON.stringify(plan, null, 1) + '\n');
