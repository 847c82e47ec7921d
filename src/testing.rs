//! Helpers shared by the library's unit tests.

/// A small deterministic generator (xorshift64): `next(n)` is in `0..n`, so a failure found
/// with a seed reproduces with it.
pub(crate) fn xorshift(seed: u64) -> impl FnMut(usize) -> usize {
    let mut state = seed;
    move |n| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    }
}

/// `plain` as one Zstandard frame, as DSH writes each durable batch of a log.
pub(crate) fn zstd_frame(plain: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(zstd_safe::compress_bound(plain.len()));
    zstd_safe::compress(&mut frame, plain, 1).expect("a buffer of the compression bound holds the frame");
    frame
}
