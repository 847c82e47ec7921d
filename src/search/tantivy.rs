//! The in-memory tantivy provider: each reconcile batch becomes single-segment indexes (no
//! threads, so it runs in wasm), the next one started once the one being written holds
//! `SEGMENT_BYTES` (8 MiB) of postings, which bounds the memory a large first build needs;
//! phrases are found by intersecting positional postings. Small commits stay in a [`Tail`]
//! until they add up to a segment's worth.

mod tail;

use super::engine::{DocId, SearchProvider};
use super::tokenizer::{TokenizerMode, Tokens};
use crate::error::{Error, ErrorCode};
use std::collections::{HashMap, HashSet};
use tail::Tail;
use tantivy::Directory as _;
use tantivy::directory::RamDirectory;
use tantivy::postings::{Postings, SegmentPostings};
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{Token as TantivyToken, TokenStream, Tokenizer};
use tantivy::{
    DocSet, Index, IndexSettings, ReloadPolicy, Searcher, SingleSegmentIndexWriter, TERMINATED, TantivyDocument, Term,
};

const TOKENIZER: &str = "dsh_unicode61";
/// A segment being written is finished once its in-memory postings pass this size (checked
/// between batches), so building a large index never holds all its postings at once.
/// 8 MiB: finishing a segment is one uninterruptible call (about 120 ms in a browser at this
/// size, twice that at 16 MiB), and a stepped build cannot report progress during it.
const SEGMENT_BYTES: usize = 8 << 20;

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

/// The documents one session owns: their ids and, when those are consecutive (as the engine
/// assigns them), the range they span, so scoping a search to the session is a range check.
struct SessionDocs {
    ids: HashSet<DocId>,
    span: Option<std::ops::RangeInclusive<DocId>>,
}

impl SessionDocs {
    fn new(ids: HashSet<DocId>) -> Self {
        let span = match (ids.iter().min(), ids.iter().max()) {
            (Some(&lo), Some(&hi)) if (hi - lo) as usize + 1 == ids.len() => Some(lo..=hi),
            _ => None,
        };
        SessionDocs { ids, span }
    }

    /// Adds ids (a build in steps, a session that grew); the span holds while they continue it.
    fn extend(&mut self, ids: impl IntoIterator<Item = DocId>) {
        for id in ids {
            self.span = match self.span.take() {
                Some(span) if id == span.end() + 1 => Some(*span.start()..=id),
                None if self.ids.is_empty() => Some(id..=id),
                _ => None,
            };
            self.ids.insert(id);
        }
    }

    fn contains(&self, id: DocId) -> bool {
        match &self.span {
            Some(span) => span.contains(&id),
            None => self.ids.contains(&id),
        }
    }
}

/// One finished single-segment index, with the `doc` column of each of its segment readers
/// opened once (not per query).
struct Segment {
    searcher: Searcher,
    ids: Vec<tantivy::columnar::Column<u64>>,
}

impl Segment {
    fn new(searcher: Searcher) -> Result<Self, Error> {
        let ids = searcher
            .segment_readers()
            .iter()
            .map(|segment| segment.fast_fields().u64("doc").map_err(index_failed))
            .collect::<Result<_, _>>()?;
        Ok(Segment { searcher, ids })
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
    /// Documents each session currently owns; older versions stay in old segments, unlisted.
    by_session: HashMap<String, SessionDocs>,
    live: DocBits,
    /// Documents of small commits, searched in memory until there are enough for a segment.
    tail: Tail,
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

    /// An empty index tokenizing with `mode`.
    pub fn new(mode: TokenizerMode) -> Self {
        let mut builder = Schema::builder();
        let indexing = TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions);
        let text = builder.add_text_field("text", TextOptions::default().set_indexing_options(indexing));
        let doc = builder.add_u64_field("doc", FAST);
        TantivyProvider {
            mode,
            schema: builder.build(),
            text,
            doc,
            segments: Vec::new(),
            writer: None,
            by_session: HashMap::new(),
            live: DocBits::default(),
            tail: Tail::new(tail::TAIL_BYTES),
        }
    }

    /// The writer of the segment being built, opened at the first document since the last
    /// commit.
    fn writer(&mut self) -> Result<&mut SingleSegmentIndexWriter, Error> {
        if self.writer.is_none() {
            let settings = IndexSettings {
                docstore_compress_dedicated_thread: false,
                ..IndexSettings::default()
            };
            let tokenizers = tantivy::tokenizer::TokenizerManager::default();
            tokenizers.register(TOKENIZER, Unicode61(self.mode));
            let writer = Index::builder()
                .schema(self.schema.clone())
                .settings(settings)
                .tokenizers(tokenizers)
                .single_segment_index_writer(RamDirectory::create(), 15_000_000)
                .map_err(index_failed)?;
            self.writer = Some(writer);
        }
        self.writer.as_mut().ok_or_else(|| index_failed("no segment writer"))
    }

    /// Adds documents to the segment being written, finishing it once it is large.
    fn write<'a>(&mut self, docs: impl IntoIterator<Item = (DocId, &'a str)>) -> Result<(), Error> {
        let (text_field, doc_field) = (self.text, self.doc);
        let writer = self.writer()?;
        for (id, text) in docs {
            let mut document = TantivyDocument::default();
            document.add_text(text_field, text);
            document.add_u64(doc_field, u64::from(id));
            writer.add_document(document).map_err(index_failed)?;
        }
        if writer.mem_usage() > SEGMENT_BYTES {
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
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(index_failed)?;
        self.segments.push(Segment::new(reader.searcher())?);
        Ok(())
    }
}

/// One segment index's files: `(name, bytes)`.
pub type SegmentFiles = Vec<(String, Vec<u8>)>;

impl TantivyProvider {
    /// Every segment index's files (`meta.json` and segment files), for snapshots.
    pub(super) fn export_segments(&mut self) -> Result<Vec<SegmentFiles>, Error> {
        // Snapshots hold segments only: the tail goes into one first.
        let docs = self.tail.drain();
        self.write(docs.iter().map(|(id, text)| (*id, text.as_str())))?;
        self.flush()?;
        let mut out = Vec::with_capacity(self.segments.len());
        for segment in &self.segments {
            let index = segment.searcher.index();
            let metas = index.load_metas().map_err(index_failed)?;
            let mut names: Vec<std::path::PathBuf> = metas.list_segment_files().into_iter().collect();
            names.push(std::path::PathBuf::from("meta.json"));
            names.sort();
            let mut files = Vec::with_capacity(names.len());
            for name in names {
                if !index.directory().exists(&name).map_err(index_failed)? {
                    continue;
                }
                let data = index.directory().atomic_read(&name).map_err(index_failed)?;
                files.push((name.to_string_lossy().into_owned(), data));
            }
            out.push(files);
        }
        Ok(out)
    }

    /// Rebuilds a provider from exported segment files and the live documents of each session.
    pub(super) fn import_segments(
        mode: TokenizerMode,
        segments: Vec<SegmentFiles>,
        by_session: HashMap<String, HashSet<DocId>>,
    ) -> Result<Self, Error> {
        let mut provider = TantivyProvider::new(mode);
        for files in segments {
            let directory = RamDirectory::create();
            for (name, data) in &files {
                directory
                    .atomic_write(std::path::Path::new(name), data)
                    .map_err(index_failed)?;
            }
            let mut index = Index::open(directory).map_err(index_failed)?;
            let tokenizers = tantivy::tokenizer::TokenizerManager::default();
            tokenizers.register(TOKENIZER, Unicode61(mode));
            index.set_tokenizers(tokenizers);
            let reader = index
                .reader_builder()
                .reload_policy(ReloadPolicy::Manual)
                .try_into()
                .map_err(index_failed)?;
            provider.segments.push(Segment::new(reader.searcher())?);
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
        if bytes >= tail::DIRECT_BYTES {
            // A build's batch: straight into the segment being written, no copy.
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
            for id in old.ids {
                self.live.remove(id);
            }
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<(), Error> {
        self.tail.commit(self.mode);
        self.flush()
    }

    fn phrase_matches(&self, phrase: &[String], session: Option<&str>) -> Result<Vec<(DocId, Vec<u32>)>, Error> {
        let allowed = match session {
            Some(id) => match self.by_session.get(id) {
                Some(docs) => Some(docs),
                None => return Ok(Vec::new()),
            },
            None => None,
        };
        let terms: Vec<Term> = phrase.iter().map(|t| Term::from_field_text(self.text, t)).collect();
        let mut out = Vec::new();
        let mut positions: Vec<Vec<u32>> = vec![Vec::new(); terms.len()];
        for view in &self.segments {
            for (segment, ids) in view.searcher.segment_readers().iter().zip(&view.ids) {
                let inverted = segment.inverted_index(self.text).map_err(index_failed)?;
                let mut postings: Vec<SegmentPostings> = Vec::with_capacity(terms.len());
                for term in &terms {
                    match inverted
                        .read_postings(term, IndexRecordOption::WithFreqsAndPositions)
                        .map_err(index_failed)?
                    {
                        Some(p) => postings.push(p),
                        None => break,
                    }
                }
                if postings.len() != terms.len() {
                    continue;
                }
                let mut doc = postings[0].doc();
                'docs: while doc != TERMINATED {
                    // Leapfrog every term's postings to a common document.
                    for p in postings.iter_mut() {
                        // `seek` requires a target at or after the current document.
                        let reached = if p.doc() >= doc { p.doc() } else { p.seek(doc) };
                        if reached != doc {
                            doc = reached;
                            continue 'docs;
                        }
                    }
                    let id = ids.first(doc).map(|v| v as DocId);
                    if let Some(id) = id.filter(|id| self.live.contains(*id) && allowed.is_none_or(|a| a.contains(*id)))
                    {
                        for (p, out_positions) in postings.iter_mut().zip(positions.iter_mut()) {
                            p.positions(out_positions);
                        }
                        let starts: Vec<u32> = positions[0]
                            .iter()
                            .copied()
                            .filter(|start| {
                                positions
                                    .iter()
                                    .enumerate()
                                    .skip(1)
                                    .all(|(i, ps)| ps.binary_search(&(start + i as u32)).is_ok())
                            })
                            .collect();
                        if !starts.is_empty() {
                            out.push((id, starts));
                        }
                    }
                    doc = postings[0].advance();
                }
            }
        }
        let keep = |id: DocId| self.live.contains(id) && allowed.is_none_or(|a| a.contains(id));
        self.tail.phrase_matches(phrase, keep, &mut out);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phrase(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_owned).collect()
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
