//! JSON-RPC 2.0 face: one request per line in, one response per line out. Method names and
//! by-position `params` follow DSH's API; errors carry the stable code in `error.data.code`.

#[cfg(not(target_arch = "wasm32"))]
use crate::archive::{Input, LoadOptions};
use crate::corpus::Corpus;
use crate::error::{Error, ErrorCode};
use crate::filters::{parse_event_filters, parse_session_filters};
use crate::json::{JsString, Json, JsonObject, ParseLimits};
use crate::reads::READ_WINDOW_MAX;
use crate::reference;
use crate::search::backend::{AnyProvider, SearchOptions};
use crate::search::engine::SearchEngine;
use crate::search::request::{parse_event_request, parse_session_request};
use serde::Serialize;
use serde_json::value::RawValue;

/// Every method the face answers.
pub const METHODS: [&str; 23] = [
    "load",
    "searchSessions",
    "searchEvents",
    "addLive",
    "appendLive",
    "listSessions",
    "readSession",
    "listEvents",
    "readSurface",
    "readEvent",
    "traceSession",
    "traceEvent",
    "readTitle",
    "readTitleSnapshots",
    "filterSessions",
    "filterEvents",
    "listDocuments",
    "listCandidates",
    "prepare",
    "encodeSessionReferenceUri",
    "decodeSessionReferenceUri",
    "formatSessionReferenceMention",
    "parseSessionReferenceText",
];

/// JSON-RPC's own error codes; library failures use `SERVER_ERROR` with `data.code`.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const SERVER_ERROR: i64 = -32000;

/// A failure of one call.
#[derive(Debug)]
pub enum Failure {
    /// A JSON-RPC protocol error (its numeric code and message): bad request or params.
    Protocol(i64, String),
    /// A library failure with its stable code.
    Library(Error),
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Library(error)
    }
}

type CallResult = Result<Box<RawValue>, Failure>;

fn ok<T: Serialize>(value: &T) -> CallResult {
    serde_json::value::to_raw_value(value).map_err(|e| Failure::Protocol(SERVER_ERROR, e.to_string()))
}

fn invalid_params(message: impl Into<String>) -> Failure {
    Failure::Protocol(INVALID_PARAMS, message.into())
}

/// A corpus served over JSON-RPC.
#[derive(Default)]
pub struct RpcServer {
    corpus: Corpus,
    /// How search is answered; `load` options may change it (then the index is rebuilt).
    search_options: SearchOptions,
    /// Built on the first search, then kept up to date incrementally.
    search: Option<SearchEngine<AnyProvider>>,
}

impl RpcServer {
    /// A server over an empty corpus.
    pub fn new() -> Self {
        RpcServer::default()
    }

    /// The corpus the server reads.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// The corpus, for inputs that are not paths (files and entries handed over by a browser).
    pub fn corpus_mut(&mut self) -> &mut Corpus {
        &mut self.corpus
    }

    /// The search index as bytes (tantivy backend), to reopen later with [`Self::import_index`]
    /// over the same corpus without re-indexing.
    pub fn export_index(&mut self) -> Result<Vec<u8>, Error> {
        if self.search.is_none() {
            self.search = Some(self.search_options.engine()?);
        }
        match self.search.as_mut() {
            Some(engine) => engine.export_snapshot(&self.corpus),
            None => Err(Error::new(crate::error::ErrorCode::QueryIndexFailed, "no search index")),
        }
    }

    /// Reopens an exported index; refused (and nothing changes) unless it was built by this
    /// version, with the current tokenizer, over exactly the loaded corpus.
    pub fn import_index(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let engine = SearchEngine::<AnyProvider>::import_snapshot(bytes, &self.corpus, self.search_options.config)?;
        if engine.tokenizer() != self.search_options.tokenizer {
            return Err(Error::new(
                crate::error::ErrorCode::QueryIndexFailed,
                "the snapshot was built with another tokenizer",
            ));
        }
        self.search_options.backend = crate::search::backend::Backend::Tantivy;
        self.search = Some(engine);
        Ok(())
    }

    /// Calls one method with its by-position `params`; the result as JSON text.
    pub fn call_method(&mut self, method: &str, params: &[Json]) -> Result<String, Failure> {
        self.call(method, params).map(|raw| raw.get().to_owned())
    }

    /// Answers one request line. Notifications (no `id`) get no response.
    pub fn handle_line(&mut self, line: &str) -> Option<String> {
        let request = match Json::parse(line, ParseLimits::default()) {
            Ok(request) => request,
            Err(e) => return Some(respond(&Json::Null, Err(Failure::Protocol(PARSE_ERROR, e.to_string())))),
        };
        let id = request.get("id").cloned();
        let method = request.get("method").and_then(Json::as_str);
        let result = match (request.get("jsonrpc").and_then(Json::as_str), method) {
            (Some("2.0"), Some(method)) => {
                let empty = Json::Array(Vec::new());
                match request.get("params").unwrap_or(&empty) {
                    Json::Array(params) => self.call(method, params),
                    _ => Err(invalid_params("params must be an array (by position)")),
                }
            }
            _ => Err(Failure::Protocol(INVALID_REQUEST, "not a JSON-RPC 2.0 request".into())),
        };
        id.map(|id| respond(&id, result))
    }

    fn call(&mut self, method: &str, params: &[Json]) -> CallResult {
        let arg = |i: usize| params.get(i);
        let id_arg = |i: usize| -> Result<String, Failure> { Ok(js_string_of(arg(i))) };
        let corpus = &self.corpus;
        match method {
            "load" => self.load(arg(0), arg(1)),
            "addLive" => {
                let header = arg(0).ok_or_else(|| invalid_params("parameter 0 must be a session header"))?;
                let events = event_list(arg(1))?;
                ok(&self.corpus.add_live(header, events)?)
            }
            "appendLive" => {
                let id = id_arg(0)?;
                let count = self.corpus.append_live(&id, event_list(arg(1))?)?;
                ok(&serde_json::json!({ "sessionId": id, "eventCount": count }))
            }
            "listSessions" => ok(&corpus.list_sessions()),
            "readSession" => ok(&corpus.read_session(&id_arg(0)?)?),
            "listEvents" => ok(&corpus.list_events(&id_arg(0)?)?),
            "readSurface" => ok(&corpus.read_surface(&id_arg(0)?)?),
            "readEvent" => {
                let request = arg(0).ok_or_else(|| invalid_params("parameter 0 must be a read request"))?;
                let window = |name: &str| match request.get(name) {
                    None => Ok(0),
                    Some(v) => v.as_index().filter(|n| *n <= READ_WINDOW_MAX).ok_or_else(|| {
                        Error::new(
                            ErrorCode::QueryInvalidWindow,
                            format!("{name} must be an integer between 0 and {READ_WINDOW_MAX}"),
                        )
                    }),
                };
                let (before, after) = (window("before")?, window("after")?);
                let id = request_id(request)?;
                let seq = request_seq(corpus, &id, request)?;
                ok(&corpus.read_event(&id, seq, before, after)?)
            }
            "traceSession" => ok(&corpus.trace_session(&id_arg(0)?)?),
            "traceEvent" => {
                let request = arg(0).ok_or_else(|| invalid_params("parameter 0 must be a trace request"))?;
                let id = request_id(request)?;
                let seq = request_seq(corpus, &id, request)?;
                ok(&corpus.trace_event(&id, seq)?)
            }
            "readTitle" => ok(&corpus.read_title(&id_arg(0)?)?),
            "readTitleSnapshots" => {
                let ids = arg(0)
                    .and_then(Json::as_array)
                    .and_then(|ids| {
                        ids.iter()
                            .map(|i| i.as_js_string().map(|s| s.to_lossy().into_owned()))
                            .collect::<Option<Vec<_>>>()
                    })
                    .ok_or_else(|| invalid_params("parameter 0 must be an array of session ids"))?;
                let settled: Vec<serde_json::Value> = corpus
                    .read_title_snapshots(&ids)
                    .into_iter()
                    .map(|s| match s.result {
                        Ok(value) => {
                            serde_json::json!({ "sessionId": s.session_id, "status": "fulfilled", "value": value })
                        }
                        Err(e) => serde_json::json!({
                            "sessionId": s.session_id,
                            "status": "rejected",
                            "reason": { "code": e.code.as_str(), "message": e.message },
                        }),
                    })
                    .collect();
                ok(&settled)
            }
            "filterSessions" => {
                let filters = parse_session_filters(arg(0).unwrap_or(&Json::Array(Vec::new())))?;
                ok(&corpus.filter_sessions(&filters))
            }
            "filterEvents" => {
                let filters = parse_event_filters(arg(1).unwrap_or(&Json::Array(Vec::new())), true)?;
                ok(&corpus.filter_events(&id_arg(0)?, &filters)?)
            }
            "listDocuments" => ok(&corpus.list_documents(&id_arg(0)?)?),
            "searchSessions" | "searchEvents" => self.search(method, arg(0)),
            "listCandidates"
            | "prepare"
            | "encodeSessionReferenceUri"
            | "decodeSessionReferenceUri"
            | "formatSessionReferenceMention"
            | "parseSessionReferenceText" => reference_call(corpus, method, params),
            other => Err(Failure::Protocol(METHOD_NOT_FOUND, format!("unknown method {other:?}"))),
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn load(&mut self, paths: Option<&Json>, options: Option<&Json>) -> CallResult {
        let paths = paths
            .and_then(Json::as_array)
            .and_then(|ps| {
                ps.iter()
                    .map(|p| p.as_str().map(std::path::PathBuf::from))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| invalid_params("parameter 0 must be an array of paths"))?;
        let search = SearchOptions::from_json(options)?;
        if search.backend != self.search_options.backend || search.tokenizer != self.search_options.tokenizer {
            self.search_options = search;
            self.search = None;
        }
        let options = load_options(options)?;
        ok(&self
            .corpus
            .load(paths.into_iter().map(Input::Path).collect(), &options)?)
    }

    /// `searchSessions` / `searchEvents` with `[request]`.
    fn search(&mut self, method: &str, request: Option<&Json>) -> CallResult {
        let request = request.cloned().unwrap_or(Json::Null);
        let config = self.search_options.config;
        if self.search.is_none() {
            self.search = Some(self.search_options.engine()?);
        }
        let engine = self.search.as_mut().ok_or_else(|| invalid_params("no search engine"))?;
        if method == "searchSessions" {
            let request = parse_session_request(&request, &config)?;
            ok(&engine.search_sessions(&self.corpus, &request)?)
        } else {
            let request = parse_event_request(&request, &config)?;
            ok(&engine.search_events(&self.corpus, &request)?)
        }
    }

    #[cfg(target_arch = "wasm32")]
    fn load(&mut self, _paths: Option<&Json>, _options: Option<&Json>) -> CallResult {
        Err(Failure::Protocol(
            METHOD_NOT_FOUND,
            "load by path needs a file system".into(),
        ))
    }
}

#[cfg(not(target_arch = "wasm32"))]
/// `LoadOptions` from `{strict?, maxDecompressedBytes?, maxLineBytes?, maxJsonDepth?,
/// maxArchiveBytes?, maxArchiveEntries?}`.
fn load_options(options: Option<&Json>) -> Result<LoadOptions, Failure> {
    let mut out = LoadOptions::default();
    let Some(options) = options else { return Ok(out) };
    let Some(object) = options.as_object() else {
        return Err(invalid_params("options must be an object"));
    };
    for (key, value) in object.iter() {
        let number = || {
            value
                .as_index()
                .ok_or_else(|| invalid_params(format!("option {key} must be a non-negative integer")))
        };
        match key.as_str().unwrap_or_default() {
            "strict" => out.strict = matches!(value, Json::Bool(true)),
            "maxDecompressedBytes" => out.limits.max_decompressed_bytes = number()?,
            "maxLineBytes" => out.limits.max_line_bytes = number()? as usize,
            "maxJsonDepth" => out.limits.max_json_depth = number()? as usize,
            "maxArchiveBytes" => out.max_archive_bytes = number()?,
            "maxArchiveEntries" => out.max_archive_entries = number()? as usize,
            // Search options are read by `SearchOptions::from_json`.
            "backend" | "tokenizer" | "indexPath" => {}
            other => return Err(invalid_params(format!("unknown option {other:?}"))),
        }
    }
    Ok(out)
}

fn event_list(value: Option<&Json>) -> Result<Vec<Json>, Failure> {
    match value {
        None => Ok(Vec::new()),
        Some(Json::Array(events)) => Ok(events.clone()),
        Some(_) => Err(invalid_params("events must be an array")),
    }
}

fn request_id(request: &Json) -> Result<String, Failure> {
    Ok(js_string_of(request.get("sessionId")))
}

/// DSH does not type-check ids: it looks up `String(value)`, so a non-string id is simply
/// not found (`session "undefined" not found`).
fn js_string_of(value: Option<&Json>) -> String {
    match value {
        None => "undefined".into(),
        Some(Json::String(s)) => s.to_lossy().into_owned(),
        Some(Json::Object(_)) => "[object Object]".into(),
        Some(Json::Array(items)) => items
            .iter()
            .map(|i| js_string_of(Some(i)))
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => other.to_js_string(),
    }
}

/// The requested seq; a seq that names no event fails as DSH does, after the session resolved.
fn request_seq(corpus: &Corpus, id: &str, request: &Json) -> Result<u64, Failure> {
    match request.get("seq").and_then(Json::as_index) {
        Some(seq) => Ok(seq),
        None => {
            corpus.list_events(id)?;
            let shown = request
                .get("seq")
                .map(Json::to_js_string)
                .unwrap_or_else(|| "undefined".into());
            Err(Error::new(
                ErrorCode::QueryEventNotFound,
                format!("session \"{id}\" has no event at seq {shown}"),
            )
            .into())
        }
    }
}

/// The session-reference methods (spec 05): DSH's names and argument order; a DSH `signal`
/// is the option `cancelled: true` (an already-aborted signal).
fn reference_call(corpus: &Corpus, method: &str, params: &[Json]) -> CallResult {
    let string_arg = |i: usize, what: &str| -> Result<&JsString, Failure> {
        params
            .get(i)
            .and_then(Json::as_js_string)
            .ok_or_else(|| invalid_params(format!("parameter {i} must be {what}")))
    };
    let result = match method {
        "listCandidates" => {
            let agent = reference_agent(corpus, params.first())?;
            let query = match params.get(1) {
                None => JsString::from(""),
                Some(_) => string_arg(1, "a query string")?.clone(),
            };
            let limit = reference::candidate_limit(params.get(2))?;
            let options = object_arg(params.get(3), 3, &["cancelled"])?;
            let cancel = cancel_token(options)?;
            let candidates = reference::list_candidates_cancellable(corpus, &agent, &query, limit, cancel.as_ref())?;
            Json::Array(candidates.iter().map(reference::Candidate::to_json).collect())
        }
        "prepare" => {
            let agent = reference_agent(corpus, params.first())?;
            let content = params
                .get(1)
                .ok_or_else(|| invalid_params("parameter 1 must be the message content"))?;
            let references = params
                .get(2)
                .and_then(Json::as_array)
                .ok_or_else(|| invalid_params("parameter 2 must be an array of references"))?;
            let options = object_arg(params.get(3), 3, PREPARE_OPTIONS)?;
            let cancel = cancel_token(options)?;
            let message_id = optional_string(options, "messageId")?;
            let context_message_id = optional_string(options, "contextMessageId")?;
            let mut prepare_options = prepare_options(options)?;
            prepare_options.cancel = cancel.as_ref();
            prepare_options.message_id = message_id;
            prepare_options.context_message_id = context_message_id;
            reference::prepare_values(corpus, &agent, content, references, &prepare_options)?.to_json()
        }
        "encodeSessionReferenceUri" => Json::str(&reference::encode_session_reference_uri(string_arg(
            0,
            "a session id string",
        )?)),
        "decodeSessionReferenceUri" => {
            // A lone surrogate is never part of a canonical URI, so the lossy text fails alike.
            let uri = string_arg(0, "a URI string")?.to_lossy();
            Json::String(reference::decode_session_reference_uri(&uri)?)
        }
        "formatSessionReferenceMention" => {
            let reference = params
                .first()
                .and_then(Json::as_object)
                .ok_or_else(|| invalid_params("parameter 0 must be a reference {sessionId, label?}"))?;
            let session_id = reference
                .get("sessionId")
                .and_then(Json::as_js_string)
                .ok_or_else(|| invalid_params("reference.sessionId must be a string"))?;
            // DSH writes `label ?? sessionId`: `null` falls back like a missing label.
            let label = match reference.get("label") {
                None | Some(Json::Null) => None,
                Some(Json::String(label)) => Some(label),
                Some(_) => return Err(invalid_params("reference.label must be a string")),
            };
            Json::String(reference::format_session_reference_mention(label, session_id))
        }
        "parseSessionReferenceText" => {
            let parsed = reference::parse_session_reference_text(string_arg(0, "a text string")?)?;
            let mut object = JsonObject::new();
            object.insert("text", Json::String(parsed.text));
            let references = parsed
                .references
                .into_iter()
                .map(|r| {
                    let mut reference = JsonObject::new();
                    reference.insert("sessionId", Json::String(r.session_id));
                    reference.insert("label", Json::String(r.label));
                    Json::Object(reference)
                })
                .collect();
            object.insert("references", Json::Array(references));
            Json::Object(object)
        }
        other => return Err(Failure::Protocol(METHOD_NOT_FOUND, format!("unknown method {other:?}"))),
    };
    ok(&result)
}

/// The option keys `prepare` accepts.
const PREPARE_OPTIONS: &[&str] = &[
    "maxReferences",
    "maxReferenceBytes",
    "route",
    "agentOptions",
    "order",
    "cancelled",
    "messageId",
    "contextMessageId",
];

/// `{id, cwd?}`: the requesting session. Without a `cwd` key the session's own header cwd is
/// used when the corpus has it; `cwd: null` means no cwd.
fn reference_agent(corpus: &Corpus, value: Option<&Json>) -> Result<reference::ReferenceAgent, Failure> {
    let agent = value
        .and_then(Json::as_object)
        .ok_or_else(|| invalid_params("parameter 0 must be an agent {id, cwd?}"))?;
    let id = agent
        .get("id")
        .and_then(Json::as_js_string)
        .ok_or_else(|| invalid_params("agent.id must be a string"))?;
    let cwd = match agent.get("cwd") {
        None => return Ok(reference::ReferenceAgent::of_session(corpus, id)),
        Some(Json::Null) => None,
        Some(Json::String(cwd)) => Some(cwd.to_lossy().into_owned()),
        Some(_) => return Err(invalid_params("agent.cwd must be a string")),
    };
    Ok(reference::ReferenceAgent::new(id.clone(), cwd))
}

/// An optional options object whose keys are all in `allowed`.
fn object_arg<'a>(value: Option<&'a Json>, index: usize, allowed: &[&str]) -> Result<Option<&'a JsonObject>, Failure> {
    let Some(value) = value else { return Ok(None) };
    let object = value
        .as_object()
        .ok_or_else(|| invalid_params(format!("parameter {index} must be an options object")))?;
    if let Some((key, _)) = object
        .iter()
        .find(|(k, _)| !allowed.iter().any(|a| k.as_str() == Some(a)))
    {
        return Err(invalid_params(format!("unknown option {key:?}")));
    }
    Ok(Some(object))
}

/// `cancelled: true` stands for an already-aborted signal.
fn cancel_token(options: Option<&JsonObject>) -> Result<Option<reference::CancellationToken>, Failure> {
    match options.and_then(|o| o.get("cancelled")) {
        None | Some(Json::Bool(false)) => Ok(None),
        Some(Json::Bool(true)) => {
            let token = reference::CancellationToken::new();
            token.cancel();
            Ok(Some(token))
        }
        Some(_) => Err(invalid_params("option cancelled must be a boolean")),
    }
}

fn optional_string<'a>(options: Option<&'a JsonObject>, key: &str) -> Result<Option<&'a JsString>, Failure> {
    match options.and_then(|o| o.get(key)) {
        None => Ok(None),
        Some(Json::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid_params(format!("option {key} must be a string"))),
    }
}

/// `prepare`'s options: `maxReferences` and `maxReferenceBytes` are checked as DSH checks its
/// configuration (`null` = default), `route: {contextWindow}` and `agentOptions:
/// {maxReferenceBytes}` must hold positive safe integers (`SESSION_REFERENCE_INVALID_CONFIG`),
/// `order` is `"context-first"` (default) or `"readable-first"`.
fn prepare_options(options: Option<&JsonObject>) -> Result<reference::PrepareOptions<'static>, Failure> {
    let mut out = reference::PrepareOptions::default();
    let Some(options) = options else { return Ok(out) };
    let given = |key: &str| options.get(key).filter(|v| !matches!(v, Json::Null));
    let mut config = JsonObject::new();
    for key in ["maxReferences", "maxReferenceBytes"] {
        if let Some(value) = given(key) {
            config.insert(key, value.clone());
        }
    }
    let config = reference::ReferenceConfig::from_json(Some(&Json::Object(config)))?;
    out.max_references = Some(config.max_references);
    out.budget.call = given("maxReferenceBytes").map(|_| config.max_reference_bytes);
    let positive = |value: Option<&Json>, name: &str| -> Result<Option<u64>, Failure> {
        match value {
            None => Ok(None),
            Some(value) => match value.as_safe_integer() {
                Some(n) if n > 0 => Ok(Some(n as u64)),
                _ => Err(Error::new(
                    ErrorCode::ReferenceInvalidConfig,
                    format!("session-reference: {name} must be a positive safe integer"),
                )
                .into()),
            },
        }
    };
    if let Some(route) = given("route") {
        let route = route
            .as_object()
            .ok_or_else(|| invalid_params("option route must be an object {contextWindow}"))?;
        out.budget.route = positive(route.get("contextWindow"), "route.contextWindow")?
            .map(|context_window| reference::RouteCapacity { context_window });
    }
    if let Some(agent) = given("agentOptions") {
        let agent = agent
            .as_object()
            .ok_or_else(|| invalid_params("option agentOptions must be an object {maxReferenceBytes?}"))?;
        out.budget.agent = positive(agent.get("maxReferenceBytes"), "agent maxReferenceBytes")?;
    }
    if let Some(order) = given("order") {
        out.order = order
            .as_str()
            .and_then(reference::AppendOrder::parse)
            .ok_or_else(|| invalid_params("option order must be \"context-first\" or \"readable-first\""))?;
    }
    Ok(out)
}

fn respond(id: &Json, result: CallResult) -> String {
    let id = id.to_js_string();
    match result {
        Ok(value) => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{}}}", value.get()),
        Err(failure) => {
            let error = match failure {
                Failure::Protocol(code, message) => serde_json::json!({ "code": code, "message": message }),
                Failure::Library(e) => serde_json::json!({
                    "code": SERVER_ERROR,
                    "message": e.message,
                    "data": { "code": e.code.as_str() },
                }),
            };
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{error}}}")
        }
    }
}
