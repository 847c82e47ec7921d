//! Index segments built by another instance. Tokenizing and writing postings is most of an
//! index build, and a segment needs nothing but its documents' ids and text, so a host with
//! spare cores can have helpers build segments while this instance extracts the next
//! documents. A stepped build hands out as many *jobs* (documents, about [`JOB_BYTES`] of
//! text) as the host says it has helpers free for; every other document is indexed here as
//! usual. A helper turns a job into segment files ([`build_segment`]); the segment is adopted
//! only when it answers the job it was handed for, document for document. A job not supplied
//! when the index must be complete (a commit, an export) is built here, so a helper that is
//! slow, fails or never answers costs time, never a document.

use super::{TantivyProvider, index_failed};
use crate::error::Error;
use crate::event::transfer::{Reader, Writer};
use crate::search::engine::{DocId, Settled};
use crate::search::tokenizer::TokenizerMode;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use twox_hash::XxHash64;

/// Text a job gathers before it is sealed and can be handed out: about the text a stepped
/// build writes into one segment of its own, so a build with helpers has no more segments
/// than one without.
pub(super) const JOB_BYTES: usize = 4 << 20;

/// Tells this instance's providers apart, so a segment built for another provider's job (an
/// index replaced while a helper worked) is never taken for one of ours.
static PROVIDERS: AtomicU64 = AtomicU64::new(0);

/// Documents to be indexed as one segment.
pub(super) struct Job {
    number: u32,
    ids: Vec<DocId>,
    /// The job as a helper reads it (header, then every document).
    bytes: Writer,
}

/// The jobs of one provider.
pub(super) struct Jobs {
    provider: u64,
    /// Text a job gathers before it is sealed ([`JOB_BYTES`]).
    pub(super) job_bytes: usize,
    next: u32,
    /// How many jobs the host would take now (0: every document is indexed here).
    slots: usize,
    open: Option<(Job, usize)>,
    sealed: VecDeque<Job>,
    /// Handed out, by number, until their segment is supplied.
    taken: HashMap<u32, Job>,
}

impl Jobs {
    pub(super) fn new() -> Self {
        Jobs {
            provider: PROVIDERS.fetch_add(1, Ordering::Relaxed),
            job_bytes: JOB_BYTES,
            next: 0,
            slots: 0,
            open: None,
            sealed: VecDeque::new(),
            taken: HashMap::new(),
        }
    }

    pub(super) fn set_slots(&mut self, slots: usize) {
        self.slots = slots;
    }

    /// Whether the next documents go into a job: while fewer are sealed than the host takes.
    pub(super) fn wanted(&self) -> bool {
        self.sealed.len() < self.slots
    }

    /// Adds a document to the open job, sealing it once it holds `job_bytes` of text.
    pub(super) fn push(&mut self, mode: TokenizerMode, id: DocId, text: &str) {
        let (provider, next) = (self.provider, self.next);
        let (job, bytes) = self.open.get_or_insert_with(|| (Job::new(provider, next, mode), 0));
        job.push(id, text);
        *bytes += text.len();
        if *bytes >= self.job_bytes {
            self.seal();
        }
    }

    /// Seals the open job, if any.
    pub(super) fn seal(&mut self) {
        if let Some((job, _)) = self.open.take() {
            self.next += 1;
            self.sealed.push_back(job.finish());
        }
    }

    /// The next sealed job's bytes, now awaited from the host.
    pub(super) fn take(&mut self) -> Option<Vec<u8>> {
        let job = self.sealed.pop_front()?;
        let bytes = job.bytes.0.clone();
        self.taken.insert(job.number, job);
        Some(bytes)
    }

    /// Every job handed out comes back, to be handed out again or built here.
    pub(super) fn reclaim(&mut self) {
        let mut taken: Vec<Job> = self.taken.drain().map(|(_, job)| job).collect();
        crate::sorting::sort_by_key(&mut taken, |job| job.number);
        self.sealed.extend(taken);
    }

    /// The job a supplied segment answers, if it is one of ours still awaited.
    fn awaited(&mut self, provider: u64, number: u32) -> Option<Job> {
        (provider == self.provider).then(|| self.taken.remove(&number))?
    }

    /// Every job not in the index yet, in no particular order (the index must be complete).
    pub(super) fn drain_all(&mut self) -> Vec<Job> {
        self.seal();
        self.sealed
            .drain(..)
            .chain(self.taken.drain().map(|(_, job)| job))
            .collect()
    }

    /// One sealed job the host has no helper for (built here), once the build has no more
    /// documents to hand over.
    pub(super) fn settle(&mut self) -> (Settled, Option<Job>) {
        self.seal();
        if self.sealed.len() > self.slots {
            return (Settled::Working, self.sealed.pop_back());
        }
        match (self.sealed.is_empty(), self.taken.is_empty()) {
            (false, _) => (Settled::Working, None),
            (true, false) => (Settled::Waiting, None),
            (true, true) => (Settled::Done, None),
        }
    }
}

impl Job {
    fn new(provider: u64, number: u32, mode: TokenizerMode) -> Self {
        let mut out = Writer::default();
        out.u64(provider);
        out.u32(number);
        out.u8(mode_tag(mode));
        Job {
            number,
            ids: Vec::new(),
            bytes: out,
        }
    }

    fn push(&mut self, id: DocId, text: &str) {
        self.ids.push(id);
        self.bytes.u32(id);
        self.bytes.bytes(text.as_bytes());
    }

    /// Ends the job with its document count, so a job cut short is refused.
    fn finish(mut self) -> Self {
        self.bytes.u32(self.ids.len() as u32);
        self
    }

    /// The documents, as [`Job::push`] wrote them.
    pub(super) fn documents(&self) -> Option<(TokenizerMode, Vec<(DocId, &str)>)> {
        read_job(&self.bytes.0)
    }
}

fn mode_tag(mode: TokenizerMode) -> u8 {
    match mode {
        TokenizerMode::Unicode61 => 0,
        TokenizerMode::Cjk => 1,
    }
}

/// A job's tokenizer and documents; `None` unless the bytes are a whole job.
fn read_job(bytes: &[u8]) -> Option<(TokenizerMode, Vec<(DocId, &str)>)> {
    let (body, count) = bytes.split_last_chunk::<4>()?;
    let mut input = Reader(body);
    input.u64()?;
    input.u32()?;
    let mode = match input.u8()? {
        0 => TokenizerMode::Unicode61,
        1 => TokenizerMode::Cjk,
        _ => return None,
    };
    let count = u32::from_le_bytes(*count) as usize;
    let mut docs = Vec::with_capacity(count.min(body.len() / 12));
    while !input.0.is_empty() {
        docs.push((input.u32()?, input.str()?));
    }
    (docs.len() == count).then_some((mode, docs))
}

/// Builds the segment of a job handed out by another instance, as files to supply back:
/// what a helper does.
pub fn build_segment(job: &[u8]) -> Result<Vec<u8>, Error> {
    let (mode, docs) = read_job(job).ok_or_else(|| index_failed("the bytes are not an index job"))?;
    let index = TantivyProvider::new(mode).index_of(docs)?;
    let files = super::index_files(&index)?;
    let mut body = Writer::default();
    body.u32(files.len() as u32);
    for (name, data) in &files {
        body.bytes(name.as_bytes());
        body.bytes(data);
    }
    // The job it answers, and a checksum of the files, checked before tantivy reads a byte.
    let mut out = Writer(job[..12].to_vec());
    out.u64(XxHash64::oneshot(0, &body.0));
    out.0.extend_from_slice(&body.0);
    Ok(out.0)
}

impl TantivyProvider {
    /// Adopts a segment a helper built for a job handed out: `false` (and the job waits to be
    /// handed out again or built here) unless it is one of this provider's awaited jobs and
    /// holds exactly its documents.
    pub(super) fn supply(&mut self, bytes: &[u8]) -> bool {
        let mut input = Reader(bytes);
        let (Some(provider), Some(number)) = (input.u64(), input.u32()) else {
            return false;
        };
        let Some(job) = self.jobs.awaited(provider, number) else {
            return false;
        };
        let intact = input.u64().is_some_and(|sum| sum == XxHash64::oneshot(0, input.0));
        let files = intact.then(|| read_files(&mut input)).flatten();
        match files.and_then(|files| self.open_segment(&files).ok()) {
            Some(segment) if segment.ids.iter().flat_map(|s| &s.ids).eq(&job.ids) => {
                self.segments.push(segment);
                true
            }
            _ => {
                self.jobs.sealed.push_front(job);
                false
            }
        }
    }
}

fn read_files(input: &mut Reader) -> Option<super::SegmentFiles> {
    let count = input.u32()? as usize;
    let mut files = Vec::with_capacity(count.min(64));
    for _ in 0..count {
        files.push((input.str()?.to_owned(), input.bytes()?.to_vec()));
    }
    input.0.is_empty().then_some(files)
}
