//! Search requests as DSH validates them: normalisation in DSH's error
//! precedence, query normalisation, limits, filter budgets and the canonical request identity
//! that cursors are bound to.

use crate::documents::is_js_whitespace;
use crate::error::{Error, ErrorCode};
use crate::filters::{EventFilter, SessionFilter, parse_event_filters, parse_session_filters};
use crate::json::{Json, is_safe_integer};

/// Page size and snippet configuration (DSH's defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchConfig {
    /// Page size when a request gives none (default 20).
    pub default_limit: u64,
    /// Largest accepted page size (default 100).
    pub max_limit: u64,
    /// Snippet length in code points (default 240).
    pub snippet_chars: usize,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            default_limit: 20,
            max_limit: 100,
            snippet_chars: 240,
        }
    }
}

/// A validated `searchSessions` request.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionSearchRequest {
    /// The normalised query (one phrase).
    pub query: String,
    /// Session clauses.
    pub session_filters: Vec<SessionFilter>,
    /// Event metadata clauses.
    pub event_filters: Vec<EventFilter>,
    /// Page size.
    pub limit: u64,
    /// Continuation token.
    pub cursor: Option<String>,
    /// Return match ranges inside snippets (an extension; DSH's hit shape when false).
    pub highlights: bool,
}

/// A validated `searchEvents` request.
#[derive(Clone, Debug, PartialEq)]
pub struct EventSearchRequest {
    /// The target session.
    pub session_id: String,
    /// The normalised query (one phrase).
    pub query: String,
    /// Event metadata clauses.
    pub filters: Vec<EventFilter>,
    /// Page size.
    pub limit: u64,
    /// Continuation token.
    pub cursor: Option<String>,
    /// Return match ranges inside snippets (an extension; DSH's hit shape when false).
    pub highlights: bool,
}

impl SessionSearchRequest {
    /// A request from typed parts (a program's, not JSON), validated as a parsed one is: the
    /// query normalised, the limit checked; no cursor, no highlights.
    pub fn new(query: &str, event_filters: Vec<EventFilter>, limit: u64, config: &SearchConfig) -> Result<Self, Error> {
        Ok(SessionSearchRequest {
            query: normalize_query(Some(&Json::str(query)))?,
            session_filters: Vec::new(),
            event_filters,
            limit: normalize_limit(Some(&Json::Number(limit as f64)), config)?,
            cursor: None,
            highlights: false,
        })
    }
}

impl EventSearchRequest {
    /// A request from typed parts, validated as [`SessionSearchRequest::new`] validates.
    pub fn new(
        session_id: &str,
        query: &str,
        filters: Vec<EventFilter>,
        limit: u64,
        config: &SearchConfig,
    ) -> Result<Self, Error> {
        Ok(EventSearchRequest {
            session_id: session_id.to_owned(),
            query: normalize_query(Some(&Json::str(query)))?,
            filters,
            limit: normalize_limit(Some(&Json::Number(limit as f64)), config)?,
            cursor: None,
            highlights: false,
        })
    }
}

/// `request[key] ?? []`: JavaScript's `??` treats `null` like a missing key.
fn filters_of<'a>(request: &'a Json, key: &str) -> Option<&'a Json> {
    request.get(key).filter(|v| !matches!(v, Json::Null))
}

static EMPTY_LIST: Json = Json::Array(Vec::new());

/// Validates a `searchSessions` request in DSH's order: session filters, event filters,
/// cursor type, query, limit.
pub fn parse_session_request(request: &Json, config: &SearchConfig) -> Result<SessionSearchRequest, Error> {
    let session_filters = parse_session_filters(filters_of(request, "sessionFilters").unwrap_or(&EMPTY_LIST))?;
    let event_filters = parse_event_filters(filters_of(request, "eventFilters").unwrap_or(&EMPTY_LIST), false)?;
    let cursor = cursor_of(request)?;
    Ok(SessionSearchRequest {
        query: normalize_query(request.get("query"))?,
        session_filters,
        event_filters,
        limit: normalize_limit(request.get("limit"), config)?,
        cursor,
        highlights: matches!(request.get("highlights"), Some(Json::Bool(true))),
    })
}

/// Validates a `searchEvents` request in DSH's order: session id type, filters, cursor type,
/// query, limit.
pub fn parse_event_request(request: &Json, config: &SearchConfig) -> Result<EventSearchRequest, Error> {
    let session_id = request
        .get("sessionId")
        .and_then(Json::as_js_string)
        .map(|s| s.to_lossy().into_owned())
        .ok_or_else(|| Error::new(ErrorCode::QueryInvalidFilter, "session-search session id must be text"))?;
    let filters = parse_event_filters(filters_of(request, "filters").unwrap_or(&EMPTY_LIST), false)?;
    let cursor = cursor_of(request)?;
    Ok(EventSearchRequest {
        session_id,
        query: normalize_query(request.get("query"))?,
        filters,
        limit: normalize_limit(request.get("limit"), config)?,
        cursor,
        highlights: matches!(request.get("highlights"), Some(Json::Bool(true))),
    })
}

fn cursor_of(request: &Json) -> Result<Option<String>, Error> {
    match request.get("cursor") {
        None => Ok(None),
        Some(Json::String(s)) => Ok(Some(s.to_lossy().into_owned())),
        Some(_) => Err(Error::new(
            ErrorCode::QueryInvalidCursor,
            "session-search cursor must be text",
        )),
    }
}

/// The longest query accepted, in UTF-8 bytes as given (16 KiB: a pasted stack trace fits).
/// Refused before any work, since a phrase's cost grows with its length; DSH has no bound.
pub const MAX_QUERY_BYTES: usize = 16 << 10;

/// Trims, collapses JavaScript whitespace runs to one space, rejects blank text and NUL, and
/// maps the highlight-marker noncharacters U+FDD0 / U+FDD1 to U+FFFD.
pub fn normalize_query(value: Option<&Json>) -> Result<String, Error> {
    let invalid = |m: &str| Error::new(ErrorCode::QueryInvalidQuery, m);
    let text = value
        .and_then(Json::as_js_string)
        .ok_or_else(|| invalid("session-search query must be text"))?;
    if text.as_wtf8().len() > MAX_QUERY_BYTES {
        return Err(Error::new(
            ErrorCode::QueryInvalidQuery,
            format!("session-search query must be at most {MAX_QUERY_BYTES} bytes"),
        ));
    }
    let text = text.to_lossy();
    let query = text
        .split(is_js_whitespace)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if query.is_empty() {
        return Err(invalid("session-search query must contain non-whitespace text"));
    }
    if query.contains('\0') {
        return Err(invalid("session-search query must not contain NUL"));
    }
    Ok(sanitize_text(&query))
}

/// Whether [`sanitize_text`] leaves `text` as it is.
pub fn is_sanitized(text: &str) -> bool {
    // One pass over every indexed document for the first bytes of the three characters: NUL,
    // and EF (which U+FDD0 = EF B7 90 and U+FDD1 = EF B7 91 start with, as does the rest of
    // U+F000..U+FFFF, told apart by the two bytes after it).
    let bytes = text.as_bytes();
    memchr::memchr2_iter(0, 0xEF, bytes)
        .all(|at| bytes[at] == 0xEF && !matches!(bytes.get(at + 1..at + 3), Some([0xB7, 0x90 | 0x91])))
}

/// The index-side sanitisation: NUL, U+FDD0 and U+FDD1 become U+FFFD.
pub fn sanitize_text(text: &str) -> String {
    if is_sanitized(text) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| {
            if matches!(c, '\0' | '\u{FDD0}' | '\u{FDD1}') {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

fn normalize_limit(value: Option<&Json>, config: &SearchConfig) -> Result<u64, Error> {
    let max = config.max_limit.min((1u64 << 53) - 2);
    let limit = match value {
        None | Some(Json::Null) => config.default_limit as f64,
        Some(Json::Number(n)) => *n,
        Some(_) => f64::NAN,
    };
    if !is_safe_integer(limit) || limit < 1.0 || limit > max as f64 {
        return Err(Error::new(
            ErrorCode::QueryInvalidLimit,
            format!("session-search limit must be an integer between 1 and {max}"),
        ));
    }
    Ok(limit as u64)
}

fn list_len<T>(values: &[T]) -> usize {
    values.len()
}

fn session_filter_budget(filter: &SessionFilter) -> (usize, usize) {
    match filter {
        SessionFilter::Id(values) => (1, list_len(values)),
        SessionFilter::Cwd(values) | SessionFilter::Parent(values) => {
            (1, values.iter().filter(|v| v.is_some()).count())
        }
        SessionFilter::CreatedAt(range) => {
            let bounds = usize::from(range.from.is_some()) + usize::from(range.to.is_some());
            (bounds, bounds)
        }
        SessionFilter::Availability(values) => {
            let mut distinct: Vec<&String> = values.iter().collect();
            crate::sorting::sort(&mut distinct);
            distinct.dedup();
            (usize::from(distinct.len() != 2), 0)
        }
    }
}

fn event_filter_budget(filter: &EventFilter) -> (usize, usize) {
    match filter {
        EventFilter::Type(values) => (1, values.len()),
        EventFilter::Surface(values) => (1, values.len()),
        EventFilter::Seq(range) | EventFilter::Time(range) => {
            let bounds = usize::from(range.from.is_some()) + usize::from(range.to.is_some());
            (bounds, bounds)
        }
        EventFilter::Text(_) => (1, 1),
    }
}

/// The predicate and binding budgets of a filter (`SESSION_QUERY_INVALID_FILTER`).
pub fn check_budgets(
    session_filters: &[SessionFilter],
    event_filters: &[EventFilter],
    within_session: bool,
) -> Result<(), Error> {
    let (mut predicates, mut bindings) = (0, 0);
    for (p, b) in session_filters
        .iter()
        .map(session_filter_budget)
        .chain(event_filters.iter().map(event_filter_budget))
    {
        predicates += p;
        bindings += b;
    }
    let (max_predicates, fixed_bindings) = if within_session { (13, 13) } else { (14, 12) };
    if predicates > max_predicates {
        return Err(Error::new(
            ErrorCode::QueryInvalidFilter,
            "session-search request exceeds the supported outer-predicate budget of 14; reduce filters",
        ));
    }
    if bindings + fixed_bindings > 32_766 {
        return Err(Error::new(
            ErrorCode::QueryInvalidFilter,
            "session-search request exceeds the binding budget; reduce filter values",
        ));
    }
    Ok(())
}

fn canonical_range(kind: &str, range: &crate::filters::Range) -> String {
    let bound = |b: Option<f64>| {
        b.map(|n| Json::Number(n).to_js_string())
            .unwrap_or_else(|| "null".into())
    };
    format!(
        r#"{{"kind":"{kind}","from":{},"to":{}}}"#,
        bound(range.from),
        bound(range.to)
    )
}

fn canonical_list(kind: &str, values: Vec<Option<String>>) -> String {
    let mut values = values;
    crate::sorting::sort(&mut values);
    let items: Vec<String> = values
        .iter()
        .map(|v| {
            v.as_deref()
                .map(|s| Json::str(s).to_js_string())
                .unwrap_or_else(|| "null".into())
        })
        .collect();
    format!(r#"{{"kind":"{kind}","values":[{}]}}"#, items.join(","))
}

fn canonical_session_filters(filters: &[SessionFilter]) -> Vec<String> {
    let some = |v: &[String]| v.iter().cloned().map(Some).collect::<Vec<_>>();
    let mut out: Vec<String> = filters
        .iter()
        .map(|f| match f {
            SessionFilter::Id(v) => canonical_list("id", some(v)),
            SessionFilter::Cwd(v) => canonical_list("cwd", v.clone()),
            SessionFilter::CreatedAt(r) => canonical_range("created-at", r),
            SessionFilter::Parent(v) => canonical_list("parent", v.clone()),
            SessionFilter::Availability(v) => canonical_list("availability", some(v)),
        })
        .collect();
    crate::sorting::sort(&mut out);
    out
}

fn canonical_event_filters(filters: &[EventFilter]) -> Vec<String> {
    let mut out: Vec<String> = filters
        .iter()
        .map(|f| match f {
            EventFilter::Seq(r) => canonical_range("seq", r),
            EventFilter::Time(r) => canonical_range("time", r),
            EventFilter::Type(v) => canonical_list("type", v.iter().cloned().map(Some).collect()),
            EventFilter::Surface(v) => {
                canonical_list("surface", v.iter().map(|l| Some(l.as_str().to_owned())).collect())
            }
            EventFilter::Text(t) => canonical_list("text", vec![Some(t.clone())]),
        })
        .collect();
    crate::sorting::sort(&mut out);
    out
}

impl SessionSearchRequest {
    /// The request's identity for cursors: filters may be reordered and values permuted.
    pub fn fingerprint(&self) -> String {
        format!(
            r#"{{"scope":"sessions","query":{},"sessionFilters":[{}],"eventFilters":[{}],"limit":{}{}}}"#,
            Json::str(&self.query).to_js_string(),
            canonical_session_filters(&self.session_filters).join(","),
            canonical_event_filters(&self.event_filters).join(","),
            self.limit,
            if self.highlights { r#","highlights":true"# } else { "" }
        )
    }
}

impl EventSearchRequest {
    /// The request's identity for cursors: filters may be reordered and values permuted.
    pub fn fingerprint(&self) -> String {
        format!(
            r#"{{"scope":"events","sessionId":{},"query":{},"filters":[{}],"limit":{}{}}}"#,
            Json::str(&self.session_id).to_js_string(),
            Json::str(&self.query).to_js_string(),
            canonical_event_filters(&self.filters).join(","),
            self.limit,
            if self.highlights { r#","highlights":true"# } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Json {
        Json::parse(text, Default::default()).expect("json")
    }

    fn code(result: Result<SessionSearchRequest, Error>) -> Option<&'static str> {
        result.err().map(|e| e.code.as_str())
    }

    #[test]
    fn is_sanitized_finds_nul_and_the_two_noncharacters_anywhere() {
        let naive = |t: &str| !t.contains('\0') && !t.contains('\u{FDD0}') && !t.contains('\u{FDD1}');
        // Around block boundaries, beside look-alikes (U+FDCF, U+FDD2, U+FFFD, other 0xEF leads).
        for bad in [
            '\0', '\u{FDD0}', '\u{FDD1}', '\u{FDCF}', '\u{FDD2}', '\u{FFFD}', '\u{F000}', 'é',
        ] {
            for prefix in 0..140 {
                let text = format!("{}{bad}{}", "a".repeat(prefix), "b".repeat(prefix % 7));
                assert_eq!(is_sanitized(&text), naive(&text), "{bad:?} after {prefix}");
            }
        }
        assert!(is_sanitized(""));
    }

    #[test]
    fn queries_are_trimmed_collapsed_and_sanitised() {
        let q = |t: &str| normalize_query(Some(&Json::str(t)));
        assert_eq!(q("  parser \u{3000}\n crash\u{FEFF}").expect("valid"), "parser crash");
        assert_eq!(q("a\u{85}b").expect("valid"), "a\u{85}b");
        assert_eq!(q("x\u{FDD0}").expect("valid"), "x\u{FFFD}");
        assert_eq!(q(" \t ").err().map(|e| e.code), Some(ErrorCode::QueryInvalidQuery));
        assert_eq!(q("a\0b").err().map(|e| e.code), Some(ErrorCode::QueryInvalidQuery));
        assert_eq!(
            normalize_query(Some(&Json::Number(1.0))).err().map(|e| e.code),
            Some(ErrorCode::QueryInvalidQuery)
        );
        assert!(q(&"a ".repeat(MAX_QUERY_BYTES / 2)).is_ok(), "at the bound");
        assert_eq!(
            q(&"a ".repeat(MAX_QUERY_BYTES / 2 + 1)).err().map(|e| e.code),
            Some(ErrorCode::QueryInvalidQuery)
        );
    }

    #[test]
    fn validation_follows_dsh_precedence() {
        let config = SearchConfig::default();
        let parse = |t: &str| parse_session_request(&json(t), &config);
        assert_eq!(
            code(parse(r#"{"query":1,"limit":0,"cursor":5,"sessionFilters":{}}"#)),
            Some("SESSION_QUERY_INVALID_FILTER")
        );
        assert_eq!(
            code(parse(r#"{"query":1,"limit":0,"cursor":5}"#)),
            Some("SESSION_QUERY_INVALID_CURSOR")
        );
        assert_eq!(
            code(parse(r#"{"query":1,"limit":0}"#)),
            Some("SESSION_QUERY_INVALID_QUERY")
        );
        assert_eq!(
            code(parse(r#"{"query":"x","limit":0}"#)),
            Some("SESSION_QUERY_INVALID_LIMIT")
        );
        assert_eq!(
            code(parse(r#"{"query":"x","limit":1.5}"#)),
            Some("SESSION_QUERY_INVALID_LIMIT")
        );
        assert_eq!(
            code(parse(r#"{"query":"x","limit":101}"#)),
            Some("SESSION_QUERY_INVALID_LIMIT")
        );
        assert_eq!(
            code(parse(r#"{"query":"x","eventFilters":[{"kind":"text","text":"a"}]}"#)),
            Some("SESSION_QUERY_INVALID_FILTER")
        );
        let ok = parse(r#"{"query":"x"}"#).expect("valid");
        assert_eq!(ok.limit, 20);
        let events = parse_event_request(&json(r#"{"sessionId":3,"query":1}"#), &config);
        assert_eq!(events.err().map(|e| e.code), Some(ErrorCode::QueryInvalidFilter));
    }

    #[test]
    fn budgets_count_predicates_and_bindings() {
        let config = SearchConfig::default();
        let seq = r#"{"kind":"seq","from":1,"to":2}"#;
        let seven = [seq; 7].join(",");
        let request = parse_session_request(&json(&format!(r#"{{"query":"x","eventFilters":[{seven}]}}"#)), &config)
            .expect("valid");
        assert!(check_budgets(&request.session_filters, &request.event_filters, false).is_ok());
        assert!(
            check_budgets(&request.session_filters, &request.event_filters, true).is_err(),
            "14 > 13 within a session"
        );
        let both = r#"{"kind":"availability","values":["live","persisted","live"]}"#;
        let request = parse_session_request(
            &json(&format!(
                r#"{{"query":"x","sessionFilters":[{both}],"eventFilters":[{seven}]}}"#
            )),
            &config,
        )
        .expect("valid");
        assert!(
            check_budgets(&request.session_filters, &request.event_filters, false).is_ok(),
            "live+persisted costs nothing"
        );
        let values: Vec<String> = (0..32_755).map(|i| format!("\"{i}\"")).collect();
        let big = format!(
            r#"{{"query":"x","sessionFilters":[{{"kind":"id","values":[{}]}}]}}"#,
            values.join(",")
        );
        let request = parse_session_request(&json(&big), &config).expect("valid");
        assert!(check_budgets(&request.session_filters, &request.event_filters, false).is_err());
    }

    #[test]
    fn fingerprints_ignore_clause_and_value_order() {
        let config = SearchConfig::default();
        let a = parse_session_request(&json(r#"{"query":"x","sessionFilters":[{"kind":"id","values":["b","a"]},{"kind":"cwd","values":[null,"/p"]}]}"#), &config).expect("a");
        let b = parse_session_request(&json(r#"{"query":" x ","sessionFilters":[{"kind":"cwd","values":["/p",null]},{"kind":"id","values":["a","b"]}]}"#), &config).expect("b");
        assert_eq!(a.fingerprint(), b.fingerprint());
        let c = parse_session_request(&json(r#"{"query":"x","sessionFilters":[{"kind":"id","values":["a","b","b"]},{"kind":"cwd","values":[null,"/p"]}]}"#), &config).expect("c");
        assert_ne!(
            a.fingerprint(),
            c.fingerprint(),
            "a duplicated value is a different request"
        );
    }
}
