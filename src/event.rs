//! A validated event of the logical log: the unit every later stage (fold, documents, reads,
//! search, references) works on, defined below them all so none has to reach back into `log`.

use crate::json::{Json, JsonObject};

/// A validated event of the logical log.
#[derive(Clone, Debug)]
pub struct Event {
    object: JsonObject,
    seq: u64,
    time: i64,
    kind: Box<str>,
}

impl Event {
    /// An event whose envelope has been validated (by the log reader or a live append).
    pub(crate) fn new(object: JsonObject, seq: u64, time: i64, kind: Box<str>) -> Event {
        Event {
            object,
            seq,
            time,
            kind,
        }
    }

    /// The event's `type`, e.g. `"user/message"`.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Position in the log (`events[i].seq == i`).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Append time, Unix epoch milliseconds.
    pub fn time(&self) -> i64 {
        self.time
    }

    /// The type-specific payload.
    pub fn data(&self) -> &Json {
        self.object.get("data").unwrap_or(&Json::Null)
    }

    /// The raw `surfaceOp` marker, if any.
    pub fn surface_op(&self) -> Option<&Json> {
        self.object.get("surfaceOp")
    }

    /// The raw `sourceEventSeqs`, if any.
    pub fn source_event_seqs(&self) -> Option<&Json> {
        self.object.get("sourceEventSeqs")
    }

    /// Whether the event is marked `"ignorable": true`.
    pub fn ignorable(&self) -> bool {
        matches!(self.object.get("ignorable"), Some(Json::Bool(true)))
    }

    /// The whole event as DSH holds it (key order included).
    pub fn as_json(&self) -> &JsonObject {
        &self.object
    }
}
