//! The surface fold: one pass over a log that yields the model-facing surface, the replacement
//! history and every event's `current` / `shadowed` / `log-only` label, so they never disagree.

use crate::error::{Error, ErrorCode};
use crate::event::Event;
use crate::json::{Json, is_safe_integer};

/// Where an event stands relative to the model's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum SurfaceLabel {
    /// On the surface after the whole log is folded.
    #[serde(rename = "current")]
    Current,
    /// Was on the surface and was removed by a later replacement.
    #[serde(rename = "shadowed")]
    Shadowed,
    /// Never part of the surface.
    #[serde(rename = "log-only")]
    LogOnly,
}

impl SurfaceLabel {
    /// Every label, in DSH's order.
    pub const ALL: [SurfaceLabel; 3] = [SurfaceLabel::Current, SurfaceLabel::Shadowed, SurfaceLabel::LogOnly];

    /// The label with this wire spelling.
    pub fn parse(name: &str) -> Option<SurfaceLabel> {
        SurfaceLabel::ALL.into_iter().find(|label| label.as_str() == name)
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SurfaceLabel::Current => "current",
            SurfaceLabel::Shadowed => "shadowed",
            SurfaceLabel::LogOnly => "log-only",
        }
    }
}

/// One folded replacement.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replacement {
    /// The replacing event.
    pub seq: u64,
    /// Surface entry where the replaced range starts.
    pub start: u64,
    /// Surface entry where the replaced range ends.
    pub end: u64,
    /// The entries removed, in surface order.
    pub shadowed_seqs: Vec<u64>,
}

/// The fold's result over a whole log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Surface {
    /// Seqs on the surface, in model-history order.
    pub nodes: Vec<u64>,
    /// Replacements in log order.
    pub replacements: Vec<Replacement>,
    labels: Vec<SurfaceLabel>,
}

impl Surface {
    /// Number of replacements folded (DSH's `replaceGeneration`).
    pub fn replace_generation(&self) -> u64 {
        self.replacements.len() as u64
    }

    /// The label of the event at `seq`.
    pub fn label(&self, seq: u64) -> SurfaceLabel {
        self.labels.get(seq as usize).copied().unwrap_or(SurfaceLabel::LogOnly)
    }

    /// Labels of every event, indexed by seq.
    pub fn labels(&self) -> &[SurfaceLabel] {
        &self.labels
    }
}

/// Whether a type takes part in the surface.
pub fn is_surface_eligible(kind: &str) -> bool {
    matches!(kind, "user/message" | "assistant/message" | "tool/result")
}

/// `isEventSeq`: a non-negative safe integer (`-0` included, as in DSH).
fn event_seq(value: &Json) -> Option<u64> {
    value
        .as_f64()
        .filter(|n| is_safe_integer(*n) && *n >= 0.0)
        .map(|n| n as u64)
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::QueryInvalidSurface, message)
}

enum Op {
    Append,
    Replace { start: u64, end: u64 },
}

fn surface_op_of(event: &Event) -> Result<Option<Op>, Error> {
    let kind = event.kind();
    if !is_surface_eligible(kind) {
        if event.surface_op().is_some() {
            return Err(invalid(format!(
                "session event {kind:?} is not surface-eligible and cannot carry surfaceOp"
            )));
        }
        if event.source_event_seqs().is_some() {
            return Err(invalid(format!(
                "session event {kind:?} is not surface-eligible and cannot carry sourceEventSeqs"
            )));
        }
        return Ok(None);
    }
    if event.surface_op_is("\"append\"") {
        return Ok(Some(Op::Append));
    }
    match event.surface_op() {
        None => Err(invalid(format!(
            "session event {kind:?} is surface-eligible and requires a surfaceOp marker"
        ))),
        Some(Json::String(s)) if s == *"append" => Ok(Some(Op::Append)),
        Some(Json::Object(op)) => {
            let start = op.get("start").and_then(event_seq);
            let end = op.get("end").and_then(event_seq);
            match (op.len(), op.get("op").and_then(Json::as_str), start, end) {
                (3, Some("replace"), Some(start), Some(end)) => Ok(Some(Op::Replace { start, end })),
                _ => Err(invalid(format!(
                    "session event {kind:?} carries an invalid replace surfaceOp"
                ))),
            }
        }
        Some(_) => Err(invalid(format!("session event {kind:?} carries an invalid surfaceOp"))),
    }
}

fn check_sources(event: &Event, shadowed: &[u64]) -> Result<(), Error> {
    // Sorted rather than hashed: a list holds one or two seqs, and a hash set's keys and
    // hashing cost more than the list's sort and searches.
    let mut sources = Vec::new();
    if let Some(raw) = event.source_event_seqs() {
        let Some(list) = raw.as_array() else {
            return Err(invalid(format!(
                "sourceEventSeqs on event at seq {} must be an array when present",
                event.seq()
            )));
        };
        if list.is_empty() && event.kind() != "assistant/message" {
            return Err(invalid("sourceEventSeqs must not be empty except on assistant/message"));
        }
        let mut later = None;
        for source in list {
            let Some(seq) = event_seq(source) else {
                return Err(invalid(format!(
                    "session event {:?} sourceEventSeqs must contain non-negative safe integers",
                    event.kind()
                )));
            };
            sources.push(seq);
            if later.is_none() && seq >= event.seq() {
                later = Some(seq);
            }
        }
        sources.sort_unstable();
        if sources.windows(2).any(|pair| pair[0] == pair[1]) {
            return Err(invalid("sourceEventSeqs must not contain duplicates"));
        }
        if let Some(seq) = later {
            return Err(invalid(format!(
                "sourceEventSeqs must reference earlier events: {seq} >= current seq {}",
                event.seq()
            )));
        }
    }
    let missing: Vec<String> = shadowed
        .iter()
        .filter(|s| sources.binary_search(s).is_err())
        .map(u64::to_string)
        .collect();
    if !missing.is_empty() {
        return Err(invalid(format!(
            "surface replace: sourceEventSeqs must include every shadowed surface node; missing {}",
            missing.join(", ")
        )));
    }
    Ok(())
}

/// `data` with `message.content[0].content` set to null, for the content-only rewrite rule.
fn without_result_content(data: &Json) -> Json {
    let mut data = data.clone();
    if let Some(Json::Array(content)) = data
        .as_object_mut()
        .and_then(|d| d.get_mut("message"))
        .and_then(Json::as_object_mut)
        .and_then(|m| m.get_mut("content"))
        && let Some(Json::Object(block)) = content.first_mut()
    {
        block.insert("content", Json::Null);
        content.truncate(1);
    }
    data
}

fn check_tool_result_rewrite(event: &Event, shadowed: &[u64], events: &[Event]) -> Result<(), Error> {
    if event.kind() != "tool/result" {
        return Ok(());
    }
    if shadowed.len() != 1 {
        return Err(invalid(
            "tool/result surface replacement must rewrite exactly one current node",
        ));
    }
    let original = &events[shadowed[0] as usize];
    if original.kind() != "tool/result" {
        return Err(invalid(
            "tool/result surface replacement must target a current tool/result",
        ));
    }
    if without_result_content(&original.data()) != without_result_content(&event.data()) {
        return Err(invalid("tool/result surface replacement may change only content"));
    }
    Ok(())
}

/// Folds a whole log. Fails with `SESSION_QUERY_INVALID_SURFACE` on any rule of the fold;
/// nothing is partially applied.
pub fn fold_surface(events: &[Event]) -> Result<Surface, Error> {
    let mut surface = Surface::default();
    extend_surface(&mut surface, events, 0)?;
    Ok(surface)
}

/// Folds `events[start..]` onto `surface`, the fold of `events[..start]`: what an append to a
/// live session costs is its new events (and a copy of the current surface's seqs), not the
/// whole log. All or nothing: on failure `surface` is unchanged.
pub fn extend_surface(surface: &mut Surface, events: &[Event], start: usize) -> Result<(), Error> {
    let mut nodes = surface.nodes.clone();
    let mut added = Vec::new();
    for (index, event) in events.iter().enumerate().skip(start) {
        if event.seq() != index as u64 {
            return Err(invalid(format!(
                "session event seq {} is not contiguous; expected {index}",
                event.seq()
            )));
        }
        if let Some(replacement) = fold_event(&mut nodes, event, events)? {
            added.push(replacement);
        }
    }
    surface.labels.resize(events.len(), SurfaceLabel::LogOnly);
    for seq in added.iter().flat_map(|r| &r.shadowed_seqs) {
        surface.labels[*seq as usize] = SurfaceLabel::Shadowed;
    }
    // Only new events can join the surface; older current ones keep their label or were
    // shadowed just above.
    for seq in nodes.iter().filter(|seq| **seq >= start as u64) {
        surface.labels[*seq as usize] = SurfaceLabel::Current;
    }
    surface.nodes = nodes;
    surface.replacements.extend(added);
    Ok(())
}

/// Applies one event's surface operation to `nodes`; a replace returns what it replaced.
fn fold_event(nodes: &mut Vec<u64>, event: &Event, events: &[Event]) -> Result<Option<Replacement>, Error> {
    match surface_op_of(event)? {
        None => Ok(None),
        Some(Op::Append) => {
            check_sources(event, &[])?;
            nodes.push(event.seq());
            Ok(None)
        }
        Some(Op::Replace { start, end }) => fold_replace(nodes, event, events, start, end).map(Some),
    }
}

/// Applies a replace of the surface from `start` to `end` (seqs) by `event`. Out of line: a
/// log has few (one a compaction), and the engine then never optimises this.
#[inline(never)]
fn fold_replace(
    nodes: &mut Vec<u64>,
    event: &Event,
    events: &[Event],
    start: u64,
    end: u64,
) -> Result<Replacement, Error> {
    let position = |seq: u64, which: &str| {
        nodes
            .iter()
            .position(|s| *s == seq)
            .ok_or_else(|| invalid(format!("surface replace: {which} seq {seq} not found in surface")))
    };
    let (p, q) = (position(start, "start")?, position(end, "end")?);
    if p > q {
        return Err(invalid(format!(
            "surface replace: start seq {start} (index {p}) is after end seq {end} (index {q})"
        )));
    }
    let shadowed: Vec<u64> = nodes[p..=q].to_vec();
    check_sources(event, &shadowed)?;
    check_tool_result_rewrite(event, &shadowed, events)?;
    nodes.splice(p..=q, [event.seq()]);
    Ok(Replacement {
        seq: event.seq(),
        start,
        end,
        shadowed_seqs: shadowed,
    })
}
