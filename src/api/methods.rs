//! The table of DSH's methods: each method's name and parameters, its typed request parsed once
//! from by-position JSON params, and the dispatch of a request to the typed [`Archive`] call
//! whose result becomes DSH's wire JSON.

use super::Archive;
use super::coerce::{Dialect, SeqArg, js_string_of, options_object, read_window, string_param};
use super::options::{LoadCallOptions, PrepareSettings, cancelled};
use crate::archive::LoadOptions;
use crate::error::Error;
use crate::filters::{EventFilter, SessionFilter, parse_event_filters, parse_session_filters};
use crate::json::{JsString, Json, JsonObject};
use crate::reference;
use crate::search::request::{
    EventSearchRequest, SearchConfig, SessionSearchRequest, parse_event_request, parse_session_request,
};
use serde::Serialize;

/// Declares the method table once: the enum, its wire names and its parameter names.
macro_rules! methods {
    ($($variant:ident = $name:literal ($($param:literal),*);)*) => {
        /// A method of the API, by DSH's name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Method {
            $(#[doc = concat!("`", $name, "`")] $variant,)*
        }

        impl Method {
            /// Every method, in the README's order.
            pub const ALL: &'static [Method] = &[$(Method::$variant,)*];

            /// DSH's name.
            pub fn name(self) -> &'static str {
                match self { $(Method::$variant => $name,)* }
            }

            /// The by-position parameters, `?` marking optional ones.
            pub fn params(self) -> &'static [&'static str] {
                match self { $(Method::$variant => &[$($param),*],)* }
            }
        }
    };
}

methods! {
    Load = "load" ("paths", "options?");
    AddLive = "addLive" ("header", "events?");
    AppendLive = "appendLive" ("sessionId", "events");
    ListSessions = "listSessions" ();
    FilterSessions = "filterSessions" ("filters");
    ReadSession = "readSession" ("sessionId");
    ListEvents = "listEvents" ("sessionId");
    ReadSurface = "readSurface" ("sessionId");
    ReadEvent = "readEvent" ("request");
    TraceSession = "traceSession" ("sessionId");
    TraceEvent = "traceEvent" ("request");
    ReadTitle = "readTitle" ("sessionId");
    ReadTitleSnapshots = "readTitleSnapshots" ("sessionIds");
    FilterEvents = "filterEvents" ("sessionId", "filters");
    SearchSessions = "searchSessions" ("request");
    SearchEvents = "searchEvents" ("request");
    ListDocuments = "listDocuments" ("sessionId");
    ListCandidates = "listCandidates" ("agent", "query?", "limit?", "options?");
    Prepare = "prepare" ("agent", "content", "references", "options?");
    EncodeSessionReferenceUri = "encodeSessionReferenceUri" ("sessionId");
    DecodeSessionReferenceUri = "decodeSessionReferenceUri" ("uri");
    FormatSessionReferenceMention = "formatSessionReferenceMention" ("reference");
    ParseSessionReferenceText = "parseSessionReferenceText" ("text");
}

impl Method {
    /// The method with DSH's name `name`.
    pub fn parse(name: &str) -> Option<Method> {
        Method::ALL.iter().copied().find(|m| m.name() == name)
    }

    /// Whether the method needs no archive (the reference text functions).
    pub fn is_static(self) -> bool {
        matches!(
            self,
            Method::EncodeSessionReferenceUri
                | Method::DecodeSessionReferenceUri
                | Method::FormatSessionReferenceMention
                | Method::ParseSessionReferenceText
        )
    }
}

/// The requesting session of the reference calls: `{id, cwd?}`. Without a `cwd` key the
/// session's own header cwd is used when the corpus has it; `cwd: null` means no cwd.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentArg {
    /// The session id.
    pub id: JsString,
    /// `None`: take the session's own; `Some(None)`: no cwd.
    pub cwd: Option<Option<String>>,
}

impl AgentArg {
    fn parse(value: Option<&Json>, dialect: Dialect) -> Result<AgentArg, Error> {
        let agent = value
            .and_then(Json::as_object)
            .ok_or_else(|| Error::invalid_argument("parameter 0 must be an agent {id, cwd?}"))?;
        dialect.check_keys(agent, &["id", "cwd"], "the agent")?;
        let id = agent
            .get("id")
            .and_then(Json::as_js_string)
            .ok_or_else(|| Error::invalid_argument("agent.id must be a string"))?;
        let cwd = match agent.get("cwd") {
            None => None,
            Some(Json::Null) => Some(None),
            Some(Json::String(cwd)) => Some(Some(cwd.to_lossy().into_owned())),
            Some(_) => return Err(Error::invalid_argument("agent.cwd must be a string")),
        };
        Ok(AgentArg { id: id.clone(), cwd })
    }

    /// The agent as the reference layer takes it.
    pub fn resolve(&self, corpus: &crate::corpus::Corpus) -> reference::ReferenceAgent {
        match &self.cwd {
            None => reference::ReferenceAgent::of_session(corpus, &self.id),
            Some(cwd) => reference::ReferenceAgent::new(self.id.clone(), cwd.clone()),
        }
    }
}

/// One call, typed: what every face hands to [`Archive::call`].
#[derive(Clone, Debug)]
#[allow(missing_docs)] // Each variant is the method of the same name (see [`Method`]).
pub enum Request {
    Load {
        paths: Vec<String>,
        options: LoadCallOptions,
    },
    AddLive {
        header: Json,
        events: Vec<Json>,
    },
    AppendLive {
        session_id: String,
        events: Vec<Json>,
    },
    ListSessions,
    FilterSessions {
        filters: Vec<SessionFilter>,
    },
    ReadSession {
        session_id: String,
    },
    ListEvents {
        session_id: String,
    },
    ReadSurface {
        session_id: String,
    },
    ReadEvent {
        session_id: String,
        seq: SeqArg,
        before: u64,
        after: u64,
    },
    TraceSession {
        session_id: String,
    },
    TraceEvent {
        session_id: String,
        seq: SeqArg,
    },
    ReadTitle {
        session_id: String,
    },
    ReadTitleSnapshots {
        session_ids: Vec<String>,
    },
    FilterEvents {
        session_id: String,
        filters: Vec<EventFilter>,
    },
    SearchSessions(SessionSearchRequest),
    SearchEvents(EventSearchRequest),
    ListDocuments {
        session_id: String,
    },
    ListCandidates {
        agent: AgentArg,
        query: JsString,
        limit: Option<u64>,
        cancelled: bool,
    },
    Prepare {
        agent: AgentArg,
        content: Json,
        references: Vec<Json>,
        settings: PrepareSettings,
    },
    EncodeSessionReferenceUri {
        session_id: JsString,
    },
    DecodeSessionReferenceUri {
        uri: String,
    },
    FormatSessionReferenceMention {
        session_id: JsString,
        label: Option<JsString>,
    },
    ParseSessionReferenceText {
        text: JsString,
    },
}

/// What a request is parsed against: the dialect and the archive's defaults.
#[derive(Clone, Copy, Debug, Default)]
pub struct ParseContext<'a> {
    /// How strictly shapes are checked.
    pub dialect: Dialect,
    /// The archive's load limits (a load's flat limit keys override them).
    pub load: Option<&'a LoadOptions>,
    /// Page sizes and snippet length.
    pub search: SearchConfig,
}

const READ_EVENT_KEYS: &[&str] = &["sessionId", "seq", "before", "after"];
const TRACE_EVENT_KEYS: &[&str] = &["sessionId", "seq"];
const SESSION_SEARCH_KEYS: &[&str] = &[
    "query",
    "sessionFilters",
    "eventFilters",
    "limit",
    "cursor",
    "highlights",
];
const EVENT_SEARCH_KEYS: &[&str] = &["sessionId", "query", "filters", "limit", "cursor", "highlights"];

impl Request {
    /// Parses `method`'s by-position `params`: every validation and coercion rule applied, in
    /// DSH's precedence, so nothing below receives a malformed value.
    pub fn parse(method: Method, params: &[Json], context: ParseContext<'_>) -> Result<Request, Error> {
        let dialect = context.dialect;
        if dialect == Dialect::Strict && params.len() > method.params().len() {
            return Err(Error::invalid_argument(format!(
                "{} takes at most {} parameters ({}), got {}",
                method.name(),
                method.params().len(),
                method.params().join(", "),
                params.len()
            )));
        }
        let arg = |i: usize| params.get(i);
        let id = |i: usize| js_string_of(arg(i));
        let empty = Json::Array(Vec::new());
        Ok(match method {
            Method::Load => Request::Load {
                paths: path_list(arg(0))?,
                options: LoadCallOptions::from_json(arg(1), context.load.unwrap_or(&LoadOptions::default()), true)?,
            },
            Method::AddLive => Request::AddLive {
                header: arg(0)
                    .cloned()
                    .ok_or_else(|| Error::invalid_argument("parameter 0 must be a session header"))?,
                events: event_list(arg(1))?,
            },
            Method::AppendLive => Request::AppendLive {
                session_id: id(0),
                events: event_list(arg(1))?,
            },
            Method::ListSessions => Request::ListSessions,
            Method::FilterSessions => Request::FilterSessions {
                filters: parse_session_filters(arg(0).unwrap_or(&empty))?,
            },
            Method::ReadSession => Request::ReadSession { session_id: id(0) },
            Method::ListEvents => Request::ListEvents { session_id: id(0) },
            Method::ReadSurface => Request::ReadSurface { session_id: id(0) },
            Method::ReadEvent => {
                let request = object_param(arg(0), "a read request", READ_EVENT_KEYS, dialect)?;
                let (before, after) = (read_window(request, "before")?, read_window(request, "after")?);
                Request::ReadEvent {
                    session_id: js_string_of(request.get("sessionId")),
                    seq: SeqArg::of(request),
                    before,
                    after,
                }
            }
            Method::TraceSession => Request::TraceSession { session_id: id(0) },
            Method::TraceEvent => {
                let request = object_param(arg(0), "a trace request", TRACE_EVENT_KEYS, dialect)?;
                Request::TraceEvent {
                    session_id: js_string_of(request.get("sessionId")),
                    seq: SeqArg::of(request),
                }
            }
            Method::ReadTitle => Request::ReadTitle { session_id: id(0) },
            Method::ReadTitleSnapshots => Request::ReadTitleSnapshots {
                session_ids: id_list(arg(0))?,
            },
            Method::FilterEvents => Request::FilterEvents {
                session_id: id(0),
                filters: parse_event_filters(arg(1).unwrap_or(&empty), true)?,
            },
            Method::SearchSessions => {
                let request = arg(0).unwrap_or(&Json::Null);
                dialect.check_value_keys(Some(request), SESSION_SEARCH_KEYS, "the search request")?;
                Request::SearchSessions(parse_session_request(request, &context.search)?)
            }
            Method::SearchEvents => {
                let request = arg(0).unwrap_or(&Json::Null);
                dialect.check_value_keys(Some(request), EVENT_SEARCH_KEYS, "the search request")?;
                Request::SearchEvents(parse_event_request(request, &context.search)?)
            }
            Method::ListDocuments => Request::ListDocuments { session_id: id(0) },
            Method::ListCandidates => Request::ListCandidates {
                agent: AgentArg::parse(arg(0), dialect)?,
                query: match arg(1) {
                    None => JsString::from(""),
                    Some(_) => string_param(params, 1, "a query string")?.clone(),
                },
                limit: reference::candidate_limit(arg(2))?,
                cancelled: cancelled(options_object(arg(3), 3, &["cancelled"])?)?,
            },
            Method::Prepare => Request::Prepare {
                agent: AgentArg::parse(arg(0), dialect)?,
                content: arg(1)
                    .cloned()
                    .ok_or_else(|| Error::invalid_argument("parameter 1 must be the message content"))?,
                references: arg(2)
                    .and_then(Json::as_array)
                    .map(<[Json]>::to_vec)
                    .ok_or_else(|| Error::invalid_argument("parameter 2 must be an array of references"))?,
                settings: PrepareSettings::from_json(arg(3))?,
            },
            Method::EncodeSessionReferenceUri => Request::EncodeSessionReferenceUri {
                session_id: string_param(params, 0, "a session id string")?.clone(),
            },
            // A lone surrogate is never part of a canonical URI, so the lossy text fails alike.
            Method::DecodeSessionReferenceUri => Request::DecodeSessionReferenceUri {
                uri: string_param(params, 0, "a URI string")?.to_lossy().into_owned(),
            },
            Method::FormatSessionReferenceMention => mention_request(arg(0), dialect)?,
            Method::ParseSessionReferenceText => Request::ParseSessionReferenceText {
                text: string_param(params, 0, "a text string")?.clone(),
            },
        })
    }
}

fn object_param<'a>(value: Option<&'a Json>, what: &str, keys: &[&str], dialect: Dialect) -> Result<&'a Json, Error> {
    let value = value
        .filter(|v| v.as_object().is_some())
        .ok_or_else(|| Error::invalid_argument(format!("parameter 0 must be {what}")))?;
    dialect.check_value_keys(Some(value), keys, what)?;
    Ok(value)
}

fn path_list(value: Option<&Json>) -> Result<Vec<String>, Error> {
    value
        .and_then(Json::as_array)
        .and_then(|ps| {
            ps.iter()
                .map(|p| p.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| Error::invalid_argument("parameter 0 must be an array of paths"))
}

fn id_list(value: Option<&Json>) -> Result<Vec<String>, Error> {
    value
        .and_then(Json::as_array)
        .and_then(|ids| {
            ids.iter()
                .map(|i| i.as_js_string().map(|s| s.to_lossy().into_owned()))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| Error::invalid_argument("parameter 0 must be an array of session ids"))
}

fn event_list(value: Option<&Json>) -> Result<Vec<Json>, Error> {
    match value {
        None => Ok(Vec::new()),
        Some(Json::Array(events)) => Ok(events.clone()),
        Some(_) => Err(Error::invalid_argument("events must be an array")),
    }
}

/// `formatSessionReferenceMention({sessionId, label?})`: DSH writes `label ?? sessionId`, so
/// `null` falls back like a missing label.
fn mention_request(value: Option<&Json>, dialect: Dialect) -> Result<Request, Error> {
    let reference = value
        .and_then(Json::as_object)
        .ok_or_else(|| Error::invalid_argument("parameter 0 must be a reference {sessionId, label?}"))?;
    dialect.check_keys(reference, &["sessionId", "label"], "the reference")?;
    let session_id = reference
        .get("sessionId")
        .and_then(Json::as_js_string)
        .ok_or_else(|| Error::invalid_argument("reference.sessionId must be a string"))?;
    let label = match reference.get("label") {
        None | Some(Json::Null) => None,
        Some(Json::String(label)) => Some(label.clone()),
        Some(_) => return Err(Error::invalid_argument("reference.label must be a string")),
    };
    Ok(Request::FormatSessionReferenceMention {
        session_id: session_id.clone(),
        label,
    })
}

/// A typed result as DSH's wire JSON text.
fn text<T: Serialize>(value: &T) -> Result<String, Error> {
    serde_json::to_string(value).map_err(|e| Error::invalid_argument(format!("the result is not JSON: {e}")))
}

/// `{text, references: [{sessionId, label}]}`.
fn parsed_text_json(parsed: reference::ParsedReferenceText) -> Json {
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
    let mut object = JsonObject::new();
    object.insert("text", Json::String(parsed.text));
    object.insert("references", Json::Array(references));
    Json::Object(object)
}

/// Answers a request that needs no archive (see [`Method::is_static`]); `None` for the others.
pub fn call_static(request: &Request) -> Option<Result<String, Error>> {
    let json = match request {
        Request::EncodeSessionReferenceUri { session_id } => {
            Ok(Json::str(&reference::encode_session_reference_uri(session_id)))
        }
        Request::DecodeSessionReferenceUri { uri } => reference::decode_session_reference_uri(uri).map(Json::String),
        Request::FormatSessionReferenceMention { session_id, label } => Ok(Json::String(
            reference::format_session_reference_mention(label.as_ref(), session_id),
        )),
        Request::ParseSessionReferenceText { text } => {
            reference::parse_session_reference_text(text).map(parsed_text_json)
        }
        _ => return None,
    };
    Some(json.map(|json| json.to_js_string()))
}

impl Archive {
    /// Answers one typed request with DSH's wire JSON text.
    pub fn call(&mut self, request: Request) -> Result<String, Error> {
        match request {
            Request::Load { paths, options } => text(&self.load_paths(&paths, options)?),
            Request::AddLive { header, events } => text(&self.add_live(&header, events)?),
            Request::AppendLive { session_id, events } => text(&self.append_live(&session_id, events)?),
            Request::ListSessions => text(&self.corpus().list_sessions()),
            Request::FilterSessions { filters } => text(&self.corpus().filter_sessions(&filters)),
            Request::ReadSession { session_id } => text(&self.corpus().read_session_stored(&session_id)?),
            Request::ListEvents { session_id } => text(&self.corpus().list_events(&session_id)?),
            Request::ReadSurface { session_id } => text(&self.corpus().read_surface_stored(&session_id)?),
            Request::ReadEvent {
                session_id,
                seq,
                before,
                after,
            } => {
                let seq = seq.resolve(self.corpus(), &session_id)?;
                text(&self.corpus().read_event_stored(&session_id, seq, before, after)?)
            }
            Request::TraceSession { session_id } => text(&self.corpus().trace_session(&session_id)?),
            Request::TraceEvent { session_id, seq } => {
                let seq = seq.resolve(self.corpus(), &session_id)?;
                text(&self.corpus().trace_event(&session_id, seq)?)
            }
            Request::ReadTitle { session_id } => text(&self.corpus().read_title(&session_id)?),
            Request::ReadTitleSnapshots { session_ids } => text(&self.corpus().read_title_snapshots(&session_ids)),
            Request::FilterEvents { session_id, filters } => text(&self.corpus().filter_events(&session_id, &filters)?),
            Request::SearchSessions(request) => text(&self.search_sessions(&request)?),
            Request::SearchEvents(request) => text(&self.search_events(&request)?),
            Request::ListDocuments { session_id } => text(&self.corpus().list_documents(&session_id)?),
            Request::ListCandidates {
                agent,
                query,
                limit,
                cancelled,
            } => {
                let candidates = self.list_candidates(&agent, &query, limit, cancelled)?;
                Ok(Json::Array(candidates.iter().map(reference::Candidate::to_json).collect()).to_js_string())
            }
            Request::Prepare {
                agent,
                content,
                references,
                settings,
            } => Ok(self
                .prepare(&agent, &content, &references, &settings, None)?
                .to_json()
                .to_js_string()),
            Request::EncodeSessionReferenceUri { .. }
            | Request::DecodeSessionReferenceUri { .. }
            | Request::FormatSessionReferenceMention { .. }
            | Request::ParseSessionReferenceText { .. } => {
                call_static(&request).unwrap_or_else(|| Err(Error::invalid_argument("not a reference text function")))
            }
        }
    }
}
