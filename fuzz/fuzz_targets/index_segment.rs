//! Index segments built by helpers: any bytes as a job are built or refused, and a helper's
//! segment altered by the input is refused or, when adopted, answers as an index built here.
#![no_main]

use dsh_session_search::api::build_index_segment;
use dsh_session_search::corpus::Corpus;
use dsh_session_search::json::Json;
use dsh_session_search::search::engine::SearchEngine;
use dsh_session_search::search::request::{SearchConfig, parse_session_request};
use dsh_session_search::search::tantivy::TantivyProvider;
use dsh_session_search::search::tokenizer::TokenizerMode;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

type Engine = SearchEngine<TantivyProvider>;

fn json(text: &str) -> Json {
    Json::parse(text, Default::default()).expect("json")
}

fn corpus() -> Corpus {
    let mut corpus = Corpus::new();
    let header = json(r#"{"version":0,"id":"s","createdAt":1,"cwd":"/w","delegationDepth":0}"#);
    let events = ["alpha beta", "beta gamma the", "the end"]
        .iter()
        .enumerate()
        .map(|(seq, text)| json(&format!(
            r#"{{"type":"user/message","seq":{seq},"time":{seq},"surfaceOp":"append","data":{{"id":"m{seq}","role":"user","content":[{{"type":"text","text":"{text}"}}],"source":{{"kind":"user"}}}}}}"#
        )))
        .collect();
    corpus.add_live(&header, events).expect("adds");
    corpus
}

fn engine() -> Engine {
    let mode = TokenizerMode::Unicode61;
    SearchEngine::new(
        TantivyProvider::new(mode).with_job_bytes(1),
        SearchConfig::default(),
        mode,
    )
}

fn answer(engine: &mut Engine, corpus: &Corpus) -> String {
    let request = parse_session_request(&json(r#"{"query":"beta"}"#), &SearchConfig::default()).expect("valid");
    format!(
        "{:?}",
        engine.search_sessions(corpus, &request).expect("searches").items
    )
}

/// An engine with one job handed out, and that job.
fn handing(corpus: &Corpus) -> (Engine, Vec<u8>) {
    let mut engine = engine();
    loop {
        assert!(!engine.index_step_handing_out(corpus, 1 << 20, 1).expect("steps").done);
        if let Some(job) = engine.take_job() {
            return (engine, job);
        }
    }
}

/// The answer of an index built here, and a helper's segment for the first job (its first 12
/// bytes name the job, so another engine's copy of it is the same after them).
fn reference() -> &'static (String, Vec<u8>) {
    static REFERENCE: OnceLock<(String, Vec<u8>)> = OnceLock::new();
    REFERENCE.get_or_init(|| {
        let corpus = corpus();
        let (_, job) = handing(&corpus);
        (
            answer(&mut engine(), &corpus),
            build_index_segment(&job).expect("builds"),
        )
    })
}

fuzz_target!(|data: &[u8]| {
    let _ = build_index_segment(data);
    let (expected, built) = reference();
    let corpus = corpus();
    let (mut handing, job) = handing(&corpus);
    let mut segment = job[..12].to_vec();
    segment.extend_from_slice(&built[12..]);
    // The input edits the segment: triples of (position, position, byte to xor).
    for edit in data.chunks_exact(3) {
        let at = usize::from(u16::from_le_bytes([edit[0], edit[1]])) % segment.len();
        segment[at] ^= edit[2];
    }
    handing.supply_segment(&segment);
    handing.reconcile(&corpus).expect("finishes");
    assert_eq!(&answer(&mut handing, &corpus), expected);
});
