//! Hostile and damaged inputs: each gets its stable code in the load report while the valid
//! sessions loaded beside it stay available.
#![cfg(not(target_arch = "wasm32"))]

use crate::zstd_frame;
use dsh_session_search::archive::{Input, LoadOptions};
use dsh_session_search::corpus::{Corpus, LoadReport};
use dsh_session_search::error::ErrorCode;
use dsh_session_search::json::Json;
use std::io::Write;

const CWD: &str = "/home/dev/app";
const PROJECT: &str = "--home-dev-app--";

fn header(id: &str) -> String {
    format!(
        r#"{{"type":"session","version":0,"id":"{id}","createdAt":1700000000000,"cwd":"{CWD}","delegationDepth":0}}"#
    )
}

/// One completed turn, one line per event.
fn turn_lines() -> Vec<String> {
    vec![
        r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#.into(),
        r#"{"type":"user/message","seq":1,"time":2,"data":{"id":"m1","role":"user","content":[{"type":"text","text":"hello"}],"source":{"kind":"user"}},"surfaceOp":"append"}"#.into(),
        r#"{"type":"turn/end","seq":2,"time":3,"data":{"turn":1,"reason":{"kind":"completed"}}}"#.into(),
    ]
}

fn raw_log(id: &str, lines: &[String]) -> Vec<u8> {
    let mut text = header(id) + "\n";
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    text.into_bytes()
}

/// DSH's zstd layout: the header in its own frame, then one frame per batch of lines.
fn zstd_log(id: &str, batches: &[&[String]]) -> Vec<u8> {
    let mut out = zstd_frame(format!("{}\n", header(id)).as_bytes());
    for batch in batches {
        let text: String = batch.iter().map(|l| format!("{l}\n")).collect();
        out.extend(zstd_frame(text.as_bytes()));
    }
    out
}

fn root_entry(id: &str, zstd: bool) -> String {
    format!("{PROJECT}/{id}/session.jsonl{}", if zstd { ".zstd" } else { "" })
}

fn load(inputs: Vec<Input>, options: LoadOptions) -> (Corpus, LoadReport) {
    let mut corpus = Corpus::new();
    let report = corpus.load(inputs, &options).expect("non-strict load");
    (corpus, report)
}

fn code_of(report: &LoadReport, path_part: &str) -> Option<ErrorCode> {
    report
        .failures
        .iter()
        .find(|f| f.path.contains(path_part))
        .map(|f| f.code)
}

/// Loads `bad` beside one valid session and returns the bad one's code.
fn code_beside_a_valid_session(bad_path: &str, bad: Vec<u8>, options: LoadOptions) -> Option<ErrorCode> {
    // The valid session uses the same encoding: a root holds one.
    let zstd = bad_path.ends_with(".zstd");
    let good = if zstd {
        zstd_log("good", &[&turn_lines()])
    } else {
        raw_log("good", &turn_lines())
    };
    let entries = vec![(root_entry("good", zstd), good), (bad_path.to_owned(), bad)];
    let (corpus, report) = load(
        vec![Input::Entries {
            name: "root".into(),
            entries,
        }],
        options,
    );
    assert!(
        corpus.get("good").is_some(),
        "the valid session must still load: {report:?}"
    );
    code_of(&report, bad_path)
}

#[test]
fn corrupt_checksum_is_a_corrupt_frame() {
    let mut bytes = zstd_log("bad", &[&turn_lines()]);
    let last = bytes.len() - 1;
    bytes[last] ^= 0xFF;
    assert_eq!(
        code_beside_a_valid_session(&root_entry("bad", true), bytes, LoadOptions::default()),
        Some(ErrorCode::LoadCorruptFrame)
    );
}

#[test]
fn truncated_final_frame_is_a_torn_tail_not_an_error() {
    let lines = turn_lines();
    let mut bytes = zstd_log("torn", &[&lines[..2], &lines[2..]]);
    // Cut the last frame (the `turn/end` batch) inside its first block.
    let last_frame = zstd_frame(format!("{}\n", lines[2]).as_bytes()).len();
    bytes.truncate(bytes.len() - last_frame + 10);
    let entries = vec![(root_entry("torn", true), bytes)];
    let (corpus, report) = load(
        vec![Input::Entries {
            name: "root".into(),
            entries,
        }],
        LoadOptions::default(),
    );
    assert!(report.failures.is_empty(), "{report:?}");
    let session = &report.sessions[0];
    assert!(session.torn_bytes > 0);
    // The turn left open by the torn frame is closed in memory.
    assert_eq!(session.synthetic_closers, 1);
    assert_eq!(
        corpus
            .list_events("torn")
            .expect("events")
            .last()
            .map(|e| e.kind.clone()),
        Some("turn/end".into())
    );
}

#[test]
fn a_file_without_one_complete_frame_has_no_header() {
    let bytes = zstd_log("bad", &[])[..6].to_vec();
    assert_eq!(
        code_beside_a_valid_session(&root_entry("bad", true), bytes, LoadOptions::default()),
        Some(ErrorCode::LoadInvalidHeader)
    );
}

#[test]
fn skippable_or_foreign_bytes_are_a_corrupt_frame() {
    let mut bytes = zstd_log("bad", &[&turn_lines()]);
    bytes.extend_from_slice(&[0x50, 0x2A, 0x4D, 0x18, 0, 0, 0, 0]);
    assert_eq!(
        code_beside_a_valid_session(&root_entry("bad", true), bytes, LoadOptions::default()),
        Some(ErrorCode::LoadCorruptFrame)
    );
}

#[test]
fn a_damaged_line_before_the_last_turn_end_is_damage() {
    let mut lines = turn_lines();
    lines.insert(2, "{\"type\":\"step/sta".into());
    assert_eq!(
        code_beside_a_valid_session(
            &root_entry("bad", false),
            raw_log("bad", &lines),
            LoadOptions::default()
        ),
        Some(ErrorCode::LoadDamaged)
    );
}

#[test]
fn a_damaged_line_after_the_last_turn_end_is_dropped() {
    let mut lines = turn_lines();
    lines.push("{\"type\":\"turn/sta".into());
    let entries = vec![(root_entry("ok", false), raw_log("ok", &lines))];
    let (corpus, report) = load(
        vec![Input::Entries {
            name: "root".into(),
            entries,
        }],
        LoadOptions::default(),
    );
    assert!(report.failures.is_empty(), "{report:?}");
    assert_eq!(corpus.list_events("ok").expect("events").len(), 3);
}

#[test]
fn a_foreign_version_is_refused_as_unsupported() {
    let bytes = raw_log("bad", &turn_lines());
    let text = String::from_utf8(bytes)
        .expect("utf8")
        .replacen("\"version\":0", "\"version\":2", 1);
    assert_eq!(
        code_beside_a_valid_session(&root_entry("bad", false), text.into_bytes(), LoadOptions::default()),
        Some(ErrorCode::LoadUnsupportedVersion)
    );
}

#[test]
fn an_unknown_required_event_type_is_refused() {
    let mut lines = turn_lines();
    lines.push(r#"{"type":"future/thing","seq":3,"time":4,"data":{}}"#.into());
    assert_eq!(
        code_beside_a_valid_session(
            &root_entry("bad", false),
            raw_log("bad", &lines),
            LoadOptions::default()
        ),
        Some(ErrorCode::LoadUnknownEventType)
    );
}

#[test]
fn a_header_in_the_wrong_directory_is_an_identity_mismatch() {
    let bytes = raw_log("someone-else", &turn_lines());
    assert_eq!(
        code_beside_a_valid_session(&root_entry("bad", false), bytes, LoadOptions::default()),
        Some(ErrorCode::LoadIdentityMismatch)
    );
}

#[test]
fn a_root_with_both_encodings_refuses_the_rarer_one() {
    let entries = vec![
        (root_entry("a", true), zstd_log("a", &[&turn_lines()])),
        (root_entry("b", true), zstd_log("b", &[&turn_lines()])),
        (root_entry("c", false), raw_log("c", &turn_lines())),
    ];
    let (corpus, report) = load(
        vec![Input::Entries {
            name: "root".into(),
            entries,
        }],
        LoadOptions::default(),
    );
    assert_eq!(code_of(&report, "/c/"), Some(ErrorCode::LoadLayout));
    assert!(corpus.get("a").is_some() && corpus.get("b").is_some());
}

#[test]
fn conflicting_headers_fail_only_that_id() {
    let first = raw_log("dup", &turn_lines());
    let second = String::from_utf8(raw_log("dup", &turn_lines()))
        .expect("utf8")
        .replace("1700000000000", "1700000000001");
    let inputs = vec![
        Input::File {
            name: "one.jsonl".into(),
            bytes: first,
        },
        Input::File {
            name: "two.jsonl".into(),
            bytes: second.into_bytes(),
        },
        Input::File {
            name: "other.jsonl".into(),
            bytes: raw_log("other", &turn_lines()),
        },
    ];
    let (corpus, report) = load(inputs, LoadOptions::default());
    assert_eq!(
        report.failures.iter().map(|f| f.code).collect::<Vec<_>>(),
        [ErrorCode::QuerySourceConflict]
    );
    assert_eq!(
        corpus.list_events("dup").err().map(|e| e.code),
        Some(ErrorCode::QuerySourceConflict)
    );
    assert!(corpus.get("other").is_some());
}

#[test]
fn an_identical_copy_is_a_duplicate_and_a_longer_copy_replaces() {
    let lines = turn_lines();
    let inputs = vec![
        Input::File {
            name: "short.jsonl".into(),
            bytes: raw_log("s", &lines[..1]),
        },
        Input::File {
            name: "long.jsonl".into(),
            bytes: raw_log("s", &lines),
        },
        Input::File {
            name: "again.jsonl".into(),
            bytes: raw_log("s", &lines),
        },
    ];
    let (corpus, report) = load(inputs, LoadOptions::default());
    let outcomes: Vec<&str> = report.sessions.iter().map(|s| s.outcome).collect();
    assert_eq!(outcomes, ["added", "replaced", "duplicate"]);
    assert_eq!(corpus.list_events("s").expect("events").len(), 3);
}

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        writer.start_file(*name, options).expect("entry");
        writer.write_all(bytes).expect("write");
    }
    writer.finish().expect("finish").into_inner()
}

#[test]
fn a_zip_with_junk_entries_loads_its_logs() {
    let root = raw_log("root", &turn_lines());
    let zip = zip_of(&[
        ("session.jsonl", &root),
        ("notes.txt", b"not a log"),
        ("media/sha256:00.png", b"\x89PNG"),
        ("../../etc/passwd.jsonl", b"garbage\n"),
    ]);
    let (corpus, report) = load(
        vec![Input::File {
            name: "export.zip".into(),
            bytes: zip,
        }],
        LoadOptions::default(),
    );
    assert!(corpus.get("root").is_some());
    assert_eq!(report.inputs[0].media, 1);
    // The traversal-looking name is only a name: it is read as a log and fails as one.
    assert_eq!(code_of(&report, "passwd"), Some(ErrorCode::LoadInvalidHeader));
}

#[test]
fn a_file_that_is_not_a_zip_is_an_invalid_archive() {
    let (_, report) = load(
        vec![Input::File {
            name: "broken.zip".into(),
            bytes: b"PK\x03\x04 not really".to_vec(),
        }],
        LoadOptions::default(),
    );
    assert_eq!(report.failures[0].code, ErrorCode::LoadInvalidArchive);
}

#[test]
fn decompression_bombs_hit_the_limit() {
    let small = LoadOptions {
        limits: dsh_session_search::log::ReadLimits {
            max_decompressed_bytes: 1 << 20,
            ..Default::default()
        },
        ..Default::default()
    };
    // A zstd log whose second frame expands to 8 MiB.
    let mut bomb = zstd_frame(format!("{}\n", header("bomb")).as_bytes());
    bomb.extend(zstd_frame(vec![b' '; 8 << 20].as_slice()));
    assert!(bomb.len() < 64 << 10);
    assert_eq!(
        code_beside_a_valid_session(&root_entry("bomb", true), bomb, small),
        Some(ErrorCode::LoadLimitExceeded)
    );
    // A ZIP entry that expands to 8 MiB.
    let zip = zip_of(&[("session.jsonl", &vec![b'\n'; 8 << 20])]);
    let (_, report) = load(
        vec![Input::File {
            name: "bomb.zip".into(),
            bytes: zip,
        }],
        small,
    );
    assert_eq!(report.failures[0].code, ErrorCode::LoadLimitExceeded);
}

#[test]
fn over_long_lines_and_deep_json_hit_their_limits() {
    let limits = dsh_session_search::log::ReadLimits {
        max_line_bytes: 1024,
        max_json_depth: 16,
        ..Default::default()
    };
    let options = LoadOptions {
        limits,
        ..Default::default()
    };
    let mut long = turn_lines();
    long.insert(
        2,
        format!(
            r#"{{"type":"todo/write","seq":2,"time":1,"data":{{"todos":[],"pad":"{}"}}}}"#,
            "x".repeat(2000)
        ),
    );
    assert_eq!(
        code_beside_a_valid_session(&root_entry("long", false), raw_log("long", &long), options),
        Some(ErrorCode::LoadLimitExceeded)
    );
    let mut deep = turn_lines();
    deep.insert(
        2,
        format!(
            r#"{{"type":"todo/write","seq":2,"time":1,"data":{}}}"#,
            "[".repeat(40) + &"]".repeat(40)
        ),
    );
    assert_eq!(
        code_beside_a_valid_session(&root_entry("deep", false), raw_log("deep", &deep), options),
        Some(ErrorCode::LoadLimitExceeded)
    );
}

#[test]
fn strict_mode_fails_the_whole_load_and_keeps_the_corpus() {
    let mut corpus = Corpus::new();
    let good = Input::File {
        name: "good.jsonl".into(),
        bytes: raw_log("good", &turn_lines()),
    };
    corpus.load(vec![good], &LoadOptions::default()).expect("loads");
    let bad = Input::File {
        name: "bad.jsonl".into(),
        bytes: b"not a log".to_vec(),
    };
    let other = Input::File {
        name: "other.jsonl".into(),
        bytes: raw_log("other", &turn_lines()),
    };
    let error = corpus
        .load(
            vec![bad, other],
            &LoadOptions {
                strict: true,
                ..Default::default()
            },
        )
        .expect_err("strict");
    assert_eq!(error.code, ErrorCode::QueryPersistenceFailed);
    assert!(corpus.get("other").is_none(), "a failed strict load publishes nothing");
    assert!(corpus.get("good").is_some());
}

#[test]
fn a_deep_line_fails_its_session_even_when_the_depth_limit_is_absurd() {
    let options = LoadOptions {
        limits: dsh_session_search::log::ReadLimits {
            max_json_depth: 1_000_000_000,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut lines = turn_lines();
    let deep = "[".repeat(50_000) + &"]".repeat(50_000);
    lines.insert(2, format!(r#"{{"type":"todo/write","seq":2,"time":1,"data":{deep}}}"#));
    assert_eq!(
        code_beside_a_valid_session(&root_entry("deep", false), raw_log("deep", &lines), options),
        Some(ErrorCode::LoadLimitExceeded)
    );
}

/// A line that is its event's printed text is read without the strings of members named
/// `text` or `arguments` (only their lengths). A refusal that printed such a value, or a
/// closer that copied one, panicked (found by fuzzing `log_raw`): each is now refused with its
/// code or printed from the line read in full.
#[test]
fn values_read_without_their_strings_are_never_printed_from_what_was_read() {
    let log = |id: &str, lines: &[&str]| raw_log(id, &lines.iter().map(|l| l.to_string()).collect::<Vec<_>>());
    let type_object = log("t", &[r#"{"type":{"text":"x"},"seq":0,"time":1,"data":{}}"#]);
    let code = code_beside_a_valid_session(&root_entry("t", false), type_object, LoadOptions::default());
    assert_eq!(code, Some(ErrorCode::LoadUnknownEventType));
    let call_id_object = log(
        "i",
        &[
            r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
            r#"{"type":"assistant/message","seq":1,"time":2,"data":{"turn":1,"step":1,"message":{"id":"m1","role":"assistant","content":[{"type":"tool-call","id":{"text":"x"},"name":"n","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}}},"surfaceOp":"append"}"#,
        ],
    );
    let code = code_beside_a_valid_session(&root_entry("i", false), call_id_object, LoadOptions::default());
    assert_eq!(code, Some(ErrorCode::LoadCorrupt), "its closer has no string call id");
    let open = log(
        "o",
        &[
            r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":{"text":"x"}}}"#,
            r#"{"type":"step/start","seq":1,"time":2,"data":{"turn":1,"step":{"arguments":"y"}}}"#,
        ],
    );
    let (corpus, report) = load(
        vec![Input::File {
            name: "o.jsonl".into(),
            bytes: open,
        }],
        LoadOptions::default(),
    );
    assert!(report.failures.is_empty(), "{report:?}");
    let events = corpus.read_session("o").expect("read").events;
    let closers: Vec<String> = events[2..].iter().map(Json::to_js_string).collect();
    assert_eq!(
        closers,
        [
            r#"{"type":"step/end","seq":2,"time":2,"data":{"turn":{"text":"x"},"step":{"arguments":"y"}}}"#,
            r#"{"type":"turn/end","seq":3,"time":2,"data":{"turn":{"text":"x"},"reason":{"kind":"interrupted"}}}"#,
        ]
    );
}
