//! The WebAssembly Component face (`wit/`, world `library`): parse, call, convert over the
//! typed API, for WASI 0.2 hosts (wasmtime, Spin, Fastly Compute, wasmCloud, jco).
//!
//! Like the wasm-bindgen face it checks argument shapes strictly ([`Dialect::Strict`]) and
//! passes DSH's values as JSON text: a WIT `string` cannot hold the lone UTF-16 surrogates of
//! real logs, and the crate's printer writes them as `\udXXX` escapes. Typed WIT values
//! (options, limits, counts, entries) become the same by-position JSON params the other
//! faces parse, so every rule stays in `src/api/`.

use crate::api::{
    Archive, ArchiveOptions, Dialect, LoadCallOptions, Method, Request, json_text, method_named, params_text,
};
use crate::error::Error;
use crate::json::{Json, JsonObject};
use bindings::exports::dsh::session_search::session_search as wit;
use std::cell::RefCell;

/// The generated glue; its `unsafe` is the ABI's, and it is the only `unsafe` in the crate.
#[allow(unsafe_code, missing_docs, clippy::all)]
mod bindings {
    use super::Component;
    wit_bindgen::generate!({ path: "wit", world: "library" });
    export!(Component);
}

/// The component's exports.
struct Component;

/// The `archive` resource: the typed API's archive behind the handle (WIT methods borrow it).
struct ComponentArchive {
    archive: RefCell<Archive>,
}

impl From<Error> for wit::Error {
    fn from(error: Error) -> wit::Error {
        wit::Error {
            code: error.code.as_str().to_owned(),
            message: error.message,
        }
    }
}

type Answer<T = String> = Result<T, wit::Error>;

fn number(n: u64) -> Json {
    Json::Number(n as f64)
}

/// `{tokenizer?, limits?}` as `ArchiveOptions::from_json` reads it.
fn archive_options_json(options: &wit::ArchiveOptions) -> Json {
    let mut object = JsonObject::new();
    if let Some(tokenizer) = options.tokenizer {
        let name = match tokenizer {
            wit::Tokenizer::Unicode61 => "unicode61",
            wit::Tokenizer::Cjk => "cjk",
        };
        object.insert("tokenizer", Json::str(name));
    }
    if let Some(limits) = &options.limits {
        let given = [
            ("maxDecompressedBytes", limits.max_decompressed_bytes),
            ("maxLineBytes", limits.max_line_bytes),
            ("maxJsonDepth", limits.max_json_depth),
            ("maxArchiveBytes", limits.max_archive_bytes),
            ("maxArchiveEntries", limits.max_archive_entries),
            ("maxObjectKeys", limits.max_object_keys),
            ("maxCompressionRatio", limits.max_compression_ratio),
            ("maxLoadBytes", limits.max_load_bytes),
        ];
        let mut limits = JsonObject::new();
        for (key, value) in given {
            if let Some(n) = value {
                limits.insert(key, number(n));
            }
        }
        object.insert("limits", Json::Object(limits));
    }
    Json::Object(object)
}

impl ComponentArchive {
    /// Parses `params` for `method` against this archive and answers with DSH's wire JSON.
    fn answer(&self, method: Method, params: &[Json]) -> Answer {
        let mut archive = self.archive.borrow_mut();
        let request = Request::parse(method, params, archive.parse_context(Dialect::Strict))?;
        Ok(archive.call(request)?)
    }

    /// Loads every entry at once (all or nothing).
    fn load_entries(&self, entries: Vec<wit::Entry>, strict: bool) -> Result<String, Error> {
        let mut archive = self.archive.borrow_mut();
        let mut options = JsonObject::new();
        options.insert("strict", Json::Bool(strict));
        let options = LoadCallOptions::from_json(Some(&Json::Object(options)), &archive.options().load, false)?;
        let entries = entries.into_iter().map(|entry| (entry.path, entry.bytes)).collect();
        let report = archive.load_entries(entries, options)?;
        serde_json::to_string(&report).map_err(|e| Error::invalid_argument(format!("the report is not JSON: {e}")))
    }
}

impl wit::GuestArchive for ComponentArchive {
    fn new(options: wit::ArchiveOptions) -> Answer<ComponentArchive> {
        let options = ArchiveOptions::from_json(Some(&archive_options_json(&options)))?;
        Ok(ComponentArchive {
            archive: RefCell::new(Archive::new(options)),
        })
    }

    fn load(&self, entries: Vec<wit::Entry>, options: wit::LoadOptions) -> Answer {
        Ok(self.load_entries(entries, options.strict)?)
    }

    fn index_step(&self, budget: u64) -> Answer<wit::IndexProgress> {
        let progress = self.archive.borrow_mut().index_step(budget)?;
        Ok(wit::IndexProgress {
            sessions_done: progress.sessions_done as u64,
            sessions_total: progress.sessions_total as u64,
            events_done: progress.events_done,
            events_total: progress.events_total,
            done: progress.done,
        })
    }

    fn list_sessions(&self) -> Answer {
        self.answer(Method::ListSessions, &[])
    }

    fn search_sessions(&self, request: String) -> Answer {
        self.answer(Method::SearchSessions, &[json_text(&request, "the request")?])
    }

    fn search_events(&self, request: String) -> Answer {
        self.answer(Method::SearchEvents, &[json_text(&request, "the request")?])
    }

    fn list_candidates(&self, agent: String, query: String, limit: Option<u32>) -> Answer {
        let mut params = vec![json_text(&agent, "the agent")?, json_text(&query, "the query")?];
        params.extend(limit.map(|n| number(n.into())));
        self.answer(Method::ListCandidates, &params)
    }

    fn prepare(&self, agent: String, content: String, references: String, options: Option<String>) -> Answer {
        let mut params = vec![
            json_text(&agent, "the agent")?,
            json_text(&content, "the content")?,
            json_text(&references, "the references")?,
        ];
        if let Some(options) = options {
            params.push(json_text(&options, "the options")?);
        }
        self.answer(Method::Prepare, &params)
    }

    fn call(&self, method: String, params: String) -> Answer {
        let method = method_named(&method)?;
        if method == Method::Load {
            return Err(Error::invalid_argument("load takes entries here: use the archive's load").into());
        }
        self.answer(method, &params_text(&params)?)
    }
}

/// A reference text function (no archive needed) with one param given as JSON text.
fn call_static(method: Method, param: Json) -> Result<String, Error> {
    let request = Request::parse(method, &[param], Default::default())?;
    crate::api::call_static(&request).unwrap_or_else(|| Err(Error::invalid_argument("needs an archive")))
}

/// A JSON string's text (the URI functions answer ASCII).
fn unquoted(json: String) -> Result<String, Error> {
    match json_text(&json, "the answer")? {
        Json::String(s) => Ok(s.to_lossy().into_owned()),
        _ => Err(Error::invalid_argument("the answer is not a string")),
    }
}

impl wit::Guest for Component {
    type Archive = ComponentArchive;

    fn encode_session_reference_uri(session_id: String) -> Answer {
        let id = json_text(&session_id, "the session id")?;
        Ok(unquoted(call_static(Method::EncodeSessionReferenceUri, id)?)?)
    }

    fn decode_session_reference_uri(uri: String) -> Answer {
        Ok(call_static(Method::DecodeSessionReferenceUri, Json::str(&uri))?)
    }

    fn format_session_reference_mention(reference: String) -> Answer {
        let reference = json_text(&reference, "the reference")?;
        Ok(call_static(Method::FormatSessionReferenceMention, reference)?)
    }

    fn parse_session_reference_text(text: String) -> Answer {
        let text = json_text(&text, "the text")?;
        Ok(call_static(Method::ParseSessionReferenceText, text)?)
    }
}
