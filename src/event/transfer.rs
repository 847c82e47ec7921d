//! Events as bytes, to move a decoded log from one wasm instance to another: one instance
//! (a helper decoding logs in parallel) writes its events' shared text and their envelopes,
//! and the instance that keeps the corpus adopts them: the text after a UTF-8 check, as the
//! events' arena, and the envelopes instead of parsing and validating every line again.
//! Reading checks every length, offset and tag, so bytes that were not written here fail
//! instead of panicking.

use super::{Arena, ConversationMessage, Event, Kind, Role, SurfaceMarks};
use crate::log::KNOWN_EVENT_TYPES;
use std::sync::Arc;

/// Appends little-endian fields to a byte buffer.
#[derive(Default)]
pub(crate) struct Writer(pub(crate) Vec<u8>);

impl Writer {
    pub(crate) fn u8(&mut self, value: u8) {
        self.0.push(value);
    }

    pub(crate) fn u32(&mut self, value: u32) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    pub(crate) fn u64(&mut self, value: u64) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    /// A length (as a `u64`), then the bytes.
    pub(crate) fn bytes(&mut self, bytes: &[u8]) {
        self.u64(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }
}

/// Reads what a [`Writer`] wrote; `None` once the bytes run short or a value is out of range.
pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    pub(crate) fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    pub(crate) fn usize(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok()
    }

    pub(crate) fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = self.usize()?;
        self.take(len)
    }

    pub(crate) fn str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }
}

/// The tag of a `type` that is not one of DSH's own (its text follows).
const OTHER_KIND: u8 = u8::MAX;

/// The text `events` share, when they share one plain arena (as a log's events do before
/// packing): what [`read_events`] is given back with their envelopes.
pub(crate) fn shared_text(events: &[Event]) -> Option<&str> {
    let Some(first) = events.first() else {
        return Some("");
    };
    let Arena::Plain(text) = &*first.arena else {
        return None;
    };
    events
        .iter()
        .all(|e| Arc::ptr_eq(&e.arena, &first.arena))
        .then_some(text)
}

/// Writes the envelopes of `events`, which share the text [`shared_text`] gives.
pub(crate) fn write_events(events: &[Event], out: &mut Writer) {
    out.u64(events.len() as u64);
    for event in events {
        write_event(event, out);
    }
}

fn write_event(event: &Event, out: &mut Writer) {
    out.u64(event.start as u64);
    out.u64(event.end as u64);
    out.u64(event.seq);
    out.u64(event.time as u64);
    match &event.kind {
        Kind::Known(index) => out.u8(*index),
        Kind::Other(kind) => {
            out.u8(OTHER_KIND);
            out.bytes(kind.as_bytes());
        }
    }
    match event.message {
        None => out.u8(0),
        Some(message) => {
            out.u8(1 + u8::from(message.role == Role::Assistant) * 2 + u8::from(message.checkpoint));
            out.u64(message.text_bytes as u64);
        }
    }
    out.u32(event.marks.0);
}

/// Reads events written by [`write_events`], sharing `text` (what [`shared_text`] gave) as
/// their new arena.
pub(crate) fn read_events(input: &mut Reader, text: Box<str>) -> Option<Vec<Event>> {
    let count = input.usize()?;
    // Each event takes at least 38 bytes: a count the input cannot hold is refused up front.
    if count > input.0.len() / 38 {
        return None;
    }
    let arena = Arc::new(Arena::Plain(text));
    // The arena was just made plain: its text is looked at once, not once an event.
    let Arena::Plain(text) = &*arena else {
        return None;
    };
    let mut events = Vec::with_capacity(count);
    for _ in 0..count {
        events.push(read_event(input, text, &arena)?);
    }
    Some(events)
}

fn read_event(input: &mut Reader, text: &str, arena: &Arc<Arena>) -> Option<Event> {
    let (start, end) = (input.usize()?, input.usize()?);
    // The range must be a whole slice of the text, as `Event::text` slices it.
    text.get(start..end)?;
    let seq = input.u64()?;
    let time = input.u64()? as i64;
    let kind = match input.u8()? {
        OTHER_KIND => Kind::Other(input.str()?.into()),
        index if usize::from(index) < KNOWN_EVENT_TYPES.len() => Kind::Known(index),
        _ => return None,
    };
    let message = match input.u8()? {
        0 => None,
        tag @ 1..=4 => Some(ConversationMessage {
            role: if tag >= 3 { Role::Assistant } else { Role::User },
            checkpoint: (tag - 1) % 2 == 1,
            text_bytes: input.usize()?,
        }),
        _ => return None,
    };
    let marks = SurfaceMarks(input.u32()?);
    Some(Event {
        arena: Arc::clone(arena),
        start,
        end,
        seq,
        time,
        kind,
        message,
        marks,
    })
}
