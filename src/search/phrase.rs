//! Where a phrase occurs among a document's tokens, in time linear in the two together.
//!
//! A query is one literal phrase of up to 16 KiB, so a pasted run of one word ("the the the
//! …") makes a phrase of thousands of positions, and a document may repeat that word as
//! often. Checking each position of the phrase's first word against the whole phrase would
//! cost their product: minutes for one such document. So a phrase is held as its distinct
//! terms, each of its positions naming one, and is matched over a document's terms with the
//! Knuth–Morris–Pratt automaton, which reads each token once whatever the phrase repeats.

use super::tokenizer::{TokenizerMode, Tokens, ascii_terms, is_ascii};
use std::collections::HashMap;

/// Phrases with more distinct terms than this find a token's term through a hash map.
const LINEAR_LOOKUP_TERMS: usize = 8;

/// Candidate starts checked one by one, times the phrase's other positions, may reach this
/// many times the document's last position before its terms are read in order instead.
const SEARCHES_PER_STEP: usize = 8;

/// A phrase as its distinct terms and, for each of its positions, which term it holds.
pub(crate) struct Phrase<'p> {
    /// The distinct terms, in the order they first appear.
    pub(crate) terms: Vec<&'p str>,
    /// For each position of the phrase, the index of its term in `terms`.
    pub(crate) slots: Vec<usize>,
    /// For each distinct term, how many positions of the phrase hold it: a document holding a
    /// term fewer times holds no occurrence.
    pub(crate) needed: Vec<u32>,
    /// For each prefix of `slots` (by its length minus one), the length of its longest proper
    /// prefix that is also its suffix: where matching resumes after a mismatch.
    border: Vec<usize>,
    /// `terms` by text, when there are too many to compare one by one.
    index: Option<HashMap<&'p str, usize>>,
}

impl<'p> Phrase<'p> {
    pub(crate) fn new(phrase: &'p [String]) -> Self {
        let mut terms: Vec<&str> = Vec::new();
        let mut needed = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        let slots: Vec<usize> = phrase
            .iter()
            .map(|term| {
                let slot = *index.entry(term.as_str()).or_insert_with(|| {
                    terms.push(term);
                    needed.push(0);
                    terms.len() - 1
                });
                needed[slot] += 1;
                slot
            })
            .collect();
        let border = borders(&slots);
        let index = (terms.len() > LINEAR_LOOKUP_TERMS).then_some(index);
        Phrase {
            terms,
            slots,
            needed,
            border,
            index,
        }
    }

    /// The phrase's length in tokens.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Which distinct term `token` is, if any.
    pub(crate) fn slot_of(&self, token: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(token).copied(),
            None => self.terms.iter().position(|term| *term == token),
        }
    }

    /// Which distinct term the ASCII token `raw` is once lowercased (all the folding
    /// `unicode61` does to ASCII), if any; `folded` is a buffer kept between tokens.
    fn ascii_slot(&self, raw: &[u8], folded: &mut String) -> Option<usize> {
        if self.terms.len() <= LINEAR_LOOKUP_TERMS {
            let same = |term: &&str| {
                term.len() == raw.len() && term.bytes().zip(raw).all(|(a, b)| a == b.to_ascii_lowercase())
            };
            return self.terms.iter().position(same);
        }
        folded.clear();
        folded.extend(raw.iter().map(|b| char::from(b.to_ascii_lowercase())));
        self.slot_of(folded)
    }

    /// The start positions of every occurrence of the phrase in `text`'s token stream,
    /// ascending. An ASCII text is split into its terms without the general tokenizer, which
    /// also tracks code points and folds every character.
    pub(crate) fn occurrences(&self, text: &str, mode: TokenizerMode) -> Vec<u32> {
        let mut starts = Vec::new();
        let mut matcher = self.matcher();
        let mut found = |position: usize, slot: Option<usize>| {
            if matcher.push(slot) {
                starts.push((position + 1 - self.len()) as u32);
            }
        };
        if mode == TokenizerMode::Unicode61 && is_ascii(text.as_bytes()) {
            let mut folded = String::new();
            for (position, term) in ascii_terms(text.as_bytes()).enumerate() {
                found(position, self.ascii_slot(term, &mut folded));
            }
        } else {
            let mut tokens = Tokens::new(text, mode);
            while let Some(token) = tokens.next_ref() {
                found(token.position, self.slot_of(token.text));
            }
        }
        starts
    }

    /// A matcher at the start of a document.
    pub(crate) fn matcher(&self) -> Matcher<'_, 'p> {
        Matcher {
            phrase: self,
            matched: 0,
        }
    }

    /// The starts of the phrase's occurrences in a document whose positions of each distinct
    /// term are `positions` (sorted, one list per term), appended to `starts` in order. A few
    /// candidates are each checked against the phrase by binary search; when that would cost
    /// more than reading the document's terms in order, they are read in order.
    pub(crate) fn starts_among<P: AsRef<[u32]>>(&self, positions: &[P], starts: &mut Vec<u32>) {
        starts.clear();
        let (first, rest) = self.slots.split_first().expect("a phrase has a term");
        let candidates = positions[*first].as_ref();
        let end = positions
            .iter()
            .filter_map(|p| p.as_ref().last())
            .max()
            .map_or(0, |last| *last as usize + 1);
        // A check by binary search costs several steps of the automaton.
        if candidates.len().saturating_mul(rest.len()) <= end.saturating_mul(SEARCHES_PER_STEP) {
            starts.extend(candidates.iter().copied().filter(|start| {
                rest.iter()
                    .enumerate()
                    .all(|(i, &slot)| positions[slot].as_ref().binary_search(&(start + i as u32 + 1)).is_ok())
            }));
            return;
        }
        let mut terms = vec![u32::MAX; end];
        for (slot, list) in positions.iter().enumerate() {
            for &at in list.as_ref() {
                terms[at as usize] = slot as u32;
            }
        }
        let mut matcher = self.matcher();
        for (at, slot) in terms.into_iter().enumerate() {
            if matcher.push((slot != u32::MAX).then_some(slot as usize)) {
                starts.push((at + 1 - self.len()) as u32);
            }
        }
    }
}

/// Matching a phrase token by token: how much of it the last tokens read complete.
pub(crate) struct Matcher<'a, 'p> {
    phrase: &'a Phrase<'p>,
    matched: usize,
}

impl Matcher<'_, '_> {
    /// Reads the next token, as its term of the phrase (`None`: not one of them); whether an
    /// occurrence of the phrase ends with it.
    pub(crate) fn push(&mut self, slot: Option<usize>) -> bool {
        let Some(slot) = slot else {
            self.matched = 0;
            return false;
        };
        let slots = &self.phrase.slots;
        while self.matched > 0 && slots[self.matched] != slot {
            self.matched = self.phrase.border[self.matched - 1];
        }
        if slots[self.matched] == slot {
            self.matched += 1;
        }
        if self.matched == slots.len() {
            self.matched = self.phrase.border[self.matched - 1];
            return true;
        }
        false
    }
}

/// The Knuth–Morris–Pratt failure function of `pattern`: for each prefix, by its length minus
/// one, the length of its longest proper prefix that is also its suffix.
fn borders(pattern: &[usize]) -> Vec<usize> {
    let mut border = vec![0; pattern.len()];
    let mut k = 0;
    for i in 1..pattern.len() {
        while k > 0 && pattern[i] != pattern[k] {
            k = border[k - 1];
        }
        if pattern[i] == pattern[k] {
            k += 1;
        }
        border[i] = k;
    }
    border
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_owned).collect()
    }

    /// Every start of `phrase` among `tokens`, by comparing at each position.
    fn naive(tokens: &[String], phrase: &[String]) -> Vec<u32> {
        (0..tokens.len())
            .filter(|&at| tokens[at..].starts_with(phrase))
            .map(|at| at as u32)
            .collect()
    }

    /// The starts `Phrase` finds among `tokens`, token by token and from positions.
    fn found(tokens: &[String], phrase: &[String]) -> (Vec<u32>, Vec<u32>) {
        let terms = Phrase::new(phrase);
        let mut matcher = terms.matcher();
        let by_token = tokens
            .iter()
            .enumerate()
            .filter(|(_, token)| matcher.push(terms.slot_of(token)))
            .map(|(at, _)| (at + 1 - phrase.len()) as u32)
            .collect();
        let mut positions = vec![Vec::new(); terms.terms.len()];
        for (at, token) in tokens.iter().enumerate() {
            if let Some(slot) = terms.slot_of(token) {
                positions[slot].push(at as u32);
            }
        }
        let mut from_positions = Vec::new();
        terms.starts_among(&positions, &mut from_positions);
        (by_token, from_positions)
    }

    #[test]
    fn a_phrase_is_its_distinct_terms_and_where_each_stands() {
        let phrase = words("a b a a");
        let terms = Phrase::new(&phrase);
        assert_eq!(
            (&terms.terms, &terms.slots, &terms.needed),
            (&vec!["a", "b"], &vec![0, 1, 0, 0], &vec![3, 1])
        );
        assert_eq!(terms.border, [0, 0, 1, 1]);
        assert_eq!((terms.slot_of("b"), terms.slot_of("c")), (Some(1), None));
        let many = words("t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t3");
        let many = Phrase::new(&many);
        assert!(many.index.is_some());
        assert_eq!((many.slot_of("t3"), many.slot_of("t10")), (Some(3), None));
    }

    #[test]
    fn occurrences_equal_a_comparison_at_every_position() {
        // Few words, so phrases and texts repeat and overlap.
        let vocabulary = ["a", "b", "c"];
        let mut next = crate::testing::xorshift(0x2545_F491_4F6C_DD1Du64);
        for _ in 0..2_000 {
            let tokens: Vec<String> = (0..next(40))
                .map(|_| vocabulary[next(2) + next(2)].to_owned())
                .collect();
            let phrase: Vec<String> = (0..1 + next(6)).map(|_| vocabulary[next(2)].to_owned()).collect();
            let expected = naive(&tokens, &phrase);
            assert_eq!(
                found(&tokens, &phrase),
                (expected.clone(), expected),
                "{phrase:?} in {tokens:?}"
            );
        }
    }

    #[test]
    fn a_long_repeating_phrase_over_a_long_repeating_text_is_read_once() {
        // 200,000 × "the" and a phrase of 5,000: checked start by start this is a billion
        // comparisons; read in order, 200,000 steps.
        let tokens = vec!["the".to_owned(); 200_000];
        let phrase = vec!["the".to_owned(); 5_000];
        let (by_token, from_positions) = found(&tokens, &phrase);
        let expected: Vec<u32> = (0..=195_000).collect();
        assert_eq!(by_token, expected);
        assert_eq!(from_positions, expected);
    }

    #[test]
    fn a_token_outside_the_phrase_starts_matching_again() {
        let phrase = words("a a");
        let terms = Phrase::new(&phrase);
        let mut matcher = terms.matcher();
        assert!(!matcher.push(Some(0)));
        assert!(!matcher.push(None));
        assert!(!matcher.push(Some(0)));
        assert!(matcher.push(Some(0)));
        assert!(matcher.push(Some(0)), "overlapping occurrences both end");
        assert!(!matcher.push(None));
        assert!(!matcher.push(Some(0)));
    }
}
