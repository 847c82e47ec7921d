import fs from 'node:fs';
import { Context, Service } from '@deepseek-ai/cordis';
import SessionStore, { SessionId, Session } from '@deepseek-ai/dsh-session';
import { SqliteSessionQueryEngine } from '@deepseek-ai/dsh-session-query-sqlite';
import { openReader, close } from './lib/dsh.mjs';
const ROOT = '/tmp/oracle-base/logs/ids';
const pctx = await openReader(ROOT, 'none');
class ReadOnly extends Service {
  constructor(ctx) { super(ctx, 'sessionPersistence'); }
  list(signal) { return pctx.sessionPersistence.list(signal); }
  inspect(id, signal) { return pctx.sessionPersistence.inspect(id, signal); }
}
const ctx = new Context();
await ctx.plugin(SessionStore);
await ctx.plugin(ReadOnly);
await ctx.plugin(SqliteSessionQueryEngine, { path: ':memory:', openAt: 'never' });
const q = ctx.sessionQuery;
const l = await q.listSessions();
console.log(l.length, l.slice(0,3));
const tgt = l.find(r => r.header.id === 'abc');
const ins = await pctx.sessionPersistence.inspect('abc');
console.log(Object.keys(ins), ins.meta, ins.events.length, ins.events.at(-1));
// shadow with identical header
const s = ctx.sessions.create(SessionId('abc'), { seed: ins.events, meta: { ...ins.meta } });
console.log('hdr', s.header, s.events.length, s.events.at(-1));
const l2 = await q.listSessions();
console.log(l2.filter(r=>r.live));
try { console.log(await q.traceSession('abc')); } catch (e) { console.log('ERR', e.code, e.message); }
// conflicting
const ins2 = await pctx.sessionPersistence.inspect('ABC');
const s2 = ctx.sessions.create(SessionId('ABC'), { seed: ins2.events, meta: { ...ins2.meta, createdAt: ins2.meta.createdAt + 1 } });
try { console.log(await q.listSessions()); } catch (e) { console.log('ERR', e.code, e.message); }
try { console.log((await q.listEvents('ABC')).length); } catch (e) { console.log('ERR', e.code, e.message); }
try { console.log(await q.readTitleSnapshots(['ABC','abc','nope'])); } catch (e) { console.log('ERR', e.code, e.message); }
await ctx.fiber.dispose(); await close(pctx);
