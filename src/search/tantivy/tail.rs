//! The documents of small commits (a live session growing an event at a time), kept in a small
//! in-memory positional index instead of a tantivy segment per commit, which would leave every
//! query visiting thousands of tiny segments. Once they add up to [`TAIL_BYTES`] of text they
//! go into the segment being written, where the batches of large builds go directly.

use crate::search::engine::DocId;
use crate::search::phrase::Phrase;
use crate::search::tokenizer::{TokenizerMode, Tokens};
use std::collections::HashMap;

/// Text a tail holds before its documents are written into a segment.
pub(super) const TAIL_BYTES: usize = 1 << 20;

/// A batch this large (a step of an index build) skips the tail: it is a build's, not a
/// growing session's, and copying it would only delay its indexing.
pub(super) const DIRECT_BYTES: usize = 64 << 10;

pub(super) struct Tail {
    /// Text held before the documents go into a segment.
    capacity: usize,
    /// Every document, in the order given (ids ascending); those from `searchable` on are not
    /// committed yet.
    texts: Vec<(DocId, String)>,
    bytes: usize,
    searchable: usize,
    /// Term → documents holding it (ascending) with the term's positions.
    postings: HashMap<String, Vec<(DocId, Vec<u32>)>>,
}

impl Tail {
    /// A tail holding up to `capacity` bytes of text (0: every document goes into a segment).
    pub(super) fn new(capacity: usize) -> Self {
        Tail {
            capacity,
            texts: Vec::new(),
            bytes: 0,
            searchable: 0,
            postings: HashMap::new(),
        }
    }

    /// Adds a document (searchable after the next `commit`).
    pub(super) fn push(&mut self, id: DocId, text: &str) {
        self.bytes += text.len();
        self.texts.push((id, text.to_owned()));
    }

    /// Whether the tail holds a segment's worth of text.
    pub(super) fn is_full(&self) -> bool {
        self.bytes >= self.capacity
    }

    /// Takes every document out, leaving the tail empty.
    pub(super) fn drain(&mut self) -> Vec<(DocId, String)> {
        let texts = std::mem::take(&mut self.texts);
        *self = Tail::new(self.capacity);
        texts
    }

    /// Makes the documents added since the last commit searchable.
    pub(super) fn commit(&mut self, mode: TokenizerMode) {
        for (id, text) in &self.texts[self.searchable..] {
            let mut mine: HashMap<String, Vec<u32>> = HashMap::new();
            let mut tokens = Tokens::new(text, mode);
            while let Some(token) = tokens.next_ref() {
                let position = token.position as u32;
                match mine.get_mut(token.text) {
                    Some(positions) => positions.push(position),
                    None => {
                        mine.insert(token.text.to_owned(), vec![position]);
                    }
                }
            }
            for (term, positions) in mine {
                self.postings.entry(term).or_default().push((*id, positions));
            }
        }
        self.searchable = self.texts.len();
    }

    /// Committed documents holding `phrase` contiguously that `keep` admits, with the start
    /// of every occurrence. A document is looked at only when it holds each distinct term as
    /// often as the phrase does.
    pub(super) fn phrase_matches(
        &self,
        phrase: &Phrase<'_>,
        keep: impl Fn(DocId) -> bool,
        out: &mut Vec<(DocId, Vec<u32>)>,
    ) {
        let Some(lists) = phrase
            .terms
            .iter()
            .map(|t| self.postings.get(*t))
            .collect::<Option<Vec<_>>>()
        else {
            return;
        };
        let mut starts = Vec::new();
        for (id, first) in lists[0] {
            if !keep(*id) {
                continue;
            }
            // The first term's positions are at hand; the others are found by id.
            let others = lists[1..].iter().map(|list| {
                let at = list.binary_search_by_key(id, |(d, _)| *d).ok()?;
                Some(&list[at].1)
            });
            let positions: Option<Vec<&Vec<u32>>> = std::iter::once(Some(first))
                .chain(others)
                .zip(&phrase.needed)
                .map(|(ps, &needed)| ps.filter(|ps| ps.len() >= needed as usize))
                .collect();
            let Some(positions) = positions else { continue };
            phrase.starts_among(&positions, &mut starts);
            if !starts.is_empty() {
                out.push((*id, starts.clone()));
            }
        }
    }
}
