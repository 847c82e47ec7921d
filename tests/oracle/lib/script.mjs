// Drives one DSH Session through its public `append` API, turn by turn, the way
// an agent loop would: turn/step boundaries, streamed chunks, assistant
// messages, tool calls and results, titles, todos, compaction checkpoints and
// tool-result pruning. Every event goes through `session.append`, so DSH's own
// validation (envelope, surface fold, sources) accepts or rejects it.

import * as T from './text.mjs';

const PROVIDER = 'deepseek';
const MODELS = ['deepseek-chat', 'deepseek-reasoner'];
const SYSTEM = 'You are a careful coding agent working in the user\'s repository. Use tools to inspect files before editing them.';
const TOOLS = [
  { name: 'bash', description: 'Run a shell command.', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
  { name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'task', description: 'Delegate a task to a subagent.', parameters: { type: 'object', properties: { agent: { type: 'string' }, prompt: { type: 'string' } } } },
];

/** Split a JS string into stream pieces by UTF-16 code unit (so astral chars may be cut in half). */
export function splitPieces(rng, text, { forceSurrogateCut = false } = {}) {
  const cuts = new Set();
  let pos = 0;
  while (pos < text.length) {
    pos += rng.int(1, 14);
    if (pos < text.length) cuts.add(pos);
  }
  if (forceSurrogateCut) {
    for (let i = 1; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0xdc00 && c <= 0xdfff) { cuts.add(i); break; }
    }
  }
  const sorted = [...cuts].sort((a, b) => a - b);
  const out = [];
  let last = 0;
  for (const c of sorted) { out.push(text.slice(last, c)); last = c; }
  out.push(text.slice(last));
  return out.filter((p) => p.length > 0);
}

function hasLoneSurrogate(s) {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return true;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

export class Script {
  /**
   * @param session live or detached DSH Session
   * @param rng content PRNG
   * @param clock FakeClock (Date.now source)
   * @param opts { flush?: async () => void, flavour?, features: Set }
   */
  constructor(session, rng, clock, opts = {}) {
    this.s = session;
    this.rng = rng;
    this.clock = clock;
    this.flushFn = opts.flush ?? (async () => {});
    this.features = opts.features ?? new Set();
    this.flavour = opts.flavour ?? 'en';
    this.tame = opts.tame ?? false; // demo data: no adversarial/odd content
    this.model = rng.pick(MODELS);
    this.onSubagent = opts.onSubagent; // async (parentScript, callId, task) => text
    // Continue numbering from an existing (seeded) log.
    const events = session.events;
    this.turn = events.filter((e) => e.type === 'turn/start').length;
    this.headerLogged = events.some((e) => e.type === 'request/header');
    this.needResumeHeader = this.headerLogged;
    this.compactions = 0;
  }

  tick(lo = 1, hi = 40) { this.clock.tick(this.rng.int(lo, hi)); }

  ap(type, data, opts) {
    this.tick();
    return opts === undefined ? this.s.append(type, data) : this.s.append(type, data, opts);
  }

  /** append a stream chunk with a small (occasionally negative) clock step */
  chunk(turn, step, chunk) {
    if (!this.tame && this.rng.chance(0.01)) { this.clock.tick(-this.rng.int(1, 30)); this.features.add('negative-dt'); }
    else this.clock.tick(this.rng.int(0, 25));
    if (chunk.type.endsWith('-delta') && typeof chunk.text === 'string' && hasLoneSurrogate(chunk.text)) this.features.add('lone-surrogate-chunk');
    return this.s.append('assistant/chunk', { turn, step, chunk });
  }

  async flush() { await this.flushFn(); }

  id(prefix) { return `${prefix}-${this.rng.uuid()}`; }

  userMessage(text, source = { kind: 'user' }, extraBlocks = []) {
    const content = [{ type: 'text', text }, ...extraBlocks];
    if (hasLoneSurrogate(text)) this.features.add('lone-surrogate-user-text');
    return this.ap('user/message', { id: this.id('msg'), role: 'user', content, source }, { surfaceOp: 'append' });
  }

  requestHeader(reason) {
    const config = { provider: PROVIDER, model: this.model };
    const header = { config };
    let adapterDefaults;
    if (this.rng.chance(0.4)) { config.maxTokens = 8192; if (this.rng.chance(0.5)) adapterDefaults = { maxTokens: true }; }
    if (this.model === 'deepseek-reasoner') config.reasoningEffort = 'high';
    if (adapterDefaults) header.adapterDefaults = adapterDefaults;
    header.system = SYSTEM;
    header.tools = TOOLS;
    this.ap('request/header', { header, reason });
    if (this.rng.chance(0.3)) this.ap('request/context', { provider: PROVIDER, model: this.model, contextWindow: 131072 });
  }

  /** Stream one text-like block; returns chunk seqs. */
  streamText(turn, step, index, blockType, text, seqs) {
    const delta = blockType === 'reasoning' ? 'reasoning-delta' : 'text-delta';
    seqs.push(this.chunk(turn, step, { type: 'block-start', index, blockType }).seq);
    const force = /[\ud800-\udbff]/.test(text) && this.rng.chance(0.7);
    for (const p of splitPieces(this.rng, text, { forceSurrogateCut: force })) {
      seqs.push(this.chunk(turn, step, { type: delta, index, text: p }).seq);
    }
    seqs.push(this.chunk(turn, step, { type: 'block-end', index, block: { type: blockType, text } }).seq);
  }

  streamToolCall(turn, step, index, call, seqs) {
    seqs.push(this.chunk(turn, step, { type: 'block-start', index, blockType: 'tool-call' }).seq);
    const nameOnAll = this.rng.chance(0.3);
    const pieces = splitPieces(this.rng, call.arguments);
    pieces.forEach((p, k) => {
      const chunk = { type: 'tool-call-delta', index, id: call.id };
      if (k === 0 || nameOnAll) chunk.name = call.name;
      chunk.argumentsDelta = p;
      seqs.push(this.chunk(turn, step, chunk).seq);
    });
    seqs.push(this.chunk(turn, step, { type: 'block-end', index, block: { type: 'tool-call', id: call.id, name: call.name, arguments: call.arguments } }).seq);
  }

  /**
   * One model step. plan: { reasoning?, text?, calls: [{id,name,arguments,...}], finish: 'stop'|'tool-calls'|'max-tokens', interrupted? }
   * Returns { assistant } event (or undefined when the stream was cut).
   */
  modelStep(turn, step, plan) {
    this.ap('step/start', { turn, step });
    if (!this.headerLogged) { this.requestHeader('initial'); this.headerLogged = true; }
    else if (this.needResumeHeader) { this.requestHeader('resume'); this.needResumeHeader = false; }
    else if (this.rng.chance(0.05)) { this.model = this.model === MODELS[0] ? MODELS[1] : MODELS[0]; this.requestHeader('change'); }
    const seqs = [];
    const content = [];
    let index = 0;
    if (plan.reasoning !== undefined) {
      this.streamText(turn, step, index++, 'reasoning', plan.reasoning, seqs);
      content.push({ type: 'reasoning', text: plan.reasoning });
      this.features.add('reasoning');
    }
    if (plan.text !== undefined) {
      this.streamText(turn, step, index++, 'text', plan.text, seqs);
      content.push({ type: 'text', text: plan.text });
    }
    for (const call of plan.calls ?? []) {
      this.streamToolCall(turn, step, index++, call, seqs);
      content.push({ type: 'tool-call', id: call.id, name: call.name, arguments: call.arguments });
    }
    if (plan.cutStream) return undefined;
    const usage = { inputTokens: this.rng.int(200, 60000), outputTokens: this.rng.int(5, 3000) };
    if (this.rng.chance(0.5)) usage.cacheReadTokens = this.rng.int(0, usage.inputTokens);
    if (plan.reasoning !== undefined) usage.reasoningTokens = this.rng.int(10, 800);
    if (!plan.interrupted) {
      seqs.push(this.chunk(turn, step, { type: 'usage', usage }).seq);
      const reason = plan.finish === 'tool-calls' ? { kind: 'tool-calls' } : plan.finish === 'max-tokens' ? { kind: 'max-tokens' } : { kind: 'stop' };
      seqs.push(this.chunk(turn, step, { type: 'finish', reason }).seq);
    }
    const data = { turn, step, message: { id: this.id('msg'), role: 'assistant', content, source: { kind: 'model', provider: PROVIDER, model: this.model } } };
    if (!plan.interrupted) data.usage = usage;
    if (plan.interrupted) { data.interrupted = true; this.features.add('assistant-interrupted'); }
    const opts = { surfaceOp: 'append' };
    if (plan.emptySources) { opts.sourceEventSeqs = []; this.features.add('assistant-empty-sources'); }
    else if (!plan.omitSources) opts.sourceEventSeqs = seqs;
    else this.features.add('assistant-no-sources');
    return this.ap('assistant/message', data, opts);
  }

  makeCall(kind) {
    if (kind === 'task') {
      const task = this.rng.pick(T.SUBAGENT_TASKS);
      return { id: `call_${this.rng.hex(24)}`, name: 'task', arguments: JSON.stringify({ agent: this.rng.pick(['reviewer', 'explorer']), prompt: task }), task };
    }
    const tc = T.toolCall(this.rng, this.flavour);
    return { id: `call_${this.rng.hex(24)}`, name: tc.name, arguments: JSON.stringify(tc.args), output: tc.output };
  }

  async runTool(turn, step, call, { record = true } = {}) {
    const callEv = this.ap('tool/call', { turn, step, callId: call.id, name: call.name, arguments: call.arguments });
    let text = call.output;
    let isError = false;
    let error;
    if (call.name === 'task' && this.onSubagent) {
      text = await this.onSubagent(this, call);
      this.features.add('subagent-parent');
    } else if (this.rng.chance(0.15)) {
      const e = T.toolError(this.rng);
      text = e.text; isError = true; error = e.error;
      this.features.add(error ? 'tool-error-with-code' : 'tool-is-error');
    }
    if (!record) return { callEv };
    this.tick(20, 3000);
    const block = { type: 'tool-result', toolCallId: call.id, content: [{ type: 'text', text }] };
    if (isError || this.rng.chance(0.85)) block.isError = isError;
    const data = { turn, step, message: { id: this.id('msg'), role: 'user', content: [block], source: { kind: 'tool', callId: call.id } } };
    if (error) data.error = error;
    if (this.rng.chance(0.2)) { data.meta = { durationMs: this.rng.int(3, 9000), exitCode: isError ? 1 : 0 }; }
    const res = this.ap('tool/result', data, { surfaceOp: 'append', sourceEventSeqs: [callEv.seq] });
    this.features.add('tool-call');
    return { callEv, res };
  }

  /** A complete turn. kind: 'completed'|'aborted'|'error'|'max-tokens'|'blocked' */
  async fullTurn(kind = 'completed', opts = {}) {
    const turn = ++this.turn;
    this.ap('turn/start', { turn });
    const prompt = opts.prompt ?? T.userPrompt(this.rng, opts.flavour ?? this.pickFlavour());
    const extra = [];
    if (this.rng.chance(0.05)) { extra.push({ type: 'image', attachment: { attachmentId: `sha256:${this.rng.hex(64)}`, mediaType: 'image/png', bytes: this.rng.int(1000, 90000), width: 640, height: 480, name: 'screenshot.png' } }); this.features.add('image-block'); }
    if (!this.tame && this.rng.chance(0.02)) { extra.push({ type: 'x-future-block', payload: { note: 'unknown block type' } }); this.features.add('unknown-block'); }
    if (this.rng.chance(0.1)) {
      this.userMessage('<instructions>\nRepository conventions: run `cargo fmt` before committing; tests live under tests/.\n</instructions>', { kind: 'plugin', plugin: 'agents-md', form: 'instructions' });
      this.features.add('plugin-context');
    }
    this.userMessage(prompt, opts.source ?? { kind: 'user' }, extra);
    if (opts.beforeStep) await opts.beforeStep(turn);
    if (kind === 'blocked') { this.ap('turn/end', { turn, reason: { kind: 'blocked' } }); this.features.add('turn-blocked'); return; }
    const nSteps = opts.steps ?? this.rng.int(1, 3);
    for (let step = 1; step <= nSteps; step++) {
      const last = step === nSteps;
      if (kind === 'error' && last) {
        this.ap('step/start', { turn, step });
        if (!this.headerLogged) { this.requestHeader('initial'); this.headerLogged = true; }
        if (this.rng.chance(0.5)) this.chunk(turn, step, { type: 'block-start', index: 0, blockType: 'text' });
        this.ap('step/end', { turn, step });
        this.ap('turn/end', { turn, reason: { kind: 'error', error: this.rng.pick([{ message: 'upstream overloaded', code: 'OVERLOADED', status: 529 }, { message: 'request timed out', code: 'TIMEOUT' }, { message: 'Error: socket hang up', code: 'UNKNOWN' }]) } });
        this.features.add('turn-error');
        await this.flush();
        return;
      }
      const plan = { calls: [], finish: 'stop' };
      if (this.rng.chance(0.35) || opts.reasoning) plan.reasoning = T.reasoningText(this.rng);
      if (!last || opts.forceTask) {
        const nCalls = opts.forceTask ? 1 : this.rng.weighted([[6, 1], [2, 2], [1, 3]]);
        for (let c = 0; c < nCalls; c++) plan.calls.push(this.makeCall(opts.forceTask && c === 0 ? 'task' : 'tool'));
        plan.finish = 'tool-calls';
        if (this.rng.chance(0.5)) plan.text = this.rng.pick(['Let me look at the code first.', 'I will run the tests.', '先看一下相关文件。', 'Checking…']);
        opts.forceTask = false;
      } else {
        plan.text = T.assistantReply(this.rng, this.flavour);
        if (kind === 'max-tokens') plan.finish = 'max-tokens';
        if (kind === 'aborted') { plan.interrupted = true; plan.text = plan.text.slice(0, Math.max(1, Math.floor(plan.text.length / 2))); }
        if (!this.tame && this.rng.chance(0.02)) { plan.text = undefined; plan.reasoning = undefined; plan.emptySources = true; }
        else if (!this.tame && this.rng.chance(0.02)) plan.omitSources = true;
      }
      this.modelStep(turn, step, plan);
      for (const call of plan.calls) await this.runTool(turn, step, call);
      this.ap('step/end', { turn, step });
      if (!last && this.rng.chance(0.25)) await this.flush(); // mid-turn durability checkpoint
    }
    const reason = kind === 'aborted' ? { kind: 'aborted', reason: this.rng.pick([{ kind: 'user' }, { kind: 'parent' }, { kind: 'hook', reason: 'policy: stop requested' }, { kind: 'disposed' }]) }
      : kind === 'max-tokens' ? { kind: 'max-tokens' } : { kind: 'completed' };
    this.ap('turn/end', { turn, reason });
    this.features.add(`turn-${kind}`);
    await this.flush();
  }

  pickFlavour() {
    if (this.tame) return this.rng.pick(this.flavour === 'cjk' ? ['cjk', 'cjk', 'en'] : ['en', 'en', 'en', 'emoji']);
    if (this.flavour !== 'en' && this.rng.chance(0.6)) return this.flavour;
    return T.pickFlavour(this.rng);
  }

  title(kind) {
    const userSeqs = this.s.events.filter((e) => e.type === 'user/message' && e.data.source.kind === 'user').map((e) => e.seq);
    let source;
    let messageSeqs = userSeqs.slice(0, kind === 'fallback' ? 1 : 3);
    if (kind === 'fallback') source = { kind: 'fallback' };
    else if (kind === 'provider') source = { kind: 'provider', provider: 'deepseek-title', ...(this.rng.chance(0.5) ? { model: { provider: PROVIDER, model: 'deepseek-chat' } } : {}) };
    else { source = { kind: 'user' }; messageSeqs = []; }
    this.ap('session/title', { title: T.sessionTitle(this.rng, this.flavour), messageSeqs, source });
    this.features.add(`title-${kind}`);
  }

  todo() { this.ap('todo/write', { todos: T.todoList(this.rng) }); this.features.add('todo'); }

  /** Compaction checkpoint replacing the oldest surface nodes. turn: number|null */
  compact(turn = null) {
    const nodes = [...this.s.surface.nodes];
    if (nodes.length < 3) return false;
    const ev = this.s.events;
    const cands = [];
    for (let q = 1; q <= nodes.length - 2; q++) if (ev[nodes[q + 1]].type !== 'tool/result') cands.push(q);
    if (cands.length === 0) return false;
    const q = this.rng.pick(cands);
    const shadowed = nodes.slice(0, q + 1);
    if (ev[shadowed[0]].type === 'user/message' && ev[shadowed[0]].data.source?.plugin === 'compact') this.features.add('replace-of-replace');
    if (shadowed.some((s) => s > shadowed[shadowed.length - 1])) this.features.add('replace-start-gt-end');
    const compactionId = `cmp-${this.rng.hex(16)}`;
    const summary = T.compactionSummary(this.rng, shadowed.length);
    const start = this.ap('compaction/start', { compactionId, turn });
    const sum = this.ap('compaction/summary', { compactionId, summary, shadowedRange: { start: shadowed[0], end: shadowed[q] }, shadowedSeqs: shadowed, shadowedTokenCount: this.rng.int(1000, 90000), provider: PROVIDER, model: 'deepseek-chat', usage: { inputTokens: this.rng.int(1000, 90000), outputTokens: this.rng.int(100, 2000) } });
    this.ap('user/message', { id: this.id('msg'), role: 'user', content: summary, source: { kind: 'plugin', plugin: 'compact', compactionId } },
      { surfaceOp: { op: 'replace', start: shadowed[0], end: shadowed[q] }, sourceEventSeqs: [start.seq, sum.seq, ...shadowed] });
    this.ap('compaction/end', { compactionId, turn });
    this.compactions++;
    this.features.add('compaction');
    return true;
  }

  /** Content-only tool-result replacement (pruning). */
  prune() {
    const ev = this.s.events;
    const cands = this.s.surface.nodes.filter((n) => ev[n].type === 'tool/result');
    if (cands.length === 0) return false;
    const t = this.rng.pick(cands);
    const old = ev[t];
    const data = structuredClone(old.data);
    const already = JSON.stringify(data.message.content[0].content).includes(T.PRUNED_TEXT);
    data.message.content[0].content = [{ type: 'text', text: already ? `${T.PRUNED_TEXT} (again)` : T.PRUNED_TEXT }];
    if (old.surfaceOp !== 'append') this.features.add('prune-of-replacement');
    this.ap('compaction/prune', { shadowedRange: { start: t, end: t }, shadowedSeqs: [t], shadowedTokenCount: this.rng.int(500, 40000) });
    this.ap('tool/result', data, { surfaceOp: { op: 'replace', start: t, end: t }, sourceEventSeqs: [t] });
    this.features.add('prune');
    return true;
  }

  /** Leave the session inside an open turn (crash). variant: 'tool-pending'|'mid-stream'|'no-step'|'between-steps' */
  async openTurn(variant) {
    const turn = ++this.turn;
    this.ap('turn/start', { turn });
    this.userMessage(T.userPrompt(this.rng, this.pickFlavour()));
    this.features.add(`open-turn-${variant}`);
    if (variant === 'no-step') { await this.flush(); return; }
    if (variant === 'between-steps') {
      const plan = { calls: [this.makeCall('tool')], finish: 'tool-calls' };
      this.modelStep(turn, 1, plan);
      await this.runTool(turn, 1, plan.calls[0]);
      this.ap('step/end', { turn, step: 1 });
      await this.flush();
      return;
    }
    if (variant === 'mid-stream') {
      this.modelStep(turn, 1, { text: T.assistantReply(this.rng, this.flavour), calls: [], cutStream: true });
      await this.flush();
      return;
    }
    // tool-pending: two calls requested, the first recorded as started, the second never started.
    const calls = [this.makeCall('tool'), this.makeCall('tool')];
    this.modelStep(turn, 1, { calls, finish: 'tool-calls', text: 'Running both checks.' });
    await this.runTool(turn, 1, calls[0], { record: false });
    await this.flush();
  }
}
