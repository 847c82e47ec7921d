//! One `.jsonl.zstd` log: the frame walker, frame decoding, torn-tail recovery and every
//! later stage, on any bytes, within a small decompression allowance.
#![no_main]

use dsh_session_search::archive::LoadBudget;
use dsh_session_search::log::{Encoding, ReadLimits, listing_header, read_log_within};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = ReadLimits {
        max_decompressed_bytes: 16 << 20,
        max_line_bytes: 1 << 20,
        ..ReadLimits::default()
    };
    let budget = LoadBudget::new(32 << 20);
    let _ = read_log_within(data, Encoding::Zstd, &limits, &budget);
    let _ = listing_header(data, Encoding::Zstd, &limits);
});
