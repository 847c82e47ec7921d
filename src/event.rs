//! A validated event of the logical log: the unit every later stage (fold, documents, reads,
//! search, references) works on, defined below them all so none has to reach back into `log`.
//!
//! An event is held as text, not as a tree: the `JSON.stringify` form of the object DSH holds
//! (after legacy upgrades and repair), in an arena shared by every event read or appended in
//! the same batch. Its envelope (seq, time, type) is kept beside the text; its members are
//! parsed from the text when asked for. A parsed tree of strings, vectors and boxes costs
//! several times its text, and a corpus is mostly events. A large arena is packed once its
//! log is folded: its text is then held compressed in blocks (`packed`), and an event's
//! text is decompressed when it is read.

mod conversation;
mod packed;
pub(crate) mod transfer;

pub(crate) use conversation::conversation_facts;
pub use conversation::{ConversationMessage, Role, conversation_message, is_compact_checkpoint_source, text_blocks};
pub use packed::EventText;

use crate::json::{self, Json, JsonObject};
use crate::log::KNOWN_EVENT_TYPES;
use packed::{PACK_MIN_BYTES, PackedText};
use std::ops::Range;
use std::sync::Arc;

/// A validated event of the logical log.
#[derive(Clone)]
pub struct Event {
    arena: Arc<Arena>,
    start: usize,
    end: usize,
    seq: u64,
    time: i64,
    kind: Kind,
    message: Option<ConversationMessage>,
    marks: SurfaceMarks,
}

/// Where the fold's two members are in an event's text, found as it is printed: every event is
/// asked for them as its log is folded (in a load, and again when another instance adopts the
/// log), and finding a member in the text means skipping the members before it, usually all of
/// `data`. DSH prints both after `data`, so each is held as how far its value starts before the
/// text's end. One word, which in wasm32 fills what was padding:
///
/// - the low 16 bits: the `surfaceOp` value (0 when there is none: a value never starts at the
///   end; [`SurfaceMarks::FAR`] when it lies further back, and is found by a scan);
/// - the next 15 bits: the `sourceEventSeqs` value, the same way (0 when not noted: a scan
///   finds it);
/// - the top bit: whether the event has `sourceEventSeqs`.
#[derive(Clone, Copy, Debug, Default)]
struct SurfaceMarks(u32);

#[cfg(target_pointer_width = "32")]
const _: () = assert!(std::mem::size_of::<Event>() == 48, "the marks fit an event's padding");

impl SurfaceMarks {
    const SOURCES: u32 = 1 << 31;
    const FAR: u32 = 0xFFFF;
    const SOURCES_FAR: u32 = 0x7FFF;
    const SOURCES_SHIFT: u32 = 16;

    /// `object`'s members printed to `out` as [`json::write_object`] prints them, with the
    /// marks of the two members noted on the way.
    fn print(object: &JsonObject, out: &mut String) -> SurfaceMarks {
        let start = out.len();
        let mut noted = Noted::default();
        json::write_object_noting(object, out, |key, at| {
            if *key == *SURFACE_OP {
                noted.surface_op = Some(at - start);
            } else if *key == *SOURCE_EVENT_SEQS {
                noted.sources = Some(at - start);
            }
        });
        SurfaceMarks::of_printed(out.len() - start, noted)
    }

    /// The marks of an event whose printed text is `len` bytes long, with its members' values
    /// starting where `noted` says.
    fn of_printed(len: usize, noted: Noted) -> SurfaceMarks {
        let back = |at: usize, far: u32| u32::try_from(len - at).map_or(far, |back| back.min(far));
        let mut marks = noted.surface_op.map_or(0, |at| back(at, Self::FAR));
        if let Some(at) = noted.sources {
            marks |= Self::SOURCES | back(at, Self::SOURCES_FAR) << Self::SOURCES_SHIFT;
        }
        SurfaceMarks(marks)
    }

    /// Where the `surfaceOp` value starts in a text of `len` bytes: `Some(None)` when only a
    /// scan finds it.
    fn op_at(self, len: usize) -> Option<Option<usize>> {
        match self.0 & Self::FAR {
            0 => None,
            Self::FAR => Some(None),
            back => Some(len.checked_sub(back as usize)),
        }
    }

    /// Where the `sourceEventSeqs` value starts in a text of `len` bytes: `Some(None)` when
    /// only a scan finds it.
    fn sources_at(self, len: usize) -> Option<Option<usize>> {
        if self.0 & Self::SOURCES == 0 {
            return None;
        }
        match (self.0 >> Self::SOURCES_SHIFT) & Self::SOURCES_FAR {
            0 | Self::SOURCES_FAR => Some(None),
            back => Some(len.checked_sub(back as usize)),
        }
    }
}

/// Where an event's printed text holds the values of its top-level `surfaceOp` and
/// `sourceEventSeqs` members, as noted while it was parsed or printed.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Noted {
    pub(crate) surface_op: Option<usize>,
    pub(crate) sources: Option<usize>,
}

/// An event's `type`: one of DSH's own types by index, or any other (ignorable) type by value.
#[derive(Clone, Debug)]
enum Kind {
    Known(u8),
    Other(Box<str>),
}

// A known type's index fits the byte `Kind::Known` holds.
const _: () = assert!(KNOWN_EVENT_TYPES.len() <= u8::MAX as usize);

impl Kind {
    fn of(kind: &str) -> Kind {
        match crate::log::known_type_index(kind) {
            Some(index) => Kind::Known(index as u8),
            None => Kind::Other(kind.into()),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Kind::Known(index) => KNOWN_EVENT_TYPES[usize::from(*index)],
            Kind::Other(kind) => kind,
        }
    }
}

/// The text of the events read or appended together.
enum Arena {
    Plain(Box<str>),
    Packed(PackedText),
}

/// Gathers the events of one read or append into one arena: [`EventBatch::push`] prints each
/// validated object once, [`EventBatch::finish`] hands out the events. A batch made
/// [`EventBatch::on_lines`] starts from the lines a log was read from, and an event read from
/// its printed line keeps that line where it is, in the arena, instead of a copy; only the
/// others are printed, after the lines.
#[derive(Default)]
pub(crate) struct EventBatch {
    text: String,
    /// Per event of the batch, its line in `text` when it was read as its printed text.
    lines: Vec<Option<LineSpan>>,
    pending: Vec<Pending>,
}

/// A printed line's range in a text, and where its fold members' values start.
type LineSpan = (usize, usize, Noted);

struct Pending {
    start: usize,
    end: usize,
    envelope: Envelope,
    marks: SurfaceMarks,
}

/// What an event keeps of its validated envelope and message, besides its text.
#[cfg_attr(test, derive(Debug))]
pub(crate) struct Envelope {
    seq: u64,
    time: i64,
    kind: Kind,
    message: Option<ConversationMessage>,
}

impl Envelope {
    pub(crate) fn new(seq: u64, time: i64, kind: &str, message: Option<ConversationMessage>) -> Envelope {
        Envelope {
            seq,
            time,
            kind: Kind::of(kind),
            message,
        }
    }
}

impl EventBatch {
    /// A batch of `events` events read from `lines` (the `n`th event pushed is the `n`th
    /// line's), whose text becomes the arena's.
    pub(crate) fn on_lines(lines: PrintedLines, events: usize) -> EventBatch {
        EventBatch {
            text: lines.text,
            lines: lines.spans,
            pending: Vec::with_capacity(events),
        }
    }

    /// Adds an event whose envelope has been validated (by the log reader or a live append):
    /// its line when the batch was made on lines that hold it printed, else `tree` printed
    /// (an event read without a tree always has its line).
    pub(crate) fn push(&mut self, envelope: Envelope, tree: Option<&JsonObject>) {
        let (start, end, marks) = match self.lines.get(self.pending.len()).copied().flatten() {
            Some((start, end, noted)) => (start, end, SurfaceMarks::of_printed(end - start, noted)),
            None => {
                let start = self.text.len();
                let object = tree.expect("an event without its printed line is a tree");
                let marks = SurfaceMarks::print(object, &mut self.text);
                (start, self.text.len(), marks)
            }
        };
        self.pending.push(Pending {
            start,
            end,
            envelope,
            marks,
        });
    }

    /// [`EventBatch::push`] of an object whose envelope is given, as tests make events.
    #[cfg(test)]
    pub(crate) fn push_object(&mut self, object: &JsonObject, seq: u64, time: i64, kind: &str) {
        let tree = Json::Object(object.clone());
        let message = conversation_facts(json::JsonRef::Tree(&tree), Some(kind)).map(|(message, _)| message);
        self.push(Envelope::new(seq, time, kind, message), Some(object));
    }

    /// The events, sharing one exactly sized copy of their texts.
    pub(crate) fn finish(self) -> Vec<Event> {
        let arena = Arc::new(Arena::Plain(self.text.into_boxed_str()));
        self.pending
            .into_iter()
            .map(|p| Event {
                arena: Arc::clone(&arena),
                start: p.start,
                end: p.end,
                seq: p.envelope.seq,
                time: p.envelope.time,
                kind: p.envelope.kind,
                message: p.envelope.message,
                marks: p.marks,
            })
            .collect()
    }
}

/// The lines a log's events were read from, kept where a line is already its event's
/// `JSON.stringify` text (as DSH writes them): their text becomes the log's arena
/// ([`EventBatch::on_lines`]), so such an event is neither printed again from its parsed
/// object nor copied.
#[derive(Default)]
pub(crate) struct PrintedLines {
    text: String,
    /// Per event: its text's range in `text` and where its fold members' values start, or
    /// `None` when it must be printed.
    spans: Vec<Option<LineSpan>>,
}

/// The keys of the members the fold reads from every event, noted as a line is parsed.
pub(crate) const SURFACE_OP: &str = "surfaceOp";
pub(crate) const SOURCE_EVENT_SEQS: &str = "sourceEventSeqs";

/// An event's printed text as its log holds it, and where its fold members' values start.
#[derive(Clone, Copy)]
pub(crate) struct Printed<'a> {
    pub(crate) text: &'a str,
    pub(crate) noted: Noted,
}

impl PrintedLines {
    /// Makes room for `bytes` of lines at once, if memory allows (else the text grows as
    /// lines come): a log's lines are many, and growing the text line by line copied it
    /// again at every doubling.
    pub(crate) fn reserve(&mut self, bytes: usize) {
        let _ = self.text.try_reserve_exact(bytes);
    }

    /// Notes the next event's line, `None` when it is not its printed text.
    pub(crate) fn push(&mut self, line: Option<Printed<'_>>) {
        self.spans.push(line.map(|line| {
            let start = self.text.len();
            self.text.push_str(line.text);
            (start, self.text.len(), line.noted)
        }));
    }

    /// The lines noted so far, one after another.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The line of event `index`, when it is its printed text.
    pub(crate) fn line(&self, index: usize) -> Option<&str> {
        let (start, end, _) = (*self.spans.get(index)?)?;
        self.text.get(start..end)
    }

    /// Forgets the line of event `index`: its object was rewritten after it was read.
    pub(crate) fn forget(&mut self, index: usize) {
        if let Some(span) = self.spans.get_mut(index) {
            *span = None;
        }
    }
}

/// Bytes of a plain arena that one of [`text_runs`]'s runs covers at most.
const RUN_BYTES: usize = 16 << 10;

/// `events` cut into runs of consecutive events whose texts lie close together in one arena,
/// each with a text that covers them all: one packed block, or at most [`RUN_BYTES`] of a
/// plain arena (an event longer than that is a run of its own). A pass that looks for
/// something in every event's text (a search's look through unindexed sessions) looks once
/// per run, and at a run's events one by one only where it may be. The covering text may also
/// hold lines no event kept, so what is found in it is only where to look.
pub(crate) fn text_runs(events: &[Event]) -> impl Iterator<Item = (Range<usize>, EventText<'_>)> {
    let mut next = 0;
    std::iter::from_fn(move || {
        let first = events.get(next)?;
        let bounds = match &*first.arena {
            Arena::Packed(packed) => packed.block_holding(first.start),
            Arena::Plain(_) => first.start..first.end.max(first.start + RUN_BYTES),
        };
        let (mut low, mut high) = (first.start, first.end);
        let mut end = next + 1;
        while let Some(event) = events.get(end) {
            let close =
                Arc::ptr_eq(&event.arena, &first.arena) && bounds.start <= event.start && event.end <= bounds.end;
            if !close {
                break;
            }
            (low, high) = (low.min(event.start), high.max(event.end));
            end += 1;
        }
        let run = next..end;
        next = end;
        let text = match &*first.arena {
            Arena::Plain(text) => EventText::borrowed(&text[low..high]),
            Arena::Packed(packed) => packed.slice(low..high),
        };
        Some((run, text))
    })
}

/// Packs the large arenas among `events`, once the fold has read them as they are: each run
/// of events sharing a plain arena of at least [`PACK_MIN_BYTES`] gets one packed arena in its
/// place, and the plain one is freed with the last event that held it.
pub(crate) fn pack_arenas(events: &mut [Event]) {
    let mut rest = events;
    while let Some(first) = rest.first() {
        let run = rest.iter().take_while(|e| Arc::ptr_eq(&e.arena, &first.arena)).count();
        let (batch, tail) = rest.split_at_mut(run);
        pack_batch(batch);
        rest = tail;
    }
}

/// The bytes of plain text [`pack_arenas`] would pack in `events`: what holding them unpacked
/// costs. A read log's events share one arena, so this looks at the first event's only.
pub(crate) fn unpacked_bytes(events: &[Event]) -> usize {
    match events.first().map(|e| &*e.arena) {
        Some(Arena::Plain(text)) if text.len() >= PACK_MIN_BYTES => text.len(),
        _ => 0,
    }
}

/// `batch`: events sharing one arena, in the order they were pushed.
fn pack_batch(batch: &mut [Event]) {
    let Arena::Plain(text) = &*batch[0].arena else {
        return;
    };
    if text.len() < PACK_MIN_BYTES {
        return;
    }
    // Events printed after the lines of their log sit after the lines that follow them.
    let mut ends: Vec<usize> = batch.iter().map(|e| e.end).collect();
    if !ends.is_sorted() {
        crate::sorting::sort(&mut ends);
    }
    let packed = Arc::new(Arena::Packed(PackedText::pack(text, ends)));
    for event in batch {
        event.arena = Arc::clone(&packed);
    }
}

impl Event {
    /// The event's `type`, e.g. `"user/message"`.
    pub fn kind(&self) -> &str {
        self.kind.as_str()
    }

    /// Position in the log (`events[i].seq == i`).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Append time, Unix epoch milliseconds.
    pub fn time(&self) -> i64 {
        self.time
    }

    /// The message this event is in a snapshot's conversation, if it is one (see
    /// [`conversation_message`]).
    pub fn conversation_message(&self) -> Option<ConversationMessage> {
        self.message
    }

    /// The whole event as `JSON.stringify` writes the object DSH holds (key order included).
    pub fn text(&self) -> EventText<'_> {
        match &*self.arena {
            Arena::Plain(text) => EventText::borrowed(&text[self.start..self.end]),
            Arena::Packed(packed) => packed.slice(self.start..self.end),
        }
    }

    /// The type-specific payload, parsed from the text.
    pub fn data(&self) -> Json {
        self.member("data").unwrap_or(Json::Null)
    }

    /// The raw `surfaceOp` marker, if any (parsed where its printing noted it).
    pub fn surface_op(&self) -> Option<Json> {
        match self.marks.op_at(self.end - self.start)? {
            Some(at) => self.text().get(at..).map(json::parse_printed_value),
            None => self.member(SURFACE_OP),
        }
    }

    /// Whether the `surfaceOp` value is printed as `printed` (a string, number or literal, as
    /// `JSON.stringify` writes it), looked at where its printing noted it: the fold asks this
    /// of nearly every event, for `"append"`, and a parse of the value allocated it only to
    /// compare it. `false` also when the value's place was not noted (a scan finds that).
    pub fn surface_op_is(&self, printed: &str) -> bool {
        let Some(Some(at)) = self.marks.op_at(self.end - self.start) else {
            return false;
        };
        let text = self.text();
        let after = text.get(at..).and_then(|rest| rest.strip_prefix(printed));
        matches!(after.and_then(|rest| rest.bytes().next()), Some(b',' | b'}'))
    }

    /// The raw `sourceEventSeqs`, if any (parsed where its printing noted it).
    pub fn source_event_seqs(&self) -> Option<Json> {
        match self.marks.sources_at(self.end - self.start)? {
            Some(at) => self.text().get(at..).map(json::parse_printed_value),
            None => self.member(SOURCE_EVENT_SEQS),
        }
    }

    /// Whether the event is marked `"ignorable": true`.
    pub fn ignorable(&self) -> bool {
        json::member_text(&self.text(), "ignorable") == Some("true")
    }

    /// The whole event as DSH holds it (key order included), parsed from the text.
    pub fn as_json(&self) -> JsonObject {
        match json::parse_printed(&self.text()) {
            Json::Object(object) => object,
            _ => JsonObject::new(),
        }
    }

    /// Whether `other` shares this event's arena (events read or appended together do).
    pub fn shares_text_with(&self, other: &Event) -> bool {
        Arc::ptr_eq(&self.arena, &other.arena)
    }

    /// Whether the event's arena is held compressed.
    #[cfg(test)]
    fn is_packed(&self) -> bool {
        matches!(*self.arena, Arena::Packed(_))
    }

    fn member(&self, key: &str) -> Option<Json> {
        json::member_start(&self.text(), key).map(json::parse_printed_value)
    }
}

/// Shows the event's own text, not its whole arena.
impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event")
            .field("seq", &self.seq)
            .field("kind", &self.kind())
            .field("time", &self.time)
            .field("text", &self.text())
            .finish()
    }
}

/// An event serializes as its JSON text, spliced as it is stored.
impl serde::Serialize for Event {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = self.text();
        let raw: &serde_json::value::RawValue = serde_json::from_str(&text).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

/// `bytes` as text, if they are UTF-8, checked with SIMD: std's check walks ASCII eight bytes
/// at a time in wasm32, and the texts checked here are large (a helper's read of a whole log,
/// a packed block a search reads back).
#[allow(unsafe_code)]
pub(crate) fn utf8_text(bytes: Vec<u8>) -> Option<String> {
    simdutf8::basic::from_utf8(&bytes).ok()?;
    // SAFETY: the line above found `bytes` to be UTF-8.
    Some(unsafe { String::from_utf8_unchecked(bytes) })
}

#[cfg(test)]
mod tests {
    use crate::json::{Json, ParseLimits};
    use crate::log::{SessionLog, append_live, live_log};

    const HEADER: &str = r#"{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}"#;

    fn json(text: &str) -> Json {
        Json::parse(text, ParseLimits::default()).expect("json")
    }

    /// A user message written the way no `JSON.stringify` writes it: spaces, an escaped
    /// letter, `1.50`, a lone surrogate, and a key order `{"time", "seq", ...}` kept as is.
    fn message(seq: u64, text: &str) -> Json {
        json(&format!(
            r#"{{ "time" : {}.0, "type":"user/message", "seq":{seq}, "data":{{"id":"m{seq}","role":"user","content":[{{"type":"text","text":"{text}"}}],"source":{{"kind":"user"}},"w":1.50}},"surfaceOp":"append"}}"#,
            seq + 10
        ))
    }

    fn live(texts: &[&str]) -> SessionLog {
        let events = texts.iter().zip(0..).map(|(t, seq)| message(seq, t)).collect();
        live_log(&json(HEADER), events).expect("valid live session")
    }

    #[test]
    fn an_event_is_its_stringified_object_and_parses_back_to_it() {
        let log = live(&[r"\u00e9 \ud83d {x}", "two"]);
        let event = &log.events[0];
        let expected = r#"{"time":10,"type":"user/message","seq":0,"data":{"id":"m0","role":"user","content":[{"type":"text","text":"é \ud83d {x}"}],"source":{"kind":"user"},"w":1.5},"surfaceOp":"append"}"#;
        assert_eq!(event.text(), expected);
        assert_eq!(Json::Object(event.as_json()), json(expected));
        assert_eq!(event.data(), json(expected).get("data").cloned().expect("data"));
        assert_eq!(event.surface_op(), Some(Json::str("append")));
        assert_eq!(event.source_event_seqs(), None);
        assert!(!event.ignorable());
        assert_eq!((event.seq(), event.time(), event.kind()), (0, 10, "user/message"));
        // The wire form splices the stored text unchanged.
        assert_eq!(serde_json::to_string(event).expect("serializes"), expected);
        assert!(log.events[1].text().starts_with(r#"{"time":11,"#));
        assert!(
            !format!("{event:?}").contains("two"),
            "Debug shows one event, not its arena"
        );
    }

    /// Runs cover every event once, in order, each event's text within its run's, and group
    /// events, packed or not, with an event longer than a run's bytes in a run of its own.
    #[test]
    fn text_runs_cover_every_event_in_order_within_their_texts() {
        let mut random = crate::testing::xorshift(0x2B);
        let texts: Vec<String> = (0..400)
            .map(|n| match random(40) {
                0 => "y".repeat(super::RUN_BYTES + 10),
                words => format!("w{n} ").repeat(words * 5),
            })
            .collect();
        let mut batch = super::EventBatch::default();
        for (seq, text) in (0..).zip(&texts) {
            let object = message(seq, text).as_object().cloned().expect("an object");
            batch.push_object(&object, seq, 1, "user/message");
        }
        let plain = batch.finish();
        let mut packed = plain.clone();
        super::pack_arenas(&mut packed);
        assert!(matches!(*packed[0].arena, super::Arena::Packed(_)));
        for events in [&plain, &packed] {
            let runs: Vec<_> = super::text_runs(events).collect();
            assert!(
                runs.len() * 3 < events.len(),
                "{} runs of {} events",
                runs.len(),
                events.len()
            );
            let mut next = 0;
            for (run, covering) in &runs {
                assert_eq!(run.start, next);
                next = run.end;
                for event in &events[run.clone()] {
                    assert!(covering.contains(&*event.text()), "event {} in its run", event.seq());
                }
                let long = events[run.clone()].iter().any(|e| e.text().len() > super::RUN_BYTES);
                assert!(!long || run.len() == 1 || matches!(*events[run.start].arena, super::Arena::Packed(_)));
            }
            assert_eq!(next, events.len());
        }
    }

    #[test]
    fn the_surface_members_noted_in_printing_are_those_the_text_holds() {
        let objects = [
            r#"{"type":"tool/call","seq":0,"time":1,"data":{"surfaceOp":"no"}}"#,
            r#"{"surfaceOp":{"op":"replace","start":0,"end":2},"type":"assistant/message","seq":1,"time":1,"data":{},"sourceEventSeqs":[0]}"#,
            r#"{"type":"tool/result","seq":2,"time":1,"data":{"x":"\"surfaceOp\":1"},"sourceEventSeqs":[1],"surfaceOp":"append"}"#,
        ];
        let mut batch = super::EventBatch::default();
        for text in objects {
            let object = json(text).as_object().cloned().expect("an object");
            batch.push_object(&object, 0, 1, "tool/call");
        }
        assert_members_found_as_by_a_scan(batch.finish());
    }

    fn assert_members_found_as_by_a_scan(events: Vec<super::Event>) {
        for event in events {
            let text = event.text().chars().take(80).collect::<String>();
            assert_eq!(event.surface_op(), event.member("surfaceOp"), "{text}");
            assert_eq!(event.source_event_seqs(), event.member("sourceEventSeqs"), "{text}");
            let append = event.member("surfaceOp") == Some(Json::str("append"));
            let noted = matches!(event.marks.op_at(event.end - event.start), Some(Some(_)));
            assert_eq!(event.surface_op_is("\"append\""), append && noted, "{text}");
        }
    }

    #[test]
    fn the_surface_members_noted_in_parsing_are_those_the_text_holds_near_the_end_or_far() {
        use crate::json::{Elide, ParseLimits, Vocabulary};
        let long = "x".repeat(70_000);
        let many: Vec<String> = (0..9_000).map(|seq| seq.to_string()).collect();
        let many = many.join(",");
        let texts = [
            r#"{"type":"tool/call","seq":0,"time":1,"data":{"surfaceOp":"no"}}"#.to_owned(),
            format!(
                r#"{{"type":"a","seq":1,"time":1,"data":{{"x":"{long}"}},"sourceEventSeqs":[0],"surfaceOp":"append"}}"#
            ),
            format!(
                r#"{{"surfaceOp":"append","sourceEventSeqs":[0],"type":"a","seq":2,"time":1,"data":{{"x":"{long}"}}}}"#
            ),
            format!(r#"{{"type":"a","seq":3,"time":1,"data":{{}},"sourceEventSeqs":[{many}],"surfaceOp":"append"}}"#),
            r#"{"type":"a","seq":4,"time":1,"data":{"sourceEventSeqs":[9]},"sourceEventSeqs":[]}"#.to_owned(),
            r#"{"type":"a","seq":5,"time":1,"data":{},"surfaceOp":"appendix"}"#.to_owned(),
            r#"{"type":"a","seq":6,"time":1,"surfaceOp":"append","data":{}}"#.to_owned(),
        ];
        let mut lines = super::PrintedLines::default();
        for text in &texts {
            let keys = [super::SURFACE_OP, super::SOURCE_EVENT_SEQS];
            let parsed = Json::parse_noting_printed(
                text,
                ParseLimits::default(),
                usize::MAX,
                &keys,
                &Vocabulary::EMPTY,
                Elide::NONE,
            )
            .expect("valid JSON");
            assert!(parsed.printed, "{text:.60}");
            let [surface_op, sources] = parsed.noted_at;
            lines.push(Some(super::Printed {
                text,
                noted: super::Noted { surface_op, sources },
            }));
        }
        let mut batch = super::EventBatch::on_lines(lines, texts.len());
        for text in &texts {
            batch.push_object(json(text).as_object().expect("an object"), 0, 1, "a");
        }
        let events = batch.finish();
        assert!(
            events
                .iter()
                .all(|event| event.member("sourceEventSeqs").is_some() == event.marks.sources_at(0).is_some())
        );
        assert_members_found_as_by_a_scan(events);
    }

    #[test]
    fn events_read_together_share_one_arena_and_an_append_leaves_them_in_place() {
        let mut log = live(&["one", "two"]);
        assert!(log.events[0].shares_text_with(&log.events[1]));
        let before: Vec<(*const u8, String)> = log
            .events
            .iter()
            .map(|e| (e.text().as_ptr(), e.text().to_owned()))
            .collect();
        append_live(&mut log, vec![message(2, "three"), message(3, "four")]).expect("appends");
        for (event, (address, text)) in log.events.iter().zip(&before) {
            let now = event.text();
            assert_eq!((now.as_ptr(), &*now), (*address, text.as_str()), "not copied");
        }
        let (old, new) = log.events.split_at(2);
        assert!(new[0].shares_text_with(&new[1]));
        assert!(!new[0].shares_text_with(&old[0]), "an append gets an arena of its own");
        assert_eq!(new[1].data().get("id"), Some(&Json::str("m3")));
        assert_eq!(log.surface.nodes, [0, 1, 2, 3]);
    }

    #[test]
    fn a_log_over_one_block_is_packed_and_reads_as_it_was_written() {
        let words: Vec<String> = (0..400).map(|i| format!("word {i} \\u00e9 测试")).collect();
        let texts: Vec<&str> = words.iter().map(String::as_str).collect();
        let mut log = live(&texts);
        assert!(
            log.events.iter().all(super::Event::is_packed),
            "a 400-message batch is packed"
        );
        assert!(log.events[0].shares_text_with(&log.events[399]));
        for (seq, event) in log.events.iter().enumerate() {
            let expected = format!(r#""text":"word {seq} é 测试""#);
            assert!(event.text().contains(&expected), "{seq}: {:?}", event.text());
            assert_eq!(event.data().get("id"), Some(&Json::str(&format!("m{seq}"))));
        }
        let facts = log.events[7].conversation_message().expect("a direct user message");
        assert_eq!(facts.text_bytes, "word 7 é 测试".len());
        append_live(&mut log, vec![message(400, "late")]).expect("appends");
        assert!(!log.events[400].is_packed(), "an append under one block stays plain");
        assert!(
            log.events[0].shares_text_with(&log.events[399]),
            "older events keep their arena"
        );
    }

    #[test]
    fn an_unknown_ignorable_type_is_kept_by_value() {
        let unknown = json(r#"{"type":"x/new","seq":0,"time":1,"data":{},"ignorable":true}"#);
        let log = live_log(&json(HEADER), vec![unknown]).expect("valid live session");
        assert_eq!(log.events[0].kind(), "x/new");
        assert!(log.events[0].ignorable());
    }
}
