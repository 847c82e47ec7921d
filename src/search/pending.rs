//! Searching while an index build is under way in steps. A host that builds the index in
//! steps (to show progress, or to keep its thread responsive) should not have to wait for the
//! whole build before its first answer. So while such a build is under way, a search does not
//! finish it: the sessions the last commit published, and that the corpus still holds as they
//! were then, are answered by the index; every other session is read from the corpus and
//! matched directly, with the tokenizer and span rules the index uses. The answer is the one
//! the finished index will give, and its cursors, bound to the corpus state it was read from,
//! go on once the build commits that same state.

use super::build::event_documents;
use super::engine::{CountSink, DocId, DocMeta, DocStore, Interner, SearchEngine, SearchProvider};
use super::phrase::Phrase;
use super::rank::merge_spans;
use super::tokenizer::{TermProbe, TokenizerMode};
use crate::corpus::{Corpus, SessionRecord, Source};
use crate::event::{Event, text_runs};
use crate::filters::EventFilter;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// How a search is answered while a build is under way.
pub(super) struct Pending {
    /// Sessions the last commit published, unchanged in the corpus since: the index answers.
    answered: HashSet<String>,
    /// Every other session of the corpus, read and matched directly.
    unindexed: Vec<String>,
}

/// The documents of unindexed sessions that match, with their merged span counts.
#[derive(Default)]
pub(super) struct Scanned {
    /// The listing record of every session with a match.
    pub(super) records: HashMap<Arc<str>, SessionRecord>,
    /// Each matching document (passing the event filters) and its merged span count.
    pub(super) matches: Vec<(DocMeta, u32)>,
    /// One shared copy of each event type the matches name.
    kinds: Interner,
}

/// What a scan matches in each unindexed session it reads ([`Scan::session`]).
#[derive(Clone, Copy)]
pub(super) struct Scan<'a> {
    /// The phrase's terms (an empty phrase matches nothing).
    pub(super) phrase: &'a [String],
    /// How texts are split into tokens, as the index splits them.
    pub(super) mode: TokenizerMode,
    /// The event filters a matching document must pass.
    pub(super) filters: &'a [EventFilter],
    /// Which matching documents the scan must find.
    pub(super) wanted: Wanted,
}

impl<P: SearchProvider> SearchEngine<P> {
    /// How to answer now, if a build is under way in steps; `None` when a search should bring
    /// the index up to date first.
    pub(super) fn pending(&self, corpus: &Corpus) -> Option<Pending> {
        if !self.build.under_way() {
            return None;
        }
        let current = self.build.current_session();
        let mut pending = Pending {
            answered: HashSet::new(),
            unindexed: Vec::new(),
        };
        for (id, source) in corpus.sources() {
            let published = self
                .sessions
                .get(id)
                .is_some_and(|indexed| indexed.epoch <= self.committed_epoch);
            if published && current != Some(id.as_str()) && !self.is_stale(corpus, id, &source) {
                pending.answered.insert(id.clone());
            } else {
                pending.unindexed.push(id.clone());
            }
        }
        Some(pending)
    }
}

impl Pending {
    /// Whether the index answers for `session`.
    pub(super) fn answers(&self, session: &str) -> bool {
        self.answered.contains(session)
    }

    /// The sink that passes on only the documents of sessions the index answers for.
    pub(super) fn answered_only<'s>(&'s self, docs: &'s DocStore, sink: &'s mut dyn CountSink) -> AnsweredOnly<'s> {
        AnsweredOnly {
            answered: &self.answered,
            docs,
            sink,
            last: None,
        }
    }

    /// Matches `phrase` in every unindexed session, finding in each the documents that may be
    /// its strongest match (what `searchSessions` ranks sessions by).
    pub(super) fn scan(
        &self,
        corpus: &Corpus,
        phrase: &[String],
        mode: TokenizerMode,
        filters: &[EventFilter],
    ) -> Scanned {
        let scan = Scan {
            phrase,
            mode,
            filters,
            wanted: Wanted::Strongest,
        };
        let mut scanned = Scanned::default();
        for id in &self.unindexed {
            if let Ok(source) = corpus.source(id) {
                scan.session(id, &source, &mut scanned);
            }
        }
        scanned
    }
}

/// Which of a session's matching documents a scan must find.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Wanted {
    /// Every one (`searchEvents` ranks them all).
    Every,
    /// Those that may be the session's strongest (`searchSessions` ranks sessions by it): a
    /// document with fewer spans than another that passes the filters is never that.
    Strongest,
}

impl Scan<'_> {
    /// Adds the documents of one session that contain the phrase and pass the filters to
    /// `scanned` (with [`Wanted::Strongest`], at least those that may be its strongest).
    pub(super) fn session(&self, id: &str, source: &Source<'_>, scanned: &mut Scanned) {
        if self.phrase.is_empty() {
            return;
        }
        let session: Arc<str> = Arc::from(id);
        let before = scanned.matches.len();
        let events = &source.log.events;
        let phrase = Phrase::new(self.phrase);
        // Made once: every run, event and document of the session is held to them. A text
        // holds the phrase only where it holds each of its terms: the longest is looked for
        // first.
        let mut terms = phrase.terms.clone();
        terms.sort_by_key(|term| std::cmp::Reverse(term.len()));
        let probes: Vec<TermProbe<'_>> = terms.into_iter().filter_map(TermProbe::new).collect();
        let printed: Vec<TermProbe<'_>> = probes.iter().cloned().map(TermProbe::for_printed_events).collect();
        let candidates = candidates(events, &printed, phrase.len(), self.wanted);
        let mut strongest = 0;
        for (bound, index) in candidates {
            if bound < strongest {
                break;
            }
            for (record, text, changed) in event_documents(source, index) {
                let Some(match_count) = merged_span_count(&text, &phrase, &probes, self.mode) else {
                    continue;
                };
                let meta = super::build::document_meta(&mut scanned.kinds, &session, &record, &text, changed);
                if super::engine::event_passes(&meta, self.filters) {
                    if self.wanted == Wanted::Strongest {
                        strongest = strongest.max(match_count);
                    }
                    scanned.matches.push((meta, match_count));
                }
            }
        }
        if scanned.matches.len() > before {
            scanned.records.insert(session, source.record());
        }
    }
}

/// The events of a session that may hold every term `printed` looks for, each with a bound
/// on the spans a document of it may hold, in the order to read them (see [`Scan::session`]):
/// for one word, each event whose bound is above zero; for a phrase, each whose run's covering
/// text and then its own may hold every term.
fn candidates(events: &[Event], printed: &[TermProbe<'_>], phrase_len: usize, wanted: Wanted) -> Vec<(u32, usize)> {
    match (wanted, printed) {
        // One word's tokens in a document are at most its places in the event's printed JSON
        // that may be tokens: the events are read most such places first, and once a document
        // with more spans than an event's bound passes the filters, none after it can be the
        // strongest. Every event's bound is needed, so a run's text is not first asked whether
        // it may hold the word at all: for a common word it nearly always may, and over the
        // 100k bench corpus in Node a first search took less without that look (`error`
        // 34-38 ms against 38-40, `timeout` 31-32 against 34-37, a word found nowhere 25-27
        // against 29-31; two processes of four searches each, alternating). At 1M, where most
        // text is packed, a word found nowhere took longer so (529-584 ms against 474-518),
        // common words less (`error` 615-678 against 655-695).
        (Wanted::Strongest, [word]) if phrase_len == 1 => {
            let mut bounded: Vec<(u32, usize)> = (0..events.len())
                .filter_map(|index| {
                    let bound = word.token_bound(&events[index].text()).unwrap_or(u32::MAX);
                    (bound > 0).then_some((bound, index))
                })
                .collect();
            // Stable: events of one bound stay in log order.
            bounded.sort_by_key(|&(bound, _)| std::cmp::Reverse(bound));
            bounded
        }
        _ => {
            let may_hold = |text: &str| printed.iter().all(|probe| probe.may_hold(text));
            text_runs(events)
                .filter(|(_, covering)| may_hold(covering))
                .flat_map(|(run, _)| run)
                .filter(|&index| may_hold(&events[index].text()))
                .map(|index| (u32::MAX, index))
                .collect()
        }
    }
}

/// How many merged spans `phrase` makes in `text` ([`merge_spans`], as the index counts
/// them); `None` without an occurrence. A text that cannot hold one of the phrase's terms
/// (`probes`, one for each ASCII term; its event's JSON may hold it only in a key or another
/// field) is not tokenized, and one term's tokens are counted by its probe where it can.
fn merged_span_count(text: &str, phrase: &Phrase<'_>, probes: &[TermProbe<'_>], mode: TokenizerMode) -> Option<u32> {
    // One term: each token that is the term is a span of its own.
    if let [probe] = probes
        && phrase.len() == 1
        && let Some(count) = probe.count_tokens(text)
    {
        return (count > 0).then_some(count);
    }
    if probes.iter().any(|probe| !probe.may_hold(text)) {
        return None;
    }
    let starts = phrase.occurrences(text, mode);
    Some(merge_spans(&starts, phrase.len() as u32)?.match_count)
}

/// A sink that drops the documents of sessions the index does not answer for (their current
/// documents are scanned instead; the index may hold older ones, or a build's uncommitted ones).
pub(super) struct AnsweredOnly<'s> {
    answered: &'s HashSet<String>,
    docs: &'s DocStore,
    sink: &'s mut dyn CountSink,
    /// The number of the last session looked up and whether it is answered: documents come
    /// in runs of one session, and their briefs tell a run's end without their metadata.
    last: Option<(u32, bool)>,
}

impl AnsweredOnly<'_> {
    fn admits(&mut self, id: DocId) -> bool {
        let Some(brief) = self.docs.brief(id) else {
            return false;
        };
        match self.last {
            Some((number, admitted)) if number == brief.session() => admitted,
            _ => {
                let admitted = self.answered.contains(&*self.docs[&id].session);
                self.last = Some((brief.session(), admitted));
                admitted
            }
        }
    }
}

impl CountSink for AnsweredOnly<'_> {
    fn wanted(&mut self, id: DocId, most: u32) -> bool {
        self.admits(id) && self.sink.wanted(id, most)
    }

    fn found(&mut self, id: DocId, match_count: u32) {
        if self.admits(id) {
            self.sink.found(id, match_count);
        }
    }

    fn floor(&self) -> u32 {
        self.sink.floor()
    }
}
