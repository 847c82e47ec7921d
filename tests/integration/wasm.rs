//! WebAssembly tests (run under Node by `make test-wasm`): a zstd persistence root loads through
//! the JavaScript-facing API and every event carries DSH's surface label.
#![cfg(target_arch = "wasm32")]

use crate::zstd_frame;
use dsh_session_search::json::{Json, ParseLimits};
use dsh_session_search::search::tokenizer::{counted_tokens, may_contain_token, printed_event_may_contain_token};
use dsh_session_search::wasm::{WasmArchive, call_static_method, methods};
use js_sys::Uint8Array;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

/// The documented compaction example, written as DSH writes zstd logs: the header in its
/// own frame, then one frame per durable batch.
fn compacted_zstd_log() -> Vec<u8> {
    let fixture = include_str!("../fixtures/spec/compaction_shadows_prefix.jsonl");
    let mut lines = fixture.lines();
    let mut out = zstd_frame(format!("{}\n", lines.next().expect("header")).as_bytes());
    let rest: Vec<&str> = lines.collect();
    for batch in rest.chunks(3) {
        let text: String = batch.iter().map(|l| format!("{l}\n")).collect();
        out.extend(zstd_frame(text.as_bytes()));
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

/// Loads entries through the staged load, as the package does; returns the report.
fn load(archive: &mut WasmArchive, entries: &[(&str, Vec<u8>)]) -> serde_json::Value {
    archive.load_begin("{}").expect("begins");
    for (path, bytes) in entries {
        archive
            .load_add(path.to_string(), &Uint8Array::from(bytes.as_slice()))
            .expect("adds");
    }
    serde_json::from_str(&archive.load_commit().expect("commits")).expect("report")
}

fn archive() -> WasmArchive {
    WasmArchive::new("{}").expect("default options")
}

fn code_of(error: &wasm_bindgen::JsValue) -> Option<String> {
    js_sys::Reflect::get(error, &"code".into())
        .ok()
        .and_then(|c| c.as_string())
}

fn call(archive: &mut WasmArchive, method: &str, params: &str) -> serde_json::Value {
    serde_json::from_str(&archive.call(method, params).expect("answers")).expect("JSON")
}

#[wasm_bindgen_test]
fn zstd_root_loads_with_dsh_labels() {
    let mut archive = archive();
    let report = load(
        &mut archive,
        &[("root/--home-dev-app--/s-7-2/session.jsonl.zstd", compacted_zstd_log())],
    );
    assert_eq!(report["failures"].as_array().map(Vec::len), Some(0), "{report}");
    let events = archive.call("listEvents", r#"["s-7-2"]"#).expect("listed");
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
    let surface = call(&mut archive, "readSurface", r#"["s-7-2"]"#);
    let order: Vec<u64> = surface["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["seq"].as_u64().expect("seq"))
        .collect();
    assert_eq!(order, [6, 2, 3, 8]);
    assert_eq!(surface["capturedThroughSeq"], 8);
}

/// A log of `events` user messages whose texts mix repeated words, numbers and CJK, so its
/// frames hold literals of every size a Huffman table is built for.
fn varied_log(events: u64) -> String {
    let mut next = {
        let mut state = 0x2545_F491_4F6C_DD1D_u64;
        move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        }
    };
    let mut log = String::from(r#"{"type":"session","version":0,"id":"varied","createdAt":1,"delegationDepth":0}"#);
    for seq in 0..events {
        let words: Vec<String> = (0..1 + next(40))
            .map(|_| match next(4) {
                0 => format!("word{}", next(50)),
                1 => next(1 << 40).to_string(),
                2 => ["検索", "会话", "세션", "索引"][next(4) as usize].to_string(),
                _ => "the".to_string(),
            })
            .collect();
        log.push_str(&format!(
            "\n{{\"type\":\"user/message\",\"seq\":{seq},\"time\":{},\"data\":{{\"id\":\"m{seq}\",\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}],\"source\":{{\"kind\":\"user\"}}}},\"surfaceOp\":\"append\"}}",
            seq + 2,
            words.join(" ")
        ));
    }
    log.push('\n');
    log
}

/// The wasm build's libzstd keeps one Huffman decoder and one sequence decoder of two each
/// (.cargo/config.toml): frames compressed at levels from fast to strong, in one block or
/// many, decode to what the log says.
#[wasm_bindgen_test]
fn zstd_logs_of_every_level_load_as_their_text() {
    let text = varied_log(3000);
    assert!(text.len() > 3 * 128 * 1024, "several blocks");
    let listed = |bytes: Vec<u8>, name: &str| {
        let mut archive = archive();
        let report = load(&mut archive, &[(name, bytes)]);
        assert_eq!(report["failures"].as_array().map(Vec::len), Some(0), "{report}");
        archive.call("listEvents", r#"["varied"]"#).expect("listed")
    };
    let plain = listed(text.clone().into_bytes(), "root/p/varied/session.jsonl");
    // As DSH writes them: the header in a frame of its own, then the events.
    let (header, events) = text.split_at(text.find('\n').expect("a header line") + 1);
    for level in [1, 3, 9, 15] {
        let mut frames = zstd_frame(header.as_bytes());
        let mut frame = Vec::with_capacity(zstd_safe::compress_bound(events.len()));
        zstd_safe::compress(&mut frame, events.as_bytes(), level).expect("compresses");
        frames.extend(frame);
        assert_eq!(
            listed(frames, "root/p/varied/session.jsonl.zstd"),
            plain,
            "level {level}"
        );
    }
}

/// Steps a staged load to its end, supplying each entry a step needs from `entries`; returns
/// the entries needed, in order.
fn step_supplying(archive: &mut WasmArchive, entries: &[(&str, Vec<u8>)]) -> Vec<u64> {
    let mut needed = Vec::new();
    loop {
        let step: serde_json::Value = serde_json::from_str(&archive.load_step().expect("steps")).expect("JSON");
        if step["done"] == true {
            return needed;
        }
        // The step that reads the last log needs nothing more.
        let Some(entry) = step["need"]["entry"].as_u64() else {
            continue;
        };
        needed.push(entry);
        let bytes = &entries[entry as usize].1;
        archive
            .load_supply(entry as usize, &Uint8Array::from(bytes.as_slice()))
            .expect("supplies");
    }
}

/// Two logs of a root, a plain one and a compacted zstd one.
fn two_logs() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            "root/b.jsonl",
            include_bytes!("../fixtures/spec/plain_appends.jsonl").to_vec(),
        ),
        ("root/a.jsonl.zstd", compacted_zstd_log()),
    ]
}

/// Offers each of `entries` to a begun deferred load at its size alone; each then waits for
/// its step.
fn defer_whole(archive: &mut WasmArchive, entries: &[(&str, Vec<u8>)]) {
    for (path, bytes) in entries {
        let needs = archive
            .load_defer(path.to_string(), bytes.len() as u64, None)
            .expect("offers");
        assert_eq!(needs, "\"nothing\"", "{path} waits for its step");
    }
}

#[wasm_bindgen_test]
fn a_deferred_load_asks_for_each_log_by_step_and_loads_as_an_added_one() {
    let mut entries = two_logs();
    entries.push(("lone.jsonl", b"not a log".to_vec()));
    let mut archive = archive();
    archive.load_begin("{}").expect("begins");
    for (path, bytes) in &entries {
        let size = bytes.len() as u64;
        let mut needs = archive.load_defer(path.to_string(), size, None).expect("offers");
        if needs == "\"head\"" {
            let head = Uint8Array::from(&bytes[..4]);
            needs = archive.load_defer(path.to_string(), size, Some(head)).expect("offers");
        }
        assert_eq!(needs, "\"nothing\"", "{path} waits for its step");
    }
    assert_eq!(step_supplying(&mut archive, &entries), [2, 1, 0]);
    let report: serde_json::Value = serde_json::from_str(&archive.load_commit().expect("commits")).expect("report");
    let eager = load(&mut self::archive(), &entries);
    assert_eq!(report, eager);
    assert_eq!(report["failures"][0]["path"], "", "the lone non-log fails as itself");

    // A supply that reads short, or a read the host could not make, fails that log alone.
    archive.load_begin("{}").expect("begins");
    defer_whole(&mut archive, &entries[..2]);
    let step: serde_json::Value = serde_json::from_str(&archive.load_step().expect("gathers")).expect("JSON");
    assert_eq!(step["need"]["entry"], 1);
    let error = archive.load_step().expect_err("not supplied");
    assert_eq!(code_of(&error).as_deref(), Some("SESSION_INVALID_ARGUMENT"));
    archive.load_supply_failed(1, "NotReadableError").expect("told");
    let step: serde_json::Value = serde_json::from_str(&archive.load_step().expect("steps")).expect("JSON");
    assert_eq!(step["need"]["entry"], 0);
    archive
        .load_supply(0, &Uint8Array::from(&entries[0].1[1..]))
        .expect("supplies");
    let report: serde_json::Value = serde_json::from_str(&archive.load_commit().expect("commits")).expect("report");
    let codes: Vec<&str> = report["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .map(|f| f["code"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(codes, ["SESSION_LOAD_IO", "SESSION_LOAD_IO"]);
}

/// A helper's read lands at the start of the spare buffer the load handed back when it fits,
/// else in a new buffer with room to spare; the load adopts either as a read made alone.
#[wasm_bindgen_test]
fn a_read_for_transfer_reuses_a_spare_buffer_that_fits() {
    let entries = two_logs();
    let mut archive = archive();
    archive.load_begin("{}").expect("begins");
    defer_whole(&mut archive, &entries);
    let roomy = js_sys::ArrayBuffer::new(1 << 20);
    let small = js_sys::ArrayBuffer::new(1);
    let mut spares = [Some(roomy), Some(small)].into_iter();
    loop {
        let step: serde_json::Value = serde_json::from_str(&archive.load_step().expect("steps")).expect("JSON");
        if step["done"] == true {
            break;
        }
        let Some(entry) = step["need"]["entry"].as_u64().map(|e| e as usize) else {
            continue;
        };
        let ticket = archive.load_ticket(entry).expect("a ticket");
        let spare = spares.next().expect("two logs");
        let read =
            dsh_session_search::wasm::read_log_for_transfer(&ticket, &entries[entry].1, spare.clone()).expect("reads");
        let buffer = read.buffer();
        assert_eq!(read.byte_offset(), 0);
        match spare {
            Some(spare) if spare.byte_length() >= read.length() => {
                assert_eq!(JsValue::from(buffer), JsValue::from(spare))
            }
            _ => assert!(
                buffer.byte_length() >= read.length() + read.length() / 4,
                "a new buffer with room"
            ),
        }
        assert!(
            archive.load_supply_read(entry, read.to_vec()).expect("supplies"),
            "adopted"
        );
    }
    let report: serde_json::Value = serde_json::from_str(&archive.load_commit().expect("commits")).expect("report");
    assert_eq!(report, load(&mut self::archive(), &entries));
    assert!(spares.next().is_none(), "both logs were read for transfer");
}

#[wasm_bindgen_test]
fn a_staged_load_reports_progress_and_publishes_only_on_commit() {
    let mut archive = archive();
    archive.load_begin(r#"{"strict":false}"#).expect("begins");
    let bytes = include_bytes!("../fixtures/spec/plain_appends.jsonl");
    archive
        .load_add("a.jsonl".into(), &Uint8Array::from(&bytes[..]))
        .expect("adds");
    let step: serde_json::Value = serde_json::from_str(&archive.load_step().expect("steps")).expect("JSON");
    assert_eq!(step["sessionsDone"], 1);
    assert_eq!(step["sessionsTotal"], 1);
    assert_eq!(step["bytesDone"], bytes.len());
    assert_eq!(
        call(&mut archive, "listSessions", "[]"),
        serde_json::json!([]),
        "not yet visible"
    );
    archive.load_abort();
    assert_eq!(
        call(&mut archive, "listSessions", "[]"),
        serde_json::json!([]),
        "aborted: nothing"
    );
    let report = load(&mut archive, &[("a.jsonl", bytes.to_vec())]);
    assert_eq!(report["sessions"][0]["outcome"], "added");
    assert_eq!(
        call(&mut archive, "listSessions", "[]").as_array().map(Vec::len),
        Some(1)
    );
}

#[wasm_bindgen_test]
fn errors_reach_javascript_with_their_code() {
    let mut archive = archive();
    let error = archive
        .call("listEvents", r#"["missing"]"#)
        .expect_err("no such session");
    assert_eq!(code_of(&error).as_deref(), Some("SESSION_QUERY_SESSION_NOT_FOUND"));
    assert!(error.dyn_ref::<js_sys::Error>().is_some());
    for (method, params) in [
        ("searchSessions", r#"[{"query":"x","limt":5}]"#),
        ("listEvents", "not json"),
        ("nope", "[]"),
        ("listEvents", r#"["a","b"]"#),
        ("load", r#"[["/tmp"]]"#),
    ] {
        let error = archive.call(method, params).expect_err("a bad argument");
        assert_eq!(
            code_of(&error).as_deref(),
            Some("SESSION_INVALID_ARGUMENT"),
            "{method} {params}"
        );
    }
    let error = WasmArchive::new(r#"{"tokeniser":"cjk"}"#)
        .err()
        .expect("an unknown option");
    assert_eq!(code_of(&error).as_deref(), Some("SESSION_INVALID_ARGUMENT"));
    let error = WasmArchive::new(r#"{"limits":{"maxLineBytes":-1}}"#)
        .err()
        .expect("a bad limit");
    assert_eq!(code_of(&error).as_deref(), Some("SESSION_INVALID_ARGUMENT"));
}

#[wasm_bindgen_test]
fn search_and_references_answer_through_the_javascript_face() {
    let mut archive = WasmArchive::new(r#"{"tokenizer":"cjk","limits":{"maxJsonDepth":64}}"#).expect("options");
    let bytes = include_bytes!("../fixtures/spec/replacement_of_replacement.jsonl").to_vec();
    load(&mut archive, &[("s.jsonl", bytes)]);
    let page = call(&mut archive, "searchSessions", r#"[{"query":"summary"}]"#);
    assert_eq!(page["items"][0]["bestMatch"]["seq"], 11);
    let error = archive
        .call("searchEvents", r#"[{"sessionId":"s-7-3","query":"  "}]"#)
        .expect_err("blank query");
    assert_eq!(code_of(&error).as_deref(), Some("SESSION_QUERY_INVALID_QUERY"));
    let uri: String =
        serde_json::from_str(&call_static_method("encodeSessionReferenceUri", r#"["s-7-3"]"#).expect("encodes"))
            .expect("json");
    assert!(uri.starts_with("dsh-session:"), "{uri}");
    let table: serde_json::Value = serde_json::from_str(&methods()).expect("JSON");
    assert_eq!(table[0]["name"], "load");
    assert!(call_static_method("listSessions", "[]").is_err(), "needs an archive");
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
    let bytes = include_bytes!("../fixtures/spec/replacement_of_replacement.jsonl").to_vec();
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
    let bytes = include_bytes!("../fixtures/spec/replacement_of_replacement.jsonl").to_vec();
    let mut first = archive();
    load(&mut first, &[("s.jsonl", bytes.clone())]);
    let expected = first
        .call("searchSessions", r#"[{"query":"summary"}]"#)
        .expect("searches");
    let snapshot = first.export_index().expect("exports");
    let mut second = archive();
    load(&mut second, &[("s.jsonl", bytes)]);
    second.import_index(&snapshot).expect("reopens");
    assert_eq!(
        second
            .call("searchSessions", r#"[{"query":"summary"}]"#)
            .expect("searches"),
        expected
    );
    let mut other = archive();
    let error = other.import_index(&snapshot).expect_err("another corpus");
    assert_eq!(code_of(&error).as_deref(), Some("SESSION_QUERY_INDEX_FAILED"));
}

#[wasm_bindgen_test]
fn prepare_hands_truncated_snapshots_to_the_caller() {
    let mut archive = archive();
    load(
        &mut archive,
        &[
            (
                "a.jsonl",
                include_bytes!("../fixtures/spec/plain_appends.jsonl").to_vec(),
            ),
            (
                "b.jsonl",
                include_bytes!("../fixtures/spec/compaction_shadows_prefix.jsonl").to_vec(),
            ),
        ],
    );
    let params = r#"[{"id":"s-7-1"},[{"type":"text","text":"continue"}],[{"sessionId":"s-7-2"}]]"#;
    let prepared = call_prepare(&mut archive, params, true);
    assert_eq!(
        prepared["result"]["messages"].as_array().map(Vec::len),
        Some(2),
        "{prepared}"
    );
    assert_eq!(prepared["spills"], serde_json::json!([]), "nothing truncated");
    let long_log = long_session_log();
    load(&mut archive, &[("long.jsonl", long_log)]);
    let tight =
        r#"[{"id":"s-7-1"},[{"type":"text","text":"continue"}],[{"sessionId":"long"}],{"maxReferenceBytes":1500}]"#;
    let prepared = call_prepare(&mut archive, tight, true);
    let reference = &prepared["result"]["references"][0];
    assert_eq!(reference["truncated"], true, "{prepared}");
    assert_eq!(reference["spill"]["unavailable"], "no spill store configured");
    assert_eq!(prepared["spills"][0]["sessionId"], "long");
    assert_eq!(prepared["spills"][0]["reference"], 0);
    let conversation = &prepared["spills"][0]["snapshot"]["conversation"];
    assert_eq!(
        conversation.as_array().map(Vec::len),
        Some(5),
        "the complete snapshot: {prepared}"
    );
    let without_store = call_prepare(&mut archive, tight, false);
    assert_eq!(
        without_store["spills"],
        serde_json::json!([]),
        "none built without a store"
    );
    assert_eq!(
        without_store["result"]["references"], prepared["result"]["references"],
        "the same answer"
    );
    let cancelled =
        r#"[{"id":"s-7-1"},[{"type":"text","text":"continue"}],[{"sessionId":"s-7-2"}],{"cancelled":true}]"#;
    let error = archive.prepare(cancelled, false).expect_err("cancelled");
    assert_eq!(code_of(&error).as_deref(), Some("SESSION_REFERENCE_CANCELLED"));
}

/// Five long user messages: a snapshot that a small budget truncates.
fn long_session_log() -> Vec<u8> {
    let mut log = String::from(r#"{"type":"session","version":0,"id":"long","createdAt":1,"delegationDepth":0}"#);
    for i in 0..5 {
        let text = format!("word{i} ").repeat(80);
        log.push_str(&format!(
            "\n{{\"type\":\"user/message\",\"seq\":{i},\"time\":{},\"data\":{{\"id\":\"m{i}\",\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}],\"source\":{{\"kind\":\"user\"}}}},\"surfaceOp\":\"append\"}}",
            i + 2
        ));
    }
    log.push('\n');
    log.into_bytes()
}

fn call_prepare(archive: &mut WasmArchive, params: &str, collect_spills: bool) -> serde_json::Value {
    serde_json::from_str(&archive.prepare(params, collect_spills).expect("prepares")).expect("JSON")
}

/// A JSON string ends and escapes where it should whichever byte of a vector, a word or the
/// tail holds the quote, backslash or control character: the parser looks sixteen bytes at a
/// time with wasm SIMD, then eight, then one by one.
#[wasm_bindgen_test]
fn strings_parse_with_an_escape_at_every_offset() {
    // Each as written in a string, and as `JSON.stringify` writes what it decodes to.
    let specials = [
        ("\\\"", "\\\""),
        ("\\\\", "\\\\"),
        ("\\n", "\\n"),
        ("\\u00e9", "é"),
        ("\\ud83d", "\\ud83d"),
        ("é", "é"),
        ("\u{1F600}", "\u{1F600}"),
    ];
    for len in 0..40 {
        for at in 0..=len {
            let (before, after) = ("a".repeat(at), "b".repeat(len - at));
            for (written, printed) in specials {
                let text = format!("\"{before}{written}{after}\"");
                let parsed = Json::parse(&text, ParseLimits::default()).expect("a valid string");
                assert_eq!(parsed.to_js_string(), format!("\"{before}{printed}{after}\""), "{text}");
            }
            let raw = format!("\"{before}\u{1}{after}\"");
            assert!(Json::parse(&raw, ParseLimits::default()).is_err(), "{raw:?}");
        }
    }
}

/// The tokens that are a term are counted where the term lies at every place of four vectors,
/// a vector, a word and the tail: as a token of its own, inside a longer run of letters, twice,
/// and next to a letter that is not ASCII (which only the tokenizer can tell about).
#[wasm_bindgen_test]
fn a_terms_tokens_are_counted_at_every_offset() {
    for len in 0..160 {
        for at in 0..=len {
            let (before, after) = (" ".repeat(at), "-".repeat(len - at));
            assert_eq!(counted_tokens(&format!("{before}TeRm{after}"), "term"), Some(1));
            assert_eq!(counted_tokens(&format!("{before}term.TERM{after}"), "term"), Some(2));
            assert_eq!(counted_tokens(&format!("{before}語term{after}"), "term"), None);
            let joined = format!("{}TeRm{}", "x".repeat(at), "y".repeat(len - at));
            assert_eq!(counted_tokens(&joined, "term"), Some(u32::from(len == 0)), "{joined}");
        }
    }
}

/// A look for a term through unindexed text finds it where it may be a token (not within a
/// longer run of letters, but after an escape's letter), and what folding may turn into ASCII
/// (and, in an event's printed JSON, a `\u` escape), at every place of four vectors, a vector,
/// a word and the tail (sixty-four places at a time with wasm SIMD, then sixteen, eight and one
/// by one), and passes over text holding none of them.
#[wasm_bindgen_test]
fn a_term_is_found_at_every_offset() {
    for len in 0..160 {
        let plain = "x".repeat(len);
        assert!(!may_contain_token(&plain, "term"), "{plain}");
        assert!(!printed_event_may_contain_token(&plain, "term"), "{plain}");
        for at in 0..=len {
            let (before, after) = ("-".repeat(at), ".".repeat(len - at));
            let cases = [
                ("TeRm", true),
                ("xTeRm", false),
                ("TeRm1", false),
                ("\\nTeRm", true),
                ("é", true),
                ("語", false),
                ("teR", false),
                ("\\", false),
                ("\\u", false),
            ];
            for (inserted, may) in cases {
                let text = format!("{before}{inserted}{after}");
                assert_eq!(may_contain_token(&text, "term"), may, "{text}");
                let escape = inserted == "\\u";
                assert_eq!(
                    printed_event_may_contain_token(&text, "term"),
                    may || escape,
                    "printed {text}"
                );
            }
        }
    }
}
