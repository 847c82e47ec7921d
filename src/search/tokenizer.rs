//! The full-text tokenizer: SQLite FTS5 `unicode61` token for token, plus an optional CJK mode.
//!
//! [`TokenizerMode::Unicode61`] yields exactly the tokens (folded text and positions) that
//! SQLite FTS5's built-in `unicode61` tokenizer yields with its default options
//! (`remove_diacritics 1`, `categories 'L* N* Co'`, no `tokenchars`/`separators`), which is
//! what DeepSeek Harness indexes and queries with. The algorithm is a line-by-line
//! port of `fts5UnicodeTokenize` and the character data is SQLite's own Unicode 6.1 tables
//! ([`unicode61`](self) submodule), so code points added to Unicode after 6.1 (🥰, 🫠, recent CJK
//! extensions) are token characters exactly as in SQLite. Two details of FTS5 outside the
//! tokenizer proper are reproduced as well: its UTF-8 reader turns U+FFFE and U+FFFF into
//! U+FFFD (a separator), and FTS5 stores and queries at most [`MAX_TERM_BYTES`] bytes of a
//! token.
//!
//! [`TokenizerMode::Cjk`] is the same token stream except that every
//! `unicode61` token containing Han, Hiragana, Katakana, Hangul or Thai letters is replaced by
//! smaller tokens, so that a substring of a text written without spaces can be found:
//!
//! * the token is cut into *segments*: maximal runs of those CJK/Thai letters, and maximal runs
//!   of other token characters (combining diacritics that `unicode61` deletes belong to the
//!   letter before them and never split a run);
//! * a segment of other characters becomes one token (folded as usual);
//! * a CJK/Thai run of `n ≥ 2` letters becomes its `n − 1` overlapping bigrams, in order; a
//!   run of one letter becomes that letter (a unigram);
//! * every emitted token takes the next position: positions stay consecutive integers from 0
//!   with no gaps and no two tokens at one position.
//!
//! So `我喜欢数据库 ok` gives `我喜`@0 `喜欢`@1 `欢数`@2 `数据`@3 `据库`@4 `ok`@5, `SQL数据库`
//! gives `sql`@0 `数据`@1 `据库`@2, and `数` alone gives `数`@0. Queries are tokenized by the
//! very same function, so the query `数据库` (`数据`@0 `据库`@1) is a phrase that occurs in
//! `我喜欢数据库` at position 3. Because each `unicode61` token expands to a non-empty
//! sequence that depends only on its folded text, every phrase match in `Unicode61` mode is
//! also a phrase match in `Cjk` mode; text without CJK/Thai letters tokenizes identically in
//! both modes. (A single-letter query matches only where that letter stands alone: a letter
//! inside a longer run is indexed only within bigrams.)
//!
//! Every token carries its folded text, its position, and its byte and code-point ranges in
//! the input (snippets count code points). Ranges of `unicode61` tokens are SQLite's: from the
//! first character to the end of the last character, trailing deleted diacritics included;
//! segments, bigrams and unigrams of `Cjk` mode follow the same convention over their letters.
//!
//! Hot path: an ASCII byte costs one table lookup; a token whose folded form equals its source
//! text (lower-case words, numbers, CJK) is borrowed, not copied; [`Tokens::next_ref`] never
//! allocates once its internal buffers have grown. Any `&str` is accepted without panicking.

use std::borrow::Cow;
use std::ops::Range;

mod unicode61;

#[cfg(test)]
mod tests;

/// FTS5 keeps at most this many bytes of a token, in the index and in queries
/// (`FTS5_MAX_TOKEN_SIZE`). [`Token::text`] is cut the same way (see there).
pub const MAX_TERM_BYTES: usize = 32768;

/// Which token stream to produce.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TokenizerMode {
    /// Exactly SQLite FTS5 `unicode61` with default options (DSH's recall).
    #[default]
    Unicode61,
    /// `unicode61`, with runs of Han, Kana, Hangul and Thai letters indexed as overlapping
    /// bigrams (module documentation).
    Cjk,
}

impl TokenizerMode {
    /// Every mode.
    pub const ALL: [TokenizerMode; 2] = [TokenizerMode::Unicode61, TokenizerMode::Cjk];

    /// The option spelling: `"unicode61"` or `"cjk"`.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenizerMode::Unicode61 => "unicode61",
            TokenizerMode::Cjk => "cjk",
        }
    }

    /// The mode with this option spelling.
    pub fn parse(name: &str) -> Option<TokenizerMode> {
        TokenizerMode::ALL.into_iter().find(|mode| mode.as_str() == name)
    }
}

/// One token with its own text (borrowed from the input when folding left it unchanged).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Token<'a> {
    /// The term as FTS5 indexes and queries it: the folded token, cut to [`MAX_TERM_BYTES`]
    /// bytes. When that cut falls inside a character, the whole characters are kept and
    /// followed by U+FFFD and one character U+0100 + *b* per remaining byte *b*; U+FFFD never
    /// occurs in an uncut term, so two terms are equal exactly when SQLite's are.
    pub text: Cow<'a, str>,
    /// 0-based index of the token in the token stream.
    pub position: usize,
    /// Byte range in the input.
    pub byte_range: Range<usize>,
    /// Code-point range in the input.
    pub char_range: Range<usize>,
}

impl Token<'_> {
    /// The same token, owning its text.
    pub fn into_owned(self) -> Token<'static> {
        Token {
            text: Cow::Owned(self.text.into_owned()),
            position: self.position,
            byte_range: self.byte_range,
            char_range: self.char_range,
        }
    }
}

/// One token whose text borrows from the input or from the [`Tokens`] buffer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TokenRef<'t> {
    /// As [`Token::text`].
    pub text: &'t str,
    /// As [`Token::position`].
    pub position: usize,
    /// As [`Token::byte_range`].
    pub byte_range: Range<usize>,
    /// As [`Token::char_range`].
    pub char_range: Range<usize>,
}

/// All tokens of `text`, in order.
pub fn tokenize(text: &str, mode: TokenizerMode) -> Vec<Token<'_>> {
    Tokens::new(text, mode).collect()
}

/// Where the current token's text lives.
#[derive(Clone, Copy, Debug)]
enum TextAt {
    /// `text[range]` of the input (folding changed nothing).
    Input,
    /// `Tokens::buf`.
    Buffer,
}

/// One character of a `unicode61` token being expanded in [`TokenizerMode::Cjk`].
#[derive(Clone, Copy, Debug)]
struct Unit {
    /// Byte and code-point offsets of the character.
    start: usize,
    start_cp: usize,
    /// End of the character and of the deleted diacritics that follow it.
    end: usize,
    end_cp: usize,
    /// The folded character.
    folded: char,
    /// A Han, Kana, Hangul or Thai letter.
    cjk: bool,
}

/// A streaming tokenizer over one text: an [`Iterator`] of [`Token`]s, or, without any
/// allocation per token, [`Tokens::next_ref`].
#[derive(Debug)]
pub struct Tokens<'a> {
    text: &'a str,
    mode: TokenizerMode,
    /// Byte and code-point offsets of the scan.
    offset: usize,
    offset_cp: usize,
    /// Position of the next token.
    position: usize,
    /// Folded text of the current token when it differs from the input.
    buf: String,
    /// The `unicode61` token being expanded ([`TokenizerMode::Cjk`]) and the next unit.
    units: Vec<Unit>,
    next_unit: usize,
    /// The current token.
    at: TextAt,
    range: Range<usize>,
    char_range: Range<usize>,
}

impl<'a> Tokens<'a> {
    /// A tokenizer positioned before the first token of `text`.
    pub fn new(text: &'a str, mode: TokenizerMode) -> Self {
        Tokens {
            text,
            mode,
            offset: 0,
            offset_cp: 0,
            position: 0,
            buf: String::new(),
            units: Vec::new(),
            next_unit: 0,
            at: TextAt::Input,
            range: 0..0,
            char_range: 0..0,
        }
    }

    /// The next token, its text borrowed from the input or from this tokenizer's buffer.
    pub fn next_ref(&mut self) -> Option<TokenRef<'_>> {
        if !self.advance() {
            return None;
        }
        let text = match self.at {
            TextAt::Input => self.text.get(self.range.clone()).unwrap_or_default(),
            TextAt::Buffer => self.buf.as_str(),
        };
        Some(TokenRef {
            text,
            position: self.position - 1,
            byte_range: self.range.clone(),
            char_range: self.char_range.clone(),
        })
    }

    /// Moves to the next token; false at the end of the text.
    fn advance(&mut self) -> bool {
        if self.next_unit < self.units.len() {
            self.expand_next();
            self.position += 1;
            return true;
        }
        let Some(has_cjk) = self.scan_word() else {
            return false;
        };
        if has_cjk {
            self.collect_units();
            self.expand_next();
        }
        self.position += 1;
        true
    }

    /// Scans the next `unicode61` token (a port of `fts5UnicodeTokenize`): sets the current
    /// token and returns whether it contains CJK/Thai letters (always false in `Unicode61`
    /// mode), or `None` at the end of the text.
    fn scan_word(&mut self) -> Option<bool> {
        let text = self.text;
        let bytes = text.as_bytes();
        let mut i = self.offset;
        let mut cp = self.offset_cp;
        // Skip separators.
        loop {
            let &b = bytes.get(i)?;
            if b < 0x80 {
                if ASCII_TOKEN_CHAR[usize::from(b)] {
                    break;
                }
                i += 1;
            } else {
                let (c, width) = decode(bytes, i);
                if is_token_char(c) {
                    break;
                }
                i += width;
            }
            cp += 1;
        }
        let (start, start_cp) = (i, cp);
        // Run through the token characters, folding them. While folding changes nothing the
        // token stays a slice of the input. Once a character changes, `buf` holds the token:
        // the unchanged characters since the last change (from `copied`) are copied as one
        // run at the next change and at the end, each changed one as it is met.
        let mut same = true;
        let mut copied = start;
        let mut has_cjk = false;
        self.buf.clear();
        while let Some(&b) = bytes.get(i) {
            if b < 0x80 {
                if !ASCII_TOKEN_CHAR[usize::from(b)] {
                    break;
                }
                if b.is_ascii_uppercase() {
                    self.buf.push_str(text.get(copied..i).unwrap_or_default());
                    self.buf.push(char::from(b + 32));
                    (same, copied) = (false, i + 1);
                }
                i += 1;
            } else {
                let (c, width) = decode(bytes, i);
                let token_char = is_token_char(c);
                if !token_char && !unicode61::is_diacritic(c) {
                    break;
                }
                let folded = fold(c);
                if folded != c {
                    self.buf.push_str(text.get(copied..i).unwrap_or_default());
                    if folded != 0 {
                        self.buf
                            .push(char::from_u32(folded).unwrap_or(char::REPLACEMENT_CHARACTER));
                    }
                    (same, copied) = (false, i + width);
                }
                if token_char && self.mode == TokenizerMode::Cjk && is_cjk(c) {
                    has_cjk = true;
                }
                i += width;
            }
            cp += 1;
        }
        if !same {
            self.buf.push_str(text.get(copied..i).unwrap_or_default());
        }
        self.offset = i;
        self.offset_cp = cp;
        self.range = start..i;
        self.char_range = start_cp..cp;
        self.at = if same { TextAt::Input } else { TextAt::Buffer };
        if !has_cjk {
            self.limit_term();
        }
        Some(has_cjk)
    }

    /// Cuts the current term to [`MAX_TERM_BYTES`] as FTS5 does (see [`Token::text`]). Every
    /// token asks, and almost none is that long: the check is inlined (even where the package
    /// is built for size), the cut is not.
    #[inline(always)]
    fn limit_term(&mut self) {
        let len = match self.at {
            TextAt::Input => self.range.len(),
            TextAt::Buffer => self.buf.len(),
        };
        if len > MAX_TERM_BYTES {
            self.cut_term();
        }
    }

    /// [`Self::limit_term`] for a term that is too long.
    #[cold]
    fn cut_term(&mut self) {
        if let TextAt::Input = self.at {
            self.buf.clear();
            self.buf.push_str(self.text.get(self.range.clone()).unwrap_or_default());
            self.at = TextAt::Buffer;
        }
        let mut keep = MAX_TERM_BYTES;
        while !self.buf.is_char_boundary(keep) {
            keep -= 1;
        }
        // At most three bytes of a character remain; copy them before truncating.
        let mut partial = [0u8; 3];
        let tail = self.buf.as_bytes().get(keep..MAX_TERM_BYTES).unwrap_or_default();
        let partial_len = tail.len().min(3);
        partial[..partial_len].copy_from_slice(&tail[..partial_len]);
        self.buf.truncate(keep);
        if partial_len > 0 {
            self.buf.push(char::REPLACEMENT_CHARACTER);
            for &byte in &partial[..partial_len] {
                self.buf
                    .push(char::from_u32(0x100 + u32::from(byte)).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
        }
    }

    /// Splits the current `unicode61` token into [`Unit`]s for [`Self::expand_next`].
    fn collect_units(&mut self) {
        self.units.clear();
        self.next_unit = 0;
        let word = self.text.get(self.range.clone()).unwrap_or_default();
        for (cp, (index, c)) in (self.char_range.start..).zip(word.char_indices()) {
            let start = self.range.start + index;
            let end = start + c.len_utf8();
            let code = u32::from(c);
            match self.units.last_mut() {
                // A deleted diacritic extends the character before it.
                Some(last) if !is_token_char(code) => {
                    last.end = end;
                    last.end_cp = cp + 1;
                }
                _ => self.units.push(Unit {
                    start,
                    start_cp: cp,
                    end,
                    end_cp: cp + 1,
                    folded: char::from_u32(fold(code)).unwrap_or(char::REPLACEMENT_CHARACTER),
                    cjk: is_cjk(code),
                }),
            }
        }
    }

    /// Sets the current token to the next segment, bigram or unigram of the expanded token.
    fn expand_next(&mut self) {
        let units = &self.units;
        let k = self.next_unit;
        let Some(first) = units.get(k) else {
            return;
        };
        let is_cjk_at = |i: usize| units.get(i).is_some_and(|u| u.cjk);
        let last;
        if !first.cjk {
            let mut end = k + 1;
            while end < units.len() && !units[end].cjk {
                end += 1;
            }
            last = end - 1;
            self.next_unit = end;
        } else if is_cjk_at(k + 1) {
            last = k + 1;
            self.next_unit = if is_cjk_at(k + 2) { k + 1 } else { k + 2 };
        } else {
            last = k;
            self.next_unit = k + 1;
        }
        self.buf.clear();
        for unit in &units[k..=last] {
            if unit.folded != '\0' {
                self.buf.push(unit.folded);
            }
        }
        let range = first.start..units[last].end;
        let char_range = first.start_cp..units[last].end_cp;
        self.at = if self.text.get(range.clone()) == Some(self.buf.as_str()) {
            TextAt::Input
        } else {
            TextAt::Buffer
        };
        self.range = range;
        self.char_range = char_range;
        self.limit_term();
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        if !self.advance() {
            return None;
        }
        let text = match self.at {
            TextAt::Input => Cow::Borrowed(self.text.get(self.range.clone()).unwrap_or_default()),
            TextAt::Buffer => Cow::Owned(self.buf.clone()),
        };
        Some(Token {
            text,
            position: self.position - 1,
            byte_range: self.range.clone(),
            char_range: self.char_range.clone(),
        })
    }
}

/// The `unicode61` terms of an ASCII text, unfolded: runs of ASCII letters and digits (SQLite's
/// token characters; folding only lowercases them), cut to [`MAX_TERM_BYTES`] as FTS5 cuts
/// them. Several times faster than [`Tokens`], which also tracks code points.
pub(crate) fn ascii_terms(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes
        .split(|b| !b.is_ascii_alphanumeric())
        .filter(|run| !run.is_empty())
        .map(|run| &run[..run.len().min(MAX_TERM_BYTES)])
}

/// Whether some token of `text` may be `term` (a folded token, as the tokenizer yields it):
/// `false` only where none can be, so a search can skip tokenizing such a text: only an ASCII
/// term is looked for, as a substring but for case, in a text holding no character that folds
/// into ASCII.
pub fn may_contain_token(text: &str, term: &str) -> bool {
    TermProbe::new(term).is_none_or(|probe| probe.may_hold(text))
}

/// How many tokens of `text` are `term` (a folded token), where that can be told without
/// splitting the text into tokens (from the term's places in it, case aside, with no letter or
/// digit next to them); `None` otherwise, and for a term that is not ASCII letters and digits.
pub fn counted_tokens(text: &str, term: &str) -> Option<u32> {
    TermProbe::new(term)?.count_tokens(text)
}

/// [`may_contain_token`] for an event's printed JSON (`JSON.stringify`'s text), where a `\u`
/// escape may spell any character: `false` only where no document of the event can hold
/// `term` as a token.
pub fn printed_event_may_contain_token(printed: &str, term: &str) -> bool {
    TermProbe::new(term).is_none_or(|probe| probe.for_printed_events().may_hold(printed))
}

/// A look for one term through many texts that says where it may be a token, `false` only
/// where it cannot. Only an ASCII term (letters and digits) is looked for: folding maps every
/// other character to one that is not ASCII, except upper-case ASCII letters and the
/// characters it folds into ASCII (Latin letters with a diacritic, the Kelvin sign) or deletes
/// (combining diacritics). In a text without those, a token that is an ASCII term is a run of
/// ASCII letters and digits that equals the term but for case, so the term is in the text as
/// such a substring, with no ASCII letter or digit next to it. Any other text may hold it. In
/// an event's printed JSON a letter right before the term may end an escape (`\n`), so there
/// one only rules the place out when a backslash is not before it: a key such as `isError`
/// then no longer makes its event one to read for `error`.
///
/// A scan through unindexed text runs this over every byte, so each look tests sixty-four
/// places at a time with wasm SIMD (four vectors, one branch), then sixteen, else eight
/// ([`crate::word`]), the rest one by one: for the term, whether its two rarest bytes are both
/// where they would be (compared with bit 5 set, which folds an upper-case letter onto its lower
/// case and is already set in a digit; other bytes it only turns into more candidates); then,
/// in a probe for printed events ([`TermProbe::for_printed_events`]), for a `\u` (the same pass
/// tells whether the text is all ASCII); then, in a text that is not all ASCII, for a lead byte
/// of what folding may turn into ASCII. Only a word with a candidate is looked at place by
/// place. Over the 100k bench corpus in Node, a search during the index build, which looks
/// through 105 MB of printed events, took 25-29 ms at sixty-four places at a time against
/// 48-52 at sixteen (the first in a process 32-35 ms against 54-59; four processes each): the
/// loop's branches, not the comparisons, had taken most of the time. (One pass testing all
/// three at once was slower in wasm: too many words live at a time; with wasm SIMD vectors it
/// was no faster over the 100k bench corpus in Node. One loop shared by the three, given each
/// word test as a closure, cost 9% more instructions natively, so each keeps its own.)
#[derive(Clone, Debug)]
pub(crate) struct TermProbe<'t> {
    term: &'t [u8],
    /// The places in `term` of its two rarest bytes (the same place twice for one byte).
    rare: [usize; 2],
    /// Two bytes whose pair also makes a text one that may hold the term (a printed event's
    /// `\u`), if any.
    pair: Option<[u8; 2]>,
}

impl<'t> TermProbe<'t> {
    /// A probe for `term`; `None` when any text may hold it (not an ASCII term).
    pub(crate) fn new(term: &'t str) -> Option<TermProbe<'t>> {
        let term = term.as_bytes();
        if term.is_empty() || !term.iter().all(u8::is_ascii_alphanumeric) {
            return None;
        }
        let rarity = |at: usize| (RARITY[term[at] as usize], std::cmp::Reverse(at));
        let rarest = (0..term.len()).max_by_key(|&at| rarity(at))?;
        let next = (0..term.len()).filter(|&at| at != rarest).max_by_key(|&at| rarity(at));
        Some(TermProbe {
            term,
            rare: [rarest, next.unwrap_or(rarest)],
            pair: None,
        })
    }

    /// The probe made for an event's printed text, where it tells whether the event may have
    /// a document holding the token, so that its text is worth extracting. The printed event is
    /// `JSON.stringify`'s text, which never escapes a letter or digit: a run of them in a
    /// document's text (which joins strings of the event, and words that are its values) is a
    /// run of the printed text too. Only a `\u` escape, which a log written by other hands may
    /// use for anything, could hide one, so the probe also says "may" of any.
    pub(crate) fn for_printed_events(self) -> TermProbe<'t> {
        TermProbe {
            pair: Some(*b"\\u"),
            ..self
        }
    }

    /// Whether `text` may hold the term as a token (or holds the pair).
    pub(crate) fn may_hold(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        if self.holds_term(bytes) {
            return true;
        }
        let ascii = match self.pair {
            Some(pair) => match look_for_pair(bytes, pair) {
                PairLook::Found => return true,
                PairLook::Absent { ascii } => ascii,
            },
            None => is_ascii(bytes),
        };
        !ascii && may_fold_into_ascii(bytes)
    }

    /// How many tokens of `text` are the term, where that can be told from the places the term
    /// is in it but for case: there, a token is the term where no letter or digit is next to
    /// it. `None` where the tokenizer must tell: in a text that may fold a character into
    /// ASCII, or with a character that is not ASCII next to the term (it may be a letter of
    /// the same token). A search for one common word while the index builds counts so in every
    /// document holding the word, instead of splitting all its text into tokens.
    pub(crate) fn count_tokens(&self, text: &str) -> Option<u32> {
        let bytes = text.as_bytes();
        if self.term.len() >= MAX_TERM_BYTES || (!is_ascii(bytes) && may_fold_into_ascii(bytes)) {
            return None;
        }
        let (mut count, mut unsure) = (0, false);
        let side = |at: Option<usize>| match at.map(|at| bytes.get(at)) {
            Some(Some(b)) if !b.is_ascii() => None,
            Some(Some(b)) => Some(b.is_ascii_alphanumeric()),
            // The start or the end of the text.
            _ => Some(false),
        };
        self.find_term(bytes, |place| {
            match (side(place.checked_sub(1)), side(Some(place + self.term.len()))) {
                (Some(false), Some(false)) => count += 1,
                (Some(true), _) | (_, Some(true)) => {}
                _ => unsure = true,
            }
            unsure
        });
        (!unsure).then_some(count)
    }

    /// At most how many tokens of the term the documents of an event printed as `printed`
    /// (a probe for printed events) hold each: the places [`TermProbe::may_hold`] looks for,
    /// counted. `None` where the JSON has a `\\u` escape or a character that may fold into
    /// ASCII: they may spell the term anywhere.
    pub(crate) fn token_bound(&self, printed: &str) -> Option<u32> {
        let bytes = printed.as_bytes();
        match look_for_pair(bytes, *b"\\u") {
            PairLook::Found => return None,
            PairLook::Absent { ascii } if !ascii && may_fold_into_ascii(bytes) => return None,
            PairLook::Absent { .. } => {}
        }
        let mut places = 0;
        self.find_term(bytes, |place| {
            places += u32::from(self.may_be_token_at(bytes, place));
            false
        });
        Some(places)
    }

    /// Whether `bytes` holds the term but for case where it may be a token: with no ASCII
    /// letter or digit after it, nor before it unless a backslash is before that (an escape).
    fn holds_term(&self, bytes: &[u8]) -> bool {
        self.find_term(bytes, |place| self.may_be_token_at(bytes, place))
    }

    /// Whether the term found at `place` in `bytes` may be a token there (see `holds_term`).
    #[inline(always)]
    fn may_be_token_at(&self, bytes: &[u8], place: usize) -> bool {
        let joined_after = bytes
            .get(place + self.term.len())
            .is_some_and(u8::is_ascii_alphanumeric);
        let joined_before = place
            .checked_sub(1)
            .is_some_and(|before| bytes[before].is_ascii_alphanumeric() && (before == 0 || bytes[before - 1] != b'\\'));
        !joined_after && !joined_before
    }

    /// Calls `found` with each place where `bytes` holds the term but for case, in order,
    /// until it returns true; whether it did.
    #[inline(always)]
    fn find_term(&self, bytes: &[u8], mut found: impl FnMut(usize) -> bool) -> bool {
        use crate::word::{has_zero, load, splat};
        let [first, second] = self.rare;
        let want = |at: usize| splat(self.term[at] | 0x20);
        let (want_first, want_second) = (want(first), want(second));
        let mut matches_at = |place: usize| {
            bytes
                .get(place..place + self.term.len())
                .is_some_and(|here| here.eq_ignore_ascii_case(self.term))
                && found(place)
        };
        let mut at = 0;
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            use std::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128_and, v128_any_true, v128_or};
            let want = |at: usize| u8x16_splat(self.term[at] | 0x20);
            let (want_first, want_second, case) = (want(first), want(second), u8x16_splat(0x20));
            // Where both rare bytes are where they would be.
            let same = |at_first, at_second| {
                v128_and(
                    u8x16_eq(v128_or(at_first, case), want_first),
                    u8x16_eq(v128_or(at_second, case), want_second),
                )
            };
            while let (Some(at_first), Some(at_second)) = (
                crate::word::load_four_vectors(bytes, at + first),
                crate::word::load_four_vectors(bytes, at + second),
            ) {
                let hits: [_; 4] = std::array::from_fn(|k| same(at_first[k], at_second[k]));
                if v128_any_true(hits.into_iter().fold(u8x16_splat(0), |any, hit| v128_or(any, hit))) {
                    // Only the places with both bytes are looked at.
                    let marks = (0..4).fold(0, |marks, k| marks | u64::from(u8x16_bitmask(hits[k])) << (16 * k));
                    if marked_places(at, marks).any(&mut matches_at) {
                        return true;
                    }
                }
                at += 64;
            }
            while let (Some(at_first), Some(at_second)) = (
                crate::word::load_vector(bytes, at + first),
                crate::word::load_vector(bytes, at + second),
            ) {
                let marks = u64::from(u8x16_bitmask(same(at_first, at_second)));
                if marks != 0 && marked_places(at, marks).any(&mut matches_at) {
                    return true;
                }
                at += 16;
            }
        }
        while let (Some(at_first), Some(at_second)) = (load(bytes, at + first), load(bytes, at + second)) {
            let differ = ((at_first | splat(0x20)) ^ want_first) | ((at_second | splat(0x20)) ^ want_second);
            if has_zero(differ) && (at..at + 8).any(&mut matches_at) {
                return true;
            }
            at += 8;
        }
        (at..bytes.len()).any(matches_at)
    }
}

/// The places `at + i` for each bit `i` set in `marks`, in order.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn marked_places(at: usize, mut marks: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let place = at + marks.trailing_zeros() as usize;
        (marks != 0).then(|| {
            marks &= marks - 1;
            place
        })
    })
}

/// What [`look_for_pair`] found.
enum PairLook {
    /// The pair.
    Found,
    /// Not the pair; and whether every byte is ASCII.
    Absent { ascii: bool },
}

/// Whether `bytes` holds `pair`'s two bytes one after the other, sixty-four places at a time
/// with wasm SIMD, then sixteen, then eight (each compared exactly, so a vector or word with a
/// hit holds the pair); and if not, whether they are all ASCII. With wasm SIMD one pass tells
/// both, the bytes it loads gathered for their high bits meanwhile: a probe for printed events
/// asks both of every text it passes (in a search during the 100k bench corpus's index build,
/// in Node, a separate ASCII pass cost about 1.5 ms of 50).
fn look_for_pair(bytes: &[u8], pair: [u8; 2]) -> PairLook {
    use crate::word::{has_zero, load, splat};
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    let (mut at, ascii) = {
        use std::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128_and, v128_any_true, v128_or};
        let (first, second) = (u8x16_splat(pair[0]), u8x16_splat(pair[1]));
        let (mut at, mut high) = (0, u8x16_splat(0));
        while let (Some(here), Some(next)) = (
            crate::word::load_four_vectors(bytes, at),
            crate::word::load_four_vectors(bytes, at + 1),
        ) {
            let hits = (0..4).fold(u8x16_splat(0), |hits, k| {
                v128_or(hits, v128_and(u8x16_eq(here[k], first), u8x16_eq(next[k], second)))
            });
            if v128_any_true(hits) {
                return PairLook::Found;
            }
            high = (0..4).fold(high, |high, k| v128_or(high, here[k]));
            at += 64;
        }
        while let (Some(here), Some(next)) = (
            crate::word::load_vector(bytes, at),
            crate::word::load_vector(bytes, at + 1),
        ) {
            if v128_any_true(v128_and(u8x16_eq(here, first), u8x16_eq(next, second))) {
                return PairLook::Found;
            }
            high = v128_or(high, here);
            at += 16;
        }
        (at, u8x16_bitmask(high) == 0)
    };
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    let (mut at, ascii) = (0, true);
    // The bytes from here on are looked at below: their ASCII test too.
    let unchecked = at;
    while let (Some(here), Some(next)) = (load(bytes, at), load(bytes, at + 1)) {
        if has_zero((here ^ splat(pair[0])) | (next ^ splat(pair[1]))) {
            return PairLook::Found;
        }
        at += 8;
    }
    if bytes[at..].windows(2).any(|here| here == pair) {
        return PairLook::Found;
    }
    PairLook::Absent {
        ascii: ascii && bytes[unchecked..].is_ascii(),
    }
}

/// Whether `bytes` may hold a character that folding maps into ASCII or deletes: a lead byte
/// in U+00C0..=U+033F (Latin-1 letters, Latin Extended, combining diacritics; 0xC3..=0xCC),
/// U+1E00..=U+1EFF (Latin Extended Additional; 0xE1, then 0xB8..=0xBB) or U+2100..=U+213F
/// (the Kelvin and Ångström signs; 0xE2, then 0x84). All of those lead bytes lie in
/// 0xC3..=0xE2, which is looked for a word at a time: most text (ASCII, or CJK, whose lead
/// bytes lie above) holds none.
fn may_fold_into_ascii(bytes: &[u8]) -> bool {
    use crate::word::{has_in_range, load};
    const LOW: u8 = 0xC3;
    const SPAN: u8 = 0xE2 - LOW + 1;
    let folds_at = |place: usize| {
        let after = bytes.get(place + 1);
        match bytes[place] {
            0xC3..=0xCC => true,
            0xE1 => matches!(after, Some(0xB8..=0xBB)),
            0xE2 => after == Some(&0x84),
            _ => false,
        }
    };
    let mut at = 0;
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use std::arch::wasm32::{u8x16_lt, u8x16_splat, u8x16_sub, v128_any_true, v128_or};
        let in_range = |vector| u8x16_lt(u8x16_sub(vector, u8x16_splat(LOW)), u8x16_splat(SPAN));
        while let Some(vectors) = crate::word::load_four_vectors(bytes, at) {
            let hits = (0..4).fold(u8x16_splat(0), |hits, k| v128_or(hits, in_range(vectors[k])));
            if v128_any_true(hits) && (at..at + 64).any(folds_at) {
                return true;
            }
            at += 64;
        }
        while let Some(vector) = crate::word::load_vector(bytes, at) {
            let in_range = u8x16_lt(u8x16_sub(vector, u8x16_splat(LOW)), u8x16_splat(SPAN));
            if v128_any_true(in_range) && (at..at + 16).any(folds_at) {
                return true;
            }
            at += 16;
        }
    }
    while let Some(word) = load(bytes, at) {
        if has_in_range(word, LOW, SPAN) && (at..at + 8).any(folds_at) {
            return true;
        }
        at += 8;
    }
    (at..bytes.len()).any(folds_at)
}

/// Whether `bytes` are all ASCII: sixteen at a time with wasm SIMD (std's test takes a word).
pub(crate) fn is_ascii(bytes: &[u8]) -> bool {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use std::arch::wasm32::u8x16_bitmask;
        let mut at = 0;
        while let Some(vector) = crate::word::load_vector(bytes, at) {
            if u8x16_bitmask(vector) != 0 {
                return false;
            }
            at += 16;
        }
        bytes[at..].is_ascii()
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    bytes.is_ascii()
}

/// How rare a byte is in text: English letters from most to least common (either case), then
/// digits and everything else, rarest.
static RARITY: [u8; 256] = {
    const COMMON: &[u8] = b"etaoinshrdlcumwfgypbvkjxqz";
    let mut table = [COMMON.len() as u8; 256];
    let mut at = 0;
    while at < COMMON.len() {
        table[COMMON[at] as usize] = at as u8;
        table[COMMON[at].to_ascii_uppercase() as usize] = at as u8;
        at += 1;
    }
    table
};

/// SQLite's `aTokenChar[]` for the default categories: ASCII letters and digits.
static ASCII_TOKEN_CHAR: [bool; 128] = {
    let mut table = [false; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    table
};

/// Decodes the character starting at byte `i` of valid UTF-8 (`bytes[i] >= 0x80`).
#[inline]
fn decode(bytes: &[u8], i: usize) -> (u32, usize) {
    let byte = |k: usize| u32::from(bytes.get(i + k).copied().unwrap_or(0x80) & 0x3F);
    let b0 = u32::from(bytes.get(i).copied().unwrap_or(0));
    if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) | byte(1), 2)
    } else if b0 < 0xF0 {
        (((b0 & 0x0F) << 12) | (byte(1) << 6) | byte(2), 3)
    } else {
        (((b0 & 0x07) << 18) | (byte(1) << 12) | (byte(2) << 6) | byte(3), 4)
    }
}

/// Whether a (non-ASCII) code point is a `unicode61` token character, after SQLite's UTF-8
/// reader has turned U+FFFE/U+FFFF into U+FFFD (a separator).
#[inline]
fn is_token_char(c: u32) -> bool {
    match c {
        // Whole blocks of token characters in Unicode 6.1 (letters, or unassigned then).
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7FF => true,
        0xFFFE | 0xFFFF => false,
        _ => unicode61::is_token_category(c),
    }
}

/// `sqlite3Fts5UnicodeFold(c, 1)`, skipping the table search where it cannot change `c`.
#[inline]
fn fold(c: u32) -> u32 {
    match c {
        0x2D00..=0xA63F | 0xA800..=0xFF20 | 0x10000..=0x103FF | 0x10500.. => c,
        _ => unicode61::fold(c),
    }
}

/// Han, Hiragana, Katakana, Hangul and Thai letters: what [`TokenizerMode::Cjk`] splits into
/// bigrams. Only consulted for token characters.
#[inline]
fn is_cjk(c: u32) -> bool {
    matches!(c,
        0x0E01..=0x0E4F // Thai letters (not Thai digits)
        | 0x1100..=0x11FF // Hangul Jamo
        | 0x3005..=0x3007 // 々 〆 〇
        | 0x3021..=0x3029 // Hangzhou numerals
        | 0x3031..=0x3035 // kana repeat marks
        | 0x3038..=0x303C // 〸 〹 〺 〻 〼
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x3130..=0x318F // Hangul Compatibility Jamo
        | 0x31F0..=0x31FF // Katakana Phonetic Extensions
        | 0x3400..=0x4DBF // CJK Extension A
        | 0x4E00..=0x9FFF // CJK Unified Ideographs
        | 0xA960..=0xA97F // Hangul Jamo Extended-A
        | 0xAC00..=0xD7FF // Hangul Syllables, Jamo Extended-B
        | 0xF900..=0xFAFF // CJK Compatibility Ideographs
        | 0xFF66..=0xFFDC // halfwidth Katakana and Hangul
        | 0x1AFF0..=0x1B16F // Kana Extended-B, Kana Supplement, Extended-A, Small Kana
        | 0x20000..=0x3FFFF // CJK Extensions B–J, Compatibility Supplement
    )
}
