//! Loads a generated bench corpus and builds its search index, timing the two apart, for
//! profiling ingest under `perf` or `callgrind` (the full benchmark is `examples/bench.rs`);
//! then exports the index as a snapshot and reopens it, as the viewer does to skip indexing
//! next time, and times those too. With the tantivy backend it first times one search asked
//! while the build is under way (answered by reading the corpus), as an app's first search is
//! when it builds the index in the background.
//!
//! `cargo run --release --example profile_index -- CORPUS_DIR [BACKEND] [QUERY]` with `BACKEND`
//! `tantivy` (default) or `sqlite` (in memory), and `QUERY` that search's phrase (by default
//! one that is nowhere, as the bench's first search). Under callgrind, collect only the build with
//! `--collect-atstart=no --toggle-collect='*build_index*'` (or `*load_root*` for the load,
//! `*search_while_building*` for that search).

use dsh_session_search::api::{Archive, Dialect};
use dsh_session_search::json::{Json, ParseLimits};
use dsh_session_search::search::request::{SearchConfig, SessionSearchRequest};
use std::time::Instant;

fn fail(message: String) -> ! {
    eprintln!("profile_index: {message}");
    std::process::exit(2)
}

#[inline(never)]
fn load_root(archive: &mut Archive, root: &str, backend: &str) {
    let params = format!("[[{}], {{\"backend\": \"{backend}\"}}]", Json::str(root));
    let params = Json::parse(&params, ParseLimits::default()).unwrap_or_else(|e| fail(e.to_string()));
    archive
        .call_json("load", params.as_array().unwrap_or_default(), Dialect::Dsh)
        .unwrap_or_else(|e| fail(format!("load: {}", e.message)));
}

#[inline(never)]
fn build_index(archive: &mut Archive) {
    let progress = archive
        .index_step(u64::MAX)
        .unwrap_or_else(|e| fail(format!("index: {}", e.message)));
    assert!(progress.done, "an unbounded step finishes the build");
    eprintln!("{} events in {} sessions", progress.events_done, progress.sessions_done);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [corpus, rest @ ..] = args.as_slice() else {
        fail("usage: profile_index CORPUS_DIR [BACKEND] [QUERY]".to_owned())
    };
    let backend = rest.first().map_or("tantivy", String::as_str);
    let query = rest.get(1).map_or(NOWHERE, String::as_str);
    let mut archive = Archive::default();
    let start = Instant::now();
    load_root(&mut archive, &format!("{corpus}/root"), backend);
    let loaded = start.elapsed();
    if backend == "tantivy" {
        search_while_building(&mut archive, query);
    }
    let building = Instant::now();
    build_index(&mut archive);
    let indexed = building.elapsed();
    eprintln!(
        "load {:.0} ms, index {:.0} ms",
        loaded.as_secs_f64() * 1e3,
        indexed.as_secs_f64() * 1e3
    );
    if backend == "tantivy" {
        export_and_reopen(&mut archive);
    }
}

/// The bench's first search: a phrase that is nowhere, so every text is looked at.
const NOWHERE: &str = "zzyzx qwertyuiop";

/// One search after the smallest build step (by default for [`NOWHERE`]).
#[inline(never)]
fn search_while_building(archive: &mut Archive, query: &str) {
    let progress = archive
        .index_step(1)
        .unwrap_or_else(|e| fail(format!("index: {}", e.message)));
    assert!(!progress.done, "the build is under way");
    let request =
        SessionSearchRequest::new(query, Vec::new(), 20, &SearchConfig::default()).unwrap_or_else(|e| fail(e.message));
    let start = Instant::now();
    let page = archive
        .search_sessions(&request)
        .unwrap_or_else(|e| fail(format!("search: {}", e.message)));
    assert!(query != NOWHERE || page.items.is_empty(), "a phrase that is nowhere");
    eprintln!(
        "search for {query:?} during the build {:.0} ms, {} sessions on its page",
        start.elapsed().as_secs_f64() * 1e3,
        page.items.len()
    );
}

#[inline(never)]
fn export_and_reopen(archive: &mut Archive) {
    let start = Instant::now();
    let bytes = archive
        .export_index()
        .unwrap_or_else(|e| fail(format!("export: {}", e.message)));
    let exported = start.elapsed();
    archive
        .import_index(&bytes)
        .unwrap_or_else(|e| fail(format!("import: {}", e.message)));
    eprintln!(
        "snapshot {:.1} MB: export {:.0} ms, reopen {:.0} ms",
        bytes.len() as f64 / 1e6,
        exported.as_secs_f64() * 1e3,
        (start.elapsed() - exported).as_secs_f64() * 1e3
    );
}
