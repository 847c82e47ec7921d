//! `#[wasm_bindgen]` exports only: JSON text in, typed API call, JSON text out.
//!
//! Arguments and results cross as JSON text that the package's JavaScript wrapper writes with
//! `JSON.stringify` and reads with `JSON.parse`, so lone UTF-16 surrogates in logs arrive in
//! JavaScript exactly as DSH holds them. Failures are thrown as JavaScript `Error`s with a
//! stable `code` property; the wrapper turns them into its error classes. This face checks
//! argument shapes strictly ([`Dialect::Strict`]): unknown keys fail instead of being ignored.

use crate::api::{
    Archive, ArchiveOptions, Dialect, LoadCallOptions, Method, Request, call_static, method_named, options_text,
    params_text,
};
use crate::error::Error;
use crate::json::{Json, JsonObject};
use crate::reference::{SpillRequest, SpillStore};
use js_sys::Uint8Array;
use std::cell::{Cell, RefCell};
use wasm_bindgen::prelude::*;

impl From<Error> for JsValue {
    fn from(error: Error) -> JsValue {
        let js = js_sys::Error::new(&error.message);
        // Setting a property on a fresh Error object cannot fail.
        let _ = js_sys::Reflect::set(&js, &JsValue::from_str("code"), &JsValue::from_str(error.code.as_str()));
        js.into()
    }
}

/// One WebAssembly page.
const PAGE_BYTES: usize = 64 * 1024;

/// The most one headroom block takes (64 MiB): what the last block leaves unused stays
/// allocated, and past half a GiB blocks of 64 MiB still keep the grows to a few dozen.
const MAX_HEADROOM_PAGES: usize = 1024;

thread_local! {
    /// The memory's size in pages after the last [`keep_headroom`].
    static PAGES_SEEN: Cell<usize> = const { Cell::new(0) };
}

/// Makes memory grow by at least an eighth at a time. The allocator asks the engine for only
/// what one allocation lacks, so a load of 4,000 small logs grew memory 629 times, a page at a
/// time, and in V8 such a load took quadratic time: 8,000 logs took 11–19 s in Node, with most
/// of it in `memory.grow` and garbage collection, and each log's step twice as slow at the end
/// as at the start. When memory grew since the last call, a block of an eighth of it is
/// allocated and freed at once: one grow, and the free space it leaves serves the allocations
/// after it (8,000 logs then load in 2.3 s, 16,000 in 4.4 s). Memory never shrinks, so an
/// eighth, at most [`MAX_HEADROOM_PAGES`], keeps what may stay unused small.
fn keep_headroom() {
    let pages = core::arch::wasm32::memory_size(0);
    if pages > PAGES_SEEN.get() {
        // Near the 4 GiB wall the block may not fit: then memory just grows as it did.
        let mut block = Vec::<u8>::new();
        let _ = block.try_reserve_exact((pages / 8).min(MAX_HEADROOM_PAGES) * PAGE_BYTES);
        drop(block);
        PAGES_SEEN.set(core::arch::wasm32::memory_size(0));
    }
}

/// Loaded sessions and everything DSH's query, search and reference services answer over them.
#[wasm_bindgen]
pub struct WasmArchive {
    archive: Archive,
}

#[wasm_bindgen]
impl WasmArchive {
    /// An empty archive with `{tokenizer?, limits?}` given as JSON text.
    #[wasm_bindgen(constructor)]
    pub fn new(options_json: &str) -> Result<WasmArchive, JsValue> {
        let options = ArchiveOptions::from_json(options_text(options_json)?.as_ref())?;
        Ok(WasmArchive {
            archive: Archive::new(options),
        })
    }

    /// Calls a method of the JSON-RPC table with its by-position params as JSON text; returns
    /// the result as JSON text.
    pub fn call(&mut self, method_name: &str, params_json: &str) -> Result<String, JsValue> {
        let method = method_named(method_name)?;
        if method == Method::Load {
            return Err(Error::invalid_argument("load takes entries here: use loadBegin / loadAdd").into());
        }
        let params = params_text(params_json)?;
        let request = Request::parse(method, &params, self.archive.parse_context(Dialect::Strict))?;
        Ok(self.archive.call(request)?)
    }

    /// Starts a staged load with `{strict?}` as JSON text, discarding one under way.
    #[wasm_bindgen(js_name = loadBegin)]
    pub fn load_begin(&mut self, options_json: &str) -> Result<(), JsValue> {
        let options = options_text(options_json)?;
        let options = LoadCallOptions::from_json(options.as_ref(), &self.archive.options().load, false)?;
        self.archive.begin_load(options);
        Ok(())
    }

    /// Adds one entry (path with `/` separators, bytes) to the staged load.
    #[wasm_bindgen(js_name = loadAdd)]
    pub fn load_add(&mut self, path: String, bytes: &Uint8Array) -> Result<(), JsValue> {
        self.archive.add_entry(path, bytes.to_vec())?;
        keep_headroom();
        Ok(())
    }

    /// Offers one entry by path and size (a BigInt), with its first bytes if asked for them;
    /// returns what the load needs of it now: `"nothing"` (staged; its bytes are asked for by
    /// a step's `need`), `"head"` (offer it again with its first bytes) or `"bytes"` (add it
    /// with `loadAdd`).
    #[wasm_bindgen(js_name = loadDefer)]
    pub fn load_defer(&mut self, path: String, size: u64, head: Option<Uint8Array>) -> Result<String, JsValue> {
        let needs = self.archive.defer_entry(path, size, head.map(|head| head.to_vec()))?;
        serde_json::to_string(&needs).map_err(|e| Error::invalid_argument(e.to_string()).into())
    }

    /// Does the next piece of the staged load; returns `{done, bytesDone, bytesTotal,
    /// sessionsDone, sessionsTotal, need?: {entry, path, size}}` as JSON text.
    #[wasm_bindgen(js_name = loadStep)]
    pub fn load_step(&mut self) -> Result<String, JsValue> {
        let step = self.archive.step_load()?;
        keep_headroom();
        serde_json::to_string(&step).map_err(|e| Error::invalid_argument(e.to_string()).into())
    }

    /// Supplies the bytes of the entry a step's `need` named.
    #[wasm_bindgen(js_name = loadSupply)]
    pub fn load_supply(&mut self, entry: usize, bytes: &Uint8Array) -> Result<(), JsValue> {
        self.archive.supply_entry(entry, bytes.to_vec())?;
        keep_headroom();
        Ok(())
    }

    /// The deferred entries the staged load has yet to read, in its order, as JSON text (an
    /// array of entry numbers): what helper instances may read ahead.
    #[wasm_bindgen(js_name = loadAhead)]
    pub fn load_ahead(&mut self) -> Result<String, JsValue> {
        let entries = self.archive.entries_ahead()?;
        serde_json::to_string(&entries).map_err(|e| Error::invalid_argument(e.to_string()).into())
    }

    /// How a helper reads `entry`'s log as this load would: the ticket for `readLogForTransfer`.
    #[wasm_bindgen(js_name = loadTicket)]
    pub fn load_ticket(&mut self, entry: usize) -> Result<Vec<u8>, JsValue> {
        Ok(self.archive.entry_ticket(entry)?)
    }

    /// Supplies the entry a step's `need` named as a helper read it (`readLogForTransfer`);
    /// `false`: refused, supply its bytes with `loadSupply` instead.
    #[wasm_bindgen(js_name = loadSupplyRead)]
    pub fn load_supply_read(&mut self, entry: usize, read: Vec<u8>) -> Result<bool, JsValue> {
        let taken = self.archive.supply_read_entry(entry, read)?;
        keep_headroom();
        Ok(taken)
    }

    /// Reads `entry`'s log here, ahead of the load, while a helper reads the one it needs;
    /// `false`: the read failed, supply the entry's bytes when the load needs it.
    #[wasm_bindgen(js_name = loadReadAhead)]
    pub fn load_read_ahead(&mut self, entry: usize, bytes: &[u8]) -> Result<bool, JsValue> {
        let read = self.archive.read_entry_ahead(entry, bytes)?;
        keep_headroom();
        Ok(read)
    }

    /// Supplies the entry a step's `need` named as `loadReadAhead` read it; `false`: refused,
    /// supply its bytes with `loadSupply` instead.
    #[wasm_bindgen(js_name = loadSupplyReadAhead)]
    pub fn load_supply_read_ahead(&mut self, entry: usize) -> Result<bool, JsValue> {
        Ok(self.archive.supply_read_ahead(entry)?)
    }

    /// Says the host could not read the entry a step's `need` named: that log fails.
    #[wasm_bindgen(js_name = loadSupplyFailed)]
    pub fn load_supply_failed(&mut self, entry: usize, message: &str) -> Result<(), JsValue> {
        Ok(self.archive.fail_entry(entry, message)?)
    }

    /// Publishes the staged load (all or nothing); returns the load report as JSON text.
    #[wasm_bindgen(js_name = loadCommit)]
    pub fn load_commit(&mut self) -> Result<String, JsValue> {
        let report = self.archive.commit_load()?;
        serde_json::to_string(&report).map_err(|e| Error::invalid_argument(e.to_string()).into())
    }

    /// Drops the staged load; nothing of it is published.
    #[wasm_bindgen(js_name = loadAbort)]
    pub fn load_abort(&mut self) {
        self.archive.abort_load();
    }

    /// Starts listing a lazy source's logs by their headers, discarding a listing under way.
    #[wasm_bindgen(js_name = listBegin)]
    pub fn list_begin(&mut self) {
        self.archive.begin_listing();
    }

    /// Takes the header of one log (path with `/` separators, bytes); the bytes are dropped.
    /// With `whole` false the bytes are a prefix of the log: `false` back asks for all of it.
    #[wasm_bindgen(js_name = listAdd)]
    pub fn list_add(&mut self, path: &str, bytes: &Uint8Array, whole: bool) -> Result<bool, JsValue> {
        let whole_enough = self.archive.list_entry(path, bytes.to_vec(), whole)?;
        keep_headroom();
        Ok(whole_enough)
    }

    /// Publishes the listing; returns `{sessions: [{sessionId, path, outcome}], failures}` as
    /// JSON text.
    #[wasm_bindgen(js_name = listCommit)]
    pub fn list_commit(&mut self) -> Result<String, JsValue> {
        let report = self.archive.commit_listing()?;
        serde_json::to_string(&report).map_err(|e| Error::invalid_argument(e.to_string()).into())
    }

    /// For the ids in `ids_json` (a JSON array of strings, or `null` for every one) still
    /// listed from their headers only: `[{sessionId, paths}]` as JSON text, the paths a load
    /// of which brings each in.
    #[wasm_bindgen(js_name = listedPaths)]
    pub fn listed_paths(&self, ids_json: &str) -> Result<String, JsValue> {
        // The ids arrive as JavaScript wrote them (lone surrogates too); the corpus keys them lossily.
        let ids = match options_text(ids_json)? {
            None => None,
            Some(Json::Array(ids)) => Some(
                ids.iter()
                    .map(|id| id.as_js_string().map(|id| id.to_lossy().into_owned()))
                    .collect::<Option<Vec<String>>>()
                    .ok_or_else(|| Error::invalid_argument("listedPaths ids must be strings"))?,
            ),
            Some(_) => return Err(Error::invalid_argument("listedPaths ids must be an array or null").into()),
        };
        let listed: Vec<serde_json::Value> = self
            .archive
            .listed_paths(ids.as_deref())
            .into_iter()
            .map(|(id, paths)| serde_json::json!({ "sessionId": id, "paths": paths }))
            .collect();
        Ok(serde_json::Value::Array(listed).to_string())
    }

    /// Marks a listed session whose logs could not be read from the source (`SESSION_LOAD_IO`
    /// with `message`): it stays listed and reads of it fail with
    /// `SESSION_QUERY_PERSISTENCE_FAILED`.
    #[wasm_bindgen(js_name = failListed)]
    pub fn fail_listed(&mut self, id: &str, message: &str) {
        let error = Error::new(crate::error::ErrorCode::LoadIo, message);
        self.archive.fail_listed(id, &error);
    }

    /// `prepare(agent, content, references, options?)` as JSON text. Returns `{result, spills}`:
    /// the prepare result and, when `collect_spills` (the caller has a spill store), each
    /// truncated source's complete snapshot for it (`{reference, sessionId, label,
    /// capturedThroughSeq, snapshot}`). Without a store none is built: a long source's complete
    /// snapshot is all of its messages.
    pub fn prepare(&mut self, params_json: &str, collect_spills: bool) -> Result<String, JsValue> {
        let params = params_text(params_json)?;
        let request = Request::parse(Method::Prepare, &params, self.archive.parse_context(Dialect::Strict))?;
        let Request::Prepare {
            agent,
            content,
            references,
            settings,
        } = request
        else {
            return Err(Error::invalid_argument("not a prepare request").into());
        };
        let store = collect_spills.then(CollectingStore::default);
        let spill_store = store.as_ref().map(|store| store as &dyn SpillStore);
        let prepared = self
            .archive
            .prepare(&agent, &content, &references, &settings, spill_store)?;
        let spills = store.map(|store| store.spills.into_inner()).unwrap_or_default();
        let mut answer = JsonObject::new();
        answer.insert("result", prepared.to_json());
        answer.insert("spills", Json::Array(spills));
        Ok(Json::Object(answer).to_js_string())
    }

    /// Builds the search index by about `budget` bytes of document text, handing jobs to up
    /// to `slots` more helpers (`indexTakeJob`); returns `{sessionsDone, sessionsTotal,
    /// eventsDone, eventsTotal, done, waiting}` as JSON text. Call until `done` to show
    /// progress on a long first build (a search would otherwise build it whole); searches in
    /// between answer without finishing it. `waiting`: only helpers' segments are left.
    #[wasm_bindgen(js_name = indexStep)]
    pub fn index_step(&mut self, budget: f64, slots: Option<u32>) -> Result<String, JsValue> {
        let budget = if budget.is_finite() && budget >= 1.0 {
            budget as u64
        } else {
            1
        };
        let slots = slots.unwrap_or(0) as usize;
        let progress = self.archive.index_step_handing_out(budget, slots)?;
        keep_headroom();
        serde_json::to_string(&progress).map_err(|e| Error::invalid_argument(e.to_string()).into())
    }

    /// The next index job for a helper (`buildIndexSegment`), or `undefined`.
    #[wasm_bindgen(js_name = indexTakeJob)]
    pub fn index_take_job(&mut self) -> Option<Vec<u8>> {
        self.archive.take_index_job()
    }

    /// Adopts the segment a helper built for a job taken here; `false`: refused (the job is
    /// built here instead).
    #[wasm_bindgen(js_name = indexSupplySegment)]
    pub fn index_supply_segment(&mut self, segment: &[u8]) -> bool {
        let taken = self.archive.supply_index_segment(segment);
        keep_headroom();
        taken
    }

    /// Takes back every job handed out: the helpers are gone.
    #[wasm_bindgen(js_name = indexReclaimJobs)]
    pub fn index_reclaim_jobs(&mut self) {
        self.archive.reclaim_index_jobs();
    }

    /// The built search index as bytes (e.g. to keep in IndexedDB or OPFS).
    #[wasm_bindgen(js_name = exportIndex)]
    pub fn export_index(&mut self) -> Result<Vec<u8>, JsValue> {
        Ok(self.archive.export_index()?)
    }

    /// Reopens an index exported over the same archives; throws `SESSION_QUERY_INDEX_FAILED`
    /// if it does not match what is loaded.
    #[wasm_bindgen(js_name = importIndex)]
    pub fn import_index(&mut self, bytes: &[u8]) -> Result<(), JsValue> {
        Ok(self.archive.import_index(bytes)?)
    }
}

/// Reads one log's bytes as a load's ticket (`loadTicket`) says, in any instance (a helper
/// reading logs in parallel); returns what it read, for the load's `loadSupplyRead`, as a view
/// from the start of `spare` when it fits there, else of a new buffer with room to spare.
/// `spare` is a buffer of an earlier answer the load handed back: a new buffer is fresh memory
/// to the system, and a load of a hundred megabytes of text would fault in as many (about a
/// sixth of a helper's time in Chromium).
#[wasm_bindgen(js_name = readLogForTransfer)]
pub fn read_log_for_transfer(
    ticket: &[u8],
    bytes: &[u8],
    spare: Option<js_sys::ArrayBuffer>,
) -> Result<Uint8Array, JsValue> {
    let read = crate::api::read_log_for_transfer(ticket, bytes)?;
    Ok(copy_into_spare(read.parts(), spare))
}

/// `parts` copied one after the other to the start of `spare` if they fit, else of a new
/// buffer a quarter larger (so that the next, slightly larger log fits too); the view of them.
fn copy_into_spare(parts: [&[u8]; 2], spare: Option<js_sys::ArrayBuffer>) -> Uint8Array {
    let length = parts.iter().map(|part| part.len()).sum::<usize>();
    let length = u32::try_from(length).unwrap_or(u32::MAX);
    let buffer = match spare {
        Some(spare) if spare.byte_length() >= length => Uint8Array::new(&spare),
        _ => Uint8Array::new_with_length(length.saturating_add(length / 4)),
    };
    let mut at = 0;
    for part in parts {
        let end = at + u32::try_from(part.len()).unwrap_or(u32::MAX);
        buffer.subarray(at, end).copy_from(part);
        at = end;
    }
    buffer.subarray(0, length)
}

/// Builds the index segment of a job an archive handed out (`indexTakeJob`), in any instance
/// (a helper); returns it for the archive's `indexSupplySegment`.
#[wasm_bindgen(js_name = buildIndexSegment)]
pub fn build_index_segment(job: &[u8]) -> Result<Vec<u8>, JsValue> {
    Ok(crate::api::build_index_segment(job)?)
}

/// One round of a warm-up (`SessionArchive.warmUp`): loads `log`, a log at `path` as a dropped
/// folder gives it, into a throwaway archive, so the engine optimises a load's hot functions
/// before a real load. Throws the load's error unless the log loads whole.
#[wasm_bindgen(js_name = warmUpRound)]
pub fn warm_up_round(round: u32, path: &str, log: &[u8]) -> Result<(), JsValue> {
    Ok(crate::api::warm_up_round(round, path, log)?)
}

/// The reference text functions (`encodeSessionReferenceUri`, `decodeSessionReferenceUri`,
/// `formatSessionReferenceMention`, `parseSessionReferenceText`), which need no archive.
#[wasm_bindgen(js_name = callStatic)]
pub fn call_static_method(method_name: &str, params_json: &str) -> Result<String, JsValue> {
    let method = method_named(method_name)?;
    if !method.is_static() {
        return Err(Error::invalid_argument(format!("{method_name} needs an archive")).into());
    }
    let params = params_text(params_json)?;
    let request = Request::parse(method, &params, Default::default())?;
    match call_static(&request) {
        Some(answer) => Ok(answer?),
        None => Err(Error::invalid_argument(format!("{method_name} needs an archive")).into()),
    }
}

/// The method table as JSON text: `[{name, params}]` in the README's order.
#[wasm_bindgen]
pub fn methods() -> String {
    let table: Vec<Json> = Method::ALL
        .iter()
        .map(|m| {
            let mut entry = JsonObject::new();
            entry.insert("name", Json::str(m.name()));
            entry.insert("params", Json::Array(m.params().iter().map(|p| Json::str(p)).collect()));
            Json::Object(entry)
        })
        .collect();
    Json::Array(table).to_js_string()
}

/// A spill store that keeps each truncated source's complete snapshot for the JavaScript side,
/// whose store is asynchronous and so cannot answer inside the call.
#[derive(Default)]
struct CollectingStore {
    spills: RefCell<Vec<Json>>,
}

impl SpillStore for CollectingStore {
    fn spill(&self, request: &SpillRequest<'_>) -> Result<String, String> {
        let mut entry = JsonObject::new();
        entry.insert("reference", Json::Number(request.input_index as f64));
        entry.insert("sessionId", Json::String(request.session_id.clone()));
        entry.insert("label", Json::String(request.label.clone()));
        let seq = request
            .captured_through_seq
            .map_or(Json::Null, |s| Json::Number(s as f64));
        entry.insert("capturedThroughSeq", seq);
        entry.insert("snapshot", request.snapshot.clone());
        self.spills.borrow_mut().push(Json::Object(entry));
        // Reported as no store until the wrapper's store answers and sets the locator.
        Err(crate::reference::NO_SPILL_STORE.to_owned())
    }
}
