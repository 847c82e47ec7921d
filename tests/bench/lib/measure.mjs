// Node's side of the measurement protocol (lib/protocol.mjs holds the protocol itself, shared
// with the Chromium page): reading a corpus written by generate.mjs and its run plan.
import fs from 'node:fs';
import path from 'node:path';

export * from './protocol.mjs';

/** Reads the corpus directory written by generate.mjs and the plan beside it (plan.mjs). */
export function readCorpus(dir, planFile) {
  return {
    manifest: JSON.parse(fs.readFileSync(`${dir}/manifest.json`, 'utf8')),
    queries: JSON.parse(fs.readFileSync(`${dir}/queries.json`, 'utf8')),
    plan: planFile ? JSON.parse(fs.readFileSync(planFile, 'utf8')) : null,
  };
}

/** Every file under `root`, as `/`-separated paths relative to it, sorted. */
export function listFiles(root, rel = '', out = []) {
  for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) listFiles(root, r, out);
    else out.push(r);
  }
  return out;
}

/** Peak resident set size of this process in bytes. */
export function peakRss() {
  return process.resourceUsage().maxRSS * 1024;
}

/** The machine's CPU time so far in jiffies (Linux's /proc/stat): busy, and in all. */
export function cpuTimes() {
  const counts = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = counts.reduce((sum, n) => sum + n, 0);
  return { busy: total - counts[3] - counts[4], total };
}
