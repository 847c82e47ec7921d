// Small deterministic PRNG (sfc32 seeded through a string hash). Not crypto.

function xmur3(str) {
  let h = 1779033703 ^ str.length;
  for (let i = 0; i < str.length; i++) {
    h = Math.imul(h ^ str.charCodeAt(i), 3432918353);
    h = (h << 13) | (h >>> 19);
  }
  return () => {
    h = Math.imul(h ^ (h >>> 16), 2246822507);
    h = Math.imul(h ^ (h >>> 13), 3266489909);
    return (h ^= h >>> 16) >>> 0;
  };
}

export class Rng {
  constructor(seed) {
    const s = xmur3(String(seed));
    this.a = s(); this.b = s(); this.c = s(); this.d = s();
    for (let i = 0; i < 12; i++) this.u32();
  }
  u32() {
    let { a, b, c, d } = this;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    this.a = a; this.b = b; this.c = c; this.d = d;
    return t >>> 0;
  }
  /** float in [0, 1) */
  next() { return this.u32() / 4294967296; }
  /** integer in [lo, hi] inclusive */
  int(lo, hi) { return lo + Math.floor(this.next() * (hi - lo + 1)); }
  chance(p) { return this.next() < p; }
  pick(arr) { return arr[Math.floor(this.next() * arr.length)]; }
  /** weighted pick: [[weight, value], ...] */
  weighted(pairs) {
    const total = pairs.reduce((s, [w]) => s + w, 0);
    let r = this.next() * total;
    for (const [w, v] of pairs) { if ((r -= w) < 0) return v; }
    return pairs[pairs.length - 1][1];
  }
  shuffle(arr) {
    const a = [...arr];
    for (let i = a.length - 1; i > 0; i--) { const j = this.int(0, i); [a[i], a[j]] = [a[j], a[i]]; }
    return a;
  }
  hex(n) { let s = ''; while (s.length < n) s += this.u32().toString(16).padStart(8, '0'); return s.slice(0, n); }
  /** UUID-v4-shaped id derived from the stream. */
  uuid() {
    const h = this.hex(32).split('');
    h[12] = '4';
    h[16] = '89ab'[parseInt(h[16], 16) & 3];
    const s = h.join('');
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }
  fork(label) { return new Rng(`${this.u32()}:${label}`); }
}

/** Fake wall clock: Date.now() returns `now`; the generator advances it explicitly. */
export class FakeClock {
  constructor(start) { this.now = start; }
  install() { Date.now = () => this.now; return this; }
  tick(ms) { this.now += ms; return this.now; }
  set(ms) { this.now = ms; }
}
