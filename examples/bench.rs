//! Native benchmark harness for `make bench` (tests/bench/): loads a generated persistence root
//! through the typed API's method table, builds the index with one backend and times DSH's search calls.
//!
//! `cargo run --release --example bench -- CORPUS_DIR BACKEND RUNS OUT.json` with `BACKEND`
//! `tantivy` or `sqlite` (in memory). The protocol is `tests/bench/lib/measure.mjs`'s: a warm-up
//! pass records each query's first pages (`searchSessions`, then `searchEvents` in the session
//! of the first hit, else the largest session), then `RUNS` timed passes. Times include
//! serializing the answer to JSON text, as every face returns it.

use dsh_session_search::api::{Archive, Dialect};
use dsh_session_search::json::{Json, ParseLimits};
use serde_json::{Value, json};
use std::time::Instant;

fn fail(message: String) -> ! {
    eprintln!("bench: {message}");
    std::process::exit(2)
}

fn call(server: &mut Archive, method: &str, params: Value) -> Value {
    let params = Json::parse(&params.to_string(), ParseLimits::default()).unwrap_or_else(|e| fail(e.to_string()));
    let list = params.as_array().unwrap_or_default();
    match server.call_json(method, list, Dialect::Dsh) {
        Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("{method}: {e}"))),
        Err(_) => fail(format!("{method} {params:?} failed")),
    }
}

fn timed(server: &mut Archive, method: &str, params: &Value) -> f64 {
    let params = Json::parse(&params.to_string(), ParseLimits::default()).unwrap_or_else(|e| fail(e.to_string()));
    let list = params.as_array().unwrap_or_default();
    let start = Instant::now();
    let answer = server.call_json(method, list, Dialect::Dsh);
    let ms = start.elapsed().as_secs_f64() * 1e3;
    if answer.is_err() {
        fail(format!("{method} failed"));
    }
    ms
}

/// Resident and peak resident set size in bytes (Linux `/proc`; zero elsewhere).
fn rss() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn percentile(samples: &[f64], p: f64) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn summary(samples: &[f64]) -> Value {
    json!({
        "n": samples.len(),
        "p50": percentile(samples, 50.0),
        "p95": percentile(samples, 95.0),
        "max": percentile(samples, 100.0),
        "mean": samples.iter().sum::<f64>() / samples.len().max(1) as f64,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [corpus, backend, runs, out] = args.as_slice() else {
        fail("usage: bench CORPUS_DIR tantivy|sqlite RUNS OUT.json".into())
    };
    let runs: usize = runs.parse().unwrap_or_else(|_| fail("RUNS must be a number".into()));
    let read = |name: &str| -> Value {
        let text = std::fs::read_to_string(format!("{corpus}/{name}")).unwrap_or_else(|e| fail(format!("{name}: {e}")));
        serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("{name}: {e}")))
    };
    let manifest = read("manifest.json");
    let queries = read("queries.json");
    let queries = queries.as_array().cloned().unwrap_or_default();
    let fallback = manifest["largestSession"]["id"].clone();

    let mut server = Archive::default();
    let (rss_start, _) = rss();
    let start = Instant::now();
    let report = call(
        &mut server,
        "load",
        json!([[format!("{corpus}/root")], { "backend": backend }]),
    );
    let load_ms = start.elapsed().as_secs_f64() * 1e3;
    if report["failures"].as_array().is_some_and(|f| !f.is_empty()) {
        fail(format!("load failures: {}", report["failures"]));
    }
    let (rss_loaded, _) = rss();
    let start = Instant::now();
    call(&mut server, "searchSessions", json!([{ "query": "zzyzx qwertyuiop" }]));
    let index_ms = start.elapsed().as_secs_f64() * 1e3;
    let (rss_indexed, peak) = rss();

    let mut pages = Vec::new();
    let mut plan = Vec::new();
    for q in &queries {
        let query = q["query"].clone();
        let sessions = call(&mut server, "searchSessions", json!([{ "query": query }]));
        let session_id = sessions["items"][0]["header"]["id"]
            .as_str()
            .map_or(fallback.clone(), |id| json!(id));
        let events = call(
            &mut server,
            "searchEvents",
            json!([{ "sessionId": session_id, "query": query }]),
        );
        pages.push(json!({
            "query": query, "category": q["category"], "sessions": sessions,
            "eventsSession": session_id, "events": events,
        }));
        plan.push((
            json!([{ "query": query }]),
            json!([{ "sessionId": session_id, "query": query }]),
            Vec::new(),
            Vec::new(),
        ));
    }
    for _ in 0..runs {
        for (sessions, events, s, e) in &mut plan {
            s.push(timed(&mut server, "searchSessions", sessions));
            e.push(timed(&mut server, "searchEvents", events));
        }
    }
    let all: Vec<f64> = plan.iter().flat_map(|p| p.2.iter().chain(&p.3).copied()).collect();
    let per_query: Vec<Value> = plan
        .iter()
        .zip(&pages)
        .map(|((_, _, s, e), page)| {
            json!({
                "query": page["query"], "category": page["category"],
                "sessionsMs": percentile(s, 50.0), "eventsMs": percentile(e, 50.0),
                "hits": page["sessions"]["items"].as_array().map_or(0, Vec::len),
            })
        })
        .collect();
    let result = json!({
        "engine": format!("native/{backend}"),
        "events": manifest["events"],
        "textBytes": manifest["textBytes"],
        "loadMs": load_ms,
        "indexMs": index_ms,
        "memory": {
            "rssLoadBytes": rss_loaded.saturating_sub(rss_start),
            "rssIndexBytes": rss_indexed.saturating_sub(rss_loaded),
            "rssTotal": rss_indexed,
            "rssPeak": peak,
        },
        "latency": {
            "all": summary(&all),
            "sessions": summary(&plan.iter().flat_map(|p| p.2.iter().copied()).collect::<Vec<_>>()),
            "events": summary(&plan.iter().flat_map(|p| p.3.iter().copied()).collect::<Vec<_>>()),
        },
        "perQuery": per_query,
        "pages": pages,
    });
    std::fs::write(out, result.to_string() + "\n").unwrap_or_else(|e| fail(format!("{out}: {e}")));
    println!(
        "native/{backend}: load {load_ms:.0} ms, index {index_ms:.0} ms, p50 {:.3} ms, p95 {:.3} ms",
        percentile(&all, 50.0),
        percentile(&all, 95.0)
    );
}
