//! Event text held compressed: a batch's text cut into blocks at event boundaries, each block
//! LZ4-compressed on its own, and a small per-thread cache of the blocks read last.
//!
//! A large archive is mostly event text, and JSON compresses about twofold even in small
//! blocks. Blocks stay small so that a search hit, which reads one event, decompresses a few
//! kilobytes; a sequential pass (the fold, the index build, a read of a whole session) finds
//! each block in the cache after its first event and decompresses it once.

use std::cell::RefCell;
use std::ops::{Deref, Range};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Raw bytes a block is cut at (the first event end at or past it). At 4 KiB the bench's
/// logs compress 1.75×, at 8 KiB 1.9×, at 64 KiB 2.4×; but every search hit decompresses its
/// event's block.
const BLOCK_BYTES: usize = 4 << 10;

/// A batch with less text than one block stays as it is (a live append of a few events):
/// packing it would save little and cost every later read a decompression.
pub(super) const PACK_MIN_BYTES: usize = BLOCK_BYTES;

/// Blocks each thread keeps decompressed: enough for a pass that interleaves a few sessions.
const CACHED_BLOCKS: usize = 8;

/// Tells packed texts apart in the cache. Never reused, so a freed text's cached blocks
/// can never answer for a new one at the same address.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// A batch's text in compressed blocks, each holding whole events.
pub(super) struct PackedText {
    id: u64,
    blocks: Box<[Block]>,
}

struct Block {
    /// Offset of the block's first byte in the batch's text.
    start: usize,
    raw_len: usize,
    bytes: Box<[u8]>,
}

impl PackedText {
    /// Packs `text` up to the last of `event_ends` (ascending; events do not overlap, and
    /// bytes between two events, a line no event kept, stay in a block as they are), cutting
    /// blocks only there.
    pub(super) fn pack(text: &str, event_ends: impl IntoIterator<Item = usize>) -> PackedText {
        let mut blocks = Vec::with_capacity(text.len() / BLOCK_BYTES + 1);
        let (mut start, mut last) = (0, 0);
        for end in event_ends {
            if end - start >= BLOCK_BYTES {
                blocks.push(Block::compress(text, start..end));
                start = end;
            }
            last = end;
        }
        if last > start {
            blocks.push(Block::compress(text, start..last));
        }
        PackedText {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            blocks: blocks.into_boxed_slice(),
        }
    }

    /// The text of `range`, which lies within one event (so within one block).
    pub(super) fn slice(&self, range: Range<usize>) -> EventText<'static> {
        let index = self.block_index(range.start);
        let block = &self.blocks[index];
        let text = self.unpacked(index);
        let within = range.start - block.start..range.end - block.start;
        debug_assert!(within.end <= block.raw_len, "an event never spans two blocks");
        EventText(Repr::Block(text, within))
    }

    /// The range of the text that the block holding offset `at` covers.
    pub(super) fn block_holding(&self, at: usize) -> Range<usize> {
        let block = &self.blocks[self.block_index(at)];
        block.start..block.start + block.raw_len
    }

    fn block_index(&self, at: usize) -> usize {
        self.blocks.partition_point(|b| b.start <= at) - 1
    }

    /// Bytes held (compressed).
    #[cfg(test)]
    pub(super) fn packed_bytes(&self) -> usize {
        self.blocks.iter().map(|b| b.bytes.len()).sum()
    }

    fn unpacked(&self, index: usize) -> Rc<String> {
        CACHE.with_borrow_mut(|cache| {
            let key = (self.id, index);
            if let Some(at) = cache.iter().position(|(k, _)| *k == key) {
                let entry = cache.remove(at);
                let text = Rc::clone(&entry.1);
                cache.insert(0, entry);
                return text;
            }
            let text = Rc::new(self.blocks[index].decompress());
            cache.truncate(CACHED_BLOCKS - 1);
            cache.insert(0, (key, Rc::clone(&text)));
            text
        })
    }
}

/// Decompressed blocks by (text id, block index), most recently used first.
type BlockCache = Vec<((u64, usize), Rc<String>)>;

thread_local! {
    static CACHE: RefCell<BlockCache> = const { RefCell::new(Vec::new()) };
}

impl Block {
    fn compress(text: &str, range: Range<usize>) -> Block {
        let raw = &text.as_bytes()[range.clone()];
        Block {
            start: range.start,
            raw_len: raw.len(),
            bytes: lz4_flex::compress(raw).into_boxed_slice(),
        }
    }

    fn decompress(&self) -> String {
        // The bytes were compressed here from a `str`, so neither step can fail short of
        // memory corruption.
        let raw = lz4_flex::decompress(&self.bytes, self.raw_len).expect("a packed block decompresses");
        super::utf8_text(raw).expect("a packed block holds UTF-8")
    }
}

/// An event's text: borrowed from a plain arena, or a range of a decompressed block that the
/// value keeps alive. Dereferences to `str`.
pub struct EventText<'a>(Repr<'a>);

enum Repr<'a> {
    Borrowed(&'a str),
    Block(Rc<String>, Range<usize>),
}

impl<'a> EventText<'a> {
    pub(super) fn borrowed(text: &'a str) -> Self {
        EventText(Repr::Borrowed(text))
    }
}

impl Deref for EventText<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        match &self.0 {
            Repr::Borrowed(text) => text,
            Repr::Block(block, range) => &block[range.clone()],
        }
    }
}

impl std::fmt::Debug for EventText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl PartialEq<&str> for EventText<'_> {
    fn eq(&self, other: &&str) -> bool {
        **self == **other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` JSON-ish events of varied length, and where each ends.
    fn events(count: usize) -> (String, Vec<usize>) {
        let mut text = String::new();
        let mut ends = Vec::new();
        let mut random = crate::testing::xorshift(7);
        for seq in 0..count {
            let words = 1 + random(400);
            text.push_str(&format!(r#"{{"seq":{seq},"data":{{"text":"é"#));
            for word in 0..words {
                text.push_str(["the ", "测试 ", "error ", "\\n"][(word + seq) % 4]);
            }
            text.push_str(r#""}}"#);
            ends.push(text.len());
        }
        (text, ends)
    }

    #[test]
    fn every_event_reads_back_from_its_block_whatever_the_order() {
        let (text, ends) = events(2_000);
        let packed = PackedText::pack(&text, ends.iter().copied());
        assert!(
            packed.blocks.len() > CACHED_BLOCKS * 4,
            "{} blocks",
            packed.blocks.len()
        );
        assert!(
            packed.packed_bytes() < text.len() / 2,
            "{} of {}",
            packed.packed_bytes(),
            text.len()
        );
        let starts: Vec<usize> = std::iter::once(0).chain(ends.iter().copied()).collect();
        let mut order: Vec<usize> = (0..ends.len()).collect();
        let mut random = crate::testing::xorshift(11);
        for i in (1..order.len()).rev() {
            order.swap(i, random(i + 1));
        }
        for event in order.into_iter().chain(0..ends.len()) {
            let range = starts[event]..ends[event];
            assert_eq!(&*packed.slice(range.clone()), &text[range]);
        }
    }

    #[test]
    fn an_event_larger_than_a_block_is_a_block_of_its_own() {
        let big = format!(r#"{{"text":"{}"}}"#, "x".repeat(3 * BLOCK_BYTES));
        let text = format!("{big}{big}");
        let packed = PackedText::pack(&text, [big.len(), text.len()]);
        assert_eq!(packed.blocks.len(), 2);
        assert_eq!(&*packed.slice(big.len()..text.len()), big);
    }

    #[test]
    fn two_texts_never_answer_for_each_other_from_the_cache() {
        let one = PackedText::pack("{\"a\":1}", [7]);
        let two = PackedText::pack("{\"b\":2}", [7]);
        assert_eq!(&*one.slice(0..7), "{\"a\":1}");
        assert_eq!(&*two.slice(0..7), "{\"b\":2}");
        drop(one);
        let three = PackedText::pack("{\"c\":3}", [7]);
        assert_eq!(&*three.slice(0..7), "{\"c\":3}");
    }
}
