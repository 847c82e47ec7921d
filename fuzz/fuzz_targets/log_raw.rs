//! One raw `.jsonl` log: line framing, packed chunk rows, header, legacy upgrades, validation,
//! repair and the surface fold, on any bytes.
#![no_main]

use dsh_session_search::log::{Encoding, ReadLimits, read_log};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = ReadLimits {
        max_line_bytes: 1 << 20,
        ..ReadLimits::default()
    };
    if let Ok(log) = read_log(data, Encoding::Raw, &limits) {
        // Labels and surface come from one fold: every event has a label.
        assert!(log.events.len() >= log.synthetic_closers);
    }
});
