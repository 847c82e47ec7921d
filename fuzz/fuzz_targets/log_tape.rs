//! One raw `.jsonl` log read as it is and with every complete line but the header spelled
//! otherwise (a space after the brace that opens it): a line that is its event's printed text
//! is read onto the log's tape, and the same line spelled otherwise is parsed as a tree, so
//! both reads must say the same (every event's envelope, text, message facts and fold members,
//! the closers, the torn tail, the surface; or the same error).
#![no_main]

use dsh_session_search::log::{Encoding, ReadLimits, SessionLog, read_log};
use libfuzzer_sys::fuzz_target;

#[path = "shared/log_reads.rs"]
mod log_reads;

/// What a read says of a log, or its error, to compare two reads.
fn outcome(log: Result<SessionLog, dsh_session_search::error::Error>) -> Result<String, String> {
    log.map(|log| log_reads::reads(&log))
        .map_err(|e| format!("{} {}", e.code.as_str(), e.message))
}

/// The log with a space after the opening brace of every complete line but the header (a
/// line that does not open with a brace is left as it is: a space elsewhere could fall inside
/// a string).
fn respelled(data: &[u8]) -> Vec<u8> {
    let mut lines = data.split_inclusive(|&b| b == b'\n');
    let mut out = lines.next().unwrap_or_default().to_vec();
    for line in lines {
        out.extend_from_slice(&line[..line.len().min(1)]);
        if line.first() == Some(&b'{') && line.last() == Some(&b'\n') {
            out.push(b' ');
        }
        out.extend_from_slice(&line[line.len().min(1)..]);
    }
    out
}

fuzz_target!(|data: &[u8]| {
    // Lines far below the limit, so that a line one byte longer is never refused for it.
    let limits = ReadLimits {
        max_line_bytes: 1 << 24,
        ..ReadLimits::default()
    };
    if data.len() > 1 << 20 {
        return;
    }
    let as_written = outcome(read_log(data, Encoding::Raw, &limits));
    let as_trees = outcome(read_log(&respelled(data), Encoding::Raw, &limits));
    assert_eq!(as_written, as_trees, "a log read from its tape and from trees differ");
});
