//! The logical corpus: one record per session id, built from gathered log files with fault
//! isolation and a load report, plus DSH's exact reads over it.

use crate::archive::{self, Binding, Deferred, FileFailure, Input, InputSummary, LoadBudget, LoadOptions, LogFile};
use crate::error::{Error, ErrorCode};
use crate::json::Json;
use crate::log::transfer::{self, DecodeTicket};
use crate::log::{self, Encoding, SessionHeader, SessionLog};
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};

mod listed;
pub use listed::{ListedCopy, ListingJob, ListingReport};

/// Where a loaded session came from.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Origin {
    /// The input's label.
    pub input: String,
    /// The path inside the input.
    pub path: String,
}

/// One session in the corpus.
#[derive(Clone, Debug)]
pub struct SessionEntry {
    /// The validated log.
    pub log: SessionLog,
    /// Where it was read from.
    pub origin: Origin,
}

/// A session that loaded, as reported by `load`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadedSession {
    /// The session id.
    pub session_id: String,
    /// Where it was read from.
    #[serde(flatten)]
    pub origin: Origin,
    /// How the file was encoded.
    pub encoding: Encoding,
    /// Events in the logical log, synthetic closers included.
    pub events: usize,
    /// Closing events added in memory for an interrupted last turn.
    pub synthetic_closers: usize,
    /// Bytes ignored at the end of the file as a torn tail.
    pub torn_bytes: u64,
    /// `added`, `replaced` (a longer copy of a known session) or `duplicate` (kept the known copy).
    pub outcome: &'static str,
}

/// A file or session that did not load, with its stable code.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadFailure {
    /// The input's label.
    pub input: String,
    /// The path inside the input.
    pub path: String,
    /// The session id, when the header could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The stable code.
    pub code: ErrorCode,
    /// What went wrong.
    pub message: String,
}

/// What one `load` call did, input by input and session by session.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadReport {
    /// One summary per input.
    pub inputs: Vec<InputSummary>,
    /// Sessions that loaded.
    pub sessions: Vec<LoadedSession>,
    /// Everything that failed; the rest loaded regardless.
    pub failures: Vec<LoadFailure>,
}

/// A listing record: DSH's `{header, live, persisted}`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// The session header.
    pub header: SessionHeader,
    /// Whether the session is live in this process.
    pub live: bool,
    /// Whether a stored copy was loaded.
    pub persisted: bool,
}

/// All loaded sessions, one per id.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    sessions: BTreeMap<String, SessionEntry>,
    /// Ids whose copies disagree on their headers; they stay out of the corpus.
    conflicted: BTreeSet<String>,
    /// Live sessions added by the host; they shadow loaded copies.
    live: BTreeMap<String, SessionLog>,
    /// Sessions whose header lists but whose log failed: listed like DSH lists them, and
    /// every read of them fails with DSH's code.
    unreadable: BTreeMap<String, (SessionHeader, Error)>,
    /// Sessions a lazy source listed from their headers, their logs not yet read: listed like
    /// loaded ones, read once a load of their files brings them in (see `listed.rs`).
    listed: BTreeMap<String, listed::ListedSession>,
    /// A stamp of this state, unique in the process (see [`Corpus::generation`]).
    generation: u64,
    session_generations: BTreeMap<String, u64>,
    /// Moves with a session's generation except when its events only grew at the end.
    session_lineages: BTreeMap<String, u64>,
}

/// How far a load has got: log bytes and logs read so far, of all gathered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadProgress {
    /// Bytes of the logs read so far (as stored: compressed for zstd logs).
    pub bytes_done: u64,
    /// Bytes of every gathered log.
    pub bytes_total: u64,
    /// Logs read so far.
    pub sessions_done: usize,
    /// Logs gathered.
    pub sessions_total: usize,
}

/// A load under way, not yet visible: inputs gathered into log files, read one log per
/// [`LoadJob::step`], published by [`Corpus::commit`] (or dropped, publishing nothing).
#[derive(Debug)]
pub struct LoadJob {
    options: LoadOptions,
    report: LoadReport,
    pending: std::vec::IntoIter<LogFile>,
    progress: LoadProgress,
    /// What is left of the load's decompression budget after gathering; logs spend the rest.
    budget: LoadBudget,
    read: Vec<(LogFile, SessionLog)>,
    unreadable: Vec<(SessionHeader, Error)>,
    /// A large log between the halves of its read (see [`LoadJob::step`]).
    framed: Option<(LogFile, log::FramedLog)>,
    /// The declared size of the next log and why its supplied bytes were refused: the next
    /// step fails it ([`LoadJob::supply`]).
    refused: Option<(u64, Error)>,
    /// How much more event text the logs in `read` may hold unpacked ([`UNPACKED_BYTES`] at
    /// first); a log past it is packed as it is read.
    unpacked_left: usize,
    /// The next log as another instance read it ([`LoadJob::supply_read`]): the next step
    /// takes it instead of reading the log.
    adopted: Option<(u64, SessionLog)>,
    /// Logs this instance read ahead of the load, by entry number ([`LoadJob::read_ahead`]),
    /// until the load reaches them ([`LoadJob::supply_read_ahead`]).
    read_ahead: HashMap<usize, transfer::Adopted>,
    /// Where each deferred log is among the gathered ones, by entry number: how a ticket finds
    /// its log without a scan ([`LoadJob::ticket`] is asked once for every log ahead).
    deferred_at: HashMap<usize, usize>,
    /// How many logs were gathered (`pending` holds the ones not yet taken, in order).
    gathered: usize,
}

impl LoadJob {
    /// Gathers the inputs' log files; nothing is parsed yet.
    pub fn new(inputs: Vec<Input>, options: &LoadOptions) -> LoadJob {
        let gathered = archive::gather(inputs, options);
        let report = LoadReport {
            inputs: gathered.inputs,
            failures: gathered.failures.into_iter().map(LoadFailure::of_file).collect(),
            ..LoadReport::default()
        };
        let progress = LoadProgress {
            bytes_total: gathered.logs.iter().map(LogFile::size).sum(),
            sessions_total: gathered.logs.len(),
            ..LoadProgress::default()
        };
        let deferred_at = (gathered.logs.iter().enumerate())
            .filter_map(|(at, file)| Some((file.deferred.as_ref()?.key, at)))
            .collect();
        LoadJob {
            options: *options,
            report,
            deferred_at,
            gathered: gathered.logs.len(),
            pending: gathered.logs.into_iter(),
            progress,
            budget: gathered.budget,
            read: Vec::new(),
            unreadable: Vec::new(),
            framed: None,
            refused: None,
            unpacked_left: UNPACKED_BYTES,
            adopted: None,
            read_ahead: HashMap::new(),
        }
    }

    /// How far the load has got.
    pub fn progress(&self) -> LoadProgress {
        self.progress
    }

    /// The deferred log the next step reads, whose bytes must be supplied first
    /// ([`LoadJob::supply`]); a step without them fails that log with `SESSION_LOAD_IO`.
    pub fn needed(&self) -> Option<(&Deferred, &LogFile)> {
        if self.framed.is_some() {
            return None;
        }
        let file = self.pending.as_slice().first()?;
        Some((file.deferred.as_ref()?, file))
    }

    /// Hands over the bytes of the log [`LoadJob::needed`] names by `key` (`Err`: the host
    /// could not read them). The next step reads them, or fails that log only if the host's
    /// read failed or the log refuses them ([`LogFile::take_supplied`]). Fails, changing
    /// nothing, when `key` is not the entry needed.
    pub fn supply(&mut self, key: usize, supplied: Result<Vec<u8>, Error>) -> Result<(), Error> {
        self.check_needed(key)?;
        let Some(file) = self.pending.as_mut_slice().first_mut() else {
            return Ok(());
        };
        // The next step fails the log instead of reading it.
        let size = file.size();
        self.refused = file.take_supplied(supplied).err().map(|error| (size, error));
        Ok(())
    }

    /// The deferred logs not yet read, in the order the load reads them (the one
    /// [`LoadJob::needed`] names first): what helpers may read ahead of the load.
    pub fn ahead(&self) -> impl Iterator<Item = usize> + '_ {
        let pending = self.pending.as_slice().iter();
        pending.filter_map(|file| Some(file.deferred.as_ref()?.key))
    }

    /// How a helper reads the deferred log `key` as this load would ([`transfer::read_for_transfer`]).
    pub fn ticket(&self, key: usize) -> Result<DecodeTicket, Error> {
        let file = self.pending_deferred(key)?;
        Ok(self.ticket_for(file))
    }

    fn ticket_for(&self, file: &LogFile) -> DecodeTicket {
        DecodeTicket {
            encoding: file.encoding,
            limits: self.options.limits,
            budget: self.budget.remaining(),
        }
    }

    fn pending_deferred(&self, key: usize) -> Result<&LogFile, Error> {
        let taken = self.gathered - self.pending.len();
        let at = self.deferred_at.get(&key).and_then(|at| at.checked_sub(taken));
        at.and_then(|at| self.pending.as_slice().get(at))
            .filter(|file| file.deferred.as_ref().is_some_and(|d| d.key == key))
            .ok_or_else(|| Error::invalid_argument(format!("entry {key} is no log this load has yet to read")))
    }

    /// Hands over the log [`LoadJob::needed`] names by `key` as a helper read it
    /// ([`transfer::read_for_transfer`]): `true` when the next step takes it as read;
    /// `false` when it is refused (another file's read, a header out of place, the load's
    /// budget spent), and the log's bytes must be supplied instead ([`LoadJob::supply`]), so
    /// that the load reads it itself and reports any failure as it always does. Fails,
    /// changing nothing, when `key` is not the entry needed.
    pub fn supply_read(&mut self, key: usize, read: Vec<u8>) -> Result<bool, Error> {
        self.check_needed(key)?;
        let Some(file) = self.pending.as_slice().first() else {
            return Ok(false);
        };
        let Some(deferred) = &file.deferred else {
            return Ok(false);
        };
        let ticket = self.ticket_for(file);
        let expected = transfer::Expected {
            size: deferred.size,
            head: &deferred.head,
            ticket: &ticket,
        };
        match transfer::adopt(read, &expected) {
            Some(adopted) => Ok(self.take_read(adopted)),
            None => Ok(false),
        }
    }

    /// Reads the deferred log `key` now, ahead of the load and in this instance, as a helper
    /// would, and keeps it until the load reaches it ([`LoadJob::supply_read_ahead`]): `false`
    /// when its bytes are not the declared file's or its read fails (the load then reads the
    /// log itself when it gets there, and reports the failure as it always does). A log read
    /// so is neither written nor checked as a helper's read is.
    pub fn read_ahead(&mut self, key: usize, bytes: &[u8]) -> Result<bool, Error> {
        let file = self.pending_deferred(key)?;
        if file.deferred.as_ref().is_none_or(|d| d.check(bytes).is_err()) {
            return Ok(false);
        }
        let Ok(read) = transfer::read_ahead(&self.ticket_for(file), bytes) else {
            return Ok(false);
        };
        self.read_ahead.insert(key, read);
        Ok(true)
    }

    /// [`LoadJob::supply_read`] for a log [`LoadJob::read_ahead`] kept: `false` when there is
    /// none or it is refused, and the log's bytes must be supplied instead.
    pub fn supply_read_ahead(&mut self, key: usize) -> Result<bool, Error> {
        self.check_needed(key)?;
        match self.read_ahead.remove(&key) {
            Some(read) => Ok(self.take_read(read)),
            None => Ok(false),
        }
    }

    /// Takes `read` as the next log's, unless its header is out of place or it decompressed
    /// more than the load's budget has left.
    fn take_read(&mut self, read: transfer::Adopted) -> bool {
        let Some(file) = self.pending.as_mut_slice().first_mut() else {
            return false;
        };
        let Some(deferred) = &file.deferred else {
            return false;
        };
        let size = deferred.size;
        if check_header_location(file, &read.log.header).is_err() || self.budget.spend(read.decompressed).is_err() {
            return false;
        }
        file.deferred = None;
        self.adopted = Some((size, read.log));
        true
    }

    fn count(&mut self, size: u64) {
        self.progress.bytes_done += size;
        self.progress.sessions_done += 1;
    }

    /// Fails unless `key` is the entry [`LoadJob::needed`] names.
    fn check_needed(&self, key: usize) -> Result<(), Error> {
        match self.needed() {
            Some((deferred, _)) if deferred.key == key => Ok(()),
            Some((deferred, file)) => {
                let message = format!(
                    "entry {key} is not needed now: entry {} ({}) is",
                    deferred.key, file.path
                );
                Err(Error::invalid_argument(message))
            }
            None => Err(Error::invalid_argument(format!("entry {key} is not needed now"))),
        }
    }

    /// Reads the next log, or half of a large one (its framing and parsing, then its checks
    /// and fold), so steps stay short; `false` once every log has been read.
    pub fn step(&mut self) -> bool {
        if let Some((file, framed)) = self.framed.take() {
            let decoded = framed
                .decode_unpacked(&self.options.limits)
                .map_err(|e| read_failure(&file, &self.options, e));
            let log = decoded.and_then(|log| check_location(&file, log));
            self.finish(file, log);
            return true;
        }
        let Some(file) = self.pending.next() else {
            return false;
        };
        if let Some((size, error)) = self.refused.take() {
            self.count(size);
            self.fail(file, None, error);
            return true;
        }
        if let Some((size, log)) = self.adopted.take() {
            self.count(size);
            self.finish(file, Ok(log));
            return true;
        }
        self.count(file.size());
        if file.deferred.is_some() {
            let error = Error::new(ErrorCode::LoadIo, "its bytes were never supplied");
            self.fail(file, None, error);
            return true;
        }
        if file.bytes.len() < SPLIT_READ_BYTES {
            let log = read_bound(&file, &self.options, &self.budget);
            self.finish(file, log);
            return true;
        }
        match log::frame_log(&file.bytes, file.encoding, &self.options.limits, &self.budget) {
            Ok(framed) => self.framed = Some((file, framed)),
            Err(error) => {
                let (session_id, error) = read_failure(&file, &self.options, error);
                self.fail(file, session_id, error);
            }
        }
        true
    }

    fn finish(&mut self, mut file: LogFile, log: Result<SessionLog, (Option<String>, Error)>) {
        match log {
            Ok(mut log) => {
                // The events hold everything a read needs: the file's bytes can go now.
                file.bytes = Vec::new();
                match self.unpacked_left.checked_sub(log.unpacked_bytes()) {
                    Some(left) => self.unpacked_left = left,
                    None => log.pack(),
                }
                self.read.push((file, log));
            }
            Err((session_id, error)) => self.fail(file, session_id, error),
        }
    }

    fn fail(&mut self, file: LogFile, session_id: Option<String>, error: Error) {
        // DSH lists a session from its header alone; reads of it then fail.
        if matches!(
            error.code,
            ErrorCode::LoadCorrupt
                | ErrorCode::LoadDamaged
                | ErrorCode::LoadCorruptFrame
                | ErrorCode::LoadUnsupportedVersion
                | ErrorCode::LoadUnknownEventType
                | ErrorCode::LoadLimitExceeded
        ) && let Some(header) = log::listing_header(&file.bytes, file.encoding, &self.options.limits)
        {
            let read_error = Error::new(error.code.dsh_query_code(), error.message.clone());
            self.unreadable.push((header, read_error));
        }
        self.report.failures.push(LoadFailure {
            input: file.input,
            path: file.path,
            session_id,
            code: error.code,
            message: error.message,
        })
    }
}

impl LoadFailure {
    /// A copy of `id` at `input` / `path` whose header disagrees with another copy's.
    fn source_conflict(input: &str, path: &str, id: &str, message: String) -> LoadFailure {
        LoadFailure {
            input: input.to_owned(),
            path: path.to_owned(),
            session_id: Some(id.to_owned()),
            code: ErrorCode::QuerySourceConflict,
            message,
        }
    }

    fn of_file(f: FileFailure) -> LoadFailure {
        LoadFailure {
            input: f.input,
            path: f.path,
            session_id: None,
            code: f.code,
            message: f.message,
        }
    }
}

impl Corpus {
    /// An empty corpus.
    pub fn new() -> Self {
        Corpus::default()
    }

    /// Changes whenever the set of sessions or any session's log changes. Stamps come from one
    /// counter for the whole process, so two corpora with the same generation hold the same
    /// sessions (a clone and its original, before either changes; or two empty ones): an
    /// observer that saw a generation knows what it saw without looking at any session again.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Number of sessions.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether there are no sessions.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// A session by id.
    pub fn get(&self, id: &str) -> Option<&SessionEntry> {
        self.sessions.get(id)
    }

    /// Loads inputs. One bad file or session never hides the others: each failure is in the
    /// report. With `options.strict`, any failure fails the call with
    /// `SESSION_QUERY_PERSISTENCE_FAILED` and the corpus is left unchanged.
    pub fn load(&mut self, inputs: Vec<Input>, options: &LoadOptions) -> Result<LoadReport, Error> {
        self.load_with_progress(inputs, options, &mut |_, _| {})
    }

    /// [`Corpus::load`], calling `progress(done, total)` after each log file is read.
    pub fn load_with_progress(
        &mut self,
        inputs: Vec<Input>,
        options: &LoadOptions,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<LoadReport, Error> {
        let mut job = self.load_job(inputs, options);
        while job.step() {
            let done = job.progress();
            progress(done.sessions_done, done.sessions_total);
        }
        self.commit(job)
    }

    /// Publishes a load: runs what is left of `job`, then admits every session it read. With
    /// `strict`, any failure fails the call and the corpus is left unchanged.
    pub fn commit(&mut self, mut job: LoadJob) -> Result<LoadReport, Error> {
        while job.step() {}
        let LoadJob {
            options,
            mut report,
            mut read,
            unreadable,
            ..
        } = job;
        reject_ids_repeated_in_one_root(&mut read, |log| &log.header.id, &mut report.failures);
        if let Some(error) = strict_failure(&options, &report) {
            return Err(error);
        }
        // Admitting fails only a strict load, and only on a header conflict: that rare load is
        // staged on a copy; every other one is applied in place, never copying the corpus.
        if options.strict && self.would_conflict(&read) {
            let mut staged = self.clone();
            staged.apply(read, unreadable, &mut report);
            return Err(strict_failure(&options, &report)
                .unwrap_or_else(|| Error::new(ErrorCode::QueryPersistenceFailed, "session headers conflict")));
        }
        self.apply(read, unreadable, &mut report);
        self.pack_past(UNPACKED_BYTES);
        Ok(report)
    }

    /// A load of `inputs` into this corpus: its logs may hold unpacked what the corpus leaves
    /// of [`UNPACKED_BYTES`], so a log past that is packed as it is read, in the load's steps,
    /// not with the others when the load commits.
    pub fn load_job(&self, inputs: Vec<Input>, options: &LoadOptions) -> LoadJob {
        let held: usize = self.sessions.values().map(|entry| entry.log.unpacked_bytes()).sum();
        let mut job = LoadJob::new(inputs, options);
        job.unpacked_left = UNPACKED_BYTES.saturating_sub(held);
        job
    }

    /// Packs the text of loaded sessions past the first `keep` bytes left unpacked: a load
    /// made by [`Corpus::load_job`] keeps to the bound already, and this holds the corpus to
    /// it whatever job was committed.
    fn pack_past(&mut self, keep: usize) {
        let mut kept = 0;
        for entry in self.sessions.values_mut() {
            let unpacked = entry.log.unpacked_bytes();
            if kept + unpacked <= keep {
                kept += unpacked;
            } else {
                entry.log.pack();
            }
        }
    }

    /// Whether admitting `read` would find copies of one id whose headers disagree.
    fn would_conflict(&self, read: &[(LogFile, SessionLog)]) -> bool {
        let mut seen: BTreeMap<&str, &SessionHeader> = BTreeMap::new();
        read.iter().any(|(_, log)| {
            let id = log.header.id.as_str();
            let known = seen
                .get(id)
                .copied()
                .or_else(|| self.sessions.get(id).map(|e| &e.log.header));
            seen.entry(id).or_insert(&log.header);
            self.conflicted.contains(id) || known.is_some_and(|h| !headers_compatible(h, &log.header))
        })
    }

    /// Admits what a load read and moves the generations of every session it changed.
    fn apply(
        &mut self,
        read: Vec<(LogFile, SessionLog)>,
        unreadable: Vec<(SessionHeader, Error)>,
        report: &mut LoadReport,
    ) {
        let conflicted_before = self.conflicted.clone();
        for (file, log) in read {
            self.unreadable.remove(&log.header.id);
            self.listed.remove(&log.header.id);
            self.admit(file, log, report);
        }
        for (header, error) in unreadable {
            self.listed.remove(&header.id);
            if !self.sessions.contains_key(&header.id) {
                self.touch(&header.id);
                self.unreadable.insert(header.id.clone(), (header, error));
            }
        }
        // Inserted one by one: collecting would instantiate a sort (see `crate::sorting`).
        let mut changed = BTreeSet::new();
        changed.extend(
            report
                .sessions
                .iter()
                .filter(|s| s.outcome != "duplicate")
                .map(|s| s.session_id.clone())
                .chain(self.conflicted.difference(&conflicted_before).cloned()),
        );
        for id in &changed {
            self.touch(id);
        }
    }

    fn admit(&mut self, file: LogFile, log: SessionLog, report: &mut LoadReport) {
        let id = log.header.id.clone();
        let origin = Origin {
            input: file.input,
            path: file.path,
        };
        let loaded = |outcome| LoadedSession {
            session_id: id.clone(),
            origin: origin.clone(),
            encoding: file.encoding,
            events: log.events.len(),
            synthetic_closers: log.synthetic_closers,
            torn_bytes: log.torn_bytes,
            outcome,
        };
        let conflict = |report: &mut LoadReport, message: String| {
            report
                .failures
                .push(LoadFailure::source_conflict(&origin.input, &origin.path, &id, message));
        };
        if self.conflicted.contains(&id) {
            conflict(report, format!("session {id:?} has copies whose headers disagree"));
            return;
        }
        match self.sessions.get(&id) {
            None => {
                report.sessions.push(loaded("added"));
                self.sessions.insert(id.clone(), SessionEntry { log, origin });
            }
            Some(existing) if !headers_compatible(&existing.log.header, &log.header) => {
                let other = format!("{} {}", existing.origin.input, existing.origin.path);
                conflict(report, format!("session {id:?} has a different header in {other}"));
                report.sessions.retain(|s| s.session_id != id);
                self.sessions.remove(&id);
                self.conflicted.insert(id.clone());
            }
            Some(existing) if log.events.len() > existing.log.events.len() => {
                report.sessions.push(loaded("replaced"));
                self.sessions.insert(id.clone(), SessionEntry { log, origin });
            }
            Some(_) => report.sessions.push(loaded("duplicate")),
        }
    }

    /// Adds a live session (it shadows a persisted copy of the same id). Fails with
    /// `SESSION_QUERY_SOURCE_CONFLICT` if the id is already live.
    pub fn add_live(&mut self, header: &Json, events: Vec<Json>) -> Result<SessionRecord, Error> {
        let log = log::live_log(header, events)?;
        let id = log.header.id.clone();
        if self.live.contains_key(&id) {
            return Err(Error::new(
                ErrorCode::QuerySourceConflict,
                format!("session {id:?} is already live"),
            ));
        }
        let record = SessionRecord {
            header: log.header.clone(),
            live: true,
            persisted: self.sessions.contains_key(&id) || self.listed.contains_key(&id),
        };
        self.live.insert(id.clone(), log);
        self.touch(&id);
        Ok(record)
    }

    /// Appends events to a live session; returns its new event count. All or nothing.
    pub fn append_live(&mut self, id: &str, events: Vec<Json>) -> Result<usize, Error> {
        let log = self
            .live
            .get_mut(id)
            .ok_or_else(|| Error::new(ErrorCode::QuerySessionNotFound, format!("session {id:?} is not live")))?;
        log::append_live(log, events)?;
        let count = log.events.len();
        self.touch_grown(id);
        Ok(count)
    }

    /// Closes a live session; a persisted copy, if any, becomes visible again.
    pub fn remove_live(&mut self, id: &str) -> bool {
        let removed = self.live.remove(id).is_some();
        if removed {
            self.touch(id);
        }
        removed
    }

    fn touch(&mut self, id: &str) {
        self.touch_grown(id);
        *self.session_lineages.entry(id.to_owned()).or_default() += 1;
    }

    /// Marks a change that only added events at the end of `id`'s log.
    fn touch_grown(&mut self, id: &str) {
        static STAMPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        self.generation = STAMPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        *self.session_generations.entry(id.to_owned()).or_default() += 1;
    }

    /// Changes whenever this session's observed events change other than by growing at the
    /// end (a load replacing it, a live copy added or closed). While it holds, every event an
    /// earlier observer saw is unchanged, and so are the labels of all but those shadowed since.
    pub fn session_lineage(&self, id: &str) -> u64 {
        self.session_lineages.get(id).copied().unwrap_or_default()
    }

    /// Changes whenever this session's observed state changes (its events or its source).
    pub fn session_generation(&self, id: &str) -> u64 {
        self.session_generations.get(id).copied().unwrap_or_default()
    }

    /// The source a read of `id` observes: the live session if any, else the loaded copy.
    pub(crate) fn source(&self, id: &str) -> Result<Source<'_>, Error> {
        let persisted = self.sessions.get(id);
        if let Some(log) = self.live.get(id) {
            let stored_header = persisted.map(|p| &p.log.header).or(self.listed_header(id));
            if stored_header.is_some_and(|h| !headers_compatible(h, &log.header)) {
                return Err(Error::new(
                    ErrorCode::QuerySourceConflict,
                    format!("session source headers conflict for session \"{id}\""),
                ));
            }
            return Ok(Source {
                log,
                live: true,
                persisted: stored_header.is_some(),
            });
        }
        if self.conflicted.contains(id) {
            return Err(Error::new(
                ErrorCode::QuerySourceConflict,
                format!("session {id:?} has copies whose headers disagree"),
            ));
        }
        if let Some((_, error)) = self.unreadable.get(id) {
            return Err(error.clone());
        }
        if persisted.is_none() && self.listed.contains_key(id) {
            return Err(listed::not_read(id));
        }
        persisted
            .map(|entry| Source {
                log: &entry.log,
                live: false,
                persisted: true,
            })
            .ok_or_else(|| Error::new(ErrorCode::QuerySessionNotFound, format!("session \"{id}\" not found")))
    }

    /// Listing records of sessions that list but cannot be read (not live).
    pub(crate) fn unreadable_records(&self) -> impl Iterator<Item = SessionRecord> + '_ {
        self.unreadable
            .iter()
            .filter(|(id, _)| !self.live.contains_key(*id))
            .map(|(_, (header, _))| SessionRecord {
                header: header.clone(),
                live: false,
                persisted: true,
            })
    }

    /// Every id a read can observe, with its source; ids whose live and stored headers
    /// disagree are left out (reads of them fail with `SESSION_QUERY_SOURCE_CONFLICT`).
    pub(crate) fn sources(&self) -> impl Iterator<Item = (&String, Source<'_>)> {
        let mut ids = BTreeSet::new();
        ids.extend(self.sessions.keys().chain(self.live.keys()));
        ids.into_iter()
            .filter_map(|id| self.source(id).ok().map(|source| (id, source)))
    }
}

/// What a read observes for one id.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Source<'a> {
    /// The log served (live wins).
    pub log: &'a SessionLog,
    /// Whether the id is live.
    pub live: bool,
    /// Whether a loaded copy exists.
    pub persisted: bool,
}

impl Source<'_> {
    /// The listing record of what this source serves.
    pub fn record(&self) -> SessionRecord {
        SessionRecord {
            header: self.log.header.clone(),
            live: self.live,
            persisted: self.persisted,
        }
    }
}

/// In strict mode, any failure fails the whole load (as DSH's search does).
fn strict_failure(options: &LoadOptions, report: &LoadReport) -> Option<Error> {
    let first = report.failures.first().filter(|_| options.strict)?;
    Some(Error::new(
        ErrorCode::QueryPersistenceFailed,
        format!(
            "{}: {}: {}",
            location(&first.input, &first.path),
            first.code,
            first.message
        ),
    ))
}

/// `input` or `input path` (a file loaded as itself has no inner path).
fn location(input: &str, path: &str) -> String {
    if path.is_empty() {
        input.to_owned()
    } else {
        format!("{input} {path}")
    }
}

/// Logs at least this large (on disk) are read in two steps of a load. A compressed log
/// holds two to three times its size in text, and the first read of a load runs code not yet
/// optimized: in Node, a load's own read of a 515 KB `.jsonl.zstd` log took 116 ms as its
/// first step and 48 ms for the next log of 650 KB, too long a wait between two progress
/// reports at 1 MiB.
const SPLIT_READ_BYTES: usize = 256 << 10;

/// Event text the corpus holds unpacked; past it, logs are packed (LZ4 in small blocks) as
/// they are read. Packing is about a tenth of a load, and every later read of a packed event
/// (the index build, a search hit's snippet, a first search's look through every session the
/// index has not reached) decompresses its block; holding this much plain costs at most about
/// 165 MB more than packed. A 100,000-event archive (about 70 MB of text) stays plain; a
/// million events (686 MB) are packed but for this much. At 1M in Chromium, against 128 MiB
/// (two alternating runs each): load 4.02-4.04 s against 4.35-4.38, first result (`error`)
/// 1.18x the load against 1.19x, peak wasm memory 1,298-1,301 MB against 1,186-1,193.
pub const UNPACKED_BYTES: usize = 384 << 20;

/// Reads one file and checks its header against its location (its text left unpacked).
fn read_bound(
    file: &LogFile,
    options: &LoadOptions,
    budget: &LoadBudget,
) -> Result<SessionLog, (Option<String>, Error)> {
    let log = log::frame_log(&file.bytes, file.encoding, &options.limits, budget)
        .and_then(|framed| framed.decode_unpacked(&options.limits))
        .map_err(|e| read_failure(file, options, e))?;
    check_location(file, log)
}

/// A failed read, with the session id its header names (if it can be read).
fn read_failure(file: &LogFile, options: &LoadOptions, error: Error) -> (Option<String>, Error) {
    (log::header_id(&file.bytes, file.encoding, &options.limits), error)
}

/// Checks a read log's header against where the file was found.
fn check_location(file: &LogFile, log: SessionLog) -> Result<SessionLog, (Option<String>, Error)> {
    check_header_location(file, &log.header)?;
    Ok(log)
}

/// Checks a header against where its file was found.
fn check_header_location(file: &LogFile, header: &SessionHeader) -> Result<(), (Option<String>, Error)> {
    let mismatch = |why: String| {
        Err((
            Some(header.id.clone()),
            Error::new(ErrorCode::LoadIdentityMismatch, why),
        ))
    };
    match &file.binding {
        Binding::None => {}
        Binding::PersistenceRoot {
            project, session_dir, ..
        } => {
            let expected_dir = archive::layout::session_dir_name_of_units(&header.raw_id.utf16_units());
            if &expected_dir != session_dir {
                return mismatch(format!(
                    "header id {:?} belongs in directory {expected_dir:?}, not {session_dir:?}",
                    header.id
                ));
            }
            let expected_project = archive::layout::project_dir_name(header.cwd.as_deref());
            if &expected_project != project {
                return mismatch(format!(
                    "header cwd belongs in project directory {expected_project:?}, not {project:?}"
                ));
            }
        }
        Binding::ExportChild { safe_id } => {
            let expected = archive::layout::export_safe_id(&header.id);
            if &expected != safe_id {
                return mismatch(format!(
                    "header id {:?} belongs in subagents/{expected}, not subagents/{safe_id}",
                    header.id
                ));
            }
        }
    }
    Ok(())
}

/// One id in two project directories of one persistence root is a layout error for both.
/// `read` holds logs or headers; `id_of` names the session of each.
fn reject_ids_repeated_in_one_root<T>(
    read: &mut Vec<(LogFile, T)>,
    id_of: impl Fn(&T) -> &String,
    failures: &mut Vec<LoadFailure>,
) {
    let key = |file: &LogFile, read: &T| match &file.binding {
        Binding::PersistenceRoot { root, .. } => Some((file.input_index, root.clone(), id_of(read).clone())),
        _ => None,
    };
    let mut counts: BTreeMap<(usize, String, String), usize> = BTreeMap::new();
    for (file, log) in read.iter() {
        if let Some(k) = key(file, log) {
            *counts.entry(k).or_default() += 1;
        }
    }
    read.retain(|(file, log)| {
        let repeated = key(file, log).is_some_and(|k| counts[&k] > 1);
        if repeated {
            failures.push(LoadFailure {
                input: file.input.clone(),
                path: file.path.clone(),
                session_id: Some(id_of(log).clone()),
                code: ErrorCode::LoadLayout,
                message: format!(
                    "session {:?} appears in more than one project directory of this root",
                    id_of(log)
                ),
            });
        }
        !repeated
    });
}

/// The header fields DSH compares between two copies of one session (absent depth is 0).
fn headers_compatible(a: &SessionHeader, b: &SessionHeader) -> bool {
    a.version == b.version
        && a.id == b.id
        && a.created_at == b.created_at
        && a.cwd == b.cwd
        && a.parent_session == b.parent_session
        && a.seed_length == b.seed_length
        && a.delegation_depth.unwrap_or(0) == b.delegation_depth.unwrap_or(0)
}

/// An approximation of JavaScript's `localeCompare` (ICU root collation, as DSH's listing
/// uses it): primary order by character class (spaces, punctuation in ICU's order, symbols,
/// digits, letters by their base letter), then accents, then case (lower first).
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    let (pa, sa, ta) = collation_key(a);
    let (pb, sb, tb) = collation_key(b);
    pa.cmp(&pb)
        .then_with(|| sa.cmp(&sb))
        .then_with(|| ta.cmp(&tb))
        .then_with(|| a.cmp(b))
}

/// ICU root order of ASCII punctuation and symbols.
const PUNCTUATION_ORDER: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

type CollationKey = (Vec<(u8, u32)>, Vec<u8>, Vec<u8>);

fn collation_key(text: &str) -> CollationKey {
    use unicode_normalization::UnicodeNormalization;
    let mut primary = Vec::new();
    let mut secondary = Vec::new();
    let mut tertiary = Vec::new();
    for c in text.chars() {
        let mut decomposed = std::iter::once(c).nfd();
        let base = decomposed.next().unwrap_or(c);
        let accented = decomposed.next().is_some();
        let weight = if base.is_whitespace() {
            (0, base as u32)
        } else if let Some(index) = PUNCTUATION_ORDER.find(base) {
            (1, index as u32)
        } else if let Some(digit) = base.to_digit(10) {
            (3, digit)
        } else if base.is_alphabetic() {
            (4, base.to_lowercase().next().unwrap_or(base) as u32)
        } else {
            (2, base as u32)
        };
        primary.push(weight);
        secondary.push(u8::from(accented));
        tertiary.push(u8::from(base.is_uppercase()));
    }
    (primary, secondary, tertiary)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn locale_order_matches_byte_order_on_uuids() {
        let mut ids = ["f0e1-aa", "0a-b", "0a1", "a-0", "9f-ff"];
        let mut bytes = ids;
        ids.sort_by(|a, b| locale_compare(a, b));
        bytes.sort();
        assert_eq!(ids, bytes);
        assert_eq!(locale_compare("a", "B"), Ordering::Less);
        // The order DSH's listing gives under en-US.
        let expected = [
            "_x", "-x", "10", "9", "abc", "ABC", "ábc", "abc 1", "abc_1", "abc-1", "abc~1", "Abd", "resume", "résumé",
            "z", "Z",
        ];
        let mut shuffled = expected;
        shuffled.reverse();
        shuffled.sort_by(|a, b| locale_compare(a, b));
        assert_eq!(shuffled, expected);
        assert_eq!(locale_compare("a", "A"), Ordering::Less);
    }

    /// A persisted log of `id` with one user message per text (also for `listed`'s and the
    /// staged load's tests).
    pub(crate) fn log_text(id: &str, created_at: u64, texts: &[&str]) -> Vec<u8> {
        let mut text =
            format!(r#"{{"type":"session","version":0,"id":"{id}","createdAt":{created_at},"delegationDepth":0}}"#);
        for (seq, t) in texts.iter().enumerate() {
            text.push_str(&format!(
                "\n{{\"type\":\"user/message\",\"seq\":{seq},\"time\":{},\"data\":{{\"id\":\"m{seq}\",\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"{t}\"}}],\"source\":{{\"kind\":\"user\"}}}},\"surfaceOp\":\"append\"}}",
                seq + 2
            ));
        }
        format!("{text}\n").into_bytes()
    }

    fn log(id: &str, created_at: u64, texts: &[&str]) -> Input {
        Input::File {
            name: format!("{id}-{created_at}-{}.jsonl", texts.len()),
            bytes: log_text(id, created_at, texts),
        }
    }

    #[test]
    fn wire_reads_splice_the_stored_texts_and_equal_the_parsed_reads() {
        let mut corpus = Corpus::new();
        corpus
            .load(
                vec![log("s", 1, &["one", r"\u00e9 \ud83d", "three"])],
                &LoadOptions::default(),
            )
            .expect("loads");
        let stored = corpus.read_session_stored("s").expect("reads");
        let texts: Vec<String> = stored.events.iter().map(|e| e.text().to_string()).collect();
        assert!(texts[1].contains(r#""text":"é \ud83d""#), "{}", texts[1]);
        let header = serde_json::to_string(&stored.session).expect("header");
        assert_eq!(
            wire(&stored),
            format!(r#"{{"session":{header},"events":[{}]}}"#, texts.join(","))
        );
        assert_eq!(wire(&stored), wire(&corpus.read_session("s").expect("reads")));
        let surface = corpus.read_surface_stored("s").expect("reads");
        assert_eq!(wire(&surface), wire(&corpus.read_surface("s").expect("reads")));
        let window = corpus.read_event_stored("s", 1, 1, 0).expect("reads");
        assert_eq!(serde_json::to_string(&window.target).expect("json"), texts[1]);
        assert_eq!(wire(&window), wire(&corpus.read_event("s", 1, 1, 0).expect("reads")));
    }

    fn wire<T: Serialize>(value: &T) -> String {
        serde_json::to_string(value).expect("JSON")
    }

    #[test]
    fn a_large_log_is_read_in_two_steps_with_the_same_outcome() {
        let long = "word ".repeat(2000);
        let texts: Vec<&str> = std::iter::repeat_n(long.as_str(), 120).collect();
        let big = log("big", 1, &texts);
        let small = log("small", 2, &["x"]);
        let Input::File { bytes, .. } = &big else {
            unreachable!()
        };
        assert!(bytes.len() >= SPLIT_READ_BYTES, "the big log is read in halves");
        // A broken big log: one message has an unknown role, which only the second half checks.
        let text = std::str::from_utf8(bytes).expect("utf-8");
        let broken_text = text
            .replace("\"id\":\"big\"", "\"id\":\"broken\"")
            .replace("\"id\":\"m60\",\"role\":\"user\"", "\"id\":\"m60\",\"role\":\"nobody\"");
        let broken = Input::File {
            name: "broken.jsonl".into(),
            bytes: broken_text.into_bytes(),
        };
        let inputs = || vec![big.clone(), small.clone(), broken.clone()];
        let mut job = LoadJob::new(inputs(), &LoadOptions::default());
        let mut steps = 0;
        while job.step() {
            steps += 1;
        }
        assert_eq!(steps, 5, "two logs in halves, one whole");
        let mut stepped = Corpus::new();
        let stepped_report = stepped.commit(job).expect("commits");
        let mut whole = Corpus::new();
        let whole_report = whole.load(inputs(), &LoadOptions::default()).expect("loads");
        assert_eq!(format!("{stepped_report:?}"), format!("{whole_report:?}"));
        assert_eq!(stepped_report.failures.len(), 1, "{stepped_report:?}");
        assert_eq!(stepped_report.failures[0].session_id.as_deref(), Some("broken"));
        let events = |c: &Corpus| c.source("big").map(|s| s.log.events.len()).expect("loaded");
        assert_eq!(events(&stepped), 120);
        assert_eq!(events(&whole), 120);
    }

    /// Text left unpacked is bounded: past the bound, sessions are packed (in id order, the
    /// first ones kept), and reads are the same either way.
    #[test]
    fn unpacked_text_past_the_bound_is_packed() {
        let long = "w".repeat(5000);
        let texts = [long.as_str(), "short"];
        let mut corpus = Corpus::new();
        let inputs = ["a", "b", "c"].map(|id| log(id, 1, &texts)).to_vec();
        corpus.load(inputs, &LoadOptions::default()).expect("loads");
        let unpacked =
            |corpus: &Corpus| -> Vec<usize> { corpus.sessions.values().map(|e| e.log.unpacked_bytes()).collect() };
        let each = unpacked(&corpus)[0];
        assert!(each > 5000 && unpacked(&corpus) == [each; 3], "{:?}", unpacked(&corpus));
        let read = |corpus: &Corpus| -> Vec<String> {
            let events = corpus.sessions.values().flat_map(|e| &e.log.events);
            events.map(|event| event.text().to_string()).collect()
        };
        let before = read(&corpus);
        // The next load may hold unpacked only what this corpus leaves of the bound.
        let next = corpus.load_job(Vec::new(), &LoadOptions::default());
        assert_eq!(next.unpacked_left, UNPACKED_BYTES - 3 * each);
        corpus.pack_past(each + 1);
        assert_eq!(unpacked(&corpus), [each, 0, 0]);
        assert_eq!(read(&corpus), before);
        corpus.pack_past(0);
        assert_eq!(unpacked(&corpus), [0, 0, 0]);
        assert_eq!(read(&corpus), before);
        // A load keeps to its own allowance as it reads, before it is committed.
        let mut job = LoadJob::new(
            ["a", "b", "c"].map(|id| log(id, 1, &texts)).to_vec(),
            &LoadOptions::default(),
        );
        job.unpacked_left = 2 * each;
        let mut corpus = Corpus::new();
        corpus.commit(job).expect("loads");
        let mut left = unpacked(&corpus);
        left.sort();
        assert_eq!(left, [0, each, each]);
        assert_eq!(read(&corpus), before);
    }

    #[test]
    fn corpora_that_change_apart_never_share_a_generation() {
        let (mut first, mut second) = (Corpus::new(), Corpus::new());
        assert_eq!(
            first.generation(),
            second.generation(),
            "two empty corpora are the same"
        );
        first
            .load(vec![log("a", 1, &["x"])], &LoadOptions::default())
            .expect("loads");
        second
            .load(vec![log("a", 1, &["x"])], &LoadOptions::default())
            .expect("loads");
        let copy = first.clone();
        assert_eq!(
            copy.generation(),
            first.generation(),
            "a clone holds what its original holds"
        );
        first
            .load(vec![log("a", 1, &["x", "y"])], &LoadOptions::default())
            .expect("loads");
        second
            .load(vec![log("b", 1, &["x"])], &LoadOptions::default())
            .expect("loads");
        let stamps = [first.generation(), second.generation(), copy.generation()];
        assert!(
            stamps.iter().all(|s| stamps.iter().filter(|t| *t == s).count() == 1),
            "{stamps:?}"
        );
    }

    #[test]
    fn a_strict_load_that_conflicts_publishes_nothing_and_others_apply_in_place() {
        let mut corpus = Corpus::new();
        let report = corpus
            .load(vec![log("a", 1, &["x"])], &LoadOptions::default())
            .expect("loads");
        assert_eq!(report.sessions[0].outcome, "added");
        let generation = corpus.generation();
        let strict = LoadOptions {
            strict: true,
            ..LoadOptions::default()
        };
        // Same id, another createdAt: the headers disagree.
        let error = corpus
            .load(vec![log("b", 1, &["y"]), log("a", 2, &["x", "y"])], &strict)
            .expect_err("a conflict fails a strict load");
        assert_eq!(error.code, ErrorCode::QueryPersistenceFailed);
        assert!(corpus.get("b").is_none(), "nothing of the failed load is visible");
        assert_eq!(corpus.generation(), generation, "and nothing moved");
        // A longer compatible copy replaces the known one, in place.
        let report = corpus
            .load(vec![log("a", 1, &["x", "y"])], &strict)
            .expect("compatible");
        assert_eq!(report.sessions[0].outcome, "replaced");
        assert!(corpus.generation() > generation);
        assert_eq!(corpus.list_events("a").map(|e| e.len()).ok(), Some(2));
        // Without strict, the conflict fails that id alone.
        let report = corpus
            .load(vec![log("a", 3, &["z"]), log("c", 1, &["z"])], &LoadOptions::default())
            .expect("loads");
        assert_eq!(report.failures[0].code, ErrorCode::QuerySourceConflict);
        assert!(corpus.get("a").is_none() && corpus.get("c").is_some());
    }
}
