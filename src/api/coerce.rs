//! The JavaScript coercion rules DSH applies to its arguments, in one place: `String(id)` for
//! ids, `null` as absent or present per argument, integer windows, seqs that name no event, and
//! which object keys a face accepts.

use crate::corpus::Corpus;
use crate::error::{Error, ErrorCode};
use crate::json::{JsString, Json, JsonObject};
use crate::reads::READ_WINDOW_MAX;

/// How strictly a face checks argument shapes beyond DSH's own validation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dialect {
    /// Exactly DSH: unknown keys are ignored, as a JavaScript object's extra properties are.
    /// The JSON-RPC face, whose answers are compared with DSH's.
    #[default]
    Dsh,
    /// As DSH, and every option or request object must hold only the keys its method reads
    /// (`SESSION_INVALID_ARGUMENT`), so a misspelt `limt: 5` fails instead of being ignored.
    /// The JavaScript package and the component.
    Strict,
}

impl Dialect {
    /// In the strict dialect, fails on the first key of `object` that is not in `allowed`.
    pub fn check_keys(self, object: &JsonObject, allowed: &[&str], what: &str) -> Result<(), Error> {
        if self == Dialect::Dsh {
            return Ok(());
        }
        match object.keys().find(|k| !allowed.iter().any(|a| k.as_str() == Some(a))) {
            Some(key) => Err(Error::invalid_argument(format!(
                "{what} has no key {}; known keys: {}",
                Json::String(key.clone()).to_js_string(),
                allowed.join(", ")
            ))),
            None => Ok(()),
        }
    }

    /// [`Dialect::check_keys`] for a value that is an object; other values pass (DSH decides).
    pub fn check_value_keys(self, value: Option<&Json>, allowed: &[&str], what: &str) -> Result<(), Error> {
        match value.and_then(Json::as_object) {
            Some(object) => self.check_keys(object, allowed, what),
            None => Ok(()),
        }
    }
}

/// DSH does not type-check ids: it looks up `String(value)`, so a non-string id is simply not
/// found (`session "undefined" not found`).
pub fn js_string_of(value: Option<&Json>) -> String {
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

/// A read window (`before` / `after`): absent is 0, anything else must be an integer from 0
/// to [`READ_WINDOW_MAX`] (`SESSION_QUERY_INVALID_WINDOW`; `null` is present, so invalid).
pub fn read_window(request: &Json, name: &str) -> Result<u64, Error> {
    match request.get(name) {
        None => Ok(0),
        Some(value) => value.as_index().filter(|n| *n <= READ_WINDOW_MAX).ok_or_else(|| {
            Error::new(
                ErrorCode::QueryInvalidWindow,
                format!("{name} must be an integer between 0 and {READ_WINDOW_MAX}"),
            )
        }),
    }
}

/// A requested seq as given: an index, or the JavaScript text of whatever else was passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeqArg {
    /// A non-negative integer.
    Index(u64),
    /// Anything else (`undefined`, `-1`, `1.5`, `"3"`): it names no event.
    NoEvent(String),
}

impl SeqArg {
    /// Reads `request.seq`.
    pub fn of(request: &Json) -> SeqArg {
        match request.get("seq") {
            Some(seq) => seq
                .as_index()
                .map(SeqArg::Index)
                .unwrap_or_else(|| SeqArg::NoEvent(seq.to_js_string())),
            None => SeqArg::NoEvent("undefined".into()),
        }
    }

    /// The seq, or DSH's failure: the session is resolved first (`SESSION_NOT_FOUND` wins),
    /// then a seq that names no event fails with `SESSION_QUERY_EVENT_NOT_FOUND`.
    pub fn resolve(&self, corpus: &Corpus, id: &str) -> Result<u64, Error> {
        match self {
            SeqArg::Index(seq) => Ok(*seq),
            SeqArg::NoEvent(shown) => {
                corpus.list_events(id)?;
                Err(Error::new(
                    ErrorCode::QueryEventNotFound,
                    format!("session \"{id}\" has no event at seq {shown}"),
                ))
            }
        }
    }
}

/// A parameter that must be a string (the reference functions check their types).
pub fn string_param<'a>(params: &'a [Json], index: usize, what: &str) -> Result<&'a JsString, Error> {
    params
        .get(index)
        .and_then(Json::as_js_string)
        .ok_or_else(|| Error::invalid_argument(format!("parameter {index} must be {what}")))
}

/// An optional string option: absent is `None`, anything but a string fails.
pub fn optional_string<'a>(options: Option<&'a JsonObject>, key: &str) -> Result<Option<&'a JsString>, Error> {
    match options.and_then(|o| o.get(key)) {
        None => Ok(None),
        Some(Json::String(s)) => Ok(Some(s)),
        Some(_) => Err(Error::invalid_argument(format!("option {key} must be a string"))),
    }
}

/// An optional options object: absent or `null` is `None`; in any dialect only `allowed` keys
/// pass (these are our own options, not DSH's request objects).
pub fn options_object<'a>(
    value: Option<&'a Json>,
    index: usize,
    allowed: &[&str],
) -> Result<Option<&'a JsonObject>, Error> {
    let Some(value) = value.filter(|v| !matches!(v, Json::Null)) else {
        return Ok(None);
    };
    let object = value
        .as_object()
        .ok_or_else(|| Error::invalid_argument(format!("parameter {index} must be an options object")))?;
    Dialect::Strict.check_keys(object, allowed, "the options object")?;
    Ok(Some(object))
}

/// JSON text handed over by a host (the JavaScript wrapper, a component host); `what` names it
/// in the `SESSION_INVALID_ARGUMENT` error.
pub fn json_text(text: &str, what: &str) -> Result<Json, Error> {
    Json::parse(text, crate::json::ParseLimits::default())
        .map_err(|e| Error::invalid_argument(format!("{what} is not JSON: {e}")))
}

/// By-position params as JSON text: an array.
pub fn params_text(text: &str) -> Result<Vec<Json>, Error> {
    match json_text(text, "params")? {
        Json::Array(params) => Ok(params),
        _ => Err(Error::invalid_argument("params must be an array")),
    }
}

/// An optional options object as JSON text: empty text and `null` are none.
pub fn options_text(text: &str) -> Result<Option<Json>, Error> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    Ok(Some(json_text(text, "options")?).filter(|o| !matches!(o, Json::Null)))
}

/// A method by DSH's name.
pub fn method_named(name: &str) -> Result<super::Method, Error> {
    super::Method::parse(name).ok_or_else(|| Error::invalid_argument(format!("unknown method {name:?}")))
}
