//! Relevance and snippets: merged match spans, DSH's total orders for events and
//! sessions, and the bounded whitespace-collapsed excerpt around the first span.

use crate::documents::is_js_whitespace;
use std::cmp::Ordering;

/// How one document matched the query phrase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchStats {
    /// Number of merged (overlap-joined) occurrences of the phrase.
    pub match_count: u32,
    /// Token position where the first span starts.
    pub first_position: u32,
}

/// Merges phrase occurrences (start positions, ascending) of a phrase `len` tokens long:
/// overlapping occurrences form one span, adjacent ones stay separate.
pub fn merge_spans(starts: &[u32], len: u32) -> Option<MatchStats> {
    let first = *starts.first()?;
    let mut count = 1;
    let mut end = first + len.max(1) - 1;
    for &start in &starts[1..] {
        if start > end {
            count += 1;
        }
        end = end.max(start + len.max(1) - 1);
    }
    Some(MatchStats {
        match_count: count,
        first_position: first,
    })
}

/// The ranking key of one matching document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankKey<'a> {
    /// Merged span count (higher first).
    pub match_count: u32,
    /// Code-point length of the sanitised text (shorter first).
    pub length: u64,
    /// Event time (newer first).
    pub time: i64,
    /// Session id (code-point order, ascending) — used between sessions only.
    pub session_id: &'a str,
    /// Event seq (higher first).
    pub seq: u64,
}

/// `searchEvents` order, also used to pick each session's best match.
pub fn compare_events(a: &RankKey<'_>, b: &RankKey<'_>) -> Ordering {
    b.match_count
        .cmp(&a.match_count)
        .then(a.length.cmp(&b.length))
        .then(b.time.cmp(&a.time))
        .then(b.seq.cmp(&a.seq))
}

/// `searchSessions` order over each session's best match.
pub fn compare_sessions(a: &RankKey<'_>, b: &RankKey<'_>) -> Ordering {
    b.match_count
        .cmp(&a.match_count)
        .then(a.length.cmp(&b.length))
        .then(b.time.cmp(&a.time))
        // Rust compares `str` bytewise, which is code-point order.
        .then(a.session_id.cmp(b.session_id))
        .then(b.seq.cmp(&a.seq))
}

/// DSH's snippet: `text` is the sanitised document text and `match_start` the
/// code-point index (in `text`) where the first span starts, if any.
pub fn snippet(text: &str, match_start: Option<usize>, max: usize) -> String {
    plain_cut(text, match_start, max).text
}

/// A snippet, and whether the text went on past what decides it.
struct Cut {
    text: String,
    highlights: Vec<(usize, usize)>,
    /// The text holds the `clean_reach`th clean character past the match and one more
    /// character ([`snippet_reach`]): every longer text that starts with it cuts the same.
    reached: bool,
}

/// [`snippet`]'s cut, a byte at a time while the text is ASCII (hit texts nearly all are, and
/// cutting them a character at a time was a tenth of a search's instructions).
fn plain_cut(text: &str, match_start: Option<usize>, max: usize) -> Cut {
    ascii_cut(text, match_start, max).unwrap_or_else(|| general_cut(text, match_start, &[], max))
}

/// [`plain_cut`] of a text that is ASCII as far as the cut reads it, where a character is a
/// byte; `None` for any other text.
fn ascii_cut(text: &str, match_start: Option<usize>, max: usize) -> Option<Cut> {
    let bytes = text.as_bytes();
    // A match at the end or past it is none, and then the whole text is read, as
    // `general_cut` reads it.
    let head = match_start.map_or(0, |at| at.min(bytes.len()));
    let mut clean = Vec::with_capacity(bytes.len().min(4 * max + 64));
    clean_ascii(&bytes[..head], &mut clean, usize::MAX);
    let m = match_start.filter(|&at| at < bytes.len()).map(|_| clean.len());
    let bound = match (match_start, m) {
        (Some(_), None) => usize::MAX,
        _ => m.unwrap_or(0) + clean_reach(max),
    };
    let read = head + clean_ascii(&bytes[head..], &mut clean, bound);
    if !bytes[..read].is_ascii() {
        return None;
    }
    if clean.last() == Some(&b' ') {
        clean.pop();
    }
    let (start, end, prefix, suffix) = window(clean.len(), m, max);
    Some(Cut {
        text: [prefix, std::str::from_utf8(&clean[start..end]).ok()?, suffix].concat(),
        highlights: Vec::new(),
        reached: read < bytes.len(),
    })
}

/// Appends the clean form of ASCII `bytes` to `clean` (a whitespace run is one space, none
/// leads) until `clean` holds `bound` bytes and a byte is left; returns how many were read.
fn clean_ascii(bytes: &[u8], clean: &mut Vec<u8>, bound: usize) -> usize {
    for (read, &byte) in bytes.iter().enumerate() {
        if clean.len() >= bound {
            return read;
        }
        if !is_js_whitespace(char::from(byte)) {
            clean.push(byte);
        } else if clean.last().is_some_and(|&last| last != b' ') {
            clean.push(b' ');
        }
    }
    bytes.len()
}

/// [`snippet`] with the match given as a byte offset in `text`: the characters before it are
/// not all read. The window never reaches more than `max` clean characters behind the match, so
/// the text may start at any non-whitespace character with `max + 2` non-whitespace characters
/// between it and the match (one more for a match in trailing whitespace): cleaning a text that
/// starts there gives the tail of the whole clean text (a whitespace run before it still
/// collapses to one space of the head), and the cut, its ellipses included, is the same
/// relative to the match. Also says whether `text` held what decides the snippet, as
/// [`snippet_reach`] would (for a match at a token's start).
pub fn snippet_at_byte(text: &str, match_byte: Option<usize>, max: usize) -> (String, bool) {
    // A match at the very end is no match, as in `snippet`.
    let (from, behind) = match match_byte.filter(|&at| at < text.len()) {
        Some(at) => {
            let (from, behind) = window_start(text, at, max);
            (from, Some(behind))
        }
        None => (0, None),
    };
    let cut = plain_cut(&text[from..], behind, max);
    (cut.text, cut.reached)
}

/// Where [`snippet_at_byte`] starts reading for a match at byte `at`: the byte of the
/// character with `max + 1` non-whitespace characters after it before `at` (or the text's
/// start), and how many characters lie between there and `at`.
fn window_start(text: &str, at: usize, max: usize) -> (usize, usize) {
    let head = &text.as_bytes()[..at];
    let mut solid = 0;
    for (index, &byte) in head.iter().enumerate().rev() {
        if !byte.is_ascii() {
            return window_start_by_char(text, at, max);
        }
        if !is_js_whitespace(char::from(byte)) {
            solid += 1;
            if solid > max + 1 {
                return (index, at - index);
            }
        }
    }
    (0, at)
}

/// [`window_start`] over any text, a character at a time.
fn window_start_by_char(text: &str, at: usize, max: usize) -> (usize, usize) {
    let (mut from, mut behind, mut solid) = (at, 0, 0);
    for (index, c) in text[..at].char_indices().rev() {
        from = index;
        behind += 1;
        if !is_js_whitespace(c) {
            solid += 1;
            if solid > max + 1 {
                break;
            }
        }
    }
    (from, behind)
}

/// How many clean characters past the match a window of `max` characters depends on: once that
/// many follow the match, the clean length exceeds every bound the window compares it with,
/// even if a final collapsed space is dropped. The window's scan and [`snippet_reach`] both
/// stop here, so they cannot disagree.
fn clean_reach(max: usize) -> usize {
    max + 2
}

/// How far into `text` the window of [`snippet_at_byte`] (with a match at `match_byte`, the
/// start of a token) reads: the byte where the `max + 2`th clean character past the match
/// ends, if `text` holds it and one more character, which tells the window it has them. The
/// window of every longer text that starts with `text` is then the same, and so is the
/// snippet.
pub fn snippet_reach(text: &str, match_byte: usize, max: usize) -> Option<usize> {
    let (mut clean, mut after_space) = (0, false);
    for (at, c) in text[match_byte..].char_indices() {
        if clean >= clean_reach(max) {
            return Some(match_byte + at);
        }
        // A run of whitespace is one clean space.
        let space = is_js_whitespace(c);
        if !(space && after_space) {
            clean += 1;
        }
        after_space = space;
    }
    None
}

/// [`snippet`], plus where each `(start, end)` code-point range of `text` (a merged match span)
/// lands inside the snippet, as code-point ranges clipped to what the snippet shows.
pub fn snippet_with_highlights(
    text: &str,
    match_start: Option<usize>,
    ranges: &[(usize, usize)],
    max: usize,
) -> (String, Vec<(usize, usize)>) {
    let cut = general_cut(text, match_start, ranges, max);
    (cut.text, cut.highlights)
}

/// The cut of [`snippet_with_highlights`], a character at a time.
fn general_cut(text: &str, match_start: Option<usize>, ranges: &[(usize, usize)], max: usize) -> Cut {
    let mut clean: Vec<char> = Vec::with_capacity(text.len().min(4 * max + 64));
    // Where each character of `text` lands in `clean` (a collapsed space maps to its run).
    let mut landing: Vec<usize> = Vec::with_capacity(if ranges.is_empty() { 0 } else { text.len() });
    let mut m = None;
    let mut reached = false;
    for (index, c) in text.chars().enumerate() {
        if Some(index) == match_start && m.is_none() {
            m = Some(clean.len());
        }
        // Without highlights, the window (see `window`) only depends on the clean text up to
        // `max` characters past the match: once that much follows it, `n` is known to exceed
        // every bound the window compares it with (`clean_reach`), so the rest of a long
        // document is not scanned.
        if ranges.is_empty()
            && (m.is_some() || match_start.is_none())
            && clean.len() >= m.unwrap_or(0) + clean_reach(max)
        {
            reached = true;
            break;
        }
        if !ranges.is_empty() {
            landing.push(clean.len());
        }
        if is_js_whitespace(c) {
            if clean.last().is_some_and(|last| *last != ' ') {
                clean.push(' ');
            }
        } else {
            clean.push(c);
        }
    }
    if clean.last() == Some(&' ') {
        clean.pop();
    }
    let n = clean.len();
    // One character of room shows only "…" (`window`), and no highlight lands in it.
    let (start, end, prefix, suffix) = window(n, m, max);
    let mut out = String::with_capacity(4 * (end - start) + 6);
    out.push_str(prefix);
    out.extend(&clean[start..end]);
    out.push_str(suffix);
    let shift = usize::from(!prefix.is_empty());
    let highlights = ranges
        .iter()
        .filter_map(|&(from, to)| {
            let from = landing.get(from).copied()?.max(start);
            let to = landing.get(to.saturating_sub(1)).map(|l| l + 1)?.min(end);
            (from < to).then(|| (from - start + shift, to - start + shift))
        })
        .collect();
    Cut {
        text: out,
        highlights,
        reached,
    }
}

/// The visible slice `clean[start..end]` and its ellipses.
fn window(n: usize, m: Option<usize>, max: usize) -> (usize, usize, &'static str, &'static str) {
    if n <= max {
        return (0, n, "", "");
    }
    if max == 1 {
        return (0, 0, "…", "");
    }
    let i = m.unwrap_or(0).min(n - 1);
    let mut start = i.saturating_sub(max / 3);
    let prefix = if start > 0 { "…" } else { "" };
    let mut suffix = "…";
    let prefix_len = usize::from(!prefix.is_empty());
    let mut room = max as isize - prefix_len as isize - 1;
    if room < 1 {
        start = i;
        suffix = "";
        room = max as isize - prefix_len as isize;
    } else if i >= start + room as usize {
        start = i + 1 - room as usize;
    }
    let mut room_len = room.max(0) as usize;
    let mut end = n.min(start + room_len);
    if end == n {
        suffix = "";
        room_len = max - prefix_len;
        start = end.saturating_sub(room_len);
        end = n.min(start + room_len);
    }
    (start, end, prefix, suffix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_merge_only_when_overlapping() {
        assert_eq!(merge_spans(&[0, 1], 1).map(|s| s.match_count), Some(2), "needle needle");
        assert_eq!(
            merge_spans(&[0, 1], 2).map(|s| s.match_count),
            Some(1),
            "`a a` in `a a a`"
        );
        assert_eq!(
            merge_spans(&[0, 2], 2).map(|s| s.match_count),
            Some(2),
            "`x y` in `x y x y`"
        );
        assert_eq!(
            merge_spans(&[1, 3], 2).map(|s| s.match_count),
            Some(2),
            "`two three` in `one two three two three`"
        );
        assert_eq!(merge_spans(&[], 2), None);
    }

    #[test]
    fn snippets_follow_the_spec_worked_values() {
        assert_eq!(snippet("  short\ntext  ", None, 20), "short text");
        assert_eq!(snippet("abcdefghij", None, 5), "abcd…");
        assert_eq!(snippet("abcdefghij", Some(2), 5), "…bcd…");
        assert_eq!(snippet("abcdefghij", Some(2), 3), "…c…");
        assert_eq!(snippet("abcdef", Some(5), 2), "…f");
        assert_eq!(snippet("abcdef", Some(5), 5), "…cdef");
        assert_eq!(snippet("abcdef", Some(5), 1), "…");
    }

    #[test]
    fn snippets_match_the_worked_example() {
        assert_eq!(
            snippet("parser: rewrite the parser", Some(0), 20),
            "parser: rewrite the…"
        );
        assert_eq!(
            snippet("Why does the Parser crash on empty input?", Some(13), 20),
            "…s the Parser crash…"
        );
        assert_eq!(
            snippet("Why does the Parser crash on empty input?", Some(20), 20),
            "…arser crash on emp…"
        );
        assert_eq!(snippet("error\nparser timeout", Some(6), 20), "error parser timeout");
    }

    #[test]
    fn snippets_stop_scanning_without_changing_the_result() {
        // `snippet` stops reading a long text once the window is decided; with highlights the
        // whole text is read. Both must cut the same snippet for every text, match and length,
        // ASCII texts (cut a byte at a time) and others.
        let mixed = ['a', 'b', ' ', '\n', '\u{3000}', 'é', '😀'];
        let ascii = ['a', 'b', ' ', '\n', '\t', '\u{B}', 'c'];
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1du64);
        for round in 0..40_000 {
            let alphabet = if round % 2 == 0 { mixed } else { ascii };
            let len = next(40);
            let text: String = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
            let chars = text.chars().count();
            let start = if next(5) == 0 { None } else { Some(next(chars + 1)) };
            let max = 1 + next(12);
            let full = snippet_with_highlights(&text, start, &[(0, 1)], max).0;
            assert_eq!(snippet(&text, start, max), full, "{text:?} {start:?} {max}");
        }
    }

    #[test]
    fn snippets_cut_from_a_byte_offset_match_the_whole_text_cut() {
        // `snippet_at_byte` skips the head of a long text; the cut must be the one `snippet`
        // makes from the whole text, for every match position and length (short ones included,
        // where the skipped head decides the leading ellipsis). Whether the text decided the
        // cut is what `snippet_reach` says for a match at a token's first character.
        let mixed = ['a', 'b', ' ', ' ', '\n', '\u{3000}', 'é', '😀'];
        let ascii = ['a', 'b', ' ', ' ', '\n', '\r', 'c', 'd'];
        let mut next = crate::testing::xorshift(0x9e37_79b9_7f4a_7c15u64);
        for round in 0..80_000 {
            let alphabet = if round % 2 == 0 { mixed } else { ascii };
            let len = next(60);
            let text: String = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
            let bytes: Vec<usize> = text.char_indices().map(|(b, _)| b).chain([text.len()]).collect();
            let (start, byte) = match next(6) {
                0 => (None, None),
                _ => {
                    let index = next(bytes.len());
                    (Some(index), Some(bytes[index]))
                }
            };
            let max = next(14);
            let (fast, reached) = snippet_at_byte(&text, byte, max);
            assert_eq!(fast, snippet(&text, start, max), "{text:?} {start:?} {max}");
            if let Some(at) = byte.filter(|&at| text[at..].starts_with(|c| !is_js_whitespace(c))) {
                assert_eq!(reached, snippet_reach(&text, at, max).is_some(), "{text:?} {at} {max}");
            }
        }
    }

    #[test]
    fn highlights_land_inside_the_snippet() {
        let (text, ranges) = snippet_with_highlights("  find   the needle\nhere", Some(13), &[(13, 19)], 240);
        assert_eq!(text, "find the needle here");
        assert_eq!(ranges, [(9, 15)]);
        let chars: Vec<char> = text.chars().collect();
        assert_eq!(chars[9..15].iter().collect::<String>(), "needle");
        // A span cut by the window is clipped; one outside it disappears.
        let (cut, ranges) = snippet_with_highlights("abcdefghij", Some(2), &[(1, 4), (8, 10)], 5);
        assert_eq!(cut, "…bcd…");
        assert_eq!(ranges, [(1, 4)]);
    }

    #[test]
    fn orders_are_total_and_follow_dsh() {
        let key = |match_count, length, time, session_id, seq| RankKey {
            match_count,
            length,
            time,
            session_id,
            seq,
        };
        let mut events = [
            key(1, 41, 10, "a1", 1),
            key(1, 55, 20, "a1", 4),
            key(2, 60, 5, "a1", 7),
            key(1, 41, 10, "a1", 9),
        ];
        events.sort_by(compare_events);
        let seqs: Vec<u64> = events.iter().map(|k| k.seq).collect();
        assert_eq!(seqs, [7, 9, 1, 4]);
        let mut sessions = [key(1, 41, 10, "b", 1), key(1, 41, 10, "a", 1), key(2, 26, 0, "z", 1)];
        sessions.sort_by(compare_sessions);
        let ids: Vec<&str> = sessions.iter().map(|k| k.session_id).collect();
        assert_eq!(ids, ["z", "a", "b"]);
    }
}
