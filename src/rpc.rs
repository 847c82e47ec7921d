//! JSON-RPC 2.0 framing over the typed API: one request (or batch) per line in, one response
//! per line out. Method names and by-position `params` are DSH's; library failures carry their
//! stable code in `error.data.code`. Every line gets an answer, whatever its bytes.

use crate::api::{Archive, Dialect, Method};
use crate::error::{Error, ErrorCode};
use crate::json::{Json, ParseLimits};

/// JSON-RPC's own error codes; library failures use `SERVER_ERROR` with `data.code`.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const SERVER_ERROR: i64 = -32000;

/// The longest request line answered (64 MiB); longer lines are refused before parsing.
pub const MAX_REQUEST_BYTES: usize = 64 << 20;

/// An archive served over JSON-RPC.
#[derive(Default)]
pub struct RpcServer {
    archive: Archive,
}

/// One failed call: a JSON-RPC code, its message and, for library failures, the stable code.
struct Failure {
    code: i64,
    message: String,
    data_code: Option<ErrorCode>,
}

impl Failure {
    fn protocol(code: i64, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
            data_code: None,
        }
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        let code = match error.code {
            ErrorCode::InvalidArgument => INVALID_PARAMS,
            _ => SERVER_ERROR,
        };
        Failure {
            code,
            message: error.message,
            data_code: Some(error.code),
        }
    }
}

impl RpcServer {
    /// A server over an empty archive.
    pub fn new() -> Self {
        RpcServer::default()
    }

    /// A server over `archive`.
    pub fn with_archive(archive: Archive) -> Self {
        RpcServer { archive }
    }

    /// The archive the server answers from.
    pub fn archive(&self) -> &Archive {
        &self.archive
    }

    /// The archive, for loads that do not come over the wire.
    pub fn archive_mut(&mut self) -> &mut Archive {
        &mut self.archive
    }

    /// Answers one request line given as bytes (invalid UTF-8 is a parse error, answered).
    /// `None` when the line held only notifications.
    pub fn handle_bytes(&mut self, line: &[u8]) -> Option<String> {
        match std::str::from_utf8(line) {
            Ok(line) => self.handle_line(line),
            Err(e) => Some(error_response(
                &Json::Null,
                Failure::protocol(PARSE_ERROR, format!("the request is not UTF-8: {e}")),
            )),
        }
    }

    /// Answers one request line: a request or a batch. Notifications (no `id`) get no response.
    pub fn handle_line(&mut self, line: &str) -> Option<String> {
        if line.len() > MAX_REQUEST_BYTES {
            let message = format!("the request is longer than {MAX_REQUEST_BYTES} bytes");
            return Some(error_response(&Json::Null, Failure::protocol(INVALID_REQUEST, message)));
        }
        match Json::parse(line, ParseLimits::default()) {
            Err(e) => Some(error_response(
                &Json::Null,
                Failure::protocol(PARSE_ERROR, e.to_string()),
            )),
            Ok(Json::Array(batch)) if batch.is_empty() => Some(error_response(
                &Json::Null,
                Failure::protocol(INVALID_REQUEST, "an empty batch"),
            )),
            Ok(Json::Array(batch)) => {
                let responses: Vec<String> = batch.iter().filter_map(|request| self.handle(request)).collect();
                (!responses.is_empty()).then(|| format!("[{}]", responses.join(",")))
            }
            Ok(request) => self.handle(&request),
        }
    }

    /// Answers one request object; `None` for a notification.
    fn handle(&mut self, request: &Json) -> Option<String> {
        let Some(object) = request.as_object() else {
            let failure = Failure::protocol(INVALID_REQUEST, "a request must be an object");
            return Some(error_response(&Json::Null, failure));
        };
        let id = match object.get("id") {
            None => None,
            Some(id @ (Json::String(_) | Json::Number(_) | Json::Null)) => Some(id),
            Some(_) => {
                let failure = Failure::protocol(INVALID_REQUEST, "id must be a string, a number or null");
                return Some(error_response(&Json::Null, failure));
            }
        };
        let method = match (object.get("jsonrpc").and_then(Json::as_str), object.get("method")) {
            (Some("2.0"), Some(Json::String(method))) => method.to_lossy(),
            // Not a request at all: answered even without an id (then with `id: null`).
            _ => {
                let failure = Failure::protocol(INVALID_REQUEST, "not a JSON-RPC 2.0 request");
                return Some(error_response(id.unwrap_or(&Json::Null), failure));
            }
        };
        let result = self.call(&method, object.get("params"));
        let id = id?;
        Some(match result {
            Ok(text) => format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{text}}}", id.to_js_string()),
            Err(failure) => error_response(id, failure),
        })
    }

    fn call(&mut self, method: &str, params: Option<&Json>) -> Result<String, Failure> {
        let method = Method::parse(method)
            .ok_or_else(|| Failure::protocol(METHOD_NOT_FOUND, format!("unknown method {method:?}")))?;
        let params = match params {
            None => &[][..],
            Some(Json::Array(params)) => params,
            Some(_) => {
                return Err(Failure::protocol(
                    INVALID_PARAMS,
                    "params must be an array (by position)",
                ));
            }
        };
        let request = crate::api::Request::parse(method, params, self.archive.parse_context(Dialect::Dsh))?;
        Ok(self.archive.call(request)?)
    }
}

fn error_response(id: &Json, failure: Failure) -> String {
    let mut error = format!(
        "{{\"code\":{},\"message\":{}",
        failure.code,
        Json::str(&failure.message).to_js_string()
    );
    if let Some(code) = failure.data_code {
        error.push_str(&format!(",\"data\":{{\"code\":\"{}\"}}", code.as_str()));
    }
    error.push('}');
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{error}}}", id.to_js_string())
}
