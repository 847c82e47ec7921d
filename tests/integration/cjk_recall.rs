//! The optional `cjk` tokenizer mode: recall on CJK / Thai substring queries, measured against
//! the literal text scan as ground truth, must be at least 0.99; the default mode keeps
//! `unicode61`'s (DSH's) behaviour, where such substrings are not found.
#![cfg(not(target_arch = "wasm32"))]

use dsh_session_search::corpus::Corpus;
use dsh_session_search::filters::EventFilter;
use dsh_session_search::json::Json;
use dsh_session_search::search::engine::SearchEngine;
use dsh_session_search::search::request::{SearchConfig, parse_event_request};
use dsh_session_search::search::tantivy::TantivyProvider;
use dsh_session_search::search::tokenizer::TokenizerMode;
use std::collections::BTreeSet;

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SCRIPTS: [&str; 5] = [
    "数据库我喜欢的文件搜索引擎中文测试用例系统设计说明编码解析器错误修复页面分支合并",
    "ひらがなとカタカナのテキストをけんさくするデータベース",
    "한국어데이터베이스검색엔진테스트",
    "ภาษาไทยค้นหาข้อความ",
    "東京タワー日本語版の設定画面",
];

fn run(rng: &mut Rng) -> String {
    let script: Vec<char> = SCRIPTS[rng.below(SCRIPTS.len())].chars().collect();
    (0..2 + rng.below(10))
        .map(|_| script[rng.below(script.len())])
        .collect()
}

fn document(rng: &mut Rng) -> String {
    let separators = [" ", "，", "。", " and ", "\n", "、"];
    let mut text = String::new();
    for i in 0..1 + rng.below(4) {
        if i > 0 {
            text.push_str(separators[rng.below(separators.len())]);
        }
        text.push_str(&run(rng));
    }
    text
}

fn corpus(texts: &[String]) -> Corpus {
    let mut corpus = Corpus::new();
    let header = Json::parse(
        r#"{"version":0,"id":"cjk","createdAt":1,"delegationDepth":0}"#,
        Default::default(),
    )
    .expect("json");
    let events = texts
        .iter()
        .enumerate()
        .map(|(seq, text)| {
            let event = serde_json::json!({"type":"user/message","seq":seq,"time":seq,"data":{"id":format!("m{seq}"),"role":"user","content":[{"type":"text","text":text}],"source":{"kind":"user"}},"surfaceOp":"append"});
            Json::parse(&event.to_string(), Default::default()).expect("json")
        })
        .collect();
    corpus.add_live(&header, events).expect("valid session");
    corpus
}

/// Recall of `mode` over random substring queries, against the literal scan.
fn recall(mode: TokenizerMode) -> f64 {
    let mut rng = Rng(0x5EED_CAFE);
    let texts: Vec<String> = (0..400).map(|_| document(&mut rng)).collect();
    let corpus = corpus(&texts);
    let config = SearchConfig::default();
    let mut engine = SearchEngine::new(TantivyProvider::new(mode), config, mode);
    let (mut expected, mut found) = (0usize, 0usize);
    for _ in 0..150 {
        // A substring of 2–5 characters of some document's run.
        let text: Vec<char> = texts[rng.below(texts.len())].chars().collect();
        let start = rng.below(text.len());
        let run_end = text[start..]
            .iter()
            .position(|c| !c.is_alphabetic() || c.is_ascii())
            .map_or(text.len(), |p| start + p);
        if run_end - start < 2 {
            continue;
        }
        let len = 2 + rng.below((run_end - start - 1).min(4));
        let query: String = text[start..start + len].iter().collect();
        let truth: BTreeSet<u64> = corpus
            .filter_events("cjk", &[EventFilter::Text(query.clone())])
            .expect("scan")
            .iter()
            .map(|d| d.record.seq)
            .collect();
        let mut hits = BTreeSet::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut request = serde_json::json!({"sessionId":"cjk","query":query,"limit":100});
            if let Some(c) = &cursor {
                request["cursor"] = serde_json::json!(c);
            }
            let request = parse_event_request(
                &Json::parse(&request.to_string(), Default::default()).expect("json"),
                &config,
            )
            .expect("valid");
            let page = engine.search_events(&corpus, &request).expect("searches");
            hits.extend(page.items.iter().map(|h| h.record.seq));
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        expected += truth.len();
        found += truth.intersection(&hits).count();
    }
    assert!(
        expected > 200,
        "the generator must produce real ground truth ({expected})"
    );
    found as f64 / expected as f64
}

#[test]
fn cjk_mode_finds_substrings_of_unsegmented_runs() {
    let recall = recall(TokenizerMode::Cjk);
    eprintln!("cjk recall against the literal scan: {recall:.4}");
    assert!(recall >= 0.99, "cjk recall {recall:.4} is below 0.99");
}

#[test]
fn default_mode_keeps_unicode61_recall() {
    // unicode61 keeps a run as one token, so most substrings are (correctly, like DSH) missed.
    let recall = recall(TokenizerMode::Unicode61);
    eprintln!("unicode61 recall against the literal scan: {recall:.4}");
    assert!(recall < 0.5, "unicode61 must not segment CJK runs (recall {recall:.4})");
}
