//! The in-memory tantivy provider: each reconcile batch becomes single-segment indexes (no
//! threads, so it runs in wasm), the next one started once the one being written holds
//! `SEGMENT_BYTES` (8 MiB) of postings, which bounds the memory a large first build needs;
//! phrases are found by intersecting positional postings. Small commits stay in a tail
//! index until they add up to a segment's worth.

mod handoff;
mod tail;

use super::engine::{CountSink, DocId, SearchProvider, Settled};
use super::phrase::Phrase;
use super::rank::merge_spans;
use super::tokenizer::{TokenizerMode, Tokens};
use crate::error::{Error, ErrorCode};
pub use handoff::build_segment;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tail::Tail;
use tantivy::Directory as _;
use tantivy::directory::RamDirectory;
use tantivy::postings::{Postings, SegmentPostings};
use tantivy::schema::IndexRecordOption::{self, WithFreqs, WithFreqsAndPositions};
use tantivy::schema::{FAST, Field, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{Token as TantivyToken, TokenStream, Tokenizer};
use tantivy::{
    DocSet, Index, IndexSettings, InvertedIndexReader, ReloadPolicy, Searcher, SingleSegmentIndexWriter,
    TantivyDocument, Term,
};

const TOKENIZER: &str = "dsh_unicode61";
/// A segment being written is finished once its writer's memory has grown by this much since
/// it was opened (checked between batches), so building a large index never holds all its
/// postings at once. (A fresh writer already holds about 13 MB, its term table sized up front
/// from its memory budget: the growth, not the total, is what the segment's documents cost.)
/// A build in one call (a search, `reconcile`) writes segments of 16 MiB: each segment
/// repeats the terms it shares with the others, so fewer segments cost less to finish and to
/// search (three segments at 100k events natively).
const SEGMENT_BYTES: usize = 16 << 20;
/// [`SEGMENT_BYTES`] in a build in bounded steps: finishing a segment is one uninterruptible
/// call, and the build cannot report progress during it. Over the 100k bench corpus in Node,
/// finishing took 178-283 ms a segment at 4 MiB and 110-137 ms at 2 MiB (the first 239 ms),
/// with the build's time and the queries' p50 and p95 unchanged within their spread.
const STEPPED_SEGMENT_BYTES: usize = 2 << 20;

/// Adapts our `unicode61` tokenizer (the recall contract) to tantivy.
#[derive(Clone)]
struct Unicode61(TokenizerMode);

/// Our tokens streamed into one reused tantivy token (no allocation per token).
struct Stream<'a> {
    tokens: Tokens<'a>,
    token: TantivyToken,
}

impl Tokenizer for Unicode61 {
    type TokenStream<'a> = Stream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Stream<'a> {
        Stream {
            tokens: Tokens::new(text, self.0),
            token: TantivyToken::default(),
        }
    }
}

impl TokenStream for Stream<'_> {
    fn advance(&mut self) -> bool {
        let Some(next) = self.tokens.next_ref() else {
            return false;
        };
        self.token.offset_from = next.byte_range.start;
        self.token.offset_to = next.byte_range.end;
        self.token.position = next.position;
        self.token.position_length = 1;
        self.token.text.clear();
        self.token.text.push_str(next.text);
        true
    }

    fn token(&self) -> &TantivyToken {
        &self.token
    }

    fn token_mut(&mut self) -> &mut TantivyToken {
        &mut self.token
    }
}

fn index_failed(e: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::QueryIndexFailed, format!("the search index failed: {e}"))
}

/// A set of [`DocId`]s as a bitmap: a membership test per matching document costs one load.
#[derive(Default)]
struct DocBits(Vec<u64>);

impl DocBits {
    fn insert(&mut self, id: DocId) {
        let (word, bit) = (id as usize / 64, id % 64);
        if word >= self.0.len() {
            self.0.resize(word + 1, 0);
        }
        self.0[word] |= 1 << bit;
    }

    fn remove(&mut self, id: DocId) {
        if let Some(word) = self.0.get_mut(id as usize / 64) {
            *word &= !(1 << (id % 64));
        }
    }

    fn contains(&self, id: DocId) -> bool {
        self.0
            .get(id as usize / 64)
            .is_some_and(|word| word & (1 << (id % 64)) != 0)
    }
}

/// The lowest and highest id of a set of documents, inclusive.
type IdBounds = (DocId, DocId);

/// The documents one session owns. While their ids are consecutive (as the engine assigns
/// them) they are a range, so scoping a search to the session is a range check and a million
/// documents cost no set; ids that break the run are kept in a set.
struct SessionDocs {
    span: Option<std::ops::RangeInclusive<DocId>>,
    /// Every id once they are not consecutive (empty while `span` holds them).
    scattered: HashSet<DocId>,
    /// The lowest and highest id, consecutive or not: a scoped search reads only the part of
    /// each segment between them.
    bounds: Option<IdBounds>,
}

impl SessionDocs {
    fn new(ids: HashSet<DocId>) -> Self {
        let bounds = ids.iter().min().zip(ids.iter().max()).map(|(&lo, &hi)| (lo, hi));
        match bounds {
            Some((lo, hi)) if (hi - lo) as usize + 1 == ids.len() => SessionDocs {
                span: Some(lo..=hi),
                scattered: HashSet::new(),
                bounds,
            },
            _ => SessionDocs {
                span: None,
                scattered: ids,
                bounds,
            },
        }
    }

    /// Adds ids (a build in steps, a session that grew); the span holds while they continue it.
    fn extend(&mut self, ids: impl IntoIterator<Item = DocId>) {
        for id in ids {
            match self.span.take() {
                Some(span) if id == span.end() + 1 => self.span = Some(*span.start()..=id),
                Some(span) => {
                    self.scattered.extend(span);
                    self.scattered.insert(id);
                }
                None if self.scattered.is_empty() => self.span = Some(id..=id),
                None => {
                    self.scattered.insert(id);
                }
            }
            self.bounds = Some(self.bounds.map_or((id, id), |(lo, hi)| (lo.min(id), hi.max(id))));
        }
    }

    fn contains(&self, id: DocId) -> bool {
        match &self.span {
            Some(span) => span.contains(&id),
            None => self.scattered.contains(&id),
        }
    }

    /// Every id, in no particular order.
    fn ids(self) -> impl Iterator<Item = DocId> {
        self.span.into_iter().flatten().chain(self.scattered)
    }
}

/// One segment reader's `doc` column decoded into a plain array (segment document →
/// [`DocId`]): a common word's search maps most documents, and the column's blockwise-linear
/// decoding cost more than the match.
struct SegmentIds {
    ids: Vec<DocId>,
    /// Whether `ids` ascend (documents are written in the order the engine numbers them), so
    /// the documents of an id range are one run of segment documents, found by bisection.
    ascending: bool,
}

impl SegmentIds {
    fn new(ids: Vec<DocId>) -> Self {
        let ascending = ids.windows(2).all(|pair| pair[0] < pair[1]);
        SegmentIds { ids, ascending }
    }

    /// The segment documents a search within `bounds` (lowest and highest id, inclusive) has
    /// to read: all of them unless `ids` ascend.
    fn docs_within(&self, bounds: Option<IdBounds>) -> std::ops::Range<u32> {
        match bounds {
            Some((lo, hi)) if self.ascending => {
                let start = self.ids.partition_point(|&id| id < lo);
                let end = self.ids.partition_point(|&id| id <= hi);
                start as u32..end as u32
            }
            _ => 0..self.ids.len() as u32,
        }
    }
}

/// One finished single-segment index, with each of its segment readers' ids and text
/// postings. (A search visits every segment: taking the postings reader from the segment's
/// locked cache each time cost as much as the dictionary lookup.)
struct Segment {
    searcher: Searcher,
    ids: Vec<SegmentIds>,
    inverted: Vec<Arc<InvertedIndexReader>>,
}

impl Segment {
    /// Maps every id through `renumber` (a snapshot's import). Documents no session holds map
    /// to [`NO_DOC`](super::engine::NO_DOC), past every other id, so a segment holding several
    /// may no longer ascend: a search within one session then reads all of it.
    fn renumber(&mut self, renumber: &dyn Fn(DocId) -> DocId) {
        for reader in &mut self.ids {
            let ids = std::mem::take(&mut reader.ids);
            *reader = SegmentIds::new(ids.into_iter().map(renumber).collect());
        }
    }

    fn new(searcher: Searcher, text: Field) -> Result<Self, Error> {
        let inverted = searcher
            .segment_readers()
            .iter()
            .map(|segment| segment.inverted_index(text).map_err(index_failed))
            .collect::<Result<_, _>>()?;
        let ids = searcher
            .segment_readers()
            .iter()
            .map(|segment| {
                let column = segment.fast_fields().u64("doc").map_err(index_failed)?;
                (0..segment.max_doc())
                    .map(|doc| {
                        let id = column
                            .first(doc)
                            .ok_or_else(|| index_failed("a document without an id"))?;
                        DocId::try_from(id).map_err(index_failed)
                    })
                    .collect::<Result<Vec<DocId>, Error>>()
                    .map(SegmentIds::new)
            })
            .collect::<Result<_, _>>()?;
        Ok(Segment {
            searcher,
            ids,
            inverted,
        })
    }
}

/// Full-text search in tantivy, held in memory.
pub struct TantivyProvider {
    mode: TokenizerMode,
    schema: Schema,
    text: Field,
    doc: Field,
    segments: Vec<Segment>,
    /// The segment being written since the last commit (documents go in as they arrive, so
    /// no copy of their text is kept).
    writer: Option<SingleSegmentIndexWriter>,
    /// The writer's memory use when it was opened.
    writer_base: usize,
    /// Documents each session currently owns; older versions stay in old segments, unlisted.
    by_session: HashMap<String, SessionDocs>,
    live: DocBits,
    /// Documents of small commits, searched in memory until there are enough for a segment.
    tail: Tail,
    /// How much the writer may grow from `writer_base` before its segment is finished.
    segment_bytes: usize,
    /// Documents handed out to be indexed by a helper.
    jobs: handoff::Jobs,
}

impl TantivyProvider {
    /// An empty index whose documents all go into segments, even those of the smallest
    /// commits (tests of the segment path use it).
    pub fn without_tail(mode: TokenizerMode) -> Self {
        TantivyProvider {
            tail: Tail::new(0),
            ..TantivyProvider::new(mode)
        }
    }

    /// Hands out jobs of `bytes` of text instead of about 4 MiB (tests of the hand-off use
    /// small ones).
    pub fn with_job_bytes(mut self, bytes: usize) -> Self {
        self.jobs.job_bytes = bytes.max(1);
        self
    }

    /// How much a segment's writer may grow now before the segment is finished.
    #[cfg(test)]
    pub(super) fn segment_bytes(&self) -> usize {
        self.segment_bytes
    }

    /// Segments finished so far.
    #[cfg(test)]
    pub(super) fn segment_count(&self) -> usize {
        self.segments.len()
    }

    /// An empty index tokenizing with `mode`.
    pub fn new(mode: TokenizerMode) -> Self {
        let mut builder = Schema::builder();
        let indexing = TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_index_option(WithFreqsAndPositions);
        let text = builder.add_text_field("text", TextOptions::default().set_indexing_options(indexing));
        let doc = builder.add_u64_field("doc", FAST);
        TantivyProvider {
            mode,
            schema: builder.build(),
            text,
            doc,
            segments: Vec::new(),
            writer: None,
            writer_base: 0,
            by_session: HashMap::new(),
            live: DocBits::default(),
            tail: Tail::new(tail::TAIL_BYTES),
            segment_bytes: SEGMENT_BYTES,
            jobs: handoff::Jobs::new(),
        }
    }

    /// A fresh single-segment writer.
    fn open_writer(&self) -> Result<SingleSegmentIndexWriter, Error> {
        let settings = IndexSettings {
            docstore_compress_dedicated_thread: false,
            ..IndexSettings::default()
        };
        Index::builder()
            .schema(self.schema.clone())
            .settings(settings)
            .tokenizers(self.tokenizers())
            .single_segment_index_writer(RamDirectory::create(), 15_000_000)
            .map_err(index_failed)
    }

    fn tokenizers(&self) -> tantivy::tokenizer::TokenizerManager {
        let tokenizers = tantivy::tokenizer::TokenizerManager::default();
        tokenizers.register(TOKENIZER, Unicode61(self.mode));
        tokenizers
    }

    fn add_documents<'a>(
        &self,
        writer: &mut SingleSegmentIndexWriter,
        docs: impl IntoIterator<Item = (DocId, &'a str)>,
    ) -> Result<(), Error> {
        for (id, text) in docs {
            let mut document = TantivyDocument::default();
            document.add_text(self.text, text);
            document.add_u64(self.doc, u64::from(id));
            writer.add_document(document).map_err(index_failed)?;
        }
        Ok(())
    }

    /// A finished index, opened for search.
    fn segment_of(&self, index: &Index) -> Result<Segment, Error> {
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(index_failed)?;
        Segment::new(reader.searcher(), self.text)
    }

    /// A segment index from its files (a snapshot's, a helper's).
    fn open_segment(&self, files: &SegmentFiles) -> Result<Segment, Error> {
        let directory = RamDirectory::create();
        for (name, data) in files {
            directory
                .atomic_write(std::path::Path::new(name), data)
                .map_err(index_failed)?;
        }
        let mut index = Index::open(directory).map_err(index_failed)?;
        index.set_tokenizers(self.tokenizers());
        self.segment_of(&index)
    }

    /// `docs` indexed as one finished single-segment index (a job's, here or in a helper).
    fn index_of<'a>(&self, docs: impl IntoIterator<Item = (DocId, &'a str)>) -> Result<Index, Error> {
        let mut writer = self.open_writer()?;
        self.add_documents(&mut writer, docs)?;
        writer.finalize().map_err(index_failed)
    }

    /// Opens a finished index for search as the newest segment.
    fn push_segment(&mut self, index: &Index) -> Result<(), Error> {
        let segment = self.segment_of(index)?;
        self.segments.push(segment);
        Ok(())
    }

    /// Builds a job's segment here (no helper took it, or its answer did not come).
    fn build_job(&mut self, job: &handoff::Job) -> Result<(), Error> {
        let (_, docs) = job.documents().ok_or_else(|| index_failed("a damaged index job"))?;
        let index = self.index_of(docs)?;
        self.push_segment(&index)
    }

    /// Builds here every job not in the index yet: it must be complete now.
    fn build_all_jobs(&mut self) -> Result<(), Error> {
        for job in self.jobs.drain_all() {
            self.build_job(&job)?;
        }
        Ok(())
    }

    /// Adds documents to the segment being written, finishing it once it is large; or to the
    /// job a helper will index, while the host has helpers free.
    fn write<'a>(&mut self, docs: impl IntoIterator<Item = (DocId, &'a str)>) -> Result<(), Error> {
        let mut docs = docs.into_iter().peekable();
        while self.jobs.wanted() {
            let Some((id, text)) = docs.next() else {
                return Ok(());
            };
            self.jobs.push(self.mode, id, text);
        }
        if docs.peek().is_none() {
            return Ok(());
        }
        let mut writer = match self.writer.take() {
            Some(writer) => writer,
            None => {
                let writer = self.open_writer()?;
                self.writer_base = writer.mem_usage();
                writer
            }
        };
        let added = self.add_documents(&mut writer, docs);
        let full = writer.mem_usage() > self.writer_base + self.segment_bytes;
        self.writer = Some(writer);
        added?;
        if full {
            self.flush()?;
        }
        Ok(())
    }

    /// Finishes the segment being written (if any) as one new single-segment index.
    fn flush(&mut self) -> Result<(), Error> {
        let Some(writer) = self.writer.take() else {
            return Ok(());
        };
        let index = writer.finalize().map_err(index_failed)?;
        self.push_segment(&index)
    }
}

impl TantivyProvider {
    /// The documents a search (of `session`, if given) may report, and the lowest and highest
    /// id among them when scoped; `None` when `session` owns nothing.
    fn scope(&self, session: Option<&str>) -> Option<(impl Fn(DocId) -> bool + '_, Option<IdBounds>)> {
        let allowed = match session {
            Some(id) => Some(self.by_session.get(id)?),
            None => None,
        };
        let keep = move |id: DocId| self.live.contains(id) && allowed.is_none_or(|a| a.contains(id));
        Some((keep, allowed.and_then(|a| a.bounds)))
    }

    /// Hands `visit` every document `keep` admits (its id within `bounds`, if given) of the
    /// segments holding all the terms of `phrase`, each as often as the phrase does, with the
    /// postings of its distinct terms positioned on it, read as `option` says (positions only
    /// where they will be asked for). Generic over `visit`, so the per-document call of a
    /// common word's walk is inlined.
    fn walk(
        &self,
        phrase: &Phrase<'_>,
        option: IndexRecordOption,
        keep: &impl Fn(DocId) -> bool,
        bounds: Option<IdBounds>,
        mut visit: impl FnMut(DocId, &mut [SegmentPostings]),
    ) -> Result<(), Error> {
        let terms: Vec<Term> = phrase
            .terms
            .iter()
            .map(|t| Term::from_field_text(self.text, t))
            .collect();
        let mut postings: Vec<SegmentPostings> = Vec::with_capacity(terms.len());
        for view in &self.segments {
            for (inverted, ids) in view.inverted.iter().zip(&view.ids) {
                // A session's documents are a few runs of a few segments: the others are not
                // even looked up.
                let within = ids.docs_within(bounds);
                if within.is_empty() {
                    continue;
                }
                postings.clear();
                for term in &terms {
                    let Some(info) = inverted.get_term_info(term).map_err(index_failed)? else {
                        break;
                    };
                    postings.push(
                        inverted
                            .read_postings_from_terminfo(&info, option)
                            .map_err(index_failed)?,
                    );
                }
                if postings.is_empty() || postings.len() != terms.len() {
                    continue;
                }
                let first = &mut postings[0];
                let mut doc = if first.doc() < within.start {
                    first.seek(within.start)
                } else {
                    first.doc()
                };
                'docs: while doc < within.end {
                    // Leapfrog every term's postings to a common document.
                    for p in postings.iter_mut() {
                        // `seek` requires a target at or after the current document.
                        let reached = if p.doc() >= doc { p.doc() } else { p.seek(doc) };
                        if reached != doc {
                            doc = reached;
                            continue 'docs;
                        }
                    }
                    if let Some(&id) = ids.ids.get(doc as usize).filter(|id| keep(**id))
                        && holds_enough(phrase, &postings)
                    {
                        visit(id, &mut postings);
                    }
                    doc = postings[0].advance();
                }
            }
        }
        Ok(())
    }
}

/// One segment index's files: `(name, bytes)`.
pub type SegmentFiles = Vec<(String, Vec<u8>)>;

/// An index's files (`meta.json` and its segment's files), by name.
fn index_files(index: &Index) -> Result<SegmentFiles, Error> {
    let metas = index.load_metas().map_err(index_failed)?;
    let mut names: Vec<std::path::PathBuf> = metas.list_segment_files().into_iter().collect();
    names.push(std::path::PathBuf::from("meta.json"));
    crate::sorting::sort(&mut names);
    let mut files = Vec::with_capacity(names.len());
    for name in names {
        if !index.directory().exists(&name).map_err(index_failed)? {
            continue;
        }
        let data = index.directory().atomic_read(&name).map_err(index_failed)?;
        files.push((name.to_string_lossy().into_owned(), data));
    }
    Ok(files)
}

impl TantivyProvider {
    /// Every segment index's files (`meta.json` and segment files), for snapshots.
    pub(super) fn export_segments(&mut self) -> Result<Vec<SegmentFiles>, Error> {
        // Snapshots hold segments only: the tail goes into one first, and no job stays out.
        self.build_all_jobs()?;
        let docs = self.tail.drain();
        self.write(docs.iter().map(|(id, text)| (*id, text.as_str())))?;
        self.flush()?;
        self.segments
            .iter()
            .map(|segment| index_files(segment.searcher.index()))
            .collect()
    }

    /// Rebuilds a provider from exported segment files and the live documents of each session.
    pub(super) fn import_segments(
        mode: TokenizerMode,
        segments: Vec<SegmentFiles>,
        by_session: HashMap<String, HashSet<DocId>>,
        renumber: &dyn Fn(DocId) -> DocId,
    ) -> Result<Self, Error> {
        let mut provider = TantivyProvider::new(mode);
        for files in segments {
            let mut segment = provider.open_segment(&files)?;
            segment.renumber(renumber);
            provider.segments.push(segment);
        }
        for id in by_session.values().flatten() {
            provider.live.insert(*id);
        }
        provider.by_session = by_session
            .into_iter()
            .map(|(session, ids)| (session, SessionDocs::new(ids)))
            .collect();
        Ok(provider)
    }
}

impl SearchProvider for TantivyProvider {
    fn replace_session(&mut self, session: &str, docs: &[(DocId, &str)]) -> Result<(), Error> {
        self.remove_session(session)?;
        self.by_session
            .insert(session.to_owned(), SessionDocs::new(HashSet::new()));
        self.append_documents(session, docs)
    }

    fn appends(&self) -> bool {
        true
    }

    fn append_documents(&mut self, session: &str, docs: &[(DocId, &str)]) -> Result<(), Error> {
        for (id, _) in docs {
            self.live.insert(*id);
        }
        self.by_session
            .entry(session.to_owned())
            .or_insert_with(|| SessionDocs::new(HashSet::new()))
            .extend(docs.iter().map(|(id, _)| *id));
        let bytes: usize = docs.iter().map(|(_, text)| text.len()).sum();
        if bytes >= tail::DIRECT_BYTES || self.jobs.wanted() {
            // A build's batch: straight into the segment being written, no copy (or into a
            // job for a helper, which copies it anyway).
            return self.write(docs.iter().map(|(id, text)| (*id, *text)));
        }
        for (id, text) in docs {
            self.tail.push(*id, text);
        }
        if self.tail.is_full() {
            let docs = self.tail.drain();
            self.write(docs.iter().map(|(id, text)| (*id, text.as_str())))?;
        }
        Ok(())
    }

    fn remove_session(&mut self, session: &str) -> Result<(), Error> {
        if let Some(old) = self.by_session.remove(session) {
            for id in old.ids() {
                self.live.remove(id);
            }
        }
        Ok(())
    }

    fn build_in_steps(&mut self, stepped: bool) {
        self.segment_bytes = if stepped { STEPPED_SEGMENT_BYTES } else { SEGMENT_BYTES };
    }

    fn commit(&mut self) -> Result<(), Error> {
        self.build_all_jobs()?;
        self.tail.commit(self.mode);
        self.flush()
    }

    fn hand_out(&mut self, slots: usize) {
        self.jobs.set_slots(slots);
    }

    fn settle(&mut self) -> Result<Settled, Error> {
        let (settled, job) = self.jobs.settle();
        if let Some(job) = job {
            self.build_job(&job)?;
        }
        Ok(settled)
    }

    fn take_job(&mut self) -> Option<Vec<u8>> {
        self.jobs.take()
    }

    fn supply_segment(&mut self, bytes: &[u8]) -> bool {
        self.supply(bytes)
    }

    fn reclaim_jobs(&mut self) {
        self.jobs.reclaim();
    }

    fn phrase_matches(&self, phrase: &[String], session: Option<&str>) -> Result<Vec<(DocId, Vec<u32>)>, Error> {
        let mut out = Vec::new();
        if phrase.is_empty() {
            return Ok(out);
        }
        let terms = Phrase::new(phrase);
        let mut starts = Vec::new();
        let mut positions = vec![Vec::new(); terms.terms.len()];
        let Some((keep, bounds)) = self.scope(session) else {
            return Ok(out);
        };
        self.walk(&terms, WithFreqsAndPositions, &keep, bounds, |id, postings| {
            phrase_starts(&terms, postings, &mut positions, &mut starts);
            if !starts.is_empty() {
                out.push((id, starts.clone()));
            }
        })?;
        self.tail.phrase_matches(&terms, keep, &mut out);
        Ok(out)
    }

    fn match_counts(&self, phrase: &[String], session: Option<&str>, sink: &mut dyn CountSink) -> Result<(), Error> {
        if phrase.is_empty() {
            return Ok(());
        }
        let terms = Phrase::new(phrase);
        let Some((keep, bounds)) = self.scope(session) else {
            return Ok(());
        };
        let mut floor = sink.floor();
        if let [_] = *terms.slots {
            // One term: every occurrence is its own span, so the count is the term frequency,
            // and no position is read.
            self.walk(&terms, WithFreqs, &keep, bounds, |id, postings| {
                let count = postings[0].term_freq();
                if count >= floor {
                    sink.found(id, count);
                    floor = sink.floor();
                }
            })?;
        } else {
            let mut starts = Vec::new();
            let mut positions = vec![Vec::new(); terms.terms.len()];
            self.walk(&terms, WithFreqsAndPositions, &keep, bounds, |id, postings| {
                let most = most_spans(&terms, postings);
                if most < floor || !sink.wanted(id, most) {
                    return;
                }
                phrase_starts(&terms, postings, &mut positions, &mut starts);
                if let Some(stats) = merge_spans(&starts, phrase.len() as u32) {
                    sink.found(id, stats.match_count);
                    floor = sink.floor();
                }
            })?;
        }
        let mut tail = Vec::new();
        self.tail.phrase_matches(&terms, keep, &mut tail);
        for (id, starts) in tail {
            if let Some(stats) = merge_spans(&starts, phrase.len() as u32) {
                sink.found(id, stats.match_count);
            }
        }
        Ok(())
    }
}

/// Whether the document `postings` (one per distinct term of `phrase`) are positioned on
/// holds each term as often as the phrase does, without which it holds no occurrence. A
/// pasted run of one common word would otherwise have its positions decoded and checked in
/// every document holding the word.
fn holds_enough(phrase: &Phrase<'_>, postings: &[SegmentPostings]) -> bool {
    phrase.terms.len() == phrase.len() || postings.iter().zip(&phrase.needed).all(|(p, &n)| p.term_freq() >= n)
}

/// A bound on the merged spans of `phrase` in the document `postings` are positioned on,
/// before any position is decoded: spans are disjoint and each holds every position of the
/// phrase, so no more of them fit than a term's frequency over what one occurrence needs of it.
fn most_spans(phrase: &Phrase<'_>, postings: &[SegmentPostings]) -> u32 {
    let frequencies = postings.iter().map(|p| p.term_freq());
    if phrase.terms.len() == phrase.len() {
        // No term repeats: one of each per span.
        return frequencies.min().unwrap_or(0);
    }
    frequencies.zip(&phrase.needed).map(|(f, &n)| f / n).min().unwrap_or(0)
}

/// The occurrences of `phrase` in the document `postings` are positioned on. `positions` (one
/// buffer per distinct term) and `starts` are reused between documents.
fn phrase_starts(
    phrase: &Phrase<'_>,
    postings: &mut [SegmentPostings],
    positions: &mut [Vec<u32>],
    starts: &mut Vec<u32>,
) {
    for (p, out) in postings.iter_mut().zip(positions.iter_mut()) {
        p.positions(out);
    }
    phrase.starts_among(positions, starts);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_docs_are_a_range_until_an_id_breaks_the_run() {
        let mut docs = SessionDocs::new(HashSet::new());
        docs.extend(0..3);
        assert!(docs.span.is_some() && docs.scattered.is_empty(), "consecutive: a range");
        docs.extend([10, 11]);
        assert!(docs.span.is_none(), "the run is broken");
        for id in 0..14 {
            assert_eq!(docs.contains(id), [0, 1, 2, 10, 11].contains(&id), "{id}");
        }
        assert_eq!(docs.bounds, Some((0, 11)));
        let mut ids: Vec<DocId> = docs.ids().collect();
        ids.sort_unstable();
        assert_eq!(ids, [0, 1, 2, 10, 11]);
        let rebuilt = SessionDocs::new(HashSet::from([4, 5, 6]));
        assert_eq!((rebuilt.span, rebuilt.scattered.len()), (Some(4..=6), 0));
        assert!(SessionDocs::new(HashSet::from([4, 6])).span.is_none());
    }
    use crate::search::engine::ScanProvider;

    fn phrase(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_owned).collect()
    }

    /// `(id, count)` of every document `match_counts` reports, sorted.
    fn counts(provider: &impl SearchProvider, phrase: &[String], session: Option<&str>) -> Vec<(DocId, u32)> {
        let mut out = Vec::new();
        provider
            .match_counts(phrase, session, &mut |id, count| out.push((id, count)))
            .expect("counts");
        out.sort_unstable();
        out
    }

    #[test]
    fn match_counts_equal_the_merged_spans_of_the_scan_reference() {
        // Few words, so phrases repeat and overlap ("a a" in "a a a"); documents in segments
        // and in the tail, in two sessions.
        let words = ["a", "b", "the", "a"];
        let mut next = crate::testing::xorshift(0x9E37_79B9_7F4A_7C15u64);
        let texts: Vec<String> = (0..120)
            .map(|_| {
                (0..next(12))
                    .map(|_| words[next(words.len())])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let mode = TokenizerMode::Unicode61;
        let mut scan = ScanProvider::new(mode);
        let mut segments = TantivyProvider::without_tail(mode);
        let mut tail = TantivyProvider::new(mode);
        for (s, chunk) in texts.chunks(60).enumerate() {
            let docs: Vec<(DocId, &str)> = chunk
                .iter()
                .enumerate()
                .map(|(i, t)| ((s * 60 + i) as DocId, t.as_str()))
                .collect();
            let session = format!("s{s}");
            scan.replace_session(&session, &docs).expect("indexes");
            segments.replace_session(&session, &docs).expect("indexes");
            tail.replace_session(&session, &docs).expect("indexes");
            // A segment per session, so a scoped search skips segments.
            segments.commit().expect("commits");
        }
        // s0 indexed again under new ids (its old documents stay in the first segment), and
        // s1 grown under ids past them: its documents are no longer consecutive.
        let again: Vec<(DocId, &str)> = texts[..60]
            .iter()
            .enumerate()
            .map(|(i, t)| ((200 + i) as DocId, t.as_str()))
            .collect();
        let grown: Vec<(DocId, &str)> = texts[..30]
            .iter()
            .enumerate()
            .map(|(i, t)| ((300 + i) as DocId, t.as_str()))
            .collect();
        for provider in [&mut segments as &mut dyn SearchProvider, &mut tail, &mut scan] {
            provider.replace_session("s0", &again).expect("indexes");
            provider.commit().expect("commits");
            provider.append_documents("s1", &grown).expect("grows");
            provider.commit().expect("commits");
        }
        assert!(tail.segments.is_empty() && segments.segments.len() == 4);
        assert!(segments.by_session["s1"].span.is_none());
        let phrases = [
            "a",
            "the",
            "a a",
            "a b",
            "b a a",
            "a a a",
            "the the",
            "a b a",
            "zz",
            "a a a a a a a a a a a a a",
        ];
        for text in phrases {
            let phrase = phrase(text);
            for session in [None, Some("s0"), Some("s1"), Some("none")] {
                let mut expected: Vec<(DocId, u32)> = scan
                    .phrase_matches(&phrase, session)
                    .expect("scans")
                    .into_iter()
                    .filter_map(|(id, starts)| Some((id, merge_spans(&starts, phrase.len() as u32)?.match_count)))
                    .collect();
                expected.sort_unstable();
                assert!(
                    text == "zz" || text.len() > 20 || session == Some("none") || !expected.is_empty(),
                    "{text}"
                );
                assert_eq!(counts(&segments, &phrase, session), expected, "{text} in {session:?}");
                assert_eq!(counts(&tail, &phrase, session), expected, "{text} in {session:?}");
            }
        }
    }

    /// Records what a provider asks and reports; refuses the documents `refuse` names.
    struct Probe<F: Fn(DocId) -> bool> {
        refuse: F,
        asked: Vec<(DocId, u32)>,
        found: Vec<(DocId, u32)>,
        floor: u32,
    }

    impl<F: Fn(DocId) -> bool> Probe<F> {
        /// A sink that refuses the documents `refuse` names and skips those below `floor`.
        fn new(refuse: F, floor: u32) -> Self {
            Probe {
                refuse,
                asked: Vec::new(),
                found: Vec::new(),
                floor,
            }
        }
    }

    impl<F: Fn(DocId) -> bool> CountSink for Probe<F> {
        fn wanted(&mut self, id: DocId, most: u32) -> bool {
            self.asked.push((id, most));
            !(self.refuse)(id)
        }

        fn found(&mut self, id: DocId, match_count: u32) {
            self.found.push((id, match_count));
        }

        fn floor(&self) -> u32 {
            self.floor
        }
    }

    #[test]
    fn a_phrase_is_counted_only_where_wanted_and_never_above_its_bound() {
        let mut provider = TantivyProvider::without_tail(TokenizerMode::Unicode61);
        let texts = ["a b a b a b", "a b", "b a", "a a b b a b", "a b x a b"];
        let docs: Vec<(DocId, &str)> = texts.iter().enumerate().map(|(i, t)| (i as DocId, *t)).collect();
        provider.replace_session("s", &docs).expect("indexes");
        provider.commit().expect("commits");
        let mut all = Probe::new(|_| false, 0);
        provider.match_counts(&phrase("a b"), None, &mut all).expect("counts");
        assert_eq!(all.found, [(0, 3), (1, 1), (3, 2), (4, 2)]);
        // Asked about every document holding both terms, with the rarer one's frequency.
        assert_eq!(all.asked, [(0, 3), (1, 1), (2, 1), (3, 3), (4, 2)]);
        let mut some = Probe::new(|id| id % 2 == 0, 0);
        provider.match_counts(&phrase("a b"), None, &mut some).expect("counts");
        assert_eq!(some.found, [(1, 1), (3, 2)]);
        // One term: the count is its frequency, nothing to bound.
        let mut single = Probe::new(|_| true, 0);
        provider.match_counts(&phrase("x"), None, &mut single).expect("counts");
        assert_eq!((single.asked.len(), single.found), (0, vec![(4, 1)]));
        // Below the floor: neither asked about nor reported, whether bounded or counted.
        for (text, expected) in [
            ("a b", vec![(0, 3), (3, 2), (4, 2)]),
            ("b", vec![(0, 3), (3, 3), (4, 2)]),
        ] {
            let mut floored = Probe::new(|_| false, 2);
            provider
                .match_counts(&phrase(text), None, &mut floored)
                .expect("counts");
            assert_eq!(floored.found, expected, "{text}");
            assert!(floored.asked.iter().all(|&(_, most)| most >= 2), "{text}");
        }
    }

    #[test]
    fn a_phrase_repeating_a_term_is_walked_once_per_term_and_only_where_it_fits() {
        let mut provider = TantivyProvider::without_tail(TokenizerMode::Unicode61);
        let texts = ["a a a a b", "a b a", "a a", "b a a b a a", "a"];
        let docs: Vec<(DocId, &str)> = texts.iter().enumerate().map(|(i, t)| (i as DocId, *t)).collect();
        provider.replace_session("s", &docs).expect("indexes");
        provider.commit().expect("commits");
        // "a a": only documents holding "a" twice are asked about, and a span needs two of
        // them ("a a a a" is one merged span, "b a a b a a" two).
        let mut probe = Probe::new(|_| false, 0);
        provider.match_counts(&phrase("a a"), None, &mut probe).expect("counts");
        assert_eq!(probe.asked, [(0, 2), (1, 1), (2, 1), (3, 2)]);
        assert_eq!(probe.found, [(0, 1), (2, 1), (3, 2)]);
        // Longer than any document: nothing is asked about or found.
        let mut long = Probe::new(|_| false, 0);
        provider
            .match_counts(&phrase(&["a"; 7].join(" ")), None, &mut long)
            .expect("counts");
        assert_eq!((long.asked.len(), long.found.len()), (0, 0));
        let matches = provider.phrase_matches(&phrase("a a b"), None).expect("matches");
        assert_eq!(matches, [(0, vec![2]), (3, vec![1])]);
    }

    #[test]
    fn a_scoped_search_reads_the_segment_documents_between_its_bounds() {
        let ids = SegmentIds::new(vec![3, 5, 8, 13, 21]);
        assert_eq!(ids.docs_within(None), 0..5);
        assert_eq!(ids.docs_within(Some((5, 13))), 1..4);
        assert_eq!(ids.docs_within(Some((6, 7))), 2..2);
        assert_eq!(ids.docs_within(Some((0, 2))), 0..0);
        assert_eq!(ids.docs_within(Some((22, 30))), 5..5);
        assert_eq!(ids.docs_within(Some((0, 30))), 0..5);
        // Ids out of order: every document is read (the caller filters them).
        let shuffled = SegmentIds::new(vec![8, 3, 21]);
        assert_eq!(shuffled.docs_within(Some((20, 21))), 0..3);
    }

    #[test]
    fn small_commits_stay_in_the_tail_until_a_segments_worth() {
        let mut provider = TantivyProvider::new(TokenizerMode::Unicode61);
        provider.replace_session("s", &[]).expect("begins");
        for id in 0..200 {
            let text = format!("event {id} said Hello World");
            provider.append_documents("s", &[(id, &text)]).expect("adds");
            provider.commit().expect("commits");
        }
        assert_eq!(provider.segments.len(), 0, "no segment per commit");
        let found = provider
            .phrase_matches(&phrase("hello world"), Some("s"))
            .expect("finds");
        assert_eq!(found.len(), 200);
        assert_eq!(found[7], (7, vec![3]));
        // Small documents fill the tail up to a segment's worth: all of it goes into one.
        let filler = "filler ".repeat(10_000 / 7);
        let mut id = 200;
        while provider.segments.is_empty() {
            provider.append_documents("s", &[(id, &filler)]).expect("adds");
            provider.commit().expect("commits");
            id += 1;
        }
        assert_eq!(id as usize, 200 + tail::TAIL_BYTES.div_ceil(filler.len()));
        assert_eq!(
            provider
                .phrase_matches(&phrase("hello world"), None)
                .expect("finds")
                .len(),
            200
        );
        assert_eq!(
            provider.phrase_matches(&phrase("filler"), None).expect("finds").len(),
            id as usize - 200
        );
        // A build's batch goes straight into a segment of its own.
        let big = "filler ".repeat(tail::DIRECT_BYTES / 7 + 1);
        provider.append_documents("s", &[(id, &big)]).expect("adds");
        provider.commit().expect("commits");
        assert_eq!(provider.segments.len(), 2);
        provider.remove_session("s").expect("removes");
        assert!(
            provider
                .phrase_matches(&phrase("hello world"), None)
                .expect("finds")
                .is_empty()
        );
    }
}
