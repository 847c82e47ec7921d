//! A dropped folder: the fuzz input split into `(path, bytes)` entries (a persistence root,
//! an export, ZIPs inside it), so layout rules, bindings and duplicates meet hostile bytes.
#![no_main]

use dsh_session_search::archive::{Input, LoadOptions};
use dsh_session_search::corpus::Corpus;
use libfuzzer_sys::fuzz_target;

/// Entries separated by `0xFF` bytes; each is the path, a NUL, then the contents.
fn entries(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    data.split(|b| *b == 0xFF)
        .filter_map(|chunk| {
            let at = chunk.iter().position(|b| *b == 0)?;
            Some((
                String::from_utf8_lossy(&chunk[..at]).into_owned(),
                chunk[at + 1..].to_vec(),
            ))
        })
        .take(64)
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let mut options = LoadOptions::default();
    options.limits.max_decompressed_bytes = 16 << 20;
    options.limits.max_line_bytes = 1 << 20;
    options.max_load_bytes = 32 << 20;
    let mut corpus = Corpus::new();
    let input = Input::Entries {
        name: "root".into(),
        entries: entries(data),
    };
    let _ = corpus.load(vec![input], &options).expect("a non-strict load reports");
});
