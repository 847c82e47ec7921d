//! Whole-log validation as DSH restores a seed: message shapes, the event vocabulary, the
//! event envelope and request headers. (The surface rules live in `fold`.)

use super::{EventView, LogFault};
use crate::error::ErrorCode;
use crate::event::{Envelope, conversation_facts};
use crate::json::{JsonRef, Vocabulary, is_safe_integer};

/// Every event type DSH 0.1.x interprets; anything else needs `"ignorable": true`.
pub const KNOWN_EVENT_TYPES: [&str; 48] = [
    "agent-preset/selected",
    "agent/inbox/spliced",
    "approval/asked",
    "approval/decided",
    "approval/policy",
    "assistant/chunk",
    "assistant/message",
    "command/done",
    "command/run",
    "compaction/end",
    "compaction/prune",
    "compaction/start",
    "compaction/summary",
    "feedback/record",
    "goal/change",
    "hook/invoked",
    "hook/result",
    "llm/retry",
    "llm/retry-started",
    "permission/preset",
    "plan/mode",
    "request/context",
    "request/header",
    "sandbox/mode",
    "schedule/change",
    "session/end-seed",
    "session/title",
    "session/title-llm-request",
    "step/end",
    "step/start",
    "subagent/descriptor",
    "team/member",
    "team/message/delivered",
    "team/message/queued",
    "team/task",
    "todo/write",
    "tool-workflow/agent-end",
    "tool-workflow/agent-start",
    "tool-workflow/run-end",
    "tool-workflow/run-start",
    "tool/call",
    "tool/code-dispatch",
    "tool/code-dispatch-start",
    "tool/result",
    "turn/end",
    "turn/start",
    "user/message",
    "web/deepseek-search-llm-request",
];

/// The known types as a table built at compile time: every event's type is looked up as a log
/// is read, and a scan compared it with dozens of others.
static KNOWN_TYPES: Vocabulary = Vocabulary::new(&[&KNOWN_EVENT_TYPES]);

/// Where `kind` is in [`KNOWN_EVENT_TYPES`] (which repeats no type, so a type's place in the
/// table is its index).
pub fn known_type_index(kind: &str) -> Option<usize> {
    KNOWN_TYPES.place(kind)
}

fn is_known(kind: &str) -> bool {
    known_type_index(kind).is_some()
}

/// Refuses an unknown event type that is not marked ignorable (a refusal, not corruption).
pub(super) fn known_types(events: &[EventView<'_>]) -> Result<(), LogFault> {
    match events.iter().find(|event| !is_known_or_ignorable(**event)) {
        Some(event) => Err(unknown_type(event.value)),
        None => Ok(()),
    }
}

/// Whether [`known_types`] lets `event` pass.
pub(super) fn is_known_or_ignorable(event: EventView<'_>) -> bool {
    event.kind.is_some_and(is_known) || event.value.get("ignorable").and_then(JsonRef::as_bool) == Some(true)
}

/// The refusal of `event`'s type, in DSH's words. Out of line: no valid log reaches it.
#[cold]
#[inline(never)]
fn unknown_type(event: JsonRef<'_>) -> LogFault {
    let shown = event
        .lookup("type")
        .map(|kind| kind.to_json().to_js_string_for_message())
        .unwrap_or_else(|| "undefined".into());
    let seq = event
        .lookup("seq")
        .map(JsonRef::to_js_string)
        .unwrap_or_else(|| "undefined".into());
    LogFault::new(
        ErrorCode::LoadUnknownEventType,
        format!(
            "event type {shown} (seq {seq}) is unknown and not marked ignorable; the log was likely written by a newer harness"
        ),
    )
}

fn has_provider_model(value: Option<JsonRef<'_>>) -> bool {
    value.is_some_and(|v| {
        v.get("provider").is_some_and(JsonRef::is_non_empty_string)
            && v.get("model").is_some_and(JsonRef::is_non_empty_string)
    })
}

/// The message rules of `user/message`, `assistant/message` and `tool/result`.
pub(super) fn message_shape(event: EventView<'_>) -> Result<(), LogFault> {
    let EventView { value: event, kind } = event;
    let kind = kind.unwrap_or_default();
    if !matches!(kind, "user/message" | "assistant/message" | "tool/result") {
        return Ok(());
    }
    let fail = |why: &str| {
        let seq = event.lookup("seq").map(JsonRef::to_js_string).unwrap_or_default();
        Err(LogFault::corrupt(format!("{kind} at seq {seq} {why}")))
    };
    let data = event.get("data");
    let message = if kind == "user/message" {
        data
    } else {
        data.and_then(|d| d.get("message"))
    };
    let Some(message) = message
        .filter(|m| m.is_object())
        .filter(|m| m.get("id").is_some_and(JsonRef::is_non_empty_string))
    else {
        return fail("lacks an identified message");
    };
    let role = if kind == "assistant/message" {
        "assistant"
    } else {
        "user"
    };
    if message.get("role").and_then(JsonRef::as_str) != Some(role) {
        return fail(&format!("message must have role {role:?}"));
    }
    let source = message.get("source").filter(|s| s.is_object());
    let Some(source) = source.filter(|s| s.get("kind").is_some_and(JsonRef::is_non_empty_string)) else {
        return fail("message has invalid source");
    };
    let Some(content) = message.get("content").filter(|c| c.is_array()) else {
        return fail("message has invalid content");
    };
    let source_kind = source.get("kind").and_then(JsonRef::as_str);
    match kind {
        "assistant/message" if source_kind != Some("model") || !has_provider_model(Some(source)) => {
            return fail("message must have model source");
        }
        "tool/result" => {
            let call_id = source.get("callId");
            if source_kind != Some("tool") || !call_id.is_some_and(JsonRef::is_non_empty_string) {
                return fail("message must have tool source");
            }
            let block = content.items().and_then(|mut items| items.next());
            let block_ok = content.len() == Some(1)
                && block.is_some_and(|b| {
                    b.get("type").and_then(JsonRef::as_str) == Some("tool-result")
                        && b.get("content").is_some_and(JsonRef::is_array)
                });
            if !block_ok {
                return fail("message must contain one tool-result block");
            }
            if block.and_then(|b| b.get("toolCallId")) != call_id {
                return fail("message has mismatched tool call ids");
            }
        }
        _ => {}
    }
    Ok(())
}

/// Checks every envelope and request header of `events` (the log's events from index
/// `first` on: 0 for a whole log, the old length for an append), and what an event keeps of
/// its envelope and message; `Err` at the first invalid one.
pub(super) fn envelopes(events: &[EventView<'_>], first: usize) -> Result<Vec<Envelope>, LogFault> {
    (first..)
        .zip(events)
        .map(|(index, event)| envelope(index, *event))
        .collect()
}

/// [`envelopes`] of the event at `index`.
pub(super) fn envelope(index: usize, EventView { value: event, kind }: EventView<'_>) -> Result<Envelope, LogFault> {
    let invalid = || LogFault::corrupt(format!("event at index {index} has an invalid event envelope"));
    let kind = kind.ok_or_else(invalid)?;
    let members = EnvelopeMembers::of(event).ok_or_else(invalid)?;
    let seq = members
        .seq
        .and_then(JsonRef::as_f64)
        .filter(|n| is_safe_integer(*n) && *n >= 0.0)
        .ok_or_else(invalid)?;
    let time = members
        .time
        .and_then(JsonRef::as_f64)
        .filter(|n| is_safe_integer(*n))
        .ok_or_else(invalid)?;
    if !members.data || members.ignorable.is_some_and(|v| v.as_bool() != Some(true)) {
        return Err(invalid());
    }
    if kind == "request/header" {
        request_header(event, index)?;
    }
    if seq != index as f64 {
        return Err(LogFault::corrupt(format!(
            "event at index {index} has seq {seq} (expected {index}); the log must be contiguous from 0"
        )));
    }
    let message = conversation_facts(event, Some(kind)).map(|(message, _)| message);
    Ok(Envelope::new(seq as u64, time as i64, kind, message))
}

/// The members of an event's envelope; `None` when it is not an object or has a key an
/// envelope may not have (found by counting: an object's keys are distinct, so it has no other
/// key when it has as many as were found among those allowed). Only asked of an event whose
/// `type` is a string, which is one of them.
struct EnvelopeMembers<'a> {
    seq: Option<JsonRef<'a>>,
    time: Option<JsonRef<'a>>,
    data: bool,
    ignorable: Option<JsonRef<'a>>,
}

impl<'a> EnvelopeMembers<'a> {
    fn of(event: JsonRef<'a>) -> Option<EnvelopeMembers<'a>> {
        let keys = event.len().filter(|_| event.is_object())?;
        let members = EnvelopeMembers {
            seq: event.get("seq"),
            time: event.get("time"),
            data: event.get("data").is_some(),
            ignorable: event.get("ignorable"),
        };
        let fold_members = [event.get("surfaceOp"), event.get("sourceEventSeqs")];
        let found = [members.seq, members.time, members.ignorable]
            .iter()
            .chain(&fold_members)
            .filter(|member| member.is_some())
            .count()
            + usize::from(members.data)
            + 1;
        (found == keys).then_some(members)
    }
}

fn request_header(event: JsonRef<'_>, index: usize) -> Result<(), LogFault> {
    let fail = |why: &str| Err(LogFault::corrupt(format!("request/header at index {index} {why}")));
    let header = event
        .lookup("data")
        .and_then(|d| d.lookup("header"))
        .filter(|h| h.is_object());
    let config = header.and_then(|h| h.lookup("config"));
    if !has_provider_model(config) {
        return fail("lacks provider/model");
    }
    // Only an object has a provider and a model.
    let has_config = |key| config.is_some_and(|config| config.contains_key(key));
    if config
        .and_then(|c| c.lookup("reasoningEffort"))
        .is_some_and(|r| !r.is_non_empty_string())
    {
        return fail("has an invalid reasoningEffort");
    }
    if let Some(defaults) = header.and_then(|h| h.lookup("adapterDefaults")) {
        let Some(mut members) = defaults.members() else {
            return fail("has invalid adapterDefaults");
        };
        let valid = members.all(|(k, v)| (k == b"reasoningEffort" || k == b"maxTokens") && v.as_bool() == Some(true))
            && (!defaults.contains_key("reasoningEffort") || has_config("reasoningEffort"))
            && (!defaults.contains_key("maxTokens") || has_config("maxTokens"));
        if !valid {
            return fail("has invalid adapterDefaults");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_type_is_found_at_its_index_and_nothing_else_is() {
        for (index, kind) in KNOWN_EVENT_TYPES.iter().enumerate() {
            assert_eq!(known_type_index(kind), Some(index), "{kind}");
        }
        let strangers = [
            "",
            "t",
            "tool/resul",
            "tool/results",
            "TOOL/RESULT",
            "turn/end\0",
            "ab",
            "mode/set",
        ];
        for kind in strangers {
            assert_eq!(known_type_index(kind), None, "{kind:?}");
        }
    }
}
