//! Synthetic closers for a log that ends inside a turn: error results for pending
//! tool calls, then `step/end` and `turn/end {interrupted}`, added in memory only. The walk
//! reads events as DSH's does, JavaScript's way: a member that is absent stays absent (the
//! closers leave it out, as `JSON.stringify` leaves out `undefined`), and a read that would
//! throw makes the log corrupt.

use super::{EventView, LogFault};
use crate::json::{Json, JsonObject, JsonRef};
use std::collections::HashMap;

/// Result text for a call whose `tool/call` was recorded (indexed: must match DSH byte for byte).
pub const TOOL_OUTCOME_UNKNOWN_TEXT: &str = "The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the operation is read-only or idempotent; if it may have side effects, first verify external state or ask the user. Do not retry blindly.";

/// Result text for a call that was requested but never recorded as started.
pub const TOOL_NOT_STARTED_TEXT: &str =
    "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed.";

/// A call asked for and not yet answered; `None` members are absent.
struct PendingCall {
    call_id: Option<Json>,
    step: Option<Json>,
    call_seq: Option<Json>,
}

/// A call id as a JavaScript `Map` tells keys apart: strings, numbers, booleans and `null`
/// by value (an absent id is `undefined`, apart from `null`), and every object or array a key
/// of its own, as objects are compared by identity.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum CallKey<'a> {
    Absent,
    Null,
    Bool(bool),
    /// The number's bits, with `-0` as `0`.
    Number(u64),
    String(&'a [u8]),
    /// An object or array, by its address in the events.
    Unique(usize),
}

impl<'a> CallKey<'a> {
    fn of(id: Option<JsonRef<'a>>) -> CallKey<'a> {
        let Some(id) = id else {
            return CallKey::Absent;
        };
        if id.is_null() {
            CallKey::Null
        } else if let Some(b) = id.as_bool() {
            CallKey::Bool(b)
        } else if let Some(n) = id.as_f64() {
            CallKey::Number(if n == 0.0 { 0 } else { n.to_bits() })
        } else if let Some(bytes) = id.string_bytes() {
            CallKey::String(bytes)
        } else {
            CallKey::Unique(id.address())
        }
    }
}

/// The calls waiting for a result, in the order a JavaScript `Map` keeps its keys: a call
/// asked for again keeps its place, one answered and asked for again goes last. Each step
/// costs the same however many calls wait, so a message of many calls costs in proportion.
#[derive(Default)]
struct PendingCalls<'a> {
    /// In the order first asked; `None` once answered.
    calls: Vec<Option<PendingCall>>,
    places: HashMap<CallKey<'a>, usize>,
}

impl<'a> PendingCalls<'a> {
    fn ask(&mut self, key: CallKey<'a>, call: PendingCall) {
        match self.places.get(&key) {
            Some(&place) => self.calls[place] = Some(call),
            None => {
                self.places.insert(key, self.calls.len());
                self.calls.push(Some(call));
            }
        }
    }

    fn get_mut(&mut self, key: CallKey<'a>) -> Option<&mut PendingCall> {
        let place = *self.places.get(&key)?;
        self.calls[place].as_mut()
    }

    fn answer(&mut self, key: CallKey<'a>) {
        if let Some(place) = self.places.remove(&key) {
            self.calls[place] = None;
        }
    }

    fn clear(&mut self) {
        self.calls.clear();
        self.places.clear();
    }

    fn into_calls(self) -> impl Iterator<Item = PendingCall> {
        self.calls.into_iter().flatten()
    }
}

/// The closing events to append, empty when the log ends outside a turn.
///
/// DSH reads some members of every event as it walks the whole log, and a log where such a
/// read throws is corrupt ([`read_throws`]). Both turn boundaries reset everything the walk
/// keeps, so the log ends inside a turn only when its last boundary is a `turn/start`, and
/// the events after that decide the closers: finding it from the end spares cloning the call
/// ids of every earlier event.
pub(super) fn interrupted_turn_closers(events: &[EventView<'_>]) -> Result<Vec<Json>, LogFault> {
    if let Some(event) = events.iter().find(|event| read_throws(**event)) {
        let seq = event.value.lookup("seq").map(JsonRef::to_js_string).unwrap_or_default();
        let kind = event.kind.unwrap_or_default();
        return Err(LogFault::corrupt(format!(
            "{kind} at seq {seq} lacks the data or content block the repair reads"
        )));
    }
    let Some(start) = events
        .iter()
        .rposition(|event| matches!(event.kind, Some("turn/start" | "turn/end")))
    else {
        return Ok(Vec::new());
    };
    let (turn_start, after) = (events[start], &events[start + 1..]);
    if turn_start.kind != Some("turn/start") {
        return Ok(Vec::new());
    }
    let turn_start = turn_start.value;
    // A turn started with `turn: null` reads as no open turn at all.
    let turn = match field(turn_start, "turn") {
        Some(turn) if turn.is_null() => return Ok(Vec::new()),
        turn => turn.map(JsonRef::to_json),
    };
    let mut open_step = None;
    let mut pending = PendingCalls::default();
    for &EventView { value: event, kind } in after {
        match kind {
            Some("step/start") => open_step = opened_step(field(event, "step")),
            Some("step/end") => {
                pending.clear();
                open_step = None;
            }
            Some("assistant/message") => ask_calls(event, &mut pending),
            Some("tool/call") => {
                if let Some(call) = pending.get_mut(CallKey::of(field(event, "callId"))) {
                    call.call_seq = event.lookup("seq").map(JsonRef::to_json);
                }
            }
            Some("tool/result") => {
                let source = field(event, "message").and_then(|m| m.get("source"));
                pending.answer(CallKey::of(source.and_then(|s| s.get("callId"))));
            }
            _ => {}
        }
    }
    let last = after.last().map_or(turn_start, |event| event.value);
    Ok(closers(turn, open_step, pending, last))
}

/// A member of an event's `data`, as JavaScript reads `event.data[key]`.
fn field<'a>(event: JsonRef<'a>, key: &str) -> Option<JsonRef<'a>> {
    event.get("data").and_then(|data| data.get(key))
}

/// Whether DSH's walk throws on `event`: it reads a member of the `data` of every
/// `turn/start`, `step/start` and `tool/call`, which throws when `data` is absent or `null`,
/// and the `type` of every content block of an assistant message, which throws on a `null`
/// block (the message's own shape is checked before the walk).
fn read_throws(EventView { value: event, kind }: EventView<'_>) -> bool {
    match kind {
        Some("turn/start" | "step/start" | "tool/call") => event.get("data").is_none_or(JsonRef::is_null),
        Some("assistant/message") => message_content(event).any(JsonRef::is_null),
        _ => false,
    }
}

/// The step a `step/start` opens: `None` when its step is `null` (DSH then sees no open
/// step), else its step, absent when it has none.
fn opened_step(step: Option<JsonRef<'_>>) -> Option<Option<Json>> {
    match step {
        Some(step) if step.is_null() => None,
        step => Some(step.map(JsonRef::to_json)),
    }
}

/// An assistant message's content blocks.
fn message_content(event: JsonRef<'_>) -> impl Iterator<Item = JsonRef<'_>> {
    let content = field(event, "message").and_then(|m| m.get("content"));
    content.and_then(JsonRef::items).into_iter().flatten()
}

/// Notes the tool calls an `assistant/message` asks for as pending in its step; a call asked
/// for again takes its new step and forgets that it was recorded, in its old place.
fn ask_calls<'a>(event: JsonRef<'a>, pending: &mut PendingCalls<'a>) {
    let step = field(event, "step");
    for block in message_content(event) {
        if block.get("type").and_then(JsonRef::as_str) != Some("tool-call") {
            continue;
        }
        let id = block.get("id");
        let call = PendingCall {
            call_id: id.map(JsonRef::to_json),
            step: step.map(JsonRef::to_json),
            call_seq: None,
        };
        pending.ask(CallKey::of(id), call);
    }
}

/// The events that close a turn the log ends inside, after `last`: a result for each call
/// still `pending`, the open step's end, the turn's end. Out of line: few logs end inside a
/// turn, and the engine then never optimises this.
#[inline(never)]
fn closers(
    turn: Option<Json>,
    open_step: Option<Option<Json>>,
    pending: PendingCalls<'_>,
    last: JsonRef<'_>,
) -> Vec<Json> {
    let mut seq = last.lookup("seq").and_then(JsonRef::as_f64).unwrap_or_default() + 1.0;
    let time = last.lookup("time").map(JsonRef::to_json);
    let mut closers = Vec::new();
    for call in pending.into_calls() {
        closers.push(interrupted_result(&call, turn.as_ref(), seq, time.as_ref()));
        seq += 1.0;
    }
    let event = |kind: &str, seq: f64, data: Json| {
        let envelope = vec![
            ("type", Some(Json::str(kind))),
            ("seq", Some(Json::Number(seq))),
            ("time", time.clone()),
            ("data", Some(data)),
        ];
        object_of_present(envelope)
    };
    if let Some(step) = open_step {
        let data = object_of_present(vec![("turn", turn.clone()), ("step", step)]);
        closers.push(event("step/end", seq, data));
        seq += 1.0;
    }
    let reason = object(vec![("kind", Json::str("interrupted"))]);
    let data = object_of_present(vec![("turn", turn), ("reason", Some(reason))]);
    closers.push(event("turn/end", seq, data));
    closers
}

/// The error result that closes `call`, at `seq`: its outcome is unknown when its `tool/call`
/// was recorded (and the result then names that event as its source), else it never started.
fn interrupted_result(call: &PendingCall, turn: Option<&Json>, seq: f64, time: Option<&Json>) -> Json {
    let started = call.call_seq.is_some();
    // The id as a JavaScript template prints it; an object or array id is printed as JSON
    // instead, which no read shows: its closer fails the message check, and the log with it.
    let call_id_text = match &call.call_id {
        None => "undefined".to_owned(),
        Some(Json::String(s)) => s.to_lossy().into_owned(),
        Some(other) => other.to_js_string_for_message(),
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
    let result_block = object_of_present(vec![
        ("type", Some(Json::str("tool-result"))),
        ("toolCallId", call.call_id.clone()),
        ("isError", Some(Json::Bool(true))),
        ("content", Some(Json::Array(vec![text_block]))),
    ]);
    let source = object_of_present(vec![
        ("kind", Some(Json::str("tool"))),
        ("callId", call.call_id.clone()),
    ]);
    let message = object(vec![
        (
            "id",
            Json::str(&format!("interrupted-tool-result-{call_id_text}-{seq}")),
        ),
        ("role", Json::str("user")),
        ("source", source),
        ("content", Json::Array(vec![result_block])),
    ]);
    let error = object(vec![("name", Json::str(error_name)), ("code", Json::str(error_code))]);
    let data = object_of_present(vec![
        ("turn", turn.cloned()),
        ("step", call.step.clone()),
        ("message", Some(message)),
        ("error", Some(error)),
    ]);
    let mut fields = vec![
        ("type", Some(Json::str("tool/result"))),
        ("seq", Some(Json::Number(seq))),
        ("time", time.cloned()),
        ("data", Some(data)),
        ("surfaceOp", Some(Json::str("append"))),
    ];
    if let Some(call_seq) = &call.call_seq {
        fields.push(("sourceEventSeqs", Some(Json::Array(vec![call_seq.clone()]))));
    }
    object_of_present(fields)
}

fn object(pairs: Vec<(&str, Json)>) -> Json {
    Json::Object(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect::<JsonObject>())
}

/// An object of the `pairs` whose values are present, as `JSON.stringify` leaves out members
/// whose values are `undefined`.
fn object_of_present(pairs: Vec<(&str, Option<Json>)>) -> Json {
    object(pairs.into_iter().filter_map(|(k, v)| Some((k, v?))).collect())
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
        let closers = closers_of(&two_turns(None));
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
        assert!(closers_of(&two_turns(Some(ended))).is_empty());
        let unbounded = events(&[r#""type":"step/start","data":{"turn":1,"step":1}"#]);
        assert!(closers_of(&unbounded).is_empty());
        assert!(closers_of(&[]).is_empty());
    }

    fn closers_of(events: &[Json]) -> Vec<Json> {
        interrupted_turn_closers(&views(events)).expect("a walk that does not throw")
    }

    fn views(events: &[Json]) -> Vec<EventView<'_>> {
        events.iter().map(|event| EventView::of(JsonRef::Tree(event))).collect()
    }

    fn call_ids(closers: &[Json]) -> Vec<String> {
        let result_source = |c: &Json| c.get("data")?.get("message")?.get("source").cloned();
        let results = closers.iter().filter_map(result_source);
        results
            .map(|source| source.get("callId").map_or("undefined".into(), Json::to_js_string))
            .collect()
    }

    #[test]
    fn pending_calls_are_keyed_and_ordered_as_a_javascript_map_keys_them() {
        let asking = r#""type":"assistant/message","data":{"step":1,"message":{"content":[
            {"type":"tool-call"},{"type":"tool-call","id":null},{"type":"tool-call","id":7},
            {"type":"tool-call","id":"7"},{"type":"tool-call","id":{"k":1}},{"type":"tool-call","id":{"k":1}},
            {"type":"tool-call","id":"again"},{"type":"tool-call","id":-0},{"type":"tool-call","id":0}]}}"#;
        let log = events(&[
            r#""type":"turn/start","data":{"turn":1}"#,
            asking,
            r#""type":"tool/call","data":{"callId":"again"}"#,
            r#""type":"tool/result","data":{"message":{"source":{"callId":"again"}}}"#,
            r#""type":"assistant/message","data":{"message":{"content":[{"type":"tool-call","id":"again"},{"type":"tool-call","id":7}]}}"#,
            r#""type":"tool/call","data":"no members""#,
        ]);
        let closers = closers_of(&log);
        assert_eq!(
            call_ids(&closers),
            [
                "undefined",
                "null",
                "7",
                "\"7\"",
                r#"{"k":1}"#,
                r#"{"k":1}"#,
                "0",
                "\"again\""
            ],
            "absent and null apart, 7 and \"7\" apart, equal objects apart, -0 and 0 one key, \
             a call asked again keeps its place, one answered and asked again goes last"
        );
        let started: Vec<bool> = closers.iter().map(|c| c.get("sourceEventSeqs").is_some()).collect();
        assert_eq!(
            started[..8],
            [true, false, false, false, false, false, false, false],
            "the tool/call without members finds the call without an id; 7 was asked again"
        );
        let step = |c: &Json| c.get("data").and_then(|d| d.get("step")).cloned();
        assert_eq!(step(&closers[2]), None, "7, asked again by a message without a step");
        assert_eq!(step(&closers[1]), Some(Json::int(1)));
        assert!(
            closers[0].get("data").and_then(|d| d.get("turn")).is_some() && closers[2].get("time").is_some(),
            "the turn and time are copied"
        );
    }

    #[test]
    fn what_is_absent_stays_out_of_the_closers_and_null_boundaries_close_nothing() {
        let open = |turn_start: &str, step_start: &str| {
            closers_of(&events(&[turn_start, step_start, r#""type":"user/message","data":{}"#]))
        };
        let no_turn = open(r#""type":"turn/start","data":{}"#, r#""type":"step/start","data":{}"#);
        let kinds: Vec<_> = no_turn.iter().map(|c| text(c.get("type"))).collect();
        assert_eq!(kinds, [Some("step/end"), Some("turn/end")]);
        assert_eq!(no_turn[0].get("data"), Some(&Json::Object(JsonObject::new())));
        let null_step = open(
            r#""type":"turn/start","data":{"turn":1}"#,
            r#""type":"step/start","data":{"step":null}"#,
        );
        assert_eq!(null_step.len(), 1, "a step started with step null is not open");
        let null_turn = open(
            r#""type":"turn/start","data":{"turn":null}"#,
            r#""type":"step/start","data":{"step":1}"#,
        );
        assert!(null_turn.is_empty(), "a turn started with turn null is not open");
    }

    #[test]
    fn a_read_that_throws_in_javascript_makes_the_log_corrupt_wherever_it_is() {
        let closed = |event: &str| {
            let log = events(&[
                event,
                r#""type":"turn/start","data":{"turn":1}"#,
                r#""type":"turn/end","data":{}"#,
            ]);
            interrupted_turn_closers(&views(&log)).map(|closers| closers.len())
        };
        for throws in [
            r#""type":"turn/start""#,
            r#""type":"step/start","data":null"#,
            r#""type":"tool/call""#,
            r#""type":"assistant/message","data":{"message":{"content":[null]}}"#,
        ] {
            assert!(closed(throws).is_err(), "{throws}");
        }
        for reads in [
            r#""type":"tool/call","data":"x""#,
            r#""type":"step/end""#,
            r#""type":"assistant/message","data":{"message":{"content":[1]}}"#,
        ] {
            assert_eq!(closed(reads).ok(), Some(0), "{reads}");
        }
    }
}
