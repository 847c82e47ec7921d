//! Older version-0 shapes rewritten to the current ones before validation, and the
//! retired vocabulary that makes a log corrupt instead.
//!
//! Every event meets the checks; only legacy logs reach the rewrites, which are kept out of
//! line (`#[inline(never)]`). A wasm engine optimises a function whole once it runs hot, and
//! with the rewrites inlined, the function every event passes through was three times the code
//! to compile (8.1 kB of wasm instead of 2.7), on the cores the load itself runs on.

use super::{EventView, LogFault, RawEvent, RawEvents};
use crate::json::{Json, JsonObject, JsonRef, Tape, is_safe_integer};
use std::collections::HashMap;

/// Refuses `request/header-delta`, `mode/set` and `request/header` with reason `fallback`, in
/// that order (the first event of the first of them found anywhere), in one pass.
pub(super) fn reject_retired_vocabulary(events: &[EventView<'_>]) -> Result<(), LogFault> {
    let mut first: [Option<JsonRef<'_>>; 3] = [None; 3];
    for &event in events {
        if let Some(retired) = retired_vocabulary(event) {
            first[retired].get_or_insert(event.value);
        }
    }
    let what = [
        "legacy request/header-delta event",
        "legacy mode/set event",
        "legacy request/header reason \"fallback\"",
    ];
    match what.iter().zip(first).find_map(|(what, event)| Some((what, event?))) {
        Some((what, event)) => Err(LogFault::corrupt(format!(
            "unsupported {what} at seq {}",
            seq_text(event)
        ))),
        None => Ok(()),
    }
}

/// Which of the retired words `event` uses (their order in [`reject_retired_vocabulary`]).
pub(super) fn retired_vocabulary(EventView { value: event, kind }: EventView<'_>) -> Option<usize> {
    match kind {
        Some("request/header-delta") => Some(0),
        Some("mode/set") => Some(1),
        Some("request/header")
            if event
                .get("data")
                .and_then(|d| d.get("reason"))
                .and_then(JsonRef::as_str)
                == Some("fallback") =>
        {
            Some(2)
        }
        _ => None,
    }
}

/// Rewrites legacy shapes in place, in DSH's order per event: `turn/start`, `turn/end`,
/// `steering/message`, then pre-identity messages. Returns the indices of the events it
/// rewrote. The first three are told apart by one look at the type, which none of them
/// but `steering/message` changes (to `user/message`, which the last then finds).
///
/// A rewritten event is printed from its tree, so one read with strings elided is rewritten
/// again from `in_full(index)`, its line parsed in full (`None`: it was read in full). Which
/// events are legacy, and how they are rewritten, never depends on an elided string.
///
/// An event read onto the tape is read as a tree only when [`may_be_legacy`]; `text` is the
/// log's printed lines, which the tape points into.
pub(super) fn upgrade_legacy_shapes(
    raw: &mut RawEvents,
    text: &str,
    session_id: &str,
    mut in_full: impl FnMut(usize) -> Option<Json>,
) -> Result<Vec<usize>, LogFault> {
    let mut message_ids = MessageIds::default();
    let mut rewritten = Vec::new();
    let RawEvents { events, tape } = raw;
    for index in 0..events.len() {
        if let RawEvent::Taped(at) = events[index] {
            let event = tape.get(text, 0, at);
            if !may_be_legacy(EventView::of(event)) {
                message_ids.note(event);
                continue;
            }
            events[index] = RawEvent::Tree(event.to_json());
        }
        let mut changed = upgrade_event(events, index, session_id, &mut message_ids, (tape, text))?;
        if changed && let Some(full) = in_full(index) {
            events[index] = RawEvent::Tree(full);
            changed = upgrade_event(events, index, session_id, &mut message_ids, (tape, text))?;
        }
        if changed {
            rewritten.push(index);
        }
        message_ids.note(events[index].view(tape, text));
    }
    Ok(rewritten)
}

/// The events before the one being upgraded, and the tape and lines a taped one is read in.
#[derive(Clone, Copy)]
struct Earlier<'a> {
    events: &'a [RawEvent],
    tape: &'a Tape,
    text: &'a str,
}

/// Whether [`upgrade_event`] may rewrite or refuse `event`. It may say yes of an event left
/// as it is (the event is then read as a tree, and the rewrite decides), never no of one
/// rewritten or refused.
pub(super) fn may_be_legacy(EventView { value: event, kind }: EventView<'_>) -> bool {
    // The type decides for most events, which then need no look at their data.
    let shape: fn(JsonRef<'_>) -> bool = match kind {
        Some("steering/message") => return true,
        Some("turn/start") => |data| data.contains_key("trigger"),
        Some("turn/end") => |data| !is_current_turn_end(data),
        Some("user/message") => |data| MessageKind::User.is_legacy(data),
        Some("assistant/message") => |data| MessageKind::Assistant.is_legacy(data),
        Some("tool/result") => |data| MessageKind::ToolResult.is_legacy(data),
        _ => return false,
    };
    event.get("data").filter(|data| data.is_object()).is_some_and(shape)
}

/// Whether a `turn/end`'s data is `{turn, reason}` with a positive turn and a reason that
/// [`upgrade_turn_end`] leaves as it is without a look further: `{kind}` of a kind that never
/// changes, or an `aborted` or `error` reason that holds its cause (`reason`, `error`), as a
/// current harness writes them.
fn is_current_turn_end(data: JsonRef<'_>) -> bool {
    let reason = data.lookup("reason").filter(|reason| reason.is_object());
    let kind = reason
        .and_then(|reason| reason.lookup("kind"))
        .and_then(JsonRef::as_str);
    let holds = |key| reason.is_some_and(|reason| reason.contains_key(key));
    let current_reason = match kind {
        Some("completed" | "blocked" | "max-tokens" | "interrupted") => reason.and_then(JsonRef::len) == Some(1),
        Some("aborted") => holds("reason"),
        Some("error") => holds("error"),
        _ => false,
    };
    data.len() == Some(2) && positive_turn(data.lookup("turn")) && current_reason
}

/// Rewrites event `index` if it has a legacy shape; whether it did.
fn upgrade_event(
    events: &mut [RawEvent],
    index: usize,
    session_id: &str,
    message_ids: &mut MessageIds,
    (tape, text): (&Tape, &str),
) -> Result<bool, LogFault> {
    let (earlier, rest) = events.split_at_mut(index);
    let Some(RawEvent::Tree(Json::Object(object))) = rest.first_mut() else {
        return Ok(false);
    };
    let earlier = Earlier {
        events: earlier,
        tape,
        text,
    };
    let changed = match type_of_object(object) {
        Some("turn/start") => upgrade_turn_start(object)?,
        Some("turn/end") => upgrade_turn_end(object)?,
        Some("steering/message") => upgrade_steering(object, session_id)?,
        _ => false,
    };
    Ok(upgrade_message(object, session_id, message_ids, earlier) || changed)
}

/// The message id of each earlier event by its `seq`, as a legacy `tool/result` replacement
/// needs (the last event of a `seq` wins): made only when the first such replacement comes,
/// from the events before it, and kept from then on, so a log without one pays nothing.
#[derive(Default)]
struct MessageIds(Option<HashMap<u64, Json>>);

impl MessageIds {
    fn note(&mut self, event: JsonRef<'_>) {
        if let Some(ids) = &mut self.0 {
            note_message_id(ids, event);
        }
    }

    fn get(&mut self, seq: u64, earlier: Earlier<'_>) -> Option<Json> {
        let ids = self.0.get_or_insert_with(|| {
            let mut ids = HashMap::new();
            for event in earlier.events {
                note_message_id(&mut ids, event.view(earlier.tape, earlier.text));
            }
            ids
        });
        ids.get(&seq).cloned()
    }
}

fn note_message_id(ids: &mut HashMap<u64, Json>, event: JsonRef<'_>) {
    if let (Some(seq), Some(id)) = (event.lookup("seq").and_then(JsonRef::as_f64), message_id(event)) {
        ids.insert(seq as u64, id.to_json());
    }
}

fn type_of_object(object: &JsonObject) -> Option<&str> {
    object.get("type").and_then(Json::as_str)
}

fn seq_text(event: JsonRef<'_>) -> String {
    event
        .lookup("seq")
        .map(JsonRef::to_js_string)
        .unwrap_or_else(|| "undefined".into())
}

fn legacy_id(session_id: &str, seq: Option<&Json>) -> Json {
    let seq = seq.map(Json::to_js_string).unwrap_or_else(|| "undefined".into());
    Json::str(&format!("legacy-message:{session_id}:{seq}"))
}

/// Every key allowed and every required key present (DSH's `hasOnlyKeys`).
fn has_only_keys(object: &JsonObject, required: &[&str], optional: &[&str]) -> bool {
    object.keys().all(|k| required.iter().chain(optional).any(|a| k == *a))
        && required.iter().all(|k| object.contains_key(k))
}

fn positive_turn(value: Option<JsonRef<'_>>) -> bool {
    value
        .and_then(JsonRef::as_f64)
        .is_some_and(|n| is_safe_integer(n) && n >= 1.0)
}

#[cold]
#[inline(never)]
fn malformed(kind: &str, object: &JsonObject) -> LogFault {
    let seq = object.get("seq").map(Json::to_js_string).unwrap_or_default();
    LogFault::corrupt(format!("malformed pre-react-loop {kind} at seq {seq}"))
}

/// Upgrades a `turn/start` event.
fn upgrade_turn_start(object: &mut JsonObject) -> Result<bool, LogFault> {
    let has_trigger = object
        .get("data")
        .and_then(Json::as_object)
        .is_some_and(|data| data.contains_key("trigger"));
    if !has_trigger {
        return Ok(false);
    }
    drop_trigger(object)
}

/// A legacy `turn/start` (one with a `trigger`) with its data cut down to the turn.
#[inline(never)]
fn drop_trigger(object: &mut JsonObject) -> Result<bool, LogFault> {
    let Some(data) = object.get("data").and_then(Json::as_object) else {
        return Ok(false);
    };
    let trigger_ok = data
        .get("trigger")
        .and_then(|t| t.get("kind"))
        .is_some_and(Json::is_non_empty_string)
        && data.get("trigger").and_then(Json::as_object).is_some();
    if !positive_turn(data.get("turn").map(JsonRef::Tree))
        || !has_only_keys(data, &["turn", "trigger"], &[])
        || !trigger_ok
    {
        return Err(malformed("turn/start", object));
    }
    let mut upgraded = JsonObject::new();
    upgraded.insert("turn", data.get("turn").cloned().unwrap_or(Json::Null));
    object.insert("data", Json::Object(upgraded));
    Ok(true)
}

/// Upgrades a `turn/end` event.
fn upgrade_turn_end(object: &mut JsonObject) -> Result<bool, LogFault> {
    let Some(data) = object.get("data").and_then(Json::as_object) else {
        return Ok(false);
    };
    let reason = data.get("reason").and_then(Json::as_object);
    let Some(reason) = reason.filter(|r| {
        positive_turn(data.get("turn").map(JsonRef::Tree))
            && has_only_keys(data, &["turn", "reason"], &[])
            && r.get("kind").is_some_and(Json::is_string)
    }) else {
        return Err(malformed("turn/end", object));
    };
    let kind = reason.get("kind").and_then(Json::as_str).unwrap_or_default();
    if matches!(kind, "completed" | "blocked" | "max-tokens" | "interrupted") {
        if !has_only_keys(reason, &["kind"], &[]) {
            return Err(malformed("turn/end", object));
        }
        return Ok(false);
    }
    let Some(upgraded) = legacy_turn_end_reason(kind, reason, object)? else {
        return Ok(false);
    };
    if let Some(Json::Object(data)) = object.get_mut("data") {
        data.insert("reason", upgraded);
    }
    Ok(true)
}

/// The current shape of a `turn/end` reason of `kind` (not one of the kinds that never
/// change), if it has a legacy shape.
#[inline(never)]
fn legacy_turn_end_reason(kind: &str, reason: &JsonObject, object: &JsonObject) -> Result<Option<Json>, LogFault> {
    let obj = |pairs: Vec<(&str, Json)>| Json::Object(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect());
    let upgraded = match kind {
        "aborted" => {
            if reason.contains_key("reason") {
                return Ok(None);
            }
            if !has_only_keys(reason, &["kind"], &[]) {
                return Err(malformed("turn/end", object));
            }
            obj(vec![
                ("kind", Json::str("aborted")),
                ("reason", obj(vec![("kind", Json::str("legacy"))])),
            ])
        }
        "disposed" => {
            if !has_only_keys(reason, &["kind"], &[]) {
                return Err(malformed("turn/end", object));
            }
            obj(vec![
                ("kind", Json::str("aborted")),
                ("reason", obj(vec![("kind", Json::str("disposed"))])),
            ])
        }
        "error" => return legacy_error_reason(reason, object),
        _ => return Ok(None),
    };
    Ok(Some(upgraded))
}

/// A legacy `error` reason upgraded (`None` when it already has the current shape): its
/// `failure`, when that has a failure's shape, else its message and code (`UNKNOWN` when it
/// has none) become the error.
fn legacy_error_reason(reason: &JsonObject, object: &JsonObject) -> Result<Option<Json>, LogFault> {
    if reason.contains_key("error") {
        return Ok(None);
    }
    if !reason
        .get("step")
        .and_then(Json::as_f64)
        .is_some_and(|n| is_safe_integer(n) && n >= 0.0)
    {
        return Err(malformed("turn/end", object));
    }
    let error_reason = |error: Json| {
        let pairs = [("kind".into(), Json::str("error")), ("error".into(), error)];
        Ok(Some(Json::Object(pairs.into_iter().collect())))
    };
    let failure = reason.get("failure").and_then(Json::as_object);
    if let Some(failure) = failure.filter(|failure| is_legacy_failure(reason, failure)) {
        return error_reason(Json::Object(failure.clone()));
    }
    let code = reason.get("code");
    let keys: &[&str] = if code.is_none() {
        &["kind", "step", "message"]
    } else {
        &["kind", "step", "message", "code"]
    };
    if !has_only_keys(reason, keys, &[])
        || !reason.get("message").is_some_and(Json::is_string)
        || code.is_some_and(|c| !c.is_string())
    {
        return Err(malformed("turn/end", object));
    }
    let code = code.cloned().unwrap_or_else(|| Json::str("UNKNOWN"));
    let message = reason.get("message").cloned().unwrap_or(Json::Null);
    error_reason(Json::Object(
        [("message".into(), message), ("code".into(), code)]
            .into_iter()
            .collect(),
    ))
}

/// Whether a legacy error reason holds exactly its kind, step and a `failure` of a provider
/// failure's shape.
fn is_legacy_failure(reason: &JsonObject, failure: &JsonObject) -> bool {
    has_only_keys(reason, &["kind", "step", "failure"], &[])
        && has_only_keys(
            failure,
            &["message", "code"],
            &["status", "providerRetryAfterMs", "requestId"],
        )
        && failure.get("message").is_some_and(Json::is_string)
        && failure.get("code").is_some_and(Json::is_string)
        && failure.get("status").is_none_or(|v| matches!(v, Json::Number(_)))
        && failure
            .get("providerRetryAfterMs")
            .is_none_or(|v| matches!(v, Json::Number(_)))
        && failure.get("requestId").is_none_or(Json::is_string)
}

/// Upgrades a `steering/message` event (a legacy type).
#[inline(never)]
fn upgrade_steering(object: &mut JsonObject, session_id: &str) -> Result<bool, LogFault> {
    let Some(data) = object.get("data").and_then(Json::as_object) else {
        return Err(malformed("steering/message", object));
    };
    let turn_ok = data.get("turn").and_then(Json::as_f64).is_some_and(is_safe_integer);
    let new_data = if let Some(wrapped) = data
        .get("message")
        .and_then(Json::as_object)
        .filter(|_| turn_ok && has_only_keys(data, &["turn", "message"], &[]))
    {
        Json::Object(wrapped.clone())
    } else {
        if !turn_ok || !has_only_keys(data, &["turn", "content", "source"], &[]) {
            return Err(malformed("steering/message", object));
        }
        let mut message = data.clone();
        message.remove("turn");
        message.insert("id", legacy_id(session_id, object.get("seq")));
        message.insert("role", Json::str("user"));
        Json::Object(message)
    };
    object.insert("type", Json::str("user/message"));
    object.insert("data", new_data);
    Ok(true)
}

/// The message events whose data can have a pre-identity shape.
#[derive(Clone, Copy)]
enum MessageKind {
    User,
    Assistant,
    ToolResult,
}

impl MessageKind {
    fn of_type(kind: &str) -> Option<MessageKind> {
        match kind {
            "user/message" => Some(MessageKind::User),
            "assistant/message" => Some(MessageKind::Assistant),
            "tool/result" => Some(MessageKind::ToolResult),
            _ => None,
        }
    }

    /// Whether `data` (an object) has this kind's pre-identity shape.
    fn is_legacy(self, data: JsonRef<'_>) -> bool {
        let has = |key| data.contains_key(key);
        match self {
            MessageKind::User => !has("id") && !has("role") && !has("message") && has("content") && has("source"),
            MessageKind::Assistant => !has("message") && has("content") && has("provenance"),
            MessageKind::ToolResult => !has("message") && has("callId") && has("content") && has("isError"),
        }
    }
}

/// Gives a pre-identity message its id and current shape. Most events are not one, and are
/// told apart by their type and data's keys alone.
fn upgrade_message(
    object: &mut JsonObject,
    session_id: &str,
    message_ids: &mut MessageIds,
    earlier: Earlier<'_>,
) -> bool {
    let Some(kind) = type_of_object(object).and_then(MessageKind::of_type) else {
        return false;
    };
    if !object
        .get("data")
        .filter(|data| matches!(data, Json::Object(_)))
        .is_some_and(|data| kind.is_legacy(JsonRef::Tree(data)))
    {
        return false;
    }
    rewrite_legacy_message(object, kind, session_id, message_ids, earlier)
}

/// [`upgrade_message`]'s rewrite of a message of `kind` with a pre-identity shape.
#[inline(never)]
fn rewrite_legacy_message(
    object: &mut JsonObject,
    kind: MessageKind,
    session_id: &str,
    message_ids: &mut MessageIds,
    earlier: Earlier<'_>,
) -> bool {
    let seq = object.get("seq").cloned();
    let legacy = || legacy_id(session_id, seq.as_ref());
    let replacement_start = object
        .get("surfaceOp")
        .and_then(Json::as_object)
        .filter(|op| op.get("op").and_then(Json::as_str) == Some("replace"))
        .and_then(|op| op.get("start"))
        .and_then(Json::as_f64);
    let Some(Json::Object(data)) = object.get_mut("data") else {
        return false;
    };
    match kind {
        MessageKind::User => {
            data.insert("id", legacy());
            data.insert("role", Json::str("user"));
        }
        MessageKind::Assistant => {
            let content = data.remove("content").unwrap_or(Json::Null);
            let mut source = match data.remove("provenance") {
                Some(Json::Object(p)) => p,
                _ => JsonObject::new(),
            };
            source.insert("kind", Json::str("model"));
            let mut message = JsonObject::new();
            message.insert("id", legacy());
            message.insert("role", Json::str("assistant"));
            message.insert("content", content);
            message.insert("source", Json::Object(source));
            data.insert("message", Json::Object(message));
        }
        MessageKind::ToolResult => {
            let call_id = data.remove("callId").unwrap_or(Json::Null);
            let content = data.remove("content").unwrap_or(Json::Null);
            let is_error = data.remove("isError").unwrap_or(Json::Null);
            let id = match replacement_start {
                None => Some(legacy()),
                // A replacement keeps the message id of the result it rewrites.
                Some(start) => message_ids
                    .get(start as u64, earlier)
                    .filter(|_| start >= 0.0 && start.fract() == 0.0),
            };
            let mut block = JsonObject::new();
            block.insert("type", Json::str("tool-result"));
            block.insert("toolCallId", call_id.clone());
            block.insert("content", content);
            block.insert("isError", is_error);
            let mut source = JsonObject::new();
            source.insert("kind", Json::str("tool"));
            source.insert("callId", call_id);
            let mut message = JsonObject::new();
            if let Some(id) = id {
                message.insert("id", id);
            }
            message.insert("role", Json::str("user"));
            message.insert("content", Json::Array(vec![Json::Object(block)]));
            message.insert("source", Json::Object(source));
            data.insert("message", Json::Object(message));
        }
    }
    true
}

/// The message id of a current-shape message event.
fn message_id(event: JsonRef<'_>) -> Option<JsonRef<'_>> {
    let data = event.lookup("data")?;
    let message = match event.lookup("type").and_then(JsonRef::as_str)? {
        "user/message" => data,
        _ => data.lookup("message")?,
    };
    message.lookup("id").filter(|id| id.is_string())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// [`upgrade_legacy_shapes`] over trees, in place.
    pub(in crate::log) fn upgrade_trees(events: &mut Vec<Json>, session_id: &str) -> Result<Vec<usize>, LogFault> {
        let mut raw = RawEvents::of_trees(std::mem::take(events));
        let rewritten = upgrade_legacy_shapes(&mut raw, "", session_id, |_| None);
        let tree = |event| match event {
            RawEvent::Tree(tree) => tree,
            RawEvent::Taped(_) => unreachable!("trees stay trees"),
        };
        *events = raw.events.into_iter().map(tree).collect();
        rewritten
    }

    fn event(text: &str) -> Json {
        Json::parse(text, Default::default()).expect("json")
    }

    fn legacy_result(seq: u32, replaces: Option<u32>) -> Json {
        let op = match replaces {
            None => r#"{"op":"append"}"#.to_owned(),
            Some(start) => format!(r#"{{"op":"replace","start":{start},"end":{start}}}"#),
        };
        event(&format!(
            r#"{{"type":"tool/result","seq":{seq},"time":1,"data":{{"callId":"c{seq}","content":[],"isError":false}},"surfaceOp":{op}}}"#
        ))
    }

    fn id_of(event: &Json) -> Option<String> {
        let id = event.get("data")?.get("message")?.get("id")?;
        id.as_str().map(str::to_owned)
    }

    /// The probe never passes over a `turn/end` the upgrade rewrites or refuses: every data
    /// shape here that the upgrade leaves alone without an error may be passed over, and the
    /// current shapes a harness writes are.
    #[test]
    fn the_probe_passes_over_only_turn_ends_the_upgrade_leaves_alone() {
        let reasons = [
            (r#"{"turn":1,"reason":{"kind":"completed"}}"#, true),
            (r#"{"turn":2,"reason":{"kind":"interrupted"}}"#, true),
            (
                r#"{"turn":3,"reason":{"kind":"aborted","reason":{"kind":"user"}}}"#,
                true,
            ),
            (
                r#"{"turn":3,"reason":{"kind":"error","error":{"message":"m","code":"C"}}}"#,
                true,
            ),
            (r#"{"turn":1,"reason":{"kind":"completed","extra":1}}"#, false),
            (r#"{"turn":1,"reason":{"kind":"aborted"}}"#, false),
            (r#"{"turn":1,"reason":{"kind":"aborted","extra":1}}"#, false),
            (r#"{"turn":1,"reason":{"kind":"disposed"}}"#, false),
            (r#"{"turn":1,"reason":{"kind":"error","step":0,"message":"m"}}"#, false),
            (r#"{"turn":1,"reason":{"kind":"error"}}"#, false),
            (r#"{"turn":1,"reason":{"kind":"other"}}"#, false),
            (
                r#"{"turn":0,"reason":{"kind":"aborted","reason":{"kind":"user"}}}"#,
                false,
            ),
            (
                r#"{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"user"}},"x":1}"#,
                false,
            ),
            (r#"{"turn":1,"reason":"completed"}"#, false),
            (r#"{"turn":1}"#, false),
        ];
        for (data, current) in reasons {
            let turn_end = event(&format!(r#"{{"type":"turn/end","seq":0,"time":1,"data":{data}}}"#));
            let probed = may_be_legacy(EventView::of(JsonRef::Tree(&turn_end)));
            assert_eq!(!probed, current, "{data}");
            let left_alone = matches!(upgrade_trees(&mut vec![turn_end], "s"), Ok(rewritten) if rewritten.is_empty());
            assert!(
                probed || left_alone,
                "passed over a turn/end the upgrade changes or refuses: {data}"
            );
        }
    }

    /// A legacy replacement keeps the id of the result it replaces, whether that result was
    /// upgraded before the first replacement or is a current one that came after it.
    #[test]
    fn legacy_replacements_take_the_ids_of_earlier_results() {
        let mut events = vec![
            legacy_result(0, None),
            legacy_result(1, Some(0)),
            event(
                r#"{"type":"tool/result","seq":2,"time":1,"data":{"message":{"id":"m2","role":"user","content":[],"source":{"kind":"tool","callId":"c2"}}},"surfaceOp":{"op":"append"}}"#,
            ),
            legacy_result(3, Some(2)),
            legacy_result(4, Some(9)),
        ];
        let rewritten = upgrade_trees(&mut events, "s").expect("upgrades");
        assert_eq!(rewritten, [0, 1, 3, 4]);
        let ids: Vec<Option<String>> = events.iter().map(id_of).collect();
        let legacy = Some("legacy-message:s:0".to_owned());
        assert_eq!(
            ids,
            [legacy.clone(), legacy, Some("m2".into()), Some("m2".into()), None]
        );
    }

    /// The retired types are reported in their order, whichever comes first in the log.
    #[test]
    fn retired_types_are_reported_in_their_order() {
        let at = |kind: &str, seq: u32| event(&format!(r#"{{"type":"{kind}","seq":{seq},"time":1,"data":{{}}}}"#));
        let fallback = event(r#"{"type":"request/header","seq":0,"time":1,"data":{"reason":"fallback"}}"#);
        let message = |events: &[Json]| {
            let events: Vec<EventView<'_>> = events.iter().map(|event| EventView::of(JsonRef::Tree(event))).collect();
            reject_retired_vocabulary(&events).map_err(|f| f.message).err()
        };
        let events = [fallback.clone(), at("mode/set", 1), at("request/header-delta", 2)];
        assert_eq!(
            message(&events).as_deref(),
            Some("unsupported legacy request/header-delta event at seq 2")
        );
        assert_eq!(
            message(&events[..2]).as_deref(),
            Some("unsupported legacy mode/set event at seq 1")
        );
        assert_eq!(
            message(&events[..1]).as_deref(),
            Some("unsupported legacy request/header reason \"fallback\" at seq 0")
        );
        assert_eq!(message(&[at("turn/start", 0)]), None);
    }
}
