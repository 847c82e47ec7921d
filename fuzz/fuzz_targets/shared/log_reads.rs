//! What a read of a log says, for targets that compare two reads of one log: the header, every
//! event's envelope, message facts, fold members and text, the closers, the torn tail and the
//! surface fold. Included by path (`#[path]`), as fuzz targets are binaries of their own.

use dsh_session_search::log::SessionLog;

/// Everything a later stage reads of `log`, as text two reads are compared by.
pub fn reads(log: &SessionLog) -> String {
    let events: Vec<String> = (log.events.iter())
        .map(|e| {
            format!(
                "{} {} {} {:?} {:?} {:?} {}",
                e.seq(),
                e.time(),
                e.kind(),
                e.conversation_message(),
                e.surface_op(),
                e.source_event_seqs(),
                &*e.text()
            )
        })
        .collect();
    format!(
        "{:?} {} {} {:?}\n{}",
        log.header,
        log.synthetic_closers,
        log.torn_bytes,
        log.surface,
        events.join("\n")
    )
}
