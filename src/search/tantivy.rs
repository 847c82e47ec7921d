//! The in-memory tantivy provider: each reconcile batch becomes one single-segment index (no
//! threads, so it runs in wasm); phrases are found by intersecting positional postings.

use super::engine::{DocId, SearchProvider};
use super::tokenizer::{TokenizerMode, tokenize};
use crate::error::{Error, ErrorCode};
use std::collections::{HashMap, HashSet};
use tantivy::Directory as _;
use tantivy::directory::RamDirectory;
use tantivy::postings::{Postings, SegmentPostings};
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{Token as TantivyToken, TokenStream, Tokenizer};
use tantivy::{DocSet, Index, IndexSettings, ReloadPolicy, Searcher, TERMINATED, TantivyDocument, Term};

const TOKENIZER: &str = "dsh_unicode61";

/// Adapts our `unicode61` tokenizer (the recall contract) to tantivy.
#[derive(Clone)]
struct Unicode61(TokenizerMode);

struct Stream {
    tokens: Vec<TantivyToken>,
    next: usize,
}

impl Tokenizer for Unicode61 {
    type TokenStream<'a> = Stream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Stream {
        let tokens = tokenize(text, self.0)
            .into_iter()
            .map(|t| TantivyToken {
                offset_from: t.byte_range.start,
                offset_to: t.byte_range.end,
                position: t.position,
                text: t.text.into_owned(),
                position_length: 1,
            })
            .collect();
        Stream { tokens, next: 0 }
    }
}

impl TokenStream for Stream {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &TantivyToken {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut TantivyToken {
        &mut self.tokens[self.next - 1]
    }
}

fn index_failed(e: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::QueryIndexFailed, format!("the search index failed: {e}"))
}

/// Full-text search in tantivy, held in memory.
pub struct TantivyProvider {
    mode: TokenizerMode,
    schema: Schema,
    text: Field,
    doc: Field,
    segments: Vec<Searcher>,
    pending: Vec<(DocId, String)>,
    /// Documents each session currently owns; older versions stay in old segments, unlisted.
    by_session: HashMap<String, HashSet<DocId>>,
    live: HashSet<DocId>,
}

impl TantivyProvider {
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
            pending: Vec::new(),
            by_session: HashMap::new(),
            live: HashSet::new(),
        }
    }

    /// Writes pending documents as one new single-segment index.
    fn flush(&mut self) -> Result<(), Error> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let settings = IndexSettings {
            docstore_compress_dedicated_thread: false,
            ..IndexSettings::default()
        };
        let tokenizers = tantivy::tokenizer::TokenizerManager::default();
        tokenizers.register(TOKENIZER, Unicode61(self.mode));
        let mut writer = Index::builder()
            .schema(self.schema.clone())
            .settings(settings)
            .tokenizers(tokenizers)
            .single_segment_index_writer(RamDirectory::create(), 15_000_000)
            .map_err(index_failed)?;
        for (id, text) in self.pending.drain(..) {
            let mut document = TantivyDocument::default();
            document.add_text(self.text, &text);
            document.add_u64(self.doc, u64::from(id));
            writer.add_document(document).map_err(index_failed)?;
        }
        let index = writer.finalize().map_err(index_failed)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(index_failed)?;
        self.segments.push(reader.searcher());
        Ok(())
    }
}

/// One segment index's files: `(name, bytes)`.
pub type SegmentFiles = Vec<(String, Vec<u8>)>;

impl TantivyProvider {
    /// Every segment index's files (`meta.json` and segment files), for snapshots.
    pub(super) fn export_segments(&mut self) -> Result<Vec<SegmentFiles>, Error> {
        self.flush()?;
        let mut out = Vec::with_capacity(self.segments.len());
        for searcher in &self.segments {
            let index = searcher.index();
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
            provider.segments.push(reader.searcher());
        }
        provider.live = by_session.values().flatten().copied().collect();
        provider.by_session = by_session;
        Ok(provider)
    }
}

impl SearchProvider for TantivyProvider {
    fn replace_session(&mut self, session: &str, docs: &[(DocId, &str)]) -> Result<(), Error> {
        self.remove_session(session)?;
        let ids: HashSet<DocId> = docs.iter().map(|(id, _)| *id).collect();
        self.live.extend(ids.iter().copied());
        self.by_session.insert(session.to_owned(), ids);
        self.pending
            .extend(docs.iter().map(|(id, text)| (*id, (*text).to_owned())));
        Ok(())
    }

    fn remove_session(&mut self, session: &str) -> Result<(), Error> {
        if let Some(old) = self.by_session.remove(session) {
            for id in old {
                self.live.remove(&id);
            }
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<(), Error> {
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
        for searcher in &self.segments {
            for segment in searcher.segment_readers() {
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
                let ids = segment.fast_fields().u64("doc").map_err(index_failed)?;
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
                    if let Some(id) = id.filter(|id| self.live.contains(id) && allowed.is_none_or(|a| a.contains(id))) {
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
        Ok(out)
    }
}
