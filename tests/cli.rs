//! The command-line program end to end: real processes on fixture logs.
#![cfg(not(target_arch = "wasm32"))]

use std::process::Command;

fn run(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_dsh-session-search"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/spec/{name}.jsonl", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn events_lists_labels_in_seq_order() {
    let (ok, stdout, _) = run(&["--archive", &fixture("compaction_shadows_prefix"), "events", "s-7-2"]);
    assert!(ok);
    let labels: Vec<&str> = stdout
        .lines()
        .map(|l| l.split_whitespace().nth(1).unwrap_or_default())
        .collect();
    assert_eq!(
        labels,
        [
            "shadowed", "shadowed", "current", "current", "log-only", "log-only", "current", "log-only", "current"
        ]
    );
}

#[test]
fn json_output_uses_dsh_wire_shapes() {
    let (ok, stdout, _) = run(&["--archive", &fixture("plain_appends"), "--json", "surface", "s-7-1"]);
    assert!(ok);
    let surface: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    assert_eq!(surface["session"]["id"], "s-7-1");
    assert_eq!(surface["capturedThroughSeq"], 6);
    assert_eq!(surface["events"].as_array().map(Vec::len), Some(2));
}

#[test]
fn report_shows_failures_with_stable_codes() {
    let (ok, stdout, _) = run(&[
        "--archive",
        &fixture("future_version"),
        "--archive",
        &fixture("plain_appends"),
        "report",
    ]);
    assert!(ok, "a non-strict load succeeds with failures in the report");
    assert!(stdout.contains("SESSION_LOAD_UNSUPPORTED_VERSION"), "{stdout}");
    assert!(stdout.contains("loaded 1 sessions"), "{stdout}");
}

#[test]
fn errors_print_the_code_and_exit_non_zero() {
    let (ok, _, stderr) = run(&["--archive", &fixture("plain_appends"), "events", "nope"]);
    assert!(!ok);
    assert!(stderr.contains("SESSION_QUERY_SESSION_NOT_FOUND"), "{stderr}");
    let (ok, stdout, _) = run(&[
        "--archive",
        &fixture("future_version"),
        "--strict",
        "--json",
        "sessions",
    ]);
    assert!(!ok);
    let error: serde_json::Value = serde_json::from_str(&stdout).expect("JSON error");
    assert_eq!(error["error"]["code"], "SESSION_QUERY_PERSISTENCE_FAILED");
}
