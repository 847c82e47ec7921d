//! Golden fixtures: the spec's worked examples and invalid logs, each loaded and compared with
//! `tests/fixtures/expected/<name>.json`. `UPDATE_EXPECT=1 cargo test --test integration golden::`
//! rewrites them.
#![cfg(not(target_arch = "wasm32"))]

use dsh_session_search::archive::{Input, LoadOptions};
use dsh_session_search::corpus::Corpus;
use serde_json::{Value, json};
use std::path::Path;

/// What a fixture's load looks like: labels and surface, or the failure code.
fn observe(name: &str, bytes: Vec<u8>) -> Value {
    let mut corpus = Corpus::new();
    let report = corpus
        .load(
            vec![Input::File {
                name: name.into(),
                bytes,
            }],
            &LoadOptions::default(),
        )
        .expect("a non-strict load never fails as a whole");
    if let Some(failure) = report.failures.first() {
        return json!({ "failure": failure.code.as_str() });
    }
    let session = &report.sessions[0];
    let id = &session.session_id;
    let entry = corpus.get(id).expect("loaded session");
    let events: Vec<Value> = corpus
        .list_events(id)
        .expect("events")
        .iter()
        .map(|e| json!(format!("{} {} {}", e.seq, e.kind, e.surface.as_str())))
        .collect();
    let synthetic: Vec<Value> = entry.log.events[entry.log.events.len() - session.synthetic_closers..]
        .iter()
        .map(|e| serde_json::from_str(&e.text()).expect("valid JSON"))
        .collect();
    json!({
        "events": events,
        "surface": entry.log.surface.nodes,
        "replaceGeneration": entry.log.surface.replace_generation(),
        "tornBytes": session.torn_bytes,
        "syntheticClosers": synthetic,
    })
}

fn check(name: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let bytes = std::fs::read(root.join("spec").join(format!("{name}.jsonl"))).expect("fixture exists");
    let actual = observe(&format!("{name}.jsonl"), bytes);
    let expected_path = root.join("expected").join(format!("{name}.json"));
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::create_dir_all(expected_path.parent().expect("parent")).expect("mkdir");
        std::fs::write(
            &expected_path,
            serde_json::to_string_pretty(&actual).expect("json") + "\n",
        )
        .expect("write");
        return;
    }
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(&expected_path).unwrap_or_else(|_| panic!("missing {}", expected_path.display())),
    )
    .expect("expected file is JSON");
    assert_eq!(actual, expected, "{name} differs from {}", expected_path.display());
}

macro_rules! golden {
    ($($name:ident),* $(,)?) => { $( #[test] fn $name() { check(stringify!($name)); } )* };
}

golden!(
    plain_appends,
    compaction_shadows_prefix,
    replacement_of_replacement,
    tool_result_pruned,
    invalid_start_after_end,
    invalid_replaces_shadowed_seq,
    invalid_sources_miss_a_node,
    invalid_replace_without_sources,
    invalid_empty_sources_on_user,
    invalid_duplicate_source,
    invalid_source_not_earlier,
    invalid_missing_surface_op,
    invalid_marker_on_turn_end,
    invalid_tool_result_covers_two,
    invalid_tool_result_replaces_user,
    invalid_extra_key_in_replace,
    invalid_seq_not_contiguous,
    spec_11_1_packed_chunks,
    spec_11_2_torn_tool_call,
    spec_11_3_ignorable_unknown,
    unknown_required_type,
    future_version,
);

/// A live session grown one event at a time folds exactly as the whole log does: same labels,
/// same surface; a surface violation fails at the event that makes it, leaving the session as
/// it was.
#[test]
fn appending_event_by_event_folds_like_the_whole_log() {
    use dsh_session_search::json::{Json, ParseLimits};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spec");
    let mut compared = 0;
    for name in [
        "compaction_shadows_prefix",
        "plain_appends",
        "replacement_of_replacement",
        "tool_result_pruned",
    ]
    .into_iter()
    .chain([
        "invalid_replaces_shadowed_seq",
        "invalid_start_after_end",
        "invalid_sources_miss_a_node",
    ]) {
        let text = std::fs::read_to_string(dir.join(format!("{name}.jsonl"))).expect("fixture");
        let mut lines = text
            .lines()
            .map(|l| Json::parse(l, ParseLimits::default()).expect("JSON"));
        let header = lines.next().expect("a header");
        let events: Vec<Json> = lines.collect();
        let mut whole = Corpus::new();
        let whole_error = whole.add_live(&header, events.clone()).err();
        let mut grown = Corpus::new();
        grown.add_live(&header, Vec::new()).expect("an empty live session");
        let id = header.get("id").and_then(Json::as_str).expect("id").to_owned();
        let mut grown_error = None;
        for (seq, event) in events.into_iter().enumerate() {
            if let Err(error) = grown.append_live(&id, vec![event]) {
                assert_eq!(
                    grown.list_events(&id).expect("still there").len(),
                    seq,
                    "{name}: unchanged"
                );
                grown_error = Some(error.code);
                break;
            }
        }
        assert_eq!(whole_error.map(|e| e.code), grown_error, "{name}");
        if grown_error.is_none() {
            let labels = |c: &Corpus| {
                let events = c.list_events(&id).expect("events");
                events.iter().map(|e| e.surface.as_str()).collect::<Vec<_>>()
            };
            assert_eq!(labels(&whole), labels(&grown), "{name}");
            let surface = |c: &Corpus| serde_json::to_string(&c.read_surface(&id).expect("surface")).expect("JSON");
            assert_eq!(surface(&whole), surface(&grown), "{name}");
            compared += 1;
        }
    }
    assert_eq!(compared, 4, "every valid fixture was compared");
}
