// The fixed benchmark query set (41 queries): common, mid-frequency and rare words, phrases,
// code identifiers and paths, CJK, and queries that match nothing. Rare words and identifiers
// are picked by rank from the fixed-seed vocabulary (lib/text.mjs), so they exist in every
// corpus with a predictable frequency.
export function benchQueries(V) {
  const q = (category, query) => ({ category, query });
  return [
    q('common', 'the'), q('common', 'to'), q('common', 'error'), q('common', 'test'),
    q('common', 'run'), q('common', 'build'), q('common', 'session'), q('common', 'memory'),
    q('mid', 'deploy'), q('mid', 'transaction'), q('mid', 'mutex'), q('mid', 'benchmark'),
    q('mid', 'intermittent'), q('mid', 'changelog'),
    q('rare', V.rare[50]), q('rare', V.rare[500]), q('rare', V.rare[2000]), q('rare', V.rare[8000]),
    q('rare', V.rare[20000]), q('rare', V.rare[39000]),
    q('phrase', 'cannot borrow'), q('phrase', 'test result: ok'), q('phrase', 'no such file or directory'),
    q('phrase', 'passed; 0 failed'), q('phrase', 'the same'), q('phrase', 'fix the bug'),
    q('code', V.idents[0]), q('code', V.idents[7]), q('code', V.idents[300]), q('code', V.idents[3000]),
    q('code', V.files[1]), q('code', 'E0502'),
    q('cjk', '测试'), q('cjk', '数据库'), q('cjk', '内存泄漏'), q('cjk', V.han[400]), q('cjk', 'テスト'),
    q('cjk', '데이터베이스'),
    q('none', 'zzyzx qwertyuiop'), q('none', 'nonexistent_identifier_xyz'), q('none', '不存在的词语'),
  ];
}
