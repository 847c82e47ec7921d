//! Byte tests over eight bytes read as one little-endian word ("SIMD within a register"): the
//! passes over whole texts (a JSON string's end, a search's look through unindexed text) take
//! sixteen or sixty-four bytes at a time with wasm SIMD, then a word at a time here (natively,
//! and for the bytes a vector does not fill), where a byte loop costs several instructions per
//! byte. A pass tests a word at a time and looks byte by byte only at a word that holds a hit.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// A word with every byte `b`.
pub(crate) const fn splat(b: u8) -> u64 {
    ONES * b as u64
}

/// The eight bytes from `at` on as a word (byte `at` lowest), if there are eight.
pub(crate) fn load(bytes: &[u8], at: usize) -> Option<u64> {
    let chunk = bytes.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(chunk.try_into().ok()?))
}

/// The sixteen bytes from `at` on as a wasm SIMD vector, if there are sixteen: one unaligned
/// vector load (built from two words, as safe code must, it took two loads and a lane insert,
/// and the passes that call this did a third more work).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[allow(unsafe_code)]
pub(crate) fn load_vector(bytes: &[u8], at: usize) -> Option<std::arch::wasm32::v128> {
    let chunk = bytes.get(at..at.checked_add(16)?)?;
    // SAFETY: `chunk` holds sixteen readable bytes, and wasm's vector load has no alignment
    // requirement (the intrinsic loads with an alignment of 1).
    Some(unsafe { std::arch::wasm32::v128_load(chunk.as_ptr().cast()) })
}

/// The sixty-four bytes from `at` on as four wasm SIMD vectors, if there are that many: one
/// bounds check for four loads.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[allow(unsafe_code)]
pub(crate) fn load_four_vectors(bytes: &[u8], at: usize) -> Option<[std::arch::wasm32::v128; 4]> {
    let chunk = bytes.get(at..at.checked_add(64)?)?;
    // SAFETY: `chunk` holds sixty-four readable bytes, each load takes sixteen of them, and
    // wasm's vector load has no alignment requirement.
    Some(std::array::from_fn(|k| unsafe {
        std::arch::wasm32::v128_load(chunk.as_ptr().add(16 * k).cast())
    }))
}

/// The bytes of `word` below `n` (at most 128), each marked by its high bit. The lowest mark is
/// exact, and so is whether there is one: a borrow out of a byte that is below `n` may also
/// mark bytes above it, never one below.
pub(crate) fn less_marks(word: u64, n: u8) -> u64 {
    debug_assert!(n <= 128);
    word.wrapping_sub(splat(n)) & !word & HIGHS
}

/// The bytes of `word` equal to `b`, marked as [`less_marks`] marks them.
pub(crate) fn byte_marks(word: u64, b: u8) -> u64 {
    less_marks(word ^ splat(b), 1)
}

/// The place in its word (0 for the byte read first) of the lowest byte `marks` marks.
pub(crate) fn lowest_marked(marks: u64) -> usize {
    (marks.trailing_zeros() / 8) as usize
}

/// Whether some byte of `word` is below `n` (at most 128).
pub(crate) fn has_less(word: u64, n: u8) -> bool {
    less_marks(word, n) != 0
}

/// Whether some byte of `word` is zero.
pub(crate) fn has_zero(word: u64) -> bool {
    has_less(word, 1)
}

/// Whether some byte of `word` lies in `low..low + span` (`span` at most 128).
pub(crate) fn has_in_range(word: u64, low: u8, span: u8) -> bool {
    // Every byte minus `low`, modulo 256 and without a borrow between bytes: the low seven bits
    // add `-low`'s without a carry out of the byte, and the high bit is their carry xor both
    // high bits. A byte in range is then one below `span`.
    let minus = splat(low.wrapping_neg());
    let shifted = ((word & !HIGHS) + (minus & !HIGHS)) ^ ((word ^ minus) & HIGHS);
    has_less(shifted, span)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each test tells a word apart from its bytes tested one by one, for every byte value in
    /// every place, among neighbours that sit just outside and inside the ranges tested.
    #[test]
    fn word_tests_agree_with_byte_tests() {
        let mut next = crate::testing::xorshift(0x5A5A);
        let neighbours = [0x00, 0x1F, 0x20, 0x7F, 0x80, 0xC2, 0xC3, 0xE2, 0xE3, 0xFF];
        for value in 0..=255u8 {
            for place in 0..8 {
                let mut bytes: [u8; 8] = std::array::from_fn(|_| neighbours[next(neighbours.len())]);
                bytes[place] = value;
                let word = load(&bytes, 0).expect("eight bytes");
                assert_eq!(has_less(word, 0x20), bytes.iter().any(|&b| b < 0x20));
                assert_eq!(has_zero(word), bytes.contains(&0));
                let first_quote = bytes.iter().position(|&b| b == b'"');
                let marks = byte_marks(word, b'"');
                assert_eq!(marks != 0, first_quote.is_some());
                assert_eq!(first_quote, (marks != 0).then(|| lowest_marked(marks)));
                let first_low = bytes.iter().position(|&b| b < 0x20);
                let marks = less_marks(word, 0x20);
                assert_eq!(first_low, (marks != 0).then(|| lowest_marked(marks)), "{bytes:x?}");
                for (low, span) in [(0xC3, 0x20), (0x00, 0x01), (0x80, 0x40), (0xF0, 0x10)] {
                    let byte_wise = bytes.iter().any(|&b| b.wrapping_sub(low) < span);
                    assert_eq!(
                        has_in_range(word, low, span),
                        byte_wise,
                        "{bytes:x?} in {low:x}+{span:x}"
                    );
                }
            }
        }
        assert_eq!(load(&[1; 7], 0), None);
        assert_eq!(load(&[1; 9], 1), Some(splat(1)));
    }
}
