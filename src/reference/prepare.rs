//! `prepare`: turns one message's references into DSH's frozen context
//! message, reading each source's current surface from the corpus, plus the design's
//! additions: budget resolution, spill locators, cancellation and the append order.
//!
//! The order is DSH's exactly: options, then normalization (INVALID_REFERENCE,
//! SELF_REFERENCE, TOO_MANY), an early return for no references, then CANCELLED, the reads
//! (CANCELLED wins over READ_FAILED), CANCELLED again, then rendering (BUDGET_EXCEEDED). Any
//! failure returns an error and nothing else: no partial context, no spilled snapshot.

use super::cancel::{CancellationToken, cancelled, check};
use super::candidates::ReferenceAgent;
use super::input::{ReferenceConfig, SessionReferenceInput, normalize_reference_values, normalize_references};
use super::mention::SessionReference;
use super::render::{RenderedReferences, render_retained};
use super::snapshot::{SourceSurface, retain_stored};
use super::{DEFAULT_MAX_REFERENCE_BYTES, MAX_REFERENCES};
use crate::corpus::Corpus;
use crate::error::{Error, ErrorCode};
use crate::event::Event;
use crate::json::{JsString, Json, JsonObject, MAX_SAFE_INTEGER};

/// The order of the two messages `prepare` returns for the target log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AppendOrder {
    /// The context message (with its provenance) first, then the readable message: the order
    /// DSH's design describes.
    #[default]
    ContextFirst,
    /// The readable message first, then its context: what DSH ≥ 0.1.0-rc.8 writes.
    ReadableFirst,
}

impl AppendOrder {
    /// `"context-first"` or `"readable-first"`.
    pub fn as_str(self) -> &'static str {
        match self {
            AppendOrder::ContextFirst => "context-first",
            AppendOrder::ReadableFirst => "readable-first",
        }
    }

    /// The order named by `name`, if any.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "context-first" => Some(AppendOrder::ContextFirst),
            "readable-first" => Some(AppendOrder::ReadableFirst),
            _ => None,
        }
    }
}

/// The capacity of the last assembled model route, as a host passes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteCapacity {
    /// The route's context window, in tokens (DSH's `contextWindow`).
    pub context_window: u64,
}

impl RouteCapacity {
    /// The per-source budget a route allows: `contextWindow / 2` bytes (at least 1). At about
    /// 4 bytes a token, three full sources then take at most 3/8 of the window, and a
    /// 131 072-token route gets DSH's default of 65 536.
    pub fn max_reference_bytes(self) -> u64 {
        (self.context_window / 2).max(1)
    }
}

/// Where the per-source budget came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetOrigin {
    /// The call's `maxReferenceBytes`.
    Call,
    /// The model route's capacity.
    Route,
    /// The agent's options.
    Agent,
    /// Nothing was given: DSH's default, 65 536.
    Default,
}

impl BudgetOrigin {
    /// `"call"`, `"route"`, `"agent"` or `"default"`.
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetOrigin::Call => "call",
            BudgetOrigin::Route => "route",
            BudgetOrigin::Agent => "agent",
            BudgetOrigin::Default => "default",
        }
    }
}

/// The budget sources a host may give, highest priority first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BudgetOptions {
    /// `maxReferenceBytes` given to this call.
    pub call: Option<u64>,
    /// The last assembled model route's capacity.
    pub route: Option<RouteCapacity>,
    /// `maxReferenceBytes` from the agent's options.
    pub agent: Option<u64>,
}

/// The per-source budget `prepare` used and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolvedBudget {
    /// Bytes of one snapshot object's tag-safe JSON.
    pub max_reference_bytes: u64,
    /// Which option supplied it.
    pub origin: BudgetOrigin,
}

impl BudgetOptions {
    /// The first given of call → route → agent → 65 536. Every given value must be a positive
    /// safe integer, else `SESSION_REFERENCE_INVALID_CONFIG`.
    pub fn resolve(&self) -> Result<ResolvedBudget, Error> {
        positive("maxReferenceBytes", self.call)?;
        positive("route.contextWindow", self.route.map(|r| r.context_window))?;
        positive("agent maxReferenceBytes", self.agent)?;
        let (max_reference_bytes, origin) = if let Some(bytes) = self.call {
            (bytes, BudgetOrigin::Call)
        } else if let Some(route) = self.route {
            (route.max_reference_bytes(), BudgetOrigin::Route)
        } else if let Some(bytes) = self.agent {
            (bytes, BudgetOrigin::Agent)
        } else {
            (DEFAULT_MAX_REFERENCE_BYTES, BudgetOrigin::Default)
        };
        Ok(ResolvedBudget {
            max_reference_bytes,
            origin,
        })
    }
}

fn positive(name: &str, value: Option<u64>) -> Result<(), Error> {
    match value {
        Some(n) if n == 0 || n as f64 > MAX_SAFE_INTEGER => Err(Error::new(
            ErrorCode::ReferenceInvalidConfig,
            format!("session-reference: {name} must be a positive safe integer"),
        )),
        _ => Ok(()),
    }
}

/// One truncated source handed to a [`SpillStore`].
#[derive(Clone, Copy, Debug)]
pub struct SpillRequest<'a> {
    /// The source session's id.
    pub session_id: &'a JsString,
    /// The normalized label.
    pub label: &'a JsString,
    /// The reference's position among the normalized references.
    pub input_index: usize,
    /// Seq of the last raw event at capture.
    pub captured_through_seq: Option<u64>,
    /// The complete, untruncated snapshot object `{sessionId, label, cwd, capturedThroughSeq,
    /// conversation}`.
    pub snapshot: &'a Json,
}

/// Host storage for the complete snapshots of truncated sources.
pub trait SpillStore {
    /// Stores one snapshot and returns a locator the host can resolve later, or why it could
    /// not store it (reported as `{spill: {unavailable: reason}}`; the call still succeeds).
    fn spill(&self, request: &SpillRequest<'_>) -> Result<String, String>;
}

/// What happened to a truncated source's complete snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpillOutcome {
    /// The store kept it under this locator.
    Stored {
        /// The store's locator.
        locator: String,
    },
    /// No store was configured, or the store failed.
    Unavailable {
        /// Why.
        reason: String,
    },
}

/// The reason reported when `prepare` is given no spill store.
pub const NO_SPILL_STORE: &str = "no spill store configured";

impl SpillOutcome {
    /// `{locator}` or `{unavailable: reason}`.
    pub fn to_json(&self) -> Json {
        let mut object = JsonObject::new();
        match self {
            SpillOutcome::Stored { locator } => object.insert("locator", Json::str(locator)),
            SpillOutcome::Unavailable { reason } => object.insert("unavailable", Json::str(reason)),
        }
        Json::Object(object)
    }
}

/// Per-reference facts for the caller (not part of the prompt or the source record).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceReport {
    /// The source session's id.
    pub session_id: JsString,
    /// The normalized label.
    pub label: JsString,
    /// Whether retention dropped or shortened anything (the source record's `truncated`).
    pub truncated: bool,
    /// For a truncated source, where its complete snapshot went; `None` otherwise.
    pub spill: Option<SpillOutcome>,
}

impl ReferenceReport {
    /// `{sessionId, label, truncated, spill?}`.
    pub fn to_json(&self) -> Json {
        let mut object = JsonObject::new();
        object.insert("sessionId", Json::String(self.session_id.clone()));
        object.insert("label", Json::String(self.label.clone()));
        object.insert("truncated", Json::Bool(self.truncated));
        if let Some(spill) = &self.spill {
            object.insert("spill", spill.to_json());
        }
        Json::Object(object)
    }
}

/// Options of one `prepare` call. The default is DSH's default configuration.
#[derive(Clone, Copy, Default)]
pub struct PrepareOptions<'a> {
    /// Distinct sources allowed (1 to 3; default 3).
    pub max_references: Option<u64>,
    /// Budget sources (default 65 536 bytes per source).
    pub budget: BudgetOptions,
    /// Order of the returned messages (default context first).
    pub order: AppendOrder,
    /// Where complete snapshots of truncated sources go.
    pub spill_store: Option<&'a dyn SpillStore>,
    /// Checked between steps; once cancelled the call fails with `SESSION_REFERENCE_CANCELLED`.
    pub cancel: Option<&'a CancellationToken>,
    /// Id of the readable message (the citing message keeps its id); fresh when `None`.
    pub message_id: Option<&'a JsString>,
    /// Id of the context message; a fresh UUID v4 (as DSH makes) when `None`.
    pub context_message_id: Option<&'a JsString>,
}

/// What `prepare` returns.
#[derive(Clone, Debug)]
pub struct PreparedReferences {
    /// A deep copy of the content passed in (DSH's `content`).
    pub content: Json,
    /// The rendered prompt, source record and fitted sources; `None` without references.
    pub rendered: Option<RenderedReferences>,
    /// The context user message (DSH's `additionalContext`), keys `source, content, role, id`.
    pub additional_context: Option<Json>,
    /// The readable user message `{source: {kind: "user"}, content, role, id}`.
    pub readable_message: Json,
    /// The messages to append to the target log, in order (the readable message alone when
    /// there are no references).
    pub messages: Vec<Json>,
    /// The per-source budget used.
    pub budget: ResolvedBudget,
    /// One report per normalized reference, in order.
    pub references: Vec<ReferenceReport>,
}

impl PreparedReferences {
    /// The context message's text (the exact prompt bytes), if there is a context.
    pub fn context_text(&self) -> Option<&str> {
        self.rendered.as_ref().map(|r| r.prompt.as_str())
    }

    /// `{content, additionalContext?, messages, budget: {maxReferenceBytes, origin},
    /// references}`: DSH's result plus the design's fields.
    pub fn to_json(&self) -> Json {
        let mut object = JsonObject::new();
        object.insert("content", self.content.clone());
        if let Some(context) = &self.additional_context {
            object.insert("additionalContext", context.clone());
        }
        object.insert("messages", Json::Array(self.messages.clone()));
        let mut budget = JsonObject::new();
        budget.insert(
            "maxReferenceBytes",
            Json::Number(self.budget.max_reference_bytes as f64),
        );
        budget.insert("origin", Json::str(self.budget.origin.as_str()));
        object.insert("budget", Json::Object(budget));
        object.insert(
            "references",
            Json::Array(self.references.iter().map(ReferenceReport::to_json).collect()),
        );
        Json::Object(object)
    }
}

/// Prepares typed references (see the module docs for the order of checks).
pub fn prepare(
    corpus: &Corpus,
    agent: &ReferenceAgent,
    content: &Json,
    references: &[SessionReferenceInput],
    options: &PrepareOptions<'_>,
) -> Result<PreparedReferences, Error> {
    prepare_with(corpus, content, options, |max| {
        normalize_references(&agent.id, references, max)
    })
}

/// [`prepare`] over references as JSON values (a binding's input), with DSH's shape checks:
/// a non-object, a non-string `sessionId` or a present non-string `label` fails with
/// `SESSION_REFERENCE_INVALID_REFERENCE` at its position in the list.
pub fn prepare_values(
    corpus: &Corpus,
    agent: &ReferenceAgent,
    content: &Json,
    references: &[Json],
    options: &PrepareOptions<'_>,
) -> Result<PreparedReferences, Error> {
    prepare_with(corpus, content, options, |max| {
        normalize_reference_values(&agent.id, references, max)
    })
}

fn prepare_with(
    corpus: &Corpus,
    content: &Json,
    options: &PrepareOptions<'_>,
    normalize: impl FnOnce(u64) -> Result<Vec<SessionReference>, Error>,
) -> Result<PreparedReferences, Error> {
    // DSH validates its configuration when the service is built, before any call.
    let config = ReferenceConfig {
        max_references: options.max_references.unwrap_or(MAX_REFERENCES),
        max_reference_bytes: options.budget.call.unwrap_or(DEFAULT_MAX_REFERENCE_BYTES),
        ..ReferenceConfig::default()
    }
    .validate()?;
    let budget = options.budget.resolve()?;
    let content = content.clone();
    let normalized = normalize(config.max_references)?;
    let readable_id = options.message_id.cloned().unwrap_or_else(fresh_message_id);
    let readable_message = user_message(kind_object("user"), content.clone(), readable_id);
    if normalized.is_empty() {
        // DSH returns here without looking at the signal.
        return Ok(PreparedReferences {
            content,
            rendered: None,
            additional_context: None,
            messages: vec![readable_message.clone()],
            readable_message,
            budget,
            references: Vec::new(),
        });
    }

    let sources = read_sources(corpus, &normalized, options.cancel)?;
    let retained = sources
        .iter()
        .zip(&normalized)
        .map(|(source, reference)| source.retain(&reference.label, budget.max_reference_bytes))
        .collect::<Result<Vec<_>, Error>>()?;
    let rendered = render_retained(retained);
    // Nothing is published once a cancellation has been seen, not even a finished render.
    check(options.cancel)?;

    let references = reference_reports(&rendered, &sources, options.spill_store);
    let context_id = options.context_message_id.cloned().unwrap_or_else(fresh_message_id);
    let context = context_message(&rendered, context_id);
    let messages = match options.order {
        AppendOrder::ContextFirst => vec![context.clone(), readable_message.clone()],
        AppendOrder::ReadableFirst => vec![readable_message.clone(), context.clone()],
    };
    Ok(PreparedReferences {
        content,
        rendered: Some(rendered),
        additional_context: Some(context),
        readable_message,
        messages,
        budget,
        references,
    })
}

/// One source as `prepare` reads it: DSH's `readSurface` result (`Corpus::read_surface`), of
/// its current surface events only the messages, borrowed from the corpus's log (retention
/// parses and builds only the texts it keeps, so a long source costs little more than its
/// snapshot).
struct ReadSource<'a> {
    /// Header fields and capture boundary (its `events` slice is empty: see `events`).
    surface: SourceSurface<'a>,
    events: Vec<&'a Event>,
}

impl ReadSource<'_> {
    fn retain(&self, label: &JsString, max_bytes: u64) -> Result<super::snapshot::RetainedSource, Error> {
        retain_stored(&self.surface, self.events.iter().copied(), label, max_bytes)
    }
}

/// What `Corpus::read_surface(id)` reads, with the same errors, without parsing an event.
fn read_source<'a>(corpus: &'a Corpus, id: &str) -> Result<ReadSource<'a>, Error> {
    let log = corpus.source(id)?.log;
    Ok(ReadSource {
        surface: SourceSurface {
            session_id: &log.header.raw_id,
            cwd: log.header.cwd.as_deref(),
            captured_through_seq: log.events.last().map(|event| event.seq()),
            events: &[],
        },
        events: log
            .surface
            .nodes
            .iter()
            .filter_map(|seq| log.events.get(*seq as usize))
            // Only the conversation's messages, as the facts kept with each event say.
            .filter(|event| event.conversation_message().is_some())
            .collect(),
    })
}
/// Each reference's session, read as one frozen source; checks for cancellation before each
/// read and after the last (a read that fails once cancelled reports the cancellation).
fn read_sources<'c>(
    corpus: &'c Corpus,
    references: &[SessionReference],
    cancel: Option<&CancellationToken>,
) -> Result<Vec<ReadSource<'c>>, Error> {
    check(cancel)?;
    let mut sources = Vec::with_capacity(references.len());
    for reference in references {
        check(cancel)?;
        match read_source(corpus, &reference.session_id.to_lossy()) {
            Ok(source) => sources.push(source),
            Err(_) if cancel.is_some_and(CancellationToken::is_cancelled) => return Err(cancelled()),
            Err(error) => {
                return Err(Error::new(
                    ErrorCode::ReferenceReadFailed,
                    format!("failed to read referenced session: {}", error.message),
                ));
            }
        }
    }
    check(cancel)?;
    Ok(sources)
}

/// What each rendered source reports: whether it was truncated, and then where its full
/// text was spilled (or why it was not).
fn reference_reports(
    rendered: &RenderedReferences,
    sources: &[ReadSource<'_>],
    spill_store: Option<&dyn SpillStore>,
) -> Vec<ReferenceReport> {
    let reports = rendered.sources.iter().zip(sources).enumerate();
    reports
        .map(|(index, (retained, source))| {
            let truncated = retained.stats.truncated;
            let spill = truncated.then(|| spill(spill_store, source, &retained.label, index));
            ReferenceReport {
                session_id: retained.session_id.clone(),
                label: retained.label.clone(),
                truncated,
                spill,
            }
        })
        .collect()
}

/// Hands the complete snapshot of one truncated source to the store.
fn spill(store: Option<&dyn SpillStore>, source: &ReadSource<'_>, label: &JsString, index: usize) -> SpillOutcome {
    let Some(store) = store else {
        return SpillOutcome::Unavailable {
            reason: NO_SPILL_STORE.to_owned(),
        };
    };
    // With an unbounded budget retention keeps everything, so this is the untruncated object.
    let complete = match source.retain(label, u64::MAX) {
        Ok(complete) => complete,
        Err(error) => return SpillOutcome::Unavailable { reason: error.message },
    };
    let surface = &source.surface;
    let request = SpillRequest {
        session_id: surface.session_id,
        label,
        input_index: index,
        captured_through_seq: surface.captured_through_seq,
        snapshot: &complete.snapshot,
    };
    match store.spill(&request) {
        Ok(locator) => SpillOutcome::Stored { locator },
        Err(reason) => SpillOutcome::Unavailable { reason },
    }
}

/// `{source, content, role: "user", id}`: DSH's user-message key order.
fn user_message(source: Json, content: Json, id: JsString) -> Json {
    let mut message = JsonObject::new();
    message.insert("source", source);
    message.insert("content", content);
    message.insert("role", Json::str("user"));
    message.insert("id", Json::String(id));
    Json::Object(message)
}

/// `{"kind": kind}`.
fn kind_object(kind: &str) -> Json {
    let mut object = JsonObject::new();
    object.insert("kind", Json::str(kind));
    Json::Object(object)
}

/// The context message with an id that may be any JavaScript string.
fn context_message(rendered: &RenderedReferences, id: JsString) -> Json {
    let mut message = rendered.context_message("");
    if let Some(object) = message.as_object_mut() {
        object.insert("id", Json::String(id));
    }
    message
}

/// A fresh random UUID v4, as DSH's `crypto.randomUUID()` makes for message ids.
pub fn fresh_message_id() -> JsString {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        fallback_random(&mut bytes);
    }
    bytes[6] = (bytes[6] & 0x0F) | 0x40;
    bytes[8] = (bytes[8] & 0x3F) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    JsString::from(format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}

/// Distinct bytes per call when the platform has no random source: a process counter mixed
/// by std's per-process hash keys.
fn fallback_random(bytes: &mut [u8; 16]) {
    use std::hash::BuildHasher;
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let state = std::collections::hash_map::RandomState::new();
    bytes[..8].copy_from_slice(&state.hash_one(n).to_le_bytes());
    bytes[8..].copy_from_slice(&state.hash_one(!n).to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::{Input, LoadOptions};
    use std::cell::RefCell;

    fn log(id: &str, lines: &[String]) -> Input {
        let mut text =
            format!(r#"{{"type":"session","version":0,"id":"{id}","createdAt":1,"cwd":"/w","delegationDepth":0}}"#);
        text.push('\n');
        for line in lines {
            text.push_str(line);
            text.push('\n');
        }
        Input::File {
            name: format!("{id}.jsonl"),
            bytes: text.into_bytes(),
        }
    }

    fn user(seq: u64, text: &str) -> String {
        format!(
            r#"{{"type":"user/message","seq":{seq},"time":{seq},"data":{{"id":"u{seq}","role":"user","content":[{{"type":"text","text":{}}}],"source":{{"kind":"user"}}}},"surfaceOp":"append"}}"#,
            Json::str(text)
        )
    }

    /// `long` has three 300-byte user messages; `short` one short message; `t` is the target.
    fn corpus() -> Corpus {
        let long: Vec<String> = (0..3).map(|i| user(i, &format!("{i}").repeat(300))).collect();
        let mut corpus = Corpus::new();
        let report = corpus
            .load(
                vec![
                    log("long", &long),
                    log("short", &[user(0, "hello")]),
                    log("t", &[user(0, "x")]),
                ],
                &LoadOptions::default(),
            )
            .expect("loads");
        assert!(report.failures.is_empty(), "{:?}", report.failures);
        corpus
    }

    fn refs(ids: &[&str]) -> Vec<SessionReferenceInput> {
        ids.iter()
            .map(|id| SessionReferenceInput {
                session_id: JsString::from(*id),
                label: None,
            })
            .collect()
    }

    fn content() -> Json {
        Json::Array(vec![Json::str("readable")])
    }

    fn run(ids: &[&str], options: &PrepareOptions<'_>) -> Result<PreparedReferences, Error> {
        let agent = ReferenceAgent::new("t", None);
        prepare(&corpus(), &agent, &content(), &refs(ids), options)
    }

    fn code(ids: &[&str], options: &PrepareOptions<'_>) -> ErrorCode {
        run(ids, options).expect_err("fails").code
    }

    fn cancelled_token() -> CancellationToken {
        let token = CancellationToken::new();
        token.cancel();
        token
    }

    #[test]
    fn budget_resolution_order_and_origin() {
        let resolve = |call, route: Option<u64>, agent| {
            BudgetOptions {
                call,
                route: route.map(|context_window| RouteCapacity { context_window }),
                agent,
            }
            .resolve()
        };
        let budget = |b: Result<ResolvedBudget, Error>| {
            let b = b.expect("valid");
            (b.max_reference_bytes, b.origin)
        };
        assert_eq!(budget(resolve(None, None, None)), (65536, BudgetOrigin::Default));
        assert_eq!(
            budget(resolve(Some(10), Some(1000), Some(20))),
            (10, BudgetOrigin::Call)
        );
        assert_eq!(budget(resolve(None, Some(1000), Some(20))), (500, BudgetOrigin::Route));
        assert_eq!(budget(resolve(None, Some(131_072), None)), (65536, BudgetOrigin::Route));
        assert_eq!(budget(resolve(None, Some(1), None)), (1, BudgetOrigin::Route));
        assert_eq!(budget(resolve(None, None, Some(20))), (20, BudgetOrigin::Agent));
        for bad in [
            resolve(Some(0), None, None),
            resolve(None, Some(0), None),
            resolve(Some(5), None, Some(0)),
            resolve(None, None, Some(1 << 53)),
        ] {
            assert_eq!(bad.expect_err("invalid").code, ErrorCode::ReferenceInvalidConfig);
        }
        // The resolved budget is the one retention uses, and it is reported.
        let options = PrepareOptions {
            budget: BudgetOptions {
                route: Some(RouteCapacity { context_window: 1000 }),
                ..Default::default()
            },
            ..Default::default()
        };
        let prepared = run(&["long"], &options).expect("fits in 500 bytes");
        assert_eq!(prepared.budget.origin, BudgetOrigin::Route);
        assert!(prepared.references[0].truncated);
        let snapshot = &prepared.rendered.as_ref().expect("rendered").sources[0].snapshot;
        assert!(crate::reference::tag_safe_json(snapshot).len() <= 500);
        assert_eq!(
            prepared.to_json().get("budget").map(Json::to_js_string).as_deref(),
            Some(r#"{"maxReferenceBytes":500,"origin":"route"}"#)
        );
    }

    #[test]
    fn error_precedence_is_dshs() {
        let none = PrepareOptions::default();
        let token = cancelled_token();
        let cancelled = PrepareOptions {
            cancel: Some(&token),
            ..Default::default()
        };
        let tiny = PrepareOptions {
            budget: BudgetOptions {
                call: Some(1),
                ..Default::default()
            },
            ..Default::default()
        };
        let tiny_cancelled = PrepareOptions {
            cancel: Some(&token),
            ..tiny
        };
        let bad_config = PrepareOptions {
            max_references: Some(4),
            cancel: Some(&token),
            ..Default::default()
        };
        // Configuration first, then normalization in list order, then TOO_MANY.
        assert_eq!(code(&["t"], &bad_config), ErrorCode::ReferenceInvalidConfig);
        assert_eq!(
            code(&["a", "b", "c", "d", "t"], &none),
            ErrorCode::ReferenceSelfReference
        );
        assert_eq!(code(&["a", "b", "c", "d"], &cancelled), ErrorCode::ReferenceTooMany);
        assert_eq!(code(&["t"], &cancelled), ErrorCode::ReferenceSelfReference);
        // An empty list returns at once, even when cancelled.
        let prepared = run(&[], &cancelled).expect("nothing to read");
        assert!(prepared.additional_context.is_none() && prepared.references.is_empty());
        assert_eq!(prepared.messages, vec![prepared.readable_message.clone()]);
        // Then cancellation, the reads, cancellation again, and the budget last.
        assert_eq!(code(&["short"], &cancelled), ErrorCode::ReferenceCancelled);
        assert_eq!(code(&["nope"], &none), ErrorCode::ReferenceReadFailed);
        assert_eq!(code(&["nope"], &cancelled), ErrorCode::ReferenceCancelled);
        assert_eq!(code(&["long", "nope"], &tiny), ErrorCode::ReferenceReadFailed);
        assert_eq!(code(&["short"], &tiny), ErrorCode::ReferenceBudgetExceeded);
        assert_eq!(code(&["short"], &tiny_cancelled), ErrorCode::ReferenceCancelled);
        // A duplicate does not count toward the limit; the first label wins.
        let options = PrepareOptions {
            max_references: Some(1),
            ..Default::default()
        };
        let mut inputs = refs(&["short", "short"]);
        inputs[1].label = Some(JsString::from("second"));
        let agent = ReferenceAgent::new("t", None);
        let prepared = prepare(&corpus(), &agent, &content(), &inputs, &options).expect("one source");
        assert_eq!(prepared.references[0].label, JsString::from("short"));
    }

    #[test]
    fn json_references_are_shape_checked_in_order() {
        let agent = ReferenceAgent::new("t", None);
        let check = |text: &str| {
            let refs = Json::parse(text, crate::json::ParseLimits::default()).expect("JSON");
            prepare_values(
                &corpus(),
                &agent,
                &content(),
                refs.as_array().expect("array"),
                &PrepareOptions::default(),
            )
            .map(|p| p.references.len())
            .map_err(|e| e.code)
        };
        assert_eq!(check(r#"[{"sessionId":"short","label":"S"}]"#), Ok(1));
        assert_eq!(
            check(r#"[null,{"sessionId":"t"}]"#),
            Err(ErrorCode::ReferenceInvalidReference)
        );
        assert_eq!(
            check(r#"[{"sessionId":"t"},null]"#),
            Err(ErrorCode::ReferenceSelfReference)
        );
        assert_eq!(
            check(r#"[{"sessionId":"short","label":null}]"#),
            Err(ErrorCode::ReferenceInvalidReference)
        );
    }

    /// Records every request; fails for the session named `fail_for`.
    struct Recorder {
        seen: RefCell<Vec<(String, usize, Json)>>,
        fail_for: &'static str,
    }

    impl SpillStore for Recorder {
        fn spill(&self, request: &SpillRequest<'_>) -> Result<String, String> {
            self.seen.borrow_mut().push((
                request.session_id.to_string(),
                request.input_index,
                request.snapshot.clone(),
            ));
            if request.session_id == self.fail_for {
                Err("disk full".into())
            } else {
                Ok(format!("spill://{}", request.session_id))
            }
        }
    }

    #[test]
    fn truncated_sources_spill_their_complete_snapshot() {
        let store = Recorder {
            seen: RefCell::new(Vec::new()),
            fail_for: "",
        };
        let small = BudgetOptions {
            call: Some(400),
            ..Default::default()
        };
        let options = PrepareOptions {
            budget: small,
            spill_store: Some(&store),
            ..Default::default()
        };
        let prepared = run(&["long", "short"], &options).expect("fits");
        assert_eq!(
            prepared.references[0].spill,
            Some(SpillOutcome::Stored {
                locator: "spill://long".into()
            })
        );
        assert_eq!(prepared.references[1].spill, None);
        assert!(!prepared.references[1].truncated);
        let seen = store.seen.borrow();
        assert_eq!(seen.len(), 1);
        let (id, index, snapshot) = &seen[0];
        assert_eq!((id.as_str(), *index), ("long", 0));
        let conversation = snapshot
            .get("conversation")
            .and_then(Json::as_array)
            .expect("conversation");
        assert_eq!(conversation.len(), 3);
        assert!(!snapshot.to_js_string().contains("omitted"));
        // The prompt and source record are DSH's, whatever the store did.
        let plain = run(
            &["long", "short"],
            &PrepareOptions {
                budget: small,
                ..Default::default()
            },
        )
        .expect("fits");
        assert_eq!(prepared.context_text(), plain.context_text());
        let record = |p: &PreparedReferences| p.additional_context.as_ref().and_then(|c| c.get("source")).cloned();
        assert_eq!(record(&prepared), record(&plain));
        assert_eq!(
            plain.references[0].spill,
            Some(SpillOutcome::Unavailable {
                reason: NO_SPILL_STORE.into()
            })
        );
        assert_eq!(
            plain.references[0].to_json().to_js_string(),
            r#"{"sessionId":"long","label":"long","truncated":true,"spill":{"unavailable":"no spill store configured"}}"#
        );
        let failing = Recorder {
            seen: RefCell::new(Vec::new()),
            fail_for: "long",
        };
        let prepared = run(
            &["long"],
            &PrepareOptions {
                budget: small,
                spill_store: Some(&failing),
                ..Default::default()
            },
        )
        .expect("a failing store does not fail the call");
        assert_eq!(
            prepared.references[0].spill,
            Some(SpillOutcome::Unavailable {
                reason: "disk full".into()
            })
        );
    }

    #[test]
    fn nothing_is_spilled_once_cancelled() {
        let store = Recorder {
            seen: RefCell::new(Vec::new()),
            fail_for: "",
        };
        let token = cancelled_token();
        let options = PrepareOptions {
            budget: BudgetOptions {
                call: Some(400),
                ..Default::default()
            },
            spill_store: Some(&store),
            cancel: Some(&token),
            ..Default::default()
        };
        assert_eq!(code(&["long"], &options), ErrorCode::ReferenceCancelled);
        assert!(store.seen.borrow().is_empty());
    }

    #[test]
    fn messages_come_in_the_requested_order() {
        let id = JsString::from("m-1");
        let context_id = JsString::from("c-1");
        let options = PrepareOptions {
            message_id: Some(&id),
            context_message_id: Some(&context_id),
            ..Default::default()
        };
        let prepared = run(&["short"], &options).expect("prepares");
        let context = prepared.additional_context.clone().expect("context");
        assert_eq!(
            prepared.messages,
            vec![context.clone(), prepared.readable_message.clone()]
        );
        assert_eq!(
            prepared.readable_message.to_js_string(),
            r#"{"source":{"kind":"user"},"content":["readable"],"role":"user","id":"m-1"}"#
        );
        assert_eq!(context.get("id"), Some(&Json::str("c-1")));
        let readable_first = PrepareOptions {
            order: AppendOrder::ReadableFirst,
            ..options
        };
        let prepared = run(&["short"], &readable_first).expect("prepares");
        assert_eq!(prepared.messages[0], prepared.readable_message);
        assert_eq!(prepared.messages[1].get("id"), Some(&Json::str("c-1")));
        // Fresh ids are distinct UUID v4s.
        let prepared = run(&["short"], &PrepareOptions::default()).expect("prepares");
        let fresh = |m: &Json| m.get("id").and_then(Json::as_str).map(str::to_owned).expect("id");
        let (a, b) = (fresh(&prepared.messages[0]), fresh(&prepared.messages[1]));
        assert_ne!(a, b);
        for id in [a, b] {
            assert_eq!(id.len(), 36);
            assert_eq!(&id[14..15], "4");
            assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"));
        }
        assert_eq!(AppendOrder::parse("readable-first"), Some(AppendOrder::ReadableFirst));
        assert_eq!(AppendOrder::parse("other"), None);
    }
}
