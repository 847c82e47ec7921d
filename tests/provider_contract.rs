//! One conformance suite for every search provider: each rule of spec 04 is a named function
//! taking a fresh engine, called once per backend.
#![cfg(not(target_arch = "wasm32"))]

use dsh_session_search::archive::{Input, LoadOptions};
use dsh_session_search::corpus::Corpus;
use dsh_session_search::error::ErrorCode;
use dsh_session_search::json::Json;
use dsh_session_search::search::engine::{ScanProvider, SearchEngine, SearchProvider};
use dsh_session_search::search::request::{SearchConfig, parse_event_request, parse_session_request};
use dsh_session_search::search::tokenizer::TokenizerMode;
use serde_json::{Value, json};

const T: i64 = 1_700_000_000_000;

fn user(seq: u64, time: i64, text: &str) -> Value {
    json!({"type":"user/message","seq":seq,"time":time,"data":{"id":format!("m{seq}"),"role":"user","content":[{"type":"text","text":text}],"source":{"kind":"user"}},"surfaceOp":"append"})
}

fn assistant(seq: u64, time: i64, text: &str) -> Value {
    json!({"type":"assistant/message","seq":seq,"time":time,"data":{"turn":1,"step":1,"message":{"id":format!("m{seq}"),"role":"assistant","content":[{"type":"reasoning","text":"parser parser parser"},{"type":"text","text":text}],"source":{"kind":"model","provider":"p","model":"m"}}},"surfaceOp":"append"})
}

fn boundary(seq: u64, time: i64, kind: &str, data: Value) -> Value {
    json!({"type":kind,"seq":seq,"time":time,"data":data})
}

fn log_text(header: Value, events: &[Value]) -> Vec<u8> {
    let mut text = header.to_string() + "\n";
    for event in events {
        text.push_str(&event.to_string());
        text.push('\n');
    }
    text.into_bytes()
}

fn to_json(value: &Value) -> Json {
    Json::parse(&value.to_string(), Default::default()).expect("json")
}

/// The corpus of spec 04 §13: `a1` live, `b2` loaded from storage.
fn worked_example() -> Corpus {
    let mut corpus = Corpus::new();
    let b2 = log_text(
        json!({"type":"session","version":0,"id":"b2","createdAt":T + 100_000,"cwd":"/home/dev/lib","delegationDepth":0}),
        &[
            boundary(0, T + 100_005, "turn/start", json!({"turn":1})),
            user(1, T + 100_010, "parser: rewrite the parser"),
            boundary(
                2,
                T + 100_020,
                "turn/end",
                json!({"turn":1,"reason":{"kind":"error","error":{"message":"parser timeout","code":"X"}}}),
            ),
        ],
    );
    let report = corpus
        .load(
            vec![Input::File {
                name: "b2.jsonl".into(),
                bytes: b2,
            }],
            &LoadOptions::default(),
        )
        .expect("loads");
    assert!(report.failures.is_empty(), "{report:?}");
    let a1_header = to_json(&json!({"version":0,"id":"a1","createdAt":T,"cwd":"/home/dev/app","delegationDepth":0}));
    let a1_events = vec![
        to_json(&boundary(0, T + 5, "turn/start", json!({"turn":1}))),
        to_json(&user(1, T + 10, "Why does the Parser crash on empty input?")),
        to_json(&boundary(2, T + 15, "step/start", json!({"turn":1,"step":1}))),
        to_json(&boundary(
            3,
            T + 16,
            "assistant/chunk",
            json!({"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"parser"}}),
        )),
        to_json(&assistant(
            4,
            T + 20,
            "The parser crashes because the lexer returns no tokens.",
        )),
    ];
    corpus.add_live(&a1_header, a1_events).expect("live session");
    corpus
}

fn config() -> SearchConfig {
    SearchConfig {
        snippet_chars: 20,
        ..SearchConfig::default()
    }
}

fn sessions<P: SearchProvider>(
    engine: &mut SearchEngine<P>,
    corpus: &Corpus,
    request: Value,
) -> Result<Value, ErrorCode> {
    let request = parse_session_request(&to_json(&request), engine.config()).map_err(|e| e.code)?;
    let page = engine.search_sessions(corpus, &request).map_err(|e| e.code)?;
    Ok(serde_json::from_str(&serde_json::to_string(&page).expect("serializes")).expect("json"))
}

fn events<P: SearchProvider>(
    engine: &mut SearchEngine<P>,
    corpus: &Corpus,
    request: Value,
) -> Result<Value, ErrorCode> {
    let request = parse_event_request(&to_json(&request), engine.config()).map_err(|e| e.code)?;
    let page = engine.search_events(corpus, &request).map_err(|e| e.code)?;
    Ok(serde_json::from_str(&serde_json::to_string(&page).expect("serializes")).expect("json"))
}

fn ids(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|h| h["header"]["id"].as_str().expect("id").to_owned())
        .collect()
}

fn worked_example_ranks_and_snippets<P: SearchProvider>(mut engine: SearchEngine<P>) {
    let corpus = worked_example();
    let page = sessions(&mut engine, &corpus, json!({"query":"parser"})).expect("searches");
    assert_eq!(ids(&page), ["b2", "a1"]);
    assert_eq!(page["items"][0]["bestMatch"]["snippet"], "parser: rewrite the…");
    assert_eq!(page["items"][0]["bestMatch"]["seq"], 1);
    assert_eq!(page["items"][0]["live"], false);
    assert_eq!(page["items"][1]["bestMatch"]["snippet"], "…s the Parser crash…");
    assert_eq!(page["items"][1]["live"], true);
    assert!(page.get("nextCursor").is_none());
    let crash = sessions(&mut engine, &corpus, json!({"query":"crash"})).expect("searches");
    assert_eq!(crash["items"][0]["bestMatch"]["snippet"], "…arser crash on emp…");
    for query in ["PARSER-CRASH", "parser crash"] {
        let page = sessions(&mut engine, &corpus, json!({ "query": query })).expect("searches");
        assert_eq!(ids(&page), ["a1"], "{query}");
    }
    let log_only = sessions(
        &mut engine,
        &corpus,
        json!({"query":"parser","eventFilters":[{"kind":"surface","values":["log-only"]}]}),
    )
    .expect("ok");
    assert_eq!(ids(&log_only), ["b2"]);
    assert_eq!(log_only["items"][0]["bestMatch"]["seq"], 2);
    let live = sessions(
        &mut engine,
        &corpus,
        json!({"query":"parser","sessionFilters":[{"kind":"availability","values":["live"]}]}),
    )
    .expect("ok");
    assert_eq!(ids(&live), ["a1"]);
    let within = events(&mut engine, &corpus, json!({"sessionId":"b2","query":"parser"})).expect("ok");
    let seqs: Vec<u64> = within["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|h| h["seq"].as_u64().expect("seq"))
        .collect();
    assert_eq!(seqs, [1, 2]);
    assert_eq!(within["items"][1]["snippet"], "error parser timeout");
    assert_eq!(within["session"]["id"], "b2");
}

fn cursors_page_and_go_stale<P: SearchProvider>(mut engine: SearchEngine<P>) {
    let mut corpus = worked_example();
    let first = sessions(&mut engine, &corpus, json!({"query":"parser","limit":1})).expect("first page");
    assert_eq!(ids(&first), ["b2"]);
    let cursor = first["nextCursor"].as_str().expect("a next cursor").to_owned();
    let second = sessions(
        &mut engine,
        &corpus,
        json!({"query":"parser","limit":1,"cursor":cursor}),
    )
    .expect("second page");
    assert_eq!(ids(&second), ["a1"]);
    assert!(second.get("nextCursor").is_none());
    // Another request cannot use it.
    let other = sessions(
        &mut engine,
        &corpus,
        json!({"query":"parser","limit":2,"cursor":cursor}),
    );
    assert_eq!(other.err(), Some(ErrorCode::QueryInvalidCursor));
    let garbage = sessions(&mut engine, &corpus, json!({"query":"parser","limit":1,"cursor":"%%%"}));
    assert_eq!(garbage.err(), Some(ErrorCode::QueryInvalidCursor));
    // A within-session cursor on b2 survives a change to a1; the cross-session one does not.
    let within = events(
        &mut engine,
        &corpus,
        json!({"sessionId":"b2","query":"parser","limit":1}),
    )
    .expect("ok");
    let within_cursor = within["nextCursor"].as_str().expect("cursor").to_owned();
    let turn_end = to_json(&boundary(5, T + 30, "step/end", json!({"turn":1,"step":1})));
    corpus.append_live("a1", vec![turn_end]).expect("appends");
    let stale = sessions(
        &mut engine,
        &corpus,
        json!({"query":"parser","limit":1,"cursor":cursor}),
    );
    assert_eq!(stale.err(), Some(ErrorCode::QueryStaleCursor));
    let survived = events(
        &mut engine,
        &corpus,
        json!({"sessionId":"b2","query":"parser","limit":1,"cursor":within_cursor}),
    );
    assert_eq!(survived.expect("still valid")["items"][0]["seq"], 2);
}

fn phrase_rules<P: SearchProvider>(mut engine: SearchEngine<P>) {
    let corpus = worked_example();
    let none = sessions(&mut engine, &corpus, json!({"query":"!!! *"})).expect("a query without tokens is valid");
    assert_eq!(none, json!({"items": []}));
    let missing = events(&mut engine, &corpus, json!({"sessionId":"zz","query":"parser"}));
    assert_eq!(missing.err(), Some(ErrorCode::QuerySessionNotFound));
    let reasoning = events(&mut engine, &corpus, json!({"sessionId":"a1","query":"parser parser"})).expect("ok");
    assert_eq!(reasoning["items"], json!([]), "reasoning is never indexed");
}

macro_rules! conformance {
    ($module:ident, $engine:expr) => {
        mod $module {
            use super::*;
            #[test]
            fn worked_example_ranks_and_snippets() {
                super::worked_example_ranks_and_snippets($engine);
            }
            #[test]
            fn cursors_page_and_go_stale() {
                super::cursors_page_and_go_stale($engine);
            }
            #[test]
            fn phrase_rules() {
                super::phrase_rules($engine);
            }
        }
    };
}

conformance!(
    scan_backend,
    SearchEngine::new(
        ScanProvider::new(TokenizerMode::Unicode61),
        config(),
        TokenizerMode::Unicode61
    )
);
conformance!(
    tantivy_backend,
    SearchEngine::new(
        dsh_session_search::search::tantivy::TantivyProvider::new(TokenizerMode::Unicode61),
        config(),
        TokenizerMode::Unicode61
    )
);
