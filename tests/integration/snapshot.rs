//! Index snapshots: a built tantivy index exported as bytes reopens over the same corpus with
//! identical results and no re-indexing, and is refused for another corpus, version or format.

use dsh_session_search::archive::{Input, LoadOptions};
use dsh_session_search::corpus::Corpus;
use dsh_session_search::error::ErrorCode;
use dsh_session_search::json::Json;
use dsh_session_search::search::engine::SearchEngine;
use dsh_session_search::search::request::{SearchConfig, parse_session_request};
use dsh_session_search::search::snapshot::CHECKSUM_SEED;
use dsh_session_search::search::tantivy::TantivyProvider;
use dsh_session_search::search::tokenizer::TokenizerMode;

fn corpus() -> Corpus {
    let mut corpus = Corpus::new();
    let inputs = vec![
        Input::File {
            name: "a.jsonl".into(),
            bytes: include_bytes!("../fixtures/spec/replacement_of_replacement.jsonl").to_vec(),
        },
        Input::File {
            name: "b.jsonl".into(),
            bytes: include_bytes!("../fixtures/spec/tool_result_pruned.jsonl").to_vec(),
        },
    ];
    corpus.load(inputs, &LoadOptions::default()).expect("loads");
    corpus
}

fn page(engine: &mut SearchEngine<TantivyProvider>, corpus: &Corpus, query: &str) -> String {
    let request = Json::parse(&format!(r#"{{"query":"{query}"}}"#), Default::default()).expect("json");
    let request = parse_session_request(&request, &SearchConfig::default()).expect("valid");
    serde_json::to_string(&engine.search_sessions(corpus, &request).expect("searches")).expect("json")
}

fn empty_engine() -> SearchEngine<TantivyProvider> {
    let mode = TokenizerMode::Unicode61;
    SearchEngine::new(TantivyProvider::new(mode), SearchConfig::default(), mode)
}

fn built() -> (Corpus, SearchEngine<TantivyProvider>, Vec<u8>) {
    let corpus = corpus();
    let mut engine = empty_engine();
    let bytes = engine.export_snapshot(&corpus).expect("exports");
    (corpus, engine, bytes)
}

/// Reopens `bytes` over `corpus`, checks that nothing is left to re-index and that each of
/// `queries` answers as `engine` (the index the snapshot was taken from) does; returns the
/// reopened engine.
fn assert_reopens_as(
    engine: &mut SearchEngine<TantivyProvider>,
    corpus: &Corpus,
    bytes: &[u8],
    queries: &[&str],
) -> SearchEngine<TantivyProvider> {
    let mut reopened =
        SearchEngine::<TantivyProvider>::import_snapshot(bytes, corpus, SearchConfig::default()).expect("reopens");
    assert_eq!(
        reopened.reconcile(corpus).expect("reconciles"),
        0,
        "nothing to re-index"
    );
    for query in queries {
        assert_eq!(
            page(&mut reopened, corpus, query),
            page(engine, corpus, query),
            "{query}"
        );
    }
    reopened
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn a_snapshot_reopens_with_identical_results_and_no_reindexing() {
    let (corpus, mut engine, bytes) = built();
    assert_reopens_as(
        &mut engine,
        &corpus,
        &bytes,
        &["summary", "summary of summary", "pruned", "run it", "x"],
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn a_snapshot_of_another_corpus_is_refused() {
    let (_, _, bytes) = built();
    let mut other = corpus();
    let header = Json::parse(
        r#"{"version":0,"id":"extra","createdAt":1,"delegationDepth":0}"#,
        Default::default(),
    )
    .expect("json");
    other.add_live(&header, Vec::new()).expect("adds");
    let refused = SearchEngine::<TantivyProvider>::import_snapshot(&bytes, &other, SearchConfig::default())
        .err()
        .expect("refused");
    assert_eq!(refused.code, ErrorCode::QueryIndexFailed);
    assert!(refused.message.contains("extra"), "{}", refused.message);
    let mut fewer = Corpus::new();
    let input = Input::File {
        name: "b.jsonl".into(),
        bytes: include_bytes!("../fixtures/spec/tool_result_pruned.jsonl").to_vec(),
    };
    fewer.load(vec![input], &LoadOptions::default()).expect("loads");
    assert!(SearchEngine::<TantivyProvider>::import_snapshot(&bytes, &fewer, SearchConfig::default()).is_err());
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn damaged_or_foreign_snapshots_are_refused() {
    let (corpus, _, bytes) = built();
    let import = |bytes: &[u8]| {
        SearchEngine::<TantivyProvider>::import_snapshot(bytes, &corpus, SearchConfig::default())
            .err()
            .map(|e| e.code)
    };
    assert_eq!(
        import(&bytes[..bytes.len() / 2]),
        Some(ErrorCode::QueryIndexFailed),
        "truncated"
    );
    assert_eq!(import(b"not a snapshot at all"), Some(ErrorCode::QueryIndexFailed));
    let version = format!("\"crate\":\"{}\"", env!("CARGO_PKG_VERSION"));
    let found = bytes
        .windows(version.len())
        .position(|w| w == version.as_bytes())
        .expect("version in the manifest");
    let mut foreign = bytes.clone();
    let at = found + version.len() - 2;
    foreign[at] = if foreign[at] == b'9' { b'8' } else { b'9' };
    let refused = SearchEngine::<TantivyProvider>::import_snapshot(&foreign, &corpus, SearchConfig::default())
        .err()
        .expect("refused");
    assert!(
        refused.message.contains("checksum"),
        "an edit breaks the seal: {}",
        refused.message
    );
    // Sealed again, as another version would have written it: refused for its version.
    let body = 6 + 1 + 8;
    let checksum = twox_hash::XxHash64::oneshot(CHECKSUM_SEED, &foreign[body..]);
    foreign[7..body].copy_from_slice(&checksum.to_le_bytes());
    let refused = SearchEngine::<TantivyProvider>::import_snapshot(&foreign, &corpus, SearchConfig::default())
        .err()
        .expect("refused");
    assert!(refused.message.contains("version"), "{}", refused.message);
}

/// Any byte of a snapshot changed, or the snapshot cut anywhere, is refused before tantivy reads
/// it (tantivy's readers trust their files: a damaged segment could abort the process).
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn every_changed_or_cut_snapshot_is_refused() {
    let (corpus, _, bytes) = built();
    let refused = |bytes: &[u8]| {
        SearchEngine::<TantivyProvider>::import_snapshot(bytes, &corpus, SearchConfig::default())
            .err()
            .map(|e| e.code)
            == Some(ErrorCode::QueryIndexFailed)
    };
    for at in (0..bytes.len()).step_by(bytes.len() / 97 + 1) {
        let mut changed = bytes.clone();
        changed[at] ^= 0x5a;
        assert!(refused(&changed), "a change at byte {at} of {}", bytes.len());
        assert!(refused(&bytes[..at]), "cut at byte {at}");
    }
}

fn live_header() -> Json {
    Json::parse(
        r#"{"version":0,"id":"live","createdAt":1,"cwd":"/w","delegationDepth":0}"#,
        Default::default(),
    )
    .expect("json")
}

fn user_message(seq: u64, text: &str) -> Json {
    let event = format!(
        r#"{{"type":"user/message","seq":{seq},"time":{seq},"surfaceOp":"append","data":{{"id":"m{seq}","role":"user","content":[{{"type":"text","text":"{text}"}}],"source":{{"kind":"user"}}}}}}"#
    );
    Json::parse(&event, Default::default()).expect("json")
}

/// `corpus` with its live session "live" (replaced if it has one) holding one message.
fn with_live(mut corpus: Corpus, text: &str) -> Corpus {
    corpus.remove_live("live");
    corpus
        .add_live(&live_header(), vec![user_message(0, text)])
        .expect("adds");
    corpus
}

/// The snapshot holds no text of its own, so a session whose text changed while its shape
/// (header, event count, types, times) stayed is told apart by its content fingerprint.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn a_session_whose_text_changed_is_refused_and_the_snapshot_holds_no_text() {
    let corpus = with_live(corpus(), "walrus before the storm");
    let bytes = empty_engine().export_snapshot(&corpus).expect("exports");
    let phrase = b"walrus before the storm";
    assert!(
        !bytes.windows(phrase.len()).any(|w| w == phrase),
        "the document text is the corpus's, not the snapshot's"
    );
    SearchEngine::<TantivyProvider>::import_snapshot(&bytes, &corpus, SearchConfig::default()).expect("reopens");
    let corpus = with_live(corpus, "walrus after the storm");
    let refused = SearchEngine::<TantivyProvider>::import_snapshot(&bytes, &corpus, SearchConfig::default())
        .err()
        .expect("refused");
    assert_eq!(refused.code, ErrorCode::QueryIndexFailed);
    assert!(
        refused.message.contains("\"live\" changed since it was indexed"),
        "{}",
        refused.message
    );
}

/// A live session indexed, then grown and searched again (its new events added in place),
/// reopens from a snapshot with the same answers and nothing to re-index.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn a_session_that_grew_after_indexing_reopens_with_identical_results() {
    let mut corpus = with_live(corpus(), "walrus one");
    let mut engine = empty_engine();
    assert!(page(&mut engine, &corpus, "walrus").contains("\"live\""));
    corpus
        .append_live(
            "live",
            vec![user_message(1, "walrus two"), user_message(2, "narwhal three")],
        )
        .expect("appends");
    assert!(page(&mut engine, &corpus, "narwhal").contains("\"live\""));
    let bytes = engine.export_snapshot(&corpus).expect("exports");
    assert_reopens_as(
        &mut engine,
        &corpus,
        &bytes,
        &["walrus", "walrus two", "narwhal", "one", "summary", "pruned"],
    );
}

/// A live session replaced after indexing leaves its old documents in the segments under ids
/// no session holds; the snapshot numbers its documents afresh, and the old ones stay out.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn documents_replaced_before_the_export_stay_out_after_a_reopen() {
    let corpus = with_live(corpus(), "walrus before");
    let mut engine = empty_engine();
    assert!(page(&mut engine, &corpus, "walrus").contains("\"live\""));
    let corpus = with_live(corpus, "narwhal after");
    let bytes = engine.export_snapshot(&corpus).expect("exports");
    let mut reopened = assert_reopens_as(
        &mut engine,
        &corpus,
        &bytes,
        &["walrus", "narwhal", "summary", "pruned"],
    );
    assert!(
        !page(&mut reopened, &corpus, "walrus").contains("\"live\""),
        "the replaced text"
    );
    assert!(page(&mut reopened, &corpus, "narwhal").contains("\"live\""));
}
