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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every word is found at its place, and no string that differs from one only in its
    /// length or its last byte is (the words are ASCII: flipping a byte's 0x20 bit keeps it so).
    #[test]
    fn the_log_vocabulary_finds_its_words_and_nothing_near_them() {
        let words: Vec<&str> = [&KEYS[..], &KNOWN_EVENT_TYPES[..], &VALUES[..]].concat();
        let mut places = Vec::new();
        for word in &words {
            let place = LOG_VOCABULARY.place(word).unwrap_or_else(|| panic!("{word} is found"));
            if !places.contains(&place) {
                places.push(place);
            }
        }
        assert_eq!(places, (0..places.len()).collect::<Vec<_>>(), "places follow the lists");
        let mut near = Vec::new();
        for word in &words {
            near.push(format!("{word}\0"));
            let (last, rest) = word.as_bytes().split_last().expect("no empty word");
            near.push(format!("{}{}", String::from_utf8_lossy(rest), char::from(last ^ 0x20)));
            near.push(String::from_utf8_lossy(rest).into_owned());
        }
        for other in near.iter().filter(|other| !words.contains(&other.as_str())) {
            assert_eq!(LOG_VOCABULARY.place(other), None, "{other:?}");
        }
    }
}
