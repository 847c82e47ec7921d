//! DSH's exact read side over the corpus: list, read, filter and trace sessions and events,
//! fold titles, and list documents — every result in DSH's wire shape.

use crate::corpus::{Corpus, SessionRecord, Source, locale_compare};
use crate::documents::{Document, EventRecord, session_documents};
use crate::error::{Error, ErrorCode};
use crate::filters::{EventFilter, SessionFilter, filter_documents, session_matches};
use crate::json::{JsString, Json, JsonObject};
use crate::log::{Event, SessionHeader};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Default and maximum `before` / `after` of `readEvent` (DSH's `readWindowMax`).
pub const READ_WINDOW_MAX: u64 = 50;

/// DSH's `readSurface` result. Its events are parsed values ([`Json`]) or, for the wire,
/// the stored events themselves (`&Event`, written as their stored text).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SurfaceSnapshot<E = Json> {
    /// The session header.
    pub session: SessionHeader,
    /// Seq of the last event captured (`null` for an empty log).
    pub captured_through_seq: Option<u64>,
    /// The current surface events, in model-history order.
    pub events: Vec<E>,
}

/// DSH's `readSession` result: the header and the whole logical log (events as in
/// [`SurfaceSnapshot`]).
#[derive(Clone, Debug, Serialize)]
pub struct SessionLogSnapshot<E = Json> {
    /// The session header.
    pub session: SessionHeader,
    /// Every event, in seq order.
    pub events: Vec<E>,
}

/// DSH's `readEvent` result: one event and a bounded window around it (events as in
/// [`SurfaceSnapshot`]).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventWindow<E = Json> {
    /// The session header.
    pub session: SessionHeader,
    /// The requested event.
    pub target: E,
    /// Events `startSeq..=endSeq`.
    pub events: Vec<E>,
    /// First seq in the window.
    pub start_seq: u64,
    /// Last seq in the window.
    pub end_seq: u64,
}

/// One node of a lineage tree.
#[derive(Clone, Debug, Serialize)]
pub struct LineageNode {
    /// The session's listing record.
    pub session: SessionRecord,
    /// Its children, oldest first.
    pub descendants: Vec<LineageNode>,
}

/// DSH's `traceSession` result.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTrace {
    /// The traced session.
    pub target: SessionRecord,
    /// Parent, grandparent, … as far as known.
    pub ancestors: Vec<SessionRecord>,
    /// Children, recursively.
    pub descendants: Vec<LineageNode>,
    /// Whether the whole parent chain is known.
    pub complete: bool,
    /// The outermost ancestor (only when complete).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<SessionRecord>,
    /// The first parent id that is not in the corpus (only when incomplete).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unresolved_parent_id: Option<String>,
}

/// DSH's `traceEvent` result.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventTrace {
    /// The session header.
    pub session: SessionHeader,
    /// The event's record.
    pub target: EventRecord,
    /// The event that replaced this one, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced_by: Option<u64>,
    /// Replacements of replacements, up to the last.
    pub replacement_chain: Vec<u64>,
    /// Seqs this event replaced (empty unless it is a replacement).
    pub replaced_event_seqs: Vec<u64>,
    /// Its cited `sourceEventSeqs`.
    pub source_event_seqs: Vec<Json>,
    /// Later events that cite it.
    pub derived_event_seqs: Vec<u64>,
}

/// The latest folded title of a session.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TitleSnapshot {
    /// The title text.
    pub title: Json,
    /// The messages it was derived from.
    pub message_seqs: Json,
    /// Where it came from.
    pub source: Json,
    /// The `session/title` event.
    pub event_seq: u64,
    /// That event's time.
    pub updated_at: i64,
}

/// One session's header and latest title.
#[derive(Clone, Debug, Serialize)]
pub struct SessionTitle {
    /// The session header.
    pub session: SessionHeader,
    /// The latest title, if the log has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<TitleSnapshot>,
}

/// One settled result of `readTitleSnapshots`.
#[derive(Clone, Debug)]
pub struct TitleSettlement {
    /// The requested id.
    pub session_id: String,
    /// The title, or why it could not be read.
    pub result: Result<SessionTitle, Error>,
}

/// `Promise.allSettled`'s shape, as DSH returns it: `{sessionId, status: "fulfilled", value}`
/// or `{sessionId, status: "rejected", reason: {code, message}}`.
impl Serialize for TitleSettlement {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        #[derive(Serialize)]
        struct Reason<'a> {
            code: &'a str,
            message: &'a str,
        }
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("sessionId", &self.session_id)?;
        match &self.result {
            Ok(value) => {
                map.serialize_entry("status", "fulfilled")?;
                map.serialize_entry("value", value)?;
            }
            Err(error) => {
                map.serialize_entry("status", "rejected")?;
                let reason = Reason {
                    code: error.code.as_str(),
                    message: &error.message,
                };
                map.serialize_entry("reason", &reason)?;
            }
        }
        map.end()
    }
}

fn record_of(source: Source<'_>) -> EventRecordsOf<'_> {
    EventRecordsOf {
        id: source.log.header.raw_id.clone(),
        source,
    }
}

struct EventRecordsOf<'a> {
    id: JsString,
    source: Source<'a>,
}

impl EventRecordsOf<'_> {
    fn record(&self, event: &Event) -> EventRecord {
        EventRecord {
            session_id: self.id.clone(),
            seq: event.seq(),
            kind: event.kind().to_owned(),
            time: event.time(),
            surface: self.source.log.surface.label(event.seq()),
        }
    }
}

fn event_json(event: &Event) -> Json {
    Json::Object(event.as_json())
}

impl SurfaceSnapshot<&Event> {
    /// The snapshot with its events parsed.
    pub fn parsed(self) -> SurfaceSnapshot {
        SurfaceSnapshot {
            session: self.session,
            captured_through_seq: self.captured_through_seq,
            events: self.events.into_iter().map(event_json).collect(),
        }
    }
}

impl SessionLogSnapshot<&Event> {
    /// The snapshot with its events parsed.
    pub fn parsed(self) -> SessionLogSnapshot {
        SessionLogSnapshot {
            session: self.session,
            events: self.events.into_iter().map(event_json).collect(),
        }
    }
}

impl EventWindow<&Event> {
    /// The window with its events parsed.
    pub fn parsed(self) -> EventWindow {
        EventWindow {
            session: self.session,
            target: event_json(self.target),
            events: self.events.into_iter().map(event_json).collect(),
            start_seq: self.start_seq,
            end_seq: self.end_seq,
        }
    }
}

impl Corpus {
    /// DSH's `listSessions`: newest first (`createdAt` descending, then id).
    pub fn list_sessions(&self) -> Vec<SessionRecord> {
        let mut records: Vec<SessionRecord> = self
            .sources()
            .map(|(_, s)| s.record())
            .chain(self.unreadable_records())
            .chain(self.listed_records())
            .collect();
        crate::sorting::sort_by(&mut records, |a, b| {
            b.header
                .created_at
                .cmp(&a.header.created_at)
                .then_with(|| locale_compare(&a.header.id, &b.header.id))
        });
        records
    }

    /// DSH's `filterSessions`: the listing, filtered (clauses ANDed, values ORed).
    pub fn filter_sessions(&self, filters: &[SessionFilter]) -> Vec<SessionRecord> {
        self.list_sessions()
            .into_iter()
            .filter(|r| session_matches(filters, r))
            .collect()
    }

    /// DSH's `readSession`: the header and every event.
    pub fn read_session(&self, id: &str) -> Result<SessionLogSnapshot, Error> {
        Ok(self.read_session_stored(id)?.parsed())
    }

    /// [`Corpus::read_session`] with the events as stored (what the wire answer splices).
    pub fn read_session_stored(&self, id: &str) -> Result<SessionLogSnapshot<&Event>, Error> {
        let source = self.source(id)?;
        Ok(SessionLogSnapshot {
            session: source.log.header.clone(),
            events: source.log.events.iter().collect(),
        })
    }

    /// DSH's `listEvents`: every event with its surface label, in seq order.
    pub fn list_events(&self, id: &str) -> Result<Vec<EventRecord>, Error> {
        let source = self.source(id)?;
        let records = record_of(source);
        Ok(source.log.events.iter().map(|e| records.record(e)).collect())
    }

    /// DSH's `readSurface`: header, capture boundary and the current surface events.
    pub fn read_surface(&self, id: &str) -> Result<SurfaceSnapshot, Error> {
        Ok(self.read_surface_stored(id)?.parsed())
    }

    /// [`Corpus::read_surface`] with the events as stored (what the wire answer splices).
    pub fn read_surface_stored(&self, id: &str) -> Result<SurfaceSnapshot<&Event>, Error> {
        let log = self.source(id)?.log;
        Ok(SurfaceSnapshot {
            session: log.header.clone(),
            captured_through_seq: log.events.last().map(Event::seq),
            events: log.surface.nodes.iter().map(|seq| &log.events[*seq as usize]).collect(),
        })
    }

    /// DSH's `readEvent`: the event at `seq` with up to `before` / `after` neighbours, each at
    /// most [`READ_WINDOW_MAX`] (`SESSION_QUERY_INVALID_WINDOW`, checked before the session).
    pub fn read_event(&self, id: &str, seq: u64, before: u64, after: u64) -> Result<EventWindow, Error> {
        Ok(self.read_event_stored(id, seq, before, after)?.parsed())
    }

    /// [`Corpus::read_event`] with the events as stored (what the wire answer splices).
    pub fn read_event_stored(&self, id: &str, seq: u64, before: u64, after: u64) -> Result<EventWindow<&Event>, Error> {
        for (name, value) in [("before", before), ("after", after)] {
            if value > READ_WINDOW_MAX {
                return Err(Error::new(
                    ErrorCode::QueryInvalidWindow,
                    format!("{name} must be an integer between 0 and {READ_WINDOW_MAX}"),
                ));
            }
        }
        let log = self.source(id)?.log;
        let target = log.events.get(seq as usize).ok_or_else(|| event_not_found(id, seq))?;
        let start_seq = seq.saturating_sub(before);
        let end_seq = (seq + after).min(log.events.len() as u64 - 1);
        Ok(EventWindow {
            session: log.header.clone(),
            target,
            events: log.events[start_seq as usize..=end_seq as usize].iter().collect(),
            start_seq,
            end_seq,
        })
    }

    /// DSH's `traceSession`: known ancestors (nearest first) and descendants (oldest first).
    /// Fails with `SESSION_QUERY_INVALID_LINEAGE` when the parent chain cycles, or (unlike
    /// DSH) when the descendants nest deeper than [`MAX_LINEAGE_DEPTH`].
    pub fn trace_session(&self, id: &str) -> Result<SessionTrace, Error> {
        let records = self.list_sessions();
        let by_id: HashMap<&str, &SessionRecord> = records.iter().map(|r| (r.header.id.as_str(), r)).collect();
        let target = *by_id
            .get(id)
            .ok_or_else(|| Error::new(ErrorCode::QuerySessionNotFound, format!("session \"{id}\" not found")))?;
        let mut ancestors = Vec::new();
        let mut seen = HashSet::from([id.to_owned()]);
        let mut unresolved = None;
        let mut parent = target.header.parent_session.clone();
        while let Some(parent_id) = parent {
            if seen.contains(&parent_id) {
                return Err(Error::new(
                    ErrorCode::QueryInvalidLineage,
                    format!("session lineage contains a cycle at \"{parent_id}\""),
                ));
            }
            seen.insert(parent_id.clone());
            match by_id.get(parent_id.as_str()) {
                None => {
                    unresolved = Some(parent_id);
                    break;
                }
                Some(record) => {
                    ancestors.push((*record).clone());
                    parent = record.header.parent_session.clone();
                }
            }
        }
        let mut children: BTreeMap<&str, Vec<&SessionRecord>> = BTreeMap::new();
        for record in &records {
            if let Some(parent) = &record.header.parent_session {
                children.entry(parent.as_str()).or_default().push(record);
            }
        }
        for list in children.values_mut() {
            crate::sorting::sort_by(list, |a, b| {
                a.header
                    .created_at
                    .cmp(&b.header.created_at)
                    .then_with(|| locale_compare(&a.header.id, &b.header.id))
            });
        }
        let depth = descendants_depth(&children, id);
        if depth > MAX_LINEAGE_DEPTH {
            return Err(Error::new(
                ErrorCode::QueryInvalidLineage,
                format!(
                    "session lineage below \"{id}\" is {depth} sessions deep, over the {MAX_LINEAGE_DEPTH} this reader nests"
                ),
            ));
        }
        let descendants = descendants_of(&children, id);
        let complete = unresolved.is_none();
        let root = complete.then(|| ancestors.last().cloned().unwrap_or_else(|| target.clone()));
        Ok(SessionTrace {
            target: target.clone(),
            ancestors,
            descendants,
            complete,
            root,
            unresolved_parent_id: unresolved,
        })
    }

    /// DSH's `traceEvent`: positional replacements and cited sources of one event.
    pub fn trace_event(&self, id: &str, seq: u64) -> Result<EventTrace, Error> {
        let source = self.source(id)?;
        let log = source.log;
        let target = log.events.get(seq as usize).ok_or_else(|| event_not_found(id, seq))?;
        let mut replaced_by: HashMap<u64, u64> = HashMap::new();
        let mut replaced_seqs: HashMap<u64, Vec<u64>> = HashMap::new();
        for replacement in &log.surface.replacements {
            replaced_seqs.insert(replacement.seq, replacement.shadowed_seqs.clone());
            for removed in &replacement.shadowed_seqs {
                replaced_by.insert(*removed, replacement.seq);
            }
        }
        let mut chain = Vec::new();
        let mut next = replaced_by.get(&seq).copied();
        while let Some(replacement) = next {
            chain.push(replacement);
            next = replaced_by.get(&replacement).copied();
        }
        let cites = |event: &Event| {
            event
                .source_event_seqs()
                .as_ref()
                .and_then(Json::as_array)
                .is_some_and(|s| s.iter().any(|v| v.as_f64() == Some(seq as f64)))
        };
        let derived = log
            .events
            .iter()
            .filter(|e| e.seq() > seq && cites(e))
            .map(Event::seq)
            .collect();
        Ok(EventTrace {
            session: log.header.clone(),
            target: record_of(source).record(target),
            replaced_by: replaced_by.get(&seq).copied(),
            replacement_chain: chain,
            replaced_event_seqs: replaced_seqs.remove(&seq).unwrap_or_default(),
            source_event_seqs: match target.source_event_seqs() {
                Some(Json::Array(seqs)) => seqs,
                _ => Vec::new(),
            },
            derived_event_seqs: derived,
        })
    }

    /// DSH's `readTitle`: the latest `session/title`, or `None`.
    pub fn read_title(&self, id: &str) -> Result<Option<TitleSnapshot>, Error> {
        Ok(self.title_of(id)?.title)
    }

    /// DSH's `readTitleSnapshots`: one settlement per unique id, in first-occurrence order;
    /// one failing id never hides the others.
    pub fn read_title_snapshots(&self, ids: &[String]) -> Vec<TitleSettlement> {
        let mut seen = HashSet::new();
        let unique: Vec<&String> = ids.iter().filter(|id| seen.insert(id.as_str())).collect();
        unique
            .into_iter()
            .map(|id| TitleSettlement {
                session_id: id.clone(),
                result: self.title_of(id),
            })
            .collect()
    }

    fn title_of(&self, id: &str) -> Result<SessionTitle, Error> {
        let log = self.source(id)?.log;
        let title = log
            .events
            .iter()
            .rev()
            .find(|e| e.kind() == "session/title")
            .map(|event| {
                let data = event.data();
                TitleSnapshot {
                    title: data.get("title").cloned().unwrap_or(Json::Null),
                    message_seqs: data.get("messageSeqs").cloned().unwrap_or(Json::Null),
                    source: copy_title_source(data.get("source")),
                    event_seq: event.seq(),
                    updated_at: event.time(),
                }
            });
        Ok(SessionTitle {
            session: log.header.clone(),
            title,
        })
    }

    /// Every semantic document of a session, in seq order.
    pub fn list_documents(&self, id: &str) -> Result<Vec<Document>, Error> {
        let log = self.source(id)?.log;
        Ok(session_documents(&log.header.raw_id, &log.events, &log.surface))
    }

    /// DSH's `filterEvents`: documents passing every clause, in seq order. A blank text
    /// clause fails only after the session resolved (so a missing session wins).
    pub fn filter_events(&self, id: &str, filters: &[EventFilter]) -> Result<Vec<Document>, Error> {
        filter_documents(self.list_documents(id)?, filters)
    }
}

fn event_not_found(id: &str, seq: u64) -> Error {
    Error::new(
        ErrorCode::QueryEventNotFound,
        format!("session \"{id}\" has no event at seq {seq}"),
    )
}

/// How deep a traced session's descendants nest at most. The nested answer is built, printed
/// and dropped a level per call, and a lineage of tens of thousands of levels (only a crafted
/// archive has one) would overflow a WebAssembly engine's call stack; 3,000 levels were still
/// answered under Node.
pub const MAX_LINEAGE_DEPTH: usize = 1000;

/// How many levels of descendants `id` has, walked without recursion. No cycle can be met
/// below `id`: each session has one parent, so a session below it leads up to it, and a
/// cycle through `id` itself fails its ancestry first.
fn descendants_depth(children: &BTreeMap<&str, Vec<&SessionRecord>>, id: &str) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(id, 0)];
    while let Some((id, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        let list = children.get(id).map(Vec::as_slice).unwrap_or_default();
        stack.extend(list.iter().map(|child| (child.header.id.as_str(), depth + 1)));
    }
    deepest
}

/// The descendants of `id`, oldest first at each level (their depth checked before).
fn descendants_of(children: &BTreeMap<&str, Vec<&SessionRecord>>, id: &str) -> Vec<LineageNode> {
    let list = children.get(id).map(Vec::as_slice).unwrap_or_default();
    list.iter()
        .map(|child| LineageNode {
            session: (*child).clone(),
            descendants: descendants_of(children, &child.header.id),
        })
        .collect()
}

/// DSH copies the title source field by field (`model` spread as an object).
fn copy_title_source(source: Option<&Json>) -> Json {
    let mut out = JsonObject::new();
    match source.and_then(|s| s.get("kind")).and_then(Json::as_str) {
        Some("provider") => {
            out.insert("kind", Json::str("provider"));
            out.insert(
                "provider",
                source.and_then(|s| s.get("provider")).cloned().unwrap_or(Json::Null),
            );
            if let Some(model) = source.and_then(|s| s.get("model")) {
                out.insert("model", spread(model));
            }
        }
        Some(kind @ ("fallback" | "user")) => out.insert("kind", Json::str(kind)),
        _ => return source.cloned().unwrap_or(Json::Null),
    }
    Json::Object(out)
}

/// `{ ...value }` in JavaScript: objects copy, strings spread into indexed code units.
fn spread(value: &Json) -> Json {
    match value {
        Json::Object(o) => Json::Object(o.clone()),
        Json::String(s) => {
            let units: Vec<u16> = s.to_lossy().encode_utf16().collect();
            let mut out = JsonObject::new();
            for (i, unit) in units.iter().enumerate() {
                let text = char::from_u32(u32::from(*unit))
                    .map(String::from)
                    .unwrap_or_else(|| "\u{FFFD}".into());
                out.insert(JsString::from(i.to_string()), Json::str(&text));
            }
            Json::Object(out)
        }
        Json::Array(items) => {
            let mut out = JsonObject::new();
            for (i, item) in items.iter().enumerate() {
                out.insert(JsString::from(i.to_string()), item.clone());
            }
            Json::Object(out)
        }
        _ => Json::Object(JsonObject::new()),
    }
}
