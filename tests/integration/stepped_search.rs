//! Searching while the index is built in steps: every answer given part-way through a build
//! (sessions not yet published read from the corpus, the rest from the index) equals the
//! answer of an index built in one go, and its cursors go on once the build commits.

use dsh_session_search::archive::{Input, LoadOptions};
use dsh_session_search::corpus::Corpus;
use dsh_session_search::error::ErrorCode;
use dsh_session_search::json::Json;
use dsh_session_search::search::engine::SearchEngine;
use dsh_session_search::search::request::{SearchConfig, parse_event_request, parse_session_request};
use dsh_session_search::search::tantivy::TantivyProvider;
use dsh_session_search::search::tokenizer::TokenizerMode;

type Engine = SearchEngine<TantivyProvider>;

fn engine() -> Engine {
    let mode = TokenizerMode::Unicode61;
    SearchEngine::new(TantivyProvider::new(mode), SearchConfig::default(), mode)
}

fn json(text: &str) -> Json {
    Json::parse(text, Default::default()).expect("json")
}

fn live_header(id: &str) -> Json {
    json(&format!(
        r#"{{"version":0,"id":"{id}","createdAt":1,"cwd":"/w","delegationDepth":0}}"#
    ))
}

fn user_message(seq: u64, text: &str) -> Json {
    json(&format!(
        r#"{{"type":"user/message","seq":{seq},"time":{seq},"surfaceOp":"append","data":{{"id":"m{seq}","role":"user","content":[{{"type":"text","text":"{text}"}}],"source":{{"kind":"user"}}}}}}"#
    ))
}

fn add_live(corpus: &mut Corpus, id: &str, texts: &[&str]) {
    let events = texts
        .iter()
        .enumerate()
        .map(|(seq, text)| user_message(seq as u64, text))
        .collect();
    corpus.add_live(&live_header(id), events).expect("adds");
}

/// The viewer's 25-session sample plus live sessions written to match the queries below.
fn corpus() -> Corpus {
    let mut corpus = Corpus::new();
    let input = Input::File {
        name: "sample-archive.zip".into(),
        bytes: include_bytes!("../../www/sample/sample-archive.zip").to_vec(),
    };
    corpus.load(vec![input], &LoadOptions::default()).expect("loads");
    for n in 0..5 {
        let id = format!("live-{n}");
        add_live(
            &mut corpus,
            &id,
            &[
                "alpha beta",
                "the beta beta beta",
                "gamma the pagination",
                // Matches only once case is folded and diacritics removed.
                "THE Beta ÁLPHA Pagination ca\\u0301fe",
            ],
        );
    }
    corpus
}

/// Changes every way a corpus can between builds: a session replaced, one grown, one gone,
/// one new.
fn change(corpus: &mut Corpus) {
    corpus.remove_live("live-1");
    add_live(corpus, "live-1", &["delta the", "beta alpha beta beta"]);
    corpus
        .append_live("live-2", vec![user_message(4, "beta beta the end")])
        .expect("grows");
    corpus.remove_live("live-3");
    add_live(corpus, "live-5", &["pagination beta", "alpha"]);
}

const SESSION_REQUESTS: [&str; 8] = [
    r#"{"query":"the"}"#,
    r#"{"query":"the","limit":3}"#,
    r#"{"query":"beta beta"}"#,
    r#"{"query":"beta beta beta"}"#,
    r#"{"query":"pagination","highlights":true}"#,
    r#"{"query":"alpha","eventFilters":[{"kind":"surface","values":["current"]}]}"#,
    r#"{"query":"the","sessionFilters":[{"kind":"id","values":["live-2","live-5"]}]}"#,
    r#"{"query":"absent words"}"#,
];

const EVENT_QUERIES: [&str; 4] = ["beta", "the", "pagination", "cafe"];

/// A page as JSON with its cursor reduced to whether there is one (cursors are bound to the
/// engine that issued them).
fn comparable(page: &impl serde::Serialize) -> serde_json::Value {
    let mut value = serde_json::to_value(page).expect("serializes");
    let more = value.get("nextCursor").is_some();
    value["nextCursor"] = serde_json::Value::Bool(more);
    value
}

fn session_page(engine: &mut Engine, corpus: &Corpus, request: &str) -> serde_json::Value {
    let request = parse_session_request(&json(request), &SearchConfig::default()).expect("valid");
    comparable(&engine.search_sessions(corpus, &request).expect("searches"))
}

fn event_page(engine: &mut Engine, corpus: &Corpus, session: &str, query: &str) -> serde_json::Value {
    let request = json(&format!(r#"{{"sessionId":"{session}","query":"{query}","limit":4}}"#));
    let request = parse_event_request(&request, &SearchConfig::default()).expect("valid");
    match engine.search_events(corpus, &request) {
        Ok(page) => comparable(&page),
        Err(error) => serde_json::Value::String(error.code.as_str().to_owned()),
    }
}

/// Every session request and, in the live sessions (one of them gone after `change`) and
/// three stored ones, every event query.
fn answers(engine: &mut Engine, corpus: &Corpus) -> Vec<serde_json::Value> {
    let mut out: Vec<serde_json::Value> = SESSION_REQUESTS
        .iter()
        .map(|request| session_page(engine, corpus, request))
        .collect();
    let stored = corpus
        .list_sessions()
        .into_iter()
        .map(|r| r.header.id)
        .filter(|id| !id.starts_with("live-"))
        .take(3);
    let ids: Vec<String> = (0..6).map(|n| format!("live-{n}")).chain(stored).collect();
    for id in &ids {
        for query in EVENT_QUERIES {
            out.push(event_page(engine, corpus, id, query));
        }
    }
    out
}

/// Builds `engine` one event at a time, checking that it answers as `expected` does after
/// the first steps and then at about every tenth of the events; returns how many times it
/// checked with the build under way.
fn step_and_compare(engine: &mut Engine, corpus: &Corpus, expected: &[serde_json::Value]) -> usize {
    let (mut steps, mut checked, mut tenths) = (0, 0, 0);
    loop {
        let progress = engine.index_step(corpus, 1).expect("steps");
        if progress.done {
            return checked;
        }
        steps += 1;
        let reached = progress.events_done * 10 / progress.events_total.max(1);
        if steps > 3 && reached <= tenths {
            continue;
        }
        tenths = reached;
        checked += 1;
        let got = answers(engine, corpus);
        for (n, (got, expected)) in got.iter().zip(expected).enumerate() {
            assert_eq!(got, expected, "answer {n} after step {steps}");
        }
    }
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn answers_during_a_stepped_build_equal_the_finished_index() {
    let mut corpus = corpus();
    let expected = answers(&mut engine(), &corpus);
    assert!(
        expected[0]["items"].as_array().is_some_and(|items| items.len() > 5),
        "the queries match"
    );
    let mut stepped = engine();
    let checked = step_and_compare(&mut stepped, &corpus, &expected);
    assert!(checked >= 10, "checked {checked} times during the first build");

    // A second build, over a changed corpus: unchanged sessions are answered by the index,
    // the others read from the corpus, and what the index holds of them is left out.
    change(&mut corpus);
    let before = expected;
    let expected = answers(&mut engine(), &corpus);
    assert_ne!(expected, before, "the changes show in the answers");
    let checked = step_and_compare(&mut stepped, &corpus, &expected);
    assert!(checked >= 4, "checked {checked} times during the second build");
    assert_eq!(answers(&mut stepped, &corpus), expected, "and once built");
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn cursors_given_during_a_build_go_on_after_its_commit_unless_the_corpus_moved() {
    let mut corpus = corpus();
    let request = r#"{"query":"the","limit":2}"#;
    let mut reference = engine();
    let first = session_page(&mut reference, &corpus, request);
    let parsed = parse_session_request(&json(request), &SearchConfig::default()).expect("valid");
    let follow = |cursor: &str| {
        let mut next = parsed.clone();
        next.cursor = Some(cursor.to_owned());
        next
    };
    let reference_cursor = reference
        .search_sessions(&corpus, &parsed)
        .expect("searches")
        .next_cursor
        .expect("more");
    let second = comparable(
        &reference
            .search_sessions(&corpus, &follow(&reference_cursor))
            .expect("pages"),
    );

    let mut stepped = engine();
    assert!(!stepped.index_step(&corpus, 1).expect("steps").done);
    let page = stepped.search_sessions(&corpus, &parsed).expect("searches");
    assert_eq!(comparable(&page), first);
    let cursor = page.next_cursor.expect("more");
    while !stepped.index_step(&corpus, 4096).expect("steps").done {}
    let after_commit = stepped.search_sessions(&corpus, &follow(&cursor)).expect("goes on");
    assert_eq!(comparable(&after_commit), second);

    let mut moved = engine();
    assert!(!moved.index_step(&corpus, 1).expect("steps").done);
    let cursor = moved
        .search_sessions(&corpus, &parsed)
        .expect("searches")
        .next_cursor
        .expect("more");
    add_live(&mut corpus, "late", &["the late one"]);
    let stale = moved.search_sessions(&corpus, &follow(&cursor)).expect_err("stale");
    assert_eq!(stale.code, ErrorCode::QueryStaleCursor);
}

/// An engine whose stepped builds hand out jobs of about 2 kB of text.
fn handing_engine() -> Engine {
    let mode = TokenizerMode::Unicode61;
    let provider = TantivyProvider::new(mode).with_job_bytes(2048);
    SearchEngine::new(provider, SearchConfig::default(), mode)
}

/// Builds as a host with `helpers` helpers would, each holding up to two jobs and answering
/// one of them every other step (the others built here when no helper is free); checks the
/// answers part-way and returns (jobs supplied, steps that reported `waiting`).
fn build_with_helpers(
    engine: &mut Engine,
    corpus: &Corpus,
    helpers: usize,
    expected: &[serde_json::Value],
) -> (usize, usize) {
    let mut in_flight: std::collections::VecDeque<Vec<u8>> = Default::default();
    let (mut supplied, mut waited, mut steps) = (0, 0, 0);
    loop {
        let slots = (2 * helpers).saturating_sub(in_flight.len());
        let progress = engine.index_step_handing_out(corpus, 4096, slots).expect("steps");
        while in_flight.len() < 2 * helpers {
            let Some(job) = engine.take_job() else { break };
            in_flight.push_back(dsh_session_search::api::build_index_segment(&job).expect("a helper builds it"));
        }
        if progress.done {
            assert!(in_flight.is_empty(), "done with segments still out");
            return (supplied, waited);
        }
        steps += 1;
        waited += usize::from(progress.waiting);
        assert!(!progress.waiting || !in_flight.is_empty(), "waiting for nothing");
        if (progress.waiting || steps % 2 == 0)
            && let Some(segment) = in_flight.pop_front()
        {
            assert!(engine.supply_segment(&segment), "the answer to an awaited job is taken");
            assert!(!engine.supply_segment(&segment), "and only once");
            supplied += 1;
        }
        if steps % 7 == 0 {
            assert_eq!(answers(engine, corpus), expected, "answers after step {steps}");
        }
    }
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn segments_built_by_helpers_answer_as_an_index_built_here() {
    let mut corpus = corpus();
    let expected = answers(&mut engine(), &corpus);
    for helpers in [1, 2] {
        let mut stepped = handing_engine();
        let (supplied, waited) = build_with_helpers(&mut stepped, &corpus, helpers, &expected);
        assert!(supplied >= 5, "{helpers} helpers built {supplied} segments");
        assert!(waited >= 1, "the build waited for its last segments");
        assert_eq!(
            answers(&mut stepped, &corpus),
            expected,
            "{helpers} helpers, once built"
        );

        // A second build over the changed corpus, with helpers again.
        change(&mut corpus);
        let changed = answers(&mut engine(), &corpus);
        build_with_helpers(&mut stepped, &corpus, helpers, &changed);
        assert_eq!(answers(&mut stepped, &corpus), changed, "{helpers} helpers, rebuilt");
        corpus = self::corpus();
    }
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn a_segment_is_taken_only_for_the_job_it_answers() {
    let corpus = corpus();
    let expected = answers(&mut engine(), &corpus);
    let mut stepped = handing_engine();
    let mut other = handing_engine();
    let mut jobs = Vec::new();
    while jobs.len() < 2 {
        stepped.index_step_handing_out(&corpus, 4096, 2).expect("steps");
        other.index_step_handing_out(&corpus, 4096, 2).expect("steps");
        jobs.extend(stepped.take_job());
    }
    let theirs = other.take_job().expect("the other engine hands out a job too");
    let segment = |job: &[u8]| dsh_session_search::api::build_index_segment(job).expect("builds");
    assert!(!stepped.supply_segment(&segment(&theirs)), "another index's job");
    assert!(!stepped.supply_segment(b"not a segment"), "bytes that are no segment");
    let good = segment(&jobs[0]);
    // A refused segment sends its job back to be handed out again: take it anew each time.
    let mut refused = |bytes: &[u8], what: String| {
        assert!(!stepped.supply_segment(bytes), "{what}");
        // (Bytes too short to name the job leave it awaited.)
        while let Some(again) = stepped.take_job() {
            if again == jobs[0] {
                break;
            }
        }
    };
    for cut in [0, 12, good.len() / 2, good.len() - 1] {
        refused(&good[..cut], format!("a segment cut at {cut}"));
    }
    for at in [12, 20, good.len() / 2, good.len() - 1] {
        let mut altered = good.clone();
        altered[at] ^= 0x01;
        refused(&altered, format!("a segment altered at {at}"));
    }
    assert!(
        stepped.supply_segment(&good),
        "the intact segment, after the refused copies"
    );
    for job in [b"".as_slice(), b"job", &jobs[0][..jobs[0].len() - 1]] {
        let built = dsh_session_search::api::build_index_segment(job);
        assert_eq!(
            built.err().map(|e| e.code),
            Some(ErrorCode::QueryIndexFailed),
            "a damaged job"
        );
    }
    // The helpers are gone: their jobs come back and are built here, as are those still out
    // when a search must finish the build.
    stepped.reclaim_jobs();
    stepped.index_step_handing_out(&corpus, 4096, 1).expect("steps");
    assert!(stepped.take_job().is_some(), "a reclaimed job is handed out again");
    assert_eq!(answers(&mut stepped, &corpus), expected, "answers part-way");
    // Steps build here every job not handed out, then wait for the one that is.
    loop {
        let progress = stepped.index_step(&corpus, 1 << 20).expect("steps");
        assert!(!progress.done, "a stepped build does not finish with a job out");
        if progress.waiting {
            break;
        }
    }
    stepped.reconcile(&corpus).expect("finishes");
    assert_eq!(
        answers(&mut stepped, &corpus),
        expected,
        "the job still out was built here"
    );
}
