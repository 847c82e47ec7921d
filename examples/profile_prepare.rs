//! Times `prepare` on every session of a generated bench corpus (or the named ones), for
//! profiling the reference path under `perf` or `callgrind`.
//!
//! `cargo run --release --example profile_prepare -- CORPUS_DIR REPEAT [SESSION_ID...]`. Each
//! source is prepared once as a warm-up, then `REPEAT` times with DSH's default budget
//! (65,536 bytes) by an agent that is another session; per source the median of the whole
//! `prepare`, of its `read_surface` and of `retain_source` alone are printed, slowest first.
//! Under callgrind, collect only the timed calls with
//! `--collect-atstart=no --toggle-collect='*timed_prepare*'`.

use dsh_session_search::api::{Archive, LoadCallOptions};
use dsh_session_search::json::{JsString, Json};
use dsh_session_search::reference::{
    PrepareOptions, ReferenceAgent, SessionReferenceInput, SourceSurface, prepare, retain_source,
};
use std::time::Instant;

fn fail(message: String) -> ! {
    eprintln!("profile_prepare: {message}");
    std::process::exit(2)
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(f64::NAN)
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// The calls being measured: kept out of line so a profiler can be told to collect only here.
#[inline(never)]
fn timed_prepare(archive: &Archive, agent: &ReferenceAgent, source: &str, repeat: usize) -> (f64, f64, f64, usize) {
    let corpus = archive.corpus();
    let references = [SessionReferenceInput {
        session_id: JsString::from(source),
        label: None,
    }];
    let content = Json::str("see the cited session");
    let mut whole = Vec::new();
    let mut read = Vec::new();
    let mut retain = Vec::new();
    let mut bytes = 0;
    for _ in 0..repeat {
        let start = Instant::now();
        let prepared = prepare(corpus, agent, &content, &references, &PrepareOptions::default())
            .unwrap_or_else(|e| fail(format!("prepare {source}: {}", e.message)));
        whole.push(ms(start));
        bytes = prepared.context_text().map_or(0, str::len);
        let start = Instant::now();
        let snapshot = corpus
            .read_surface(source)
            .unwrap_or_else(|e| fail(format!("read {source}: {}", e.message)));
        read.push(ms(start));
        let start = Instant::now();
        std::hint::black_box(
            retain_source(&SourceSurface::from(&snapshot), &JsString::from(source), 65_536)
                .unwrap_or_else(|e| fail(format!("retain {source}: {}", e.message))),
        );
        retain.push(ms(start));
    }
    (median(whole), median(read), median(retain), bytes)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [corpus, repeat, chosen @ ..] = args.as_slice() else {
        fail("usage: profile_prepare CORPUS_DIR REPEAT [SESSION_ID...]".into())
    };
    let repeat: usize = repeat
        .parse()
        .unwrap_or_else(|_| fail("REPEAT must be a number".into()));
    let mut archive = Archive::default();
    let start = Instant::now();
    archive
        .load_paths(&[format!("{corpus}/root")], LoadCallOptions::default())
        .unwrap_or_else(|e| fail(e.message));
    eprintln!("loaded in {:.0} ms", ms(start));
    let ids: Vec<String> = archive
        .corpus()
        .list_sessions()
        .iter()
        .map(|record| record.header.id.clone())
        .collect();
    let sources: Vec<String> = if chosen.is_empty() {
        ids.clone()
    } else {
        chosen.to_vec()
    };
    let mut rows = Vec::new();
    for source in &sources {
        let agent_id = ids.iter().find(|id| *id != source).cloned().unwrap_or_default();
        let agent = ReferenceAgent::new(JsString::from(agent_id.as_str()), None);
        timed_prepare(&archive, &agent, source, 1);
        rows.push((source, timed_prepare(&archive, &agent, source, repeat)));
    }
    rows.sort_by(|a, b| b.1.0.total_cmp(&a.1.0));
    for (source, (whole, read, retain, bytes)) in &rows {
        println!(
            "{source}: prepare {whole:7.3} ms (read_surface {read:7.3}, retain_source {retain:7.3}), context {bytes} bytes"
        );
    }
}
