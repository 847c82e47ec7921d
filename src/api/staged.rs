//! The staged load: entries handed over one by one, held or (a log's bytes) deferred until
//! the load reaches their log, read one log per step, then published all at once or dropped.

use super::{Archive, LoadCallOptions};
use crate::archive::{Contents, Deferred, EntryNeeds, HEAD_BYTES, LoadOptions, LogFile};
use crate::corpus::{LoadJob, LoadProgress, LoadReport};
use crate::error::{Error, ErrorCode};
use crate::log::transfer::TransferRead;

fn no_load_under_way() -> Error {
    Error::invalid_argument("no load is under way: begin one first")
}

/// Entries handed over one by one (numbered from 0 in that order), then read log by log.
pub(super) struct StagedLoad {
    options: LoadOptions,
    entries: Vec<(String, Contents)>,
    job: Option<LoadJob>,
}

/// What one step of a staged load did: how far the load has got, whether it is done, and the
/// entry whose bytes the next step needs, if any ([`Archive::supply_entry`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadStep {
    /// Bytes and logs read so far, of all gathered (declared sizes for deferred entries).
    #[serde(flatten)]
    pub progress: LoadProgress,
    /// Every log has been read: the load can be committed.
    pub done: bool,
    /// The deferred entry to supply before the next step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub need: Option<NeededEntry>,
}

/// A deferred entry a staged load has reached.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NeededEntry {
    /// Its number: its place among the entries handed over.
    pub entry: usize,
    /// Its path, `/`-separated.
    pub path: String,
    /// Its declared size.
    pub size: u64,
}

impl Archive {
    /// Starts a staged load (discarding one under way): entries are added with
    /// [`Archive::add_entry`] or offered by size with [`Archive::defer_entry`], read with
    /// [`Archive::step_load`] (a deferred log's bytes handed over with
    /// [`Archive::supply_entry`] when a step names it) and published by
    /// [`Archive::commit_load`]. Until then nothing is visible.
    pub fn begin_load(&mut self, options: LoadCallOptions) {
        self.staged = Some(StagedLoad {
            options: options.load,
            entries: Vec::new(),
            job: None,
        });
    }

    fn staged(&mut self) -> Result<&mut StagedLoad, Error> {
        self.staged.as_mut().ok_or_else(no_load_under_way)
    }

    /// The staged load, while entries may still be handed over.
    fn staging(&mut self) -> Result<&mut StagedLoad, Error> {
        let staged = self.staged()?;
        if staged.job.is_some() {
            return Err(Error::invalid_argument(
                "entries must all be added before the load is stepped",
            ));
        }
        Ok(staged)
    }

    /// Adds one entry (a path with `/` separators and its bytes) to the staged load.
    pub fn add_entry(&mut self, path: String, bytes: Vec<u8>) -> Result<(), Error> {
        self.staging()?.entries.push((path, Contents::Held(bytes)));
        Ok(())
    }

    /// Offers one entry to the staged load by its path and `size` alone, with its first bytes
    /// if it was asked for them. [`EntryNeeds::Nothing`]: it is staged, and its bytes are
    /// asked for ([`LoadStep::need`]) when its log is reached, and never if it is no log.
    /// Otherwise nothing is staged: offer it again with its first [`HEAD_BYTES`] bytes
    /// ([`EntryNeeds::Head`]), or add it whole ([`EntryNeeds::Bytes`]: a ZIP).
    pub fn defer_entry(&mut self, path: String, size: u64, head: Option<Vec<u8>>) -> Result<EntryNeeds, Error> {
        let staged = self.staging()?;
        let needs = crate::archive::entry_needs(&path, head.as_deref());
        if needs == EntryNeeds::Nothing {
            let mut head = head.unwrap_or_default();
            head.truncate(HEAD_BYTES);
            let key = staged.entries.len();
            let deferred = Deferred { key, size, head };
            staged.entries.push((path, Contents::Deferred(deferred)));
        }
        Ok(needs)
    }

    /// Does the next bounded piece of the staged load (gathering, then one log per call) and
    /// says how far it got. Fails while a deferred entry it reached is not supplied.
    pub fn step_load(&mut self) -> Result<LoadStep, Error> {
        // The fields apart: the job is made from the corpus it will be committed to.
        let corpus = &self.corpus;
        let StagedLoad { options, entries, job } = self.staged.as_mut().ok_or_else(no_load_under_way)?;
        let job = match job {
            Some(job) => match job.needed() {
                Some((deferred, file)) => return Err(not_supplied(deferred, file)),
                None => job,
            },
            None => {
                let inputs = crate::archive::entries::inputs_from_staged(std::mem::take(entries));
                job.insert(corpus.load_job(inputs, options))
            }
        };
        // Right after gathering, the first log may be one to supply: the step stops there.
        let more = job.needed().is_some() || job.step();
        let need = job.needed().map(|(deferred, file)| NeededEntry {
            entry: deferred.key,
            path: entry_path(file),
            size: deferred.size,
        });
        Ok(LoadStep {
            progress: job.progress(),
            done: !more,
            need,
        })
    }

    /// Supplies the bytes of the entry the last step needed ([`LoadStep::need`]); the next
    /// step reads them. Bytes of another size than declared fail that log only
    /// (`SESSION_LOAD_IO`). Fails, changing nothing, for any other entry.
    pub fn supply_entry(&mut self, entry: usize, bytes: Vec<u8>) -> Result<(), Error> {
        self.loading()?.supply(entry, Ok(bytes))
    }

    /// Says the host could not read the entry the last step needed: that log fails with
    /// `SESSION_LOAD_IO` and `message`, the load goes on.
    pub fn fail_entry(&mut self, entry: usize, message: &str) -> Result<(), Error> {
        let error = Error::new(ErrorCode::LoadIo, format!("the file could not be read: {message}"));
        self.loading()?.supply(entry, Err(error))
    }

    /// The deferred logs the staged load has yet to read, in the order it reads them (the
    /// one a step needs first): what helpers may read ahead ([`read_log_for_transfer`]).
    pub fn entries_ahead(&mut self) -> Result<Vec<usize>, Error> {
        Ok(self.loading()?.ahead().collect())
    }

    /// How a helper reads the deferred log of `entry` as the staged load would: the ticket
    /// [`read_log_for_transfer`] takes with the log's bytes.
    pub fn entry_ticket(&mut self, entry: usize) -> Result<Vec<u8>, Error> {
        Ok(self.loading()?.ticket(entry)?.to_bytes())
    }

    /// Supplies the log of the entry the last step needed as a helper read it: `true` when
    /// the next step takes it as read, `false` when it is refused and its bytes must be
    /// supplied instead ([`Archive::supply_entry`]; the load then reads it and reports any
    /// failure itself). Fails, changing nothing, for any other entry.
    pub fn supply_read_entry(&mut self, entry: usize, read: Vec<u8>) -> Result<bool, Error> {
        self.loading()?.supply_read(entry, read)
    }

    /// Reads the deferred log of `entry` now, in this instance, ahead of the staged load (as
    /// a helper would, while this thread waits for one), and keeps it for
    /// [`Archive::supply_read_ahead`]: `false` when the read failed or the bytes are not the
    /// declared file's. Fails for an entry that is no log the load has yet to read.
    pub fn read_entry_ahead(&mut self, entry: usize, bytes: &[u8]) -> Result<bool, Error> {
        self.loading()?.read_ahead(entry, bytes)
    }

    /// [`Archive::supply_read_entry`] for a log [`Archive::read_entry_ahead`] kept: `false`
    /// when none was kept or it is refused, and its bytes must be supplied instead.
    pub fn supply_read_ahead(&mut self, entry: usize) -> Result<bool, Error> {
        self.loading()?.supply_read_ahead(entry)
    }

    /// The staged load's job, once stepping has gathered it.
    fn loading(&mut self) -> Result<&mut LoadJob, Error> {
        self.staged()?
            .job
            .as_mut()
            .ok_or_else(|| Error::invalid_argument("the load has not reached any entry: step it first"))
    }

    /// Publishes the staged load (all or nothing) and returns its report.
    /// Fails, publishing nothing and keeping the load, while a deferred entry is not supplied.
    pub fn commit_load(&mut self) -> Result<LoadReport, Error> {
        while !self.step_load()?.done {}
        let staged = self
            .staged
            .take()
            .ok_or_else(|| Error::invalid_argument("no load is under way"))?;
        let job = staged
            .job
            .ok_or_else(|| Error::new(ErrorCode::InvalidArgument, "the load was not gathered"))?;
        self.corpus.commit(job)
    }

    /// Loads `(path, bytes)` entries in one call, as a staged load would (all or nothing).
    pub fn load_entries(
        &mut self,
        entries: Vec<(String, Vec<u8>)>,
        options: LoadCallOptions,
    ) -> Result<LoadReport, Error> {
        self.begin_load(options);
        let staged = entries
            .into_iter()
            .try_for_each(|(path, bytes)| self.add_entry(path, bytes));
        let report = staged.and_then(|()| self.commit_load());
        if report.is_err() {
            self.abort_load();
        }
        report
    }

    /// Drops the staged load; nothing of it is published.
    pub fn abort_load(&mut self) {
        self.staged = None;
    }
}

/// Reads one log's `bytes` as `ticket` ([`Archive::entry_ticket`]) says, in any instance, and
/// writes what it read for [`Archive::supply_read_entry`]: how a load reads logs in parallel.
/// Fails as the read fails; the load then reads that log itself and reports the failure.
pub fn read_log_for_transfer(ticket: &[u8], bytes: &[u8]) -> Result<TransferRead, Error> {
    let ticket = crate::log::transfer::DecodeTicket::from_bytes(ticket)?;
    crate::log::transfer::read_for_transfer(&ticket, bytes)
}

/// A step of a load that reached `file`, deferred, whose bytes were not supplied.
fn not_supplied(deferred: &Deferred, file: &LogFile) -> Error {
    Error::invalid_argument(format!(
        "the load needs entry {} ({}) before it can step: supply its bytes",
        deferred.key,
        entry_path(file)
    ))
}

/// The path of a log's entry as it was handed over (`/`-separated): the file's name when it
/// stood alone.
fn entry_path(file: &LogFile) -> String {
    if file.path.is_empty() {
        file.input.clone()
    } else {
        file.path.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::tests::log_text;
    use crate::json::Json;

    /// A dropped folder of logs (one a zstd frame under a `.jsonl` name), a media file, a lone
    /// log and an export ZIP.
    fn entries() -> Vec<(String, Vec<u8>)> {
        let mut not_zstd = vec![0x28, 0xB5, 0x2F, 0xFD];
        not_zstd.extend_from_slice(b"not a frame");
        let entries: [(&str, Vec<u8>); 6] = [
            ("drop/logs/b.jsonl", log_text("b", 2, &["two"])),
            ("drop/logs/a.jsonl", log_text("a", 1, &["one", "alpha"])),
            ("drop/logs/z.jsonl", not_zstd),
            ("drop/media/p.png", b"\x89PNG\r\n".to_vec()),
            ("one.jsonl", log_text("c", 3, &["three"])),
            (
                "sample.zip",
                include_bytes!("../../www/sample/sample-archive.zip").to_vec(),
            ),
        ];
        entries
            .into_iter()
            .map(|(path, bytes)| (path.to_owned(), bytes))
            .collect()
    }

    /// The same entries loaded whole, as folder and file inputs (not through a staged load).
    fn eager(entries: &[(String, Vec<u8>)]) -> (Archive, LoadReport) {
        let mut archive = Archive::default();
        let inputs = crate::archive::entries::inputs_from_entries(entries.to_vec());
        let report = archive.load(inputs, false);
        (archive, report.expect("loads"))
    }

    /// Offers every entry as a host does: by size, its first bytes if asked, whole if asked.
    /// Returns what each offer ended as.
    fn offer(archive: &mut Archive, entries: &[(String, Vec<u8>)]) -> Vec<EntryNeeds> {
        archive.begin_load(LoadCallOptions::default());
        let mut ends = Vec::new();
        for (path, bytes) in entries {
            let size = bytes.len() as u64;
            let mut needs = archive.defer_entry(path.clone(), size, None).expect("offers");
            if needs == EntryNeeds::Head {
                let head = bytes[..bytes.len().min(HEAD_BYTES)].to_vec();
                needs = archive.defer_entry(path.clone(), size, Some(head)).expect("offers");
            }
            if needs == EntryNeeds::Bytes {
                archive.add_entry(path.clone(), bytes.clone()).expect("adds");
            }
            ends.push(needs);
        }
        ends
    }

    /// Steps the staged load to its end, answering each need with `supply`; returns the
    /// entries needed, in order, and the first step's progress.
    fn run(archive: &mut Archive, mut supply: impl FnMut(&mut Archive, usize)) -> (Vec<usize>, LoadProgress) {
        let mut needed = Vec::new();
        let mut first = None;
        loop {
            let step = archive.step_load().expect("steps");
            first.get_or_insert(step.progress);
            if step.done {
                break;
            }
            if let Some(need) = step.need {
                needed.push(need.entry);
                supply(archive, need.entry);
            }
        }
        (needed, first.unwrap_or_default())
    }

    fn code(result: Result<(), Error>) -> ErrorCode {
        result.expect_err("refused").code
    }

    fn text<T: serde::Serialize>(value: &T) -> String {
        serde_json::to_string(value).expect("serializes")
    }

    fn listing(archive: &mut Archive) -> String {
        archive
            .call_json("listSessions", &[], super::super::Dialect::Dsh)
            .expect("lists")
    }

    #[test]
    fn a_deferred_load_asks_for_each_log_once_in_turn_and_answers_as_an_eager_one() {
        let entries = entries();
        let (mut eager_archive, eager_report) = eager(&entries);
        let mut archive = Archive::default();
        let ends = offer(&mut archive, &entries);
        use EntryNeeds::{Bytes, Nothing};
        // Only the ZIP is handed whole; the media file is never a log, so never needed.
        assert_eq!(ends, [Nothing, Nothing, Nothing, Nothing, Nothing, Bytes]);
        let (needed, first) = run(&mut archive, |archive, entry| {
            archive.supply_entry(entry, entries[entry].1.clone()).expect("supplies");
        });
        // In path order, as gathering takes them: the lone log, then the folder's logs.
        assert_eq!(needed, [4, 1, 0, 2]);
        let logs: u64 = [0, 1, 2, 4].iter().map(|&i| entries[i].1.len() as u64).sum();
        assert!(first.bytes_total > logs, "declared sizes and the ZIP's logs: {first:?}");
        let report = archive.commit_load().expect("commits");
        assert_eq!(text(&report), text(&eager_report));
        assert_eq!(listing(&mut archive), listing(&mut eager_archive));
        assert!(
            report.failures.iter().any(|f| f.path == "drop/logs/z.jsonl"),
            "the fake frame fails"
        );
    }

    #[test]
    fn bytes_of_another_size_or_a_failed_read_fail_that_log_only() {
        let entries = entries();
        let mut archive = Archive::default();
        offer(&mut archive, &entries);
        run(&mut archive, |archive, entry| match entry {
            0 => archive.fail_entry(entry, "NotReadableError").expect("told"),
            1 => {
                let short = entries[1].1[1..].to_vec();
                archive.supply_entry(entry, short).expect("supplies")
            }
            _ => archive.supply_entry(entry, entries[entry].1.clone()).expect("supplies"),
        });
        let last = archive.step_load().expect("done").progress;
        assert_eq!(last.bytes_done, last.bytes_total, "the failed logs count as done");
        let report = archive.commit_load().expect("commits");
        let failed = |path: &str| report.failures.iter().find(|f| f.path == path).map(|f| f.code);
        assert_eq!(failed("drop/logs/b.jsonl"), Some(ErrorCode::LoadIo));
        assert_eq!(failed("drop/logs/a.jsonl"), Some(ErrorCode::LoadIo));
        let (_, eager_report) = eager(&entries);
        let ids = |report: &LoadReport| report.sessions.iter().map(|s| s.session_id.clone()).collect::<Vec<_>>();
        let expected: Vec<String> = ids(&eager_report)
            .into_iter()
            .filter(|id| id != "a" && id != "b")
            .collect();
        assert_eq!(ids(&report), expected);
        let done = archive.corpus().len();
        assert_eq!(done, expected.len());
    }

    #[test]
    fn stepping_or_committing_before_supplying_is_a_typed_error_that_changes_nothing() {
        let entries = entries();
        let mut archive = Archive::default();
        offer(&mut archive, &entries);
        let step = archive.step_load().expect("gathers");
        let need = step.need.expect("the first log is deferred");
        assert_eq!((need.entry, need.path.as_str()), (4, "one.jsonl"));
        assert_eq!(code(archive.step_load().map(|_| ())), ErrorCode::InvalidArgument);
        assert_eq!(code(archive.commit_load().map(|_| ())), ErrorCode::InvalidArgument);
        assert_eq!(
            code(archive.supply_entry(0, entries[0].1.clone())),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            code(archive.add_entry("late.jsonl".into(), Vec::new())),
            ErrorCode::InvalidArgument
        );
        assert_eq!(archive.corpus().len(), 0, "nothing published");
        // The load goes on as if nothing had been asked.
        archive.supply_entry(4, entries[4].1.clone()).expect("supplies");
        run(&mut archive, |archive, entry| {
            archive.supply_entry(entry, entries[entry].1.clone()).expect("supplies");
        });
        let report = archive.commit_load().expect("commits");
        assert_eq!(text(&report), text(&eager(&entries).1));
    }

    #[test]
    fn an_aborted_deferred_load_publishes_nothing() {
        let entries = entries();
        let mut archive = Archive::default();
        offer(&mut archive, &entries);
        let need = archive.step_load().expect("gathers").need.expect("deferred");
        archive
            .supply_entry(need.entry, entries[need.entry].1.clone())
            .expect("supplies");
        archive.step_load().expect("reads one log");
        archive.abort_load();
        assert_eq!(archive.corpus().len(), 0);
        assert_eq!(listing(&mut archive), "[]");
        assert_eq!(
            archive.step_load().map(|_| ()).expect_err("no load").code,
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn a_deferred_log_never_supplied_fails_alone_in_a_direct_load() {
        let log = log_text("a", 1, &["one"]);
        let deferred = Deferred {
            key: 0,
            size: log.len() as u64,
            head: Vec::new(),
        };
        let inputs = crate::archive::entries::inputs_from_staged(vec![
            ("drop/a.jsonl".into(), Contents::Deferred(deferred)),
            ("drop/b.jsonl".into(), Contents::Held(log_text("b", 2, &["two"]))),
        ]);
        let report = Archive::default().load(inputs, false).expect("loads");
        assert_eq!(report.sessions.len(), 1);
        assert_eq!(report.failures[0].code, ErrorCode::LoadIo);
        assert_eq!(report.failures[0].path, "drop/a.jsonl");
    }

    /// Reads `entry` as a helper would; `None` when that read fails.
    fn helper_read(archive: &mut Archive, entry: usize, bytes: &[u8]) -> Option<Vec<u8>> {
        let ticket = archive.entry_ticket(entry).expect("a ticket for a log ahead");
        read_log_for_transfer(&ticket, bytes).ok().map(TransferRead::into_bytes)
    }

    #[test]
    fn logs_read_by_helpers_are_taken_as_read_and_the_load_answers_as_an_eager_one() {
        let entries = entries();
        let (mut eager_archive, eager_report) = eager(&entries);
        let mut archive = Archive::default();
        offer(&mut archive, &entries);
        let mut taken = Vec::new();
        let mut ahead_at_first = None;
        let (needed, _) = run(&mut archive, |archive, entry| {
            let ahead = archive.entries_ahead().expect("the logs ahead");
            assert_eq!(ahead.first(), Some(&entry), "the needed log leads those ahead");
            ahead_at_first.get_or_insert(ahead);
            let read = helper_read(archive, entry, &entries[entry].1);
            if read.is_some_and(|read| archive.supply_read_entry(entry, read).expect("offered")) {
                taken.push(entry);
            } else {
                archive.supply_entry(entry, entries[entry].1.clone()).expect("supplies");
            }
        });
        assert_eq!(ahead_at_first.as_deref(), Some(&needed[..]));
        // The fake frame fails in the helper; the load reads it itself and reports it.
        assert_eq!(taken, [4, 1, 0]);
        let report = archive.commit_load().expect("commits");
        assert_eq!(text(&report), text(&eager_report));
        assert_eq!(listing(&mut archive), listing(&mut eager_archive));
        let read = |archive: &mut Archive| {
            let id = [Json::str("a")];
            archive
                .call_json("readSession", &id, super::super::Dialect::Dsh)
                .expect("reads")
        };
        assert_eq!(read(&mut archive), read(&mut eager_archive));
    }

    #[test]
    fn logs_read_ahead_in_this_instance_are_taken_when_the_load_reaches_them() {
        let entries = entries();
        let (mut eager_archive, eager_report) = eager(&entries);
        let mut archive = Archive::default();
        offer(&mut archive, &entries);
        let mut taken = Vec::new();
        let (needed, _) = run(&mut archive, |archive, entry| {
            if taken.is_empty() {
                // At the first need, every other log ahead is read ahead; a read of one log's
                // bytes as another's is refused.
                let ahead = archive.entries_ahead().expect("the logs ahead");
                let (other, wrong) = (ahead[1], &entries[ahead[2]].1);
                assert_eq!(archive.read_entry_ahead(other, wrong).ok(), Some(false));
                for &later in &ahead[1..] {
                    archive.read_entry_ahead(later, &entries[later].1).expect("a log ahead");
                }
                let refused = archive.supply_read_ahead(ahead[1]).map(drop);
                assert_eq!(code(refused), ErrorCode::InvalidArgument, "not needed now");
            }
            if archive.supply_read_ahead(entry).expect("needed") {
                taken.push(entry);
            } else {
                archive.supply_entry(entry, entries[entry].1.clone()).expect("supplies");
            }
        });
        // Nothing was read ahead of the first log, and the fake frame's read failed: the load
        // reads those itself and reports the failure as an eager load does.
        assert_eq!(needed, [4, 1, 0, 2]);
        assert_eq!(taken, [1, 0]);
        let report = archive.commit_load().expect("commits");
        assert_eq!(text(&report), text(&eager_report));
        assert_eq!(listing(&mut archive), listing(&mut eager_archive));
    }

    #[test]
    fn a_read_of_another_log_is_refused_and_its_bytes_are_asked_for_instead() {
        let entries = entries();
        let mut archive = Archive::default();
        offer(&mut archive, &entries);
        let first = archive.step_load().expect("gathers");
        let need = first.need.expect("a log to supply").entry;
        let other = archive.entries_ahead().expect("ahead")[1];
        let read = helper_read(&mut archive, other, &entries[other].1).expect("reads");
        assert_eq!(archive.supply_read_entry(need, read.clone()).ok(), Some(false));
        assert_eq!(
            archive.supply_read_entry(other, read).expect_err("not needed now").code,
            ErrorCode::InvalidArgument
        );
        // Refusals leave the need in place: a step still waits for it.
        assert_eq!(code(archive.step_load().map(drop)), ErrorCode::InvalidArgument);
        archive.supply_entry(need, entries[need].1.clone()).expect("supplies");
        let step = archive.step_load().expect("steps");
        assert_eq!(step.progress.sessions_done, 1);
        assert_eq!(step.progress.bytes_done, entries[need].1.len() as u64);
        // Tickets are for logs still ahead: not one read already, nor an entry that is no log.
        for gone in [need, 3, 99] {
            let refused = archive.entry_ticket(gone).map(drop);
            assert_eq!(code(refused), ErrorCode::InvalidArgument, "{gone}");
        }
        assert!(archive.entry_ticket(other).is_ok());
    }
}
