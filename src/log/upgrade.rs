//! Older version-0 shapes rewritten to the current ones before validation, and the
//! retired vocabulary that makes a log corrupt instead.

use super::LogFault;
use crate::json::{Json, JsonObject, is_safe_integer};
use std::collections::HashMap;

/// Refuses `request/header-delta`, `mode/set` and `request/header` with reason `fallback`.
pub(super) fn reject_retired_vocabulary(events: &[Json]) -> Result<(), LogFault> {
    for retired in ["request/header-delta", "mode/set"] {
        if let Some(event) = events.iter().find(|e| type_of(e) == Some(retired)) {
            return Err(LogFault::corrupt(format!(
                "unsupported legacy {retired} event at seq {}",
                seq_text(event)
            )));
        }
    }
    if let Some(event) = events.iter().find(|e| {
        type_of(e) == Some("request/header")
            && e.get("data").and_then(|d| d.get("reason")).and_then(Json::as_str) == Some("fallback")
    }) {
        return Err(LogFault::corrupt(format!(
            "unsupported legacy request/header reason \"fallback\" at seq {}",
            seq_text(event)
        )));
    }
    Ok(())
}

/// Rewrites legacy shapes in place, in DSH's order per event: `turn/start`, `turn/end`,
/// `steering/message`, then pre-identity messages. Returns the indices of the events it
/// rewrote.
pub(super) fn upgrade_legacy_shapes(events: &mut [Json], session_id: &str) -> Result<Vec<usize>, LogFault> {
    let mut message_ids: HashMap<u64, Json> = HashMap::new();
    let mut rewritten = Vec::new();
    for (index, event) in events.iter_mut().enumerate() {
        let Json::Object(object) = event else {
            continue;
        };
        let mut changed = upgrade_turn_start(object)?;
        changed |= upgrade_turn_end(object)?;
        changed |= upgrade_steering(object, session_id)?;
        changed |= upgrade_message(object, session_id, &message_ids);
        if changed {
            rewritten.push(index);
        }
        if let (Some(seq), Some(id)) = (object.get("seq").and_then(Json::as_f64), message_id(object)) {
            message_ids.insert(seq as u64, id.clone());
        }
    }
    Ok(rewritten)
}

fn type_of(event: &Json) -> Option<&str> {
    event.get("type").and_then(Json::as_str)
}

fn seq_text(event: &Json) -> String {
    event
        .get("seq")
        .map(Json::to_js_string)
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

fn positive_turn(value: Option<&Json>) -> bool {
    value
        .and_then(Json::as_f64)
        .is_some_and(|n| is_safe_integer(n) && n >= 1.0)
}

fn malformed(kind: &str, object: &JsonObject) -> LogFault {
    let seq = object.get("seq").map(Json::to_js_string).unwrap_or_default();
    LogFault::corrupt(format!("malformed pre-react-loop {kind} at seq {seq}"))
}

fn upgrade_turn_start(object: &mut JsonObject) -> Result<bool, LogFault> {
    if object.get("type").and_then(Json::as_str) != Some("turn/start") {
        return Ok(false);
    }
    let Some(data) = object.get("data").and_then(Json::as_object) else {
        return Ok(false);
    };
    if !data.contains_key("trigger") {
        return Ok(false);
    }
    let trigger_ok = data
        .get("trigger")
        .and_then(|t| t.get("kind"))
        .is_some_and(Json::is_non_empty_string)
        && data.get("trigger").and_then(Json::as_object).is_some();
    if !positive_turn(data.get("turn")) || !has_only_keys(data, &["turn", "trigger"], &[]) || !trigger_ok {
        return Err(malformed("turn/start", object));
    }
    let mut upgraded = JsonObject::new();
    upgraded.insert("turn", data.get("turn").cloned().unwrap_or(Json::Null));
    object.insert("data", Json::Object(upgraded));
    Ok(true)
}

fn upgrade_turn_end(object: &mut JsonObject) -> Result<bool, LogFault> {
    if object.get("type").and_then(Json::as_str) != Some("turn/end") {
        return Ok(false);
    }
    let Some(data) = object.get("data").and_then(Json::as_object) else {
        return Ok(false);
    };
    let reason = data.get("reason").and_then(Json::as_object);
    let Some(reason) = reason.filter(|r| {
        positive_turn(data.get("turn"))
            && has_only_keys(data, &["turn", "reason"], &[])
            && r.get("kind").is_some_and(Json::is_string)
    }) else {
        return Err(malformed("turn/end", object));
    };
    let obj = |pairs: Vec<(&str, Json)>| Json::Object(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect());
    let upgraded = match reason.get("kind").and_then(Json::as_str).unwrap_or_default() {
        "completed" | "blocked" | "max-tokens" | "interrupted" => {
            if !has_only_keys(reason, &["kind"], &[]) {
                return Err(malformed("turn/end", object));
            }
            return Ok(false);
        }
        "aborted" => {
            if reason.contains_key("reason") {
                return Ok(false);
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
        "error" => {
            if reason.contains_key("error") {
                return Ok(false);
            }
            if !reason
                .get("step")
                .and_then(Json::as_f64)
                .is_some_and(|n| is_safe_integer(n) && n >= 0.0)
            {
                return Err(malformed("turn/end", object));
            }
            let failure = reason.get("failure").and_then(Json::as_object);
            let failure_ok = failure.is_some_and(|f| {
                has_only_keys(reason, &["kind", "step", "failure"], &[])
                    && has_only_keys(
                        f,
                        &["message", "code"],
                        &["status", "providerRetryAfterMs", "requestId"],
                    )
                    && f.get("message").is_some_and(Json::is_string)
                    && f.get("code").is_some_and(Json::is_string)
                    && f.get("status").is_none_or(|v| matches!(v, Json::Number(_)))
                    && f.get("providerRetryAfterMs")
                        .is_none_or(|v| matches!(v, Json::Number(_)))
                    && f.get("requestId").is_none_or(Json::is_string)
            });
            if let (true, Some(failure)) = (failure_ok, failure) {
                obj(vec![
                    ("kind", Json::str("error")),
                    ("error", Json::Object(failure.clone())),
                ])
            } else {
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
                let error = obj(vec![
                    ("message", reason.get("message").cloned().unwrap_or(Json::Null)),
                    ("code", code),
                ]);
                obj(vec![("kind", Json::str("error")), ("error", error)])
            }
        }
        _ => return Ok(false),
    };
    if let Some(Json::Object(data)) = object.get_mut("data") {
        data.insert("reason", upgraded);
    }
    Ok(true)
}

fn upgrade_steering(object: &mut JsonObject, session_id: &str) -> Result<bool, LogFault> {
    if object.get("type").and_then(Json::as_str) != Some("steering/message") {
        return Ok(false);
    }
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

fn upgrade_message(object: &mut JsonObject, session_id: &str, message_ids: &HashMap<u64, Json>) -> bool {
    let kind = object.get("type").and_then(Json::as_str).unwrap_or_default().to_owned();
    // Only a legacy message needs its id, so it is made only then.
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
    match kind.as_str() {
        "user/message" => {
            if data.contains_key("id")
                || data.contains_key("role")
                || data.contains_key("message")
                || !data.contains_key("content")
                || !data.contains_key("source")
            {
                return false;
            }
            data.insert("id", legacy());
            data.insert("role", Json::str("user"));
        }
        "assistant/message" => {
            if data.contains_key("message") || !data.contains_key("content") || !data.contains_key("provenance") {
                return false;
            }
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
        "tool/result" => {
            if data.contains_key("message")
                || !data.contains_key("callId")
                || !data.contains_key("content")
                || !data.contains_key("isError")
            {
                return false;
            }
            let call_id = data.remove("callId").unwrap_or(Json::Null);
            let content = data.remove("content").unwrap_or(Json::Null);
            let is_error = data.remove("isError").unwrap_or(Json::Null);
            let id = match replacement_start {
                None => Some(legacy()),
                // A replacement keeps the message id of the result it rewrites.
                Some(start) => message_ids
                    .get(&(start as u64))
                    .cloned()
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
        _ => return false,
    }
    true
}

/// The message id of a current-shape message event.
fn message_id(object: &JsonObject) -> Option<&Json> {
    let data = object.get("data")?;
    let message = match object.get("type").and_then(Json::as_str)? {
        "user/message" => data,
        _ => data.get("message")?,
    };
    message.get("id").filter(|id| id.is_string())
}
