//! One conformance suite for every search provider: each rule of DSH's search is a named function
//! taking a fresh engine, called once per backend. Runs natively and, for the backends wasm
//! has, under Node (`make test-wasm`).

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

/// DSH's search example corpus: `a1` live, `b2` loaded from storage.
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
    assert!(
        within["items"][0].get("highlights").is_none(),
        "DSH's hit shape unless asked"
    );
    let marked = events(
        &mut engine,
        &corpus,
        json!({"sessionId":"b2","query":"parser","highlights":true}),
    )
    .expect("ok");
    assert_eq!(marked["items"][0]["highlights"], json!([{"start":0,"end":6}]));
    assert_eq!(marked["items"][1]["highlights"], json!([{"start":6,"end":12}]));
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

/// A corpus of loaded sessions, each `(id, createdAt, [(time, text)])`, events as user messages.
/// `(id, createdAt, [(time, text)])`.
type SessionSpec<'a> = (&'a str, i64, &'a [(i64, &'a str)]);

fn corpus_of(sessions: &[SessionSpec<'_>]) -> Corpus {
    let inputs = sessions
        .iter()
        .map(|(id, created, texts)| {
            let header = json!({"type":"session","version":0,"id":id,"createdAt":created,"delegationDepth":0});
            let events: Vec<Value> = texts
                .iter()
                .enumerate()
                .map(|(i, (time, text))| user(i as u64, *time, text))
                .collect();
            Input::File {
                name: format!("{id}.jsonl"),
                bytes: log_text(header, &events),
            }
        })
        .collect();
    let mut corpus = Corpus::new();
    let report = corpus.load(inputs, &LoadOptions::default()).expect("loads");
    assert!(report.failures.is_empty(), "{report:?}");
    corpus
}

fn hit_keys(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|h| {
            let hit = if h.get("bestMatch").is_some() {
                &h["bestMatch"]
            } else {
                h
            };
            format!("{}#{}", hit["sessionId"].as_str().expect("id"), hit["seq"])
        })
        .collect()
}

fn ranking_ties_follow_count_length_time_id_seq<P: SearchProvider>(mut engine: SearchEngine<P>) {
    let corpus = corpus_of(&[
        (
            "b",
            T,
            &[
                (T + 5, "needle here"),
                (T + 5, "needle here"),
                (T + 9, "needle needle"),
                (T + 1, "a needle"),
            ],
        ),
        ("a", T, &[(T + 5, "needle here")]),
        ("c", T, &[(T + 7, "needle, longer text")]),
    ]);
    let within = events(&mut engine, &corpus, json!({"sessionId":"b","query":"needle"})).expect("ok");
    // Two spans first; then shorter; then newer; equal texts and times: higher seq first.
    assert_eq!(hit_keys(&within), ["b#2", "b#3", "b#1", "b#0"]);
    let across = sessions(&mut engine, &corpus, json!({"query":"needle"})).expect("ok");
    // b's best has two spans; a ties c on count, is shorter; session id breaks exact ties.
    assert_eq!(hit_keys(&across), ["b#2", "a#0", "c#0"]);
    let ties = corpus_of(&[("y", T, &[(T, "needle one")]), ("x", T, &[(T, "needle two")])]);
    assert_eq!(
        hit_keys(&sessions(&mut engine, &ties, json!({"query":"needle"})).expect("ok")),
        ["x#0", "y#0"]
    );
}

fn merged_spans_count_overlaps_once<P: SearchProvider>(mut engine: SearchEngine<P>) {
    let corpus = corpus_of(&[(
        "s",
        T,
        &[
            (T + 1, "a a a"),
            (T + 2, "x y x y"),
            (T + 3, "one two three two three"),
            (T + 4, "a a"),
        ],
    )]);
    // `a a` in `a a a` is one span (overlapping) and ties with `a a` (shorter wins).
    let page = events(&mut engine, &corpus, json!({"sessionId":"s","query":"a a"})).expect("ok");
    assert_eq!(hit_keys(&page), ["s#3", "s#0"]);
    let page = events(
        &mut engine,
        &corpus,
        json!({"sessionId":"s","query":"x y","highlights":true}),
    )
    .expect("ok");
    assert_eq!(
        page["items"][0]["highlights"].as_array().map(Vec::len),
        Some(2),
        "adjacent spans stay separate"
    );
    let page = events(
        &mut engine,
        &corpus,
        json!({"sessionId":"s","query":"two three","highlights":true}),
    )
    .expect("ok");
    // The snippet (20 code points here) shows the second span only partly: it is clipped.
    assert_eq!(page["items"][0]["snippet"], "one two three two t…");
    assert_eq!(
        page["items"][0]["highlights"],
        json!([{"start":4,"end":13},{"start":14,"end":19}])
    );
}

fn snippets_cut_at_both_ends_by_code_points<P: SearchProvider>(mut engine: SearchEngine<P>) {
    let long_tail = format!("needle {}", "word ".repeat(80));
    let long_head = format!("{}needle", "word ".repeat(80));
    let astral = format!("{}needle", "😀 ".repeat(20));
    let corpus = corpus_of(&[("s", T, &[(T + 1, &long_tail), (T + 2, &long_head), (T + 3, &astral)])]);
    let engine_config = engine.config().snippet_chars;
    let page = events(&mut engine, &corpus, json!({"sessionId":"s","query":"needle"})).expect("ok");
    let snippet = |seq: u64| {
        page["items"]
            .as_array()
            .expect("items")
            .iter()
            .find(|h| h["seq"] == seq)
            .expect("hit")["snippet"]
            .as_str()
            .expect("text")
            .to_owned()
    };
    let (tail, head, emoji) = (snippet(0), snippet(1), snippet(2));
    assert!(tail.starts_with("needle") && tail.ends_with('…'), "{tail}");
    assert!(head.starts_with('…') && head.ends_with("needle"), "{head}");
    for text in [&tail, &head, &emoji] {
        assert!(text.chars().count() <= engine_config, "{text}");
    }
    // The bound is in code points: emoji count once though they take two UTF-16 units.
    assert_eq!(emoji.chars().count(), engine_config);
    assert!(emoji.encode_utf16().count() > engine_config, "{emoji}");
    assert!(emoji.starts_with('…') && emoji.ends_with("needle"), "{emoji}");
}

fn javascript_whitespace_and_fts_syntax_are_data<P: SearchProvider>(mut engine: SearchEngine<P>) {
    let corpus = corpus_of(&[(
        "s",
        T,
        &[
            (T + 1, "say \"needle\" exactly"),
            (T + 2, "needle OR absent"),
            (T + 3, "alpha\u{FEFF}beta"),
            (T + 4, "gamma\u{85}delta"),
            (T + 5, "foo_bar v1.2.3"),
        ],
    )]);
    let found = |engine: &mut SearchEngine<P>, query: &str| {
        hit_keys(&events(engine, &corpus, json!({"sessionId":"s","query":query})).expect("ok"))
    };
    assert_eq!(found(&mut engine, "say \"needle\""), ["s#0"]);
    assert_eq!(found(&mut engine, "needle OR absent"), ["s#1"]);
    assert_eq!(found(&mut engine, "needle*").len(), 2, "`*` is a separator");
    assert_eq!(found(&mut engine, "NEAR(needle absent)"), Vec::<String>::new());
    assert_eq!(found(&mut engine, "alpha beta"), ["s#2"], "U+FEFF separates");
    assert_eq!(
        found(&mut engine, "gamma delta"),
        ["s#3"],
        "U+0085 separates tokens too"
    );
    assert_eq!(found(&mut engine, "foo bar v1 2 3"), ["s#4"]);
    assert_eq!(
        found(&mut engine, " \u{3000}alpha\u{FEFF} beta "),
        ["s#2"],
        "JS whitespace is trimmed and collapsed"
    );
}

fn filters_and_clauses_or_values_empty_lists_and_ranges<P: SearchProvider>(mut engine: SearchEngine<P>) {
    let corpus = worked_example();
    let ids = |page: Result<Value, ErrorCode>| self::ids(&page.expect("ok"));
    let empty: Vec<String> = Vec::new();
    assert_eq!(
        ids(sessions(
            &mut engine,
            &corpus,
            json!({"query":"parser","sessionFilters":[{"kind":"id","values":[]}]})
        )),
        empty
    );
    assert_eq!(
        ids(sessions(
            &mut engine,
            &corpus,
            json!({"query":"parser","sessionFilters":[{"kind":"id","values":["a1","b2"]}]})
        )),
        ["b2", "a1"]
    );
    assert_eq!(
        ids(sessions(
            &mut engine,
            &corpus,
            json!({"query":"parser","sessionFilters":[{"kind":"id","values":["a1","b2"]},{"kind":"cwd","values":["/home/dev/lib"]}]})
        )),
        ["b2"]
    );
    assert_eq!(
        ids(sessions(
            &mut engine,
            &corpus,
            json!({"query":"parser","sessionFilters":[{"kind":"cwd","values":[null]}]})
        )),
        empty
    );
    assert_eq!(
        ids(sessions(
            &mut engine,
            &corpus,
            json!({"query":"parser","sessionFilters":[{"kind":"created-at","from":T + 1}]})
        )),
        ["b2"]
    );
    assert_eq!(
        ids(sessions(
            &mut engine,
            &corpus,
            json!({"query":"parser","eventFilters":[{"kind":"time","to":T + 10}]})
        )),
        ["a1"]
    );
    assert_eq!(
        ids(sessions(
            &mut engine,
            &corpus,
            json!({"query":"parser","eventFilters":[{"kind":"type","values":["turn/end","assistant/message"]}]})
        )),
        ["b2", "a1"]
    );
    let within = events(
        &mut engine,
        &corpus,
        json!({"sessionId":"b2","query":"parser","filters":[{"kind":"seq","from":2,"to":2}]}),
    )
    .expect("ok");
    assert_eq!(hit_keys(&within), ["b2#2"]);
}

fn errors_come_in_dsh_precedence<P: SearchProvider>(mut engine: SearchEngine<P>) {
    let corpus = worked_example();
    let code = |r: Result<Value, ErrorCode>| r.err();
    let all_wrong = json!({"query":"","limit":0,"cursor":1,"sessionFilters":[{"kind":"nope"}]});
    assert_eq!(
        code(sessions(&mut engine, &corpus, all_wrong)),
        Some(ErrorCode::QueryInvalidFilter)
    );
    assert_eq!(
        code(sessions(&mut engine, &corpus, json!({"query":"","limit":0,"cursor":1}))),
        Some(ErrorCode::QueryInvalidCursor)
    );
    assert_eq!(
        code(sessions(&mut engine, &corpus, json!({"query":"","limit":0}))),
        Some(ErrorCode::QueryInvalidQuery)
    );
    assert_eq!(
        code(sessions(&mut engine, &corpus, json!({"query":"x","limit":0}))),
        Some(ErrorCode::QueryInvalidLimit)
    );
    // Target resolution comes before the cursor; the cursor before the budgets.
    let fifteen: Vec<Value> = (0..15).map(|_| json!({"kind":"type","values":["x"]})).collect();
    let over = json!({"sessionId":"zz","query":"parser","cursor":"junk","filters":fifteen});
    assert_eq!(
        code(events(&mut engine, &corpus, over)),
        Some(ErrorCode::QuerySessionNotFound)
    );
    let over = json!({"sessionId":"b2","query":"parser","cursor":"junk","filters":fifteen});
    assert_eq!(
        code(events(&mut engine, &corpus, over)),
        Some(ErrorCode::QueryInvalidCursor)
    );
    let over = json!({"sessionId":"b2","query":"parser","filters":fifteen});
    assert_eq!(
        code(events(&mut engine, &corpus, over)),
        Some(ErrorCode::QueryInvalidFilter)
    );
    let thirteen: Vec<Value> = (0..13).map(|_| json!({"kind":"type","values":["x"]})).collect();
    assert!(
        events(
            &mut engine,
            &corpus,
            json!({"sessionId":"b2","query":"parser","filters":thirteen})
        )
        .is_ok()
    );
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

/// Loading more archives re-indexes only what is new, equals a fresh index over everything,
/// makes cross-session cursors stale and leaves within-session cursors of untouched sessions valid.
fn incremental_ingest_equals_a_fresh_index<P: SearchProvider>(mut engine: SearchEngine<P>, mut fresh: SearchEngine<P>) {
    let session = |id: &str, created: i64, texts: &[&str]| {
        let header = json!({"type":"session","version":0,"id":id,"createdAt":created,"delegationDepth":0});
        let events: Vec<Value> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| user(i as u64, created + i as i64, t))
            .collect();
        Input::File {
            name: format!("{id}.jsonl"),
            bytes: log_text(header, &events),
        }
    };
    let a = || {
        vec![
            session("a1", T, &["needle one", "needle needle", "hay"]),
            session("a2", T + 5, &["needle in a2"]),
        ]
    };
    let b = || vec![session("b1", T + 9, &["needle from b", "more needle needle needle"])];
    let mut corpus = Corpus::new();
    corpus.load(a(), &LoadOptions::default()).expect("loads A");
    let first = sessions(&mut engine, &corpus, json!({"query":"needle","limit":1})).expect("searches A");
    let cross = first["nextCursor"].as_str().expect("more pages").to_owned();
    let within = events(
        &mut engine,
        &corpus,
        json!({"sessionId":"a1","query":"needle","limit":1}),
    )
    .expect("ok");
    let within_cursor = within["nextCursor"].as_str().expect("more pages").to_owned();
    assert_eq!(
        engine.reconcile(&corpus).expect("reconciles"),
        0,
        "nothing changed, nothing re-indexed"
    );
    corpus.load(b(), &LoadOptions::default()).expect("loads B");
    assert_eq!(
        engine.reconcile(&corpus).expect("reconciles"),
        1,
        "only the new session is indexed"
    );
    let mut everything = Corpus::new();
    everything
        .load(a().into_iter().chain(b()).collect(), &LoadOptions::default())
        .expect("loads A+B");
    for query in ["needle", "needle needle", "hay"] {
        let incremental = sessions(&mut engine, &corpus, json!({ "query": query })).expect("ok");
        let from_scratch = sessions(&mut fresh, &everything, json!({ "query": query })).expect("ok");
        assert_eq!(incremental, from_scratch, "{query}");
    }
    let stale = sessions(&mut engine, &corpus, json!({"query":"needle","limit":1,"cursor":cross}));
    assert_eq!(stale.err(), Some(ErrorCode::QueryStaleCursor));
    let page = events(
        &mut engine,
        &corpus,
        json!({"sessionId":"a1","query":"needle","limit":1,"cursor":within_cursor}),
    );
    assert_eq!(
        page.expect("untouched session's cursor survives")["items"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

/// Phrase occurrences over many random documents equal the scanning reference provider's.
fn agrees_with_the_scan_reference<P: SearchProvider>(mut engine_provider: SearchEngine<P>) {
    let words = [
        "parser",
        "crash",
        "lexer",
        "token",
        "a",
        "b",
        "café",
        "CAFE",
        "数据库",
        "x_y",
        "fix",
        "fix",
    ];
    let mut state = 0x9E37_79B9_u64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let texts: Vec<String> = (0..600)
        .map(|_| {
            (0..1 + next(12))
                .map(|_| words[next(words.len())])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let header = to_json(&json!({"version":0,"id":"many","createdAt":T,"delegationDepth":0}));
    let log = texts
        .iter()
        .enumerate()
        .map(|(seq, text)| to_json(&user(seq as u64, T + seq as i64, text)))
        .collect();
    let mut corpus = Corpus::new();
    corpus.add_live(&header, log).expect("valid");
    // The same texts again in many small sessions, for each session's strongest match.
    for (s, chunk) in texts.chunks(20).enumerate() {
        let header = to_json(&json!({"version":0,"id":format!("s{s:02}"),"createdAt":T,"delegationDepth":0}));
        let log = chunk
            .iter()
            .enumerate()
            .map(|(seq, text)| to_json(&user(seq as u64, T + (seq % 7) as i64, text)))
            .collect();
        corpus.add_live(&header, log).expect("valid");
    }
    let mut reference = SearchEngine::new(
        ScanProvider::new(TokenizerMode::Unicode61),
        config(),
        TokenizerMode::Unicode61,
    );
    for query in [
        "parser",
        "fix fix",
        "a b",
        "cafe",
        "crash lexer token",
        "数据库",
        "x y",
        "b a b",
    ] {
        for limit in [100, 7] {
            let request = json!({"sessionId":"many","query":query,"limit":limit});
            let expected = events(&mut reference, &corpus, request.clone()).expect("reference");
            let actual = events(&mut engine_provider, &corpus, request).expect("backend");
            assert_eq!(actual["items"], expected["items"], "{query} (limit {limit})");
            assert_eq!(actual.get("nextCursor").is_some(), expected.get("nextCursor").is_some());
            let request = json!({"query":query,"limit":limit.min(50)});
            let expected = sessions(&mut reference, &corpus, request.clone()).expect("reference");
            let actual = sessions(&mut engine_provider, &corpus, request).expect("backend");
            assert_eq!(actual["items"], expected["items"], "{query} (limit {limit})");
            assert_eq!(actual.get("nextCursor").is_some(), expected.get("nextCursor").is_some());
        }
    }
}

macro_rules! conformance {
    ($module:ident, $engine:expr) => {
        mod $module {
            use super::*;
            #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
            #[cfg_attr(not(target_arch = "wasm32"), test)]
            fn worked_example_ranks_and_snippets() {
                super::worked_example_ranks_and_snippets($engine);
            }
            #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
            #[cfg_attr(not(target_arch = "wasm32"), test)]
            fn cursors_page_and_go_stale() {
                super::cursors_page_and_go_stale($engine);
            }
            #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
            #[cfg_attr(not(target_arch = "wasm32"), test)]
            fn phrase_rules() {
                super::phrase_rules($engine);
            }
            #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
            #[cfg_attr(not(target_arch = "wasm32"), test)]
            fn ranking_ties_follow_count_length_time_id_seq() {
                super::ranking_ties_follow_count_length_time_id_seq($engine);
            }
            #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
            #[cfg_attr(not(target_arch = "wasm32"), test)]
            fn merged_spans_count_overlaps_once() {
                super::merged_spans_count_overlaps_once($engine);
            }
            #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
            #[cfg_attr(not(target_arch = "wasm32"), test)]
            fn snippets_cut_at_both_ends_by_code_points() {
                super::snippets_cut_at_both_ends_by_code_points($engine);
            }
            #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
            #[cfg_attr(not(target_arch = "wasm32"), test)]
            fn javascript_whitespace_and_fts_syntax_are_data() {
                super::javascript_whitespace_and_fts_syntax_are_data($engine);
            }
            #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
            #[cfg_attr(not(target_arch = "wasm32"), test)]
            fn filters_and_clauses_or_values_empty_lists_and_ranges() {
                super::filters_and_clauses_or_values_empty_lists_and_ranges($engine);
            }
            #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
            #[cfg_attr(not(target_arch = "wasm32"), test)]
            fn errors_come_in_dsh_precedence() {
                super::errors_come_in_dsh_precedence($engine);
            }
            #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
            #[cfg_attr(not(target_arch = "wasm32"), test)]
            fn incremental_ingest_equals_a_fresh_index() {
                super::incremental_ingest_equals_a_fresh_index($engine, $engine);
            }
            #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
            #[cfg_attr(not(target_arch = "wasm32"), test)]
            fn agrees_with_the_scan_reference() {
                super::agrees_with_the_scan_reference($engine);
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
// Every document in a segment, none in the in-memory tail small corpora otherwise stay in.
conformance!(
    tantivy_segments_backend,
    SearchEngine::new(
        dsh_session_search::search::tantivy::TantivyProvider::without_tail(TokenizerMode::Unicode61),
        config(),
        TokenizerMode::Unicode61
    )
);

#[cfg(all(feature = "sqlite", not(target_arch = "wasm32")))]
conformance!(
    sqlite_backend,
    SearchEngine::new(
        dsh_session_search::search::sqlite::SqliteProvider::in_memory(TokenizerMode::Unicode61).expect("opens"),
        config(),
        TokenizerMode::Unicode61
    )
);

/// The on-disk SQLite index across restarts, driven by the engine: an unchanged corpus is not
/// re-indexed, a changed session is the only one rewritten, a vanished one is dropped, and
/// results always equal a fresh index's.
#[cfg(all(feature = "sqlite", not(target_arch = "wasm32")))]
mod sqlite_reuse {
    use super::*;
    use dsh_session_search::search::sqlite::{SqliteProvider, SqliteStats};
    use std::sync::Arc;

    const QUERIES: [&str; 6] = ["parser", "parser crash", "cafe", "lexer token", "数据库", "fix fix"];

    fn corpus(changed: bool, sessions: usize) -> (Corpus, Vec<Vec<String>>) {
        let words = ["parser", "crash", "lexer", "token", "café", "数据库", "fix", "a"];
        let mut state = 0x2545_F491_4F6C_DD1D_u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut inputs = Vec::new();
        let mut texts = Vec::new();
        for s in 0..sessions {
            let mut session: Vec<String> = (0..5 + next(20))
                .map(|_| {
                    (0..1 + next(10))
                        .map(|_| words[next(words.len())])
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            if changed && s == 7 {
                session.push("one more parser crash".to_owned());
            }
            let id = format!("s{s:02}");
            let header = json!({"type":"session","version":0,"id":id,"createdAt":T + s as i64,"delegationDepth":0});
            let events: Vec<Value> = session
                .iter()
                .enumerate()
                .map(|(i, t)| user(i as u64, T + 100 + i as i64, t))
                .collect();
            inputs.push(Input::File {
                name: format!("{id}.jsonl"),
                bytes: log_text(header, &events),
            });
            texts.push(session);
        }
        let mut corpus = Corpus::new();
        let report = corpus.load(inputs, &LoadOptions::default()).expect("loads");
        assert!(report.failures.is_empty());
        (corpus, texts)
    }

    fn results<P: SearchProvider>(engine: &mut SearchEngine<P>, corpus: &Corpus) -> Vec<Value> {
        let mut out = Vec::new();
        for query in QUERIES {
            out.push(sessions(engine, corpus, json!({"query":query,"limit":100})).expect("searches")["items"].clone());
            let within = events(engine, corpus, json!({"sessionId":"s07","query":query,"limit":100}));
            out.push(within.expect("searches")["items"].clone());
        }
        out
    }

    fn on_disk(path: &std::path::Path, corpus: &Corpus) -> (Vec<Value>, Arc<SqliteStats>) {
        let provider = SqliteProvider::open(path, TokenizerMode::Unicode61).expect("opens");
        let stats = provider.stats();
        let mut engine = SearchEngine::new(provider, config(), TokenizerMode::Unicode61);
        (results(&mut engine, corpus), stats)
    }

    fn fresh(corpus: &Corpus) -> Vec<Value> {
        let provider = SqliteProvider::in_memory(TokenizerMode::Unicode61).expect("opens");
        let from_sqlite = results(
            &mut SearchEngine::new(provider, config(), TokenizerMode::Unicode61),
            corpus,
        );
        let tantivy = dsh_session_search::search::tantivy::TantivyProvider::new(TokenizerMode::Unicode61);
        let from_tantivy = results(
            &mut SearchEngine::new(tantivy, config(), TokenizerMode::Unicode61),
            corpus,
        );
        assert_eq!(from_sqlite, from_tantivy);
        from_sqlite
    }

    #[test]
    fn on_disk_index_is_reused_across_restarts() {
        let dir = std::env::temp_dir().join(format!("dsh-sqlite-contract-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("index.sqlite");
        let (original, texts) = corpus(false, 30);
        let total: u64 = texts.iter().map(|t| t.len() as u64).sum();
        let (first, stats) = on_disk(&path, &original);
        assert_eq!(stats.rows_written(), total);
        assert_eq!(first, fresh(&original));
        assert!(
            first[0].as_array().is_some_and(|hits| hits.len() > 5),
            "the corpus matches"
        );

        let (second, stats) = on_disk(&path, &original);
        assert_eq!(stats.rows_written(), 0, "nothing re-indexed after a restart");
        assert_eq!(stats.sessions_reused(), 30);
        assert_eq!(second, first);

        // s07 gains an event and s29 leaves the corpus.
        let (changed, texts) = corpus(true, 29);
        let (third, stats) = on_disk(&path, &changed);
        assert_eq!(stats.sessions_written(), 1);
        assert_eq!(stats.rows_written(), texts[7].len() as u64, "only s07 is rewritten");
        assert_eq!(stats.sessions_swept(), 1, "s29 is dropped");
        assert_eq!(third, fresh(&changed));
        let (fourth, stats) = on_disk(&path, &changed);
        assert_eq!((stats.rows_written(), stats.sessions_swept()), (0, 0));
        assert_eq!(fourth, third);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
