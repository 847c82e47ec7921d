//! Bringing the search index up to date with the corpus, a bounded amount of text at a time.
//! The sessions whose observed state changed are (re)indexed, those gone from the corpus are
//! dropped, and one commit at the end publishes the result: the engine's generation, which
//! cursors are bound to, moves only then. A live session that only grew since it was indexed
//! costs its new events (plus the documents its new compactions shadowed), under ids that are
//! new; everything else keeps its ids. Each step re-reads which sessions are stale, so a corpus
//! that changes between steps is followed, never indexed half-old.

use super::engine::{
    DocId, DocMeta, FNV_OFFSET, IndexedSession, Interner, SearchEngine, SearchProvider, Settled, fnv1a_update,
};
use super::request::{is_sanitized, sanitize_text};
use crate::corpus::{Corpus, SessionRecord, Source};
use crate::documents::{EventRecord, session_documents};
use crate::error::{Error, ErrorCode};
use crate::fold::SurfaceLabel;
use serde::Serialize;
use std::fmt::Write as _;
use std::sync::Arc;

/// How far an index build has got. Counts cover the build under way (or just finished).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexProgress {
    /// Sessions (re)indexed or dropped so far.
    pub sessions_done: usize,
    /// Sessions this build (re)indexes or drops.
    pub sessions_total: usize,
    /// Events read so far.
    pub events_done: u64,
    /// Events this build reads.
    pub events_total: u64,
    /// Whether the index is up to date (and published).
    pub done: bool,
    /// Whether the build has nothing to do until a helper supplies a segment it was handed
    /// (always `false` in builds that hand nothing out).
    pub waiting: bool,
}

/// A build under way.
#[derive(Default)]
pub(super) struct Build {
    sessions_done: usize,
    events_done: u64,
    /// Sessions changed since the last commit (what `reconcile` reports).
    changed: usize,
    current: Option<Partial>,
    /// Whether a bounded step left work for the next (searches then do not finish the build).
    stepping: bool,
}

impl Build {
    /// Whether a build is under way in steps.
    pub(super) fn under_way(&self) -> bool {
        self.stepping
    }

    /// The session the build is part-way through.
    pub(super) fn current_session(&self) -> Option<&str> {
        self.current.as_ref().map(|partial| partial.id.as_str())
    }
}

/// A session whose documents are being handed to the provider.
struct Partial {
    id: String,
    /// The corpus generation of the session when this started: if it moves, start again.
    generation: u64,
    /// The next event to read.
    next_event: usize,
    /// Events already indexed before this started (a session that grew).
    grown_from: Option<usize>,
    ids: Vec<DocId>,
    docs_sum: u64,
}

/// A step budget with no bound: the whole build in one step (what `reconcile` does).
pub const UNBOUNDED: u64 = u64::MAX;

impl<P: SearchProvider> SearchEngine<P> {
    /// Brings the index up to date with `corpus` in one go. Returns how many sessions were
    /// (re)indexed or removed.
    pub fn reconcile(&mut self, corpus: &Corpus) -> Result<usize, Error> {
        loop {
            if let (progress, changed) = self.step(corpus, UNBOUNDED, 0)?
                && progress.done
            {
                return Ok(changed);
            }
        }
    }

    /// Indexes about `budget` bytes of document text (at least one event, and whole sessions
    /// where the provider cannot add to a session in place), then reports progress. Call
    /// until `done`; a search in between finishes the build first.
    pub fn index_step(&mut self, corpus: &Corpus, budget: u64) -> Result<IndexProgress, Error> {
        self.index_step_handing_out(corpus, budget, 0)
    }

    /// [`index_step`](Self::index_step), handing up to `slots` jobs (documents to index as a
    /// segment) to the host's helpers: take them with [`take_job`](Self::take_job), supply
    /// what the helpers built with [`supply_segment`](Self::supply_segment). A step reports
    /// `waiting` when only jobs handed out stand between the build and its commit.
    pub fn index_step_handing_out(
        &mut self,
        corpus: &Corpus,
        budget: u64,
        slots: usize,
    ) -> Result<IndexProgress, Error> {
        Ok(self.step(corpus, budget, slots)?.0)
    }

    /// The next job handed out, as bytes for a helper ([`build_segment`](super::tantivy::build_segment)).
    pub fn take_job(&mut self) -> Option<Vec<u8>> {
        self.provider.take_job()
    }

    /// Adopts a helper's segment; `false` (the job is then built here) when it is not the
    /// answer to a job handed out and still awaited.
    pub fn supply_segment(&mut self, bytes: &[u8]) -> bool {
        self.provider.supply_segment(bytes)
    }

    /// Takes back every job handed out, as when the helpers are gone.
    pub fn reclaim_jobs(&mut self) {
        self.provider.reclaim_jobs();
    }

    /// One step, handing out up to `slots` jobs if it is bounded, and (once done) how many
    /// sessions the whole build changed.
    fn step(&mut self, corpus: &Corpus, budget: u64, slots: usize) -> Result<(IndexProgress, usize), Error> {
        if self.reconciled == Some(corpus.generation()) {
            // What the full step below finds with nothing stale, gone or under way.
            return Ok((self.progress(corpus, &[], true), 0));
        }
        self.check_current(corpus)?;
        let stepped = budget != UNBOUNDED;
        self.provider.build_in_steps(stepped);
        // Only a stepped build's host takes jobs; every other write (a search's build, a live
        // session's next events) is indexed here, small commits in the tail.
        self.provider.hand_out(if stepped { slots } else { 0 });
        let mut stale = self.stale_sessions(corpus);
        let mut spent = 0;
        while spent < budget {
            if self.build.current.is_none() {
                let Some(id) = stale.pop() else { break };
                self.build.current = Some(self.start(corpus, id)?);
            }
            spent += self.advance(corpus, budget - spent)?;
        }
        if self.build.current.is_some() || !stale.is_empty() {
            self.build.stepping = true;
            return Ok((self.progress(corpus, &stale, false), 0));
        }
        if stepped {
            let settled = self.provider.settle()?;
            if settled != Settled::Done {
                self.build.stepping = true;
                let mut progress = self.progress(corpus, &stale, false);
                progress.waiting = settled == Settled::Waiting;
                return Ok((progress, 0));
            }
        }
        self.drop_gone(corpus)?;
        let progress = self.progress(corpus, &stale, true);
        let changed = self.build.changed;
        if changed > 0 {
            self.provider.commit()?;
            self.generation += 1;
        }
        self.build = Build::default();
        self.provider.hand_out(0);
        self.committed_epoch = self.next_epoch;
        self.reconciled = Some(corpus.generation());
        Ok((progress, changed))
    }

    /// Sessions to (re)index, the next one last; the one under way is not among them.
    fn stale_sessions(&self, corpus: &Corpus) -> Vec<String> {
        let current = self.build.current.as_ref().map(|p| p.id.as_str());
        let mut stale: Vec<String> = corpus
            .sources()
            .filter(|(id, source)| Some(id.as_str()) != current && self.is_stale(corpus, id, source))
            .map(|(id, _)| id.clone())
            .collect();
        stale.reverse();
        stale
    }

    pub(super) fn is_stale(&self, corpus: &Corpus, id: &str, source: &Source<'_>) -> bool {
        self.sessions.get(id).is_none_or(|indexed| {
            indexed.generation != corpus.session_generation(id)
                || indexed.live != source.live
                || indexed.persisted != source.persisted
        })
    }

    /// Where an indexed session can be grown from instead of re-indexed: its events only
    /// grew at the end and nothing else about it changed.
    fn growth_base(&self, corpus: &Corpus, id: &str, source: &Source<'_>) -> Option<usize> {
        let indexed = self.sessions.get(id)?;
        (self.provider.grows()
            && indexed.lineage == corpus.session_lineage(id)
            && indexed.live == source.live
            && indexed.persisted == source.persisted
            && source.log.events.len() >= indexed.events)
            .then_some(indexed.events)
    }

    fn start(&mut self, corpus: &Corpus, id: String) -> Result<Partial, Error> {
        let source = corpus.source(&id)?;
        let grown_from = self.growth_base(corpus, &id, &source);
        let (ids, docs_sum) = match grown_from {
            Some(_) => {
                // The ids move to the build (no copy); its entry is replaced at the end.
                let indexed = self.sessions.get_mut(&id).expect("a grown session is indexed");
                (std::mem::take(&mut indexed.docs), indexed.docs_sum)
            }
            None => {
                if self.provider.appends() {
                    // Clears the session; its documents follow in batches.
                    self.provider.replace_session(&id, &[])?;
                }
                (Vec::new(), 0)
            }
        };
        Ok(Partial {
            generation: corpus.session_generation(&id),
            next_event: grown_from.unwrap_or(0),
            grown_from,
            ids,
            docs_sum,
            id,
        })
    }

    /// Abandons the session under way if the corpus moved under it: its documents so far
    /// (and the provider's older ones) are dropped, and it is indexed afresh.
    fn check_current(&mut self, corpus: &Corpus) -> Result<(), Error> {
        let Some(partial) = &self.build.current else {
            return Ok(());
        };
        if corpus.session_generation(&partial.id) == partial.generation && corpus.source(&partial.id).is_ok() {
            return Ok(());
        }
        let partial = self.build.current.take().expect("checked above");
        let kept = self
            .sessions
            .remove(&partial.id)
            .map(|old| old.docs)
            .unwrap_or_default();
        for doc in partial.ids.iter().chain(&kept) {
            self.docs.remove(doc);
        }
        self.provider.remove_session(&partial.id)?;
        self.build.changed += 1;
        Ok(())
    }

    /// Hands the session under way about `budget` bytes more; finishes it at its end.
    fn advance(&mut self, corpus: &Corpus, budget: u64) -> Result<u64, Error> {
        let mut partial = self.build.current.take().expect("a session under way");
        let source = corpus.source(&partial.id)?;
        let whole = !self.provider.appends();
        let from = partial.next_event;
        let batch = read_batch(&source, from, if whole { UNBOUNDED } else { budget });
        let session: Arc<str> = Arc::from(partial.id.as_str());
        let mut handed = Vec::with_capacity(batch.documents.len());
        for (record, text, changed) in &batch.documents {
            let meta = document_meta(&mut self.kinds, &session, record, text, *changed);
            let doc_id = self.allocate_doc()?;
            partial.docs_sum = partial.docs_sum.wrapping_add(doc_hash(&meta, text));
            partial.ids.push(doc_id);
            self.docs.insert(doc_id, meta);
            handed.push((doc_id, text.as_str()));
        }
        if whole && partial.grown_from.is_none() {
            // Providers without appends take whole sessions, even empty ones (which clears them).
            self.provider.replace_session(&partial.id, &handed)?;
        } else if !handed.is_empty() {
            self.provider.append_documents(&partial.id, &handed)?;
        }
        partial.next_event = batch.end;
        self.build.events_done += (batch.end - from) as u64;
        if batch.end == source.log.events.len() {
            self.finish(corpus, partial)?;
        } else {
            self.build.current = Some(partial);
        }
        Ok(batch.spent)
    }

    /// A new document id. Ids are never reused (a provider may still hold a dropped document
    /// under its old id) nor wrapped: when they run out the build fails, and the archive starts
    /// a fresh engine before that can happen (`ids_left`).
    fn allocate_doc(&mut self) -> Result<DocId, Error> {
        let id = self.next_doc;
        self.next_doc = id.checked_add(1).ok_or_else(|| {
            Error::new(
                ErrorCode::QueryIndexFailed,
                "the search index ran out of document ids; it must be rebuilt",
            )
        })?;
        Ok(id)
    }

    /// How many more document ids this engine can hand out.
    pub fn ids_left(&self) -> u64 {
        u64::from(DocId::MAX - self.next_doc)
    }

    /// Spends ids until `left` are left, as a long life of re-indexing would.
    #[cfg(test)]
    pub(crate) fn leave_ids(&mut self, left: DocId) {
        self.next_doc = self.next_doc.max(DocId::MAX - left);
    }

    /// Publishes the finished session's entry (searchable after the build's commit).
    fn finish(&mut self, corpus: &Corpus, mut partial: Partial) -> Result<(), Error> {
        let source = corpus.source(&partial.id)?;
        let replacements_seen = match partial.grown_from {
            Some(_) => self.sessions[&partial.id].replacements,
            None => 0,
        };
        if partial.grown_from.is_some() {
            self.relabel_shadowed(&source, replacements_seen, &mut partial)?;
        }
        let record = source.record();
        self.next_epoch += 1;
        let entry = IndexedSession {
            generation: partial.generation,
            lineage: corpus.session_lineage(&partial.id),
            live: source.live,
            persisted: source.persisted,
            record,
            docs: partial.ids,
            events: source.log.events.len(),
            replacements: source.log.surface.replacements.len(),
            docs_sum: partial.docs_sum,
            epoch: self.next_epoch,
        };
        let old = self.sessions.insert(partial.id, entry);
        if partial.grown_from.is_none() {
            for doc in old.into_iter().flat_map(|old| old.docs) {
                self.docs.remove(&doc);
            }
        }
        self.build.sessions_done += 1;
        self.build.changed += 1;
        Ok(())
    }

    /// Labels `shadowed` the documents that compactions since the last indexing replaced:
    /// the only way an older event's label changes when a log grows.
    fn relabel_shadowed(&mut self, source: &Source<'_>, seen: usize, partial: &mut Partial) -> Result<(), Error> {
        let replacements = source.log.surface.replacements.get(seen..).unwrap_or_default();
        for seq in replacements.iter().flat_map(|r| &r.shadowed_seqs) {
            let found = partial.ids.binary_search_by_key(seq, |id| self.docs[id].seq);
            let Ok(index) = found else { continue };
            let id = partial.ids[index];
            let seq = self.docs[&id].seq;
            let surface = self.docs.surface_mut(&id).expect("an indexed document");
            if *surface == SurfaceLabel::Shadowed {
                continue;
            }
            let before = label_hash(seq, *surface);
            *surface = SurfaceLabel::Shadowed;
            let after = label_hash(seq, *surface);
            partial.docs_sum = partial.docs_sum.wrapping_sub(before).wrapping_add(after);
        }
        Ok(())
    }

    /// Drops sessions the corpus no longer has.
    fn drop_gone(&mut self, corpus: &Corpus) -> Result<(), Error> {
        let gone: Vec<String> = self
            .sessions
            .keys()
            .filter(|id| corpus.source(id).is_err())
            .cloned()
            .collect();
        for id in gone {
            if let Some(old) = self.sessions.remove(&id) {
                for doc in old.docs {
                    self.docs.remove(&doc);
                }
            }
            self.provider.remove_session(&id)?;
            self.build.sessions_done += 1;
            self.build.changed += 1;
        }
        Ok(())
    }

    fn progress(&self, corpus: &Corpus, stale: &[String], done: bool) -> IndexProgress {
        let events_left: u64 = stale
            .iter()
            .filter_map(|id| {
                let source = corpus.source(id).ok()?;
                let base = self.growth_base(corpus, id, &source).unwrap_or(0);
                Some((source.log.events.len() - base) as u64)
            })
            .sum();
        let current_left = self.build.current.as_ref().map_or(0, |p| {
            let total = corpus.source(&p.id).map_or(0, |s| s.log.events.len());
            total.saturating_sub(p.next_event) as u64
        });
        let sessions_left = stale.len() + usize::from(self.build.current.is_some());
        IndexProgress {
            sessions_done: self.build.sessions_done,
            sessions_total: self.build.sessions_done + sessions_left,
            events_done: self.build.events_done,
            events_total: self.build.events_done + events_left + current_left,
            done,
            waiting: false,
        }
    }
}

/// The engine's record of one document, as a build makes it (and a snapshot's reopening
/// remakes it from the corpus).
pub(super) fn document_meta(
    kinds: &mut Interner,
    session: &Arc<str>,
    record: &EventRecord,
    text: &str,
    sanitising_changes: bool,
) -> DocMeta {
    DocMeta {
        session: Arc::clone(session),
        seq: record.seq,
        kind: kinds.get(&record.kind),
        time: record.time,
        surface: record.surface,
        length: text.chars().count() as u64,
        sanitising_changes,
    }
}

/// Every document of a session in index order: its record, sanitised text, and whether
/// sanitising changed it.
pub(super) fn session_texts(source: &Source<'_>) -> Vec<(EventRecord, String, bool)> {
    read_batch(source, 0, UNBOUNDED).documents
}

/// Documents read from a run of events.
struct Batch {
    /// One past the last event read.
    end: usize,
    /// Bytes of text read (each event counts at least one).
    spent: u64,
    /// Each document's record, sanitised text, and whether sanitising changed it.
    documents: Vec<(EventRecord, String, bool)>,
}

/// Reads events from `from` on until about `budget` bytes of document text are read (at least
/// one event) or the log ends.
fn read_batch(source: &Source<'_>, from: usize, budget: u64) -> Batch {
    let events = &source.log.events;
    let mut batch = Batch {
        end: from,
        spent: 0,
        documents: Vec::new(),
    };
    while batch.end < events.len() && (batch.end == from || batch.spent < budget) {
        let documents = event_documents(source, batch.end);
        batch.end += 1;
        batch.spent += 1 + documents.iter().map(|(_, text, _)| text.len() as u64).sum::<u64>();
        batch.documents.extend(documents);
    }
    batch.spent = batch.spent.max(1);
    batch
}

/// The documents of event `index` of a session: each one's record, sanitised text, and whether
/// sanitising changed it.
pub(super) fn event_documents(source: &Source<'_>, index: usize) -> Vec<(EventRecord, String, bool)> {
    let one = std::slice::from_ref(&source.log.events[index]);
    session_documents(&source.log.header.raw_id, one, &source.log.surface)
        .into_iter()
        .map(|document| {
            let raw = document.text.into_lossy();
            match is_sanitized(&raw) {
                true => (document.record, raw, false),
                false => (document.record, sanitize_text(&raw), true),
            }
        })
        .collect()
}

/// The wrapping sum of documents' hashes.
pub(super) fn docs_sum<'a>(docs: impl Iterator<Item = (&'a DocMeta, &'a str)>) -> u64 {
    docs.fold(0u64, |sum, (doc, text)| sum.wrapping_add(doc_hash(doc, text)))
}

/// A session's fingerprint: its record's hash mixed with the wrapping sum of its documents'
/// hashes ([`docs_sum`]). A sum, so a session that grew, or whose documents were shadowed,
/// updates it without re-reading the rest.
pub(super) fn fingerprint_of(record: &SessionRecord, docs_sum: u64) -> u64 {
    let record = serde_json::to_string(record).unwrap_or_default();
    mix(fnv1a_update(
        fnv1a_update(FNV_OFFSET, &record),
        &format!("\u{1}{docs_sum:016x}"),
    ))
}

/// One document's share of its session's fingerprint: its content and, added separately, its
/// label (so relabelling needs no text).
pub(super) fn doc_hash(doc: &DocMeta, text: &str) -> u64 {
    let mut meta = Fnv(FNV_OFFSET);
    let _ = write!(meta, "\u{1}{}\u{1}{}\u{1}{}\u{1}", doc.seq, doc.kind, doc.time);
    // XXH64 for the text, the bulk of what is hashed (several times faster than FNV's byte
    // loop), seeded with the metadata's hash.
    let content = mix(twox_hash::XxHash64::oneshot(meta.0, text.as_bytes()));
    content.wrapping_add(label_hash(doc.seq, doc.surface))
}

fn label_hash(seq: u64, label: SurfaceLabel) -> u64 {
    let mut hash = Fnv(FNV_OFFSET);
    let _ = write!(hash, "{seq}\u{1}{}", label.as_str());
    mix(hash.0)
}

/// FNV-1a over formatted text as it is written, without building the string: a document's
/// hash is taken once per document at every build and reopening.
struct Fnv(u64);

impl std::fmt::Write for Fnv {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.0 = fnv1a_update(self.0, text);
        Ok(())
    }
}

/// splitmix64's finalizer: spreads every input bit over the output, so sums of hashes do not
/// cancel in the low bits.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Json;
    use crate::search::engine::ScanProvider;
    use crate::search::request::{SearchConfig, parse_event_request, parse_session_request};
    use crate::search::tantivy::TantivyProvider;
    use crate::search::tokenizer::TokenizerMode;

    const GROWN: &str = include_str!("../../tests/fixtures/spec/replacement_of_replacement.jsonl");
    const QUERIES: [&str; 6] = ["one", "two", "four", "summary", "after", "of summary"];

    fn json(text: &str) -> Json {
        Json::parse(text, Default::default()).expect("json")
    }

    fn header_and_events(log: &str, id: &str) -> (Json, Vec<Json>) {
        let mut lines = log.lines();
        let header = lines.next().expect("header").replace("\"s-7-3\"", &format!("{id:?}"));
        (json(&header), lines.map(json).collect())
    }

    /// Three live sessions: the fixture under three ids, one of them repeated to be longer.
    fn corpus() -> Corpus {
        let mut corpus = Corpus::new();
        for id in ["a", "b", "c"] {
            let (header, events) = header_and_events(GROWN, id);
            corpus.add_live(&header, events).expect("valid");
        }
        corpus
    }

    /// Every query's `searchSessions` and `searchEvents` items (cursors name the engine).
    fn answers<P: SearchProvider>(engine: &mut SearchEngine<P>, corpus: &Corpus) -> Vec<String> {
        let mut out = Vec::new();
        for query in QUERIES {
            let request = json(&format!(r#"{{"query":{query:?},"limit":50}}"#));
            let request = parse_session_request(&request, engine.config()).expect("request");
            let page = engine.search_sessions(corpus, &request).expect("searches");
            out.push(serde_json::to_string(&page.items).expect("serializes"));
            for id in ["a", "b", "c"] {
                let request = json(&format!(r#"{{"sessionId":{id:?},"query":{query:?},"limit":50}}"#));
                let request = parse_event_request(&request, engine.config()).expect("request");
                match engine.search_events(corpus, &request) {
                    Ok(page) => out.push(serde_json::to_string(&page.items).expect("serializes")),
                    Err(error) => out.push(error.code.as_str().to_owned()),
                }
            }
        }
        out
    }

    fn tantivy() -> SearchEngine<TantivyProvider> {
        let mode = TokenizerMode::Unicode61;
        SearchEngine::new(TantivyProvider::new(mode), SearchConfig::default(), mode)
    }

    fn segments_only() -> SearchEngine<TantivyProvider> {
        let mode = TokenizerMode::Unicode61;
        SearchEngine::new(TantivyProvider::without_tail(mode), SearchConfig::default(), mode)
    }

    fn scan() -> SearchEngine<ScanProvider> {
        let mode = TokenizerMode::Unicode61;
        SearchEngine::new(ScanProvider::new(mode), SearchConfig::default(), mode)
    }

    #[cfg(all(feature = "sqlite", not(target_arch = "wasm32")))]
    /// SQLite as the faces hold it, behind the backend enum (which must pass on `grows`).
    fn sqlite() -> SearchEngine<crate::search::backend::AnyProvider> {
        let mode = TokenizerMode::Unicode61;
        let provider = crate::search::sqlite::SqliteProvider::in_memory(mode).expect("opens");
        let provider = crate::search::backend::AnyProvider::Sqlite(Box::new(provider));
        SearchEngine::new(provider, SearchConfig::default(), mode)
    }

    #[test]
    fn an_index_up_to_date_skips_its_corpus_until_the_corpus_changes() {
        let corpus = corpus();
        let mut engine = tantivy();
        assert_eq!(engine.reconcile(&corpus).expect("builds"), 3);
        let idle = engine.index_step(&corpus, UNBOUNDED).expect("steps");
        assert_eq!((idle.done, idle.sessions_total, idle.events_total), (true, 0, 0));
        // A clone changed apart from the corpus the index saw is not taken for it, and
        // going back to the original drops what only the clone has.
        let mut changed = corpus.clone();
        let (header, events) = header_and_events(GROWN, "d");
        changed.add_live(&header, events).expect("valid");
        assert_eq!(engine.reconcile(&changed).expect("builds"), 1);
        assert_eq!(engine.reconcile(&corpus).expect("builds"), 1);
        assert_eq!(engine.reconcile(&corpus).expect("builds"), 0);
        // Another corpus built by as many changes holds other sessions.
        let mut other = Corpus::new();
        for id in ["x", "y", "z"] {
            let (header, events) = header_and_events(GROWN, id);
            other.add_live(&header, events).expect("valid");
        }
        assert_eq!(
            engine.reconcile(&other).expect("builds"),
            6,
            "three added, three dropped"
        );
    }

    /// A build in bounded steps keeps each segment small enough to finish between two
    /// progress reports; a build in one call (a search) writes larger ones. The provider is
    /// reached through the backend enum, which must pass the hint on.
    #[test]
    fn segments_are_small_only_while_a_build_goes_in_steps() {
        let corpus = corpus();
        let mode = TokenizerMode::Unicode61;
        let provider = crate::search::backend::AnyProvider::Tantivy(Box::new(TantivyProvider::new(mode)));
        let mut engine = SearchEngine::new(provider, SearchConfig::default(), mode);
        let segment_bytes = |engine: &SearchEngine<crate::search::backend::AnyProvider>| match &engine.provider {
            crate::search::backend::AnyProvider::Tantivy(p) => p.segment_bytes(),
            _ => unreachable!("a tantivy engine"),
        };
        let whole = segment_bytes(&engine);
        assert!(!engine.index_step(&corpus, 20).expect("steps").done);
        let stepped = segment_bytes(&engine);
        assert!(stepped < whole, "{stepped} < {whole}");
        engine.reconcile(&corpus).expect("builds");
        assert_eq!(segment_bytes(&engine), whole);
    }

    /// A segment is finished by what its documents add to the writer, not by the memory a
    /// fresh writer starts with (more than a segment's worth): a small corpus built in many
    /// small steps is one segment.
    #[test]
    fn a_build_in_many_small_steps_writes_one_segment_while_it_is_small() {
        let corpus = corpus();
        let mut engine = segments_only();
        let mut steps = 1;
        while !engine.index_step(&corpus, 20).expect("steps").done {
            steps += 1;
        }
        assert!(steps > 6, "{steps} steps");
        assert_eq!(engine.provider.segment_count(), 1);
    }

    #[test]
    fn a_build_in_small_steps_answers_as_one_in_a_go() {
        let corpus = corpus();
        let mut whole = scan();
        let mut stepped = segments_only();
        let mut progress = Vec::new();
        loop {
            let step = stepped.index_step(&corpus, 20).expect("indexes");
            assert_eq!(stepped.generation, u64::from(step.done), "published only at the end");
            progress.push(step);
            if step.done {
                break;
            }
        }
        let last = progress.last().expect("a step");
        assert_eq!((last.sessions_done, last.sessions_total), (3, 3));
        assert_eq!((last.events_done, last.events_total), (39, 39));
        assert!(progress.len() > 6, "small budgets take many steps: {progress:?}");
        assert!(progress.windows(2).all(|w| w[0].events_done <= w[1].events_done));
        assert!(progress.iter().all(|p| p.events_total == 39 && p.sessions_total == 3));
        assert_eq!(answers(&mut stepped, &corpus), answers(&mut whole, &corpus));
        assert_eq!(
            stepped.index_step(&corpus, 20).expect("nothing to do").sessions_total,
            0
        );
    }

    #[test]
    fn after_a_build_with_helpers_a_growing_session_goes_to_the_tail_not_to_jobs() {
        let mode = TokenizerMode::Unicode61;
        let provider = TantivyProvider::new(mode).with_job_bytes(64);
        let mut engine = SearchEngine::new(provider, SearchConfig::default(), mode);
        let mut corpus = corpus();
        let mut supplied = 0;
        while !engine.index_step_handing_out(&corpus, 20, 2).expect("steps").done {
            while let Some(job) = engine.take_job() {
                let segment = crate::search::tantivy::build_segment(&job).expect("builds");
                assert!(engine.supply_segment(&segment));
                supplied += 1;
            }
        }
        assert!(supplied >= 2, "helpers built {supplied} segments");
        let segments = engine.provider.segment_count();
        let last = corpus.source("a").expect("live").log.events.len() as u64;
        for seq in last..last + 20 {
            let event = json(&format!(
                r#"{{"type":"user/message","seq":{seq},"time":{seq},"surfaceOp":"append","data":{{"id":"n{seq}","role":"user","content":[{{"type":"text","text":"one more {seq}"}}],"source":{{"kind":"user"}}}}}}"#
            ));
            corpus.append_live("a", vec![event]).expect("appends");
            engine.reconcile(&corpus).expect("indexes");
        }
        assert_eq!(
            engine.provider.segment_count(),
            segments,
            "no segment per appended event"
        );
        let mut whole = tantivy();
        assert_eq!(answers(&mut engine, &corpus), answers(&mut whole, &corpus));
    }

    #[test]
    fn a_live_session_grows_by_its_new_events_and_answers_as_if_rebuilt() {
        fn grow<P: SearchProvider>(mut engine: SearchEngine<P>, fresh: impl Fn() -> SearchEngine<P>) {
            let (header, events) = header_and_events(GROWN, "a");
            let mut corpus = Corpus::new();
            corpus.add_live(&header, Vec::new()).expect("an empty live session");
            engine.reconcile(&corpus).expect("indexes");
            for event in events {
                let before = engine.sessions["a"].docs.clone();
                corpus.append_live("a", vec![event]).expect("appends");
                let step = engine.index_step(&corpus, UNBOUNDED).expect("indexes");
                assert_eq!((step.events_total, step.sessions_total), (1, 1), "only the new event");
                let after = &engine.sessions["a"].docs;
                assert_eq!(after[..before.len()], before[..], "older documents keep their ids");
                assert_eq!(answers(&mut engine, &corpus), answers(&mut fresh(), &corpus));
                assert_eq!(
                    engine.sessions["a"].fingerprint(),
                    fresh_fingerprint(&corpus),
                    "the fingerprint a rebuild (and a snapshot) computes"
                );
            }
            // Reaching every label: the first summary and its events are shadowed by now.
            assert!(answers(&mut engine, &corpus).iter().any(|a| a.contains("\"shadowed\"")));
        }
        grow(tantivy(), tantivy);
        grow(segments_only(), segments_only);
        grow(scan(), scan);
        #[cfg(all(feature = "sqlite", not(target_arch = "wasm32")))]
        grow(sqlite(), sqlite);
    }

    fn fresh_fingerprint(corpus: &Corpus) -> u64 {
        let mut engine = scan();
        engine.reconcile(corpus).expect("indexes");
        engine.sessions["a"].fingerprint()
    }

    #[test]
    fn running_out_of_document_ids_fails_the_build_instead_of_wrapping() {
        let corpus = corpus();
        let mut engine = tantivy();
        engine.leave_ids(5);
        let error = engine.reconcile(&corpus).expect_err("more than 5 documents");
        assert_eq!(error.code, ErrorCode::QueryIndexFailed);
        assert_eq!(engine.ids_left(), 0);
    }

    #[test]
    fn a_session_changed_between_steps_is_indexed_afresh() {
        let mut corpus = corpus();
        let mut engine = tantivy();
        let first = engine.index_step(&corpus, 20).expect("indexes");
        assert!(!first.done);
        // The session under way is replaced (closed live: its stored copy is gone too).
        let under_way = engine.build.current.as_ref().expect("a session under way").id.clone();
        assert!(corpus.remove_live(&under_way));
        let (header, events) = header_and_events(GROWN, &under_way);
        corpus.add_live(&header, events[..4].to_vec()).expect("valid");
        while !engine.index_step(&corpus, 20).expect("indexes").done {}
        assert_eq!(answers(&mut engine, &corpus), answers(&mut tantivy(), &corpus));
    }
}
