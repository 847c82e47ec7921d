//! WebAssembly tests (run under Node by `make test-wasm`): a zstd persistence root loads through
//! the JavaScript-facing API and every event carries DSH's surface label.
#![cfg(target_arch = "wasm32")]

use dsh_session_search::wasm::SessionSearch;
use js_sys::Uint8Array;
use ruzstd::encoding::{CompressionLevel, compress_to_vec};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::wasm_bindgen_test;

/// The spec's compaction example (02 §7.2), written as DSH writes zstd logs: the header in its
/// own frame, then one frame per durable batch.
fn compacted_zstd_log() -> Vec<u8> {
    let fixture = include_str!("fixtures/spec/compaction_shadows_prefix.jsonl");
    let mut lines = fixture.lines();
    let mut out = compress_to_vec(
        format!("{}\n", lines.next().expect("header")).as_bytes(),
        CompressionLevel::Fastest,
    );
    let rest: Vec<&str> = lines.collect();
    for batch in rest.chunks(3) {
        let text: String = batch.iter().map(|l| format!("{l}\n")).collect();
        out.extend(compress_to_vec(text.as_bytes(), CompressionLevel::Fastest));
    }
    out
}

fn labels(json: &str) -> Vec<String> {
    let records: serde_json::Value = serde_json::from_str(json).expect("listEvents returns JSON");
    records
        .as_array()
        .expect("array")
        .iter()
        .map(|r| format!("{}:{}", r["seq"], r["surface"].as_str().expect("label")))
        .collect()
}

#[wasm_bindgen_test]
fn zstd_root_loads_with_dsh_labels() {
    let mut search = SessionSearch::new();
    let paths = vec!["--home-dev-app--/s-7-2/session.jsonl.zstd".to_owned()];
    let contents = vec![Uint8Array::from(compacted_zstd_log().as_slice())];
    let report: serde_json::Value = serde_json::from_str(
        &search
            .load_entries("root".into(), paths, contents, false)
            .expect("loads"),
    )
    .expect("report");
    assert_eq!(report["failures"].as_array().map(Vec::len), Some(0), "{report}");
    let events = search.list_events("s-7-2").expect("listed");
    assert_eq!(
        labels(&events),
        [
            "0:shadowed",
            "1:shadowed",
            "2:current",
            "3:current",
            "4:log-only",
            "5:log-only",
            "6:current",
            "7:log-only",
            "8:current"
        ]
    );
    let surface: serde_json::Value =
        serde_json::from_str(&search.read_surface("s-7-2").expect("surface")).expect("json");
    let order: Vec<u64> = surface["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["seq"].as_u64().expect("seq"))
        .collect();
    assert_eq!(order, [6, 2, 3, 8]);
    assert_eq!(surface["capturedThroughSeq"], 8);
}

#[wasm_bindgen_test]
fn errors_reach_javascript_with_their_code() {
    let mut search = SessionSearch::new();
    let error = search.list_events("missing").expect_err("no such session");
    let code = js_sys::Reflect::get(&error, &"code".into()).expect("code property");
    assert_eq!(code.as_string().as_deref(), Some("SESSION_QUERY_SESSION_NOT_FOUND"));
    assert!(error.dyn_ref::<js_sys::Error>().is_some());
}

#[wasm_bindgen_test]
fn search_and_references_answer_through_the_javascript_face() {
    let mut search = SessionSearch::new();
    let bytes = include_bytes!("fixtures/spec/replacement_of_replacement.jsonl").to_vec();
    search.load_file("s.jsonl".into(), bytes, false).expect("loads");
    let page: serde_json::Value =
        serde_json::from_str(&search.search_sessions(r#"{"query":"summary"}"#).expect("searches")).expect("json");
    assert_eq!(page["items"][0]["bestMatch"]["seq"], 11);
    let error = search
        .search_events(r#"{"sessionId":"s-7-3","query":"  "}"#)
        .expect_err("blank query");
    let code = js_sys::Reflect::get(&error, &"code".into()).expect("code property");
    assert_eq!(code.as_string().as_deref(), Some("SESSION_QUERY_INVALID_QUERY"));
    let uri: String = serde_json::from_str(
        &search
            .call("encodeSessionReferenceUri", r#"["s-7-3"]"#)
            .expect("encodes"),
    )
    .expect("json");
    assert!(uri.starts_with("dsh-session:"), "{uri}");
}

#[wasm_bindgen_test]
fn tantivy_search_runs_in_wasm() {
    use dsh_session_search::archive::{Input, LoadOptions};
    use dsh_session_search::corpus::Corpus;
    use dsh_session_search::json::Json;
    use dsh_session_search::search::engine::SearchEngine;
    use dsh_session_search::search::request::{SearchConfig, parse_event_request, parse_session_request};
    use dsh_session_search::search::tantivy::TantivyProvider;
    use dsh_session_search::search::tokenizer::TokenizerMode;
    let mut corpus = Corpus::new();
    let bytes = include_bytes!("fixtures/spec/replacement_of_replacement.jsonl").to_vec();
    corpus
        .load(
            vec![Input::File {
                name: "s.jsonl".into(),
                bytes,
            }],
            &LoadOptions::default(),
        )
        .expect("loads");
    let mode = TokenizerMode::Unicode61;
    let mut engine = SearchEngine::new(TantivyProvider::new(mode), SearchConfig::default(), mode);
    let request = |text: &str| Json::parse(text, Default::default()).expect("json");
    let config = SearchConfig::default();
    let page = engine
        .search_sessions(
            &corpus,
            &parse_session_request(&request(r#"{"query":"SUMMARY"}"#), &config).expect("valid"),
        )
        .expect("searches");
    assert_eq!(page.items.len(), 1);
    // "summary of summary" (seq 11) has two spans and outranks "summary" (seq 6).
    assert_eq!(page.items[0].best_match.record.seq, 11);
    let events = engine
        .search_events(
            &corpus,
            &parse_event_request(
                &request(r#"{"sessionId":"s-7-3","query":"summary","limit":1}"#),
                &config,
            )
            .expect("valid"),
        )
        .expect("searches");
    assert_eq!(events.items[0].record.seq, 11);
    assert!(events.next_cursor.is_some());
}

#[wasm_bindgen_test]
fn an_exported_index_reopens_in_a_new_instance() {
    let bytes = include_bytes!("fixtures/spec/replacement_of_replacement.jsonl").to_vec();
    let mut first = SessionSearch::new();
    first.load_file("s.jsonl".into(), bytes.clone(), false).expect("loads");
    let expected = first.search_sessions(r#"{"query":"summary"}"#).expect("searches");
    let snapshot = first.export_index().expect("exports");
    let mut second = SessionSearch::new();
    second.load_file("s.jsonl".into(), bytes, false).expect("loads");
    second.import_index(snapshot.clone()).expect("reopens");
    assert_eq!(
        second.search_sessions(r#"{"query":"summary"}"#).expect("searches"),
        expected
    );
    let mut other = SessionSearch::new();
    let error = other.import_index(snapshot).expect_err("another corpus");
    let code = js_sys::Reflect::get(&error, &"code".into()).expect("code property");
    assert_eq!(code.as_string().as_deref(), Some("SESSION_QUERY_INDEX_FAILED"));
}

#[wasm_bindgen_test]
fn an_aborted_signal_cancels_prepare() {
    let mut search = SessionSearch::new();
    search
        .load_file(
            "a.jsonl".into(),
            include_bytes!("fixtures/spec/plain_appends.jsonl").to_vec(),
            false,
        )
        .expect("loads");
    search
        .load_file(
            "b.jsonl".into(),
            include_bytes!("fixtures/spec/compaction_shadows_prefix.jsonl").to_vec(),
            false,
        )
        .expect("loads");
    let params = r#"[{"id":"s-7-1"},[{"type":"text","text":"continue"}],[{"sessionId":"s-7-2"}]]"#;
    let prepared: serde_json::Value = serde_json::from_str(
        &search
            .prepare(params, wasm_bindgen::JsValue::UNDEFINED)
            .expect("prepares"),
    )
    .expect("json");
    assert!(
        prepared["messages"].as_array().is_some_and(|m| m.len() == 2),
        "{prepared}"
    );
    let signal = js_sys::Object::new();
    js_sys::Reflect::set(&signal, &"aborted".into(), &true.into()).expect("set");
    let error = search.prepare(params, signal.into()).expect_err("cancelled");
    let code = js_sys::Reflect::get(&error, &"code".into()).expect("code property");
    assert_eq!(code.as_string().as_deref(), Some("SESSION_REFERENCE_CANCELLED"));
}
