//! The strings DSH writes on nearly every log line (record keys, event types, roles, part
//! kinds), which the parser shares instead of allocating: a line holds about a dozen keys and
//! a few such values, most of what its parse would otherwise allocate and free again.

use super::validate::KNOWN_EVENT_TYPES;
use crate::json::Vocabulary;

/// Keys of headers, event envelopes, messages and their parts.
const KEYS: [&str; 48] = [
    "arguments",
    "callId",
    "capturedThroughSeq",
    "code",
    "content",
    "createdAt",
    "cwd",
    "data",
    "delegationDepth",
    "end",
    "error",
    "id",
    "ignorable",
    "inputIndex",
    "inputTokens",
    "isError",
    "kind",
    "label",
    "message",
    "model",
    "name",
    "op",
    "outputTokens",
    "parentSession",
    "path",
    "provider",
    "reason",
    "references",
    "role",
    "seq",
    "sessionId",
    "source",
    "sourceEventSeqs",
    "start",
    "status",
    "step",
    "surfaceOp",
    "text",
    "time",
    "todos",
    "toolCallId",
    "turn",
    "type",
    "usage",
    "values",
    "version",
    "summary",
    "title",
];

/// Values DSH's own vocabulary gives: roles, message part types, surface operations, sources
/// and how turns and steps end.
const VALUES: [&str; 22] = [
    "aborted",
    "append",
    "assistant",
    "completed",
    "error",
    "image",
    "in_progress",
    "interrupted",
    "model",
    "pending",
    "plugin",
    "replace",
    "session",
    "system",
    "text",
    "tool",
    "tool-call",
    "tool-result",
    "user",
    "deepseek",
    "stop",
    "surface",
];

/// What a log's lines are parsed with.
pub(crate) static LOG_VOCABULARY: Vocabulary = Vocabulary::new(&[&KEYS, &KNOWN_EVENT_TYPES, &VALUES]);
