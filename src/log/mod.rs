//! One session log from bytes to validated events, exactly as DSH's non-mutating inspection
//! reads it: framing and torn tails, packed rows, header and version rule, legacy upgrades,
//! the event vocabulary, synthetic closers for an interrupted turn, and whole-log validation.

mod framing;
mod header;
mod repair;
mod rows;
pub mod transfer;
mod upgrade;
mod validate;
mod vocabulary;

pub use crate::event::Event;
pub use header::SessionHeader;
pub use validate::{KNOWN_EVENT_TYPES, known_type_index};

use crate::archive::LoadBudget;
use crate::error::{Error, ErrorCode};
use crate::event::{Envelope, EventBatch, PrintedLines};
use crate::fold::{Surface, extend_surface, fold_surface};
use crate::json::{Elide, Json, JsonRef, Parsed, Tape};

/// How a log file is encoded on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// Plain `.jsonl`.
    Raw,
    /// `.jsonl.zstd`: concatenated Zstandard frames.
    Zstd,
}

/// Bounds on reading untrusted logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// Maximum decompressed bytes of one `.jsonl.zstd` log (default 1 GiB).
    pub max_decompressed_bytes: u64,
    /// Maximum length of one JSONL line in bytes (default 256 MiB).
    pub max_line_bytes: usize,
    /// Maximum JSON nesting depth of one record (default 512; never more than
    /// [`crate::json::MAX_JSON_DEPTH`], whatever is configured).
    pub max_json_depth: usize,
    /// Maximum keys of one JSON object in a record (default
    /// [`crate::json::DEFAULT_MAX_OBJECT_KEYS`]).
    pub max_object_keys: usize,
    /// A compressed stream (a ZIP entry, a whole ZIP, a `.jsonl.zstd` log) may decompress to
    /// at most this many times its compressed size plus
    /// [`crate::archive::budget::RATIO_SLACK_BYTES`] (default 100), so a bomb stops after a
    /// few hundred times its own size.
    pub max_compression_ratio: u64,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            max_decompressed_bytes: 1 << 30,
            max_line_bytes: 256 << 20,
            max_json_depth: 512,
            max_object_keys: crate::json::DEFAULT_MAX_OBJECT_KEYS,
            max_compression_ratio: 100,
        }
    }
}

impl ReadLimits {
    /// Parses one record (a header or a log line) within these limits.
    pub(crate) fn parse_record(&self, text: &str) -> Result<Json, crate::json::ParseError> {
        self.parse_record_noting(text, &[], Elide::NONE)
            .map(|parsed| parsed.value)
    }

    /// [`ReadLimits::parse_record`], noting whether `text` is the record's printed form and
    /// where its `keys` members' values start ([`Json::parse_noting_printed`]), and checking
    /// but not keeping the strings `elide` names.
    pub(crate) fn parse_record_noting(
        &self,
        text: &str,
        keys: &[&str],
        elide: Elide,
    ) -> Result<Parsed, crate::json::ParseError> {
        let depth = crate::json::ParseLimits {
            max_depth: self.max_json_depth,
        };
        Json::parse_noting_printed(
            text,
            depth,
            self.max_object_keys,
            keys,
            &vocabulary::LOG_VOCABULARY,
            elide,
        )
    }
}

/// The strings a log's lines are read without: the texts of messages and tool results and the
/// arguments of tool calls, most of a log's bytes. Validation never reads them (a message's
/// text only by its length), and a line already printed is kept as it is; a line that is not,
/// or whose event a legacy upgrade rewrites, is parsed again in full to be printed.
pub(crate) const ELIDED: Elide = Elide {
    keys: &["text", "arguments"],
};

/// A line's text as DSH's reader decodes it: invalid UTF-8 becomes U+FFFD. A valid line (all
/// but damaged ones) is borrowed after a SIMD check; only a damaged line pays for the lossy
/// decoder's byte-at-a-time walk.
pub(crate) fn line_text(line: &[u8]) -> std::borrow::Cow<'_, str> {
    match simdutf8::basic::from_utf8(line) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(line),
    }
}

/// A session log read and validated from storage.
#[derive(Clone, Debug)]
pub struct SessionLog {
    /// The immutable header.
    pub header: SessionHeader,
    /// Every event, stored ones first, then any synthetic closers.
    pub events: Vec<Event>,
    /// How many trailing events are synthetic closers added in memory.
    pub synthetic_closers: usize,
    /// Bytes at the end of the file ignored as a torn tail.
    pub torn_bytes: u64,
    /// The surface fold over `events`.
    pub surface: Surface,
}

/// A failure while reading one log; becomes an [`Error`].
#[derive(Debug)]
pub(crate) struct LogFault {
    pub code: ErrorCode,
    pub message: String,
}

impl LogFault {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        LogFault {
            code,
            message: message.into(),
        }
    }

    pub(crate) fn corrupt(message: impl Into<String>) -> Self {
        LogFault::new(ErrorCode::LoadCorrupt, message)
    }

    pub(crate) fn damaged(message: impl Into<String>) -> Self {
        LogFault::new(ErrorCode::LoadDamaged, message)
    }

    pub(crate) fn frame(message: impl Into<String>) -> Self {
        LogFault::new(ErrorCode::LoadCorruptFrame, message)
    }
}

impl From<LogFault> for Error {
    fn from(fault: LogFault) -> Self {
        Error::new(fault.code, fault.message)
    }
}

/// Reads one log file's bytes through DSH's whole inspection pipeline.
pub fn read_log(bytes: &[u8], encoding: Encoding, limits: &ReadLimits) -> Result<SessionLog, Error> {
    read_log_within(bytes, encoding, limits, &LoadBudget::unlimited())
}

/// [`read_log`] within a load's budget: what a `.jsonl.zstd` log decodes to is spent from
/// `budget` (`crate::archive::Gathered::budget`), and a log that would overdraw it fails
/// with `SESSION_LOAD_LIMIT_EXCEEDED` before decoding past what is left.
pub fn read_log_within(
    bytes: &[u8],
    encoding: Encoding,
    limits: &ReadLimits,
    budget: &LoadBudget,
) -> Result<SessionLog, Error> {
    frame_log(bytes, encoding, limits, budget)?.decode(limits)
}

/// A log whose lines are framed and parsed but not yet checked: the first half of a read (most
/// of its cost), so a load in steps can report progress between the halves of a large log.
pub struct FramedLog(framing::Framed);

impl std::fmt::Debug for FramedLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FramedLog({} events)", self.0.events.events.len())
    }
}

/// The first half of [`read_log_within`]: framing, decompression within `budget`, JSON.
pub fn frame_log(
    bytes: &[u8],
    encoding: Encoding,
    limits: &ReadLimits,
    budget: &LoadBudget,
) -> Result<FramedLog, Error> {
    Ok(FramedLog(match encoding {
        Encoding::Raw => framing::frame_raw(bytes, limits)?,
        Encoding::Zstd => framing::frame_zstd(bytes, limits, budget)?,
    }))
}

impl FramedLog {
    /// The second half of [`read_log_within`]: the header, legacy shapes, validation, closers
    /// for interrupted turns and the surface fold.
    pub fn decode(self, limits: &ReadLimits) -> Result<SessionLog, Error> {
        let mut log = self.decode_unpacked(limits)?;
        log.pack();
        Ok(log)
    }

    /// [`FramedLog::decode`] with the events' text left unpacked: compressing it is about a
    /// tenth of a read, which a load spares up to a bound (`corpus::UNPACKED_BYTES`).
    pub fn decode_unpacked(self, limits: &ReadLimits) -> Result<SessionLog, Error> {
        let framed = self.0;
        let parsed_header = header::parse_header_line(&framed.header_line, limits)?;
        let id = parsed_header.header.id.clone();
        let in_context = |fault: LogFault| failed_validation(&id, fault);
        let mut raw = framed.events;
        let mut printed = framed.printed;
        let checked = match checked_in_one_pass(&raw, printed.text()) {
            Some((events, envelopes)) => with_closers(&events, || Ok(envelopes), &printed, limits),
            None => checked_one_by_one(&mut raw, &mut printed, &id, framed.elided, limits),
        };
        let (envelopes, closers) = checked.map_err(in_context)?;
        let synthetic_closers = closers.len();
        raw.events.extend(closers.into_iter().map(RawEvent::Tree));
        let events = batch(&raw, envelopes, printed);
        parsed_header.validate().map_err(in_context)?;
        let header = parsed_header.header;
        let surface = fold_surface(&events).map_err(|e| in_context(LogFault::corrupt(e.message)))?;
        Ok(SessionLog {
            header,
            events,
            synthetic_closers,
            torn_bytes: framed.torn_bytes,
            surface,
        })
    }
}

/// What a log's checks keep: its events' envelopes (its closers' last) and its closers.
type Checked = (Vec<Envelope>, Vec<Json>);

/// The checks made one after another, as DSH makes them (legacy shapes upgraded on the way),
/// so that what fails first is what is reported.
fn checked_one_by_one(
    raw: &mut RawEvents,
    printed: &mut PrintedLines,
    session_id: &str,
    elided: bool,
    limits: &ReadLimits,
) -> Result<Checked, LogFault> {
    upgrade::reject_retired_vocabulary(&raw.views(printed.text()))?;
    let in_full = |index| elided.then(|| read_in_full(printed, limits, index)).flatten();
    let rewritten = upgrade::upgrade_legacy_shapes(raw, printed.text(), session_id, in_full)?;
    for index in rewritten {
        printed.forget(index);
    }
    let events = raw.views(printed.text());
    for event in &events {
        validate::message_shape(*event)?;
    }
    validate::known_types(&events)?;
    with_closers(&events, || validate::envelopes(&events, 0), printed, limits)
}

/// The closers of a log whose `events` passed the checks made before the closers', checked,
/// then the events' `envelopes` (checked after the closers, as DSH checks them), then the
/// closers' envelopes after the events'.
fn with_closers(
    events: &[EventView<'_>],
    envelopes: impl FnOnce() -> Result<Vec<Envelope>, LogFault>,
    printed: &PrintedLines,
    limits: &ReadLimits,
) -> Result<Checked, LogFault> {
    let closers = checked_closers(events, printed, limits)?;
    let mut envelopes = envelopes()?;
    let views: Vec<EventView<'_>> = closers
        .iter()
        .map(|closer| EventView::of(JsonRef::Tree(closer)))
        .collect();
    envelopes.extend(validate::envelopes(&views, events.len())?);
    Ok((envelopes, closers))
}

/// The checks of a log's events in one pass, every check of an event made while its nodes
/// are at hand, where a pass a check went over the whole log's nodes again each time: the
/// events as the checks read them, and their envelopes. `None` as soon as an event fails a
/// check, uses retired vocabulary or may have a legacy shape: the checks are then made one
/// after another ([`checked_one_by_one`]), so that what fails first is what DSH reports.
fn checked_in_one_pass<'a>(raw: &'a RawEvents, text: &'a str) -> Option<(Vec<EventView<'a>>, Vec<Envelope>)> {
    let mut events = Vec::with_capacity(raw.events.len());
    let mut envelopes = Vec::with_capacity(raw.events.len());
    for (index, event) in raw.events.iter().enumerate() {
        let event = EventView::of(event.view(&raw.tape, text));
        let passes = upgrade::retired_vocabulary(event).is_none()
            && !upgrade::may_be_legacy(event)
            && validate::message_shape(event).is_ok()
            && validate::is_known_or_ignorable(event);
        if !passes {
            return None;
        }
        envelopes.push(validate::envelope(index, event).ok()?);
        events.push(event);
    }
    Some((events, envelopes))
}

/// A log's events as framing read them: the lines that are their events' printed text on one
/// tape (nearly all), the others as trees, as are closers and live events.
#[derive(Default)]
pub(crate) struct RawEvents {
    pub(crate) events: Vec<RawEvent>,
    pub(crate) tape: Tape,
}

/// One event of [`RawEvents`].
pub(crate) enum RawEvent {
    /// Read onto the tape, at this node; its line is its printed text.
    Taped(u32),
    /// A tree: a line spelled otherwise, an event of a packed row, a legacy shape rewritten,
    /// a closer, a live event.
    Tree(Json),
}

impl RawEvents {
    /// Trees only (a live append's events).
    fn of_trees(events: Vec<Json>) -> RawEvents {
        RawEvents {
            events: events.into_iter().map(RawEvent::Tree).collect(),
            tape: Tape::default(),
        }
    }

    /// Every event as the checks read it, the tape's read in `text`, the log's printed lines.
    fn views<'a>(&'a self, text: &'a str) -> Vec<EventView<'a>> {
        self.events
            .iter()
            .map(|event| EventView::of(event.view(&self.tape, text)))
            .collect()
    }
}

impl RawEvent {
    /// The event as a value, a taped one read in `text` on `tape`.
    fn view<'a>(&'a self, tape: &'a Tape, text: &'a str) -> JsonRef<'a> {
        match self {
            RawEvent::Taped(at) => tape.get(text, 0, *at),
            RawEvent::Tree(tree) => JsonRef::Tree(tree),
        }
    }
}

/// Checks the envelopes of `raw` (the log's events from index `first` on) and gathers the
/// events with their texts ([`batch`]).
fn assemble(raw: &RawEvents, first: usize, printed: PrintedLines) -> Result<Vec<Event>, LogFault> {
    let envelopes = validate::envelopes(&raw.views(printed.text()), first)?;
    Ok(batch(raw, envelopes, printed))
}

/// The events of `raw`, whose envelopes are checked, with their texts: their lines in
/// `printed`, or their trees printed.
fn batch(raw: &RawEvents, envelopes: Vec<Envelope>, printed: PrintedLines) -> Vec<Event> {
    let mut batch = EventBatch::on_lines(printed, envelopes.len());
    for (envelope, event) in envelopes.into_iter().zip(&raw.events) {
        let tree = match event {
            RawEvent::Tree(Json::Object(object)) => Some(object),
            _ => None,
        };
        batch.push(envelope, tree);
    }
    batch.finish()
}

/// The closers of a log that ends inside a turn ([`repair`]), checked as DSH checks them: as a
/// stored event's message is, so a closer of a call whose id is not a non-empty string fails.
/// A closer that copied a turn, step or call id holding a string the reader left out (only a
/// crafted log has one) is made again from the events read in full.
fn checked_closers(
    events: &[EventView<'_>],
    printed: &PrintedLines,
    limits: &ReadLimits,
) -> Result<Vec<Json>, LogFault> {
    let mut closers = repair::interrupted_turn_closers(events)?;
    if closers.iter().any(Json::holds_elided) {
        let events: Vec<Json> = (0..events.len())
            .map(|index| read_in_full(printed, limits, index).unwrap_or_else(|| events[index].value.to_json()))
            .collect();
        let events: Vec<EventView<'_>> = events.iter().map(|event| EventView::of(JsonRef::Tree(event))).collect();
        closers = repair::interrupted_turn_closers(&events)?;
    }
    for closer in &closers {
        validate::message_shape(EventView::of(JsonRef::Tree(closer)))?;
    }
    Ok(closers)
}

/// An event's `type`, when it is a string.
#[inline]
fn event_type(event: JsonRef<'_>) -> Option<&str> {
    event.get("type").and_then(JsonRef::as_str)
}

/// An event as the checks read it: its value and its `type` (when a string), looked up once,
/// since every check of an event starts by asking its type.
#[derive(Clone, Copy)]
pub(crate) struct EventView<'a> {
    pub(crate) value: JsonRef<'a>,
    pub(crate) kind: Option<&'a str>,
}

impl<'a> EventView<'a> {
    pub(crate) fn of(value: JsonRef<'a>) -> EventView<'a> {
        EventView {
            value,
            kind: event_type(value),
        }
    }
}

/// Event `index` parsed again in full from its line, when its line is its printed text (the
/// reader may have left long strings out of what it parsed then).
fn read_in_full(printed: &PrintedLines, limits: &ReadLimits, index: usize) -> Option<Json> {
    limits.parse_record(printed.line(index)?).ok()
}

/// A stored session's validation failure, named by its id. Out of line, as the other rare
/// paths of a read: a wasm engine optimises a hot function whole, cold paths included.
#[cold]
#[inline(never)]
fn failed_validation(id: &str, fault: LogFault) -> Error {
    Error::new(
        fault.code,
        format!("stored session {id:?} failed validation: {}", fault.message),
    )
}

impl SessionLog {
    /// Compresses the events' text in blocks, if it is not yet (reads are unchanged).
    pub fn pack(&mut self) {
        crate::event::pack_arenas(&mut self.events);
    }

    /// The bytes of event text [`SessionLog::pack`] would compress.
    pub fn unpacked_bytes(&self) -> usize {
        crate::event::unpacked_bytes(&self.events)
    }
}

/// The header as DSH's listing sees it, whatever else is wrong with the log: `None` when the
/// listing would pass the file over.
pub fn listing_header(bytes: &[u8], encoding: Encoding, limits: &ReadLimits) -> Option<SessionHeader> {
    let line = framing::header_line(bytes, encoding == Encoding::Zstd, limits).ok()?;
    let value = Json::parse(&line_text(&line), crate::json::ParseLimits::default()).ok()?;
    header::listing_header(&value)
}

/// The `id` of the header record, when it is a string, whatever else is wrong with the log.
pub fn header_id(bytes: &[u8], encoding: Encoding, limits: &ReadLimits) -> Option<String> {
    let line = framing::header_line(bytes, encoding == Encoding::Zstd, limits).ok()?;
    let value = Json::parse(&line_text(&line), crate::json::ParseLimits::default()).ok()?;
    value
        .get("id")
        .and_then(Json::as_js_string)
        .map(|id| id.to_lossy().into_owned())
}

/// Builds a live session from a host-supplied header and events, validated as DSH's `Session`
/// validates them: envelopes, messages and the surface fold (no repair, no legacy upgrades).
pub fn live_log(header: &Json, events: Vec<Json>) -> Result<SessionLog, Error> {
    let parsed = header::parse_header_value(header, false)?;
    parsed.validate()?;
    let mut log = SessionLog {
        header: parsed.header,
        events: Vec::new(),
        synthetic_closers: 0,
        torn_bytes: 0,
        surface: Surface::default(),
    };
    append_live(&mut log, events)?;
    Ok(log)
}

/// Appends events to a live session. All or nothing: if any event is invalid, the log is
/// unchanged. Fails with `SESSION_QUERY_INVALID_SURFACE` for surface rules and
/// `SESSION_LOAD_CORRUPT` for envelope and message rules.
pub fn append_live(log: &mut SessionLog, events: Vec<Json>) -> Result<(), Error> {
    for event in &events {
        validate::message_shape(EventView::of(JsonRef::Tree(event)))?;
    }
    let start = log.events.len();
    let appended = assemble(&RawEvents::of_trees(events), start, PrintedLines::default())?;
    // Only the new events are checked and folded; on failure the log is put back as it was.
    log.events.extend(appended);
    if let Err(error) = extend_surface(&mut log.surface, &log.events, start) {
        log.events.truncate(start);
        return Err(error);
    }
    crate::event::pack_arenas(&mut log.events[start..]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = include_str!("../../tests/fixtures/spec/compaction_shadows_prefix.jsonl");

    fn read(text: &str) -> SessionLog {
        read_log(text.as_bytes(), Encoding::Raw, &ReadLimits::default()).expect("a valid log")
    }

    /// Lines as DSH writes them are taken as the events' texts; the same log spelled
    /// otherwise (spaces, `1.0`, `\/`) is printed: both read alike, to the fold's labels.
    #[test]
    fn a_line_spelled_otherwise_reads_as_its_printed_form() {
        let respelled = LOG
            .replace("\",\"", "\", \"")
            .replace("\":", "\" :\t")
            .replace("\"seq\" :\t0,", "\"seq\":0.0,")
            .replace("\"compact\"", "\"com\\/pact\"");
        let plain = LOG.replace("\"compact\"", "\"com/pact\"");
        assert_ne!(respelled, plain);
        let (printed, spelled) = (read(&plain), read(&respelled));
        assert_eq!(printed.events.len(), spelled.events.len());
        for (line, (a, b)) in LOG.lines().skip(1).zip(printed.events.iter().zip(&spelled.events)) {
            let expected = Json::parse(&line.replace("\"compact\"", "\"com/pact\""), Default::default()).expect("json");
            assert_eq!(a.text().to_string(), expected.to_js_string());
            assert_eq!(a.text().to_string(), b.text().to_string());
            assert_eq!(a.surface_op(), b.surface_op());
            assert_eq!(a.surface_op(), expected.get("surfaceOp").cloned());
        }
        assert_eq!(printed.surface, spelled.surface);
        assert!(
            printed
                .events
                .iter()
                .any(|e| e.surface_op().is_some_and(|op| op.as_object().is_some()))
        );
    }

    /// What a read says of a log, to compare two reads: every event's envelope, text, message
    /// and fold members, the closers, the torn tail and the surface; or the error.
    type Outcome = Result<(Vec<String>, usize, u64, Surface), (ErrorCode, String)>;

    fn outcome(bytes: &[u8]) -> Outcome {
        let log = read_log(bytes, Encoding::Raw, &ReadLimits::default()).map_err(|e| (e.code, e.message))?;
        let events = log.events.iter().map(|e| {
            format!(
                "{} {} {} {:?} {:?} {:?} {}",
                e.seq(),
                e.time(),
                e.kind(),
                e.conversation_message(),
                e.surface_op(),
                e.source_event_seqs(),
                &*e.text()
            )
        });
        Ok((events.collect(), log.synthetic_closers, log.torn_bytes, log.surface))
    }

    /// Every complete line but the header spelled otherwise (a space after its first brace), so that
    /// the reader parses each into a tree: what a read says must not depend on which way a
    /// line was read.
    fn respelled(log: &str) -> String {
        let mut lines = log.split_inclusive('\n');
        let header = lines.next().unwrap_or_default().to_owned();
        let respell = |line: &str| match line.ends_with('\n') {
            true => line.replacen('{', "{ ", 1),
            // A torn tail stays as it is: it is not read, only measured.
            false => line.to_owned(),
        };
        header + &lines.map(respell).collect::<String>()
    }

    /// What the checks of a framed log keep, or what they refuse, to compare two ways of checking.
    fn checks_outcome(checked: Result<Checked, LogFault>) -> Result<String, (ErrorCode, String)> {
        checked
            .map(|(envelopes, closers)| format!("{envelopes:?} {closers:?}"))
            .map_err(|fault| (fault.code, fault.message))
    }

    /// Where the checks in one pass pass every event, the checks one by one keep the same
    /// envelopes and closers; where they do not, the log is one the checks one by one refuse,
    /// or one with an event that may have a legacy shape or uses retired vocabulary (a sound
    /// current log is never left to the slow way). Over the spec's fixtures, both spellings.
    #[test]
    fn the_checks_in_one_pass_agree_with_the_checks_one_by_one() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spec");
        let limits = ReadLimits::default();
        let (mut agreed, mut left) = (0, 0);
        for entry in std::fs::read_dir(dir).expect("the fixtures") {
            let log = std::fs::read_to_string(entry.expect("an entry").path()).expect("a fixture");
            for log in [respelled(&log), log] {
                let Ok(FramedLog(framed)) = frame_log(log.as_bytes(), Encoding::Raw, &limits, &LoadBudget::unlimited())
                else {
                    continue;
                };
                let (mut raw, mut printed) = (framed.events, framed.printed);
                let legacy = raw
                    .views(printed.text())
                    .into_iter()
                    .any(|event| upgrade::may_be_legacy(event) || upgrade::retired_vocabulary(event).is_some());
                let one_pass = checked_in_one_pass(&raw, printed.text()).map(|(events, envelopes)| {
                    checks_outcome(with_closers(&events, || Ok(envelopes), &printed, &limits))
                });
                let one_by_one =
                    checks_outcome(checked_one_by_one(&mut raw, &mut printed, "s", framed.elided, &limits));
                match one_pass {
                    Some(one_pass) => {
                        assert_eq!(one_pass, one_by_one, "{log}");
                        agreed += 1;
                    }
                    None => {
                        assert!(
                            one_by_one.is_err() || legacy,
                            "a sound current log checked one by one: {log}"
                        );
                        left += 1;
                    }
                }
            }
        }
        assert!(
            agreed >= 20 && left >= 2,
            "{agreed} checked in one pass, {left} one by one"
        );
    }

    /// A log whose first event's envelope is invalid and whose later event has an unknown type
    /// is refused for the type: DSH checks every event's type before any envelope.
    #[test]
    fn the_first_check_to_fail_in_dshs_order_is_reported_whatever_event_fails_first() {
        let header = r#"{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0}"#;
        let start = r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1},"extra":1}"#;
        let unknown = r#"{"type":"later/kind","seq":1,"time":1,"data":{}}"#;
        let log = format!("{header}\n{start}\n{unknown}\n");
        let refused = read_log(log.as_bytes(), Encoding::Raw, &ReadLimits::default()).expect_err("refused");
        assert_eq!(refused.code, ErrorCode::LoadUnknownEventType, "{}", refused.message);
        let log = format!("{header}\n{start}\n");
        let refused = read_log(log.as_bytes(), Encoding::Raw, &ReadLimits::default()).expect_err("refused");
        assert!(
            refused.message.contains("invalid event envelope"),
            "{}",
            refused.message
        );
    }

    /// Every log of the spec's fixtures (valid, corrupt, legacy, torn, packed rows) reads the
    /// same whether its lines are read onto the tape (as printed) or parsed as trees.
    #[test]
    fn a_log_reads_the_same_from_its_tape_as_from_trees() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/spec");
        let mut compared = 0;
        for entry in std::fs::read_dir(dir).expect("the fixtures") {
            let path = entry.expect("an entry").path();
            let log = std::fs::read_to_string(&path).expect("a fixture");
            let spelled = respelled(&log);
            assert_ne!(spelled, log);
            assert_eq!(
                outcome(log.as_bytes()),
                outcome(spelled.as_bytes()),
                "{}",
                path.display()
            );
            compared += 1;
        }
        assert!(compared >= 20, "{compared} fixtures");
    }

    /// Logs whose lines the tape leaves to the tree parser in every way it does, one line
    /// among printed ones, and legacy shapes the reader rewrites from the tape's events, read
    /// the same as when every line is a tree.
    #[test]
    fn lines_left_to_the_tree_parser_and_legacy_shapes_read_the_same() {
        let header = r#"{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0}"#;
        let user = |seq: u32, data: &str| {
            format!(
                r#"{{"type":"user/message","seq":{seq},"time":2,"data":{{"id":"m{seq}","role":"user","content":[{{"type":"text","text":"t"}}],"source":{{"kind":"user"}}{data}}},"surfaceOp":"append"}}"#
            )
        };
        let odd_lines = [
            user(1, r#","x":1,"x":2"#),
            user(1, r#","1":1"#),
            user(1, r#","k\u0065y":1"#),
            user(1, r#","n":1.0"#),
            user(1, r#","s":"\ud800""#),
            user(1, r#","s":"\u00e9""#),
            user(1, &(0..20).map(|k| format!(r#","k{k}":{k}"#)).collect::<String>()),
            user(1, r#","s":"a\/b""#),
        ];
        let legacy = [
            r#"{"type":"turn/end","seq":2,"time":3,"data":{"turn":1,"reason":{"kind":"aborted"}}}"#.to_owned(),
            r#"{"type":"turn/start","seq":3,"time":3,"data":{"turn":2,"trigger":{"kind":"user"}}}"#.to_owned(),
            r#"{"type":"steering/message","seq":4,"time":3,"data":{"turn":2,"content":[{"type":"text","text":"s"}],"source":{"kind":"user"}},"surfaceOp":"append"}"#.to_owned(),
            r#"{"type":"user/message","seq":5,"time":3,"data":{"content":[{"type":"text","text":"old"}],"source":{"kind":"user"}},"surfaceOp":"append"}"#.to_owned(),
            r#"{"type":"turn/end","seq":6,"time":3,"data":{"turn":2,"reason":{"kind":"completed","x":1}}}"#.to_owned(),
        ];
        let start = r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#.to_owned();
        let mut logs: Vec<Vec<String>> = odd_lines
            .iter()
            .map(|line| vec![start.clone(), line.clone(), legacy[0].clone()])
            .collect();
        for end in 1..=legacy.len() {
            logs.push([vec![start.clone(), user(1, "")], legacy[..end].to_vec()].concat());
        }
        let mut read = 0;
        for lines in logs {
            let log = format!("{header}\n{}\n", lines.join("\n"));
            let (taped, trees) = (outcome(log.as_bytes()), outcome(respelled(&log).as_bytes()));
            read += usize::from(taped.is_ok());
            assert_eq!(taped, trees, "{log}");
        }
        assert!(read >= 10, "most of these logs read ({read})");
    }

    /// Events read from their printed lines keep them where they are in the arena, and the
    /// others are printed after all the lines: texts still read back event by event once the
    /// arena is packed in blocks, whatever lines between them were printed apart.
    #[test]
    fn lines_printed_apart_from_the_others_read_back_once_packed() {
        let long = "x".repeat(3000);
        let plain = LOG
            .replace("\"text\":\"one\"", &format!("\"text\":\"one {long}\""))
            .replace("\"text\":\"four\"", &format!("\"text\":\"four {long}\""));
        let mixed: Vec<String> = plain
            .lines()
            .enumerate()
            .map(|(n, line)| match n % 3 {
                1 => line.replacen("\",\"", "\", \"", 1),
                _ => line.to_owned(),
            })
            .collect();
        let mixed = mixed.join("\n") + "\n";
        assert_ne!(mixed, plain);
        let (printed, spelled) = (read(&plain), read(&mixed));
        assert!(printed.events[0].shares_text_with(&printed.events[8]));
        for (line, (a, b)) in plain.lines().skip(1).zip(printed.events.iter().zip(&spelled.events)) {
            assert_eq!(a.text().to_string(), line);
            assert_eq!(b.text().to_string(), line);
            assert_eq!(a.surface_op(), b.surface_op());
        }
        assert_eq!(printed.surface, spelled.surface);
    }

    /// The reader leaves messages' texts and tools' arguments out of what it parses, yet an
    /// event printed from its tree (a legacy shape rewritten, a line spelled otherwise) holds
    /// them whole, and a message's text length is its text's.
    #[test]
    fn events_printed_from_their_trees_hold_the_texts_the_reader_left_out() {
        let text = "a \"quoted\" line\nand \u{e9}, \u{1F600} and \\u2028 ".repeat(40);
        let escaped = Json::str(&text).to_js_string();
        let lines = [
            r#"{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0}"#.to_owned(),
            r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#.to_owned(),
            format!(
                r#"{{"type":"user/message","seq":1,"time":2,"data":{{"content":[{{"type":"text","text":{escaped}}}],"source":{{"kind":"user"}}}},"surfaceOp":"append"}}"#
            ),
            format!(
                r#"{{"type":"user/message", "seq":2,"time":3,"data":{{"id":"m2","role":"user","content":[{{"type":"text","text":{escaped}}}],"source":{{"kind":"user"}}}},"surfaceOp":"append"}}"#
            ),
        ];
        let log = read(&(lines.join("\n") + "\n"));
        for (line, event) in lines[1..].iter().zip(&log.events) {
            let mut tree = vec![Json::parse(line, Default::default()).expect("json")];
            upgrade::tests::upgrade_trees(&mut tree, "s1").expect("upgrades");
            assert_eq!(event.text().to_string(), tree[0].to_js_string());
        }
        for event in &log.events[1..3] {
            assert!(event.text().contains(&escaped), "{:.80}", event.text().to_string());
            let message = event.conversation_message().expect("a user prompt");
            assert_eq!(message.text_bytes, text.len());
        }
        assert!(log.events[1].text().contains(r#""id":"legacy-message:s1:1""#));
    }
}
