#!/usr/bin/env node
// Where a Chromium load's CPU time goes: one run of chromium.mjs (load, then the rest of its
// protocol once) under a system-wide `perf record`, cut to the load's own window (the page's
// wall clock, which `runPackage` reports as `loadWindow`), and /proc/stat read every 10 ms
// for how busy the machine was meanwhile. Prints each thread group's share of the samples
// and writes them to --out. Needs Linux perf, allowed to sample every CPU (root, or
// kernel.perf_event_paranoid ≤ 0). After `make bench`, for instance:
//
//   node tests/bench/cpu-profile.mjs --app target/bench/app --corpus target/bench/corpus-100000-… \
//     --plan target/bench/run-100000/plan.json [--out target/bench/cpu-profile.json]
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuTimes } from './lib/measure.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const { values: argv } = parseArgs({ options: { app: { type: 'string' }, corpus: { type: 'string' }, plan: { type: 'string' }, out: { type: 'string' } } });
if (!argv.app || !argv.corpus || !argv.plan) {
  console.error('usage: node cpu-profile.mjs --app DIR --corpus DIR --plan PLAN.json [--out FILE.json]');
  process.exit(2);
}

/**
 * The groups samples are counted in, first match wins: a sample is its thread's name
 * (`comm`, as Linux truncates it) and the object its instruction was in (`dso`).
 */
const GROUPS = [
  ['our wasm (JIT code in the workers)', (comm, dso) => comm === 'DedicatedWorker' && dso.startsWith('[JIT]')],
  ['kernel in the workers (page faults)', (comm, dso) => comm === 'DedicatedWorker' && dso === '[kernel.kallsyms]'],
  ['Chromium and libc in the workers', (comm) => comm === 'DedicatedWorker'],
  ["V8's background threads (compiles)", (comm) => comm.startsWith('ThreadPoolForeg')],
  ['I/O threads (IPC, Blob bytes)', (comm) => comm === 'Chrome_IOThread' || comm === 'Chrome_ChildIOT'],
  ['idle', (comm) => comm === 'swapper'],
  ['everything else', () => true],
];

/** Runs `command` to its end while reading /proc/stat every 10 ms: the readings, stamped. */
async function runSampling(command, args) {
  const readings = [];
  const timer = setInterval(() => readings.push({ at: Date.now(), ...cpuTimes() }), 10);
  const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  try {
    const code = await new Promise((resolve, reject) => {
      child.on('error', (error) => reject(new Error(`cannot run ${command}: ${error.message}`)));
      child.on('exit', resolve);
    });
    if (code !== 0) throw new Error(`${command} exited with ${code}`);
  } finally {
    clearInterval(timer);
  }
  return readings;
}

/** The share of the machine's CPU time that was busy between `start` and `end` (epoch ms). */
function busyShare(readings, start, end) {
  const nearest = (t) => readings.reduce((best, r) => (Math.abs(r.at - t) < Math.abs(best.at - t) ? r : best));
  const [a, b] = [nearest(start), nearest(end)];
  return (b.busy - a.busy) / Math.max(1, b.total - a.total);
}

/** Samples per (comm, dso) in perf.data between `start` and `end` (epoch ms). */
function samplesByThreadAndObject(data, start, end) {
  const window = `${(start / 1000).toFixed(6)},${(end / 1000).toFixed(6)}`;
  const report = execFileSync('perf', ['report', '-i', data, '--time', window, '--sort', 'comm,dso', '--stdio', '-n', '-t', '\t', '--percent-limit', '0'], { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'ignore'] });
  const rows = [];
  for (const line of report.split('\n')) {
    if (line.startsWith('#') || !line.trim()) continue;
    const [, samples, comm, dso] = line.split('\t').map((field) => field.trim());
    if (samples !== undefined && dso !== undefined) rows.push({ samples: Number(samples), comm, dso });
  }
  return rows;
}

/** Records one load under perf: its time, and its samples and busy share in groups. */
async function profileLoad(dir) {
  const data = path.join(dir, 'perf.data');
  const run = path.join(dir, 'run.json');
  const chromium = [path.join(HERE, 'chromium.mjs'), '--app', argv.app, '--corpus', argv.corpus, '--plan', argv.plan, '--out', run, '--runs', '1', '--reps', '1'];
  const readings = await runSampling('perf', ['record', '-a', '-k', 'CLOCK_REALTIME', '-F', '999', '-o', data, '--', process.execPath, ...chromium]);
  const { loadMs, loadWindow } = JSON.parse(fs.readFileSync(run, 'utf8'));
  const rows = samplesByThreadAndObject(data, loadWindow.start, loadWindow.end);
  const total = rows.reduce((sum, row) => sum + row.samples, 0);
  if (total === 0) throw new Error('perf recorded no samples in the load: is system-wide sampling allowed here?');
  const groups = GROUPS.map(([name]) => ({ name, samples: 0, threads: new Map() }));
  for (const row of rows) {
    const group = groups[GROUPS.findIndex(([, matches]) => matches(row.comm, row.dso))];
    group.samples += row.samples;
    group.threads.set(row.comm, (group.threads.get(row.comm) ?? 0) + row.samples);
  }
  return { loadMs, busy: busyShare(readings, loadWindow.start, loadWindow.end), total, groups, rows };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cpu-profile-'));
try {
  const { loadMs, busy, total, groups, rows } = await profileLoad(dir);
  console.log(`load ${loadMs.toFixed(0)} ms; the machine ${(busy * 100).toFixed(0)}% busy meanwhile (/proc/stat); ${total} perf samples in it:`);
  const percent = (samples) => `${((samples / total) * 100).toFixed(1)}%`;
  for (const group of groups) console.log(`  ${percent(group.samples).padStart(6)}  ${group.name}`);
  // What else ran names itself: a build or another browser beside the load shows up here.
  const others = [...groups.at(-1).threads].sort((a, b) => b[1] - a[1]).slice(0, 4);
  if (others.length) console.log(`          (${others.map(([comm, samples]) => `${comm} ${percent(samples)}`).join(', ')})`);
  const summary = groups.map(({ name, samples }) => ({ name, samples }));
  if (argv.out) fs.writeFileSync(argv.out, JSON.stringify({ loadMs, busy, samples: total, groups: summary, rows }, null, 1) + '\n');
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
