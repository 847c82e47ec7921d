//! The command-line program end to end: real processes on fixture logs, as a user runs them.
#![cfg(not(target_arch = "wasm32"))]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What one run of the binary did.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn ok(&self) -> bool {
        self.code == Some(0)
    }
}

fn run(args: &[&str]) -> Run {
    run_with_stdin(args, "")
}

fn run_with_stdin(args: &[&str], stdin: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-session-search"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = child.stdin.take().expect("stdin is piped");
    // A program that exits before reading (as `rpc` does when its load fails) closes the pipe.
    match input.write_all(stdin.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written.expect("stdin is written"),
    }
    drop(input);
    let output = child.wait_with_output().expect("the binary finishes");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/spec/{name}.jsonl", env!("CARGO_MANIFEST_DIR"))
}

/// The viewer's sample export: 25 sessions in a persistence-root layout.
fn sample_zip() -> String {
    format!("{}/www/sample/sample-archive.zip", env!("CARGO_MANIFEST_DIR"))
}

/// A fresh folder of this test's own under the system temp dir.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dsh-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temp path")
}

#[test]
fn events_lists_labels_in_seq_order() {
    let run = run(&["--archive", &fixture("compaction_shadows_prefix"), "events", "s-7-2"]);
    assert!(run.ok(), "{}", run.stderr);
    let labels: Vec<&str> = run
        .stdout
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
    let run = run(&["--archive", &fixture("plain_appends"), "--json", "surface", "s-7-1"]);
    assert!(run.ok(), "{}", run.stderr);
    let surface: serde_json::Value = serde_json::from_str(&run.stdout).expect("one JSON document");
    assert_eq!(surface["session"]["id"], "s-7-1");
    assert_eq!(surface["capturedThroughSeq"], 6);
    assert_eq!(surface["events"].as_array().map(Vec::len), Some(2));
}

#[test]
fn report_shows_failures_with_stable_codes() {
    let run = run(&[
        "--archive",
        &fixture("future_version"),
        "--archive",
        &fixture("plain_appends"),
        "report",
    ]);
    assert!(run.ok(), "a non-strict load succeeds with failures in the report");
    assert!(
        run.stdout.contains("SESSION_LOAD_UNSUPPORTED_VERSION"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("loaded 1 session (1 added, 0 replaced), 0 duplicates skipped, 1 failure"),
        "{}",
        run.stdout
    );
}

#[test]
fn errors_print_the_code_and_exit_non_zero() {
    let run1 = run(&["--archive", &fixture("plain_appends"), "events", "nope"]);
    assert_eq!(run1.code, Some(1));
    assert!(
        run1.stderr.contains("SESSION_QUERY_SESSION_NOT_FOUND"),
        "{}",
        run1.stderr
    );
    let run2 = run(&[
        "--archive",
        &fixture("future_version"),
        "--strict",
        "--json",
        "sessions",
    ]);
    assert_eq!(run2.code, Some(1));
    let error: serde_json::Value = serde_json::from_str(&run2.stdout).expect("JSON error");
    assert_eq!(error["error"]["code"], "SESSION_QUERY_PERSISTENCE_FAILED");
}

#[test]
fn a_missing_archive_is_named_on_stderr_and_fails() {
    let missing = scratch("missing").join("no-such-sessions");
    let run = run(&["--archive", text(&missing), "sessions"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(run.stdout, "");
    let line = format!("error SESSION_LOAD_IO: {}: ", missing.display());
    assert!(run.stderr.starts_with(&line), "{}", run.stderr);
}

#[test]
fn an_unloadable_archive_is_named_on_stderr_and_fails() {
    let dir = scratch("unloadable");
    let garbage = dir.join("notes.jsonl");
    std::fs::write(&garbage, "this is not a session log\n").expect("write");
    let listing = run(&["--archive", text(&garbage), "sessions"]);
    assert_eq!(listing.code, Some(1), "{}", listing.stderr);
    assert_eq!(listing.stdout, "");
    assert!(
        listing
            .stderr
            .contains(&format!("SESSION_LOAD_INVALID_HEADER: {}", garbage.display())),
        "{}",
        listing.stderr
    );
    // `report` still prints what it found, and still says the load failed.
    let report = run(&["--archive", text(&garbage), "report"]);
    assert_eq!(report.code, Some(1));
    assert!(
        report.stdout.contains("SESSION_LOAD_INVALID_HEADER"),
        "{}",
        report.stdout
    );
    assert!(
        report.stderr.contains("nothing loaded (1 failure)"),
        "{}",
        report.stderr
    );
}

#[test]
fn a_partial_load_prints_the_data_and_one_warning_line() {
    let missing = scratch("partial").join("gone.zip");
    let run = run(&[
        "--archive",
        text(&missing),
        "--archive",
        &fixture("plain_appends"),
        "sessions",
    ]);
    assert!(run.ok(), "{}", run.stderr);
    assert!(run.stdout.starts_with("s-7-1  "), "{}", run.stdout);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    let warning = format!(
        "warning: 1 failure while loading (first: SESSION_LOAD_IO: {}: ",
        missing.display()
    );
    assert!(run.stderr.starts_with(&warning), "{}", run.stderr);
}

#[test]
fn an_empty_folder_loads_nothing_and_says_so() {
    let dir = scratch("empty");
    let run = run(&["--archive", text(&dir), "sessions"]);
    assert!(run.ok(), "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("no session logs found"), "{}", run.stderr);
}

#[test]
fn commands_that_read_sessions_need_an_archive() {
    let run = run(&["sessions"]);
    assert_eq!(run.code, Some(2), "a usage error");
    assert!(run.stderr.contains("--archive PATH"), "{}", run.stderr);
}

#[test]
fn rpc_does_not_serve_an_empty_corpus_when_the_archive_failed() {
    let request = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"listSessions\",\"params\":[]}\n";
    let missing = scratch("rpc").join("none");
    let strict = run_with_stdin(&["rpc", "--strict", "--archive", text(&missing)], request);
    assert_eq!(strict.code, Some(1), "{}", strict.stderr);
    assert_eq!(strict.stdout, "", "nothing is served");
    assert!(
        strict.stderr.starts_with("error SESSION_QUERY_PERSISTENCE_FAILED: ") && strict.stderr.contains(text(&missing)),
        "{}",
        strict.stderr
    );
    let lenient = run_with_stdin(&["rpc", "--archive", text(&missing)], request);
    assert_eq!(lenient.code, Some(1));
    assert!(lenient.stderr.contains("SESSION_LOAD_IO"), "{}", lenient.stderr);
    // With something loaded, it serves.
    let serving = run_with_stdin(&["rpc", "--archive", &fixture("plain_appends")], request);
    assert!(serving.ok(), "{}", serving.stderr);
    let response: serde_json::Value = serde_json::from_str(&serving.stdout).expect("one response");
    assert_eq!(response["result"][0]["header"]["id"], "s-7-1");
}

fn json_report(args: &[&str]) -> (Run, serde_json::Value) {
    let run = run(args);
    assert!(run.ok(), "{}", run.stderr);
    let report = serde_json::from_str(&run.stdout).expect("one JSON report");
    (run, report)
}

fn outcomes(report: &serde_json::Value, outcome: &str) -> usize {
    let sessions = report["sessions"].as_array().expect("sessions");
    sessions.iter().filter(|s| s["outcome"] == outcome).count()
}

#[test]
fn the_same_archive_given_twice_loads_once() {
    let zip = sample_zip();
    let respelled = format!("{}/www/../www/sample/sample-archive.zip", env!("CARGO_MANIFEST_DIR"));
    let (run, report) = json_report(&[
        "--archive",
        &zip,
        "--archive",
        &zip,
        "--archive",
        &respelled,
        "--json",
        "report",
    ]);
    assert_eq!(report["failures"], serde_json::json!([]), "no SESSION_LOAD_LAYOUT");
    assert_eq!(outcomes(&report, "added"), 25);
    assert_eq!(report["inputs"].as_array().map(Vec::len), Some(1));
    assert!(
        run.stderr.contains(&format!("note: {zip} given twice; loaded once")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("note: {respelled} is {zip} given again; loaded once")),
        "{}",
        run.stderr
    );
}

#[test]
fn text_report_counts_the_outcomes_json_lists() {
    let copy = scratch("copy").join("copy.zip");
    std::fs::copy(sample_zip(), &copy).expect("copy");
    let args = ["--archive", &sample_zip(), "--archive", text(&copy)];
    let (_, report) = json_report(&[&args[..], &["--json", "report"]].concat());
    let (added, duplicates) = (outcomes(&report, "added"), outcomes(&report, "duplicate"));
    assert_eq!((added, duplicates), (25, 25), "two inputs holding the same sessions");
    let text_run = run(&[&args[..], &["report"]].concat());
    let summary = format!(
        "loaded {added} sessions ({added} added, {} replaced), {duplicates} duplicates skipped, 0 failures",
        outcomes(&report, "replaced")
    );
    assert!(text_run.stdout.lines().any(|l| l == summary), "{}", text_run.stdout);
}

#[test]
fn search_without_a_hit_says_so_on_stderr_and_exits_1() {
    let archive = fixture("plain_appends");
    let miss = run(&["--archive", &archive, "search", "zebra"]);
    assert_eq!(miss.code, Some(1));
    assert_eq!(miss.stdout, "");
    assert_eq!(miss.stderr, "no matches for \"zebra\"\n");
    let miss_json = run(&["--archive", &archive, "--json", "search", "zebra"]);
    assert_eq!(miss_json.code, Some(1));
    let page: serde_json::Value = serde_json::from_str(&miss_json.stdout).expect("the empty page");
    assert_eq!(page["items"], serde_json::json!([]));
    let cjk = run(&["--archive", &archive, "search", "分页"]);
    assert_eq!(cjk.code, Some(1));
    assert!(
        cjk.stderr.contains("(add --cjk to find words inside CJK or Thai text)"),
        "{}",
        cjk.stderr
    );
    let hit = run(&["--archive", &archive, "search", "hello"]);
    assert!(hit.ok(), "{}", hit.stderr);
    assert!(hit.stdout.starts_with("s-7-1  "), "{}", hit.stdout);
}

#[test]
fn text_prints_iso_times_and_json_keeps_epoch_ms() {
    let archive = fixture("plain_appends");
    let show = run(&["--archive", &archive, "show", "s-7-1"]);
    assert!(
        show.stdout.contains("created:     2023-11-14T22:13:20.000Z\n"),
        "{}",
        show.stdout
    );
    let events = run(&["--archive", &archive, "events", "s-7-1"]);
    let second = events.stdout.lines().nth(1).expect("two events");
    assert_eq!(second, "     1  current   2023-11-14T22:13:20.001Z  user/message");
    let sessions = run(&["--archive", &archive, "sessions"]);
    assert!(
        sessions.stdout.contains("  2023-11-14T22:13:20.000Z  "),
        "{}",
        sessions.stdout
    );
    let json = run(&["--archive", &archive, "--json", "events", "s-7-1"]);
    let events: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON events");
    assert_eq!(events[1]["time"], 1_700_000_000_001_i64);
}

#[test]
fn choices_are_checked_by_the_argument_parser() {
    let archive = fixture("compaction_shadows_prefix");
    let bad_surface = run(&["--archive", &archive, "search", "x", "--surface", "hidden"]);
    assert_eq!(bad_surface.code, Some(2));
    assert!(
        bad_surface
            .stderr
            .contains("[possible values: current, shadowed, log-only]"),
        "{}",
        bad_surface.stderr
    );
    for args in [
        &["search", "x", "--backend", "lucene"][..],
        &["search", "x", "--backend", "scan", "--index", "/tmp/x.db"],
        &["prepare", "--agent", "a", "--text", "t", "--order", "random"],
        &["uri", "flip", "x"],
    ] {
        let run = run(&[&["--archive", archive.as_str()][..], args].concat());
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
    }
    let filtered = run(&[
        "--archive",
        &archive,
        "filter",
        "--session",
        "s-7-2",
        "--surface",
        "shadowed",
    ]);
    assert!(filtered.ok(), "{}", filtered.stderr);
    let labels: Vec<&str> = filtered
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(labels, ["shadowed", "shadowed"], "{}", filtered.stdout);
    let uri = run(&["uri", "encode", "s-7-2"]);
    let decoded = run(&["uri", "decode", uri.stdout.trim_end()]);
    assert!(uri.stdout.starts_with("dsh-session:"), "{}", uri.stdout);
    assert_eq!(decoded.stdout, "s-7-2\n");
}

/// A character a terminal would act on rather than show (newline is the layout's own).
fn is_terminal_control(c: char) -> bool {
    c != '\n' && (c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c))
}

#[test]
fn control_characters_from_session_data_are_shown_not_sent() {
    let archive = format!(
        "{}/tests/fixtures/cli/control_characters.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let id = "s-esc\u{1b}[31m";
    let commands: [&[&str]; 9] = [
        &["sessions"],
        &["show", id],
        &["events", id],
        &["event", id, "1"],
        &["surface", id],
        &["trace", id],
        &["filter", "--session", id, "--text", "needle"],
        &["search", "needle"],
        &["search", "needle", "--session", id],
    ];
    for command in commands {
        let run = run(&[&["--archive", archive.as_str()][..], command].concat());
        assert!(run.ok(), "{command:?}: {}", run.stderr);
        let raw: Vec<char> = run.stdout.chars().filter(|&c| is_terminal_control(c)).collect();
        assert_eq!(raw, [], "{command:?} printed {:?}", run.stdout);
        // Event types are the format's own words; every other view shows data with an ESC
        // (`event` prints the event as JSON, so as JSON escapes it).
        let shows_data = command[0] != "events";
        let shown = run.stdout.contains("\\u{1b}") || run.stdout.contains("\\u001b");
        assert!(!shows_data || shown, "{command:?} shows the escape: {}", run.stdout);
    }
    let show = run(&["--archive", &archive, "show", id]);
    assert!(
        show.stdout
            .contains("cwd:         /tmp/\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\n"),
        "{}",
        show.stdout
    );
    let surface = run(&["--archive", &archive, "surface", id]);
    assert!(
        surface
            .stdout
            .contains("needle \\u{1b}[1;31mred\\u{0}nul\\u{7f}del\\u{9b}csi"),
        "{}",
        surface.stdout
    );
    // JSON keeps the data, escaped as JSON escapes it.
    let json = run(&["--archive", &archive, "--json", "show", id]);
    let body: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(body["session"]["cwd"], "/tmp/\u{1b}]0;pwned\u{7}\u{1b}[2J");
}

#[test]
fn load_limits_are_set_from_the_command_line_and_checked() {
    let log = fixture("plain_appends");
    let tight = run(&["--archive", &log, "--load-limit", "maxLineBytes=16", "--json", "report"]);
    assert!(!tight.ok(), "nothing loaded: {}", tight.stderr);
    assert!(tight.stdout.contains("SESSION_LOAD_LIMIT_EXCEEDED"), "{}", tight.stdout);
    let roomy = run(&["--archive", &log, "--load-limit", "maxLineBytes=1048576", "sessions"]);
    assert!(roomy.ok(), "{}", roomy.stderr);
    for bad in ["maxLineByte=5", "maxLineBytes", "maxLineBytes=-1"] {
        let refused = run(&["--archive", &log, "--load-limit", bad, "sessions"]);
        assert!(!refused.ok());
        assert!(
            refused.stderr.contains("SESSION_INVALID_ARGUMENT"),
            "{bad}: {}",
            refused.stderr
        );
    }
}

#[test]
fn rpc_answers_a_line_that_is_not_utf8_and_keeps_serving() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-session-search"))
        .args(["--archive", &fixture("plain_appends"), "rpc"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = child.stdin.take().expect("stdin is piped");
    input
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}\n")
        .expect("written");
    input.write_all(b"null\n").expect("written");
    input
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"listSessions\",\"params\":[]}\n")
        .expect("written");
    drop(input);
    let output = child.wait_with_output().expect("the binary finishes");
    assert!(output.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(output.stdout)
        .expect("responses are UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["error"]["code"], -32700);
    assert_eq!(lines[1]["error"]["code"], -32600);
    assert_eq!(lines[2]["result"][0]["header"]["id"], "s-7-1");
}
