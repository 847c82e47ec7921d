//! Synthetic closers for a log that ends inside a turn: error results for pending
//! tool calls, then `step/end` and `turn/end {interrupted}`, added in memory only.

use crate::json::{Json, JsonObject};

/// Result text for a call whose `tool/call` was recorded (indexed: must match DSH byte for byte).
pub const TOOL_OUTCOME_UNKNOWN_TEXT: &str = "The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the operation is read-only or idempotent; if it may have side effects, first verify external state or ask the user. Do not retry blindly.";

/// Result text for a call that was requested but never recorded as started.
pub const TOOL_NOT_STARTED_TEXT: &str =
    "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed.";

struct PendingCall {
    call_id: Json,
    step: Json,
    call_seq: Option<Json>,
}

fn object(pairs: Vec<(&str, Json)>) -> Json {
    Json::Object(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect::<JsonObject>())
}

/// The closing events to append, empty when the log ends outside a turn.
///
/// Both turn boundaries reset everything the walk below keeps, so the log ends inside a turn
/// only when its last boundary is a `turn/start`, and the events after that decide the rest:
/// finding it from the end spares reading (and cloning the call ids of) every earlier event,
/// which is most of a log.
pub(super) fn interrupted_turn_closers(events: &[Json]) -> Vec<Json> {
    fn kind(event: &Json) -> Option<&str> {
        event.get("type").and_then(Json::as_str)
    }
    let field = |event: &Json, key: &str| event.get("data").and_then(|d| d.get(key)).cloned();
    let Some(start) = events
        .iter()
        .rposition(|event| matches!(kind(event), Some("turn/start" | "turn/end")))
    else {
        return Vec::new();
    };
    let (turn_start, after) = (&events[start], &events[start + 1..]);
    if kind(turn_start) != Some("turn/start") {
        return Vec::new();
    }
    let turn = field(turn_start, "turn").unwrap_or(Json::Null);
    let mut open_step: Option<Json> = None;
    // Insertion-ordered like a JavaScript Map: re-registering a call keeps its place.
    let mut pending: Vec<PendingCall> = Vec::new();
    for event in after {
        match kind(event) {
            Some("step/start") => open_step = Some(field(event, "step").unwrap_or(Json::Null)),
            Some("step/end") => {
                pending.clear();
                open_step = None;
            }
            Some("assistant/message") => register_calls(event, &mut pending),
            Some("tool/call") => {
                let call_id = field(event, "callId").unwrap_or(Json::Null);
                if let Some(entry) = pending.iter_mut().find(|p| p.call_id == call_id) {
                    entry.call_seq = event.get("seq").cloned();
                }
            }
            Some("tool/result") => {
                let call_id = event
                    .get("data")
                    .and_then(|d| d.get("message"))
                    .and_then(|m| m.get("source"))
                    .and_then(|s| s.get("callId"))
                    .cloned()
                    .unwrap_or(Json::Null);
                pending.retain(|p| p.call_id != call_id);
            }
            _ => {}
        }
    }
    let last = after.last().unwrap_or(turn_start);
    closers(turn, open_step, pending, last)
}

/// Notes the tool calls an `assistant/message` asks for as pending in its step; a call asked
/// for again takes its new step and forgets that it was recorded, in its old place.
fn register_calls(event: &Json, pending: &mut Vec<PendingCall>) {
    let data = event.get("data");
    let step = data.and_then(|d| d.get("step")).cloned().unwrap_or(Json::Null);
    let content = data
        .and_then(|d| d.get("message"))
        .and_then(|m| m.get("content"))
        .and_then(Json::as_array);
    for block in content.unwrap_or_default() {
        if block.get("type").and_then(Json::as_str) != Some("tool-call") {
            continue;
        }
        let call_id = block.get("id").cloned().unwrap_or(Json::Null);
        let entry = PendingCall {
            call_id: call_id.clone(),
            step: step.clone(),
            call_seq: None,
        };
        match pending.iter_mut().find(|p| p.call_id == call_id) {
            Some(slot) => *slot = entry,
            None => pending.push(entry),
        }
    }
}

/// The events that close a turn the log ends inside, after `last`: a result for each call
/// still `pending`, the open step's end, the turn's end. Out of line: few logs end inside a
/// turn, and the engine then never optimises this.
#[inline(never)]
fn closers(turn: Json, open_step: Option<Json>, pending: Vec<PendingCall>, last: &Json) -> Vec<Json> {
    let mut seq = last.get("seq").and_then(Json::as_f64).unwrap_or_default() + 1.0;
    let time = last.get("time").cloned().unwrap_or(Json::Null);
    let mut closers = Vec::new();
    for call in pending {
        closers.push(interrupted_result(&call, &turn, seq, &time));
        seq += 1.0;
    }
    if let Some(step) = open_step {
        closers.push(object(vec![
            ("type", Json::str("step/end")),
            ("seq", Json::Number(seq)),
            ("time", time.clone()),
            ("data", object(vec![("turn", turn.clone()), ("step", step)])),
        ]));
        seq += 1.0;
    }
    closers.push(object(vec![
        ("type", Json::str("turn/end")),
        ("seq", Json::Number(seq)),
        ("time", time),
        (
            "data",
            object(vec![
                ("turn", turn),
                ("reason", object(vec![("kind", Json::str("interrupted"))])),
            ]),
        ),
    ]));
    closers
}

/// The error result that closes `call`, at `seq`: its outcome is unknown when its `tool/call`
/// was recorded (and the result then names that event as its source), else it never started.
fn interrupted_result(call: &PendingCall, turn: &Json, seq: f64, time: &Json) -> Json {
    let started = call.call_seq.is_some();
    let call_id_text = match &call.call_id {
        Json::String(s) => s.to_lossy().into_owned(),
        other => other.to_js_string(),
    };
    let (text, error_name, error_code) = if started {
        (
            TOOL_OUTCOME_UNKNOWN_TEXT,
            "ToolOutcomeUnknownError",
            "TOOL_OUTCOME_UNKNOWN",
        )
    } else {
        (TOOL_NOT_STARTED_TEXT, "ToolNotStartedError", "TOOL_NOT_STARTED")
    };
    let text_block = object(vec![("type", Json::str("text")), ("text", Json::str(text))]);
    let result_block = object(vec![
        ("type", Json::str("tool-result")),
        ("toolCallId", call.call_id.clone()),
        ("isError", Json::Bool(true)),
        ("content", Json::Array(vec![text_block])),
    ]);
    let message = object(vec![
        (
            "id",
            Json::str(&format!("interrupted-tool-result-{call_id_text}-{seq}")),
        ),
        ("role", Json::str("user")),
        (
            "source",
            object(vec![("kind", Json::str("tool")), ("callId", call.call_id.clone())]),
        ),
        ("content", Json::Array(vec![result_block])),
    ]);
    let error = object(vec![("name", Json::str(error_name)), ("code", Json::str(error_code))]);
    let data = object(vec![
        ("turn", turn.clone()),
        ("step", call.step.clone()),
        ("message", message),
        ("error", error),
    ]);
    let mut fields = vec![
        ("type", Json::str("tool/result")),
        ("seq", Json::Number(seq)),
        ("time", time.clone()),
        ("data", data),
        ("surfaceOp", Json::str("append")),
    ];
    if let Some(call_seq) = &call.call_seq {
        fields.push(("sourceEventSeqs", Json::Array(vec![call_seq.clone()])));
    }
    object(fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::ParseLimits;

    fn events(lines: &[&str]) -> Vec<Json> {
        let parse = |(seq, line): (usize, &&str)| {
            let text = format!(r#"{{"seq":{seq},"time":{seq},{line}}}"#);
            Json::parse(&text, ParseLimits::default()).expect("an event")
        };
        lines.iter().enumerate().map(parse).collect()
    }

    fn assistant_calling(ids: &[&str]) -> String {
        let calls: Vec<String> = ids
            .iter()
            .map(|id| format!(r#"{{"type":"tool-call","id":"{id}","name":"run","arguments":"{{}}"}}"#))
            .collect();
        format!(
            r#""type":"assistant/message","data":{{"turn":2,"step":1,"message":{{"id":"m","role":"assistant","content":[{}]}}}}"#,
            calls.join(",")
        )
    }

    fn two_turns(last: Option<&str>) -> Vec<Json> {
        let first_turn_call = assistant_calling(&["a"]);
        let second_turn_calls = assistant_calling(&["b", "c"]);
        let mut lines = vec![
            r#""type":"turn/start","data":{"turn":1}"#,
            r#""type":"step/start","data":{"turn":1,"step":1}"#,
            &first_turn_call,
            r#""type":"turn/end","data":{"turn":1}"#,
            r#""type":"turn/start","data":{"turn":2}"#,
            r#""type":"step/start","data":{"turn":2,"step":1}"#,
            &second_turn_calls,
            r#""type":"tool/call","data":{"turn":2,"step":1,"callId":"b"}"#,
            r#""type":"tool/result","data":{"message":{"source":{"kind":"tool","callId":"c"}}}"#,
        ];
        lines.extend(last);
        events(&lines)
    }

    fn text(value: Option<&Json>) -> Option<&str> {
        value.and_then(Json::as_str)
    }

    #[test]
    fn a_log_ending_inside_a_turn_closes_only_that_turn() {
        let closers = interrupted_turn_closers(&two_turns(None));
        let kinds: Vec<_> = closers.iter().map(|c| text(c.get("type"))).collect();
        assert_eq!(kinds, [Some("tool/result"), Some("step/end"), Some("turn/end")]);
        let result = &closers[0];
        let source = result
            .get("data")
            .and_then(|d| d.get("message"))
            .and_then(|m| m.get("source"));
        assert_eq!(
            text(source.and_then(|s| s.get("callId"))),
            Some("b"),
            "a, of the ended turn, and c, answered, are not pending"
        );
        assert_eq!(result.get("sourceEventSeqs"), Some(&Json::Array(vec![Json::int(7)])));
        assert_eq!(result.get("seq"), Some(&Json::int(9)));
        let turn_end = &closers[2];
        assert_eq!(turn_end.get("data").and_then(|d| d.get("turn")), Some(&Json::int(2)));
        assert_eq!(turn_end.get("seq"), Some(&Json::int(11)));
    }

    #[test]
    fn a_log_ending_outside_a_turn_needs_no_closers() {
        let ended = r#""type":"turn/end","data":{"turn":2}"#;
        assert!(interrupted_turn_closers(&two_turns(Some(ended))).is_empty());
        let unbounded = events(&[r#""type":"step/start","data":{"turn":1,"step":1}"#]);
        assert!(interrupted_turn_closers(&unbounded).is_empty());
        assert!(interrupted_turn_closers(&[]).is_empty());
    }
}
