//! The JSON-RPC face end to end: the real binary on stdio, live sessions, and error shapes.
#![cfg(not(target_arch = "wasm32"))]

use std::io::Write;
use std::process::{Command, Stdio};

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/spec/{name}.jsonl", env!("CARGO_MANIFEST_DIR"))
}

/// Sends request lines to `dsh-session-search rpc` and returns one parsed response per line.
fn exchange(requests: &[serde_json::Value]) -> Vec<serde_json::Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-session-search"))
        .arg("rpc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut stdin = child.stdin.take().expect("stdin");
    for request in requests {
        writeln!(stdin, "{request}").expect("write");
    }
    drop(stdin);
    let output = child.wait_with_output().expect("exits");
    assert!(output.status.success());
    String::from_utf8(output.stdout)
        .expect("utf8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON response per line"))
        .collect()
}

fn call(id: u64, method: &str, params: serde_json::Value) -> serde_json::Value {
    serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

#[test]
fn load_then_read_over_stdio() {
    let responses = exchange(&[
        call(
            1,
            "load",
            serde_json::json!([[fixture("compaction_shadows_prefix"), fixture("future_version")]]),
        ),
        call(2, "listEvents", serde_json::json!(["s-7-2"])),
        call(3, "readSurface", serde_json::json!(["s-7-2"])),
        call(4, "traceEvent", serde_json::json!([{ "sessionId": "s-7-2", "seq": 0 }])),
        call(
            5,
            "filterEvents",
            serde_json::json!(["s-7-2", [{ "kind": "surface", "values": ["shadowed"] }]]),
        ),
    ]);
    assert_eq!(responses.len(), 5);
    let report = &responses[0]["result"];
    assert_eq!(report["failures"][0]["code"], "SESSION_LOAD_UNSUPPORTED_VERSION");
    assert_eq!(responses[1]["result"][0]["surface"], "shadowed");
    let order: Vec<u64> = responses[2]["result"]["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["seq"].as_u64().expect("seq"))
        .collect();
    assert_eq!(order, [6, 2, 3, 8]);
    assert_eq!(responses[3]["result"]["replacedBy"], 6);
    let shadowed: Vec<u64> = responses[4]["result"]
        .as_array()
        .expect("docs")
        .iter()
        .map(|d| d["seq"].as_u64().expect("seq"))
        .collect();
    assert_eq!(shadowed, [0, 1]);
    for (i, response) in responses.iter().enumerate() {
        assert_eq!(response["id"], i as u64 + 1);
        assert_eq!(response["jsonrpc"], "2.0");
    }
}

#[test]
fn live_sessions_shadow_and_grow() {
    let header = serde_json::json!({ "version": 0, "id": "s-7-1", "createdAt": 1700000000000u64, "cwd": "/home/dev/app", "delegationDepth": 0 });
    let turn_start = serde_json::json!({ "type": "turn/start", "seq": 0, "time": 1, "data": { "turn": 1 } });
    let message = serde_json::json!({ "type": "user/message", "seq": 1, "time": 2, "data": { "id": "m1", "role": "user", "content": [{ "type": "text", "text": "live text" }], "source": { "kind": "user" } }, "surfaceOp": "append" });
    let conflicting = serde_json::json!({ "version": 0, "id": "s-7-2", "createdAt": 5, "delegationDepth": 0 });
    let responses = exchange(&[
        call(
            1,
            "load",
            serde_json::json!([[fixture("plain_appends"), fixture("compaction_shadows_prefix")]]),
        ),
        call(2, "addLive", serde_json::json!([header, [turn_start]])),
        call(3, "listEvents", serde_json::json!(["s-7-1"])),
        call(4, "appendLive", serde_json::json!(["s-7-1", [message]])),
        call(
            5,
            "filterEvents",
            serde_json::json!(["s-7-1", [{ "kind": "text", "text": "LIVE   text" }]]),
        ),
        call(6, "addLive", serde_json::json!([conflicting, []])),
        call(7, "readSurface", serde_json::json!(["s-7-2"])),
        call(8, "listSessions", serde_json::json!([])),
        call(9, "appendLive", serde_json::json!(["s-7-1", [message]])),
    ]);
    assert_eq!(
        responses[1]["result"],
        serde_json::json!({ "header": header, "live": true, "persisted": true })
    );
    assert_eq!(
        responses[2]["result"].as_array().map(Vec::len),
        Some(1),
        "the live copy wins over the loaded one"
    );
    assert_eq!(responses[3]["result"]["eventCount"], 2);
    assert_eq!(
        responses[4]["result"][0]["seq"], 1,
        "appended events are visible to the next read"
    );
    assert_eq!(responses[6]["error"]["data"]["code"], "SESSION_QUERY_SOURCE_CONFLICT");
    let listed: Vec<&str> = responses[7]["result"]
        .as_array()
        .expect("list")
        .iter()
        .map(|r| r["header"]["id"].as_str().expect("id"))
        .collect();
    assert_eq!(listed, ["s-7-1"], "a conflicting id fails alone");
    // Re-appending seq 1 breaks contiguity: refused, and nothing is published.
    assert!(responses[8]["error"].is_object());
}

#[test]
fn protocol_errors_use_json_rpc_codes() {
    let responses = exchange(&[
        serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "nope", "params": [] }),
        serde_json::json!({ "jsonrpc": "2.0", "id": 2, "method": "listEvents", "params": { "id": "x" } }),
        serde_json::json!({ "id": 3, "method": "listEvents" }),
        serde_json::json!({ "jsonrpc": "2.0", "method": "listSessions", "params": [] }),
        serde_json::json!({ "jsonrpc": "2.0", "id": 4, "method": "listEvents", "params": ["missing"] }),
    ]);
    assert_eq!(responses.len(), 4, "a notification gets no response");
    assert_eq!(responses[0]["error"]["code"], -32601);
    assert_eq!(responses[1]["error"]["code"], -32602);
    assert_eq!(responses[2]["error"]["code"], -32600);
    assert_eq!(responses[3]["error"]["data"]["code"], "SESSION_QUERY_SESSION_NOT_FOUND");
}

/// Every line gets an answer: bytes that are not UTF-8, JSON that is not a request object,
/// batches, and ids of the wrong type; the server keeps serving afterwards.
#[test]
fn every_line_is_answered_and_the_server_stays_up() {
    let mut server = dsh_session_search::rpc::RpcServer::new();
    let mut answer = |line: &[u8]| -> serde_json::Value {
        let text = server.handle_bytes(line).expect("a response");
        serde_json::from_str(&text).expect("JSON")
    };
    let not_utf8 = answer(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"listSessions\xff\"}");
    assert_eq!(not_utf8["error"]["code"], -32700);
    assert_eq!(not_utf8["id"], serde_json::Value::Null);
    for line in [
        "null",
        "42",
        "\"x\"",
        "{}",
        "[]",
        r#"{"jsonrpc":"2.0","id":{},"method":"listSessions"}"#,
    ] {
        let response = answer(line.as_bytes());
        assert_eq!(response["error"]["code"], -32600, "{line}");
        assert_eq!(response["id"], serde_json::Value::Null, "{line}");
    }
    let batch = answer(
        br#"[{"jsonrpc":"2.0","id":1,"method":"listSessions","params":[]},{"jsonrpc":"2.0","method":"listSessions"},7,{"jsonrpc":"2.0","id":"b","method":"nope"}]"#,
    );
    let batch = batch.as_array().expect("a batch answers with an array");
    assert_eq!(batch.len(), 3, "the notification gets no entry: {batch:?}");
    assert_eq!(batch[0]["result"], serde_json::json!([]));
    assert_eq!(batch[1]["error"]["code"], -32600);
    assert_eq!(batch[2]["error"]["code"], -32601);
    assert_eq!(batch[2]["id"], "b");
    let notifications = server.handle_line(r#"[{"jsonrpc":"2.0","method":"listSessions"}]"#);
    assert_eq!(notifications, None, "a batch of notifications gets no response");
    let still_up = server
        .handle_line(r#"{"jsonrpc":"2.0","id":9,"method":"listSessions","params":[]}"#)
        .expect("a response");
    assert_eq!(still_up, r#"{"jsonrpc":"2.0","id":9,"result":[]}"#);
}

/// Argument errors carry a stable code too, beside JSON-RPC's invalid-params number.
#[test]
fn argument_errors_have_a_stable_code() {
    let mut server = dsh_session_search::rpc::RpcServer::new();
    let response = server
        .handle_line(r#"{"jsonrpc":"2.0","id":1,"method":"readTitleSnapshots","params":[7]}"#)
        .expect("a response");
    let response: serde_json::Value = serde_json::from_str(&response).expect("JSON");
    assert_eq!(response["error"]["code"], -32602);
    assert_eq!(response["error"]["data"]["code"], "SESSION_INVALID_ARGUMENT");
}
