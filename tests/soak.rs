//! Under load: archives used from several threads at once answer as one used alone, and memory
//! returns to its baseline after many load / search / drop cycles (resident size stops growing:
//! whatever a cycle builds, dropping the archive gives back).
#![cfg(not(target_arch = "wasm32"))]

use dsh_session_search::api::{Archive, ArchiveOptions, Dialect};
use dsh_session_search::archive::Input;
use dsh_session_search::json::{Json, ParseLimits};
use std::sync::{Arc, Mutex};

/// Resident set size in bytes (`/proc/self/status`).
fn resident() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kb| kb.parse::<u64>().ok())
        .expect("VmRSS")
        * 1024
}

fn inputs() -> Vec<Input> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/spec");
    [
        "plain_appends",
        "compaction_shadows_prefix",
        "replacement_of_replacement",
        "tool_result_pruned",
    ]
    .iter()
    .map(|name| Input::File {
        name: format!("{name}.jsonl"),
        bytes: std::fs::read(format!("{dir}/{name}.jsonl")).expect("fixture"),
    })
    .collect()
}

/// The calls every cycle makes, by name with JSON params.
const CALLS: &[(&str, &str)] = &[
    ("listSessions", "[]"),
    ("searchSessions", r#"[{"query":"summary"}]"#),
    ("searchSessions", r#"[{"query":"tool","limit":1}]"#),
    ("searchEvents", r#"[{"sessionId":"s-7-2","query":"the"}]"#),
    ("listCandidates", r#"[{"id":"s-7-1"}]"#),
    ("readSurface", r#"["s-7-3"]"#),
];

/// Loads the fixtures into a fresh archive and answers [`CALLS`] (ids of `prepare` messages
/// are fixed so answers compare).
fn cycle() -> Vec<String> {
    let mut archive = Archive::new(ArchiveOptions::default());
    archive.load(inputs(), false).expect("loads");
    let mut answers: Vec<String> = CALLS
        .iter()
        .map(|(method, params)| call(&mut archive, method, params))
        .collect();
    answers.push(call(
        &mut archive,
        "prepare",
        r#"[{"id":"s-7-1"},[{"type":"text","text":"go"}],[{"sessionId":"s-7-2"}],{"messageId":"m","contextMessageId":"c"}]"#,
    ));
    answers
}

fn call(archive: &mut Archive, method: &str, params: &str) -> String {
    let params = Json::parse(params, ParseLimits::default()).expect("JSON");
    let params = params.as_array().unwrap_or_default();
    archive
        .call_json(method, params, Dialect::Dsh)
        .unwrap_or_else(|e| format!("error {}", e.code))
}

#[test]
fn threads_answer_as_one_thread_does_and_memory_returns_to_its_baseline() {
    let serial = cycle();
    assert!(serial.iter().all(|a| !a.starts_with("error")), "{serial:?}");
    // Several threads, each with its own archive, and one archive shared by all of them.
    let shared = Arc::new(Mutex::new({
        let mut archive = Archive::default();
        archive.load(inputs(), false).expect("loads");
        archive
    }));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || {
                let own = (0..5).map(|_| cycle()).collect::<Vec<_>>();
                let from_shared: Vec<String> = (0..20)
                    .flat_map(|_| CALLS)
                    .map(|(method, params)| call(&mut shared.lock().expect("not poisoned"), method, params))
                    .collect();
                (own, from_shared)
            })
        })
        .collect();
    for thread in threads {
        let (own, from_shared) = thread.join().expect("no panic");
        assert!(own.iter().all(|answers| *answers == serial));
        for (answer, expected) in from_shared.iter().zip(serial[..CALLS.len()].iter().cycle()) {
            assert_eq!(answer, expected);
        }
    }
    drop(shared);
    // Memory: warm-up cycles reach the allocator's working size; 100 more must not add to it.
    for _ in 0..20 {
        cycle();
    }
    let baseline = resident();
    for _ in 0..100 {
        cycle();
    }
    let grown = resident().saturating_sub(baseline);
    assert!(
        grown < 4 << 20,
        "resident size grew by {grown} bytes over 100 cycles (from {baseline})"
    );
}
