//! Differential test of the session-reference layer against real DSH: `tests/oracle/reference.mjs`
//! records what `@deepseek-ai/dsh-session-reference` answers over a generated persistence root
//! (candidates, prepare, URIs, mentions, parsing, every error); each call is replayed through
//! our JSON-RPC face and must give DSH's result (the context text byte for byte) or DSH's code.
//!
//! Needs `DSH_ORACLE_DIR` (the `tests/oracle/run.sh` output, with `references/<root>.json` from
//! `reference.mjs`). Without it, or without reference dumps, the test says so and passes.
#![cfg(not(target_arch = "wasm32"))]

use dsh_session_search::json::{Json, JsonObject, ParseLimits};
use dsh_session_search::rpc::RpcServer;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every dump must replay at least this many calls, and all dumps together these many per
/// method, so a truncated or empty dump cannot pass.
const MIN_CALLS_PER_DUMP: usize = 150;
const MIN_CALLS: [(&str, usize); 6] = [
    ("listCandidates", 40),
    ("prepare", 80),
    ("encodeSessionReferenceUri", 20),
    ("decodeSessionReferenceUri", 40),
    ("formatSessionReferenceMention", 15),
    ("parseSessionReferenceText", 45),
];
/// Codes the dumps must exercise (all seven of DSH's session-reference codes).
const CODES: [&str; 7] = [
    "SESSION_REFERENCE_INVALID_CONFIG",
    "SESSION_REFERENCE_INVALID_REFERENCE",
    "SESSION_REFERENCE_SELF_REFERENCE",
    "SESSION_REFERENCE_TOO_MANY",
    "SESSION_REFERENCE_READ_FAILED",
    "SESSION_REFERENCE_BUDGET_EXCEEDED",
    "SESSION_REFERENCE_CANCELLED",
];

fn parse(text: &str) -> Json {
    Json::parse(text, ParseLimits { max_depth: 100_000 }).expect("valid JSON")
}

fn short(value: &Json) -> String {
    let text = value.to_js_string();
    if text.len() > 700 {
        format!("{}…", &text[..text.floor_char_boundary(700)])
    } else {
        text
    }
}

/// Replaces the (random) id of every context message by a placeholder.
fn without_context_ids(value: &Json) -> Json {
    match value {
        Json::Array(items) => Json::Array(items.iter().map(without_context_ids).collect()),
        Json::Object(object) => {
            let is_context =
                value.get("source").and_then(|s| s.get("kind")).and_then(Json::as_str) == Some("session-reference");
            let mut out = JsonObject::new();
            for (key, item) in object.iter() {
                if is_context && key.as_str() == Some("id") {
                    out.insert(key.clone(), Json::str("<context id>"));
                } else {
                    out.insert(key.clone(), without_context_ids(item));
                }
            }
            Json::Object(out)
        }
        other => other.clone(),
    }
}

/// Where two values first differ (a path of array indexes and keys) and the parts there.
fn first_difference(expected: &Json, actual: &Json) -> (String, Json, Json) {
    match (expected, actual) {
        (Json::Array(a), Json::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                if x != y {
                    let (at, x, y) = first_difference(x, y);
                    return (format!("[{i}]{at}"), x, y);
                }
            }
            let n = a.len().min(b.len());
            let rest = |v: &[Json]| Json::Array(v[n..].to_vec());
            (
                format!("[{n}..] (lengths {} vs {})", a.len(), b.len()),
                rest(a),
                rest(b),
            )
        }
        (Json::Object(a), Json::Object(b)) => {
            for (key, x) in a.iter() {
                let name = key.to_lossy().into_owned();
                match b.get(&name) {
                    Some(y) if x == y => {}
                    Some(y) => {
                        let (at, x, y) = first_difference(x, y);
                        return (format!(".{name}{at}"), x, y);
                    }
                    None => return (format!(".{name}"), x.clone(), Json::str("(absent)")),
                }
            }
            (String::from(" (extra keys)"), expected.clone(), actual.clone())
        }
        _ => (String::new(), expected.clone(), actual.clone()),
    }
}

fn is_uuid_v4(id: &str) -> bool {
    let bytes = id.as_bytes();
    id.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_digit() || (b'a'..=b'f').contains(b),
        })
        && bytes[14] == b'4'
        && matches!(bytes[19], b'8' | b'9' | b'a' | b'b')
}

#[derive(Default)]
struct Replay {
    mismatches: Vec<String>,
    calls: BTreeMap<String, usize>,
    codes: BTreeMap<String, usize>,
    context_texts: usize,
    truncated_sources: usize,
}

impl Replay {
    fn mismatch(&mut self, what: &str, detail: String) {
        self.mismatches.push(format!("{what}: {detail}"));
    }

    fn check(&mut self, what: &str, field: &str, expected: &Json, actual: &Json) {
        if expected != actual {
            let (at, expected, actual) = first_difference(expected, actual);
            self.mismatch(
                what,
                format!(
                    "{field} differs at {at}\n    DSH:  {}\n    ours: {}",
                    short(&expected),
                    short(&actual)
                ),
            );
        }
    }
}

/// DSH's candidates less the sessions it lists but cannot read and our corpus leaves out (a
/// damaged file we cannot even list). When DSH's list was cut at the limit, ours may hold
/// further sessions in their place, so only the prefix is compared then.
fn compare_candidates(what: &str, params: &Json, expected: &Json, ours: &Json, unreadable: &[Json], out: &mut Replay) {
    let expected = expected.as_array().unwrap_or_default();
    let Some(ours) = ours.as_array() else {
        return out.mismatch(what, format!("not an array: {}", short(ours)));
    };
    let limit = params
        .as_array()
        .and_then(|p| p.get(2))
        .and_then(Json::as_f64)
        .unwrap_or(50.0) as usize;
    let kept: Vec<Json> = expected
        .iter()
        .filter(|c| !c.get("sessionId").is_some_and(|id| unreadable.contains(id)))
        .cloned()
        .collect();
    if kept.len() == expected.len() || expected.len() < limit {
        out.check(what, "candidates", &Json::Array(kept), &Json::Array(ours.to_vec()));
    } else {
        let prefix = &ours[..kept.len().min(ours.len())];
        out.check(
            what,
            "candidates (prefix)",
            &Json::Array(kept),
            &Json::Array(prefix.to_vec()),
        );
        if ours.len() > limit {
            out.mismatch(what, format!("{} candidates exceed the limit {limit}", ours.len()));
        }
    }
}

fn compare_prepare(what: &str, params: &Json, expected: &Json, ours: &Json, out: &mut Replay) {
    // DSH's own fields, with the random context ids set aside.
    for key in ["content", "additionalContext", "messages"] {
        let dsh = expected.get(key);
        if key == "messages" && dsh.is_none() {
            continue;
        }
        let dsh = dsh.map(without_context_ids);
        let our = ours.get(key).map(without_context_ids);
        if dsh != our {
            out.mismatch(
                what,
                format!(
                    "{key} differs\n    DSH:  {}\n    ours: {}",
                    dsh.as_ref().map_or("(absent)".into(), short),
                    our.as_ref().map_or("(absent)".into(), short)
                ),
            );
        }
    }
    let text = |value: &Json| {
        value
            .get("additionalContext")
            .and_then(|c| c.get("content"))
            .and_then(|c| c.as_array()?.first()?.get("text")?.as_str().map(str::to_owned))
    };
    if let Some(dsh_text) = text(expected) {
        out.context_texts += 1;
        if text(ours).as_deref() != Some(dsh_text.as_str()) {
            out.mismatch(what, "the context text is not DSH's exact string".into());
        }
        let id = ours
            .get("additionalContext")
            .and_then(|c| c.get("id"))
            .and_then(Json::as_str)
            .unwrap_or_default();
        if !is_uuid_v4(id) {
            out.mismatch(what, format!("context id {id:?} is not a UUID v4"));
        }
    }
    // The design's fields agree with DSH's record.
    let options = params.as_array().and_then(|p| p.get(3));
    let given = options
        .and_then(|o| o.get("maxReferenceBytes"))
        .filter(|v| !matches!(v, Json::Null));
    let mut budget = JsonObject::new();
    budget.insert("maxReferenceBytes", given.cloned().unwrap_or(Json::Number(65536.0)));
    budget.insert("origin", Json::str(if given.is_some() { "call" } else { "default" }));
    out.check(
        what,
        "budget",
        &Json::Object(budget),
        ours.get("budget").unwrap_or(&Json::Null),
    );
    let records = expected
        .get("additionalContext")
        .and_then(|c| c.get("source"))
        .and_then(|s| s.get("references"))
        .and_then(Json::as_array)
        .unwrap_or_default();
    let reports = ours.get("references").and_then(Json::as_array).unwrap_or_default();
    if records.len() != reports.len() {
        out.mismatch(
            what,
            format!("{} references reported for {} sources", reports.len(), records.len()),
        );
    }
    for (record, report) in records.iter().zip(reports) {
        let truncated = record.get("truncated") == Some(&Json::Bool(true));
        out.truncated_sources += usize::from(truncated);
        let mut expected = JsonObject::new();
        expected.insert("sessionId", record.get("sessionId").cloned().unwrap_or(Json::Null));
        expected.insert("label", record.get("label").cloned().unwrap_or(Json::Null));
        expected.insert("truncated", Json::Bool(truncated));
        if truncated {
            expected.insert("spill", parse(r#"{"unavailable":"no spill store configured"}"#));
        }
        out.check(what, "reference report", &Json::Object(expected), report);
    }
    // "readable-first" is what DSH writes: the readable message, then its context.
    if let (Some(messages), Some(context)) = (
        ours.get("messages").and_then(Json::as_array),
        ours.get("additionalContext"),
    ) && (messages.len() != 2 || &messages[1] != context)
    {
        out.mismatch(what, "messages are not [readable, context]".into());
    }
}

/// Replays one reference dump; the root it was recorded over is loaded from `logs`.
fn replay(dump_path: &Path, logs: &Path, out: &mut Replay) -> usize {
    let dump = parse(&std::fs::read_to_string(dump_path).expect("dump readable"));
    let root = dump.get("root").and_then(Json::as_str).expect("root name").to_owned();
    let calls = dump.get("calls").and_then(Json::as_array).expect("calls");
    let mut server = RpcServer::new();
    let load = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"load","params":[[{}]]}}"#,
        Json::str(&logs.join(&root).display().to_string())
    );
    let loaded = parse(&server.handle_line(&load).expect("load answers"));
    assert!(loaded.get("result").is_some(), "{root} loads: {}", short(&loaded));
    let listing = parse(
        &server
            .handle_line(r#"{"jsonrpc":"2.0","id":0,"method":"listSessions","params":[]}"#)
            .expect("listSessions answers"),
    );
    let listed: Vec<&Json> = listing
        .get("result")
        .and_then(Json::as_array)
        .unwrap_or_default()
        .iter()
        .filter_map(|record| record.get("header")?.get("id"))
        .collect();
    let unlisted: Vec<Json> = dump
        .get("unreadable")
        .and_then(Json::as_array)
        .unwrap_or_default()
        .iter()
        .filter(|id| !listed.contains(id))
        .cloned()
        .collect();
    for (index, call) in calls.iter().enumerate() {
        let method = call.get("method").and_then(Json::as_str).expect("method");
        let params = call.get("params").cloned().unwrap_or(Json::Array(Vec::new()));
        let request = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#);
        let response = parse(&server.handle_line(&request).expect("a response"));
        *out.calls.entry(method.to_owned()).or_default() += 1;
        let what = format!("{root} #{index} {method} {}", short(&params));
        let our_code = response
            .get("error")
            .map(|e| e.get("data").and_then(|d| d.get("code")).cloned().unwrap_or(Json::Null));
        match (call.get("error"), our_code, response.get("result")) {
            (Some(expected), Some(ours), _) => {
                let code = expected.get("code").cloned().unwrap_or(Json::Null);
                if let Some(code) = code.as_str() {
                    *out.codes.entry(code.to_owned()).or_default() += 1;
                }
                if code != ours {
                    out.mismatch(
                        &what,
                        format!("DSH fails with {code}, we fail with {ours} ({})", short(&response)),
                    );
                }
            }
            (Some(expected), None, _) => {
                out.mismatch(&what, format!("DSH fails with {}, we succeed", short(expected)));
            }
            (None, Some(_), _) | (None, None, None) => {
                out.mismatch(&what, format!("DSH succeeds, we answer {}", short(&response)));
            }
            (None, None, Some(ours)) => {
                let expected = call.get("result").unwrap_or(&Json::Null);
                match method {
                    "listCandidates" => compare_candidates(&what, &params, expected, ours, &unlisted, out),
                    "prepare" => compare_prepare(&what, &params, expected, ours, out),
                    _ => out.check(&what, "result", expected, ours),
                }
            }
        }
    }
    calls.len()
}

#[test]
fn reference_calls_replay_equal_to_dsh() {
    let Some(dir) = std::env::var_os("DSH_ORACLE_DIR").map(PathBuf::from) else {
        eprintln!("DSH_ORACLE_DIR is not set: run tests/oracle/run.sh and tests/oracle/reference.mjs first");
        return;
    };
    // `tests/oracle/run.sh` always writes them: a missing folder is a broken oracle, not a skip.
    let entries = std::fs::read_dir(dir.join("references")).unwrap_or_else(|e| {
        panic!(
            "{} has no reference dumps ({e}): rerun tests/oracle/run.sh",
            dir.display()
        )
    });
    let mut dumps: Vec<PathBuf> = entries
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    dumps.sort();
    assert!(!dumps.is_empty(), "references/ holds no dumps");
    let mut out = Replay::default();
    for dump in &dumps {
        let replayed = replay(dump, &dir.join("logs"), &mut out);
        assert!(
            replayed >= MIN_CALLS_PER_DUMP,
            "{} replays only {replayed} calls (at least {MIN_CALLS_PER_DUMP} expected)",
            dump.display()
        );
    }
    let total: usize = out.calls.values().sum();
    eprintln!(
        "replayed {total} reference calls from {} dumps: {:?}; {} context texts, {} truncated sources; codes {:?}",
        dumps.len(),
        out.calls,
        out.context_texts,
        out.truncated_sources,
        out.codes
    );
    let shown: Vec<&str> = out.mismatches.iter().take(40).map(String::as_str).collect();
    assert!(
        out.mismatches.is_empty(),
        "{} mismatches with DSH (first 40):\n{}",
        out.mismatches.len(),
        shown.join("\n")
    );
    for (method, minimum) in MIN_CALLS {
        let n = out.calls.get(method).copied().unwrap_or_default();
        assert!(
            n >= minimum,
            "only {n} {method} calls replayed (at least {minimum} expected)"
        );
    }
    for code in CODES {
        assert!(out.codes.contains_key(code), "no recorded call fails with {code}");
    }
    assert!(
        out.context_texts >= 40 && out.truncated_sources >= 10,
        "too few rendered contexts"
    );
}

/// One request through the face: the result, or `{"error": code}`.
fn rpc(server: &mut RpcServer, method: &str, params: &str) -> Json {
    let request = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#);
    let response = parse(&server.handle_line(&request).expect("a response"));
    match response.get("error") {
        Some(error) => {
            let code = error
                .get("data")
                .and_then(|d| d.get("code"))
                .cloned()
                .unwrap_or_else(|| error.get("code").cloned().unwrap_or(Json::Null));
            let mut object = JsonObject::new();
            object.insert("error", code);
            Json::Object(object)
        }
        None => response.get("result").cloned().expect("a result"),
    }
}

/// The reference methods without the oracle: live sessions, every option, every protocol error.
#[test]
fn reference_methods_answer_over_rpc() {
    let mut server = RpcServer::new();
    let user = |seq: u64, text: &str| {
        format!(
            r#"{{"type":"user/message","seq":{seq},"time":{seq},"data":{{"id":"m{seq}","role":"user","content":[{{"type":"text","text":{}}}],"source":{{"kind":"user"}}}},"surfaceOp":"append"}}"#,
            Json::str(text)
        )
    };
    let title = r#"{"type":"session/title","seq":2,"time":2,"data":{"title":"Long notes","messageSeqs":[0],"source":{"kind":"fallback"}}}"#;
    let long = format!("[{},{},{title}]", user(0, &"a".repeat(400)), user(1, &"b".repeat(400)));
    for (id, cwd, events) in [
        ("long", r#","cwd":"/w""#, long.as_str()),
        ("short", "", "[]"),
        ("t", r#","cwd":"/w""#, "[]"),
    ] {
        let header = format!(r#"{{"version":0,"id":"{id}","createdAt":1{cwd},"delegationDepth":0}}"#);
        let added = rpc(&mut server, "addLive", &format!("[{header},{events}]"));
        assert!(added.get("error").is_none(), "{id}: {added}");
    }
    let error = |value: &Json| value.get("error").cloned().unwrap_or(Json::Null);

    // Candidates: the agent's own cwd ranks them when the agent gives none.
    let listed = rpc(&mut server, "listCandidates", r#"[{"id":"t"}]"#);
    assert_eq!(
        listed.to_js_string(),
        r#"[{"sessionId":"long","label":"Long notes","cwd":"/w","createdAt":1,"mention":"@[Long notes](dsh-session:Imxvbmci)","sameWorkspace":true},{"sessionId":"short","label":"short","createdAt":1,"mention":"@[short](dsh-session:InNob3J0Ig)","sameWorkspace":false}]"#
    );
    let listed = rpc(&mut server, "listCandidates", r#"[{"id":"t","cwd":null},"NOTES",1]"#);
    assert_eq!(listed.as_array().map(<[Json]>::len), Some(1));
    for (params, code) in [
        (r#"[{"id":"t"},"",0]"#, Json::str("SESSION_REFERENCE_INVALID_REFERENCE")),
        (
            r#"[{"id":"t"},"",null]"#,
            Json::str("SESSION_REFERENCE_INVALID_REFERENCE"),
        ),
        (
            r#"[{"id":"t"},"",5,{"cancelled":true}]"#,
            Json::str("SESSION_REFERENCE_CANCELLED"),
        ),
        (r#"[{"id":"t"},null]"#, Json::str("SESSION_INVALID_ARGUMENT")),
        (
            r#"[{"id":"t"},"",5,{"other":1}]"#,
            Json::str("SESSION_INVALID_ARGUMENT"),
        ),
        (r#"[{"cwd":"/w"}]"#, Json::str("SESSION_INVALID_ARGUMENT")),
    ] {
        assert_eq!(error(&rpc(&mut server, "listCandidates", params)), code, "{params}");
    }

    // prepare: budget origin, order, ids, spill reports.
    let prepared = rpc(
        &mut server,
        "prepare",
        r#"[{"id":"t"},[{"type":"text","text":"see @L"}],[{"sessionId":"long","label":"L"},{"sessionId":"short"}],{"route":{"contextWindow":800},"agentOptions":{"maxReferenceBytes":99},"order":"readable-first","messageId":"m-9","contextMessageId":"c-9"}]"#,
    );
    assert_eq!(
        prepared.get("budget").map(Json::to_js_string).as_deref(),
        Some(r#"{"maxReferenceBytes":400,"origin":"route"}"#)
    );
    assert_eq!(
        prepared.get("references").map(Json::to_js_string).as_deref(),
        Some(
            r#"[{"sessionId":"long","label":"L","truncated":true,"spill":{"unavailable":"no spill store configured"}},{"sessionId":"short","label":"short","truncated":false}]"#
        )
    );
    let messages = prepared.get("messages").and_then(Json::as_array).expect("messages");
    assert_eq!(
        messages[0].to_js_string(),
        r#"{"source":{"kind":"user"},"content":[{"type":"text","text":"see @L"}],"role":"user","id":"m-9"}"#
    );
    assert_eq!(Some(&messages[1]), prepared.get("additionalContext"));
    assert_eq!(messages[1].get("id"), Some(&Json::str("c-9")));
    let agent_budget = rpc(
        &mut server,
        "prepare",
        r#"[{"id":"t"},[],[{"sessionId":"short"}],{"agentOptions":{"maxReferenceBytes":5000},"maxReferenceBytes":null}]"#,
    );
    assert_eq!(
        agent_budget.get("budget").map(Json::to_js_string).as_deref(),
        Some(r#"{"maxReferenceBytes":5000,"origin":"agent"}"#)
    );
    let context_first = agent_budget.get("messages").and_then(Json::as_array).expect("messages");
    assert_eq!(Some(&context_first[0]), agent_budget.get("additionalContext"));
    let nothing = rpc(&mut server, "prepare", r#"[{"id":"t"},"x",[],{"cancelled":true}]"#);
    assert!(
        nothing
            .to_js_string()
            .starts_with(r#"{"content":"x","messages":[{"source""#)
    );
    for (params, code) in [
        (
            r#"[{"id":"t"},[],[{"sessionId":"t"}],{"maxReferences":4}]"#,
            Json::str("SESSION_REFERENCE_INVALID_CONFIG"),
        ),
        (
            r#"[{"id":"t"},[],[],{"route":{"contextWindow":0}}]"#,
            Json::str("SESSION_REFERENCE_INVALID_CONFIG"),
        ),
        (
            r#"[{"id":"t"},[],[],{"agentOptions":{"maxReferenceBytes":"9"}}]"#,
            Json::str("SESSION_REFERENCE_INVALID_CONFIG"),
        ),
        (
            r#"[{"id":"t"},[],[{"sessionId":"t"}]]"#,
            Json::str("SESSION_REFERENCE_SELF_REFERENCE"),
        ),
        (
            r#"[{"id":"t"},[],[{"sessionId":"a"},{"sessionId":"b"},{"sessionId":"c"},{"sessionId":"d"}]]"#,
            Json::str("SESSION_REFERENCE_TOO_MANY"),
        ),
        (
            r#"[{"id":"t"},[],[{"sessionId":"gone"}]]"#,
            Json::str("SESSION_REFERENCE_READ_FAILED"),
        ),
        (
            r#"[{"id":"t"},[],[{"sessionId":"long"}],{"maxReferenceBytes":10}]"#,
            Json::str("SESSION_REFERENCE_BUDGET_EXCEEDED"),
        ),
        (
            r#"[{"id":"t"},[],[{"sessionId":"long"}],{"cancelled":true}]"#,
            Json::str("SESSION_REFERENCE_CANCELLED"),
        ),
        (
            r#"[{"id":"t"},[],[{"sessionId":"long","label":null}]]"#,
            Json::str("SESSION_REFERENCE_INVALID_REFERENCE"),
        ),
        (
            r#"[{"id":"t"},[],{"sessionId":"long"}]"#,
            Json::str("SESSION_INVALID_ARGUMENT"),
        ),
        (r#"[{"id":"t"},[]]"#, Json::str("SESSION_INVALID_ARGUMENT")),
        (
            r#"[{"id":"t"},[],[],{"order":"sideways"}]"#,
            Json::str("SESSION_INVALID_ARGUMENT"),
        ),
        (
            r#"[{"id":"t"},[],[],{"messageId":7}]"#,
            Json::str("SESSION_INVALID_ARGUMENT"),
        ),
    ] {
        assert_eq!(error(&rpc(&mut server, "prepare", params)), code, "{params}");
    }

    // URIs, mentions, parsing.
    assert_eq!(
        rpc(&mut server, "encodeSessionReferenceUri", r#"["源"]"#),
        Json::str("dsh-session:Iua6kCI")
    );
    assert_eq!(
        rpc(&mut server, "decodeSessionReferenceUri", r#"["dsh-session:Iua6kCI"]"#),
        Json::str("源")
    );
    assert_eq!(
        error(&rpc(&mut server, "decodeSessionReferenceUri", r#"["dsh-session:IiJ"]"#)),
        Json::str("SESSION_REFERENCE_INVALID_REFERENCE")
    );
    assert_eq!(
        rpc(
            &mut server,
            "formatSessionReferenceMention",
            r#"[{"sessionId":"abc","label":"x]y"}]"#
        ),
        Json::str(r"@[x\]y](dsh-session:ImFiYyI)")
    );
    assert_eq!(
        rpc(
            &mut server,
            "formatSessionReferenceMention",
            r#"[{"sessionId":"abc","label":null}]"#
        ),
        Json::str("@[abc](dsh-session:ImFiYyI)")
    );
    assert_eq!(
        rpc(
            &mut server,
            "parseSessionReferenceText",
            r#"["see dsh-session:ImFiYyI"]"#
        )
        .to_js_string(),
        r#"{"text":"see @abc","references":[{"sessionId":"abc","label":"abc"}]}"#
    );
    for (method, params) in [
        ("encodeSessionReferenceUri", "[1]"),
        ("decodeSessionReferenceUri", "[]"),
        ("formatSessionReferenceMention", r#"["abc","label"]"#),
        ("parseSessionReferenceText", "[null]"),
    ] {
        assert_eq!(
            error(&rpc(&mut server, method, params)),
            Json::str("SESSION_INVALID_ARGUMENT"),
            "{method}"
        );
    }
}
