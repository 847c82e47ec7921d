//! Times chosen queries against one backend on a generated bench corpus, for profiling the
//! search path under `perf` or `callgrind` (the full benchmark is `examples/bench.rs`).
//!
//! `cargo run --release --example profile_search -- CORPUS_DIR BACKEND REPEAT QUERY...` with
//! `BACKEND` `tantivy` or `sqlite` (in memory). Each query runs once as a warm-up, then `REPEAT`
//! times as `searchSessions` and as `searchEvents` in the session of its first hit (else the
//! largest session); the median of each is printed. Under callgrind, collect only the timed
//! calls with `--collect-atstart=no --toggle-collect='*timed_calls*'`. With `PROFILE_SEARCH_GO`
//! set to a path, the queries wait after the load until that file exists: start callgrind with
//! `--instr-atstart=no`, and once "loaded" is printed, `callgrind_control -i on` and then create
//! the file, so the load runs uninstrumented and the queries' counts are whole. With
//! `PROFILE_SEARCH_PAGES` set, the warm-up answers (and the same calls with highlights) are
//! printed as JSON lines, for comparing two builds' answers.

use dsh_session_search::api::{Archive, Dialect};
use dsh_session_search::json::{Json, ParseLimits};
use serde_json::{Value, json};
use std::time::Instant;

fn fail(message: String) -> ! {
    eprintln!("profile_search: {message}");
    std::process::exit(2)
}

fn call(archive: &mut Archive, method: &str, params: &Value) -> String {
    let params = Json::parse(&params.to_string(), ParseLimits::default()).unwrap_or_else(|e| fail(e.to_string()));
    archive
        .call_json(method, params.as_array().unwrap_or_default(), Dialect::Dsh)
        .unwrap_or_else(|e| fail(format!("{method}: {}", e.message)))
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The calls being measured: kept out of line so a profiler can be told to collect only here.
#[inline(never)]
fn timed_calls(archive: &mut Archive, method: &str, params: &Value, repeat: usize) -> Vec<f64> {
    (0..repeat)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(call(archive, method, params));
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect()
}

/// The answers to `query` as JSON lines: the warm-up ones, then both calls with highlights.
fn print_pages(archive: &mut Archive, sessions: &Value, events: &str, query: &str, session: &Value) {
    println!("{sessions}\n{events}");
    let marked = json!([{ "query": query, "highlights": true }]);
    println!("{}", call(archive, "searchSessions", &marked));
    let marked = json!([{ "sessionId": session, "query": query, "highlights": true }]);
    println!("{}", call(archive, "searchEvents", &marked));
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [corpus, backend, repeat, queries @ ..] = args.as_slice() else {
        fail("usage: profile_search CORPUS_DIR tantivy|sqlite REPEAT QUERY...".into())
    };
    let repeat: usize = repeat
        .parse()
        .unwrap_or_else(|_| fail("REPEAT must be a number".into()));
    let manifest: Value = std::fs::read_to_string(format!("{corpus}/manifest.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| fail(format!("{corpus}/manifest.json is missing or not JSON")));
    let largest = manifest["largestSession"]["id"].clone();
    let mut archive = Archive::default();
    let start = Instant::now();
    call(
        &mut archive,
        "load",
        &json!([[format!("{corpus}/root")], { "backend": backend }]),
    );
    call(
        &mut archive,
        "searchSessions",
        &json!([{ "query": "zzyzx qwertyuiop" }]),
    );
    eprintln!("loaded and indexed in {:.0} ms", start.elapsed().as_secs_f64() * 1e3);
    if let Ok(go) = std::env::var("PROFILE_SEARCH_GO") {
        while !std::path::Path::new(&go).exists() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    for query in queries {
        let sessions = json!([{ "query": query }]);
        let first: Value = serde_json::from_str(&call(&mut archive, "searchSessions", &sessions))
            .unwrap_or_else(|e| fail(e.to_string()));
        let session = first["items"][0]["header"]["id"]
            .as_str()
            .map_or(largest.clone(), |id| json!(id));
        let events = json!([{ "sessionId": session, "query": query }]);
        let answer = call(&mut archive, "searchEvents", &events);
        if std::env::var_os("PROFILE_SEARCH_PAGES").is_some() {
            print_pages(&mut archive, &first, &answer, query, &session);
        }
        let s = median(timed_calls(&mut archive, "searchSessions", &sessions, repeat));
        let e = median(timed_calls(&mut archive, "searchEvents", &events, repeat));
        println!("{query:>32}: searchSessions {s:8.3} ms, searchEvents {e:8.3} ms");
    }
}
