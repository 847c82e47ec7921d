// Crash-style damage applied to persisted session files (in place).
import fs from 'node:fs';
import { scanFrames, zstdFrame } from './zstd.mjs';

export const RAW_DAMAGE = [
  'raw-torn-tail',                      // last line cut mid-line (no LF): ignored, closers appended
  'raw-drop-last-line',                 // clean cut before the final line
  'raw-garbage-after-last-turn-end',    // complete unparsable line at the end: tolerated
  'raw-garbage-then-event-after-end',   // unparsable line + a valid non-turn/end event: tolerated
  'raw-bad-packed-row-tail',            // malformed packed row after the last turn/end: tolerated
  'raw-garbage-before-turn-end',        // unparsable line before a later turn/end: corrupt
  'raw-drop-middle-line',               // seq gap before a later turn/end: corrupt
  'raw-duplicate-last-line',            // last line repeated (seq not contiguous): defect in the tail
  'raw-duplicate-turn-end',             // last turn/end line repeated at the end: a defective row holding a turn/end
  'raw-crlf',                           // every LF preceded by CR: loads identically
  'raw-invalid-utf8',                   // invalid UTF-8 bytes inside a string: lossy decode
];

export const ZSTD_DAMAGE = [
  'zstd-torn-mid-frame',                // last frame cut in the middle: partial plaintext kept
  'zstd-torn-frame-header-only',        // last frame cut after its header: contributes nothing
  'zstd-drop-last-frame',               // last frame removed cleanly
  'zstd-torn-garbage-after-end',        // torn extra frame whose plaintext starts with a bad line
  'zstd-garbage-frame-after-end',       // complete extra frame holding a bad line
  'zstd-unterminated-line-frame',       // complete extra frame whose text lacks the final LF
  'zstd-garbage-frame-middle',          // complete bad frame between committed frames: corrupt
  'zstd-trailing-junk',                 // non-frame bytes after the last frame
  'zstd-skippable-frame',               // a standard skippable frame appended
  'zstd-bad-checksum-middle',           // checksum of a middle frame flipped
];

const GARBAGE = '{"type":"assistant/chunk","seq":\u0000oops';

function lastLineStart(text) {
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  return body.lastIndexOf('\n') + 1;
}

export function applyDamage(file, kind, info = {}) {
  const buf = fs.readFileSync(file);
  let out;
  if (kind.startsWith('raw-')) {
    const text = buf.toString('utf8');
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    const lastSeq = info.lastSeq;
    switch (kind) {
      case 'raw-torn-tail': {
        const s = lastLineStart(text);
        const len = Buffer.byteLength(text.slice(s));
        const cutBytes = Buffer.byteLength(text.slice(0, s)) + Math.max(1, Math.floor(len / 2));
        out = buf.subarray(0, cutBytes);
        break;
      }
      case 'raw-drop-last-line': out = Buffer.from(lines.slice(0, -1).join('\n') + '\n'); break;
      case 'raw-garbage-after-last-turn-end': out = Buffer.concat([buf, Buffer.from(GARBAGE + '\n')]); break;
      case 'raw-garbage-then-event-after-end':
        out = Buffer.concat([buf, Buffer.from(GARBAGE + '\n' + JSON.stringify({ type: 'todo/write', seq: lastSeq + 2, time: 1, data: { todos: [] } }) + '\n')]);
        break;
      case 'raw-bad-packed-row-tail':
        out = Buffer.concat([buf, Buffer.from(JSON.stringify({ type: 'text-chunks', seq0: lastSeq + 1, time0: 1, data: { turn: 1, step: 1, index: 0, dt: [1], texts: ['a', 'b', 'c'] } }) + '\n')]);
        break;
      case 'raw-garbage-before-turn-end': {
        // before the line that holds the last turn/start
        const i = lines.findLastIndex((l) => l.includes('"type":"turn/start"'));
        lines.splice(Math.max(1, i), 0, GARBAGE);
        out = Buffer.from(lines.join('\n') + '\n');
        break;
      }
      case 'raw-drop-middle-line': {
        const i = lines.findLastIndex((l) => l.includes('"type":"turn/start"'));
        lines.splice(Math.max(2, i - 1), 1);
        out = Buffer.from(lines.join('\n') + '\n');
        break;
      }
      case 'raw-duplicate-last-line': out = Buffer.concat([buf, Buffer.from(lines[lines.length - 1] + '\n')]); break;
      case 'raw-duplicate-turn-end': out = Buffer.concat([buf, Buffer.from(lines.findLast((l) => l.includes('"type":"turn/end"')) + '\n')]); break;
      case 'raw-crlf': out = Buffer.from(text.replace(/\n/g, '\r\n')); break;
      case 'raw-invalid-utf8': {
        const i = lines.findIndex((l) => l.includes('"type":"user/message"'));
        const at = lines[i].indexOf('"text":"') + 8;
        const pre = Buffer.from(lines.slice(0, i).join('\n') + '\n' + lines[i].slice(0, at));
        const post = Buffer.from(lines[i].slice(at) + '\n' + lines.slice(i + 1).join('\n') + '\n');
        out = Buffer.concat([pre, Buffer.from([0xff, 0xc3, 0x28, 0xe2, 0x82]), post]);
        break;
      }
      default: throw new Error(`unknown damage ${kind}`);
    }
  } else {
    const frames = scanFrames(buf);
    const last = frames[frames.length - 1];
    if (frames.length < 3) throw new Error(`${file}: too few frames for ${kind}`);
    switch (kind) {
      case 'zstd-torn-mid-frame': out = buf.subarray(0, last.start + Math.floor((last.end - last.start) / 2)); break;
      case 'zstd-torn-frame-header-only': out = buf.subarray(0, last.start + 6); break;
      case 'zstd-drop-last-frame': out = buf.subarray(0, last.start); break;
      case 'zstd-torn-garbage-after-end': {
        const f = zstdFrame(GARBAGE + '\n' + JSON.stringify({ type: 'todo/write', seq: info.lastSeq + 2, time: 1, data: { todos: [] } }) + '\n');
        out = Buffer.concat([buf, f.subarray(0, f.length - 4)]); // drop the checksum: frame incomplete
        break;
      }
      case 'zstd-garbage-frame-after-end': out = Buffer.concat([buf, zstdFrame(GARBAGE + '\n')]); break;
      case 'zstd-unterminated-line-frame':
        out = Buffer.concat([buf, zstdFrame(JSON.stringify({ type: 'todo/write', seq: info.lastSeq + 1, time: 1, data: { todos: [] } }))]);
        break;
      case 'zstd-garbage-frame-middle': {
        const mid = frames[Math.floor(frames.length / 2)];
        out = Buffer.concat([buf.subarray(0, mid.start), zstdFrame(GARBAGE + '\n'), buf.subarray(mid.start)]);
        break;
      }
      case 'zstd-trailing-junk': out = Buffer.concat([buf, Buffer.from('JUNK\n')]); break;
      case 'zstd-skippable-frame': {
        const sk = Buffer.alloc(12);
        sk.writeUInt32LE(0x184d2a50, 0); sk.writeUInt32LE(4, 4); sk.write('skip', 8);
        out = Buffer.concat([buf, sk]);
        break;
      }
      case 'zstd-bad-checksum-middle': {
        const mid = frames[Math.floor(frames.length / 2)];
        if (mid.checksumAt === undefined) throw new Error('no checksum');
        out = Buffer.from(buf);
        out[mid.checksumAt] ^= 0xff;
        break;
      }
      default: throw new Error(`unknown damage ${kind}`);
    }
  }
  fs.writeFileSync(file, out);
}
