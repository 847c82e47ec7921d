//! The library's one typed API: an [`Archive`] (a corpus and its search engine) with DSH's
//! methods, the table of those methods ([`Method`]) and their typed requests ([`Request`]),
//! which every face (JSON-RPC, WebAssembly, the command line) parses once and calls.
//!
//! ```
//! use dsh_session_search::api::{Archive, ArchiveOptions, Dialect, Method, ParseContext, Request};
//! use dsh_session_search::json::Json;
//!
//! let mut archive = Archive::new(ArchiveOptions::default());
//! let params = Json::parse(r#"["nope"]"#, Default::default()).expect("JSON");
//! let request = Request::parse(Method::ListEvents, params.as_array().unwrap_or_default(), ParseContext::default())
//!     .expect("a valid request");
//! let error = archive.call(request).expect_err("no such session");
//! assert_eq!(error.code.as_str(), "SESSION_QUERY_SESSION_NOT_FOUND");
//! ```

pub mod coerce;
#[cfg(not(target_arch = "wasm32"))]
mod directory;
pub mod methods;
pub mod options;
mod staged;
mod warm_up;

pub use crate::search::tantivy::build_segment as build_index_segment;
pub use coerce::{Dialect, json_text, method_named, options_text, params_text};
pub use methods::{AgentArg, Method, ParseContext, Request, call_static};
pub use options::{ArchiveOptions, LoadCallOptions, PrepareSettings};
pub use staged::{LoadStep, NeededEntry, read_log_for_transfer};
pub use warm_up::warm_up_round;

use crate::archive::{Input, LoadOptions};
use crate::corpus::{Corpus, ListingJob, ListingReport, LoadReport, SessionRecord};
use crate::error::{Error, ErrorCode};
use crate::json::{JsString, Json};
use crate::reference::{self, CancellationToken, PreparedReferences, SpillStore};
use crate::search::backend::{AnyProvider, SearchOptions};
use crate::search::build::IndexProgress;
use crate::search::engine::{EventSearchPage, SearchEngine, SessionSearchPage};
use crate::search::request::{EventSearchRequest, SessionSearchRequest};

/// Loaded sessions and everything DSH's query, search and reference services answer over them.
pub struct Archive {
    corpus: Corpus,
    options: ArchiveOptions,
    /// Built on the first search, then kept up to date incrementally.
    search: Option<SearchEngine<AnyProvider>>,
    /// A load under way (the staged, step-by-step load of the WebAssembly face).
    staged: Option<staged::StagedLoad>,
    listing: Option<ListingJob>,
    /// The directory [`Archive::list_directory`] listed, which `load_listed` reads from.
    #[cfg(not(target_arch = "wasm32"))]
    listed_root: Option<std::path::PathBuf>,
}

/// `appendLive`'s answer: `{sessionId, eventCount}`.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppendedLive {
    /// The live session.
    pub session_id: String,
    /// Its events after the append.
    pub event_count: usize,
}

impl Default for Archive {
    fn default() -> Self {
        Archive::new(ArchiveOptions::default())
    }
}

impl Archive {
    /// An empty archive.
    pub fn new(options: ArchiveOptions) -> Self {
        Archive {
            corpus: Corpus::new(),
            options,
            search: None,
            staged: None,
            listing: None,
            #[cfg(not(target_arch = "wasm32"))]
            listed_root: None,
        }
    }

    /// The corpus every read answers from.
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// The archive's settings.
    pub fn options(&self) -> &ArchiveOptions {
        &self.options
    }

    /// What a request is parsed against here, in `dialect`.
    pub fn parse_context(&self, dialect: Dialect) -> ParseContext<'_> {
        ParseContext {
            dialect,
            load: Some(&self.options.load),
            search: self.options.search.config,
        }
    }

    /// Parses and answers one call by name (the faces that receive JSON use this).
    pub fn call_json(&mut self, method: &str, params: &[Json], dialect: Dialect) -> Result<String, Error> {
        let method =
            Method::parse(method).ok_or_else(|| Error::invalid_argument(format!("unknown method {method:?}")))?;
        let request = Request::parse(method, params, self.parse_context(dialect))?;
        self.call(request)
    }

    /// Loads inputs with this archive's limits and `strict` (see [`Corpus::load`]).
    pub fn load(&mut self, inputs: Vec<Input>, strict: bool) -> Result<LoadReport, Error> {
        let options = LoadOptions {
            strict,
            ..self.options.load
        };
        self.corpus.load(inputs, &options)
    }

    /// Loads inputs with explicit options, reporting progress after each log.
    pub fn load_with_progress(
        &mut self,
        inputs: Vec<Input>,
        options: &LoadOptions,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<LoadReport, Error> {
        self.corpus.load_with_progress(inputs, options, progress)
    }

    /// The JSON-RPC `load`: paths on disk; options may also change the search configuration
    /// (then the index is rebuilt on the next search).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn load_paths(&mut self, paths: &[String], options: LoadCallOptions) -> Result<LoadReport, Error> {
        if let Some(search) = options.search {
            self.set_search_options(search);
        }
        let inputs = paths.iter().map(|p| Input::Path(p.into())).collect();
        self.corpus.load(inputs, &options.load)
    }

    /// Paths need a file system: in WebAssembly, loads go through [`Archive::begin_load`].
    #[cfg(target_arch = "wasm32")]
    pub fn load_paths(&mut self, _paths: &[String], _options: LoadCallOptions) -> Result<LoadReport, Error> {
        Err(Error::invalid_argument(
            "load by path needs a file system; hand the files over as entries",
        ))
    }

    /// Changes the search configuration; a different backend or tokenizer drops the index,
    /// which is rebuilt on the next search.
    pub fn set_search_options(&mut self, search: SearchOptions) {
        let current = &self.options.search;
        if search.backend != current.backend || search.tokenizer != current.tokenizer {
            self.options.search = search;
            self.search = None;
        }
    }

    /// Adds a live session (it shadows a persisted copy of the same id).
    pub fn add_live(&mut self, header: &Json, events: Vec<Json>) -> Result<SessionRecord, Error> {
        self.corpus.add_live(header, events)
    }

    /// Appends events to a live session, all or nothing.
    pub fn append_live(&mut self, session_id: &str, events: Vec<Json>) -> Result<AppendedLive, Error> {
        let event_count = self.corpus.append_live(session_id, events)?;
        Ok(AppendedLive {
            session_id: session_id.to_owned(),
            event_count,
        })
    }

    /// The search engine (built on first use) and the corpus it answers over.
    /// Starts listing a lazy source (discarding a listing under way): each log added with
    /// [`Archive::list_entry`] gives its header only; [`Archive::commit_listing`] publishes.
    pub fn begin_listing(&mut self) {
        self.listing = Some(ListingJob::new(&self.options.load));
    }

    /// Takes the header of one log of the listing under way (path as for
    /// [`Archive::add_entry`]); its bytes are dropped before this returns. With `whole` false
    /// `bytes` is a prefix of the log; `false` back means it did not hold the header (add the
    /// whole log then).
    pub fn list_entry(&mut self, path: &str, bytes: Vec<u8>, whole: bool) -> Result<bool, Error> {
        let listing = self
            .listing
            .as_mut()
            .ok_or_else(|| Error::invalid_argument("no listing is under way: begin one first"))?;
        Ok(listing.add(path.to_owned(), bytes, whole))
    }

    /// Publishes the listing under way: its sessions list, and reads of them wait for a load of
    /// their paths ([`Archive::listed_paths`]).
    pub fn commit_listing(&mut self) -> Result<ListingReport, Error> {
        let listing = self
            .listing
            .take()
            .ok_or_else(|| Error::invalid_argument("no listing is under way"))?;
        Ok(self.corpus.commit_listing(listing))
    }

    /// For each of `ids` (every listed id when `None`) still listed from its header only, the
    /// source paths a load of which brings it in.
    pub fn listed_paths(&self, ids: Option<&[String]>) -> Vec<(String, Vec<String>)> {
        let listed = |id: &String| self.corpus.listed_paths(id).map(|paths| (id.clone(), paths.to_vec()));
        match ids {
            Some(ids) => ids.iter().filter_map(listed).collect(),
            None => self.corpus.listed_ids().filter_map(listed).collect(),
        }
    }

    /// Marks a listed session whose logs could not be read (`error`, e.g. the source's read
    /// failed, or a load of its paths did not bring it in): it stays listed, reads of it fail.
    pub fn fail_listed(&mut self, id: &str, error: &Error) {
        self.corpus.fail_listed(id, error);
    }

    /// Search and candidates look at every session: none may be listed from its header only.
    fn require_all_read(&self) -> Result<(), Error> {
        match self.corpus.listed_len() {
            0 => Ok(()),
            n => Err(Error::new(
                ErrorCode::QueryPersistenceFailed,
                format!("{n} sessions are listed from their headers only: load their logs first"),
            )),
        }
    }

    fn searcher(&mut self) -> Result<(&mut SearchEngine<AnyProvider>, &Corpus), Error> {
        self.require_all_read()?;
        if self.search.as_ref().is_some_and(|engine| self.ids_short(engine)) {
            // Ids are never reused or wrapped: a fresh engine renumbers from 0, a cost spread
            // over the billions of documents indexed before it.
            self.search = None;
        }
        if self.search.is_none() {
            self.search = Some(self.options.search.engine()?);
        }
        match self.search.as_mut() {
            Some(engine) => Ok((engine, &self.corpus)),
            None => Err(Error::new(ErrorCode::QueryIndexFailed, "no search index")),
        }
    }

    /// Builds the search index, or brings it up to date, by about `budget` bytes of document
    /// text, and says how far it got: for faces that show progress on a long first build.
    /// Until a step reports `done`, searches do not finish the build: they read the sessions
    /// it has not published from the corpus, and answer as the finished index will.
    pub fn index_step(&mut self, budget: u64) -> Result<IndexProgress, Error> {
        self.index_step_handing_out(budget, 0)
    }

    /// [`index_step`](Self::index_step), handing documents to up to `slots` more helpers that
    /// build index segments in parallel: take each job with [`take_index_job`](Self::take_index_job),
    /// have [`build_index_segment`] run on it elsewhere, and supply the answer. A step says
    /// `waiting` when the build only waits for helpers; whatever a helper does not answer is
    /// built here when the index must be complete.
    pub fn index_step_handing_out(&mut self, budget: u64, slots: usize) -> Result<IndexProgress, Error> {
        let (engine, corpus) = self.searcher()?;
        engine.index_step_handing_out(corpus, budget, slots)
    }

    /// The next job for a helper, as bytes; `None` when no job is ready.
    pub fn take_index_job(&mut self) -> Option<Vec<u8>> {
        self.search.as_mut()?.take_job()
    }

    /// Adopts a segment a helper built ([`build_index_segment`]) for a job taken here; `false`
    /// when it is not what an awaited job asked for (the job is then built here).
    pub fn supply_index_segment(&mut self, bytes: &[u8]) -> bool {
        self.search.as_mut().is_some_and(|engine| engine.supply_segment(bytes))
    }

    /// Takes back every job handed out: the helpers are gone, and the build does it here.
    pub fn reclaim_index_jobs(&mut self) {
        if let Some(engine) = self.search.as_mut() {
            engine.reclaim_jobs();
        }
    }

    /// Whether `engine` might run out of document ids re-indexing everything loaded (checked
    /// in full only once fewer than a billion are left).
    fn ids_short(&self, engine: &SearchEngine<AnyProvider>) -> bool {
        const PLENTY: u64 = 1 << 30;
        let left = engine.ids_left();
        left < PLENTY && left < self.corpus.sources().map(|(_, s)| s.log.events.len() as u64).sum()
    }

    /// DSH's `searchSessions`.
    pub fn search_sessions(&mut self, request: &SessionSearchRequest) -> Result<SessionSearchPage, Error> {
        let (engine, corpus) = self.searcher()?;
        engine.search_sessions(corpus, request)
    }

    /// DSH's `searchEvents`.
    pub fn search_events(&mut self, request: &EventSearchRequest) -> Result<EventSearchPage, Error> {
        let (engine, corpus) = self.searcher()?;
        engine.search_events(corpus, request)
    }

    /// The built search index as bytes (tantivy), to reopen over the same corpus with
    /// [`Archive::import_index`] without re-indexing.
    pub fn export_index(&mut self) -> Result<Vec<u8>, Error> {
        let (engine, corpus) = self.searcher()?;
        engine.export_snapshot(corpus)
    }

    /// Reopens an exported index; refused (and nothing changes) unless it was built by this
    /// version, with this archive's tokenizer, over exactly the loaded corpus.
    pub fn import_index(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.require_all_read()?;
        let search = &self.options.search;
        let engine = SearchEngine::<AnyProvider>::import_snapshot(bytes, &self.corpus, search.config)?;
        if engine.tokenizer() != search.tokenizer {
            return Err(Error::new(
                ErrorCode::QueryIndexFailed,
                "the snapshot was built with another tokenizer",
            ));
        }
        self.options.search.backend = crate::search::backend::Backend::Tantivy;
        self.search = Some(engine);
        Ok(())
    }

    /// DSH's `listCandidates`.
    pub fn list_candidates(
        &self,
        agent: &AgentArg,
        query: &JsString,
        limit: Option<u64>,
        cancelled: bool,
    ) -> Result<Vec<reference::Candidate>, Error> {
        self.require_all_read()?;
        let token = cancelled_token(cancelled);
        let agent = agent.resolve(&self.corpus);
        reference::list_candidates_cancellable(&self.corpus, &agent, query, limit, token.as_ref())
    }

    /// DSH's `prepare`, with an optional spill store for truncated sources.
    pub fn prepare(
        &self,
        agent: &AgentArg,
        content: &Json,
        references: &[Json],
        settings: &PrepareSettings,
        spill: Option<&dyn SpillStore>,
    ) -> Result<PreparedReferences, Error> {
        let token = cancelled_token(settings.cancelled);
        let agent = agent.resolve(&self.corpus);
        let options = settings.options(spill, token.as_ref());
        reference::prepare_values(&self.corpus, &agent, content, references, &options)
    }
}

/// An already-cancelled token for `cancelled: true`.
fn cancelled_token(cancelled: bool) -> Option<CancellationToken> {
    cancelled.then(|| {
        let token = CancellationToken::new();
        token.cancel();
        token
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(archive: &mut Archive, query: &str) -> String {
        let params = Json::parse(&format!(r#"[{{"query":{query:?}}}]"#), Default::default()).expect("json");
        archive
            .call_json("searchSessions", params.as_array().unwrap_or_default(), Dialect::Dsh)
            .expect("searches")
    }

    #[test]
    fn an_engine_short_of_document_ids_is_replaced_before_it_runs_out() {
        let sample = include_bytes!("../../www/sample/sample-archive.zip").to_vec();
        let mut archive = Archive::default();
        let input = Input::File {
            name: "sample.zip".into(),
            bytes: sample,
        };
        archive.load(vec![input], false).expect("loads");
        let before = search(&mut archive, "error");
        let engine = archive.search.as_mut().expect("built");
        engine.leave_ids(10);
        // A session that changes must be re-indexed under new ids, more than are left.
        let header = Json::parse(
            r#"{"version":0,"id":"live","createdAt":1,"delegationDepth":0}"#,
            Default::default(),
        );
        archive.add_live(&header.expect("json"), Vec::new()).expect("adds");
        assert_ne!(search(&mut archive, "error"), "", "answers");
        let engine = archive.search.as_ref().expect("rebuilt");
        assert!(
            engine.ids_left() > 1 << 31,
            "renumbered from zero: {} left",
            engine.ids_left()
        );
        let items = |page: &str| serde_json::from_str::<serde_json::Value>(page).expect("json")["items"].clone();
        assert_eq!(items(&search(&mut archive, "error")), items(&before));
    }
}
