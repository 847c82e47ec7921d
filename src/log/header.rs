//! The session header record: version refusal first, then the line-level shape check, then
//! the field rules DSH applies when it restores a session.

use super::{LogFault, ReadLimits};
use crate::error::ErrorCode;
use crate::json::{JsString, Json, JsonObject, ParseError};

/// The immutable session header, with DSH's field names and order on the wire.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHeader {
    /// On-disk format version; 0 for every loaded log (a listed-only header may differ).
    #[serde(serialize_with = "crate::json::serialize_js_number")]
    pub version: f64,
    /// The session id as written, which may hold lone UTF-16 surrogates.
    #[serde(rename = "id")]
    pub raw_id: JsString,
    /// The session id as Rust text (lone surrogates as U+FFFD); the corpus key.
    #[serde(skip)]
    pub id: String,
    /// Creation time, Unix epoch milliseconds.
    pub created_at: i64,
    /// Working directory, when the session had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The session this one was forked or delegated from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
    /// How many leading events were inherited from the parent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed_length: Option<u64>,
    /// `"subagent"` for delegated children.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// 0 for a top-level session, parent depth + 1 for a delegated child. Always present in
    /// stored logs; a live header may leave it out (then it counts as 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delegation_depth: Option<u64>,
    /// The agent preset the session was composed from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_preset: Option<String>,
}

/// Parses the header line: version refusal, then the line-level shape check.
pub(super) fn parse_header_line(line: &[u8], limits: &ReadLimits) -> Result<ParsedHeader, LogFault> {
    let text = super::line_text(line);
    let parsed = match limits.parse_record(&text) {
        Ok(value) => value,
        Err(ParseError::TooDeep) => {
            return Err(LogFault::new(
                ErrorCode::LoadLimitExceeded,
                "the header nests JSON deeper than the configured limit",
            ));
        }
        Err(ParseError::TooManyKeys) => {
            return Err(LogFault::new(
                ErrorCode::LoadLimitExceeded,
                "a header object has more keys than the configured limit",
            ));
        }
        Err(ParseError::Syntax(_)) => {
            return Err(LogFault::new(
                ErrorCode::LoadInvalidHeader,
                "header line is not valid JSON",
            ));
        }
    };
    parse_header_value(&parsed, true)
}

/// Checks a parsed header record. A stored header line carries `"type": "session"` and
/// `delegationDepth`; a live header may omit both (an absent depth counts as 0).
pub(super) fn parse_header_value(parsed: &Json, stored: bool) -> Result<ParsedHeader, LogFault> {
    refuse_foreign_version(parsed)?;
    header_shape(parsed, stored)
}

/// The header as DSH's listing reads it (only the line-level shape; a foreign version and
/// restore-time problems still list), or `None` when the listing passes the file over.
pub(super) fn listing_header(parsed: &Json) -> Option<SessionHeader> {
    header_shape(parsed, true).ok().map(|parsed| parsed.header)
}

fn refuse_foreign_version(parsed: &Json) -> Result<(), LogFault> {
    // The version refusal comes before any other check: a future format need not look like ours.
    if let Some(version) = parsed.get("version").and_then(Json::as_f64)
        && version != 0.0
    {
        let id = parsed.get("id").map(|v| match v {
            Json::String(s) => s.to_lossy().into_owned(),
            other => other.to_js_string(),
        });
        let id = id.unwrap_or_else(|| "undefined".into());
        let message = if version > 0.0 {
            format!(
                "session {id:?} uses log format v{version}, but only v0 is supported: the log was written by a newer harness; upgrade to open it"
            )
        } else {
            format!(
                "session {id:?} uses log format v{version}, older than the supported v0, and no upgrade path exists"
            )
        };
        return Err(LogFault::new(ErrorCode::LoadUnsupportedVersion, message));
    }
    Ok(())
}

fn header_shape(parsed: &Json, stored: bool) -> Result<ParsedHeader, LogFault> {
    let Some(object) = parsed.as_object().filter(|object| is_header_line(object, stored)) else {
        return Err(LogFault::new(
            ErrorCode::LoadInvalidHeader,
            "first line is not a session header",
        ));
    };
    let non_negative = |key: &str| object.get(key).and_then(Json::as_index);
    let string = |key: &str| {
        object
            .get(key)
            .and_then(Json::as_js_string)
            .map(|s| s.to_lossy().into_owned())
    };
    if object.contains_key("sandboxMode") || object.contains_key("approvalPolicy") {
        return Err(LogFault::corrupt("session header uses retired policy baseline fields"));
    }
    // Fields the line check does not cover are checked later, as DSH does on restore.
    let mut header = SessionHeader {
        version: object.get("version").and_then(Json::as_f64).unwrap_or_default(),
        raw_id: object
            .get("id")
            .and_then(Json::as_js_string)
            .cloned()
            .unwrap_or_else(|| JsString::from("")),
        id: string("id").unwrap_or_default(),
        created_at: non_negative("createdAt").unwrap_or_default() as i64,
        cwd: None,
        parent_session: None,
        seed_length: None,
        origin: string("origin"),
        delegation_depth: non_negative("delegationDepth"),
        agent_preset: string("agentPreset"),
    };
    let deferred_fault = restore_fields(object, &mut header);
    Ok(ParsedHeader { header, deferred_fault })
}

/// Whether `object` passes the line check DSH makes on a header: a stored header names its
/// type and always records its delegation depth.
fn is_header_line(object: &JsonObject, stored: bool) -> bool {
    let non_negative = |key: &str| object.get(key).and_then(Json::as_index);
    (!stored || object.get("type").and_then(Json::as_str) == Some("session"))
        && object.get("version").and_then(Json::as_f64).is_some()
        && object.get("id").is_some_and(Json::is_string)
        && non_negative("createdAt").is_some()
        && (non_negative("delegationDepth").is_some() || (!stored && !object.contains_key("delegationDepth")))
        && object.get("origin").is_none_or(|o| o.as_str() == Some("subagent"))
        && object.get("agentPreset").is_none_or(Json::is_string)
}

/// Fills the fields DSH checks only when it restores a session (cwd, parent, seed length)
/// and tells the first that fails that check: the session is still listed, as written, and
/// reading it fails.
fn restore_fields(object: &JsonObject, header: &mut SessionHeader) -> Option<String> {
    let mut deferred = Vec::new();
    match object.get("cwd") {
        None => {}
        Some(Json::String(cwd)) => {
            let cwd = cwd.to_lossy();
            if !is_absolute(&cwd) {
                deferred.push(format!("session header cwd must be an absolute path, got {cwd:?}"));
            }
            header.cwd = Some(cwd.into_owned());
        }
        Some(_) => deferred.push("session header cwd must be a string".to_owned()),
    }
    match object.get("parentSession") {
        None => {}
        Some(Json::String(parent)) => header.parent_session = Some(parent.to_lossy().into_owned()),
        Some(_) => deferred.push("session header parentSession must be a string".to_owned()),
    }
    match object.get("seedLength") {
        None => {}
        Some(value) => match value.as_f64().filter(|n| crate::json::is_safe_integer(*n) && *n >= 0.0) {
            Some(n) => header.seed_length = Some(n as u64),
            None => deferred.push("session header seedLength must be a non-negative safe integer".to_owned()),
        },
    }
    deferred.into_iter().next()
}

/// A header that passed the line-level checks, with the first restore-time problem (if any),
/// which DSH reports only after the events were read.
pub(super) struct ParsedHeader {
    pub header: SessionHeader,
    pub deferred_fault: Option<String>,
}

impl ParsedHeader {
    /// The header rules DSH applies when it restores the session.
    pub(super) fn validate(&self) -> Result<(), LogFault> {
        match &self.deferred_fault {
            Some(problem) => Err(LogFault::corrupt(problem.clone())),
            None => Ok(()),
        }
    }
}

/// `path.isAbsolute` for POSIX paths, plus Windows drive and UNC forms so logs written on
/// Windows load too.
fn is_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    match bytes {
        [b'/' | b'\\', ..] => true,
        [drive, b':', b'/' | b'\\', ..] => drive.is_ascii_alphabetic(),
        _ => false,
    }
}
