// Structural Zstandard frame scanner (RFC 8878 framing only, no decoding) and
// helpers built on Node's zlib zstd bindings. Used to damage files precisely.
import zlib from 'node:zlib';

/** Locate frames: returns [{start, end, complete, checksumAt?}] */
export function scanFrames(buf) {
  const frames = [];
  let pos = 0;
  while (pos < buf.length) {
    const start = pos;
    if (buf.length - pos < 4 || buf.readUInt32LE(pos) !== 0xfd2fb528) {
      frames.push({ start, end: buf.length, complete: false, foreign: true });
      break;
    }
    pos += 4;
    if (pos >= buf.length) { frames.push({ start, end: buf.length, complete: false }); break; }
    const fhd = buf[pos++];
    const fcsFlag = fhd >> 6;
    const single = (fhd >> 5) & 1;
    const checksum = (fhd >> 2) & 1;
    const dictFlag = fhd & 3;
    const hdrRest = (single ? 0 : 1) + [0, 1, 2, 4][dictFlag] + [single ? 1 : 0, 2, 4, 8][fcsFlag];
    pos += hdrRest;
    let ok = pos <= buf.length;
    while (ok) {
      if (pos + 3 > buf.length) { ok = false; break; }
      const bh = buf[pos] | (buf[pos + 1] << 8) | (buf[pos + 2] << 16);
      pos += 3;
      const last = bh & 1;
      const type = (bh >> 1) & 3;
      const size = bh >>> 3;
      pos += type === 1 ? 1 : size;
      if (pos > buf.length) { ok = false; break; }
      if (last) break;
    }
    if (ok && checksum) { pos += 4; if (pos > buf.length) ok = false; }
    if (!ok) { frames.push({ start, end: buf.length, complete: false }); break; }
    frames.push({ start, end: pos, complete: true, checksumAt: checksum ? pos - 4 : undefined });
  }
  return frames;
}

/** One checksummed frame, like DSH writes. */
export function zstdFrame(text) {
  return zlib.zstdCompressSync(Buffer.from(text, 'utf8'), { params: { [zlib.constants.ZSTD_c_checksumFlag]: 1 } });
}

export function zstdDecodeAll(buf) {
  return zlib.zstdDecompressSync(buf).toString('utf8');
}
