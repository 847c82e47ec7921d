// Hand-written session logs for shapes the Session API refuses to produce:
// legacy records, foreign versions, unknown required events, invalid
// surfaces, malformed envelopes and rows, odd encodings, and layout errors.
// Files are placed where DSH's own locate() puts them (identity binding
// passes) except in the deliberate layout-* roots.
import fs from 'node:fs';
import path from 'node:path';
import { openWriter, close } from './dsh.mjs';
import zlib from 'node:zlib';
import { zstdFrame } from './zstd.mjs';

const T0 = 1_700_000_000_000;
const PM = { provider: 'deepseek', model: 'deepseek-chat' };

class Log {
  constructor(id, t0) { this.id = id; this.events = []; this.t = t0; }
  e(type, data, extra = {}) {
    const ev = { type, seq: this.events.length, time: (this.t += 7), data, ...extra };
    this.events.push(ev);
    return ev.seq;
  }
  user(text, extra = {}, source = { kind: 'user' }) {
    return this.e('user/message', { id: `m-${this.events.length}`, role: 'user', content: [{ type: 'text', text }], source }, { surfaceOp: 'append', ...extra });
  }
  asst(turn, step, content, extra = {}) {
    if (typeof content === 'string') content = [{ type: 'text', text: content }];
    return this.e('assistant/message', { turn, step, message: { id: `m-${this.events.length}`, role: 'assistant', content, source: { kind: 'model', ...PM } } }, { surfaceOp: 'append', ...extra });
  }
  result(turn, step, callId, text, extra = {}, isError = false) {
    return this.e('tool/result', { turn, step, message: { id: `m-${this.events.length}`, role: 'user', content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text }], isError }], source: { kind: 'tool', callId } } }, { surfaceOp: 'append', ...extra });
  }
  simpleTurn(turn, q, a, reason = { kind: 'completed' }) {
    this.e('turn/start', { turn });
    this.user(q);
    this.e('step/start', { turn, step: 1 });
    this.asst(turn, 1, a);
    this.e('step/end', { turn, step: 1 });
    this.e('turn/end', { turn, reason });
  }
  lines() { return this.events.map((e) => JSON.stringify(e)); }
}

function header(id, extra = {}, t = T0) {
  return { type: 'session', version: 0, id, createdAt: t, ...extra, delegationDepth: extra.delegationDepth ?? 0 };
}

/** Each case: { id, cwd?, note, expect (spec reading), header? (object|string|null), lines: string[] | build(log) , raw?: Buffer } */
function cases() {
  const out = [];
  let t = T0;
  const add = (c) => { t += 60_000; c.createdAt = c.createdAt ?? t; out.push(c); };
  const build = (id, fn) => { const l = new Log(id, t + 1000); fn(l); return l.lines(); };

  // --- spec 01 §11 examples (verbatim logs from our own spec) ---
  add({ id: 's-hello', cwd: '/home/dev/app', createdAt: 1700000000000, note: 'spec 01 §11.1', expect: 'loads; 13 events', text: [
    '{"type":"session","version":0,"id":"s-hello","createdAt":1700000000000,"cwd":"/home/dev/app","delegationDepth":0}',
    '{"type":"turn/start","seq":0,"time":1700000000100,"data":{"turn":1}}',
    '{"type":"user/message","seq":1,"time":1700000000105,"data":{"id":"m-u1","role":"user","content":[{"type":"text","text":"Say hello"}],"source":{"kind":"user"}},"surfaceOp":"append"}',
    '{"type":"step/start","seq":2,"time":1700000000110,"data":{"turn":1,"step":1}}',
    '{"type":"request/header","seq":3,"time":1700000000111,"data":{"header":{"config":{"provider":"deepseek","model":"deepseek-chat"},"system":"You are helpful."},"reason":"initial"}}',
    '{"type":"assistant/chunk","seq":4,"time":1700000000290,"data":{"turn":1,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"text"}}}',
    '{"type":"text-chunks","seq0":5,"time0":1700000000300,"data":{"turn":1,"step":1,"index":0,"dt":[12,0],"texts":["Hel","lo, ","world"]}}',
    '{"type":"assistant/chunk","seq":8,"time":1700000000330,"data":{"turn":1,"step":1,"chunk":{"type":"block-end","index":0,"block":{"type":"text","text":"Hello, world"}}}}',
    '{"type":"assistant/chunk","seq":9,"time":1700000000331,"data":{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"stop"}}}}',
    '{"type":"assistant/message","seq":10,"time":1700000000332,"data":{"turn":1,"step":1,"message":{"id":"m-a1","role":"assistant","content":[{"type":"text","text":"Hello, world"}],"source":{"kind":"model","provider":"deepseek","model":"deepseek-chat"}},"usage":{"inputTokens":12,"outputTokens":3}},"surfaceOp":"append","sourceEventSeqs":[4,5,6,7,8,9]}',
    '{"type":"step/end","seq":11,"time":1700000000333,"data":{"turn":1,"step":1}}',
    '{"type":"turn/end","seq":12,"time":1700000000334,"data":{"turn":1,"reason":{"kind":"completed"}}}',
  ].join('\n') + '\n' });
  add({ id: 's-tool', createdAt: 1700000100000, note: 'spec 01 §11.2 (torn tail)', expect: 'loads; closers seq 5-7', text: [
    '{"type":"session","version":0,"id":"s-tool","createdAt":1700000100000,"delegationDepth":0}',
    '{"type":"turn/start","seq":0,"time":1700000100010,"data":{"turn":1}}',
    '{"type":"user/message","seq":1,"time":1700000100011,"data":{"id":"m-u1","role":"user","content":[{"type":"text","text":"List files"}],"source":{"kind":"user"}},"surfaceOp":"append"}',
    '{"type":"step/start","seq":2,"time":1700000100012,"data":{"turn":1,"step":1}}',
    '{"type":"assistant/message","seq":3,"time":1700000100400,"data":{"turn":1,"step":1,"message":{"id":"m-a1","role":"assistant","content":[{"type":"tool-call","id":"call-1","name":"bash","arguments":"{\\"cmd\\":\\"ls\\"}"}],"source":{"kind":"model","provider":"deepseek","model":"deepseek-chat"}}},"surfaceOp":"append"}',
    '{"type":"tool/call","seq":4,"time":1700000100401,"data":{"turn":1,"step":1,"callId":"call-1","name":"bash","arguments":"{\\"cmd\\":\\"ls\\"}"}}',
    '{"type":"tool/result","seq":5,"time":1700000100',
  ].join('\n') });
  const future = (id, extraEv, ver = 0) => [
    `{"type":"session","version":${ver},"id":"${id}","createdAt":1700000200000,"delegationDepth":0}`,
    '{"type":"turn/start","seq":0,"time":1700000200001,"data":{"turn":1}}',
    `{"type":"metrics/sample","seq":1,"time":1700000200002,"data":{"cpu":0.4}${extraEv}}`,
    '{"type":"turn/end","seq":2,"time":1700000200003,"data":{"turn":1,"reason":{"kind":"completed"}}}',
  ].join('\n') + '\n';
  add({ id: 's-future', createdAt: 1700000200000, note: 'spec 01 §11.3', expect: 'loads; metrics/sample log-only', text: future('s-future', ',"ignorable":true') });
  add({ id: 's-future-required', createdAt: 1700000200000, note: '§11.3 without ignorable', expect: 'unsupported', text: future('s-future-required', '') });
  add({ id: 's-future-v1', createdAt: 1700000200000, note: '§11.3 with version 1', expect: 'unsupported (newer)', text: future('s-future-v1', ',"ignorable":true', 1) });
  add({ id: 's-future-ignorable-false', note: 'ignorable:false', expect: 'corrupt (envelope)', text: future('s-future-ignorable-false', ',"ignorable":false') });

  // --- legacy shapes (spec 01 §9.3) ---
  const legacyTurnEnd = (id, reason) => build(id, (l) => { l.simpleTurn(1, 'first', 'ok'); l.e('turn/start', { turn: 2 }); l.user('second'); l.e('turn/end', { turn: 2, reason }); l.simpleTurn(3, 'third', 'done'); });
  add({ id: 'legacy-turnend-aborted', note: 'turn/end {kind:aborted} without inner reason', expect: 'loads; reason.reason {kind:legacy}', lines: legacyTurnEnd('legacy-turnend-aborted', { kind: 'aborted' }) });
  add({ id: 'legacy-turnend-disposed', note: 'turn/end {kind:disposed}', expect: 'loads; aborted/disposed', lines: legacyTurnEnd('legacy-turnend-disposed', { kind: 'disposed' }) });
  add({ id: 'legacy-turnend-error-failure', note: 'error with step+failure', expect: 'loads; {kind:error,error:failure}', lines: legacyTurnEnd('legacy-turnend-error-failure', { kind: 'error', step: 1, failure: { message: 'overloaded', code: 'OVERLOADED', status: 529 } }) });
  add({ id: 'legacy-turnend-error-message-code', note: 'error with step+message+code', expect: 'loads', lines: legacyTurnEnd('legacy-turnend-error-message-code', { kind: 'error', step: 1, message: 'legacy failure', code: 'E_LEGACY' }) });
  add({ id: 'legacy-turnend-error-message-only', note: 'error with step+message', expect: 'loads; code UNKNOWN', lines: legacyTurnEnd('legacy-turnend-error-message-only', { kind: 'error', step: 2, message: 'no code here' }) });
  add({ id: 'legacy-turnend-aborted-user', note: 'current aborted shape', expect: 'loads unchanged', lines: legacyTurnEnd('legacy-turnend-aborted-user', { kind: 'aborted', reason: { kind: 'user' } }) });
  add({ id: 'bad-turnend-completed-extra', note: 'completed reason with extra key', expect: 'corrupt', lines: legacyTurnEnd('bad-turnend-completed-extra', { kind: 'completed', why: 'x' }) });
  add({ id: 'bad-turnend-interrupted-extra', note: 'interrupted reason with extra key', expect: 'corrupt', lines: legacyTurnEnd('bad-turnend-interrupted-extra', { kind: 'interrupted', note: 1 }) });
  add({ id: 'bad-turnend-turn-zero', note: 'turn/end turn 0', expect: 'corrupt', lines: build('bad-turnend-turn-zero', (l) => { l.simpleTurn(1, 'q', 'a'); l.e('turn/start', { turn: 2 }); l.e('turn/end', { turn: 0, reason: { kind: 'completed' } }); }) });
  add({ id: 'bad-turnend-extra-data-key', note: 'turn/end data with extra key', expect: 'corrupt', lines: build('bad-turnend-extra-data-key', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('turn/end', { turn: 1, reason: { kind: 'completed' }, step: 1 }); }) });
  add({ id: 'custom-turnend-kind', note: 'turn/end with an unknown reason kind', expect: 'loads (extensible)', lines: legacyTurnEnd('custom-turnend-kind', { kind: 'refusal', detail: 'x' }) });

  add({ id: 'legacy-steering-message', note: 'steering/message {turn,message}', expect: 'loads; becomes user/message', lines: build('legacy-steering-message', (l) => {
    l.e('turn/start', { turn: 1 }); l.user('start');
    l.e('steering/message', { turn: 1, message: { id: 'steer-1', role: 'user', content: [{ type: 'text', text: 'actually, use tabs' }], source: { kind: 'user' } } }, { surfaceOp: 'append' });
    l.e('step/start', { turn: 1, step: 1 }); l.asst(1, 1, 'Using tabs.'); l.e('step/end', { turn: 1, step: 1 }); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } });
  }) });
  add({ id: 'legacy-steering-content', note: 'steering/message {turn,content,source}', expect: 'loads; id legacy-message:<id>:<seq>', lines: build('legacy-steering-content', (l) => {
    l.e('turn/start', { turn: 1 }); l.user('start');
    l.e('steering/message', { turn: 1, content: [{ type: 'text', text: 'steer without id 中文' }], source: { kind: 'user' } }, { surfaceOp: 'append' });
    l.e('turn/end', { turn: 1, reason: { kind: 'completed' } });
  }) });
  add({ id: 'legacy-steering-no-surfaceop', note: 'steering/message without surfaceOp', expect: 'corrupt? (upgraded user/message lacks surfaceOp)', lines: build('legacy-steering-no-surfaceop', (l) => {
    l.e('turn/start', { turn: 1 }); l.user('start');
    l.e('steering/message', { turn: 1, content: [{ type: 'text', text: 'no marker' }], source: { kind: 'user' } });
    l.e('turn/end', { turn: 1, reason: { kind: 'completed' } });
  }) });
  add({ id: 'legacy-user-no-id', note: 'user/message {content,source}', expect: 'loads; id+role added', lines: build('legacy-user-no-id', (l) => {
    l.e('turn/start', { turn: 1 });
    l.e('user/message', { content: [{ type: 'text', text: 'legacy prompt' }], source: { kind: 'user' } }, { surfaceOp: 'append' });
    l.e('user/message', { content: [{ type: 'text', text: 'legacy plugin context' }], source: { kind: 'plugin', plugin: 'agents-md' } }, { surfaceOp: 'append' });
    l.e('turn/end', { turn: 1, reason: { kind: 'completed' } });
  }) });
  add({ id: 'legacy-assistant-provenance', note: 'assistant/message {content,provenance}', expect: 'loads; message built', lines: build('legacy-assistant-provenance', (l) => {
    l.e('turn/start', { turn: 1 }); l.user('q');
    l.e('step/start', { turn: 1, step: 1 });
    l.e('assistant/message', { turn: 1, step: 1, content: [{ type: 'text', text: 'legacy answer' }], provenance: { provider: 'deepseek', model: 'deepseek-chat', replayState: { v: 1 } }, usage: { inputTokens: 3, outputTokens: 2 } }, { surfaceOp: 'append' });
    l.e('step/end', { turn: 1, step: 1 }); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } });
  }) });
  add({ id: 'legacy-tool-result', note: 'tool/result {callId,content,isError} appended and replaced (prune)', expect: 'loads; replacement id = target id', lines: build('legacy-tool-result', (l) => {
    l.e('turn/start', { turn: 1 }); l.user('run ls');
    l.e('step/start', { turn: 1, step: 1 });
    l.asst(1, 1, [{ type: 'tool-call', id: 'c1', name: 'bash', arguments: '{"command":"ls"}' }]);
    const call = l.e('tool/call', { turn: 1, step: 1, callId: 'c1', name: 'bash', arguments: '{"command":"ls"}' });
    const r = l.e('tool/result', { turn: 1, step: 1, callId: 'c1', content: [{ type: 'text', text: 'Cargo.toml\nsrc\n' }], isError: false }, { surfaceOp: 'append', sourceEventSeqs: [call] });
    l.e('step/end', { turn: 1, step: 1 });
    l.e('step/start', { turn: 1, step: 2 }); l.asst(1, 2, 'Two entries.'); l.e('step/end', { turn: 1, step: 2 });
    l.e('turn/end', { turn: 1, reason: { kind: 'completed' } });
    l.e('compaction/prune', { shadowedRange: { start: r, end: r }, shadowedSeqs: [r], shadowedTokenCount: 10 });
    l.e('tool/result', { turn: 1, step: 1, callId: 'c1', content: [{ type: 'text', text: '[pruned]' }], isError: false }, { surfaceOp: { op: 'replace', start: r, end: r }, sourceEventSeqs: [r] });
  }) });
  add({ id: 'legacy-turn-start-trigger', note: 'turn/start {turn,trigger}', expect: 'loads; data {turn}', lines: build('legacy-turn-start-trigger', (l) => {
    l.e('turn/start', { turn: 1, trigger: { kind: 'user', rpcId: 7 } }); l.user('q'); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } });
  }) });
  add({ id: 'legacy-turn-start-bad-trigger', note: 'turn/start trigger without kind', expect: 'corrupt', lines: build('legacy-turn-start-bad-trigger', (l) => {
    l.e('turn/start', { turn: 1, trigger: {} }); l.user('q'); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } });
  }) });

  // --- header and version rules ---
  const body = (id) => build(id, (l) => l.simpleTurn(1, `hello from ${id}`, 'hi'));
  const hv = (id, hdr, note, expect) => add({ id, note, expect, headerLine: typeof hdr === 'string' ? hdr : JSON.stringify(hdr), lines: body(id) });
  hv('hdr-version-1', header('hdr-version-1', { version: 1 }), 'version 1', 'unsupported (newer)');
  hv('hdr-version-neg1', { type: 'session', version: -1, id: 'hdr-version-neg1', createdAt: t, delegationDepth: 0 }, 'version -1', 'unsupported (older)');
  hv('hdr-version-half', { type: 'session', version: 0.5, id: 'hdr-version-half', createdAt: t, delegationDepth: 0 }, 'version 0.5', 'unsupported (newer)');
  hv('hdr-version-string', { type: 'session', version: '0', id: 'hdr-version-string', createdAt: t, delegationDepth: 0 }, 'version "0"', 'skipped by listing');
  hv('hdr-version-missing', { type: 'session', id: 'hdr-version-missing', createdAt: t, delegationDepth: 0 }, 'no version', 'skipped by listing');
  hv('hdr-version-float-zero', `{"type":"session","version":0.0,"id":"hdr-version-float-zero","createdAt":${t},"delegationDepth":0}`, 'version written 0.0', 'loads');
  hv('hdr-no-depth', { type: 'session', version: 0, id: 'hdr-no-depth', createdAt: t }, 'no delegationDepth', 'skipped by listing');
  hv('hdr-sandbox-mode', { ...header('hdr-sandbox-mode'), sandboxMode: 'workspace-write' }, 'retired key sandboxMode', 'rejected (spec: listing skips it)');
  out[out.length - 1].root = 'layout-retired-sandbox-mode';
  hv('hdr-approval-policy', { ...header('hdr-approval-policy'), approvalPolicy: 'never' }, 'retired key approvalPolicy', 'rejected (spec: listing skips it)');
  out[out.length - 1].root = 'layout-retired-approval-policy';
  hv('hdr-extra-key', { ...header('hdr-extra-key'), title: 'ignored', futureField: { a: 1 } }, 'unknown header keys', 'loads; keys dropped');
  hv('hdr-created-float', { ...header('hdr-created-float'), createdAt: t + 0.5 }, 'createdAt not an integer', 'skipped by listing');
  hv('hdr-neg-zero-depth', `{"type":"session","version":0,"id":"hdr-neg-zero-depth","createdAt":${t},"delegationDepth":-0}`, 'delegationDepth -0', 'rejected');
  hv('hdr-created-exp', `{"type":"session","version":0,"id":"hdr-created-exp","createdAt":1.7000001e12,"delegationDepth":0}`, 'createdAt in exponent form', 'loads (number by value)');
  hv('hdr-full-lineage', { type: 'session', version: 0, id: 'hdr-full-lineage', createdAt: t, cwd: '/home/dev/app', parentSession: 'missing-parent', seedLength: 0, origin: 'subagent', delegationDepth: 3, agentPreset: 'reviewer' }, 'all optional fields, parent absent', 'loads');
  out[out.length - 1].cwd = '/home/dev/app';
  hv('hdr-origin-other', { ...header('hdr-origin-other'), origin: 'cron' }, 'origin other than subagent', 'rejected?');
  hv('hdr-type-wrong', { ...header('hdr-type-wrong'), type: 'header' }, 'type not "session"', 'skipped by listing');
  hv('hdr-unparsable', '{"type":"session","version":0,', 'unparsable first line', 'skipped by listing');
  hv('hdr-null-cwd', { ...header('hdr-null-cwd'), cwd: null }, 'cwd null', 'rejected?');
  out[out.length - 1].root = 'layout-null-cwd';
  hv('hdr-relative-cwd', { ...header('hdr-relative-cwd'), cwd: 'relative/dir' }, 'relative cwd (placed under its project dir)', 'rejected?');
  out[out.length - 1].cwd = 'relative/dir';
  add({ id: 'hdr-only', note: 'header line only', expect: 'listed; zero events', lines: [] });
  add({ id: 'hdr-no-lf', note: 'header without LF', expect: 'skipped by listing', text: JSON.stringify(header('hdr-no-lf')) });
  add({ id: 'hdr-empty-file', note: 'empty file', expect: 'skipped by listing', text: '' });
  add({ id: 'hdr-bom', note: 'UTF-8 BOM before header', expect: 'skipped? (BOM is not JSON whitespace)', text: '\ufeff' + JSON.stringify(header('hdr-bom')) + '\n' + body('hdr-bom').join('\n') + '\n' });
  add({ id: 'hdr-version-1-garbage', note: 'version 1 followed by garbage', expect: 'unsupported (before event parsing)', headerLine: JSON.stringify({ ...header('hdr-version-1-garbage'), version: 1 }), lines: ['this is not json', '{"type":"turn/end"}'] });

  // --- vocabulary ---
  add({ id: 'vocab-header-delta', note: 'request/header-delta', expect: 'corrupt', lines: build('vocab-header-delta', (l) => { l.simpleTurn(1, 'q', 'a'); l.e('request/header-delta', { system: 'x' }); l.simpleTurn(2, 'q2', 'a2'); }) });
  add({ id: 'vocab-mode-set', note: 'mode/set', expect: 'corrupt', lines: build('vocab-mode-set', (l) => { l.simpleTurn(1, 'q', 'a'); l.e('mode/set', { mode: 'plan' }); }) });
  add({ id: 'vocab-header-fallback', note: 'request/header reason fallback', expect: 'corrupt', lines: build('vocab-header-fallback', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1, step: 1 }); l.e('request/header', { header: { config: PM }, reason: 'fallback' }); l.asst(1, 1, 'a'); l.e('step/end', { turn: 1, step: 1 }); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } }); }) });
  add({ id: 'vocab-header-no-model', note: 'request/header without model', expect: 'corrupt', lines: build('vocab-header-no-model', (l) => { l.e('turn/start', { turn: 1 }); l.e('request/header', { header: { config: { provider: 'deepseek' } }, reason: 'initial' }); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } }); }) });
  add({ id: 'vocab-known-misc', note: 'many known log-only types with arbitrary data', expect: 'loads; all log-only', lines: build('vocab-known-misc', (l) => {
    l.e('agent-preset/selected', { preset: 'default' });
    l.e('turn/start', { turn: 1 }); l.user('q');
    for (const ty of ['llm/retry', 'llm/retry-started', 'hook/invoked', 'hook/result', 'approval/asked', 'approval/decided', 'approval/policy', 'command/run', 'command/done', 'goal/change', 'plan/mode', 'permission/preset', 'sandbox/mode', 'schedule/change', 'feedback/record', 'team/member', 'team/message/queued', 'team/message/delivered', 'team/task', 'subagent/descriptor', 'tool-workflow/run-start', 'tool-workflow/agent-start', 'tool-workflow/agent-end', 'tool-workflow/run-end', 'tool/code-dispatch-start', 'tool/code-dispatch', 'agent/inbox/spliced', 'session/title-llm-request', 'web/deepseek-search-llm-request', 'session/end-seed']) l.e(ty, ty === 'session/end-seed' ? {} : { note: `text in ${ty} is never searchable` });
    l.e('turn/end', { turn: 1, reason: { kind: 'completed' } });
  }) });
  add({ id: 'vocab-unknown-ignorable-mid', note: 'ignorable unknown events between turns', expect: 'loads', lines: build('vocab-unknown-ignorable-mid', (l) => { l.simpleTurn(1, 'q', 'a'); l.e('x-ext/note', { text: 'ignorable' }, { ignorable: true }); l.e('todo/write', { todos: [] }, { ignorable: true }); l.simpleTurn(2, 'q2', 'a2'); }) });
  add({ id: 'vocab-unknown-required-tail', note: 'unknown required type after last turn/end', expect: 'unsupported', lines: build('vocab-unknown-required-tail', (l) => { l.simpleTurn(1, 'q', 'a'); l.e('x-ext/required', {}); }) });
  add({ id: 'vocab-unknown-surface-type', note: 'unknown ignorable type carrying surfaceOp', expect: 'corrupt (marker on non-eligible type)', lines: build('vocab-unknown-surface-type', (l) => { l.simpleTurn(1, 'q', 'a'); l.e('x-ext/message', { text: 'x' }, { ignorable: true, surfaceOp: 'append' }); }) });

  // --- surface fold (spec 02) ---
  const base72 = (l) => { // 7.2 shape with enclosing turns
    l.e('turn/start', { turn: 1 }); const u0 = l.user('first question'); l.e('step/start', { turn: 1, step: 1 }); const a1 = l.asst(1, 1, 'first answer'); l.e('step/end', { turn: 1, step: 1 }); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } });
    l.e('turn/start', { turn: 2 }); const u2 = l.user('second question'); l.e('step/start', { turn: 2, step: 1 }); const a3 = l.asst(2, 1, 'second answer'); l.e('step/end', { turn: 2, step: 1 }); l.e('turn/end', { turn: 2, reason: { kind: 'completed' } });
    const cs = l.e('compaction/start', { compactionId: 'cmp-1', turn: null });
    const sm = l.e('compaction/summary', { compactionId: 'cmp-1', summary: [{ type: 'text', text: 'sum 1' }], shadowedRange: { start: u0, end: a1 }, shadowedSeqs: [u0, a1], shadowedTokenCount: 10, provider: 'deepseek', model: 'deepseek-chat' });
    const ck = l.e('user/message', { id: 'ck-1', role: 'user', content: [{ type: 'text', text: '<compacted-summary>sum 1</compacted-summary>' }], source: { kind: 'plugin', plugin: 'compact', compactionId: 'cmp-1' } }, { surfaceOp: { op: 'replace', start: u0, end: a1 }, sourceEventSeqs: [cs, sm, u0, a1] });
    l.e('compaction/end', { compactionId: 'cmp-1', turn: null });
    l.e('turn/start', { turn: 3 }); const u8 = l.user('third question');
    return { u0, a1, u2, a3, ck, u8 };
  };
  const endTurn3 = (l) => { l.e('turn/end', { turn: 3, reason: { kind: 'completed' } }); };
  add({ id: 'surf-valid-replace-of-replace', note: 'spec 02 §7.3 (start > end)', expect: 'loads; 2 replacements', lines: build('surf-valid-replace-of-replace', (l) => {
    const s = base72(l); endTurn3(l);
    const cs = l.e('compaction/start', { compactionId: 'cmp-2', turn: null });
    const sm = l.e('compaction/summary', { compactionId: 'cmp-2', summary: [{ type: 'text', text: 'sum 2' }], shadowedRange: { start: s.ck, end: s.a3 }, shadowedSeqs: [s.ck, s.u2, s.a3], shadowedTokenCount: 20, provider: 'deepseek', model: 'deepseek-chat' });
    l.e('user/message', { id: 'ck-2', role: 'user', content: [{ type: 'text', text: 'sum 2' }], source: { kind: 'plugin', plugin: 'compact', compactionId: 'cmp-2' } }, { surfaceOp: { op: 'replace', start: s.ck, end: s.a3 }, sourceEventSeqs: [cs, sm, s.ck, s.u2, s.a3] });
    l.e('compaction/end', { compactionId: 'cmp-2', turn: null });
  }) });
  const bad = (id, note, fn) => add({ id, note, expect: 'invalid surface', lines: build(id, (l) => { const s = base72(l); fn(l, s); endTurn3(l); }) });
  bad('surf-start-after-end', 'replace start after end by position', (l, s) => l.e('user/message', { id: 'x', role: 'user', content: [], source: { kind: 'user' } }, { surfaceOp: { op: 'replace', start: s.a3, end: s.ck }, sourceEventSeqs: [s.a3, s.ck, s.u2] }));
  bad('surf-replace-shadowed', 'replace names a shadowed seq', (l, s) => l.e('user/message', { id: 'x', role: 'user', content: [], source: { kind: 'user' } }, { surfaceOp: { op: 'replace', start: s.a1, end: s.a3 }, sourceEventSeqs: [s.a1, s.u2, s.a3] }));
  bad('surf-missing-source', 'shadowed node not cited', (l, s) => l.e('user/message', { id: 'x', role: 'user', content: [], source: { kind: 'user' } }, { surfaceOp: { op: 'replace', start: s.u2, end: s.a3 }, sourceEventSeqs: [s.u2] }));
  bad('surf-no-sources', 'replace without sourceEventSeqs', (l, s) => l.e('user/message', { id: 'x', role: 'user', content: [], source: { kind: 'user' } }, { surfaceOp: { op: 'replace', start: s.u2, end: s.a3 } }));
  bad('surf-empty-sources-user', 'user/message append with []', (l) => l.e('user/message', { id: 'x', role: 'user', content: [], source: { kind: 'user' } }, { surfaceOp: 'append', sourceEventSeqs: [] }));
  bad('surf-dup-source', 'duplicate source', (l, s) => l.asst(3, 1, 'dup', { sourceEventSeqs: [s.u8, s.u8] }));
  bad('surf-future-source', 'source not earlier (self)', (l) => l.asst(3, 1, 'self', { sourceEventSeqs: [l.events.length] }));
  bad('surf-missing-surfaceop', 'user/message without surfaceOp', (l) => l.e('user/message', { id: 'x', role: 'user', content: [], source: { kind: 'user' } }));
  bad('surf-op-on-log-only', 'step/start with surfaceOp', (l) => l.e('step/start', { turn: 3, step: 1 }, { surfaceOp: 'append' }));
  bad('surf-sources-on-log-only', 'log-only event with sourceEventSeqs', (l) => l.e('todo/write', { todos: [] }, { sourceEventSeqs: [0] }));
  bad('surf-replace-extra-key', 'replace object with extra key', (l, s) => l.e('user/message', { id: 'x', role: 'user', content: [], source: { kind: 'user' } }, { surfaceOp: { op: 'replace', start: s.u2, end: s.u2, why: 'x' }, sourceEventSeqs: [s.u2] }));
  bad('surf-op-bad-string', 'surfaceOp "prepend"', (l) => l.e('user/message', { id: 'x', role: 'user', content: [], source: { kind: 'user' } }, { surfaceOp: 'prepend' }));
  bad('surf-replace-negative', 'replace start -1', (l, s) => l.e('user/message', { id: 'x', role: 'user', content: [], source: { kind: 'user' } }, { surfaceOp: { op: 'replace', start: -1, end: s.u2 }, sourceEventSeqs: [s.u2] }));
  add({ id: 'surf-replace-sources-float', note: 'replace sources written as 2.0-style numbers', expect: 'loads (numbers by value)', text: null, build: 'float-sources' });

  const toolBase = (l) => {
    l.e('turn/start', { turn: 1 }); const u = l.user('run tests');
    l.e('step/start', { turn: 1, step: 1 });
    const a = l.asst(1, 1, [{ type: 'tool-call', id: 'c1', name: 'bash', arguments: '{}' }, { type: 'tool-call', id: 'c2', name: 'bash', arguments: '{"a":1}' }]);
    const k1 = l.e('tool/call', { turn: 1, step: 1, callId: 'c1', name: 'bash', arguments: '{}' });
    const r1 = l.e('tool/result', { turn: 1, step: 1, message: { id: 'tr-1', role: 'user', content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'LONG OUTPUT '.repeat(20) }], isError: false }], source: { kind: 'tool', callId: 'c1' } }, meta: { exitCode: 0 } }, { surfaceOp: 'append', sourceEventSeqs: [k1] });
    const k2 = l.e('tool/call', { turn: 1, step: 1, callId: 'c2', name: 'bash', arguments: '{"a":1}' });
    const r2 = l.result(1, 1, 'c2', 'second output', { sourceEventSeqs: [k2] });
    l.e('step/end', { turn: 1, step: 1 }); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } });
    return { u, a, r1, r2 };
  };
  const prune = (l, target, data) => { l.e('compaction/prune', { shadowedRange: { start: target, end: target }, shadowedSeqs: [target], shadowedTokenCount: 5 }); l.e('tool/result', data, { surfaceOp: { op: 'replace', start: target, end: target }, sourceEventSeqs: [target] }); };
  const r1data = (content, extra = {}) => ({ meta: { exitCode: 0 }, step: 1, turn: 1, message: { source: { callId: 'c1', kind: 'tool' }, content: [{ isError: false, toolCallId: 'c1', type: 'tool-result', content }], role: 'user', id: 'tr-1' }, ...extra });
  add({ id: 'surf-valid-prune', note: 'spec 02 §7.4 (keys reordered), then prune of the prune', expect: 'loads', lines: build('surf-valid-prune', (l) => { const s = toolBase(l); prune(l, s.r1, r1data([{ type: 'text', text: '[pruned]' }])); prune(l, l.events.length - 1, r1data([])); }) });
  add({ id: 'surf-valid-prune-null-content', note: 'prune replacing inner content with a non-array', expect: 'loads? (rule compares with content set to null)', lines: build('surf-valid-prune-null-content', (l) => { const s = toolBase(l); prune(l, s.r1, r1data('just a string')); }) });
  add({ id: 'surf-prune-changed-id', note: 'prune changes message id', expect: 'invalid surface', lines: build('surf-prune-changed-id', (l) => { const s = toolBase(l); const d = r1data([]); d.message.id = 'other'; prune(l, s.r1, d); }) });
  add({ id: 'surf-prune-changed-meta', note: 'prune changes meta', expect: 'invalid surface', lines: build('surf-prune-changed-meta', (l) => { const s = toolBase(l); prune(l, s.r1, r1data([], { meta: { exitCode: 1 } })); }) });
  add({ id: 'surf-prune-changed-iserror', note: 'prune flips isError', expect: 'invalid surface', lines: build('surf-prune-changed-iserror', (l) => { const s = toolBase(l); const d = r1data([]); d.message.content[0].isError = true; prune(l, s.r1, d); }) });
  add({ id: 'surf-prune-int-vs-float', note: 'prune data equal but numbers written 1.0 (by value)', expect: 'loads', lines: build('surf-prune-int-vs-float', (l) => { const s = toolBase(l); prune(l, s.r1, r1data([])); }), patch: (lines) => { lines[lines.length - 1] = lines[lines.length - 1].replace('"turn":1,', '"turn":1.0,'); return lines; } });
  add({ id: 'surf-tool-replace-two', note: 'tool/result replace covering two nodes', expect: 'invalid surface', lines: build('surf-tool-replace-two', (l) => { const s = toolBase(l); l.e('tool/result', r1data([]), { surfaceOp: { op: 'replace', start: s.r1, end: s.r2 }, sourceEventSeqs: [s.r1, s.r2] }); }) });
  add({ id: 'surf-tool-replace-non-tool', note: 'tool/result replacing an assistant message', expect: 'invalid surface', lines: build('surf-tool-replace-non-tool', (l) => { const s = toolBase(l); l.e('tool/result', r1data([]), { surfaceOp: { op: 'replace', start: s.a, end: s.a }, sourceEventSeqs: [s.a] }); }) });
  add({ id: 'surf-valid-assistant-replaces-mix', note: 'assistant/message replacing user+assistant+tool nodes', expect: 'loads', lines: build('surf-valid-assistant-replaces-mix', (l) => { const s = toolBase(l); l.asst(1, 1, 'summary by assistant', { surfaceOp: { op: 'replace', start: s.u, end: s.r2 }, sourceEventSeqs: [s.r2, s.r1, s.a, s.u, 0] }); }) });
  add({ id: 'surf-valid-empty-assistant', note: 'assistant/message with empty content and [] sources', expect: 'loads', lines: build('surf-valid-empty-assistant', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1, step: 1 }); l.asst(1, 1, [], { sourceEventSeqs: [] }); l.e('step/end', { turn: 1, step: 1 }); l.e('turn/end', { turn: 1, reason: { kind: 'max-tokens' } }); }) });

  // --- envelope & message shapes ---
  const env = (id, note, expect, fn) => add({ id, note, expect, lines: build(id, (l) => { l.simpleTurn(1, 'q', 'a'); fn(l); l.simpleTurn(2, 'q2', 'a2'); }) });
  env('env-extra-key', 'event with extra top-level key', 'corrupt', (l) => l.e('todo/write', { todos: [] }, { extra: 1 }));
  env('env-no-data', 'event without data', 'corrupt', (l) => { l.e('todo/write', undefined); });
  env('env-data-null', 'event with data null', 'loads? (data present)', (l) => l.e('todo/write', null));
  env('env-time-negative', 'negative time', 'loads', (l) => { l.events.push({ type: 'todo/write', seq: l.events.length, time: -5, data: { todos: [] } }); });
  env('env-time-float', 'non-integer time', 'corrupt', (l) => { l.events.push({ type: 'todo/write', seq: l.events.length, time: 1.5, data: { todos: [] } }); });
  env('env-bad-role', 'user/message with role assistant', 'corrupt', (l) => l.e('user/message', { id: 'x', role: 'assistant', content: [], source: { kind: 'user' } }, { surfaceOp: 'append' }));
  env('env-empty-id', 'user/message with empty id', 'corrupt', (l) => l.e('user/message', { id: '', role: 'user', content: [], source: { kind: 'user' } }, { surfaceOp: 'append' }));
  env('env-assistant-no-provider', 'assistant source without provider', 'corrupt', (l) => l.e('assistant/message', { turn: 1, step: 1, message: { id: 'x', role: 'assistant', content: [], source: { kind: 'model', model: 'm' } } }, { surfaceOp: 'append' }));
  env('env-toolresult-callid-mismatch', 'tool-result block id differs from source.callId', 'corrupt?', (l) => l.e('tool/result', { turn: 1, step: 1, message: { id: 'x', role: 'user', content: [{ type: 'tool-result', toolCallId: 'a', content: [] }], source: { kind: 'tool', callId: 'b' } } }, { surfaceOp: 'append' }));
  env('env-toolresult-two-blocks', 'tool-result message with two blocks', 'corrupt?', (l) => l.e('tool/result', { turn: 1, step: 1, message: { id: 'x', role: 'user', content: [{ type: 'tool-result', toolCallId: 'a', content: [] }, { type: 'text', text: 'x' }], source: { kind: 'tool', callId: 'a' } } }, { surfaceOp: 'append' }));
  env('env-content-not-array', 'user/message content is a string', 'corrupt', (l) => l.e('user/message', { id: 'x', role: 'user', content: 'plain', source: { kind: 'user' } }, { surfaceOp: 'append' }));
  add({ id: 'env-null-line-mid', note: 'a JSON null line before a later turn/end', expect: 'corrupt', lines: build('env-null-line-mid', (l) => { l.simpleTurn(1, 'q', 'a'); l.simpleTurn(2, 'q2', 'a2'); }), patch: (lines) => [...lines.slice(0, 6), 'null', ...lines.slice(6)] });
  add({ id: 'env-number-line-tail', note: 'a bare 42 line after the last turn/end', expect: 'loads (defect in tail)', lines: [...build('env-number-line-tail', (l) => l.simpleTurn(1, 'q', 'a')), '42'] });
  add({ id: 'env-array-line-tail', note: 'a [] line after the last turn/end', expect: 'loads (defect in tail)', lines: [...build('env-array-line-tail', (l) => l.simpleTurn(1, 'q', 'a')), '[]'] });
  add({ id: 'env-null-line-tail', note: 'JSON null / [] / 42 lines after the last turn/end', expect: 'loads (defect in tail)', lines: [...build('env-null-line-tail', (l) => l.simpleTurn(1, 'q', 'a')), 'null', '[]', '42'] });
  add({ id: 'env-seq-gap', note: 'seq jumps by one before a later turn/end', expect: 'corrupt', lines: build('env-seq-gap', (l) => { l.simpleTurn(1, 'q', 'a'); l.e('todo/write', { todos: [] }); l.simpleTurn(2, 'q2', 'a2'); l.events.splice(6, 1); }) });
  add({ id: 'env-seq-gap-tail', note: 'seq gap after the last turn/end', expect: 'loads (tail dropped)', lines: build('env-seq-gap-tail', (l) => { l.simpleTurn(1, 'q', 'a'); l.e('todo/write', { todos: [] }); l.e('todo/write', { todos: [] }); l.events.splice(6, 1); }) });
  add({ id: 'env-seq-number-forms', note: 'seq/time written as 1.0, 2e0, etc.', expect: 'loads (numbers by value)', lines: build('env-seq-number-forms', (l) => l.simpleTurn(1, 'q', 'a')), patch: (lines) => lines.map((x, i) => i === 1 ? x.replace('"seq":1,', '"seq":1.0,') : i === 2 ? x.replace('"seq":2,', '"seq":2e0,') : i === 3 ? x.replace(/"time":(\d)(\d+)/, (m, a, b) => `"time":${a}.${b}e${b.length}`) : x) });

  // --- packed rows ---
  const rowsLog = (id, tail) => build(id, (l) => {
    l.e('turn/start', { turn: 1 }); l.user('stream please'); l.e('step/start', { turn: 1, step: 1 });
    const seqs = [];
    seqs.push(l.e('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'reasoning' } }));
    for (const x of ['think', 'ing ', '🤔', ' more']) seqs.push(l.e('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'reasoning-delta', index: 0, text: x } }));
    seqs.push(l.e('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'thinking🤔 more' } } }));
    seqs.push(l.e('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-start', index: 1, blockType: 'text' } }));
    for (const x of ['a', 'b\ud83d', '\ude00c', 'd']) seqs.push(l.e('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 1, text: x } }));
    seqs.push(l.e('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-end', index: 1, block: { type: 'text', text: 'ab😀cd' } } }));
    seqs.push(l.e('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-start', index: 2, blockType: 'tool-call' } }));
    for (const [k, x] of ['{"pa', 'th":', '"a.rs"}'].entries()) seqs.push(l.e('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'tool-call-delta', index: 2, id: 'c9', ...(k === 0 ? { name: 'read_file' } : {}), argumentsDelta: x } }));
    seqs.push(l.e('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-end', index: 2, block: { type: 'tool-call', id: 'c9', name: 'read_file', arguments: '{"path":"a.rs"}' } } }));
    l.asst(1, 1, [{ type: 'reasoning', text: 'thinking🤔 more' }, { type: 'text', text: 'ab😀cd' }, { type: 'tool-call', id: 'c9', name: 'read_file', arguments: '{"path":"a.rs"}' }], { sourceEventSeqs: seqs });
    const k = l.e('tool/call', { turn: 1, step: 1, callId: 'c9', name: 'read_file', arguments: '{"path":"a.rs"}' });
    l.result(1, 1, 'c9', 'fn main() {}', { sourceEventSeqs: [k] });
    l.e('step/end', { turn: 1, step: 1 }); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } });
    if (tail) tail(l);
  });
  const packRows = (lines) => {
    // hand-pack: reasoning deltas (seq 4-7) with a negative dt, text deltas 10-11 as a 2-member row,
    // tool deltas 17-18 without name (the first one, 16, carries the name and stays a plain line).
    const ev = lines.map((x) => JSON.parse(x));
    const r1 = ev.slice(4, 8); r1[2].time -= 20;
    const out = [...lines.slice(0, 4), JSON.stringify({ type: 'reasoning-chunks', seq0: r1[0].seq, time0: r1[0].time, data: { turn: 1, step: 1, index: 0, dt: r1.slice(1).map((m, i) => m.time - r1[i].time), texts: r1.map((m) => m.data.chunk.text) } })];
    out.push(...lines.slice(8, 10));
    const t2 = ev.slice(10, 12);
    out.push(JSON.stringify({ type: 'text-chunks', seq0: t2[0].seq, time0: t2[0].time, data: { turn: 1, step: 1, index: 1, dt: [t2[1].time - t2[0].time], texts: t2.map((m) => m.data.chunk.text) } }));
    out.push(...lines.slice(12, 17));
    const c2 = ev.slice(17, 19);
    out.push(JSON.stringify({ type: 'tool-call-chunks', seq0: c2[0].seq, time0: c2[0].time, data: { turn: 1, step: 1, index: 2, id: 'c9', dt: [c2[1].time - c2[0].time], args: c2.map((m) => m.data.chunk.argumentsDelta) } }));
    out.push(...lines.slice(19));
    return out;
  };
  add({ id: 'rows-handpacked', note: 'reasoning/text/tool-call rows incl. negative dt and 2-member rows', expect: 'loads; rows expanded', lines: packRows(rowsLog('rows-handpacked')) });
  add({ id: 'rows-unpacked', note: 'same log with every chunk on its own line', expect: 'loads', lines: rowsLog('rows-unpacked') });
  const badRow = (id, note, expect, rowObj, mid) => add({ id, note, expect, lines: rowsLog(id, mid ? (l) => { l.simpleTurn(2, 'q', 'a'); } : undefined), patch: (lines) => { if (mid) { const i = lines.findIndex((x) => x.includes('"turn":2')); const r = rowObj(i); const rest = lines.slice(i).map((x) => { const o = JSON.parse(x); o.seq += r.n; return JSON.stringify(o); }); return [...lines.slice(0, i), r.line, ...rest]; } return [...lines, rowObj(lines.length).line]; } });
  badRow('rows-bad-dt-tail', 'dt length mismatch after last turn/end', 'loads (tail defect)', (n) => ({ n: 3, line: JSON.stringify({ type: 'text-chunks', seq0: n, time0: 5, data: { turn: 1, step: 1, index: 0, dt: [1], texts: ['a', 'b', 'c'] } }) }));
  badRow('rows-bad-dt-mid', 'dt length mismatch before a later turn/end', 'corrupt', (n) => ({ n: 3, line: JSON.stringify({ type: 'text-chunks', seq0: n, time0: 5, data: { turn: 1, step: 1, index: 0, dt: [1], texts: ['a', 'b', 'c'] } }) }), true);
  badRow('rows-extra-key-mid', 'row data with extra key before a later turn/end', 'corrupt', (n) => ({ n: 3, line: JSON.stringify({ type: 'text-chunks', seq0: n, time0: 5, data: { turn: 1, step: 1, index: 0, dt: [1, 1], texts: ['a', 'b', 'c'], x: 1 } }) }), true);
  badRow('rows-empty-texts-mid', 'row with empty texts before a later turn/end', 'corrupt', (n) => ({ n: 0, line: JSON.stringify({ type: 'text-chunks', seq0: n, time0: 5, data: { turn: 1, step: 1, index: 0, dt: [], texts: [] } }) }), true);
  badRow('rows-single-member-mid', 'row with one member (dt []) before a later turn/end', 'loads', (n) => ({ n: 1, line: JSON.stringify({ type: 'text-chunks', seq0: n, time0: 5, data: { turn: 1, step: 1, index: 0, dt: [], texts: ['solo'] } }) }), true);
  badRow('rows-float-dt-mid', 'row dt 1.5 before a later turn/end', 'corrupt', (n) => ({ n: 2, line: JSON.stringify({ type: 'text-chunks', seq0: n, time0: 5, data: { turn: 1, step: 1, index: 0, dt: [1.5], texts: ['a', 'b'] } }) }), true);
  badRow('rows-tool-name-mid', 'tool-call row with name, before a later turn/end', 'loads', (n) => ({ n: 3, line: JSON.stringify({ type: 'tool-call-chunks', seq0: n, time0: 5, data: { turn: 1, step: 1, index: 0, id: 'cx', name: 'bash', dt: [0, 0], args: ['{', '}', ''] } }) }), true);
  badRow('rows-envelope-extra-mid', 'row envelope with extra key before a later turn/end', 'corrupt', (n) => ({ n: 2, line: JSON.stringify({ type: 'text-chunks', seq0: n, time0: 5, extra: true, data: { turn: 1, step: 1, index: 0, dt: [0], texts: ['a', 'b'] } }) }), true);

  // --- encodings ---
  add({ id: 'enc-crlf', note: 'CRLF line endings', expect: 'loads', lines: build('enc-crlf', (l) => { l.simpleTurn(1, 'crlf q', 'crlf a'); l.simpleTurn(2, 'q2', 'a2'); }), eol: '\r\n' });
  add({ id: 'enc-lone-surrogates', note: 'lone surrogate escapes in texts, a valid escaped pair, escaped slash', expect: 'loads; strings keep lone surrogates', lines: build('enc-lone-surrogates', (l) => { l.simpleTurn(1, 'hi \ud83d alone and pair \ud83d\ude00 and low \ude00 end', 'reply with \udbff at end\udbff'); }), patch: (lines) => lines.map((x) => x.replace('and pair 😀', 'and pair \\ud83d\\ude00').replace('"hi ', '"hi \\/ ')) });
  add({ id: 'enc-invalid-utf8', note: 'invalid UTF-8 bytes inside strings', expect: 'loads; U+FFFD', bytes: true, lines: build('enc-invalid-utf8', (l) => l.simpleTurn(1, 'bad@@bytes here', 'fine')) });
  add({ id: 'enc-duplicate-keys', note: 'duplicate JSON keys (last wins in JS)', expect: 'loads; last value wins', lines: build('enc-duplicate-keys', (l) => l.simpleTurn(1, 'FIRST', 'answer')), patch: (lines) => lines.map((x) => x.replace('{"type":"text","text":"FIRST"}', '{"type":"text","text":"FIRST","text":"SECOND"}')) });
  add({ id: 'enc-whitespace', note: 'extra JSON whitespace and tabs inside lines', expect: 'loads', lines: build('enc-whitespace', (l) => l.simpleTurn(1, 'q', 'a')), patch: (lines) => lines.map((x) => x.replace(/,"/g, ' ,\t"').replace(/^\{/, '  {')) });
  add({ id: 'enc-blank-line-mid', note: 'an empty line between events before a later turn/end', expect: 'corrupt? (empty line does not parse)', lines: build('enc-blank-line-mid', (l) => { l.simpleTurn(1, 'q', 'a'); l.simpleTurn(2, 'q2', 'a2'); }), patch: (lines) => [...lines.slice(0, 6), '', ...lines.slice(6)] });
  add({ id: 'enc-blank-line-tail', note: 'an empty line at the end', expect: 'loads', lines: [...build('enc-blank-line-tail', (l) => l.simpleTurn(1, 'q', 'a')), ''] });

  // --- interrupted last turns (synthetic closers) ---
  add({ id: 'open-mixed-calls', note: 'c1 answered, c2 recorded unanswered, c3 never started; step open', expect: 'closers: c2 OUTCOME_UNKNOWN, c3 NOT_STARTED, step/end, turn/end', lines: build('open-mixed-calls', (l) => {
    l.simpleTurn(1, 'q', 'a');
    l.e('turn/start', { turn: 2 }); l.user('do three things'); l.e('step/start', { turn: 2, step: 1 });
    l.asst(2, 1, [{ type: 'tool-call', id: 'c1', name: 'bash', arguments: '{}' }, { type: 'tool-call', id: 'c2', name: 'bash', arguments: '{}' }, { type: 'tool-call', id: 'c3', name: 'bash', arguments: '{}' }]);
    const k1 = l.e('tool/call', { turn: 2, step: 1, callId: 'c1', name: 'bash', arguments: '{}' });
    l.result(2, 1, 'c1', 'done', { sourceEventSeqs: [k1] });
    l.e('tool/call', { turn: 2, step: 1, callId: 'c2', name: 'bash', arguments: '{}' });
  }) });
  add({ id: 'open-pending-from-closed-step', note: 'step 1 closed with an unanswered call, step 2 open with one', expect: 'closers only for step-2 call', lines: build('open-pending-from-closed-step', (l) => {
    l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1, step: 1 });
    l.asst(1, 1, [{ type: 'tool-call', id: 'old', name: 'bash', arguments: '{}' }]);
    l.e('step/end', { turn: 1, step: 1 });
    l.e('step/start', { turn: 1, step: 2 });
    l.asst(1, 2, [{ type: 'tool-call', id: 'new', name: 'bash', arguments: '{}' }]);
  }) });
  add({ id: 'open-turn-only', note: 'turn/start only', expect: 'closer: turn/end interrupted', lines: build('open-turn-only', (l) => { l.simpleTurn(1, 'q', 'a'); l.e('turn/start', { turn: 2 }); }) });
  add({ id: 'open-compaction', note: 'open turn with compaction/start and no end', expect: 'closers: turn/end only', lines: build('open-compaction', (l) => { l.simpleTurn(1, 'q', 'a'); l.simpleTurn(2, 'q', 'a'); l.e('turn/start', { turn: 3 }); l.user('q3'); l.e('compaction/start', { compactionId: 'c', turn: 3 }); }) });
  add({ id: 'open-result-without-call', note: 'tool/result answers a call id that no assistant registered', expect: 'closers: turn/end', lines: build('open-result-without-call', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1, step: 1 }); l.result(1, 1, 'ghost', 'orphan result'); }) });
  add({ id: 'open-tool-call-no-block', note: 'tool/call event for an unregistered call id', expect: 'closers ignore it', lines: build('open-tool-call-no-block', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1, step: 1 }); l.e('tool/call', { turn: 1, step: 1, callId: 'ghost', name: 'bash', arguments: '{}' }); }) });
  add({ id: 'open-duplicate-call-id', note: 'two assistant messages register the same call id in one step', expect: 'one closer?', lines: build('open-duplicate-call-id', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1, step: 1 }); l.asst(1, 1, [{ type: 'tool-call', id: 'dup', name: 'a', arguments: '{}' }]); l.asst(1, 1, [{ type: 'tool-call', id: 'dup', name: 'b', arguments: '{}' }]); l.e('tool/call', { turn: 1, step: 1, callId: 'dup', name: 'a', arguments: '{}' }); }) });

  add({ id: 'open-odd-call-ids', note: 'calls pending with odd ids: none, null, a number and its string, two equal objects, one answered then asked again', expect: 'closers as a JavaScript Map keys them', lines: build('open-odd-call-ids', (l) => {
    l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1, step: 1 });
    l.asst(1, 1, [{ type: 'tool-call', name: 'a', arguments: '{}' }, { type: 'tool-call', id: null, name: 'b', arguments: '{}' }, { type: 'tool-call', id: 7, name: 'c', arguments: '{}' }, { type: 'tool-call', id: '7', name: 'd', arguments: '{}' }, { type: 'tool-call', id: { k: 1 }, name: 'e', arguments: '{}' }, { type: 'tool-call', id: { k: 1 }, name: 'f', arguments: '{}' }, { type: 'tool-call', id: 'again', name: 'g', arguments: '{}' }]);
    l.e('tool/call', { turn: 1, step: 1, callId: 7, name: 'c', arguments: '{}' });
    l.result(1, 1, 'again', 'done');
    l.asst(1, 1, [{ type: 'tool-call', id: 'again', name: 'g', arguments: '{}' }]);
  }) });

  add({ id: 'open-turn-null', note: 'the open turn started with turn null', expect: 'no closers? (the repair sees no open turn)', lines: build('open-turn-null', (l) => { l.simpleTurn(1, 'q', 'a'); l.e('turn/start', { turn: null }); l.user('q2'); }) });
  add({ id: 'open-turn-without-turn', note: 'the open turn started without a turn number', expect: 'closers without a turn', lines: build('open-turn-without-turn', (l) => { l.simpleTurn(1, 'q', 'a'); l.e('turn/start', {}); l.user('q2'); }) });
  add({ id: 'open-call-without-step', note: 'step/start and the asking assistant message without a step number', expect: 'closers without a step', lines: build('open-call-without-step', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1 }); l.asst(1, undefined, [{ type: 'tool-call', id: 'c1', name: 'a', arguments: '{}' }]); }) });
  add({ id: 'open-step-null', note: 'the open step started with step null', expect: 'no step/end closer? (the repair sees no open step)', lines: build('open-step-null', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1, step: null }); }) });
  add({ id: 'closed-turn-start-without-data', note: 'a closed turn whose turn/start has no data', expect: 'corrupt? (the repair reads data.turn)', lines: build('closed-turn-start-without-data', (l) => { l.e('turn/start'); l.user('q'); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } }); l.simpleTurn(2, 'q2', 'a2'); }) });
  add({ id: 'closed-step-start-data-null', note: 'a closed turn whose step/start has data null', expect: 'corrupt? (the repair reads data.step)', lines: build('closed-step-start-data-null', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', null); l.asst(1, 1, 'a'); l.e('step/end', { turn: 1, step: 1 }); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } }); }) });
  add({ id: 'closed-tool-call-without-data', note: 'a closed turn with a tool/call that has no data', expect: 'corrupt? (the repair reads data.callId)', lines: build('closed-tool-call-without-data', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1, step: 1 }); l.e('tool/call'); l.asst(1, 1, 'a'); l.e('step/end', { turn: 1, step: 1 }); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } }); }) });
  add({ id: 'closed-tool-call-data-string', note: 'a closed turn with a tool/call whose data is a string', expect: 'loads', lines: build('closed-tool-call-data-string', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1, step: 1 }); l.e('tool/call', 'x'); l.asst(1, 1, 'a'); l.e('step/end', { turn: 1, step: 1 }); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } }); }) });

  add({ id: 'closed-assistant-null-block', note: 'a closed turn whose assistant message holds a null content block', expect: 'corrupt? (the repair reads each block\'s type)', lines: build('closed-assistant-null-block', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1, step: 1 }); l.asst(1, 1, [null, { type: 'text', text: 'a' }]); l.e('step/end', { turn: 1, step: 1 }); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } }); }) });
  add({ id: 'open-call-data-string', note: 'an open turn: a call without an id, and a tool/call whose data is a string', expect: 'the tool/call finds the call without an id', lines: build('open-call-data-string', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1, step: 1 }); l.asst(1, 1, [{ type: 'tool-call', name: 'a', arguments: '{}' }]); l.e('tool/call', 'x'); }) });

  add({ id: 'open-turn-object', note: 'the open turn started with an object for its turn number', expect: 'closers copy it?', lines: build('open-turn-object', (l) => { l.simpleTurn(1, 'q', 'a'); l.e('turn/start', { turn: { text: 'x' } }); l.user('q2'); }) });
  add({ id: 'open-step-object', note: 'the open step started with an object for its step number', expect: 'closers copy it?', lines: build('open-step-object', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1, step: { arguments: 'x' } }); }) });
  add({ id: 'open-call-step-object', note: 'a pending call asked by a message whose step is an object', expect: 'closers copy it?', lines: build('open-call-step-object', (l) => { l.e('turn/start', { turn: 1 }); l.user('q'); l.e('step/start', { turn: 1, step: 1 }); l.asst(1, { text: 'x' }, [{ type: 'tool-call', id: 'c1', name: 'a', arguments: '{}' }]); }) });

  // --- odd ids and placement that still binds ---
  add({ id: 'lone\udc80id', note: 'id with a lone surrogate (dir ~DC80)', expect: 'loads in DSH', lines: build('lone\udc80id', (l) => l.simpleTurn(1, 'q', 'a')) });
  add({ id: 'with-extra-files', cwd: '/home/dev/app', note: 'session dir also holds a .tmp and a notes file', expect: 'loads; extra files ignored', lines: build('with-extra-files', (l) => l.simpleTurn(1, 'q', 'a')), extraFiles: { 'session.jsonl.0123456789ab.tmp': 'partial', 'notes.txt': 'hello' } });
  add({ id: 'tie-a', createdAt: T0, note: 'createdAt tie with tie-B and s-hello', expect: 'listing order by id (localeCompare)', lines: body('tie-a') });
  add({ id: 'tie-B', createdAt: T0, note: 'createdAt tie', expect: 'listing order', lines: body('tie-B') });
  add({ id: 'tie-ä', createdAt: T0, note: 'createdAt tie', expect: 'listing order', lines: body('tie-ä') });

  // --- lineage (traceSession): a tree, a partial lineage, cycles ---
  const kin = (id, parentSession, note, expect, extra = {}) => {
    t += 60_000;
    const createdAt = extra.createdAt ?? t;
    out.push({ id, createdAt, note, expect, headerLine: JSON.stringify(header(id, { parentSession, origin: 'subagent', delegationDepth: 1, ...extra, createdAt }, createdAt)), lines: body(id) });
  };
  add({ id: 'lineage-root', note: 'lineage tree root', expect: 'loads; traceSession complete with descendants', lines: body('lineage-root') });
  const kinTie = t + 60_000;
  kin('lineage-child-B', 'lineage-root', 'child (createdAt tie with lineage-child-a)', 'descendant order by createdAt, then id', { createdAt: kinTie });
  kin('lineage-child-a', 'lineage-root', 'child (createdAt tie with lineage-child-B)', 'descendant order by createdAt, then id', { createdAt: kinTie });
  kin('lineage-grandchild', 'lineage-child-a', 'grandchild', 'ancestors child-a, root', { delegationDepth: 2 });
  kin('lineage-fork', 'lineage-root', 'fork-style child (seedLength, no origin)', 'loads?', { origin: undefined, delegationDepth: 0, seedLength: 3 });
  kin('lineage-orphan', 'lineage-gone', 'parent session is not in the corpus', 'traceSession complete:false, unresolvedParentId lineage-gone');
  kin('lineage-orphan-kid', 'lineage-orphan', 'child of an orphan', 'ancestors [lineage-orphan], unresolved lineage-gone', { delegationDepth: 2 });
  kin('lineage-cycle-a', 'lineage-cycle-b', 'two-session parent cycle (a -> b)', 'traceSession INVALID_LINEAGE?');
  kin('lineage-cycle-b', 'lineage-cycle-a', 'two-session parent cycle (b -> a)', 'traceSession INVALID_LINEAGE?');
  kin('lineage-self', 'lineage-self', 'parentSession is its own id', 'traceSession INVALID_LINEAGE?');

  // --- text filters (filterEvents text probes): one document per message ---
  add({ id: 'text-probes', cwd: '/home/dev/app', note: 'documents for case, whitespace, regex-metacharacter, CJK, diacritic and case-folding probes', expect: 'loads', lines: build('text-probes', (l) => {
    const texts = [
      'Hello   World,\tagain and\nagain', 'HELLO world shouting', 'The (AI)+ pattern', 'a.b is literal here', 'axb must not match a.b',
      '中文搜索 works', 'テスト結果', 'ordering at the caf\u00e9', 'ordering at the cafe\u0301 decomposed', 'plain cafe only',
      'Stra\u00dfe', 'STRASSE', '\u212aelvin scale', 'Kelvin plain', '\u0130stanbul', '\u017ftop long s', 'rocket \ud83d\ude80 emoji', 'price $5 ^caret [x] {y} |pipe| back\\slash',
    ];
    l.e('turn/start', { turn: 1 });
    const first = l.user(texts[0]);
    l.e('step/start', { turn: 1, step: 1 });
    const a1 = l.asst(1, 1, texts[1]);
    l.e('step/end', { turn: 1, step: 1 });
    l.e('turn/end', { turn: 1, reason: { kind: 'completed' } });
    for (const [i, text] of texts.slice(2).entries()) {
      l.e('turn/start', { turn: i + 2 }); l.user(text); l.e('turn/end', { turn: i + 2, reason: { kind: 'completed' } });
    }
    const n = texts.length;
    l.e('todo/write', { todos: [{ content: 'Check the caf\u00e9 menu', status: 'pending' }, { content: '  trim me  ', status: 'completed' }] });
    l.e('turn/start', { turn: n + 1 }); l.user('run it'); l.e('step/start', { turn: n + 1, step: 1 });
    l.asst(n + 1, 1, [{ type: 'tool-call', id: 'tp1', name: 'grep_search', arguments: '{"pattern":"(ai)+"}' }]);
    const call = l.e('tool/call', { turn: n + 1, step: 1, callId: 'tp1', name: 'grep_search', arguments: '{"pattern":"(ai)+"}' });
    l.result(n + 1, 1, 'tp1', 'no matches for (ai)+', { sourceEventSeqs: [call] });
    l.e('step/end', { turn: n + 1, step: 1 });
    l.e('turn/end', { turn: n + 1, reason: { kind: 'error', error: { message: 'Provider overloaded', code: 'OVERLOADED' } } });
    const cs = l.e('compaction/start', { compactionId: 'tp-cmp', turn: null });
    const sm = l.e('compaction/summary', { compactionId: 'tp-cmp', summary: [{ type: 'text', text: 'summary of hello world' }], shadowedRange: { start: first, end: a1 }, shadowedSeqs: [first, a1], shadowedTokenCount: 10, provider: 'deepseek', model: 'deepseek-chat' });
    l.e('user/message', { id: 'tp-ck', role: 'user', content: [{ type: 'text', text: 'Summary: hello world was said' }], source: { kind: 'plugin', plugin: 'compact', compactionId: 'tp-cmp' } }, { surfaceOp: { op: 'replace', start: first, end: a1 }, sourceEventSeqs: [cs, sm, first, a1] });
    l.e('compaction/end', { compactionId: 'tp-cmp', turn: null });
  }) });
  return out;
}

function fileBytes(c) {
  if (c.text !== undefined && c.text !== null) return Buffer.from(c.text, 'utf8');
  let lines = c.lines ?? [];
  if (c.build === 'float-sources') {
    const l = new Log(c.id, T0 + 9e6);
    l.e('turn/start', { turn: 1 }); const u = l.user('q'); l.e('step/start', { turn: 1, step: 1 }); const a = l.asst(1, 1, 'a'); l.e('step/end', { turn: 1, step: 1 }); l.e('turn/end', { turn: 1, reason: { kind: 'completed' } });
    l.e('user/message', { id: 'ck', role: 'user', content: [{ type: 'text', text: 's' }], source: { kind: 'plugin', plugin: 'compact', compactionId: 'c' } }, { surfaceOp: { op: 'replace', start: u, end: a }, sourceEventSeqs: [u, a] });
    lines = l.lines().map((x, i) => (i === 6 ? x.replace('"start":1,"end":3', '"start":1.0,"end":3e0').replace('[1,3]', '[1.0,3.00]') : x));
  }
  if (c.patch) lines = c.patch(lines);
  const headerLine = c.headerLine ?? JSON.stringify(header(c.id, c.cwd !== undefined ? { cwd: c.cwd } : {}, c.createdAt));
  const eol = c.eol ?? '\n';
  const text = [headerLine, ...lines].join(eol) + eol;
  if (c.bytes) return Buffer.from(text.replace('@@', '\u0001\u0002'), 'utf8').map((b) => (b === 1 ? 0xff : b === 2 ? 0xc0 : b));
  return Buffer.from(text, 'utf8');
}

async function writeRoot(root, items, compression = 'none') {
  const ctx = await openWriter(root, compression);
  const loc = (id, cwd) => ctx.sessionPersistence.locate({ version: 0, id, createdAt: 0, ...(cwd !== undefined ? { cwd } : {}), delegationDepth: 0 }).path;
  const written = [];
  for (const c of items) {
    let file;
    try { file = c.placeAt ? c.placeAt(loc, root) : loc(c.placeId ?? c.id, c.placeCwd !== undefined ? c.placeCwd : c.cwd); }
    catch (e) { file = path.join(root, 'root', `~invalid-${written.length}`, 'session.jsonl'); c.note += ` (locate failed: ${e.message})`; }
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, c.zstd ? Buffer.concat(c.zstd(fileBytes(c).toString('utf8'))) : fileBytes(c));
    for (const [name, content] of Object.entries(c.extraFiles ?? {})) fs.writeFileSync(path.join(path.dirname(file), name), content);
    written.push({ root: path.basename(root), id: c.id, file: path.relative(root, file), note: c.note, expect: c.expect });
  }
  await close(ctx);
  return written;
}

/** Writes DIR/handmade and the DIR/layout-* roots; returns manifest rows. */
export async function writeHandmade(out) {
  const rows = [];
  const all = cases();
  rows.push(...await writeRoot(path.join(out, 'handmade'), all.filter((c) => c.root === undefined)));
  const turnLines = (id, q) => { const l = new Log(id, T0 + 100); l.simpleTurn(1, q, 'answer'); return l.lines(); };
  const ok = (id, cwd) => ({ id, cwd, note: 'valid session', expect: 'loads', lines: turnLines(id, `question in ${id}`) });
  const layouts = {
    'layout-id-mismatch': [ok('good-1', '/home/dev/app'), ok('good-2'), { id: 'header-id', placeId: 'directory-id', cwd: '/home/dev/app', note: 'header id differs from its directory', expect: 'listing fails', lines: [] }],
    'layout-cwd-mismatch': [ok('good-1', '/home/dev/app'), { id: 'moved', cwd: '/home/dev/app', placeCwd: undefined, placeAt: (loc) => loc('moved', undefined), note: 'header cwd /home/dev/app stored under _no-cwd', expect: 'listing fails', lines: [] }],
    'layout-duplicate-id': [ok('good-1'), ok('dup', '/home/dev/app'), { ...ok('dup', '/home/dev/other'), note: 'same id in a second project dir', expect: 'listing fails' }],
    'layout-flat-file': [ok('good-1', '/home/dev/app'), { id: 'flat', cwd: '/home/dev/app', placeAt: (loc, root) => path.join(root, '--home-dev-app--', 'flat.jsonl'), note: 'legacy flat <project>/<id>.jsonl', expect: 'listing fails', lines: [] }],
    'layout-mixed-suffix': [ok('good-1', '/home/dev/app'), { id: 'zstd-in-raw', cwd: '/home/dev/app', placeAt: (loc) => loc('zstd-in-raw', '/home/dev/app') + '.zstd', zstd: (text) => { const [h, ...rest] = text.split(/(?<=\n)/); return [zstdFrame(h), zstdFrame(rest.join(''))]; }, note: 'a .jsonl.zstd transcript in a raw root', expect: 'listing fails', lines: [] }],
    'layout-stray-files': [ok('good-1', '/home/dev/app'), { id: 'stray', cwd: '/home/dev/app', placeAt: (loc, root) => path.join(root, '--home-dev-app--', 'README.txt'), note: 'non-transcript file directly in a project dir (plus notes.txt at root)', expect: 'ignored?', text: 'not a session\n' }, { id: 'stray-root', placeAt: (loc, root) => path.join(root, 'notes.txt'), note: 'file at root level', expect: 'ignored?', text: 'x\n' }],
    'layout-empty-session-dir': [ok('good-1', '/home/dev/app'), { id: 'empty-dir', cwd: '/home/dev/app', placeAt: (loc) => path.join(path.dirname(loc('empty-dir', '/home/dev/app')), 'other-file.txt'), note: 'session dir without transcript', expect: 'ignored', text: '' }],
  };
  for (const c of all.filter((x) => x.root !== undefined)) layouts[c.root] = [ok('good-1', '/home/dev/app'), c];
  // zstd roots: header-frame problems (spec 01 §8.2, §9.6).
  const split = (text) => { const i = text.indexOf('\n') + 1; return [text.slice(0, i), text.slice(i)]; };
  const frames = (text) => split(text).filter((x) => x.length > 0).map(zstdFrame);
  const z = (id, cwd, note, expect, fn) => ({ ...ok(id, cwd), note, expect, zstd: fn });
  const zroots = {
    'layout-zstd-headers': [
      z('good-z', '/home/dev/app', 'valid zstd session', 'loads', frames),
      z('torn-header', '/home/dev/app', 'only a cut first frame', 'skipped by listing', (t) => { const f = zstdFrame(split(t)[0]); return [f.subarray(0, f.length - 3)]; }),
      z('header-only-frame', '/home/dev/app', 'just the header frame', 'listed; zero events', (t) => [zstdFrame(split(t)[0])]),
      z('no-checksum', '/home/dev/app', 'frames written without the checksum flag', 'loads', (t) => split(t).map((x) => zlib.zstdCompressSync(Buffer.from(x)))),
      z('line-per-frame', undefined, 'one frame per event line', 'loads', (t) => t.split(/(?<=\n)/).map(zstdFrame)),
      z('empty-zstd', undefined, 'empty .zstd file', 'skipped by listing', () => [Buffer.alloc(0)]),
    ],
    'layout-zstd-two-line-header': [z('good-z', '/home/dev/app', 'valid', 'loads', frames), z('two-line-header', '/home/dev/app', 'first frame holds header + first event', 'listing fails', (t) => { const i = t.indexOf('\n', t.indexOf('\n') + 1) + 1; return [zstdFrame(t.slice(0, i)), zstdFrame(t.slice(i))]; })],
    'layout-zstd-bad-header-checksum': [z('good-z', '/home/dev/app', 'valid', 'loads', frames), z('bad-header-checksum', '/home/dev/app', 'header frame checksum flipped', 'listing fails', (t) => { const [h, ...r] = frames(t); const b = Buffer.from(h); b[b.length - 1] ^= 0xff; return [b, ...r]; })],
  };
  for (const [name, items] of Object.entries(layouts)) {
    const withHeaders = items.map((c) => ({ ...c, lines: (c.lines ?? []).length === 0 && c.text === undefined ? turnLines(c.id, 'q') : c.lines }));
    rows.push(...await writeRoot(path.join(out, name), withHeaders));
  }
  for (const [name, items] of Object.entries(zroots)) rows.push(...await writeRoot(path.join(out, name), items, 'zstd'));
  return rows;
}
