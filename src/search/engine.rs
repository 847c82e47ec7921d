//! The search engine above any provider: reconciles the index with the corpus (only changed
//! sessions are re-indexed), runs `searchSessions` / `searchEvents` with DSH's filters, order,
//! grouping, paging, snippets and cursors. Providers only find phrase occurrences.

use super::build::Build;
use super::pending::{Scan, Scanned, Wanted};
use super::phrase::Phrase;
use super::rank::{
    RankKey, compare_events, compare_sessions, merge_spans, snippet_at_byte, snippet_reach, snippet_with_highlights,
};
use super::request::{
    EventSearchRequest, SearchConfig, SessionSearchRequest, check_budgets, is_sanitized, sanitize_text,
};
use super::tokenizer::{TokenizerMode, Tokens, tokenize};
use crate::corpus::{Corpus, SessionRecord};
use crate::documents::{EventRecord, extract_text_start};
use crate::error::{Error, ErrorCode};
use crate::filters::{EventFilter, SessionFilter, session_matches};
use crate::fold::SurfaceLabel;
use crate::json::{JsString, Json, JsonObject};
use crate::log::SessionHeader;
use base64::Engine as _;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// A document id assigned by the engine.
pub type DocId = u32;

/// Hashes [`DocId`]s without SipHash: ids are assigned by the engine, not chosen by input, and
/// the per-match lookups are the hot loop of a common-word search.
#[derive(Clone, Copy, Default)]
pub(super) struct DocIdHasher(u64);

impl Hasher for DocIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        // The low bits (the bucket) are the id itself, so ids assigned in a row sit side by side
        // and a search's ascending-id lookups walk memory in order; the high bits (the tag the
        // table compares first) are a multiplicative hash.
        self.0 = u64::from(n) | u64::from(n.wrapping_mul(0x9E37_79B9)) << 32;
    }
}

/// The id no document has: what a snapshot's segments map a document to that no session holds.
pub(super) const NO_DOC: DocId = DocId::MAX;

/// A map keyed by [`DocId`] (see [`DocIdHasher`]).
pub(super) type DocIdMap<V> = HashMap<DocId, V, BuildHasherDefault<DocIdHasher>>;

/// Every indexed document's metadata, by [`DocId`], in pages of [`DocStore::PAGE`] ids. Ids are
/// handed out one after another and never reused (old segments keep the ids of replaced
/// documents), so pages fill up and an id finds its slot by division: a hash map of a million
/// documents held 2^21 buckets of 73 bytes (146 MB, and half as much again while it doubled);
/// this holds 64 bytes a document. A page whose documents were all replaced is freed.
///
/// Beside each document's metadata it keeps a [`DocBrief`] of eight bytes, which must say the
/// same session and length: only `insert` and `remove` change either.
#[derive(Default)]
pub(super) struct DocStore {
    pages: Vec<Option<DocPage>>,
    /// Each session's number in the briefs: given as its id is first stored, never reused (an
    /// entry per distinct session id ever indexed, a few dozen bytes each).
    session_numbers: HashMap<Arc<str>, u32>,
    /// The session stored last and its number: a session's documents are stored in a row.
    last_session: Option<(Arc<str>, u32)>,
}

struct DocPage {
    /// Slots holding a document.
    held: usize,
    slots: Box<[Option<DocMeta>]>,
    briefs: Box<[DocBrief]>,
}

/// What the hot loop of a phrase search asks of each matching document: which session holds
/// it and how long its text is. A common phrase matches a document in every few, spread over
/// a million documents' metadata (64 MB and more), so reading each one's metadata waited on
/// memory for most of such a search; the briefs of a page are an eighth of its size.
#[derive(Clone, Copy)]
pub(super) struct DocBrief {
    /// The session's number in its store ([`DocBrief::ABSENT`]'s in an empty slot).
    session: u32,
    /// Code points of the text, or `u32::MAX` when there are more (then the brief cannot tell).
    length: u32,
}

impl DocBrief {
    const ABSENT: DocBrief = DocBrief {
        session: u32::MAX,
        length: 0,
    };

    /// The session's number: documents of one session, and only they, share it.
    pub(super) fn session(self) -> u32 {
        self.session
    }

    /// Whether the text is at most `length` code points long; `None` when it is too long for
    /// the brief to tell.
    pub(super) fn length_at_most(self, length: u64) -> Option<bool> {
        (self.length != u32::MAX).then(|| u64::from(self.length) <= length)
    }
}

impl DocStore {
    const PAGE: usize = 4096;

    fn place(id: DocId) -> (usize, usize) {
        (id as usize / Self::PAGE, id as usize % Self::PAGE)
    }

    pub(super) fn get(&self, id: &DocId) -> Option<&DocMeta> {
        let (page, slot) = Self::place(*id);
        self.pages.get(page)?.as_ref()?.slots[slot].as_ref()
    }

    /// The brief of a stored document, read without its metadata.
    pub(super) fn brief(&self, id: DocId) -> Option<DocBrief> {
        let (page, slot) = Self::place(id);
        let brief = self.pages.get(page)?.as_ref()?.briefs[slot];
        (brief.session != DocBrief::ABSENT.session).then_some(brief)
    }

    /// The surface label of a stored document, to change (its session and length cannot be).
    pub(super) fn surface_mut(&mut self, id: &DocId) -> Option<&mut SurfaceLabel> {
        let (page, slot) = Self::place(*id);
        let meta = self.pages.get_mut(page)?.as_mut()?.slots[slot].as_mut()?;
        Some(&mut meta.surface)
    }

    pub(super) fn insert(&mut self, id: DocId, meta: DocMeta) {
        let brief = DocBrief {
            session: self.session_number(&meta.session),
            length: u32::try_from(meta.length).unwrap_or(u32::MAX),
        };
        let (page, slot) = Self::place(id);
        if page >= self.pages.len() {
            self.pages.resize_with(page + 1, || None);
        }
        let page = self.pages[page].get_or_insert_with(|| DocPage {
            held: 0,
            slots: (0..Self::PAGE).map(|_| None).collect(),
            briefs: vec![DocBrief::ABSENT; Self::PAGE].into_boxed_slice(),
        });
        page.briefs[slot] = brief;
        if page.slots[slot].replace(meta).is_none() {
            page.held += 1;
        }
    }

    /// The number of `session` in the briefs, given now if it has none.
    fn session_number(&mut self, session: &Arc<str>) -> u32 {
        if let Some((last, number)) = &self.last_session
            && same_session(last, session)
        {
            return *number;
        }
        let next = self.session_numbers.len();
        let number = *self.session_numbers.entry(session.clone()).or_insert_with(|| {
            // Each number stands for a session id held in memory: far fewer than 2^32 - 1.
            u32::try_from(next)
                .ok()
                .filter(|n| *n != DocBrief::ABSENT.session)
                .expect("fewer than 2^32 - 1 sessions")
        });
        self.last_session = Some((session.clone(), number));
        number
    }

    pub(super) fn remove(&mut self, id: &DocId) {
        let (index, slot) = Self::place(*id);
        let Some(Some(page)) = self.pages.get_mut(index) else {
            return;
        };
        page.briefs[slot] = DocBrief::ABSENT;
        if page.slots[slot].take().is_some() {
            page.held -= 1;
            if page.held == 0 {
                self.pages[index] = None;
            }
        }
    }
}

impl std::ops::Index<&DocId> for DocStore {
    type Output = DocMeta;

    fn index(&self, id: &DocId) -> &DocMeta {
        self.get(id).expect("an indexed document")
    }
}

/// What differs between full-text engines: storing token streams and finding phrases.
pub trait SearchProvider {
    /// Indexes (or re-indexes) the documents of one session; `docs` are `(id, sanitised text)`.
    fn replace_session(&mut self, session: &str, docs: &[(DocId, &str)]) -> Result<(), Error>;
    /// Whether [`SearchProvider::append_documents`] works here; where it does not, the engine
    /// hands over whole sessions.
    fn appends(&self) -> bool {
        false
    }
    /// Whether a session it holds can be grown in place by
    /// [`SearchProvider::append_documents`] (a live session that grew), even where a fresh
    /// session is handed over whole.
    fn grows(&self) -> bool {
        self.appends()
    }
    /// Adds documents to a session already given by `replace_session` (an index built in
    /// steps, a live session that grew). Only called when [`SearchProvider::appends`] or
    /// [`SearchProvider::grows`].
    fn append_documents(&mut self, session: &str, _docs: &[(DocId, &str)]) -> Result<(), Error> {
        Err(Error::new(
            ErrorCode::QueryIndexFailed,
            format!("this index cannot add to session {session:?} in place"),
        ))
    }
    /// Drops one session's documents.
    fn remove_session(&mut self, session: &str) -> Result<(), Error>;
    /// Every document (of `session`, if given) whose token stream contains `phrase`
    /// contiguously, with the start positions of all occurrences, ascending.
    fn phrase_matches(&self, phrase: &[String], session: Option<&str>) -> Result<Vec<(DocId, Vec<u32>)>, Error>;
    /// The documents [`SearchProvider::phrase_matches`] finds, each handed to `sink` with its
    /// merged span count ([`merge_spans`]) instead of its positions: all that ranking needs.
    /// Providers that can count without building a list of positions per document override it
    /// (and may ask [`CountSink::wanted`] before counting).
    fn match_counts(&self, phrase: &[String], session: Option<&str>, sink: &mut dyn CountSink) -> Result<(), Error> {
        for (id, starts) in self.phrase_matches(phrase, session)? {
            if let Some(stats) = merge_spans(&starts, phrase.len() as u32) {
                sink.found(id, stats.match_count);
            }
        }
        Ok(())
    }
    /// Told before each build step whether the build goes in bounded steps, reporting progress
    /// between them, or in one call: a provider whose units of work cannot be interrupted may
    /// make them larger when nothing waits between steps.
    fn build_in_steps(&mut self, _stepped: bool) {}
    /// Makes everything indexed so far searchable (called once per reconcile).
    fn commit(&mut self) -> Result<(), Error> {
        Ok(())
    }
    /// Told before each step of a stepped build how many jobs (documents a helper indexes
    /// elsewhere) the host would take now. Providers that cannot adopt what a helper built
    /// ignore it and index everything themselves.
    fn hand_out(&mut self, _slots: usize) {}
    /// Once a stepped build has handed every document over: builds at most one job no helper
    /// will take, and says whether any job is still outside the index.
    fn settle(&mut self) -> Result<Settled, Error> {
        Ok(Settled::Done)
    }
    /// The next job for a helper, as bytes.
    fn take_job(&mut self) -> Option<Vec<u8>> {
        None
    }
    /// Adopts what a helper built for a job; `false` when it is not an awaited job's answer.
    fn supply_segment(&mut self, _bytes: &[u8]) -> bool {
        false
    }
    /// Takes back every job handed out (its helper is gone), to build it here.
    fn reclaim_jobs(&mut self) {}
}

/// Where a stepped build stands once every document has been handed to the provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settled {
    /// No job is left outside the index.
    Done,
    /// A job was built here or is ready to be taken: step again.
    Working,
    /// Only jobs handed out remain: nothing to do here until a helper's segment is supplied.
    Waiting,
}

/// Where [`SearchProvider::match_counts`] hands the documents it finds.
pub trait CountSink {
    /// Whether a document holding every term of a phrase of several terms, the rarest of them
    /// `most` times (so at most `most` merged spans), can still change the answer; when not,
    /// a provider may skip decoding its positions and not report it.
    fn wanted(&mut self, _id: DocId, _most: u32) -> bool {
        true
    }
    /// A matching document and its merged span count.
    fn found(&mut self, id: DocId, match_count: u32);
    /// Documents with fewer merged spans than this cannot change the answer any more and may
    /// be left out. It only rises, and only as documents are found.
    fn floor(&self) -> u32 {
        0
    }
}

impl<F: FnMut(DocId, u32)> CountSink for F {
    fn found(&mut self, id: DocId, match_count: u32) {
        self(id, match_count)
    }
}

/// A provider that keeps token streams in memory and scans them: the reference behaviour the
/// indexed providers are tested against.
#[derive(Default)]
pub struct ScanProvider {
    mode: TokenizerMode,
    sessions: HashMap<String, Vec<(DocId, Vec<String>)>>,
}

impl ScanProvider {
    /// A provider tokenizing with `mode`.
    pub fn new(mode: TokenizerMode) -> Self {
        ScanProvider {
            mode,
            sessions: HashMap::new(),
        }
    }
}

impl SearchProvider for ScanProvider {
    fn replace_session(&mut self, session: &str, docs: &[(DocId, &str)]) -> Result<(), Error> {
        let mode = self.mode;
        let streams = docs
            .iter()
            .map(|(id, text)| {
                (
                    *id,
                    tokenize(text, mode).into_iter().map(|t| t.text.into_owned()).collect(),
                )
            })
            .collect();
        self.sessions.insert(session.to_owned(), streams);
        Ok(())
    }

    fn appends(&self) -> bool {
        true
    }

    fn append_documents(&mut self, session: &str, docs: &[(DocId, &str)]) -> Result<(), Error> {
        let mode = self.mode;
        let streams = self.sessions.entry(session.to_owned()).or_default();
        for (id, text) in docs {
            streams.push((
                *id,
                tokenize(text, mode).into_iter().map(|t| t.text.into_owned()).collect(),
            ));
        }
        Ok(())
    }

    fn remove_session(&mut self, session: &str) -> Result<(), Error> {
        self.sessions.remove(session);
        Ok(())
    }

    fn phrase_matches(&self, phrase: &[String], session: Option<&str>) -> Result<Vec<(DocId, Vec<u32>)>, Error> {
        let mut out = Vec::new();
        let mut scan = |docs: &Vec<(DocId, Vec<String>)>| {
            for (id, tokens) in docs {
                let starts: Vec<u32> = tokens
                    .windows(phrase.len())
                    .enumerate()
                    .filter(|(_, w)| *w == phrase)
                    .map(|(i, _)| i as u32)
                    .collect();
                if !starts.is_empty() {
                    out.push((*id, starts));
                }
            }
        };
        match session {
            Some(id) => {
                if let Some(docs) = self.sessions.get(id) {
                    scan(docs);
                }
            }
            None => self.sessions.values().for_each(&mut scan),
        }
        Ok(out)
    }
}

/// One indexed document's metadata. Its text is not kept: the index would otherwise hold a
/// second copy of the corpus's text; the few hits a page shows re-extract theirs from the
/// corpus (`document_text_start`), which the engine always reconciles with first.
pub(super) struct DocMeta {
    /// The session id, shared by the session's documents.
    pub(super) session: Arc<str>,
    pub(super) seq: u64,
    /// The event type, shared by every document of that type.
    pub(super) kind: Arc<str>,
    pub(super) time: i64,
    pub(super) surface: SurfaceLabel,
    /// Code points of the sanitised text.
    pub(super) length: u64,
    /// Whether sanitising may change the extracted text (when false, a hit's long text is not
    /// searched for the characters sanitising replaces).
    pub(super) sanitising_changes: bool,
}

/// The sanitised text of one indexed document, read from the corpus the engine was reconciled
/// with (the same extraction and sanitising as at indexing), decoded only until it holds
/// `limit` bytes ([`extract_text_start`]), and whether that is all of it.
fn document_text_start(corpus: &Corpus, doc: &DocMeta, limit: usize) -> Result<(String, bool), Error> {
    let source = corpus.source(&doc.session)?;
    let events = &source.log.events;
    let event = match events.get(doc.seq as usize) {
        Some(event) if event.seq() == doc.seq => Some(event),
        _ => events.iter().find(|e| e.seq() == doc.seq),
    };
    let (text, complete) = event
        .map(|event| extract_text_start(event, limit))
        .filter(|(text, complete)| !text.is_empty() || !complete)
        .ok_or_else(|| {
            Error::new(
                ErrorCode::QueryIndexFailed,
                format!("the search index is out of step with session {:?}", &*doc.session),
            )
        })?;
    // Hit texts are the corpus's longest documents as often as not: a clean UTF-8 text is
    // handed on without another copy. Sanitising maps characters one by one, so it keeps a
    // start of the text a start of the sanitised text.
    let text = match text {
        JsString::Utf8(text) if !doc.sanitising_changes || is_sanitized(&text) => String::from(text),
        text => sanitize_text(&text.to_lossy()),
    };
    Ok((text, complete))
}

/// How much of a hit's text is decoded first to find its match in (then eight times as much
/// each time that is not enough): a common word is found in the first lines of a long tool
/// output, and its snippet needs a few hundred characters past it.
const FIRST_READ_BYTES: usize = 4096;

/// One shared copy of each distinct string (event types), for [`DocMeta::kind`].
#[derive(Default)]
pub(super) struct Interner(HashSet<Arc<str>>);

impl Interner {
    pub(super) fn get(&mut self, text: &str) -> Arc<str> {
        if let Some(shared) = self.0.get(text) {
            return Arc::clone(shared);
        }
        let shared: Arc<str> = Arc::from(text);
        self.0.insert(Arc::clone(&shared));
        shared
    }
}

pub(super) struct IndexedSession {
    pub(super) generation: u64,
    /// The corpus's lineage of the session when indexed: while it holds, the session can be
    /// grown in place.
    pub(super) lineage: u64,
    /// Events indexed (the next to read when the session grows).
    pub(super) events: usize,
    /// Replacements folded when indexed (those after it shadow indexed documents).
    pub(super) replacements: usize,
    /// The wrapping sum of the documents' hashes: with `record`, the session's fingerprint
    /// ([`IndexedSession::fingerprint`]).
    pub(super) docs_sum: u64,
    pub(super) live: bool,
    pub(super) persisted: bool,
    pub(super) record: SessionRecord,
    pub(super) docs: Vec<DocId>,
    /// The within-session generation cursors are bound to (changes only with this session).
    pub(super) epoch: u64,
}

impl IndexedSession {
    /// A hash of what was indexed (header, availability, documents): snapshots are checked
    /// against it.
    pub(super) fn fingerprint(&self) -> u64 {
        super::build::fingerprint_of(&self.record, self.docs_sum)
    }
}

/// One matching document: its metadata and its merged span count.
#[derive(Clone, Copy)]
struct Match<'a> {
    doc: &'a DocMeta,
    match_count: u32,
}

impl<'a> Match<'a> {
    fn key(&self) -> RankKey<'a> {
        RankKey {
            match_count: self.match_count,
            length: self.doc.length,
            time: self.doc.time,
            session_id: &self.doc.session,
            seq: self.doc.seq,
        }
    }

    /// The earlier of two matches in `searchEvents` order (the first on a tie).
    fn stronger(current: Match<'a>, candidate: Match<'a>) -> Match<'a> {
        if compare_events(&current.key(), &candidate.key()).is_le() {
            current
        } else {
            candidate
        }
    }
}

/// Whether a document passes a request's event filters.
pub(super) fn event_passes(doc: &DocMeta, filters: &[EventFilter]) -> bool {
    filters.iter().all(|filter| match filter {
        EventFilter::Seq(range) => {
            range.from.is_none_or(|f| doc.seq as f64 >= f) && range.to.is_none_or(|t| doc.seq as f64 <= t)
        }
        EventFilter::Time(range) => {
            range.from.is_none_or(|f| doc.time as f64 >= f) && range.to.is_none_or(|t| doc.time as f64 <= t)
        }
        EventFilter::Type(types) => types.iter().any(|t| **t == *doc.kind),
        EventFilter::Surface(labels) => labels.contains(&doc.surface),
        EventFilter::Text(_) => false,
    })
}

/// `searchSessions`' fold of the matching documents into each session's strongest. Providers
/// list a session's documents together, so matches come in runs of one session: the session
/// map is consulted once per run, and a document of the run that cannot beat the run's
/// strongest so far is not even counted ([`CountSink::wanted`]).
///
/// Once more sessions match than the page head (`offset + limit`) holds, a document with
/// fewer spans than the head-th highest span count among the sessions' strongest cannot put
/// its session in the head, nor change which sessions are in it, nor whether one follows it
/// ([`CountSink::floor`]).
struct SessionBests<'a, 'f> {
    docs: &'a DocStore,
    sessions: &'a HashMap<String, IndexedSession>,
    /// The records of sessions read from the corpus instead of the index (looked up first).
    scanned: &'a HashMap<Arc<str>, SessionRecord>,
    event_filters: &'f [EventFilter],
    session_filters: &'f [SessionFilter],
    /// How many sessions the page and those before it show.
    head: u64,
    /// The current run's session and its strongest match so far.
    run: Option<(&'a str, Match<'a>)>,
    /// The run's session number in `docs`, when an indexed document began it.
    run_number: Option<u32>,
    /// Each session's strongest match; `None` marks a session its filters exclude.
    best: HashMap<&'a str, Option<Match<'a>>>,
    /// How many matching sessions' strongest have each span count.
    counts: std::collections::BTreeMap<u32, u64>,
    /// Matching sessions seen so far (those in `best` as `Some`).
    matching: u64,
    floor: u32,
}

impl<'a> SessionBests<'a, '_> {
    /// A document's metadata, if it passes the event filters.
    fn doc(&self, id: DocId) -> Option<&'a DocMeta> {
        self.docs.get(&id).filter(|doc| event_passes(doc, self.event_filters))
    }

    /// Folds the current run's strongest match into `best` (checking the session's filters
    /// the first time the session is seen).
    fn close_run(&mut self) {
        let Some((session, strongest)) = self.run.take() else {
            return;
        };
        let (before, after) = match self.best.get_mut(session) {
            Some(None) => return,
            Some(Some(current)) => {
                let before = current.match_count;
                *current = Match::stronger(*current, strongest);
                (Some(before), current.match_count)
            }
            None => {
                let record = match self.scanned.get(session) {
                    Some(record) => record,
                    None => &self.sessions[session].record,
                };
                let admitted = session_matches(self.session_filters, record);
                self.best.insert(session, admitted.then_some(strongest));
                if !admitted {
                    return;
                }
                self.matching += 1;
                (None, strongest.match_count)
            }
        };
        if before == Some(after) {
            return;
        }
        if let Some(before) = before
            && let Some(n) = self.counts.get_mut(&before)
        {
            *n -= 1;
            if *n == 0 {
                self.counts.remove(&before);
            }
        }
        *self.counts.entry(after).or_default() += 1;
        self.raise_floor();
    }

    /// The head-th highest span count among the matching sessions' strongest, once more
    /// sessions than the head match (none is dropped below it before then).
    fn raise_floor(&mut self) {
        if self.matching <= self.head {
            return;
        }
        let mut seen = 0;
        for (&count, &sessions) in self.counts.iter().rev() {
            seen += sessions;
            if seen >= self.head {
                self.floor = self.floor.max(count);
                return;
            }
        }
    }

    /// Folds in one matching document that passed the event filters.
    fn offer(&mut self, doc: &'a DocMeta, match_count: u32) {
        let candidate = Match { doc, match_count };
        match self.run.as_mut() {
            Some((session, strongest)) if same_session(session, &doc.session) => {
                *strongest = Match::stronger(*strongest, candidate);
            }
            _ => {
                self.close_run();
                self.run = Some((&doc.session, candidate));
                self.run_number = None;
            }
        }
    }

    /// Every matching session's strongest match, unordered.
    fn finish(mut self) -> Vec<Match<'a>> {
        self.close_run();
        self.best.into_values().flatten().collect()
    }
}

/// Whether `session` is the run's (documents of one session share one `Arc<str>`: usually the
/// same pointer).
pub(super) fn same_session(run: &str, session: &str) -> bool {
    std::ptr::eq(run, session) || run == session
}

impl CountSink for SessionBests<'_, '_> {
    // At most as many spans as the run's strongest, in a longer text (or fewer spans): the
    // document ranks below the strongest whatever its count turns out to be. Without event
    // filters that is told from the document's brief, not its metadata.
    fn wanted(&mut self, id: DocId, most: u32) -> bool {
        if !self.event_filters.is_empty() {
            let Some(doc) = self.doc(id) else {
                return false;
            };
            return match &self.run {
                Some((session, strongest)) if same_session(session, &doc.session) => {
                    most > strongest.match_count
                        || (most == strongest.match_count && doc.length <= strongest.doc.length)
                }
                _ => true,
            };
        }
        let Some(brief) = self.docs.brief(id) else {
            return false;
        };
        match (&self.run, self.run_number) {
            (Some((_, strongest)), Some(number)) if number == brief.session() => {
                most > strongest.match_count
                    || (most == strongest.match_count && brief.length_at_most(strongest.doc.length) != Some(false))
            }
            _ => true,
        }
    }

    fn found(&mut self, id: DocId, match_count: u32) {
        if let Some(doc) = self.doc(id) {
            self.offer(doc, match_count);
            self.run_number = self.docs.brief(id).map(DocBrief::session);
        }
    }

    fn floor(&self) -> u32 {
        self.floor
    }
}

/// Puts the first `count` of `items` in `compare` order, leaving the rest unordered behind
/// them: a page needs the top of the order (and whether anything follows), not every match
/// sorted. The orders are total, so an unstable selection decides the same page.
fn order_top<T>(items: &mut [T], count: u64, compare: impl Fn(&T, &T) -> std::cmp::Ordering) {
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    if count == 0 {
        return;
    }
    if count < items.len() {
        items.select_nth_unstable_by(count - 1, &compare);
        items[..count].sort_unstable_by(compare);
    } else {
        items.sort_unstable_by(compare);
    }
}

/// An event hit: the document's record fields plus `snippet`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventHit {
    /// The event's record (its session id as the search index stores it).
    #[serde(flatten)]
    pub record: EventRecord,
    /// Plain-text excerpt around the first match.
    pub snippet: String,
    /// Match ranges inside `snippet`, when the request asked for `highlights`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub highlights: Option<Vec<Highlight>>,
}

/// One merged match span inside a snippet. Rust callers read the code-point range; the wire
/// form carries UTF-16 offsets, which is what JavaScript strings index by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Highlight {
    /// First UTF-16 unit of the match in the snippet.
    #[serde(rename = "start")]
    pub start_utf16: usize,
    /// One past the last UTF-16 unit.
    #[serde(rename = "end")]
    pub end_utf16: usize,
    /// First code point of the match in the snippet.
    #[serde(skip)]
    pub start: usize,
    /// One past the last code point.
    #[serde(skip)]
    pub end: usize,
}

impl Highlight {
    fn new(snippet: &str, start: usize, end: usize) -> Highlight {
        let utf16 = |cp: usize| snippet.chars().take(cp).map(char::len_utf16).sum();
        Highlight {
            start_utf16: utf16(start),
            end_utf16: utf16(end),
            start,
            end,
        }
    }
}

/// Tokens the looks from spellings of a phrase's first word may read beyond one per byte
/// before the rest of the text is read token by token.
const LOOK_SLACK_TOKENS: usize = 64;

/// The bytes of `text` from the first token of the first occurrence of `phrase` to the end of
/// its last token, reading tokens only up to there.
///
/// A phrase whose first term is ASCII is looked for by bytes through the ASCII start of the
/// text: there every token is a run of ASCII letters and digits between ASCII separators, and a
/// token equal to the term is the term in some case, so only the tokens holding such a spelling
/// are read. The rest of the text, from the last separator before its first non-ASCII byte, is
/// tokenized token by token (a letter there may fold to an ASCII one).
fn first_occurrence(text: &str, phrase: &[String], mode: TokenizerMode) -> Option<std::ops::Range<usize>> {
    let first = phrase.first()?.as_bytes();
    if first.is_empty() || !first.is_ascii() {
        return occurrence_from(text, 0, phrase, mode);
    }
    let bytes = text.as_bytes();
    let separator_before = |at: usize| {
        bytes[..at]
            .iter()
            .rposition(|b| !b.is_ascii_alphanumeric())
            .map_or(0, |i| i + 1)
    };
    let (lower, upper) = (first[0].to_ascii_lowercase(), first[0].to_ascii_uppercase());
    // Bytes before `ascii` are known to be ASCII; it only moves as far as the spellings found.
    // `looked`: tokens read so far from the spellings.
    let (mut from, mut ascii, mut looked) = (0, 0, 0);
    while let Some(found) = memchr::memchr2(lower, upper, &bytes[from..]) {
        let at = from + found;
        let end = (at + first.len()).min(bytes.len());
        if !bytes[ascii..end].is_ascii() {
            ascii += bytes[ascii..end].iter().position(|b| !b.is_ascii()).unwrap_or(0);
            return occurrence_from(text, separator_before(ascii), phrase, mode);
        }
        ascii = end;
        from = at + 1;
        if !bytes[at..end].eq_ignore_ascii_case(first) {
            continue;
        }
        // The token holding `at` starts after the separator before it. Looks that read more
        // tokens than the text has up to here read some again: a phrase repeating its first
        // word over a text repeating it reads each token as often as the phrase is long.
        // From there, every token is read once.
        if looked > at + LOOK_SLACK_TOKENS {
            return occurrence_from(text, separator_before(at), phrase, mode);
        }
        match occurrence_at(text, separator_before(at), phrase, mode) {
            Ok(occurrence) => return Some(occurrence),
            Err(read) => looked += read,
        }
    }
    // No spelling follows: an occurrence can only hold a letter that folds to an ASCII one.
    let rest = &bytes[ascii..];
    if rest.is_ascii() {
        return None;
    }
    let other = ascii + rest.iter().position(|b| !b.is_ascii())?;
    occurrence_from(text, separator_before(other), phrase, mode)
}

/// The occurrence of `phrase` that begins with the first token of `text[start..]` (`start` a
/// token boundary), if there is one; else how many tokens were read.
fn occurrence_at(
    text: &str,
    start: usize,
    phrase: &[String],
    mode: TokenizerMode,
) -> Result<std::ops::Range<usize>, usize> {
    let mut tokens = Tokens::new(&text[start..], mode);
    let mut range: Option<std::ops::Range<usize>> = None;
    for (read, term) in phrase.iter().enumerate() {
        let token = tokens.next_ref().filter(|token| token.text == term).ok_or(read + 1)?;
        let from = range.map_or(token.byte_range.start, |r| r.start);
        range = Some(from..token.byte_range.end);
    }
    range.map(|r| start + r.start..start + r.end).ok_or(0)
}

/// The first occurrence of `phrase` in `text[start..]` (`start` a token boundary), reading
/// every token up to its end, once.
fn occurrence_from(text: &str, start: usize, phrase: &[String], mode: TokenizerMode) -> Option<std::ops::Range<usize>> {
    if phrase.is_empty() {
        return None;
    }
    let terms = Phrase::new(phrase);
    let mut matcher = terms.matcher();
    let mut tokens = Tokens::new(&text[start..], mode);
    // Where each of the last `phrase.len()` tokens begins, as a ring by position.
    let mut begins = vec![0; phrase.len()];
    while let Some(token) = tokens.next_ref() {
        begins[token.position % phrase.len()] = token.byte_range.start;
        if matcher.push(terms.slot_of(token.text)) {
            let first = (token.position + 1 - phrase.len()) % phrase.len();
            return Some(start + begins[first]..start + token.byte_range.end);
        }
    }
    None
}

/// The merged occurrences of `phrase` among `tokens`, as ranges of token indices (inclusive).
fn span_tokens(tokens: &[super::tokenizer::Token<'_>], phrase: &[String]) -> Vec<(usize, usize)> {
    let len = phrase.len();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    if len == 0 {
        return spans;
    }
    let terms = Phrase::new(phrase);
    let mut matcher = terms.matcher();
    for (i, token) in tokens.iter().enumerate() {
        if matcher.push(terms.slot_of(&token.text)) {
            let (from, to) = (i + 1 - len, i);
            match spans.last_mut() {
                Some(last) if from <= last.1 => last.1 = to,
                _ => spans.push((from, to)),
            }
        }
    }
    spans
}

/// A session hit with its best-matching event.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHit {
    /// The header as indexed (no `origin`).
    pub header: Json,
    /// Whether the session is live.
    pub live: bool,
    /// Whether a stored copy is loaded.
    pub persisted: bool,
    /// The session's strongest matching event.
    pub best_match: EventHit,
}

/// A page of `searchSessions`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSearchPage {
    /// Hits, best first.
    pub items: Vec<SessionHit>,
    /// Present when more hits follow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// A page of `searchEvents`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventSearchPage {
    /// The target session's header as indexed.
    pub session: Json,
    /// Hits, best first.
    pub items: Vec<EventHit>,
    /// Present when more hits follow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Full-text search over a corpus through one provider.
pub struct SearchEngine<P: SearchProvider> {
    pub(super) provider: P,
    pub(super) config: SearchConfig,
    pub(super) mode: TokenizerMode,
    pub(super) instance: String,
    pub(super) sessions: HashMap<String, IndexedSession>,
    pub(super) docs: DocStore,
    pub(super) kinds: Interner,
    pub(super) next_doc: DocId,
    pub(super) next_epoch: u64,
    pub(super) generation: u64,
    /// The index build under way (`index_step`).
    pub(super) build: Build,
    /// Sessions indexed under an epoch up to this one are in the provider's last commit; a
    /// build under way gives the sessions it indexes later ones.
    pub(super) committed_epoch: u64,
    /// The corpus generation the index was last brought up to date with: while the corpus
    /// stays at it, a search's reconcile has nothing to look at (it would otherwise visit
    /// every session of a large corpus on every call).
    pub(super) reconciled: Option<u64>,
}

/// The header as DSH's index stores it: `origin` is not carried.
pub fn indexed_header(header: &SessionHeader) -> Json {
    let mut object = JsonObject::new();
    object.insert("version", Json::Number(header.version));
    // DSH's SQLite binding stores text with lone surrogates as U+FFFD, ids included.
    object.insert("id", Json::str(&header.id));
    object.insert("createdAt", Json::int(header.created_at));
    if let Some(cwd) = &header.cwd {
        object.insert("cwd", Json::str(cwd));
    }
    if let Some(parent) = &header.parent_session {
        object.insert("parentSession", Json::str(parent));
    }
    if let Some(seed) = header.seed_length {
        object.insert("seedLength", Json::int(seed as i64));
    }
    if let Some(depth) = header.delegation_depth {
        object.insert("delegationDepth", Json::int(depth as i64));
    }
    if let Some(preset) = &header.agent_preset {
        object.insert("agentPreset", Json::str(preset));
    }
    Json::Object(object)
}

fn instance_nonce() -> u64 {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(target_arch = "wasm32"))]
    let entropy = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
        ^ u64::from(std::process::id()).rotate_left(32);
    #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
    let entropy =
        (js_sys::Math::random() * 9_007_199_254_740_991.0) as u64 ^ (js_sys::Date::now() as u64).rotate_left(20);
    // WASI has no process id; its random source is always there.
    #[cfg(all(target_arch = "wasm32", target_os = "wasi"))]
    let entropy = getrandom::u64().unwrap_or(0);
    entropy ^ count.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

pub(super) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

pub(super) fn fnv1a_update(hash: u64, text: &str) -> u64 {
    text.bytes()
        .fold(hash, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

pub(super) fn fnv1a(text: &str) -> u64 {
    fnv1a_update(FNV_OFFSET, text)
}

/// The generation cursors carry when their answer was read (in part) from the corpus during
/// a build: the corpus state (or, within one session, the session's state) it was read from.
fn pending_generation(corpus_generation: u64) -> String {
    format!("pending:{corpus_generation}")
}

fn invalid_cursor(why: &str) -> Error {
    Error::new(
        ErrorCode::QueryInvalidCursor,
        format!("invalid session-search cursor: {why}"),
    )
}

impl<P: SearchProvider> SearchEngine<P> {
    /// An engine with an empty index.
    pub fn new(provider: P, config: SearchConfig, mode: TokenizerMode) -> Self {
        SearchEngine {
            provider,
            config,
            mode,
            instance: format!("{:016x}", instance_nonce()),
            sessions: HashMap::new(),
            docs: DocStore::default(),
            kinds: Interner::default(),
            next_doc: 0,
            next_epoch: 0,
            generation: 0,
            build: Build::default(),
            committed_epoch: 0,
            reconciled: None,
        }
    }

    /// The search configuration.
    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// The tokenizer mode documents and queries go through.
    pub fn tokenizer(&self) -> TokenizerMode {
        self.mode
    }

    fn encode_cursor(&self, scope: &str, fingerprint: &str, generation: &str, offset: u64) -> String {
        let payload = format!(
            r#"{{"v":1,"instance":"{}","scope":"{scope}","fingerprint":"{:016x}","generation":"{generation}","offset":{offset}}}"#,
            self.instance,
            fnv1a(fingerprint)
        );
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(payload)
    }

    /// The offset a cursor continues from: invalid before stale, as DSH checks them. A cursor
    /// is current if it carries any of `generations` (the states that give the same answers).
    fn decode_cursor(
        &self,
        cursor: &str,
        scope: &str,
        fingerprint: &str,
        generations: &[String],
    ) -> Result<u64, Error> {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(cursor)
            .map_err(|_| invalid_cursor("not decodable"))?;
        let text = String::from_utf8(bytes).map_err(|_| invalid_cursor("not decodable"))?;
        let payload = Json::parse(&text, Default::default()).map_err(|_| invalid_cursor("not decodable"))?;
        let field = |key: &str| payload.get(key).and_then(Json::as_str);
        let offset = payload.get("offset").and_then(Json::as_index);
        let belongs = payload.get("v").and_then(Json::as_f64) == Some(1.0)
            && field("instance") == Some(self.instance.as_str())
            && field("scope") == Some(scope)
            && field("fingerprint") == Some(format!("{:016x}", fnv1a(fingerprint)).as_str());
        let Some(offset) = offset.filter(|_| belongs) else {
            return Err(invalid_cursor("cursor does not belong to this normalized request"));
        };
        if !generations.iter().any(|g| field("generation") == Some(g.as_str())) {
            return Err(Error::new(
                ErrorCode::QueryStaleCursor,
                "session-search cursor is stale: the indexed corpus changed",
            ));
        }
        Ok(offset)
    }

    fn phrase(&self, query: &str) -> Vec<String> {
        tokenize(query, self.mode)
            .into_iter()
            .map(|t| t.text.into_owned())
            .collect()
    }

    /// Matching documents passing `filters`, with their metadata and stats.
    fn matches<'a>(
        &'a self,
        phrase: &[String],
        session: Option<&str>,
        filters: &[EventFilter],
        found: &mut dyn FnMut(Match<'a>),
    ) -> Result<(), Error> {
        if phrase.is_empty() {
            return Ok(());
        }
        self.provider.match_counts(phrase, session, &mut |id, match_count| {
            if let Some(doc) = self.docs.get(&id).filter(|doc| event_passes(doc, filters)) {
                found(Match { doc, match_count });
            }
        })
    }

    /// The hit of one matching document: its snippet is cut around the first occurrence of
    /// `phrase`, found again in its text (ranking only needed the counts).
    fn hit(
        &self,
        corpus: &Corpus,
        session: &SessionRecord,
        doc: &DocMeta,
        phrase: &[String],
        highlights: bool,
    ) -> Result<EventHit, Error> {
        let (snippet, highlights) = match highlights {
            false => (
                self.cut_snippet(corpus, doc, |text, complete| self.plain_cut(text, complete, phrase))?,
                None,
            ),
            true => {
                let (cut, highlights) =
                    self.cut_snippet(corpus, doc, |text, complete| self.marked_cut(text, complete, phrase))?;
                (cut, Some(highlights))
            }
        };
        Ok(EventHit {
            record: EventRecord {
                session_id: JsString::from(session.header.id.as_str()),
                seq: doc.seq,
                kind: doc.kind.to_string(),
                time: doc.time,
                surface: doc.surface,
            },
            snippet,
            highlights,
        })
    }

    /// A hit's snippet, cut from as much of the start of its text as decides it (`cut` says
    /// `None` while it does not): a long tool output is not decoded far past its match.
    fn cut_snippet<T>(
        &self,
        corpus: &Corpus,
        doc: &DocMeta,
        cut: impl Fn(&str, bool) -> Option<T>,
    ) -> Result<T, Error> {
        let mut limit = FIRST_READ_BYTES;
        loop {
            let (text, complete) = document_text_start(corpus, doc, limit)?;
            if let Some(snippet) = cut(&text, complete) {
                return Ok(snippet);
            }
            limit = limit.saturating_mul(8);
        }
    }

    /// The snippet around the first occurrence of `phrase` in `text`, a start of the
    /// document's text unless `complete`. A start decides it once the occurrence ends before
    /// the start does (so its last token is whole) and the window's reach is inside it
    /// ([`snippet_reach`], which the cut tells).
    fn plain_cut(&self, text: &str, complete: bool, phrase: &[String]) -> Option<String> {
        let found = first_occurrence(text, phrase, self.mode);
        let (cut, reached) = snippet_at_byte(text, found.as_ref().map(|at| at.start), self.config.snippet_chars);
        let decided = reached && found.is_some_and(|at| at.end < text.len());
        (complete || decided).then_some(cut)
    }

    /// The snippet with its highlights, from `text` as [`Self::plain_cut`] takes it. Every
    /// occurrence that starts inside the window has to be whole in the start, which the start's
    /// last token (perhaps cut short) must therefore not be part of: as many tokens as the
    /// phrase has must start past the window's reach. (A span that goes on past the window is
    /// clipped at its end either way.)
    fn marked_cut(&self, text: &str, complete: bool, phrase: &[String]) -> Option<(String, Vec<Highlight>)> {
        let max = self.config.snippet_chars;
        let tokens = tokenize(text, self.mode);
        let spans = span_tokens(&tokens, phrase);
        if !complete {
            let first = tokens[spans.first()?.0].byte_range.start;
            let reach = snippet_reach(text, first, max)?;
            let past = tokens.iter().rev().take_while(|t| t.byte_range.start >= reach).count();
            if past < phrase.len() {
                return None;
            }
        }
        let ranges: Vec<(usize, usize)> = spans
            .iter()
            .map(|&(from, to)| (tokens[from].char_range.start, tokens[to].char_range.end))
            .collect();
        let start = ranges.first().map(|&(from, _)| from);
        let (cut, marks) = snippet_with_highlights(text, start, &ranges, max);
        let highlights = marks.iter().map(|&(from, to)| Highlight::new(&cut, from, to)).collect();
        Some((cut, highlights))
    }

    /// `searchSessions` over the corpus: reconciled first, unless a build is under way in
    /// steps (then sessions it has not published are read from the corpus; see `pending`).
    pub fn search_sessions(
        &mut self,
        corpus: &Corpus,
        request: &SessionSearchRequest,
    ) -> Result<SessionSearchPage, Error> {
        let pending = self.pending(corpus);
        if pending.is_none() {
            self.reconcile(corpus)?;
        }
        let fingerprint = request.fingerprint();
        // An answer given while the build was under way is the one the commit that ends it
        // gives, if the corpus did not move in between: its cursors go on.
        let generations = match &pending {
            Some(_) => vec![pending_generation(corpus.generation())],
            None => std::iter::once(self.generation.to_string())
                .chain(self.reconciled.map(pending_generation))
                .collect(),
        };
        let offset = match &request.cursor {
            Some(cursor) => self.decode_cursor(cursor, "sessions", &fingerprint, &generations)?,
            None => 0,
        };
        check_budgets(&request.session_filters, &request.event_filters, false)?;
        let phrase = self.phrase(&request.query);
        let scanned = match &pending {
            Some(pending) if !phrase.is_empty() => pending.scan(corpus, &phrase, self.mode, &request.event_filters),
            _ => Scanned::default(),
        };
        let mut bests = SessionBests {
            docs: &self.docs,
            sessions: &self.sessions,
            scanned: &scanned.records,
            event_filters: &request.event_filters,
            session_filters: &request.session_filters,
            head: offset.saturating_add(request.limit),
            run: None,
            run_number: None,
            best: HashMap::new(),
            counts: Default::default(),
            matching: 0,
            floor: 0,
        };
        if !phrase.is_empty() {
            match &pending {
                Some(pending) => {
                    let mut answered = pending.answered_only(&self.docs, &mut bests);
                    self.provider.match_counts(&phrase, None, &mut answered)?;
                }
                None => self.provider.match_counts(&phrase, None, &mut bests)?,
            }
            for (doc, match_count) in &scanned.matches {
                bests.offer(doc, *match_count);
            }
        }
        let mut ranked = bests.finish();
        order_top(&mut ranked, offset.saturating_add(request.limit), |a, b| {
            compare_sessions(&a.key(), &b.key())
        });
        let items = ranked
            .iter()
            .skip(offset as usize)
            .take(request.limit as usize)
            .map(|m| {
                let record = self.record(&scanned, &m.doc.session);
                Ok(SessionHit {
                    header: indexed_header(&record.header),
                    live: record.live,
                    persisted: record.persisted,
                    best_match: self.hit(corpus, record, m.doc, &phrase, request.highlights)?,
                })
            })
            .collect::<Result<_, Error>>()?;
        let next = offset + request.limit;
        let next_cursor =
            (ranked.len() as u64 > next).then(|| self.encode_cursor("sessions", &fingerprint, &generations[0], next));
        Ok(SessionSearchPage { items, next_cursor })
    }

    /// The listing record of a session with a match: scanned, or indexed.
    fn record<'s>(&'s self, scanned: &'s Scanned, session: &str) -> &'s SessionRecord {
        match scanned.records.get(session) {
            Some(record) => record,
            None => &self.sessions[session].record,
        }
    }

    /// `searchEvents` in one session: reconciled first, unless a build is under way in steps
    /// and has not published this session (then it is read from the corpus; see `pending`).
    pub fn search_events(&mut self, corpus: &Corpus, request: &EventSearchRequest) -> Result<EventSearchPage, Error> {
        let pending = self.pending(corpus);
        if pending.is_none() {
            self.reconcile(corpus)?;
        }
        let id = request.session_id.as_str();
        let not_found = || Error::new(ErrorCode::QuerySessionNotFound, format!("session \"{id}\" not found"));
        // The session's source when it is read from the corpus rather than the index.
        let unindexed = match &pending {
            Some(pending) if !pending.answers(id) => Some(corpus.source(id).map_err(|_| not_found())?),
            _ => None,
        };
        let generations = match &unindexed {
            Some(_) => vec![pending_generation(corpus.session_generation(id))],
            None => {
                let indexed = self.sessions.get(id).ok_or_else(not_found)?;
                let live = if indexed.live { "live" } else { "persisted" };
                vec![
                    format!("{live}:{}", indexed.epoch),
                    pending_generation(indexed.generation),
                ]
            }
        };
        let fingerprint = request.fingerprint();
        let offset = match &request.cursor {
            Some(cursor) => self.decode_cursor(cursor, "events", &fingerprint, &generations)?,
            None => 0,
        };
        check_budgets(&[], &request.filters, true)?;
        let phrase = self.phrase(&request.query);
        let mut scanned = Scanned::default();
        let mut ranked = Vec::new();
        match &unindexed {
            Some(source) => {
                scanned.records.insert(Arc::from(id), source.record());
                let scan = Scan {
                    phrase: &phrase,
                    mode: self.mode,
                    filters: &request.filters,
                    wanted: Wanted::Every,
                };
                scan.session(id, source, &mut scanned);
                ranked.extend(scanned.matches.iter().map(|(doc, match_count)| Match {
                    doc,
                    match_count: *match_count,
                }));
            }
            None => self.matches(&phrase, Some(id), &request.filters, &mut |m| ranked.push(m))?,
        }
        order_top(&mut ranked, offset.saturating_add(request.limit), |a, b| {
            compare_events(&a.key(), &b.key())
        });
        let record = self.record(&scanned, id);
        let items = ranked
            .iter()
            .skip(offset as usize)
            .take(request.limit as usize)
            .map(|m| self.hit(corpus, record, m.doc, &phrase, request.highlights))
            .collect::<Result<_, Error>>()?;
        let next = offset + request.limit;
        let next_cursor =
            (ranked.len() as u64 > next).then(|| self.encode_cursor("events", &fingerprint, &generations[0], next));
        Ok(EventSearchPage {
            session: indexed_header(&record.header),
            items,
            next_cursor,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(seq: u64) -> DocMeta {
        DocMeta {
            session: Arc::from("s"),
            seq,
            kind: Arc::from("user/message"),
            time: 0,
            surface: SurfaceLabel::Current,
            length: 1,
            sanitising_changes: false,
        }
    }

    #[test]
    fn the_document_store_finds_removes_and_frees_emptied_pages() {
        let mut store = DocStore::default();
        let page = DocStore::PAGE as DocId;
        for id in (0..page + 3).chain([5 * page + 1]) {
            store.insert(id, meta(u64::from(id)));
        }
        assert_eq!(store.get(&7).map(|m| m.seq), Some(7));
        assert!(store.get(&(page + 3)).is_none() && store.get(&(9 * page)).is_none());
        store.remove(&7);
        assert!(store.get(&7).is_none());
        let ids: Vec<DocId> = (0..6 * page).filter(|id| store.get(id).is_some()).collect();
        assert_eq!(ids.len() as DocId, page + 3);
        assert!(!ids.contains(&7));
        assert_eq!(ids.last(), Some(&(5 * page + 1)));
        for id in page..page + 3 {
            store.remove(&id);
        }
        assert!(store.pages[1].is_none(), "an emptied page is freed");
        assert!(store.pages[0].is_some());
    }

    #[test]
    fn a_brief_says_a_stored_documents_session_and_length() {
        let mut store = DocStore::default();
        let stored = |session: &str, length: u64| DocMeta {
            session: Arc::from(session),
            length,
            ..meta(0)
        };
        // Sessions stored in turns, each id in an Arc of its own.
        for (id, session, length) in [(0, "a", 3), (1, "b", 5), (2, "a", 4), (3, "c", u64::MAX)] {
            store.insert(id, stored(session, length));
        }
        let brief = |store: &DocStore, id| store.brief(id).expect("a stored document");
        let [a, b, a_again, c] = [0, 1, 2, 3].map(|id| brief(&store, id));
        assert_eq!(a.session(), a_again.session(), "one session, one number");
        assert_ne!(a.session(), b.session());
        assert_ne!(b.session(), c.session());
        assert_eq!(
            (a.length_at_most(3), a_again.length_at_most(3)),
            (Some(true), Some(false))
        );
        assert_eq!(c.length_at_most(u64::MAX), None, "too long to tell");
        assert!(store.brief(4).is_none() && store.brief(9 * DocStore::PAGE as DocId).is_none());
        store.remove(&1);
        assert!(store.brief(1).is_none());
        store.insert(5, stored("b", 1));
        assert_eq!(brief(&store, 5).session(), b.session(), "b keeps its number");
    }

    #[test]
    fn highlights_count_utf16_units_for_javascript() {
        // "😀" is one code point but two UTF-16 units.
        let highlight = Highlight::new("😀 needle", 2, 8);
        assert_eq!((highlight.start, highlight.end), (2, 8));
        assert_eq!((highlight.start_utf16, highlight.end_utf16), (3, 9));
    }

    #[test]
    fn order_top_orders_exactly_the_head() {
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1d);
        for len in 0..40usize {
            for count in [0u64, 1, 3, len as u64, len as u64 + 1, u64::MAX] {
                let items: Vec<u64> = (0..len).map(|_| next(50) as u64).collect();
                let mut sorted = items.clone();
                sorted.sort_unstable();
                let mut top = items.clone();
                order_top(&mut top, count, u64::cmp);
                let head = (count.min(len as u64)) as usize;
                assert_eq!(top[..head], sorted[..head], "{items:?} {count}");
                let mut rest = top[head..].to_vec();
                rest.sort_unstable();
                assert_eq!(rest, sorted[head..], "the rest is kept");
            }
        }
    }

    #[test]
    fn first_occurrence_is_the_first_complete_phrase() {
        let phrase = |text: &str| text.split(' ').map(str::to_owned).collect::<Vec<_>>();
        let mode = TokenizerMode::Unicode61;
        // "a a b": the occurrence begun at the second "a", not the first; bytes, not code points.
        assert_eq!(first_occurrence("é a a a b a a b", &phrase("a a b"), mode), Some(5..10));
        assert_eq!(first_occurrence("x A_a", &phrase("a a"), mode), Some(2..5));
        assert_eq!(first_occurrence("a b a", &phrase("a a"), mode), None);
        assert_eq!(first_occurrence("needle", &phrase("needle"), mode), Some(0..6));
        assert_eq!(first_occurrence("anything", &[], mode), None);
    }

    #[test]
    fn a_snippet_decided_on_a_start_of_the_text_is_the_whole_texts_with_its_highlights() {
        const WORDS: [&str; 12] = [
            "a", "ab", "b", "é", "e\u{301}", "数据", "数", "据库", "A_a", "😀", "x.y", "tést",
        ];
        const GAPS: [&str; 6] = [" ", "  ", "\n", "\u{3000}", "-", ""];
        let mut next = crate::testing::xorshift(0x853c_49e6_748f_ea9b);
        for round in 0..2_500 {
            let mode = TokenizerMode::ALL[round % 2];
            // Round 0: cut inside the second "ab", a start holds "a ab a", a false occurrence
            // that ends where the start does. Round 1: cut after "a---ab", a start holds a false
            // occurrence that begins inside the window and ends in its last token, one token
            // past the window's reach.
            let text: String = match round {
                0 => "a ab ab zzzz a ab a".into(),
                1 => "a ab -a---abb and more words here".into(),
                _ => (0..next(60))
                    .map(|_| format!("{}{}", WORDS[next(WORDS.len())], GAPS[next(GAPS.len())]))
                    .collect(),
            };
            let tokens: Vec<String> = tokenize(&text, mode).into_iter().map(|t| t.text.into_owned()).collect();
            if tokens.is_empty() {
                continue;
            }
            let (phrase, max) = match round {
                0 => (vec!["a".to_owned(), "ab".to_owned(), "a".to_owned()], 2),
                1 => (vec!["a".to_owned(), "ab".to_owned()], 8),
                _ => {
                    let from = next(tokens.len());
                    (
                        tokens[from..tokens.len().min(from + 1 + next(3))].to_vec(),
                        2 + next(12),
                    )
                }
            };
            let config = SearchConfig {
                snippet_chars: max,
                ..SearchConfig::default()
            };
            let engine = SearchEngine::new(ScanProvider::new(mode), config, mode);
            let plain = engine.plain_cut(&text, true, &phrase).expect("a whole text decides");
            let marked = engine.marked_cut(&text, true, &phrase).expect("a whole text decides");
            for cut in (0..=text.len()).filter(|&cut| text.is_char_boundary(cut)) {
                let start = &text[..cut];
                let context = || format!("{text:?} {phrase:?} {max} {cut} {mode:?}");
                if let Some(found) = engine.plain_cut(start, false, &phrase) {
                    assert_eq!(found, plain, "{}", context());
                }
                if let Some(found) = engine.marked_cut(start, false, &phrase) {
                    assert_eq!(found, marked, "{}", context());
                }
            }
        }
    }

    /// The first occurrence of `phrase` in `text`, by comparing the phrase with the tokens at
    /// every position.
    fn first_window(text: &str, phrase: &[String], mode: TokenizerMode) -> Option<std::ops::Range<usize>> {
        let tokens = tokenize(text, mode);
        let at = tokens
            .windows(phrase.len().max(1))
            .position(|window| !phrase.is_empty() && window.iter().zip(phrase).all(|(t, p)| t.text == p.as_str()))?;
        Some(tokens[at].byte_range.start..tokens[at + phrase.len() - 1].byte_range.end)
    }

    #[test]
    fn a_phrase_repeating_its_first_word_is_found_where_it_completes() {
        let mode = TokenizerMode::Unicode61;
        // "the" 3,999 times then "x", 60 times, then 3,999 times and "y": looked for from each
        // spelling of "the", this read the 1 MB text 4,000 times over (22 s).
        let mut text = format!("{}x ", "the ".repeat(3_999)).repeat(60);
        text.push_str(&"the ".repeat(3_999));
        text.push('y');
        let mut phrase = vec!["the".to_owned(); 3_999];
        phrase.push("y".to_owned());
        let start = 60 * (3_999 * 4 + 2);
        assert_eq!(first_occurrence(&text, &phrase, mode), Some(start..text.len()));
        let tokens = tokenize(&text, mode);
        assert_eq!(span_tokens(&tokens, &phrase), [(60 * 4_000, 61 * 4_000 - 1)]);
    }

    #[test]
    fn the_first_occurrence_found_by_bytes_is_the_one_every_token_read_finds() {
        // The term in three cases, a start of it, letters that fold to its last one, words
        // that hold it, separators, CJK, digits.
        const PIECES: &str = "deploy Deploy DEPLOY deplo \u{fd} y\u{301} un - _ 数据 é x1 1 deploy\u{301}";
        let pieces: Vec<&str> = PIECES.split(' ').chain([" ", "  "]).collect();
        let mut next = crate::testing::xorshift(0xbb67_ae85_84ca_a73b);
        for round in 0..20_000 {
            let mode = TokenizerMode::ALL[round % 2];
            let text: String = (0..next(14)).map(|_| pieces[next(pieces.len())]).collect();
            let tokens: Vec<String> = tokenize(&text, mode).into_iter().map(|t| t.text.into_owned()).collect();
            let phrase = match (next(4), tokens.len()) {
                (0, _) | (_, 0) => vec!["deploy".to_owned()],
                (1, _) => vec!["deploy".to_owned(), "x1".to_owned()],
                (2, _) => vec!["deploy".to_owned(); 1 + next(3)],
                (_, n) => {
                    let from = next(n);
                    tokens[from..n.min(from + 1 + next(3))].to_vec()
                }
            };
            let expected = first_window(&text, &phrase, mode);
            let context = || format!("{text:?} {phrase:?} {mode:?}");
            assert_eq!(occurrence_from(&text, 0, &phrase, mode), expected, "{}", context());
            assert_eq!(first_occurrence(&text, &phrase, mode), expected, "{}", context());
        }
    }

    #[test]
    fn spans_merge_overlapping_occurrences() {
        let tokens = tokenize("a a a x a a b a a a a", TokenizerMode::Unicode61);
        let phrase = vec!["a".to_owned(), "a".to_owned()];
        assert_eq!(span_tokens(&tokens, &phrase), [(0, 2), (4, 5), (7, 10)]);
        let phrase = vec!["a".to_owned(), "a".to_owned(), "b".to_owned()];
        assert_eq!(span_tokens(&tokens, &phrase), [(4, 6)]);
    }
}
