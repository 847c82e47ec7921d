#!/usr/bin/env node
// Benchmark corpus: a DSH persistence root of N searchable events, written through the real
// DSH Session API (`ctx.sessions.create` + `Session.append`) and JSONL persistence (zstd, packed
// chunk rows, one flush per turn), so every log is one DSH itself wrote and validated.
//
//   node generate.mjs --out DIR [--events 100000] [--seed 1]
//
// "Events" counts events that carry search text (user/assistant messages, tool calls and
// results, todo lists, aborted turns): DSH's search documents. Structural events (turn and step
// boundaries) come on top and are reported as `logEvents`. Output: DIR/root/ (the persistence
// root), DIR/queries.json (the fixed query set, lib/queries.mjs) and DIR/manifest.json (counts,
// text bytes as DSH extracts them, the largest session), written last: its presence marks a
// complete corpus.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { oracleImport } from './lib/oracle.mjs';
import { Rng, FakeClock } from '../oracle/lib/prng.mjs';
import { openWriter, close } from '../oracle/lib/dsh.mjs';
import { Vocabulary } from './lib/text.mjs';
import { benchQueries } from './lib/queries.mjs';

export const GENERATOR_VERSION = 1;
const { SessionId } = await oracleImport('@deepseek-ai/dsh-session');

const { values: argv } = parseArgs({ options: { out: { type: 'string' }, events: { type: 'string', default: '100000' }, 'session-events': { type: 'string', default: '1500' }, seed: { type: 'string', default: '1' } } });
if (!argv.out) { console.error('usage: node generate.mjs --out DIR [--events N] [--session-events M] [--seed S]'); process.exit(2); }
// Median searchable events per session (log-normal sizes). DSH lists and stats every stored
// session on every search, so its fixed cost per call grows with the session count: long
// sessions (the default) keep that overhead, and so our speed-up, at its smallest.
const SESSION_EVENTS = Number(argv['session-events']);
const OUT = path.resolve(argv.out);
const N = Number(argv.events);
if (!Number.isSafeInteger(N) || N < 100) throw new Error('--events must be an integer >= 100');
fs.rmSync(OUT, { recursive: true, force: true });
fs.mkdirSync(OUT, { recursive: true });

const rng = new Rng(`dsh-bench:${argv.seed}`);
const clock = new FakeClock(1_760_000_000_000).install();
const V = new Vocabulary();
const MODEL = { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' };
const CWDS = ['/home/dev/app', '/home/dev/search-indexer', '/home/dev/billing-api', '/srv/build/web-ui', '/home/dév/プロジェクト/cli', undefined];

// DSH's text extraction (trim every part, drop empty ones, join with LF): text bytes per document.
const jsTrim = (s) => s.trim();
function docBytes(parts) {
  return Buffer.byteLength(parts.map(jsTrim).filter((p) => p.length > 0).join('\n'), 'utf8');
}

/** Log-normal integer around `median`, clamped. */
function lognormal(r, median, sigma, lo, hi) {
  const u = Math.max(1e-12, r.next()), v = r.next();
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  return Math.max(lo, Math.min(hi, Math.round(median * Math.exp(sigma * z))));
}

const ERRORS = [
  (r) => `error[E0502]: cannot borrow \`${V.ident(r)}\` as mutable because it is also borrowed as immutable\n  --> ${V.file(r)}:${r.int(1, 900)}:${r.int(1, 80)}`,
  (r) => `TypeError: Cannot read properties of undefined (reading '${V.ident(r)}')\n    at ${V.ident(r)} (${V.file(r)}:${r.int(1, 900)}:${r.int(1, 80)})\n    at async ${V.ident(r)} (${V.file(r)}:${r.int(1, 900)}:${r.int(1, 80)})`,
  (r) => `thread 'main' panicked at ${V.file(r)}:${r.int(1, 900)}:${r.int(1, 80)}:\nindex out of bounds: the len is ${r.int(0, 9)} but the index is ${r.int(10, 99)}`,
  (r) => `Error: ENOENT: no such file or directory, open '${V.file(r)}'`,
  (r) => `FAILED tests/test_${V.ident(r).toLowerCase()}.py::test_${V.ident(r).toLowerCase()} - AssertionError: ${r.int(100, 599)} != 200`,
  (r) => `Traceback (most recent call last):\n  File "${V.file(r)}", line ${r.int(1, 900)}, in ${V.ident(r)}\nKeyError: '${V.ident(r)}'`,
];

function userText(r, lang) {
  const x = r.next();
  if (x < 0.08) return r.pick(['continue', 'ok, do it', 'Looks good. Commit it.', 'yes', 'try again', '继续', 'はい、お願いします']);
  if (lang !== 'en' && r.chance(0.7)) return V.prose(r, lang, r.int(1, 3));
  let text = V.paragraph(r, r.int(1, 3));
  if (r.chance(0.15)) text += `\n\n\`\`\`\n${r.pick(ERRORS)(r)}\n\`\`\``;
  if (r.chance(0.05)) text += `\n\n\`\`\`\n${V.code(r, lognormal(r, 12, 0.8, 3, 200))}\n\`\`\``;
  return text;
}

function assistantText(r, lang) {
  let text = lang !== 'en' && r.chance(0.6) ? V.prose(r, lang, r.int(1, 4)) : V.paragraph(r, lognormal(r, 4, 0.6, 1, 14));
  if (r.chance(0.25)) text += `\n\n\`\`\`${r.pick(['rust', 'ts', 'python', 'go', ''])}\n${V.code(r, lognormal(r, 10, 0.7, 2, 120))}\n\`\`\`\n\n${V.sentence(r)}`;
  if (r.chance(0.15)) text += `\n\n- ${V.sentence(r, 3, 9)}\n- ${V.sentence(r, 3, 9)}\n- ${V.sentence(r, 3, 9)}`;
  return text;
}

function toolCall(r) {
  const name = r.weighted([[5, 'bash'], [5, 'read_file'], [3, 'grep'], [2, 'edit_file'], [1, 'web_search']]);
  switch (name) {
    case 'bash': return { name, args: { command: r.pick(['cargo test', 'cargo build --release', 'npm test -- --run', 'pytest -q', 'go test ./...', 'git status --short', 'git diff', `ls -la ${V.file(r).split('/')[0]}`, `cargo test ${V.ident(r)}`]), timeout_ms: r.pick([30000, 120000]) } };
    case 'read_file': return { name, args: { path: V.file(r) } };
    case 'grep': return { name, args: { pattern: V.ident(r), path: '.' } };
    case 'edit_file': return { name, args: { path: V.file(r), old: V.codeLine(r), new: V.codeLine(r) } };
    default: return { name, args: { query: `${V.sentence(r, 2, 5)} ${r.pick(['rust', 'typescript', 'sqlite fts5'])}` } };
  }
}

/** Tool output of varied length (log-normal, long tail). */
function toolOutput(r, call, lang) {
  const lines = lognormal(r, 16, 1.2, 1, 1500);
  const out = [];
  switch (call.name) {
    case 'read_file':
      out.push(call.args.path);
      for (let i = 1; i <= lines; i++) out.push(`${String(i).padStart(4)}  ${V.codeLine(r)}`);
      break;
    case 'grep':
      for (let i = 0; i < lines; i++) out.push(`${V.file(r)}:${r.int(1, 900)}:    ${V.codeLine(r)}`);
      break;
    case 'edit_file':
      out.push(`Edited ${call.args.path}: ${r.int(1, 3)} replacement(s).`);
      break;
    case 'web_search':
      for (let i = 0; i < Math.min(lines, 8); i++) out.push(`${i + 1}. ${V.sentence(r, 4, 10)}\n   ${V.paragraph(r, r.int(1, 3))}`);
      break;
    default: {
      const cmd = call.args.command;
      if (cmd.startsWith('git status')) { for (let i = 0; i < Math.min(lines, 30); i++) out.push(` ${r.pick(['M', 'A', 'D', '??'])} ${V.file(r)}`); break; }
      if (cmd.startsWith('ls')) { for (let i = 0; i < Math.min(lines, 40); i++) out.push(`-rw-r--r--  1 dev dev ${String(r.int(10, 99999)).padStart(6)} ${V.file(r).split('/').pop()}`); break; }
      if (cmd.startsWith('git diff')) { for (let i = 0; i < lines; i++) out.push(`${r.pick(['+', '-', ' '])}${V.codeLine(r)}`); break; }
      const pass = r.int(1, 400), fail = r.chance(0.35) ? r.int(1, 4) : 0;
      out.push(`running ${pass + fail} tests`);
      for (let i = 0; i < Math.min(lines, pass); i++) out.push(`test ${V.ident(r)}::${V.ident(r)} ... ok`);
      for (let i = 0; i < fail; i++) out.push(`test ${V.ident(r)}::${V.ident(r)} ... FAILED\n\n${r.pick(ERRORS)(r)}`);
      if (lang === 'zh' && r.chance(0.5)) out.push(V.chinese(r, 2));
      out.push(`\ntest result: ${fail ? 'FAILED' : 'ok'}. ${pass} passed; ${fail} failed; 0 ignored; finished in ${(r.next() * 20).toFixed(2)}s`);
    }
  }
  return out.join('\n');
}

const ctx = await openWriter(path.join(OUT, 'root'), 'zstd');
let docs = 0, logEvents = 0, textBytes = 0, sessions = 0;
let largest = { id: null, docs: -1 };
for (let k = 0; docs < N; k++) {
  const r = rng.fork(`session:${k}`);
  clock.tick(r.int(60_000, 8 * 3_600_000));
  const id = r.uuid();
  const cwd = r.pick(CWDS);
  const lang = r.weighted([[70, 'en'], [15, 'zh'], [8, 'ja'], [7, 'ko']]);
  const session = ctx.sessions.create(SessionId(id), { meta: cwd ? { cwd } : {} });
  let n = 0;
  let seqMsg = 0;
  const ap = (type, data, opts, dt = r.int(1, 40)) => {
    clock.tick(dt);
    logEvents++;
    return opts === undefined ? session.append(type, data) : session.append(type, data, opts);
  };
  const doc = (parts) => { n++; textBytes += docBytes(parts); };
  const size = lognormal(r, SESSION_EVENTS, 0.8, 10, 20 * SESSION_EVENTS);
  for (let turn = 1; n < size && docs + n < N; turn++) {
    ap('turn/start', { turn }, undefined, r.int(5_000, 900_000));
    const prompt = userText(r, lang);
    ap('user/message', { id: `msg-${seqMsg++}`, role: 'user', content: [{ type: 'text', text: prompt }], source: { kind: 'user' } }, { surfaceOp: 'append' });
    doc([prompt]);
    const steps = lognormal(r, 3, 0.8, 1, 40);
    let aborted = false;
    for (let step = 1; step <= steps; step++) {
      ap('step/start', { turn, step }, undefined, 0);
      const last = step === steps;
      const calls = last ? [] : Array.from({ length: r.weighted([[6, 1], [2, 2], [1, 3]]) }, () => {
        const c = toolCall(r);
        return { id: `call_${r.hex(24)}`, name: c.name, args: c.args, arguments: JSON.stringify(c.args) };
      });
      const content = [];
      if (last || r.chance(0.6)) content.push({ type: 'text', text: assistantText(r, lang) });
      for (const c of calls) content.push({ type: 'tool-call', id: c.id, name: c.name, arguments: c.arguments });
      ap('assistant/message', { turn, step, message: { id: `msg-${seqMsg++}`, role: 'assistant', content, source: MODEL }, usage: { inputTokens: r.int(500, 90000), outputTokens: r.int(10, 4000) } }, { surfaceOp: 'append' }, r.int(500, 30_000));
      doc(content.flatMap((b) => (b.type === 'text' ? [b.text] : [b.name, b.arguments])));
      for (const c of calls) {
        const callEv = ap('tool/call', { turn, step, callId: c.id, name: c.name, arguments: c.arguments });
        doc([c.name, c.arguments]);
        const isError = r.chance(0.06);
        const text = isError ? 'Error: command timed out after 120000 ms' : toolOutput(r, c, lang);
        const data = { turn, step, message: { id: `msg-${seqMsg++}`, role: 'user', content: [{ type: 'tool-result', toolCallId: c.id, content: [{ type: 'text', text }], isError }], source: { kind: 'tool', callId: c.id } } };
        if (isError) data.error = { name: 'ToolTimeoutError', code: 'TOOL_TIMEOUT' };
        ap('tool/result', data, { surfaceOp: 'append', sourceEventSeqs: [callEv.seq] }, r.int(20, 20_000));
        doc(isError ? [text, 'ToolTimeoutError', 'TOOL_TIMEOUT'] : [text]);
      }
      ap('step/end', { turn, step }, undefined, 0);
      if (!last && r.chance(0.01)) { aborted = true; break; }
    }
    if (r.chance(0.06)) {
      const todos = Array.from({ length: r.int(1, 5) }, () => ({ content: V.sentence(r, 3, 9), status: r.pick(['pending', 'in_progress', 'completed']) }));
      ap('todo/write', { todos });
      doc(todos.flatMap((t) => [t.status, t.content]));
    }
    ap('turn/end', { turn, reason: aborted ? { kind: 'aborted', reason: { kind: 'user' } } : { kind: 'completed' } });
    if (aborted) doc(['aborted']);
    // One durable batch every few turns (DSH batches appends within ~200 ms windows).
    if (turn % 4 === 0) await ctx.sessions.flush(session);
  }
  await ctx.sessions.flush(session);
  docs += n;
  sessions++;
  if (n > largest.docs) largest = { id, docs: n };
  if (sessions % 10 === 0) process.stderr.write(`\r  ${docs}/${N} events, ${sessions} sessions, ${(textBytes / 1e6).toFixed(1)} MB text`);
}
await close(ctx);
process.stderr.write('\n');

let logBytes = 0;
const walk = (dir) => { for (const e of fs.readdirSync(dir, { withFileTypes: true })) { const p = path.join(dir, e.name); if (e.isDirectory()) walk(p); else logBytes += fs.statSync(p).size; } };
walk(path.join(OUT, 'root'));
fs.writeFileSync(path.join(OUT, 'queries.json'), JSON.stringify(benchQueries(V), null, 1) + '\n');
const manifest = { generator: GENERATOR_VERSION, seed: argv.seed, sessionEvents: SESSION_EVENTS, events: docs, logEvents, sessions, textBytes, logBytes, largestSession: largest, seconds: (performance.now() / 1000) };
fs.writeFileSync(path.join(OUT, 'manifest.json'), JSON.stringify(manifest, null, 1) + '\n');
console.log(`bench corpus: ${docs} events (${logEvents} log events) in ${sessions} sessions, ${(textBytes / 1e6).toFixed(1)} MB text, ${(logBytes / 1e6).toFixed(1)} MB on disk, ${(performance.now() / 1000).toFixed(1)} s`);
