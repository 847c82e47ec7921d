//! Sessions known by their header alone: a lazy source's listing (DSH's listing reads headers
//! only) and the bookkeeping that brings one such session's log in when a read needs it.
//!
//! A listing takes each log's header (its bytes dropped at once), checks it against the log's
//! location as a load does, and records the session with the source paths of its copies. The
//! listing answers `listSessions` / `filterSessions` exactly as a full load would; a read of a
//! listed session fails until a normal load of its paths brings it in (`Corpus::commit` then
//! replaces the listed entry with the loaded or unreadable session).

use super::{
    Corpus, LoadFailure, SessionRecord, check_header_location, headers_compatible, read_bound,
    reject_ids_repeated_in_one_root,
};
use crate::archive::{self, LoadBudget, LoadOptions, LogFile};
use crate::error::{Error, ErrorCode};
use crate::log::{self, SessionHeader};
use serde::Serialize;

/// A session listed from its header: its logs have not been read.
#[derive(Clone, Debug)]
pub(super) struct ListedSession {
    header: SessionHeader,
    /// The source paths of every copy, in listing order; a load of them all reads it.
    paths: Vec<String>,
}

/// One listed log, as reported by a listing.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedCopy {
    /// The session id its header names.
    pub session_id: String,
    /// The source path.
    pub path: String,
    /// `listed`, or `loaded` when the id was already loaded (the loaded copy is kept).
    pub outcome: &'static str,
}

/// What a listing did: each log listed, each that failed (the rest listed regardless).
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListingReport {
    /// Logs whose header listed.
    pub sessions: Vec<ListedCopy>,
    /// Logs that do not list, with their load codes.
    pub failures: Vec<LoadFailure>,
}

/// A listing under way, published by [`Corpus::commit_listing`]. Each log is added on its own
/// and only its header kept, so a listing holds one log's bytes at a time.
#[derive(Debug)]
pub struct ListingJob {
    options: LoadOptions,
    headers: Vec<(LogFile, SessionHeader)>,
    failures: Vec<LoadFailure>,
}

impl ListingJob {
    /// An empty listing under `options` (its limits bound each header read).
    pub fn new(options: &LoadOptions) -> ListingJob {
        ListingJob {
            options: *options,
            headers: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// Takes the header of the log at `path` (a `.jsonl` or `.jsonl.zstd` path, `/`-separated,
    /// whose directories bind it as a load's entries do); the bytes are dropped on return.
    /// `bytes` may be only a prefix of the log (`whole` false): when it does not hold the whole
    /// header line (or first frame), nothing is recorded and `false` asks for the whole log.
    /// A prefix that holds it gives the header the whole log gives.
    pub fn add(&mut self, path: String, bytes: Vec<u8>, whole: bool) -> bool {
        let path = source_path(&path);
        if !whole && !self.prefix_lists(&path, &bytes) {
            return false;
        }
        let gathered = archive::gather(
            archive::entries::inputs_from_entries(vec![(path.clone(), bytes)]),
            &self.options,
        );
        self.failures
            .extend(gathered.failures.into_iter().map(LoadFailure::of_file));
        for mut file in gathered.logs {
            if path_of(&file) != path {
                self.failures.push(LoadFailure {
                    input: file.input,
                    path: file.path,
                    session_id: None,
                    code: ErrorCode::LoadInvalidArchive,
                    message: format!("{path:?} is an archive: a lazy source lists log files only"),
                });
                continue;
            }
            match self.header_of(&file) {
                Ok(header) => {
                    file.bytes = Vec::new();
                    self.headers.push((file, header));
                }
                Err((session_id, error)) => self.failures.push(LoadFailure {
                    input: file.input,
                    path: file.path,
                    session_id,
                    code: error.code,
                    message: error.message,
                }),
            }
        }
        true
    }

    /// Records a log at `path` the source could not give (`SESSION_LOAD_IO`); nothing lists.
    pub fn fail(&mut self, path: &str, message: String) {
        let path = source_path(path);
        let (input, path) = match path.split_once('/') {
            Some((top, _)) => (top.to_owned(), path.clone()),
            None => (path, String::new()),
        };
        self.failures.push(LoadFailure {
            input,
            path,
            session_id: None,
            code: ErrorCode::LoadIo,
            message,
        });
    }

    /// Whether a prefix of the log at `path` holds its header line (a load of a prefix would
    /// otherwise fail where the whole log reads).
    fn prefix_lists(&self, path: &str, prefix: &[u8]) -> bool {
        let name = path.rsplit('/').next().unwrap_or_default();
        let encoding = if name.ends_with(".jsonl.zstd") {
            log::Encoding::Zstd
        } else if name.ends_with(".jsonl") {
            log::Encoding::Raw
        } else {
            return false;
        };
        log::listing_header(prefix, encoding, &self.options.limits).is_some()
    }

    /// The header DSH's listing shows, bound to the file's location; a log whose header does
    /// not list fails with the code a load of it gives.
    fn header_of(&self, file: &LogFile) -> Result<SessionHeader, (Option<String>, Error)> {
        let Some(header) = log::listing_header(&file.bytes, file.encoding, &self.options.limits) else {
            let budget = LoadBudget::new(self.options.max_load_bytes);
            return read_bound(file, &self.options, &budget).map(|log| log.header);
        };
        check_header_location(file, &header)?;
        Ok(header)
    }
}

/// A path as loads see it: `/` separators, no leading `/`.
pub fn source_path(path: &str) -> String {
    path.replace('\\', "/").trim_start_matches('/').to_owned()
}

/// The source path a gathered log came from (a top-level file is its input).
fn path_of(file: &LogFile) -> &str {
    if file.path.is_empty() { &file.input } else { &file.path }
}

/// The error of a read of a session whose log has not been brought in.
pub(super) fn not_read(id: &str) -> Error {
    Error::new(
        ErrorCode::QueryPersistenceFailed,
        format!("session {id:?} is listed from its header; its log has not been loaded"),
    )
}

impl Corpus {
    /// Publishes a listing: every header it took lists, unless its id is loaded already (the
    /// loaded copy is kept) or copies disagree on their headers (the id fails, as in a load).
    pub fn commit_listing(&mut self, job: ListingJob) -> ListingReport {
        let ListingJob {
            mut headers, failures, ..
        } = job;
        let mut report = ListingReport {
            failures,
            ..ListingReport::default()
        };
        reject_ids_repeated_in_one_root(&mut headers, |header| &header.id, &mut report.failures);
        for (file, header) in headers {
            self.list_one(file, header, &mut report);
        }
        report
    }

    fn list_one(&mut self, file: LogFile, header: SessionHeader, report: &mut ListingReport) {
        let id = header.id.clone();
        let path = path_of(&file).to_owned();
        let conflict = |report: &mut ListingReport, message: String| {
            report
                .failures
                .push(LoadFailure::source_conflict(&file.input, &file.path, &id, message))
        };
        if self.conflicted.contains(&id) {
            return conflict(report, format!("session {id:?} has copies whose headers disagree"));
        }
        if self.sessions.contains_key(&id) {
            report.sessions.push(ListedCopy {
                session_id: id,
                path,
                outcome: "loaded",
            });
            return;
        }
        match self.listed.get_mut(&id) {
            Some(known) if !headers_compatible(&known.header, &header) => {
                let other = known.paths.first().cloned().unwrap_or_default();
                conflict(report, format!("session {id:?} has a different header in {other}"));
                report.sessions.retain(|s| s.session_id != id);
                self.listed.remove(&id);
                self.conflicted.insert(id.clone());
            }
            Some(known) => {
                known.paths.push(path.clone());
                report.sessions.push(ListedCopy {
                    session_id: id.clone(),
                    path,
                    outcome: "listed",
                });
            }
            None => {
                let paths = vec![path.clone()];
                self.listed.insert(id.clone(), ListedSession { header, paths });
                report.sessions.push(ListedCopy {
                    session_id: id.clone(),
                    path,
                    outcome: "listed",
                });
            }
        }
        self.touch(&id);
    }

    /// How many sessions are listed from their headers only.
    pub fn listed_len(&self) -> usize {
        self.listed.len()
    }

    /// The ids listed from their headers only, in id order.
    pub fn listed_ids(&self) -> impl Iterator<Item = &String> {
        self.listed.keys()
    }

    /// The header of a session listed from its header only.
    pub fn listed_header(&self, id: &str) -> Option<&SessionHeader> {
        self.listed.get(id).map(|listed| &listed.header)
    }

    /// The source paths a load must read to bring `id` in (none once it is in).
    pub fn listed_paths(&self, id: &str) -> Option<&[String]> {
        self.listed.get(id).map(|listed| listed.paths.as_slice())
    }

    /// A listed session whose logs could not be brought in: it stays listed and every read of
    /// it fails with DSH's query code for `error` (as a loaded-but-unreadable session does).
    /// Nothing happens when `id` is not listed from its header only.
    pub fn fail_listed(&mut self, id: &str, error: &Error) {
        let Some(listed) = self.listed.remove(id) else {
            return;
        };
        let read_error = Error::new(error.code.dsh_query_code(), error.message.clone());
        self.unreadable.insert(id.to_owned(), (listed.header, read_error));
        self.touch(id);
    }

    /// Listing records of sessions listed from their headers only (not live, not unreadable).
    pub(crate) fn listed_records(&self) -> impl Iterator<Item = SessionRecord> + '_ {
        self.listed
            .iter()
            .filter(|(id, _)| !self.live.contains_key(*id) && !self.unreadable.contains_key(*id))
            .map(|(_, listed)| SessionRecord {
                header: listed.header.clone(),
                live: false,
                persisted: true,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::Input;
    use crate::corpus::tests::log_text;

    /// Three sessions (one with a shorter second copy), one corrupt, one without a header.
    fn entries() -> Vec<(String, Vec<u8>)> {
        let mut corrupt = log_text("bad", 4, &["x"]);
        corrupt.extend_from_slice(b"{not json}\n{\"type\":\"user/message\"}\n");
        vec![
            ("logs/a.jsonl".into(), log_text("a", 1, &["one", "two"])),
            ("logs/a-copy.jsonl".into(), log_text("a", 1, &["one"])),
            ("logs/b.jsonl".into(), log_text("b", 3, &["three"])),
            ("logs/c.jsonl".into(), log_text("c", 2, &["four"])),
            ("logs/bad.jsonl".into(), corrupt),
            ("logs/empty.jsonl".into(), Vec::new()),
        ]
    }

    fn full() -> Corpus {
        let mut corpus = Corpus::new();
        let inputs = archive::entries::inputs_from_entries(entries());
        corpus.load(inputs, &LoadOptions::default()).expect("loads");
        corpus
    }

    fn listed() -> (Corpus, ListingReport) {
        let mut corpus = Corpus::new();
        let mut job = ListingJob::new(&LoadOptions::default());
        for (path, bytes) in entries() {
            job.add(path, bytes, true);
        }
        let report = corpus.commit_listing(job);
        (corpus, report)
    }

    fn bring_in(corpus: &mut Corpus, id: &str) {
        let paths = corpus.listed_paths(id).expect("listed").to_vec();
        let all = entries();
        let files = paths
            .iter()
            .map(|p| all.iter().find(|(path, _)| path == p).cloned().expect("a listed path"))
            .collect();
        let inputs: Vec<Input> = archive::entries::inputs_from_entries(files);
        corpus.load(inputs, &LoadOptions::default()).expect("loads");
    }

    fn listing(corpus: &Corpus) -> String {
        serde_json::to_string(&corpus.list_sessions()).expect("serializes")
    }

    #[test]
    fn a_listing_lists_as_a_full_load_and_reads_wait_for_a_load() {
        let (mut lazy, report) = listed();
        let whole = full();
        assert_eq!(listing(&lazy), listing(&whole));
        assert_eq!(report.sessions.len(), 5, "{report:?}");
        assert_eq!(report.failures.len(), 1, "the empty log does not list: {report:?}");
        assert_eq!(
            lazy.listed_paths("a"),
            Some(&["logs/a.jsonl".to_owned(), "logs/a-copy.jsonl".to_owned()][..])
        );
        let error = lazy.read_session("b").expect_err("not loaded yet");
        assert_eq!(error.code, ErrorCode::QueryPersistenceFailed);
        for id in ["a", "b", "bad"] {
            bring_in(&mut lazy, id);
            let read = |c: &Corpus| format!("{:?}", c.read_session(id).map(|s| serde_json::to_string(&s).ok()));
            assert_eq!(read(&lazy), read(&whole), "{id}");
            assert_eq!(lazy.listed_paths(id), None);
        }
        assert_eq!(lazy.listed_len(), 1, "c is still listed only");
        assert_eq!(listing(&lazy), listing(&whole));
    }

    #[test]
    fn a_failed_read_keeps_the_session_listed_and_its_reads_coded() {
        let (mut lazy, _) = listed();
        let generation = lazy.generation();
        lazy.fail_listed("b", &Error::new(ErrorCode::LoadIo, "the store did not answer"));
        assert!(lazy.generation() > generation);
        assert_eq!(listing(&lazy), listing(&full()));
        let error = lazy.read_session("b").expect_err("unreadable");
        assert_eq!(error.code, ErrorCode::QueryPersistenceFailed);
        assert!(error.message.contains("did not answer"), "{}", error.message);
        assert!(
            lazy.read_session("c").is_err() && lazy.listed_paths("c").is_some(),
            "c is untouched"
        );
    }

    #[test]
    fn copies_whose_headers_disagree_fail_as_in_a_load() {
        let mut corpus = Corpus::new();
        let mut job = ListingJob::new(&LoadOptions::default());
        job.add("x/one.jsonl".into(), log_text("a", 1, &["x"]), true);
        job.add("x/two.jsonl".into(), log_text("a", 2, &["x"]), true);
        job.add("x/zip.zip".into(), b"PK\x05\x06".to_vec(), true);
        let report = corpus.commit_listing(job);
        assert!(corpus.list_sessions().is_empty());
        let codes: Vec<ErrorCode> = report.failures.iter().map(|f| f.code).collect();
        assert!(codes.contains(&ErrorCode::QuerySourceConflict), "{report:?}");
        assert_eq!(
            corpus.read_session("a").map(|_| ()).map_err(|e| e.code),
            Err(ErrorCode::QuerySourceConflict)
        );
    }

    #[test]
    fn a_prefix_lists_only_when_it_holds_the_header_line() {
        let mut job = ListingJob::new(&LoadOptions::default());
        let text = log_text("a", 1, &["one"]);
        let header_end = text.iter().position(|&b| b == b'\n').expect("a header line");
        assert!(
            !job.add("a.jsonl".into(), text[..header_end].to_vec(), false),
            "no LF yet"
        );
        assert!(job.add("a.jsonl".into(), text[..header_end + 1].to_vec(), false));
        assert!(
            !job.add("a.zip".into(), text.clone(), false),
            "an archive is read whole"
        );
        let mut corpus = Corpus::new();
        let report = corpus.commit_listing(job);
        assert_eq!(report.sessions.len(), 1, "{report:?}");
        assert!(report.failures.is_empty(), "{report:?}");
        assert_eq!(corpus.listed_header("a").map(|h| h.created_at), Some(1));
    }
}
