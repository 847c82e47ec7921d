//! Semantic documents: the text DSH extracts from each event, and the document set
//! of a session (`{sessionId, seq, type, time, surface, text}` for every event with text).

use crate::fold::{Surface, SurfaceLabel};
use crate::json::{JsString, Json};
use crate::log::Event;
use serde::Serialize;

/// One event without its payload: DSH's `listEvents` record, which documents and
/// search hits extend.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventRecord {
    /// The owning session (its id as written in the header).
    pub session_id: JsString,
    /// The event's seq.
    pub seq: u64,
    /// The event's type.
    #[serde(rename = "type")]
    pub kind: String,
    /// The event's time.
    pub time: i64,
    /// The surface label.
    pub surface: SurfaceLabel,
}

/// One searchable document, in DSH's wire shape: the event's record plus its text.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Document {
    /// The event's record.
    #[serde(flatten)]
    pub record: EventRecord,
    /// Extracted text; never empty. May hold lone surrogates, as DSH's does.
    #[serde(serialize_with = "serialize_js_string")]
    pub text: JsString,
}

fn serialize_js_string<S: serde::Serializer>(text: &JsString, serializer: S) -> Result<S::Ok, S::Error> {
    Json::String(text.clone()).serialize(serializer)
}

/// ECMAScript `String.prototype.trim` whitespace (not Rust's `char::is_whitespace`).
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{D}'
            | ' '
            | '\u{A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

/// `String.prototype.trim` over WTF-8 bytes (lone surrogates are never whitespace).
fn trim_wtf8(bytes: &[u8]) -> &[u8] {
    let is_ws_at_start = |b: &[u8]| -> Option<usize> {
        let len = utf8_len(*b.first()?);
        let c = std::str::from_utf8(b.get(..len)?).ok()?.chars().next()?;
        is_js_whitespace(c).then_some(len)
    };
    let mut start = 0;
    while let Some(len) = is_ws_at_start(&bytes[start..]) {
        start += len;
    }
    let mut end = bytes.len();
    while end > start {
        let mut lead = end - 1;
        while lead > start && (bytes[lead] & 0xC0) == 0x80 {
            lead -= 1;
        }
        match is_ws_at_start(&bytes[lead..end]) {
            Some(len) if lead + len == end => end = lead,
            _ => break,
        }
    }
    &bytes[start..end]
}

fn utf8_len(lead: u8) -> usize {
    match lead {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// DSH's `joinText`: trim each part, drop empty ones, join with LF.
fn join(parts: &[&Json]) -> JsString {
    // DSH only ever joins strings here; anything else contributes nothing.
    let texts = || parts.iter().filter_map(|part| part.as_js_string());
    // `join` sizes its output once (a tool result's text is often tens of kilobytes), and
    // well-formed parts are joined as `str`, so the result needs no UTF-8 check.
    if texts().all(|text| matches!(text, JsString::Utf8(_))) {
        let trimmed: Vec<&str> = texts()
            .filter_map(JsString::as_str)
            .map(|text| text.trim_matches(is_js_whitespace))
            .filter(|text| !text.is_empty())
            .collect();
        return JsString::Utf8(trimmed.join("\n").into_boxed_str());
    }
    // A lone surrogate is never whitespace: a part holding one is never dropped.
    let trimmed: Vec<&[u8]> = texts()
        .map(|text| trim_wtf8(text.as_wtf8()))
        .filter(|text| !text.is_empty())
        .collect();
    JsString::Wtf8(trimmed.join(&b'\n').into_boxed_slice())
}

fn block_parts<'a>(block: &'a Json, out: &mut Vec<&'a Json>) {
    match block.get("type").and_then(Json::as_str) {
        Some("text") => out.extend(block.get("text")),
        Some("tool-call") => out.extend(block.get("name").into_iter().chain(block.get("arguments"))),
        Some("tool-result") => {
            for nested in block.get("content").and_then(Json::as_array).unwrap_or_default() {
                block_parts(nested, out);
            }
        }
        _ => {}
    }
}

fn content_text(content: Option<&Json>) -> JsString {
    let mut parts = Vec::new();
    for block in content.and_then(Json::as_array).unwrap_or_default() {
        block_parts(block, &mut parts);
    }
    join(&parts)
}

static EMPTY: Json = Json::Null;

fn field<'a>(value: Option<&'a Json>, key: &str) -> Option<&'a Json> {
    value.and_then(|v| v.get(key))
}

/// The event types with a semantic text: the only ones whose payload is parsed for it.
const SEARCHABLE_TYPES: [&str; 6] = [
    "user/message",
    "assistant/message",
    "tool/call",
    "tool/result",
    "todo/write",
    "turn/end",
];

/// The semantic text of one event (empty when the event is not searchable).
pub fn extract_text(event: &Event) -> JsString {
    if !SEARCHABLE_TYPES.contains(&event.kind()) {
        return JsString::from("");
    }
    let data = event.data();
    match event.kind() {
        "user/message" => content_text(data.get("content")),
        "assistant/message" => content_text(field(data.get("message"), "content")),
        "tool/call" => join(&[
            data.get("name").unwrap_or(&EMPTY),
            data.get("arguments").unwrap_or(&EMPTY),
        ]),
        "tool/result" => {
            let content = Json::String(content_text(field(data.get("message"), "content")));
            let error = data.get("error");
            join(&[
                &content,
                field(error, "name").unwrap_or(&EMPTY),
                field(error, "code").unwrap_or(&EMPTY),
            ])
        }
        "todo/write" => {
            let mut parts = Vec::new();
            for todo in data.get("todos").and_then(Json::as_array).unwrap_or_default() {
                parts.extend(todo.get("status"));
                parts.extend(todo.get("content"));
            }
            join(&parts)
        }
        "turn/end" => {
            let reason = data.get("reason");
            match field(reason, "kind").and_then(Json::as_str) {
                Some("error") => {
                    let word = Json::str("error");
                    join(&[&word, field(field(reason, "error"), "message").unwrap_or(&EMPTY)])
                }
                Some(kind @ ("aborted" | "max-tokens" | "interrupted")) => JsString::from(kind),
                _ => JsString::from(""),
            }
        }
        _ => JsString::from(""),
    }
}

/// Every document of a session, in ascending seq order.
pub fn session_documents(session_id: &JsString, events: &[Event], surface: &Surface) -> Vec<Document> {
    events
        .iter()
        .filter_map(|event| {
            let text = extract_text(event);
            (!text.is_empty()).then(|| Document {
                record: EventRecord {
                    session_id: session_id.clone(),
                    seq: event.seq(),
                    kind: event.kind().to_owned(),
                    time: event.time(),
                    surface: surface.label(event.seq()),
                },
                text,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_uses_the_javascript_whitespace_set() {
        assert_eq!(trim_wtf8("\u{FEFF}\u{3000} a b\u{2028}".as_bytes()), b"a b");
        // U+0085 is whitespace to Rust but not to JavaScript.
        assert_eq!(trim_wtf8("\u{85}a\u{85}".as_bytes()), "\u{85}a\u{85}".as_bytes());
        assert_eq!(trim_wtf8(b"   "), b"");
    }

    #[test]
    fn join_trims_well_formed_parts_as_the_wtf8_trim_does() {
        // Well-formed parts are trimmed as `str`: the bytes must be those `trim_wtf8` keeps.
        let alphabet = ["a", " ", "\n", "\u{3000}", "\u{85}", "\u{FEFF}", "é", "😀", "\u{2028}"];
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1du64);
        for _ in 0..5_000 {
            let parts: Vec<Json> = (0..next(4))
                .map(|_| Json::str(&(0..next(6)).map(|_| alphabet[next(alphabet.len())]).collect::<String>()))
                .collect();
            let byte_trimmed: Vec<&[u8]> = parts
                .iter()
                .filter_map(|part| part.as_js_string())
                .map(|text| trim_wtf8(text.as_wtf8()))
                .filter(|text| !text.is_empty())
                .collect();
            let joined = join(&parts.iter().collect::<Vec<_>>());
            assert!(matches!(joined, JsString::Utf8(_)), "{parts:?}");
            assert_eq!(joined.as_wtf8(), byte_trimmed.join(&b'\n'), "{parts:?}");
        }
    }

    #[test]
    fn join_keeps_lone_surrogates() {
        let value = Json::parse(r#"[" \ud83d ","x"]"#, Default::default()).expect("json");
        let parts: Vec<&Json> = value.as_array().expect("array").iter().collect();
        let joined = join(&parts);
        assert_eq!(Json::String(joined).to_js_string(), r#""\ud83d\nx""#);
    }
}
