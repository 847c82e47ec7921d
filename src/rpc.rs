//! JSON-RPC 2.0 face: one request per line in, one response per line out. Method names and
//! by-position `params` follow DSH's API; errors carry the stable code in `error.data.code`.

#[cfg(not(target_arch = "wasm32"))]
use crate::archive::{Input, LoadOptions};
use crate::corpus::Corpus;
use crate::error::{Error, ErrorCode};
use crate::filters::{parse_event_filters, parse_session_filters};
use crate::json::{Json, ParseLimits};
use crate::reads::READ_WINDOW_MAX;
use serde::Serialize;
use serde_json::value::RawValue;

/// Every method the face answers.
pub const METHODS: [&str; 15] = [
    "load",
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
];

/// JSON-RPC's own error codes; library failures use `SERVER_ERROR` with `data.code`.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const SERVER_ERROR: i64 = -32000;

/// A failure of one call.
enum Failure {
    Protocol(i64, String),
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
        let options = load_options(options)?;
        ok(&self
            .corpus
            .load(paths.into_iter().map(Input::Path).collect(), &options)?)
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
