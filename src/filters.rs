//! Provider-independent filters: session metadata clauses, event metadata clauses and the
//! literal, whitespace-flexible, case-insensitive text scan.

use crate::corpus::SessionRecord;
use crate::documents::Document;
use crate::error::{Error, ErrorCode};
use crate::fold::SurfaceLabel;
use crate::json::Json;

/// An inclusive numeric range; either bound may be absent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// Lower bound, inclusive.
    pub from: Option<f64>,
    /// Upper bound, inclusive.
    pub to: Option<f64>,
}

impl Range {
    fn contains(&self, value: f64) -> bool {
        self.from.is_none_or(|f| value >= f) && self.to.is_none_or(|t| value <= t)
    }
}

/// A session clause; list values are ORed, clauses are ANDed.
#[derive(Clone, Debug, PartialEq)]
pub enum SessionFilter {
    /// Session id is one of these.
    Id(Vec<String>),
    /// cwd is one of these (`None` = no cwd).
    Cwd(Vec<Option<String>>),
    /// `createdAt` within the range.
    CreatedAt(Range),
    /// Parent session is one of these (`None` = root).
    Parent(Vec<Option<String>>),
    /// `live` and/or `persisted`.
    Availability(Vec<String>),
}

/// An event clause; list values are ORed, clauses are ANDed.
#[derive(Clone, Debug, PartialEq)]
pub enum EventFilter {
    /// Seq within the range.
    Seq(Range),
    /// Time within the range.
    Time(Range),
    /// Type is one of these.
    Type(Vec<String>),
    /// Surface label is one of these.
    Surface(Vec<SurfaceLabel>),
    /// Literal text scan (only for `filterEvents`).
    Text(String),
}

fn invalid(detail: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::QueryInvalidFilter, format!("session {detail}"))
}

fn clauses(filters: &Json) -> Result<&[Json], Error> {
    filters.as_array().ok_or_else(|| invalid("filters must be an array"))
}

fn kind_of(filter: &Json) -> Result<&str, Error> {
    match filter.get("kind") {
        Some(Json::String(kind)) => kind.as_str().ok_or_else(|| invalid("unknown filter kind")),
        _ => Err(invalid("unknown filter kind (missing)")),
    }
}

fn unknown(kind: &str) -> Error {
    invalid(format!("unknown filter kind \"{kind}\""))
}

fn strings(kind: &str, filter: &Json) -> Result<Vec<String>, Error> {
    let values = filter.get("values").and_then(Json::as_array);
    values
        .and_then(|vs| {
            vs.iter()
                .map(|v| v.as_js_string().map(|s| s.to_lossy().into_owned()))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| invalid(format!("{kind} filter values must be an array of strings")))
}

fn nullable_strings(kind: &str, filter: &Json) -> Result<Vec<Option<String>>, Error> {
    let values = filter.get("values").and_then(Json::as_array);
    values
        .and_then(|vs| {
            vs.iter()
                .map(|v| match v {
                    Json::Null => Some(None),
                    Json::String(s) => Some(Some(s.to_lossy().into_owned())),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| invalid(format!("{kind} filter values must be an array of strings or null")))
}

fn range(kind: &str, filter: &Json) -> Result<Range, Error> {
    let bound = |key: &str| -> Result<Option<f64>, Error> {
        match filter.get(key) {
            None => Ok(None),
            Some(Json::Number(n)) if n.is_finite() => Ok(Some(*n)),
            Some(_) => Err(invalid(format!("{kind} filter {key} must be finite"))),
        }
    };
    let range = Range {
        from: bound("from")?,
        to: bound("to")?,
    };
    if let (Some(from), Some(to)) = (range.from, range.to)
        && from > to
    {
        return Err(invalid(format!("{kind} filter from must be less than or equal to to")));
    }
    Ok(range)
}

fn allowed(kind: &str, values: &[String], allowed: &[&str]) -> Result<(), Error> {
    match values.iter().find(|v| !allowed.contains(&v.as_str())) {
        Some(value) => Err(invalid(format!("{kind} filter contains unknown value \"{value}\""))),
        None => Ok(()),
    }
}

/// Validates session clauses (`SESSION_QUERY_INVALID_FILTER` on any malformed clause).
pub fn parse_session_filters(filters: &Json) -> Result<Vec<SessionFilter>, Error> {
    clauses(filters)?
        .iter()
        .map(|filter| {
            let kind = kind_of(filter)?;
            Ok(match kind {
                "id" => SessionFilter::Id(strings(kind, filter)?),
                "cwd" => SessionFilter::Cwd(nullable_strings(kind, filter)?),
                "created-at" => SessionFilter::CreatedAt(range(kind, filter)?),
                "parent" => SessionFilter::Parent(nullable_strings(kind, filter)?),
                "availability" => {
                    let values = strings(kind, filter)?;
                    allowed(kind, &values, &["live", "persisted"])?;
                    SessionFilter::Availability(values)
                }
                other => return Err(unknown(other)),
            })
        })
        .collect()
}

/// Validates event clauses; `text` clauses are accepted only when `allow_text`.
pub fn parse_event_filters(filters: &Json, allow_text: bool) -> Result<Vec<EventFilter>, Error> {
    clauses(filters)?
        .iter()
        .map(|filter| {
            let kind = kind_of(filter)?;
            Ok(match kind {
                "seq" => EventFilter::Seq(range(kind, filter)?),
                "time" => EventFilter::Time(range(kind, filter)?),
                "type" => EventFilter::Type(strings(kind, filter)?),
                "surface" => {
                    let values = strings(kind, filter)?;
                    allowed(kind, &values, &SurfaceLabel::ALL.map(SurfaceLabel::as_str))?;
                    let labels = values.iter().filter_map(|v| SurfaceLabel::parse(v)).collect();
                    EventFilter::Surface(labels)
                }
                "text" if allow_text => match filter.get("text").and_then(Json::as_js_string) {
                    Some(text) => EventFilter::Text(text.to_lossy().into_owned()),
                    None => return Err(invalid("text filter text must be a string")),
                },
                "text" => return Err(invalid("text filters are not accepted by full-text search")),
                other => return Err(unknown(other)),
            })
        })
        .collect()
}

/// Whether a listing record passes every clause.
pub fn session_matches(filters: &[SessionFilter], record: &SessionRecord) -> bool {
    let header = &record.header;
    filters.iter().all(|filter| match filter {
        SessionFilter::Id(ids) => ids.contains(&header.id),
        SessionFilter::Cwd(cwds) => cwds.contains(&header.cwd),
        SessionFilter::CreatedAt(range) => range.contains(header.created_at as f64),
        SessionFilter::Parent(parents) => parents.contains(&header.parent_session),
        SessionFilter::Availability(values) => values
            .iter()
            .any(|v| if v == "live" { record.live } else { record.persisted }),
    })
}

/// A compiled text clause: does a document's text hold the clause's words, in order, apart
/// only by whitespace, in any case?
pub struct TextPattern(Compiled);

impl TextPattern {
    /// Whether `text` holds a match anywhere.
    pub fn is_match(&self, text: &str) -> bool {
        #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
        return self.0.test(text);
        #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
        return self.0.is_match(text);
    }
}

/// In a JavaScript host, the host's own `RegExp`: the engine DSH's scan runs on.
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
type Compiled = js_sys::RegExp;
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
type Compiled = regex::Regex;

/// Compiles a text clause: each word literal, whitespace runs flexible, case folded simply.
/// Fails with `SESSION_QUERY_INVALID_FILTER` when the text is blank.
pub fn compile_text_filter(text: &str) -> Result<TextPattern, Error> {
    let words: Vec<&str> = text
        .split(crate::documents::is_js_whitespace)
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() {
        return Err(Error::new(
            ErrorCode::QueryInvalidFilter,
            "session text filter must contain non-whitespace text",
        ));
    }
    compile(&words).map(TextPattern)
}

/// `words` escaped and joined by `\s+` (JavaScript's `\s` is exactly the whitespace the
/// words were split at), unanchored, Unicode, case-insensitive.
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
fn compile(words: &[&str]) -> Result<Compiled, Error> {
    // With the `u` flag only syntax characters (and `/`) may be escaped: escaping anything
    // else is a syntax error, so nothing else is.
    let escape = |word: &str| -> String {
        let mut out = String::with_capacity(word.len());
        for c in word.chars() {
            if "^$\\.*+?()[]{}|/".contains(c) {
                out.push('\\');
            }
            out.push(c);
        }
        out
    };
    let pattern = words.iter().map(|w| escape(w)).collect::<Vec<_>>().join(r"\s+");
    Ok(js_sys::RegExp::new(&pattern, "iu"))
}

/// The JavaScript `\s` class, spelled out for the `regex` crate.
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
const JS_WHITESPACE_CLASS: &str =
    r"[\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]";

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
fn compile(words: &[&str]) -> Result<Compiled, Error> {
    let pattern = words
        .iter()
        .map(|w| regex::escape(w))
        .collect::<Vec<_>>()
        .join(&format!("{JS_WHITESPACE_CLASS}+"));
    regex::RegexBuilder::new(&pattern)
        .case_insensitive(true)
        .build()
        .map_err(|e| {
            Error::new(
                ErrorCode::QueryInvalidFilter,
                format!("session text filter cannot be compiled: {e}"),
            )
        })
}

/// Applies event clauses to documents (text clauses compiled here, after the session resolved).
pub fn filter_documents(documents: Vec<Document>, filters: &[EventFilter]) -> Result<Vec<Document>, Error> {
    let mut patterns = Vec::new();
    for filter in filters {
        if let EventFilter::Text(text) = filter {
            patterns.push(compile_text_filter(text)?);
        }
    }
    Ok(documents
        .into_iter()
        .filter(|doc| {
            let mut next_pattern = patterns.iter();
            filters.iter().all(|filter| match filter {
                EventFilter::Seq(range) => range.contains(doc.record.seq as f64),
                EventFilter::Time(range) => range.contains(doc.record.time as f64),
                EventFilter::Type(types) => types.contains(&doc.record.kind),
                EventFilter::Surface(labels) => labels.contains(&doc.record.surface),
                EventFilter::Text(_) => next_pattern.next().is_some_and(|p| p.is_match(&doc.text.to_lossy())),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_text_is_an_invalid_filter() {
        assert_eq!(
            compile_text_filter(" \u{3000} ").err().map(|e| e.code),
            Some(ErrorCode::QueryInvalidFilter)
        );
    }

    #[test]
    fn malformed_clauses_are_refused() {
        for bad in [
            r#"{}"#,
            r#"[{"kind":"nope"}]"#,
            r#"[{"kind":"type","values":[1]}]"#,
            r#"[{"kind":"surface","values":["hidden"]}]"#,
            r#"[{"kind":"seq","from":5,"to":1}]"#,
            r#"[{"kind":"seq","from":"1"}]"#,
            r#"[{"kind":"text","text":3}]"#,
        ] {
            let json = Json::parse(bad, Default::default()).expect("json");
            assert_eq!(
                parse_event_filters(&json, true).err().map(|e| e.code),
                Some(ErrorCode::QueryInvalidFilter),
                "{bad}"
            );
        }
        let text = Json::parse(r#"[{"kind":"text","text":"a"}]"#, Default::default()).expect("json");
        assert!(parse_event_filters(&text, false).is_err());
    }
}
