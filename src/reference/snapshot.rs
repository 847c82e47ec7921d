//! One source's snapshot: projecting a current surface into user/assistant
//! text, then fitting the snapshot object into the per-source byte budget with DSH's exact
//! retention (drop oldest non-checkpoint messages, then shorten the longest text head/tail with
//! a UTF-8 omission notice), and the statistics the source record carries.

use super::text::utf8_len;
use crate::error::{Error, ErrorCode};
use crate::event::{ConversationMessage, Event, conversation_message, text_blocks};
pub use crate::event::{Role, is_compact_checkpoint_source};
use crate::json::{JsString, Json, JsonObject};
use crate::reads::SurfaceSnapshot;

/// One message of a source's projected conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectedMessage {
    /// Who said it.
    pub role: Role,
    /// The `text` blocks joined with `"\n"` (never empty).
    pub text: JsString,
    /// Whether it is a compaction checkpoint (never dropped by retention).
    pub checkpoint: bool,
}

/// The read of one source that a snapshot is built from: DSH's `readSurface` result.
#[derive(Clone, Copy, Debug)]
pub struct SourceSurface<'a> {
    /// The source header's id, as written (a JavaScript string).
    pub session_id: &'a JsString,
    /// The source header's cwd.
    pub cwd: Option<&'a str>,
    /// Seq of the last raw event in the source log (`None` for an empty log).
    pub captured_through_seq: Option<u64>,
    /// The current surface events in model-history order.
    pub events: &'a [Json],
}

impl<'a> From<&'a SurfaceSnapshot> for SourceSurface<'a> {
    fn from(snapshot: &'a SurfaceSnapshot) -> Self {
        SourceSurface {
            session_id: &snapshot.session.raw_id,
            cwd: snapshot.session.cwd.as_deref(),
            captured_through_seq: snapshot.captured_through_seq,
            events: &snapshot.events,
        }
    }
}

/// What retention did to one source (the per-reference fields of the source record).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceStats {
    /// The projection before retention contained a compaction checkpoint.
    pub compacted: bool,
    /// Projected messages before retention.
    pub original_messages: usize,
    /// Messages in the snapshot's `conversation`.
    pub retained_messages: usize,
    /// Messages dropped whole.
    pub omitted_messages: usize,
    /// Bytes of dropped messages plus bytes cut out of shortened texts (notices not counted).
    pub omitted_bytes: u64,
    /// `omitted_messages > 0 || omitted_bytes > 0`.
    pub truncated: bool,
}

/// One source fitted to the budget.
#[derive(Clone, Debug)]
pub struct RetainedSource {
    /// The source header's id.
    pub session_id: JsString,
    /// The normalized reference label.
    pub label: JsString,
    /// Seq of the last raw event at capture.
    pub captured_through_seq: Option<u64>,
    /// The snapshot object: `{sessionId, label, cwd, capturedThroughSeq, conversation}`.
    pub snapshot: Json,
    /// Retention statistics.
    pub stats: ReferenceStats,
}

/// Projects current surface events into the conversation a snapshot shows: checkpoints and
/// `source.kind == "user"` user messages, every assistant message; everything else dropped.
/// Messages whose joined text is empty are skipped.
pub fn project_conversation(events: &[Json]) -> Vec<ProjectedMessage> {
    pending_messages(events.iter().filter(|event| event.as_object().is_some()))
        .into_iter()
        .map(|m| ProjectedMessage {
            role: m.facts.role,
            text: m.text(),
            checkpoint: m.facts.checkpoint,
        })
        .collect()
}

/// One projected message whose text is not built yet: retention only builds the texts it
/// keeps (a long source's conversation is megabytes; its snapshot is the budget).
struct PendingMessage<'a> {
    /// Role, checkpoint mark and joined text length.
    facts: ConversationMessage,
    /// The message's content blocks.
    content: Content<'a>,
}

/// A message's content blocks: parsed, or those of a stored event, parsed only if retention
/// keeps the message.
enum Content<'a> {
    Parsed(&'a [Json]),
    Stored(&'a Event),
}

impl PendingMessage<'_> {
    fn text(&self) -> JsString {
        match self.content {
            Content::Parsed(blocks) => text_content(blocks),
            Content::Stored(event) => match conversation_message(&Json::Object(event.as_json())) {
                Some((_, blocks)) => text_content(blocks),
                None => JsString::from(""),
            },
        }
    }
}

/// [`pending_messages`] over stored events: what retention needs of each message was found
/// when the event was read, so only the texts it keeps are read and parsed.
fn stored_messages<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<PendingMessage<'a>> {
    let pending = |event: &'a Event| {
        let facts = event.conversation_message()?;
        Some(PendingMessage {
            facts,
            content: Content::Stored(event),
        })
    };
    events.into_iter().filter_map(pending).collect()
}

/// The projection of [`project_conversation`], texts not built (a non-object event is dropped,
/// as any event without a projected type).
fn pending_messages<'a>(events: impl IntoIterator<Item = &'a Json>) -> Vec<PendingMessage<'a>> {
    let pending = |event: &'a Json| {
        let (facts, blocks) = conversation_message(event)?;
        Some(PendingMessage {
            facts,
            content: Content::Parsed(blocks),
        })
    };
    events.into_iter().filter_map(pending).collect()
}

/// The string `text` of the `text` blocks, joined with `"\n"`; other blocks are ignored.
fn text_content(blocks: &[Json]) -> JsString {
    let mut out = super::text::JsStringBuilder::new();
    for (i, text) in text_blocks(blocks).enumerate() {
        if i > 0 {
            out.push_str("\n");
        }
        out.push_js(text);
    }
    out.finish()
}

/// `"\n[… omitted <n> UTF-8 bytes …]"`: the only trace of a cut in the snapshot text.
pub fn omission_notice(omitted: u64) -> String {
    format!("\n[\u{2026} omitted {omitted} UTF-8 bytes \u{2026}]")
}

fn notice_len(omitted: u64) -> usize {
    // "\n[… omitted " and " UTF-8 bytes …]" are 31 bytes together.
    31 + omitted.to_string().len()
}

/// Shortens `original` to at most `target` bytes: a head and a tail glued together, then the
/// omission notice, found with DSH's exact binary search over the retained byte count (the
/// search is not monotonic, so a different search may settle elsewhere). Returns the text and
/// the bytes cut. When even the bare notice does not fit, the text is empty and every byte is
/// cut. A text that already fits is returned unchanged.
pub fn truncate_with_notice(original: &JsString, target: usize) -> (JsString, u64) {
    let total = utf8_len(original);
    if total <= target {
        return (original.clone(), 0);
    }
    // DSH encodes with TextEncoder, which writes each lone surrogate as U+FFFD.
    let lossy = original.to_lossy();
    let bytes = lossy.as_bytes();
    let mut best: Option<HeadTail> = None;
    let (mut low, mut high) = (0i64, target as i64);
    while low <= high {
        let retained = (low + high) / 2;
        let r = retained as usize;
        let cut = HeadTail::new(bytes, r.div_ceil(2), r / 2);
        if cut.text_len(bytes) + notice_len(cut.omitted as u64) <= target {
            best = Some(cut);
            low = retained + 1;
        } else {
            high = retained - 1;
        }
    }
    match best {
        Some(cut) => {
            let mut text = String::with_capacity(target);
            text.push_str(strip_bom(&lossy[..cut.prefix_end]));
            text.push_str(strip_bom(&lossy[cut.suffix_start..]));
            text.push_str(&omission_notice(cut.omitted as u64));
            (JsString::from(text), cut.omitted as u64)
        }
        None => (JsString::from(""), total as u64),
    }
}

/// DSH's head/tail cut of UTF-8 bytes: the prefix ends at the largest character boundary within
/// the head budget, the suffix starts at the smallest boundary within the tail budget, and
/// every byte between them is omitted.
struct HeadTail {
    prefix_end: usize,
    suffix_start: usize,
    omitted: usize,
}

impl HeadTail {
    /// `head + tail` is below `bytes.len()`, so there is always a gap.
    fn new(bytes: &[u8], head: usize, tail: usize) -> HeadTail {
        let is_continuation = |b: u8| b & 0xC0 == 0x80;
        let mut prefix_end = head.min(bytes.len());
        while prefix_end > 0 && prefix_end < bytes.len() && is_continuation(bytes[prefix_end]) {
            prefix_end -= 1;
        }
        let mut suffix_start = bytes.len() - tail.min(bytes.len());
        while suffix_start < bytes.len() && is_continuation(bytes[suffix_start]) {
            suffix_start += 1;
        }
        HeadTail {
            prefix_end,
            suffix_start,
            omitted: bytes.len() - prefix_end - (bytes.len() - suffix_start),
        }
    }

    /// Bytes of the glued text. DSH decodes each part with a default `TextDecoder`, which drops
    /// a leading byte-order mark, so a part that starts with U+FEFF loses 3 bytes (they still
    /// count as kept, not omitted).
    fn text_len(&self, bytes: &[u8]) -> usize {
        let prefix = &bytes[..self.prefix_end];
        let suffix = &bytes[self.suffix_start..];
        let bom = |part: &[u8]| if part.starts_with(BOM) { BOM.len() } else { 0 };
        prefix.len() - bom(prefix) + suffix.len() - bom(suffix)
    }
}

const BOM: &[u8] = "\u{FEFF}".as_bytes();

fn strip_bom(part: &str) -> &str {
    part.strip_prefix('\u{FEFF}').unwrap_or(part)
}

/// One conversation item during retention.
struct Item {
    role: Role,
    original: JsString,
    /// The shortened text, once phase 2 cut it (`None`: the original).
    shortened: Option<JsString>,
    cut: u64,
    /// Bytes of the item's tag-safe JSON.
    size: usize,
}

impl Item {
    fn new(message: &PendingMessage<'_>) -> Item {
        let original = message.text();
        Item {
            role: message.facts.role,
            size: item_len(message.facts.role, &original),
            original,
            shortened: None,
            cut: 0,
        }
    }

    fn text(&self) -> &JsString {
        self.shortened.as_ref().unwrap_or(&self.original)
    }

    fn to_json(&self) -> Json {
        conversation_item(self.role, self.text())
    }

    fn set_text(&mut self, text: JsString, cut: u64) {
        self.size = item_len(self.role, &text);
        self.shortened = Some(text);
        self.cut = cut;
    }
}

fn conversation_item(role: Role, text: &JsString) -> Json {
    let mut object = JsonObject::new();
    object.insert("role", Json::str(role.as_str()));
    object.insert("text", Json::String(text.clone()));
    Json::Object(object)
}

/// Bytes of `{"role":ROLE,"text":TEXT}` as tag-safe JSON, counted without writing it.
fn item_len(role: Role, text: &JsString) -> usize {
    r#"{"role":"","text":}"#.len() + role.as_str().len() + tag_safe_string_len(text)
}

/// Bytes of `text` as a tag-safe JSON string, quotes included: what `json::write_string`
/// writes, with every `<` as `\u003c`. Counted, not written: retention sizes every kept
/// message this way.
pub(crate) fn tag_safe_string_len(text: &JsString) -> usize {
    fn escaped(text: &str) -> usize {
        text.bytes()
            .map(|b| match b {
                b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0C => 2,
                0x00..=0x1F | b'<' => 6,
                _ => 1,
            })
            .sum()
    }
    let body = match text {
        JsString::Utf8(text) => escaped(text),
        JsString::Known(text) => escaped(text),
        // Only the log reader elides, and never in the texts a snapshot reads.
        JsString::Elided(_) => 0,
        JsString::Wtf8(bytes) => {
            // As `write_string`: each lone surrogate (3 bytes) is written as `\uXXXX`.
            let mut rest: &[u8] = bytes;
            let mut len = 0;
            while !rest.is_empty() {
                match std::str::from_utf8(rest) {
                    Ok(text) => {
                        len += escaped(text);
                        break;
                    }
                    Err(e) => {
                        let (valid, after) = rest.split_at(e.valid_up_to());
                        len += escaped(std::str::from_utf8(valid).unwrap_or_default());
                        if after.len() >= 3 {
                            len += 6;
                        }
                        rest = &after[after.len().min(3)..];
                    }
                }
            }
            len
        }
    };
    body + 2
}

fn tag_safe_len(value: &Json) -> usize {
    tag_safe_json(value).len()
}

/// The snapshot object with keys in DSH's order.
fn snapshot_object(source: &SourceSurface<'_>, label: &JsString, conversation: Vec<Json>) -> Json {
    let mut object = JsonObject::new();
    object.insert("sessionId", Json::String(source.session_id.clone()));
    object.insert("label", Json::String(label.clone()));
    object.insert("cwd", source.cwd.map_or(Json::Null, Json::str));
    object.insert(
        "capturedThroughSeq",
        source
            .captured_through_seq
            .map_or(Json::Null, |seq| Json::Number(seq as f64)),
    );
    object.insert("conversation", Json::Array(conversation));
    Json::Object(object)
}

/// Phase 1 of retention: the items left once the oldest messages that are neither a
/// checkpoint nor the newest are dropped, one at a time, until the object fits `max_bytes`
/// (or none is left to drop), with the count and UTF-8 bytes of those dropped.
///
/// Dropping the `k` oldest droppable messages leaves a size that falls as `k` grows, so the
/// smallest `k` that fits is found from the newest end: only the texts that stay (and one
/// more) are built and sized, whatever the length of the source.
fn drop_oldest(messages: &[PendingMessage<'_>], fixed: usize, max_bytes: u64) -> (Vec<Item>, usize, u64) {
    let newest = messages.len().checked_sub(1);
    let droppable: Vec<usize> = (0..messages.len())
        .filter(|&i| !messages[i].facts.checkpoint && Some(i) != newest)
        .collect();
    let mut kept: Vec<(usize, Item)> = (0..messages.len())
        .filter(|i| droppable.binary_search(i).is_err())
        .map(|i| (i, Item::new(&messages[i])))
        .collect();
    // The object's size: its fixed part with `"conversation":[]`, the items and the commas.
    let mut size = fixed as u64 + kept.iter().map(|(_, item)| item.size as u64).sum::<u64>();
    let mut count = kept.len() as u64;
    let total = |size: u64, count: u64| size + count.saturating_sub(1);
    let mut first_kept = droppable.len();
    while first_kept > 0 && total(size, count) <= max_bytes {
        let at = droppable[first_kept - 1];
        let item = Item::new(&messages[at]);
        if total(size + item.size as u64, count + 1) > max_bytes {
            break;
        }
        size += item.size as u64;
        count += 1;
        kept.push((at, item));
        first_kept -= 1;
    }
    let dropped = &droppable[..first_kept];
    let dropped_bytes = dropped.iter().map(|&i| messages[i].facts.text_bytes as u64).sum();
    crate::sorting::sort_by_key(&mut kept, |(i, _)| *i);
    (
        kept.into_iter().map(|(_, item)| item).collect(),
        dropped.len(),
        dropped_bytes,
    )
}

/// Projects `source` and fits its snapshot object into `max_bytes` (bytes of its tag-safe JSON).
/// Fails with `SESSION_REFERENCE_BUDGET_EXCEEDED` when the fixed fields plus every message that
/// retention must keep (checkpoints and the newest message), emptied, still exceed the budget.
pub fn retain_source(source: &SourceSurface<'_>, label: &JsString, max_bytes: u64) -> Result<RetainedSource, Error> {
    let messages = pending_messages(source.events.iter().filter(|event| event.as_object().is_some()));
    retain_messages(source, messages, label, max_bytes)
}

/// [`retain_source`] over the surface events as the corpus stores them (`prepare` reads them
/// from the log without parsing the ones retention drops); `source.events` is not read.
pub(crate) fn retain_stored<'a>(
    source: &SourceSurface<'_>,
    events: impl IntoIterator<Item = &'a Event>,
    label: &JsString,
    max_bytes: u64,
) -> Result<RetainedSource, Error> {
    retain_messages(source, stored_messages(events), label, max_bytes)
}

fn retain_messages(
    source: &SourceSurface<'_>,
    messages: Vec<PendingMessage<'_>>,
    label: &JsString,
    max_bytes: u64,
) -> Result<RetainedSource, Error> {
    let compacted = messages.iter().any(|m| m.facts.checkpoint);
    let original_messages = messages.len();
    let fixed = tag_safe_len(&snapshot_object(source, label, Vec::new()));
    let size = |items: &[Item]| {
        fixed as u64 + items.iter().map(|i| i.size as u64).sum::<u64>() + items.len().saturating_sub(1) as u64
    };

    // Phase 1: drop the oldest messages that are neither a checkpoint nor the newest.
    let (mut items, dropped_messages, dropped_bytes) = drop_oldest(&messages, fixed, max_bytes);

    // Phase 2: shorten the longest current text (earliest on a tie), always from its original.
    loop {
        let current = size(&items);
        if current <= max_bytes {
            break;
        }
        let mut longest: Option<(usize, usize)> = None;
        for (i, item) in items.iter().enumerate() {
            let bytes = utf8_len(item.text());
            if bytes > longest.map_or(0, |(_, b)| b) {
                longest = Some((i, bytes));
            }
        }
        let Some((at, bytes)) = longest else {
            return Err(budget_exceeded());
        };
        let overflow = current - max_bytes;
        let target = (bytes as u64).saturating_sub(overflow) as usize;
        let (text, cut) = truncate_with_notice(&items[at].original, target);
        if text == *items[at].text() {
            return Err(budget_exceeded());
        }
        items[at].set_text(text, cut);
    }

    let omitted_bytes = dropped_bytes + items.iter().map(|i| i.cut).sum::<u64>();
    let stats = ReferenceStats {
        compacted,
        original_messages,
        retained_messages: items.len(),
        omitted_messages: dropped_messages,
        omitted_bytes,
        truncated: dropped_messages > 0 || omitted_bytes > 0,
    };
    let final_size = size(&items);
    let snapshot = snapshot_object(source, label, items.iter().map(Item::to_json).collect());
    debug_assert_eq!(final_size, tag_safe_len(&snapshot) as u64);
    Ok(RetainedSource {
        session_id: source.session_id.clone(),
        label: label.clone(),
        captured_through_seq: source.captured_through_seq,
        snapshot,
        stats,
    })
}

fn budget_exceeded() -> Error {
    Error::new(
        ErrorCode::ReferenceBudgetExceeded,
        "referenced session snapshot cannot fit the configured byte budget",
    )
}

/// Bytes of a string's JSON text (quotes included); `json::write_string` is the writer.
/// `JSON.stringify(value)` with every `<` written as `\u003c`, so no data can spell a tag.
/// JSON syntax itself never contains `<`, and the text still parses to the same value.
pub fn tag_safe_json(value: &Json) -> String {
    let text = value.to_js_string();
    if text.contains('<') {
        text.replace('<', "\\u003c")
    } else {
        text
    }
}

#[cfg(test)]
fn json_string_len(s: &JsString) -> usize {
    let mut out = String::new();
    crate::json::write_string(s, &mut out);
    out.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::ParseLimits;

    fn parse(text: &str) -> Json {
        Json::parse(text, ParseLimits::default()).expect("valid JSON")
    }

    fn user(text: &str, source: &str) -> Json {
        parse(&format!(
            r#"{{"type":"user/message","seq":0,"time":0,"data":{{"id":"m","role":"user","content":[{{"type":"text","text":{}}}],"source":{source}}},"surfaceOp":"append"}}"#,
            Json::str(text)
        ))
    }

    fn assistant(content: &str) -> Json {
        parse(&format!(
            r#"{{"type":"assistant/message","seq":0,"time":0,"data":{{"turn":1,"step":1,"message":{{"id":"m","role":"assistant","content":{content},"source":{{"kind":"model"}}}}}},"surfaceOp":"append"}}"#
        ))
    }

    /// What retention learns of each message: from parsed objects, or scanned from stored texts.
    fn facts(messages: &[PendingMessage<'_>]) -> Vec<(Role, bool, usize, JsString)> {
        messages
            .iter()
            .map(|m| (m.facts.role, m.facts.checkpoint, m.facts.text_bytes, m.text()))
            .collect()
    }

    #[test]
    fn stored_events_give_retention_what_parsed_ones_give() {
        let compact = r#"{"kind":"plugin","plugin":"compact"}"#;
        let events = [
            user("plain", r#"{"kind":"user"}"#),
            user("é \" \\ \n\t\u{1}\u{7ff}\u{800} 😀", r#"{"kind":"user"}"#),
            parse(
                r#"{"type":"user/message","data":{"content":[{"type":"text","text":"\ud83d"},{"type":"text","text":"\ude00\udc00x"}],"source":{"kind":"user"}}}"#,
            ),
            user("summary", compact),
            user("from a plugin", r#"{"kind":"plugin","plugin":"other"}"#),
            user("odd source", r#""user""#),
            user("", r#"{"kind":"user"}"#),
            assistant(r#"[{"type":"text","text":""},{"type":"text","text":""}]"#),
            assistant(r#"[{"type":"image"},"text",{"type":"text","text":7},{"type":"text","text":"[]{},\""}]"#),
            assistant(r#"{"type":"text","text":"not an array"}"#),
            assistant("[]"),
            parse(r#"{"type":"assistant/message","data":{"message":{}}}"#),
            parse(r#"{"type":"tool/result","data":{"message":{"content":[{"type":"text","text":"t"}]}}}"#),
        ];
        let mut batch = crate::event::EventBatch::default();
        for (seq, event) in (0..).zip(&events) {
            let object = event.as_object().expect("object");
            let kind = event.get("type").and_then(Json::as_str).expect("type");
            batch.push_object(object, seq, 0, kind);
        }
        let stored = batch.finish();
        let parsed = pending_messages(events.iter().filter(|event| event.as_object().is_some()));
        assert_eq!(facts(&stored_messages(&stored)), facts(&parsed));
        assert_eq!(parsed.len(), 6, "{:?}", facts(&parsed));
    }

    fn texts(events: &[Json]) -> Vec<(Role, String, bool)> {
        project_conversation(events)
            .into_iter()
            .map(|m| (m.role, m.text.to_string(), m.checkpoint))
            .collect()
    }

    #[test]
    fn projection_keeps_direct_users_checkpoints_and_assistants() {
        let events = vec![
            user("direct", r#"{"kind":"user"}"#),
            user("plugin", r#"{"kind":"plugin","plugin":"goal"}"#),
            user("summary", r#"{"kind":"plugin","plugin":"compact","compactionId":"c"}"#),
            user("bare marker", r#"{"kind":"plugin","plugin":"compact"}"#),
            user(
                "earlier context",
                r#"{"kind":"session-reference","form":"recall","version":1,"references":[]}"#,
            ),
            user("runtime", r#"{"kind":"runtime-context"}"#),
            assistant(r#"[{"type":"reasoning","text":"hmm"},{"type":"text","text":"a"},{"type":"text","text":"b"}]"#),
            assistant(r#"[{"type":"tool-call","toolCallId":"c","toolName":"x","input":{}}]"#),
            assistant(r#"[{"type":"text","text":""},{"type":"text","text":"x"}]"#),
            assistant(r#"[{"type":"text","text":""}]"#),
            parse(
                r#"{"type":"tool/result","seq":0,"time":0,"data":{"message":{"content":[{"type":"text","text":"out"}]}}}"#,
            ),
        ];
        assert_eq!(
            texts(&events),
            vec![
                (Role::User, "direct".into(), false),
                (Role::User, "summary".into(), true),
                (Role::User, "bare marker".into(), true),
                (Role::Assistant, "a\nb".into(), false),
                (Role::Assistant, "\nx".into(), false),
            ]
        );
    }

    #[test]
    fn projection_skips_text_blocks_without_string_text() {
        let events = vec![assistant(r#"[{"type":"text","text":1},{"type":"text","text":"only"}]"#)];
        assert_eq!(texts(&events), vec![(Role::Assistant, "only".into(), false)]);
    }

    #[test]
    fn notice_literal() {
        let notice = omission_notice(1200);
        assert_eq!(notice, "\n[… omitted 1200 UTF-8 bytes …]");
        assert_eq!(notice.len(), notice_len(1200));
        assert_eq!(notice_len(5), 32);
    }

    #[test]
    fn truncation_keeps_head_and_tail_on_character_boundaries() {
        let l = "构建失败：".to_owned() + &"链接器错误".repeat(12) + " <exit 2>";
        assert_eq!(l.len(), 204);
        let (text, cut) = truncate_with_notice(&JsString::from(l.as_str()), 98);
        assert_eq!(
            text,
            JsString::from("构建失败：链接器错误链错误链接器错误 <exit 2>\n[… omitted 141 UTF-8 bytes …]")
        );
        assert_eq!(cut, 141);
        // Outputs of DSH's truncateWithNotice for the same text and targets.
        let (text, cut) = truncate_with_notice(&JsString::from(l.as_str()), 48);
        assert_eq!(text, JsString::from("构建<exit 2>\n[… omitted 190 UTF-8 bytes …]"));
        assert_eq!(cut, 190);
        let (text, cut) = truncate_with_notice(&JsString::from(l.as_str()), 43);
        assert_eq!(text, JsString::from("构it 2>\n[… omitted 196 UTF-8 bytes …]"));
        assert_eq!(cut, 196);
        assert_eq!(
            truncate_with_notice(&JsString::from(l.as_str()), 32),
            (JsString::from(""), 204)
        );
    }

    #[test]
    fn truncation_below_the_smallest_notice_empties_the_text() {
        let original = JsString::from("x".repeat(100).as_str());
        assert_eq!(truncate_with_notice(&original, 31), (JsString::from(""), 100));
        assert_eq!(truncate_with_notice(&original, 0), (JsString::from(""), 100));
        let (text, cut) = truncate_with_notice(&original, 33);
        // 33 = 31 + two digits: no byte of the original fits next to a two-digit count.
        assert_eq!((text.to_string(), cut), (String::new(), 100));
        let (text, cut) = truncate_with_notice(&original, 34);
        assert_eq!(
            (text.to_string(), cut),
            ("x\n[… omitted 99 UTF-8 bytes …]".to_owned(), 99)
        );
        assert_eq!(truncate_with_notice(&original, 100), (original.clone(), 0));
    }

    #[test]
    fn truncation_replaces_lone_surrogates_and_drops_a_leading_bom() {
        // TextEncoder turns a lone surrogate into U+FFFD; TextDecoder drops a leading BOM.
        let Json::String(original) = parse(&format!(r#""\ud800{}""#, "y".repeat(60))) else {
            panic!("string");
        };
        let (text, cut) = truncate_with_notice(&original, 40);
        assert_eq!(text, JsString::from("\u{FFFD}yyyy\n[… omitted 56 UTF-8 bytes …]"));
        assert_eq!(cut, 56);
        // The 5-byte head is the BOM plus "zz": the BOM counts as kept but is not in the text,
        // which is why 7 characters fit next to a 33-byte notice within 40 bytes.
        let bom = JsString::from(format!("\u{FEFF}{}", "z".repeat(60)).as_str());
        let (text, cut) = truncate_with_notice(&bom, 40);
        assert_eq!(text, JsString::from("zzzzzzz\n[… omitted 53 UTF-8 bytes …]"));
        assert_eq!(cut, 53);
    }

    #[test]
    fn counted_string_lengths_equal_the_tag_safe_serialization() {
        let lone = |json: &str| match parse(json) {
            Json::String(s) => s,
            _ => panic!("a string"),
        };
        let strings = [
            JsString::from(""),
            JsString::from("plain"),
            JsString::from("a<b\"c\\d\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}é构😀\u{2028}</x>"),
            lone(r#""\ud800""#),
            lone(r#""a\udfff<b\ud83d""#),
            lone(r#""\ud800\ud800x\n""#),
        ];
        for text in &strings {
            assert_eq!(
                tag_safe_string_len(text),
                tag_safe_json(&Json::String(text.clone())).len(),
                "{text:?}"
            );
            for role in [Role::User, Role::Assistant] {
                assert_eq!(
                    item_len(role, text),
                    tag_safe_len(&conversation_item(role, text)),
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn item_size_matches_its_serialization() {
        let text = JsString::from("a<b\"c\u{1}é");
        let item = conversation_item(Role::Assistant, &text);
        assert_eq!(
            tag_safe_len(&item),
            r#"{"role":"assistant","text":}"#.len() + json_string_len(&text) + 5
        );
    }
}
