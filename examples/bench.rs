//! Native benchmark harness for `make bench` (tests/bench/): loads a generated persistence root
//! through the typed API's method table, builds the index with one backend and times DSH's search calls.
//!
//! `cargo run --release --example bench -- CORPUS_DIR PLAN.json BACKEND RUNS REPS OUT.json` with
//! `BACKEND` `tantivy` or `sqlite` (in memory). The protocol is `tests/bench/lib/protocol.mjs`'s:
//! a warm-up pass records each query's first pages (`searchSessions`, then `searchEvents` in the
//! session of the first hit, else the largest session), then `RUNS` timed passes; then `REPS`
//! timed `prepare` calls for the plan's one and three sources, and the appendLive step (the
//! plan's source session made live, one event appended and searched for, `REPS` times). Times
//! include serializing the answer to JSON text, as every face returns it.

use dsh_session_search::api::{Archive, Dialect};
use dsh_session_search::json::{Json, ParseLimits};
use serde_json::{Value, json};
use std::time::Instant;

/// The first search, as `tests/bench/lib/protocol.mjs`'s `FIRST_QUERY`: one common word.
const FIRST_QUERY: &str = "error";

fn fail(message: String) -> ! {
    eprintln!("bench: {message}");
    std::process::exit(2)
}

/// Calls `method` with by-position `params`: the milliseconds it took (serializing the answer
/// to JSON text included) and the answer.
fn timed_call(server: &mut Archive, method: &str, params: &Value) -> (f64, Value) {
    let params = Json::parse(&params.to_string(), ParseLimits::default()).unwrap_or_else(|e| fail(e.to_string()));
    let list = params.as_array().unwrap_or_default();
    let start = Instant::now();
    let answer = server.call_json(method, list, Dialect::Dsh);
    let ms = elapsed_ms(start);
    match answer {
        Ok(text) => (
            ms,
            serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("{method}: {e}"))),
        ),
        Err(_) => fail(format!("{method} {params:?} failed")),
    }
}

fn call(server: &mut Archive, method: &str, params: Value) -> Value {
    timed_call(server, method, &params).1
}

fn timed(server: &mut Archive, method: &str, params: &Value) -> f64 {
    timed_call(server, method, params).0
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

/// Per category (in first-seen order): summaries of both methods, and of each.
fn categories(plan: &[QueryPlan]) -> Value {
    let mut names: Vec<&str> = Vec::new();
    for p in plan {
        if !names.contains(&p.category.as_str()) {
            names.push(&p.category);
        }
    }
    let mut out = serde_json::Map::new();
    for name in names {
        let of = |pick: &dyn Fn(&QueryPlan) -> Vec<f64>| -> Vec<f64> {
            plan.iter().filter(|p| p.category == name).flat_map(pick).collect()
        };
        out.insert(
            name.to_owned(),
            json!({
                "all": summary(&of(&|p| [p.s.clone(), p.e.clone()].concat())),
                "sessions": summary(&of(&|p| p.s.clone())),
                "events": summary(&of(&|p| p.e.clone())),
            }),
        );
    }
    Value::Object(out)
}

/// One query of the protocol: its requests and timed samples.
struct QueryPlan {
    category: String,
    sessions: Value,
    events: Value,
    s: Vec<f64>,
    e: Vec<f64>,
}

/// The query protocol: first pages from the warm-up pass, then `runs` timed passes.
fn run_queries(server: &mut Archive, queries: &[Value], fallback: &Value, runs: usize) -> Value {
    let mut pages = Vec::new();
    let mut plan = Vec::new();
    for q in queries {
        let query = q["query"].clone();
        let sessions = call(server, "searchSessions", json!([{ "query": query }]));
        let session_id = sessions["items"][0]["header"]["id"]
            .as_str()
            .map_or(fallback.clone(), |id| json!(id));
        let events = call(
            server,
            "searchEvents",
            json!([{ "sessionId": session_id, "query": query }]),
        );
        pages.push(json!({
            "query": query, "category": q["category"], "sessions": sessions,
            "eventsSession": session_id, "events": events,
        }));
        plan.push(QueryPlan {
            category: q["category"].as_str().unwrap_or_default().to_owned(),
            sessions: json!([{ "query": query }]),
            events: json!([{ "sessionId": session_id, "query": query }]),
            s: Vec::new(),
            e: Vec::new(),
        });
    }
    for _ in 0..runs {
        for p in &mut plan {
            p.s.push(timed(server, "searchSessions", &p.sessions));
            p.e.push(timed(server, "searchEvents", &p.events));
        }
    }
    let per_query: Vec<Value> = plan
        .iter()
        .zip(&pages)
        .map(|(p, page)| {
            json!({
                "query": page["query"], "category": page["category"],
                "sessionsMs": percentile(&p.s, 50.0), "eventsMs": percentile(&p.e, 50.0),
                "hits": page["sessions"]["items"].as_array().map_or(0, Vec::len),
            })
        })
        .collect();
    let all: Vec<f64> = plan.iter().flat_map(|p| p.s.iter().chain(&p.e).copied()).collect();
    let sessions: Vec<f64> = plan.iter().flat_map(|p| p.s.iter().copied()).collect();
    let events: Vec<f64> = plan.iter().flat_map(|p| p.e.iter().copied()).collect();
    json!({
        "latency": {
            "all": summary(&all), "sessions": summary(&sessions), "events": summary(&events),
            "categories": categories(&plan),
        },
        "perQuery": per_query,
        "pages": pages,
    })
}

/// Replaces the (random) id of every context message, as `withoutContextIds` in protocol.mjs.
fn without_context_ids(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(without_context_ids).collect()),
        Value::Object(object) => {
            let is_context = value["source"]["kind"] == "session-reference";
            let fields = object.iter().map(|(k, v)| {
                let v = if is_context && k == "id" {
                    json!("<context id>")
                } else {
                    without_context_ids(v)
                };
                (k.clone(), v)
            });
            Value::Object(fields.collect())
        }
        other => other.clone(),
    }
}

/// `reps` timed `prepare` calls for the plan's one and three sources; DSH's fields of the first.
fn run_prepare(server: &mut Archive, plan: &Value, reps: usize) -> Value {
    let p = &plan["prepare"];
    let mut out = serde_json::Map::new();
    for name in ["one", "three"] {
        let params = json!([p["agent"], p["content"], p[name]]);
        let (ms, first) = timed_call(server, "prepare", &params);
        let rest = (1..reps.max(1)).map(|_| timed(server, "prepare", &params));
        let samples: Vec<f64> = std::iter::once(ms).chain(rest).collect();
        let fields = json!({ "content": first["content"], "additionalContext": first["additionalContext"] });
        out.insert(
            name.to_owned(),
            json!({
                "ms": summary(&samples),
                "sources": p[name].as_array().map_or(0, Vec::len),
                "result": without_context_ids(&fields),
            }),
        );
    }
    Value::Object(out)
}

/// The event appended in repetition `i` after `last`, as `liveEvent` in protocol.mjs.
fn live_event(live: &Value, last: &Value, i: u64) -> Value {
    let seq = last["seq"].as_u64().unwrap_or_default() + 1 + i;
    let time = last["time"].as_f64().unwrap_or_default() + 1.0 + i as f64;
    let text = format!(
        "{} {}{i}",
        live["text"].as_str().unwrap_or_default(),
        live["token"].as_str().unwrap_or_default()
    );
    json!({
        "type": "user/message", "seq": seq, "time": time, "surfaceOp": "append",
        "data": { "id": format!("bench-live-{i}"), "role": "user", "content": [{ "type": "text", "text": text }], "source": { "kind": "user" } },
    })
}

fn elapsed_ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// The appendLive protocol of protocol.mjs (`runAppendLive`).
fn run_append_live(server: &mut Archive, plan: &Value, reps: usize) -> Value {
    let live = &plan["live"];
    let source = call(server, "readSession", json!([live["sourceId"]]));
    let mut header = source["session"].clone();
    header["id"] = live["id"].clone();
    let events = source["events"].clone();
    let start = Instant::now();
    call(server, "addLive", json!([header, events]));
    let add_live_ms = elapsed_ms(start);
    let start = Instant::now();
    call(server, "searchSessions", json!([{ "query": live["token"] }]));
    let index_live_ms = elapsed_ms(start);
    let last = events.as_array().and_then(|e| e.last()).cloned().unwrap_or_default();
    let (mut append, mut search, mut total, mut found) = (Vec::new(), Vec::new(), Vec::new(), 0);
    for i in 0..reps.max(1) as u64 {
        let params = json!([live["id"], [live_event(live, &last, i)]]);
        let query = json!([{ "query": format!("{}{i}", live["token"].as_str().unwrap_or_default()) }]);
        let start = Instant::now();
        call(server, "appendLive", params);
        let appended = elapsed_ms(start);
        let page = call(server, "searchSessions", query);
        let done = elapsed_ms(start);
        append.push(appended);
        search.push(done - appended);
        total.push(done);
        found += usize::from(page["items"][0]["header"]["id"] == live["id"]);
    }
    json!({
        "liveEvents": events.as_array().map_or(0, Vec::len),
        "addLiveMs": add_live_ms, "indexLiveMs": index_live_ms,
        "appendMs": summary(&append), "searchAfterMs": summary(&search), "totalMs": summary(&total),
        "found": found, "reps": total.len(),
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [corpus, plan, backend, runs, reps, out] = args.as_slice() else {
        fail("usage: bench CORPUS_DIR PLAN.json tantivy|sqlite RUNS REPS OUT.json".into())
    };
    let number = |text: &str| -> usize { text.parse().unwrap_or_else(|_| fail(format!("{text}: not a number"))) };
    let (runs, reps) = (number(runs), number(reps));
    let read = |path: &str| -> Value {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| fail(format!("{path}: {e}")));
        serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("{path}: {e}")))
    };
    let manifest = read(&format!("{corpus}/manifest.json"));
    let queries = read(&format!("{corpus}/queries.json"));
    let plan = read(plan);
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
    let load_ms = elapsed_ms(start);
    if report["failures"].as_array().is_some_and(|f| !f.is_empty()) {
        fail(format!("load failures: {}", report["failures"]));
    }
    let (rss_loaded, _) = rss();
    let index_start = Instant::now();
    call(&mut server, "searchSessions", json!([{ "query": FIRST_QUERY }]));
    let index_ms = elapsed_ms(index_start);
    let first_result_ms = elapsed_ms(start);
    let (rss_indexed, _) = rss();

    let mut result = run_queries(&mut server, &queries, &fallback, runs);
    let prepare = run_prepare(&mut server, &plan, reps);
    let append_live = run_append_live(&mut server, &plan, reps);
    let (_, peak) = rss();
    let fields = json!({
        "engine": format!("native/{backend}"),
        "events": manifest["events"],
        "textBytes": manifest["textBytes"],
        "loadMs": load_ms,
        "indexMs": index_ms,
        "firstResultMs": first_result_ms,
        "memory": {
            "rssLoadBytes": rss_loaded.saturating_sub(rss_start),
            "rssIndexBytes": rss_indexed.saturating_sub(rss_loaded),
            "rssTotal": rss_indexed,
            "rssPeak": peak,
        },
        "prepare": prepare,
        "appendLive": append_live,
    });
    if let (Value::Object(result), Value::Object(fields)) = (&mut result, fields) {
        result.extend(fields);
    }
    std::fs::write(out, result.to_string() + "\n").unwrap_or_else(|e| fail(format!("{out}: {e}")));
    println!(
        "native/{backend}: load {load_ms:.0} ms, index {index_ms:.0} ms, p50 {:.3} ms, p95 {:.3} ms, prepare {:.1} / {:.1} ms, appendLive {:.1} ms, peak RSS {} MB",
        result["latency"]["all"]["p50"].as_f64().unwrap_or(f64::NAN),
        result["latency"]["all"]["p95"].as_f64().unwrap_or(f64::NAN),
        result["prepare"]["one"]["ms"]["p50"].as_f64().unwrap_or(f64::NAN),
        result["prepare"]["three"]["ms"]["p50"].as_f64().unwrap_or(f64::NAN),
        result["appendLive"]["totalMs"]["p50"].as_f64().unwrap_or(f64::NAN),
        peak / 1_000_000
    );
}
