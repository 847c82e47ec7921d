//! Semantic documents: the text DSH extracts from each event, and the document set
//! of a session (`{sessionId, seq, type, time, surface, text}` for every event with text).

use crate::fold::{Surface, SurfaceLabel};
use crate::json::{self, JsString, Json};
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
///
/// Inlined with an ASCII test first: snippets ask it of every character they cut, millions of
/// times a second, and nearly all of those characters are ASCII.
#[inline]
pub fn is_js_whitespace(c: char) -> bool {
    if c.is_ascii() {
        return matches!(c, '\u{9}'..='\u{D}' | ' ');
    }
    ('\u{2000}'..='\u{200A}').contains(&c)
        || matches!(
            c,
            '\u{A0}' | '\u{1680}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
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

/// One part of an event's semantic text, before trimming: a value in the event's printed text
/// (the rest of the text from its first byte; only a string contributes), or a fixed word.
#[derive(Clone, Copy)]
enum Part<'a> {
    Value(&'a str),
    Word(&'static str),
}

/// The value of member `key` of the object printed at the start of `object`.
fn member<'a>(object: Option<&'a str>, key: &str) -> Option<&'a str> {
    json::member_start(object?, key)
}

/// Whether the value printed at the start of `value` is the string `word` (a word needing no
/// escape: a printed string has one spelling, so the printed form is compared).
fn is_word(value: Option<&str>, word: &str) -> bool {
    value
        .and_then(|value| value.strip_prefix('"')?.strip_prefix(word))
        .is_some_and(|rest| rest.starts_with('"'))
}

/// The items of the array printed at the start of `array`, if it is one.
fn items(array: Option<&str>) -> impl Iterator<Item = &str> {
    array.into_iter().flat_map(json::array_items)
}

/// Where a part comes from, and whether the walk goes on (`visit` says false to stop it).
type Visit<'v, 'a> = &'v mut dyn FnMut(Part<'a>) -> bool;

fn visit_values<'a, const N: usize>(values: [Option<&'a str>; N], visit: Visit<'_, 'a>) -> bool {
    values.into_iter().flatten().all(|value| visit(Part::Value(value)))
}

fn visit_content<'a>(content: Option<&'a str>, visit: Visit<'_, 'a>) -> bool {
    items(content).all(|block| {
        let block = Some(block);
        let kind = member(block, "type");
        if is_word(kind, "text") {
            visit_values([member(block, "text")], visit)
        } else if is_word(kind, "tool-call") {
            visit_values([member(block, "name"), member(block, "arguments")], visit)
        } else if is_word(kind, "tool-result") {
            visit_content(member(block, "content"), visit)
        } else {
            true
        }
    })
}

/// Hands `visit` the parts of the semantic text of an event of type `kind` printed as `text`,
/// in order, until it says stop; true when it never did. A parts list DSH joins into one part
/// of an outer list (a tool result's content) is visited flat: its joined text is already
/// trimmed, and empty only when each of its parts is.
fn visit_parts<'a>(kind: &str, text: &'a str, visit: Visit<'_, 'a>) -> bool {
    let data = json::member_start(text, "data");
    match kind {
        "user/message" => visit_content(member(data, "content"), visit),
        "assistant/message" => visit_content(member(member(data, "message"), "content"), visit),
        "tool/call" => visit_values([member(data, "name"), member(data, "arguments")], visit),
        "tool/result" => {
            // The error is looked up once the content is visited: finding it passes over the
            // content, which a walk that stops early never needs to.
            visit_content(member(member(data, "message"), "content"), visit) && {
                let error = member(data, "error");
                visit_values([member(error, "name"), member(error, "code")], visit)
            }
        }
        "todo/write" => items(member(data, "todos"))
            .all(|todo| visit_values([member(Some(todo), "status"), member(Some(todo), "content")], visit)),
        "turn/end" => {
            let reason = member(data, "reason");
            let end = member(reason, "kind");
            if is_word(end, "error") {
                visit(Part::Word("error")) && visit_values([member(member(reason, "error"), "message")], visit)
            } else {
                let word = ["aborted", "max-tokens", "interrupted"]
                    .into_iter()
                    .find(|w| is_word(end, w));
                word.is_none_or(|word| visit(Part::Word(word)))
            }
        }
        _ => true,
    }
}

/// DSH's `joinText` over parts as they come: each trimmed, empty ones dropped, joined with LF.
/// Strings are decoded straight into the joined text, and only until it holds `limit` bytes.
struct Joined {
    out: Vec<u8>,
    has_surrogate: bool,
    limit: usize,
}

impl Joined {
    /// Appends one part; false once the limit cut it short (the text is then the longest
    /// start of the whole one that the parts decoded so far determine).
    fn push(&mut self, part: Part<'_>) -> bool {
        let mark = self.out.len();
        if mark > 0 {
            self.out.push(b'\n');
        }
        let body = self.out.len();
        let whole = match part {
            Part::Word(word) => {
                self.out.extend_from_slice(word.as_bytes());
                true
            }
            // A printed text always holds valid strings: a broken one contributes nothing.
            Part::Value(value) if value.starts_with('"') => {
                match json::unescape(value.as_bytes(), 1, &mut self.out, &mut self.has_surrogate, self.limit) {
                    Ok(end) => end.done,
                    Err(_) => {
                        self.out.truncate(mark);
                        return true;
                    }
                }
            }
            // DSH joins only strings.
            Part::Value(_) => {
                self.out.truncate(mark);
                return true;
            }
        };
        // A part cut short is trimmed at its end too: whitespace there may be its last.
        let decoded = &self.out[body..];
        let trimmed = trim_wtf8(decoded);
        let from = body + (trimmed.as_ptr() as usize - decoded.as_ptr() as usize);
        let len = trimmed.len();
        if len == 0 {
            self.out.truncate(mark);
        } else {
            self.out.copy_within(from..from + len, body);
            self.out.truncate(body + len);
        }
        whole
    }
}

/// The event types with a semantic text: the only ones whose payload is read for it.
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
    extract_text_start(event, usize::MAX).0
}

/// The start of [`extract_text`]: its strings are decoded only until `limit` bytes of text are
/// there (a search hit's snippet needs the text up to its match, not a long tool output whole),
/// and true when that is the whole text. A start cut short ends at a character that is not
/// whitespace, so it is a start of the whole text whatever follows.
pub fn extract_text_start(event: &Event, limit: usize) -> (JsString, bool) {
    if !SEARCHABLE_TYPES.contains(&event.kind()) {
        return (JsString::from(""), true);
    }
    let text = event.text();
    let mut joined = Joined {
        // The text is at most about as long as the printed event that holds it.
        out: Vec::with_capacity(text.len().min(limit)),
        has_surrogate: false,
        limit,
    };
    // The walk stops only where a part was cut short.
    let complete = visit_parts(event.kind(), &text, &mut |part| joined.push(part));
    (JsString::from_wtf8(joined.out, joined.has_surrogate), complete)
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
    use crate::event::EventBatch;
    use crate::json::JsonObject;

    /// JavaScript's whitespace is Unicode's White_Space (Rust's `is_whitespace`) without
    /// U+0085, plus U+FEFF.
    #[test]
    fn whitespace_is_javascripts_for_every_character() {
        for c in (0..=u32::from(char::MAX)).filter_map(char::from_u32) {
            let expected = (c.is_whitespace() && c != '\u{85}') || c == '\u{FEFF}';
            assert_eq!(is_js_whitespace(c), expected, "U+{:04X}", u32::from(c));
        }
    }

    #[test]
    fn trim_uses_the_javascript_whitespace_set() {
        assert_eq!(trim_wtf8("\u{FEFF}\u{3000} a b\u{2028}".as_bytes()), b"a b");
        // U+0085 is whitespace to Rust but not to JavaScript.
        assert_eq!(trim_wtf8("\u{85}a\u{85}".as_bytes()), "\u{85}a\u{85}".as_bytes());
        assert_eq!(trim_wtf8(b"   "), b"");
    }

    /// The extraction as a tree of the event's payload reads it (as DSH's code does): the
    /// reference the walk over the printed text is held to.
    mod reference {
        use super::*;

        fn join(parts: &[&Json]) -> JsString {
            let mut has_surrogate = false;
            let trimmed: Vec<&[u8]> = parts
                .iter()
                .filter_map(|part| part.as_js_string())
                .inspect(|text| has_surrogate |= matches!(text, JsString::Wtf8(_)))
                .map(|text| trim_wtf8(text.as_wtf8()))
                .filter(|text| !text.is_empty())
                .collect();
            JsString::from_wtf8(trimmed.join(&b'\n'), has_surrogate)
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

        fn content(content: Option<&Json>) -> JsString {
            let mut parts = Vec::new();
            for block in content.and_then(Json::as_array).unwrap_or_default() {
                block_parts(block, &mut parts);
            }
            join(&parts)
        }

        pub(super) fn text(event: &Event) -> JsString {
            let data = event.data();
            let at = |value: Option<&Json>, key: &str| value.and_then(|v| v.get(key)).cloned().unwrap_or(Json::Null);
            match event.kind() {
                "user/message" => content(data.get("content")),
                "assistant/message" => content(at(Some(&data), "message").get("content")),
                "tool/call" => join(&[&at(Some(&data), "name"), &at(Some(&data), "arguments")]),
                "tool/result" => {
                    let content = Json::String(content(at(Some(&data), "message").get("content")));
                    let error = data.get("error");
                    join(&[&content, &at(error, "name"), &at(error, "code")])
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
                    match at(reason, "kind").as_str() {
                        Some("error") => join(&[&Json::str("error"), &at(Some(&at(reason, "error")), "message")]),
                        Some(kind @ ("aborted" | "max-tokens" | "interrupted")) => JsString::from(kind),
                        _ => JsString::from(""),
                    }
                }
                _ => JsString::from(""),
            }
        }
    }

    /// Random payloads of every searchable type: strings of whitespace, escapes, lone
    /// surrogates and non-ASCII text, values that are not strings, members in any order.
    struct Payloads {
        next: Box<dyn FnMut(usize) -> usize>,
    }

    impl Payloads {
        fn new(seed: u64) -> Payloads {
            Payloads {
                next: Box::new(crate::testing::xorshift(seed)),
            }
        }

        fn text(&mut self) -> Json {
            const PIECES: [&str; 14] = [
                "a", "word", " ", "\\n", "\\u3000", "\\u0085", "\\ufeff", "\\ud83d", "\\ude00", "é", "😀", "\\\"",
                "\\\\", "\\u0000",
            ];
            let len = (self.next)(8);
            let body: String = (0..len).map(|_| PIECES[(self.next)(PIECES.len())]).collect();
            match (self.next)(12) {
                0 => Json::Number(7.0),
                1 => Json::Null,
                _ => Json::parse(&format!("\"{body}\""), Default::default()).expect("a JSON string"),
            }
        }

        fn object(&mut self, members: Vec<(&str, Json)>) -> Json {
            let mut members: Vec<_> = members.into_iter().filter(|_| (self.next)(10) > 0).collect();
            if (self.next)(2) == 0 {
                members.reverse();
            }
            let mut object = JsonObject::new();
            for (key, value) in members {
                object.insert(key, value);
            }
            Json::Object(object)
        }

        fn blocks(&mut self, depth: usize) -> Json {
            let count = (self.next)(4);
            let blocks = (0..count)
                .map(|_| {
                    let kind =
                        ["text", "tool-call", "tool-result", "image"][(self.next)(if depth > 0 { 4 } else { 2 })];
                    let members = vec![
                        ("type", Json::str(kind)),
                        ("text", self.text()),
                        ("name", self.text()),
                        ("arguments", self.text()),
                        ("content", if depth > 0 { self.blocks(depth - 1) } else { Json::Null }),
                    ];
                    self.object(members)
                })
                .collect();
            Json::Array(blocks)
        }

        fn data(&mut self, kind: &str) -> Json {
            match kind {
                "user/message" => {
                    let content = self.blocks(2);
                    self.object(vec![("content", content)])
                }
                "assistant/message" | "tool/result" => {
                    let content = self.blocks(2);
                    let message = self.object(vec![("role", Json::str("x")), ("content", content)]);
                    let error = vec![("name", self.text()), ("code", self.text())];
                    let error = self.object(error);
                    self.object(vec![("message", message), ("error", error)])
                }
                "tool/call" => {
                    let members = vec![("name", self.text()), ("arguments", self.text()), ("id", self.text())];
                    self.object(members)
                }
                "todo/write" => {
                    let todos = (0..(self.next)(4))
                        .map(|_| {
                            let members = vec![("status", self.text()), ("content", self.text())];
                            self.object(members)
                        })
                        .collect();
                    self.object(vec![("todos", Json::Array(todos))])
                }
                _ => {
                    let end = ["error", "aborted", "max-tokens", "interrupted", "done"][(self.next)(5)];
                    let error = vec![("message", self.text())];
                    let error = self.object(error);
                    let reason = self.object(vec![("kind", Json::str(end)), ("error", error)]);
                    self.object(vec![("reason", reason)])
                }
            }
        }

        fn event(&mut self) -> Event {
            let kind = SEARCHABLE_TYPES[(self.next)(SEARCHABLE_TYPES.len())];
            let mut object = JsonObject::new();
            object.insert("type", Json::str(kind));
            object.insert("seq", Json::int(1));
            object.insert("time", Json::int(0));
            object.insert("data", self.data(kind));
            let mut batch = EventBatch::default();
            batch.push_object(&object, 1, 0, kind);
            batch.finish().pop().expect("one event")
        }
    }

    #[test]
    fn the_walk_over_printed_text_extracts_what_the_parsed_payload_gives() {
        let mut payloads = Payloads::new(0x9e37_79b9_7f4a_7c15);
        for _ in 0..5_000 {
            let event = payloads.event();
            let expected = reference::text(&event);
            assert_eq!(extract_text(&event).as_wtf8(), expected.as_wtf8(), "{event:?}");
        }
    }

    #[test]
    fn a_start_cut_short_is_a_start_of_the_whole_text_ending_in_a_non_space() {
        let mut payloads = Payloads::new(0x2545_f491_4f6c_dd1d);
        for _ in 0..5_000 {
            let event = payloads.event();
            let whole = extract_text(&event);
            let whole = whole.as_wtf8();
            for limit in [0, 1, 2, 3, 5, 8, 13, 21, 34] {
                let (start, complete) = extract_text_start(&event, limit);
                let start = start.as_wtf8();
                assert!(whole.starts_with(start), "{event:?} {limit}");
                if complete {
                    assert_eq!(start, whole, "{event:?} {limit}");
                } else {
                    assert_eq!(trim_wtf8(start), start, "{event:?} {limit}");
                    // Decoding stops within a character of the limit; a fixed word may pass it.
                    assert!(start.len() < limit + 16, "{event:?} {limit}");
                }
            }
        }
    }
}
