// Synthetic but realistic text for the benchmark corpus: dev-flavoured English with a Zipf
// vocabulary (a few hundred common words plus tens of thousands of rare ones), code
// identifiers, source files, test and build output, stack traces, Chinese, Japanese and Korean.
// All wording is our own. Deterministic for a given Rng.
import { Rng } from '../../oracle/lib/prng.mjs';

// Common words, roughly in frequency order (rank 0 is the most frequent).
export const COMMON = `the to a of and in is it that for this with on be not file test error
function you we if as can should are from use at by return will run value an or code I have
fix now type new but so change when which data add all one test's line name check before
call first only need there after empty input output time path build more case also same
because into then where string config there's other two list make update each set since
first way still just than missing used struct module server request response client user
session index query search result results field read write open close start end default
number version package import export class method async await promise option none some
ok true false null undefined buffer len slice vec map key cache token parser lexer stream
frame batch retry timeout handler route login auth password hash digest cursor page limit
offset order sort filter match phrase snippet log event events message messages tool tools
commit branch merge diff patch review comment failing passes passed failed failure warning
warnings panic panicked borrow mutable immutable lifetime trait impl generic closure thread
lock mutex channel worker queue job task tasks schedule deploy release staging production
docker container image volume network port host socket connection database table column row
migration schema transaction rollback insert delete select where join group having count
memory leak allocation heap stack overflow slow fast performance benchmark profile latency
throughput cpu disk size bytes chars unicode utf encoding decode encode json yaml toml csv
parse serialize deserialize format print debug trace info level logger metrics counter gauge
unit integration coverage mock fixture snapshot assert expected actual left right equal
works broken flaky intermittent reproduce reproduced locally ci pipeline step steps job's
again here what why how does did done doing look looks looked see seems think probably maybe
sure right wrong good better best issue issues bug bugs fixed fixes fixing problem problems
refactor rename move split extract inline simplify remove removed added updated changed keep
api endpoint header headers body payload status code's exit signal process child parent
directory folder root home src lib tests docs readme changelog license cargo npm node rust
typescript python go java shell bash script command commands argument arguments flag flags`
  .split(/\s+/)
  .filter(Boolean);

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'xe', 'zu', 'bra', 'cli', 'dro', 'fen', 'gal',
  'hor', 'jun', 'kel', 'mor', 'nix', 'pra', 'qua', 'rin', 'sol', 'tar', 'ulm', 'vex', 'wor', 'yst', 'zan', 'ae',
  'bo', 'cy', 'di', 'fu', 'ga', 'he', 'io', 'ju', 'ky', 'lu', 'ma', 'no', 'pe', 'qi', 're', 'si', 'tu', 'ov', 'ex'];

/** Sampling by rank from a Zipf-like law over `n` items (P(r) ∝ 1/(r+q)^s). */
export class Zipf {
  constructor(n, s = 1.07, q = 2.7) {
    this.cdf = new Float64Array(n);
    let acc = 0;
    for (let r = 0; r < n; r++) { acc += 1 / Math.pow(r + q, s); this.cdf[r] = acc; }
    this.total = acc;
  }
  sample(rng) {
    const x = rng.next() * this.total;
    let lo = 0, hi = this.cdf.length - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (this.cdf[mid] < x) lo = mid + 1; else hi = mid; }
    return lo;
  }
}

function capitalize(w) { return w.charAt(0).toUpperCase() + w.slice(1); }

// Han characters common in technical Chinese; words are 2–4 of them.
const HAN = '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研质信速效影响需规则查询索引数据库内存泄漏并发分页错误编码测试修复函数返回输入输出文件目录配置服务器客户端用户会话令牌缓存日志性能优化部署发布版本提交分支合并';
const KATAKANA = 'アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワン';
const HIRAGANA = 'のをにはがでとてしたかもからまで';
const HANGUL_WORDS = ['데이터베이스', '검색', '기능', '추가', '수정', '테스트', '오류', '파일', '함수', '입력', '출력', '서버', '사용자', '세션', '로그', '성능', '배포', '버전', '빈', '패닉', '발생', '합니다', '했습니다', '있습니다', '고쳐', '주세요', '확인', '결과', '실패', '성공'];

export class Vocabulary {
  constructor() {
    // A fixed seed: the same words for every corpus, so query files stay valid.
    const r = new Rng('dsh-bench-vocabulary');
    this.common = new Zipf(COMMON.length, 1.0, 1.5);
    const seen = new Set(COMMON);
    this.rare = [];
    while (this.rare.length < 40_000) {
      const n = r.int(2, 4);
      let w = '';
      for (let i = 0; i < n; i++) w += r.pick(SYLLABLES);
      if (!seen.has(w)) { seen.add(w); this.rare.push(w); }
    }
    this.rareZipf = new Zipf(this.rare.length, 1.05, 10);
    // Identifiers: 2–3 word parts, snake_case, camelCase or PascalCase.
    this.idents = [];
    const idSeen = new Set();
    while (this.idents.length < 4000) {
      const parts = [];
      const n = r.int(2, 3);
      for (let i = 0; i < n; i++) parts.push(r.chance(0.7) ? COMMON[r.int(20, COMMON.length - 1)].replace(/'/g, '') : this.rare[r.int(0, 3000)]);
      const style = r.weighted([[5, 'snake'], [4, 'camel'], [2, 'pascal']]);
      const id = style === 'snake' ? parts.join('_') : style === 'camel' ? parts[0] + parts.slice(1).map(capitalize).join('') : parts.map(capitalize).join('');
      if (!idSeen.has(id)) { idSeen.add(id); this.idents.push(id); }
    }
    this.identZipf = new Zipf(this.idents.length, 1.0, 5);
    // Source files.
    this.files = [];
    const exts = ['rs', 'ts', 'tsx', 'py', 'go', 'md', 'toml', 'json', 'sql'];
    const dirs = ['src', 'src/index', 'src/db', 'lib', 'app/routes', 'pkg/queue', 'server', 'tests', 'docs', 'scripts'];
    for (let i = 0; i < 600; i++) this.files.push(`${r.pick(dirs)}/${this.idents[r.int(0, 1500)].toLowerCase()}.${r.pick(exts)}`);
    this.fileZipf = new Zipf(this.files.length, 1.0, 3);
    // Chinese words (2–4 Han characters) and Japanese katakana words.
    this.han = [];
    const hanSeen = new Set();
    while (this.han.length < 3000) {
      let w = '';
      const n = r.weighted([[6, 2], [3, 3], [2, 4]]);
      for (let i = 0; i < n; i++) w += HAN[r.int(0, HAN.length - 1)];
      if (!hanSeen.has(w)) { hanSeen.add(w); this.han.push(w); }
    }
    // A few real words at the top of the distribution.
    this.han.unshift('测试', '修复', '数据库', '内存泄漏', '分页错误', '函数', '文件', '配置', '性能优化', '搜索索引');
    this.hanZipf = new Zipf(this.han.length, 1.0, 2);
    this.kana = [];
    for (let i = 0; i < 800; i++) {
      let w = '';
      const n = r.int(2, 5);
      for (let k = 0; k < n; k++) w += KATAKANA[r.int(0, KATAKANA.length - 1)];
      this.kana.push(w);
    }
    this.kana.unshift('テスト', 'ファイル', 'エラー', 'サーバー', 'データベース');
    this.kanaZipf = new Zipf(this.kana.length, 1.0, 2);
  }

  word(r) {
    const x = r.next();
    if (x < 0.86) return COMMON[this.common.sample(r)];
    if (x < 0.96) return this.rare[this.rareZipf.sample(r)];
    return this.ident(r);
  }
  ident(r) { return this.idents[this.identZipf.sample(r)]; }
  file(r) { return this.files[this.fileZipf.sample(r)]; }

  sentence(r, min = 5, max = 18) {
    const n = r.int(min, max);
    const words = [];
    for (let i = 0; i < n; i++) {
      let w = this.word(r);
      if (r.chance(0.04)) w = `\`${this.ident(r)}\``;
      else if (r.chance(0.02)) w = this.file(r);
      words.push(w);
    }
    words[0] = capitalize(words[0]);
    return words.join(' ') + r.pick(['.', '.', '.', '?', ':', '!']);
  }
  paragraph(r, sentences) {
    const out = [];
    for (let i = 0; i < sentences; i++) out.push(this.sentence(r));
    return out.join(' ');
  }

  chinese(r, clauses) {
    const out = [];
    for (let i = 0; i < clauses; i++) {
      let clause = '';
      const n = r.int(1, 3);
      for (let k = 0; k < n; k++) clause += this.han[this.hanZipf.sample(r)];
      if (r.chance(0.15)) clause += ` \`${this.ident(r)}\` ` + this.han[this.hanZipf.sample(r)];
      out.push(clause);
      out.push(i === clauses - 1 ? '。' : r.pick(['，', '，', '、', '：', ' ']));
    }
    return out.join('');
  }
  japanese(r, clauses) {
    const out = [];
    for (let i = 0; i < clauses; i++) {
      out.push(this.kana[this.kanaZipf.sample(r)] + r.pick([...HIRAGANA]) + (r.chance(0.4) ? this.han[this.hanZipf.sample(r)] : ''));
      out.push(i === clauses - 1 ? '。' : r.pick(['、', '　', ' ']));
    }
    return out.join('');
  }
  korean(r, words) {
    const out = [];
    for (let i = 0; i < words; i++) out.push(r.pick(HANGUL_WORDS));
    return out.join(' ') + '.';
  }
  prose(r, lang, sentences) {
    switch (lang) {
      case 'zh': return this.chinese(r, sentences * 2);
      case 'ja': return this.japanese(r, sentences * 2);
      case 'ko': return this.korean(r, sentences * 6);
      default: return this.paragraph(r, sentences);
    }
  }

  codeLine(r) {
    const a = this.ident(r), b = this.ident(r), c = this.ident(r);
    return r.pick([
      () => `let ${a} = ${b}(&${c})?;`,
      () => `fn ${a}(${b}: &str) -> Result<${capitalize(c.replace(/_/g, ''))}, Error> {`,
      () => `    return Ok(${a});`,
      () => '}',
      () => `const ${a} = await ${b}.${c}(input);`,
      () => `import { ${a}, ${b} } from "./${c}";`,
      () => `def ${a}(self, ${b}):`,
      () => `    if not ${a}: raise ValueError("${this.sentence(r, 3, 6)}")`,
      () => `// ${this.sentence(r, 4, 10)}`,
      () => `# TODO: ${this.sentence(r, 3, 8)}`,
      () => `    ${a}.push(${b}.len() + ${r.int(0, 64)});`,
      () => `if err := ${a}(ctx, ${b}); err != nil { return err }`,
      () => `SELECT ${a}, ${b} FROM ${c} WHERE id = ?;`,
    ])();
  }
  code(r, lines) {
    const out = [];
    for (let i = 0; i < lines; i++) out.push(this.codeLine(r));
    return out.join('\n');
  }
}
