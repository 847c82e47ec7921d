//! Whole-archive loading: any bytes handed to `Corpus::load` as one file (a ZIP when they
//! look like one), read entry by entry within small limits; the load never fails as a whole.
#![no_main]

use dsh_session_search::archive::{Input, LoadOptions};
use dsh_session_search::corpus::Corpus;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut options = LoadOptions::default();
    options.limits.max_decompressed_bytes = 16 << 20;
    options.limits.max_line_bytes = 1 << 20;
    options.max_archive_bytes = 32 << 20;
    options.max_load_bytes = 32 << 20;
    for name in ["export.zip", "session.jsonl", "session.jsonl.zstd"] {
        let mut corpus = Corpus::new();
        let input = Input::File {
            name: name.into(),
            bytes: data.to_vec(),
        };
        let report = corpus.load(vec![input], &options).expect("a non-strict load reports");
        // Every session in the corpus was reported as added (a conflict may remove one again).
        let added = report.sessions.iter().filter(|s| s.outcome == "added").count();
        assert!(corpus.len() <= added, "{} sessions, {added} reported added", corpus.len());
    }
});
