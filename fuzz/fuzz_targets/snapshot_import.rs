//! Index snapshots: a real snapshot of a small corpus with the fuzz input applied as edits
//! (overwrites, cuts, insertions) is either refused with `SESSION_QUERY_INDEX_FAILED` or
//! searches exactly as the index it was taken from, never a panic.
#![no_main]

use dsh_session_search::api::{Archive, ArchiveOptions, Dialect};
use dsh_session_search::archive::Input;
use dsh_session_search::json::{Json, ParseLimits};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const LOG: &str = concat!(
    r#"{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0}"#,
    "\n",
    r#"{"type":"user/message","seq":0,"time":2,"data":{"id":"m1","role":"user","content":[{"type":"text","text":"the parser fails on deep input"}],"source":{"kind":"user"}},"surfaceOp":"append"}"#,
    "\n",
    r#"{"type":"user/message","seq":1,"time":3,"data":{"id":"m2","role":"user","content":[{"type":"text","text":"fails again, parser error"}],"source":{"kind":"user"}},"surfaceOp":"append"}"#,
    "\n",
);

fn archive() -> Archive {
    let mut archive = Archive::new(ArchiveOptions::default());
    let input = Input::File {
        name: "s1.jsonl".into(),
        bytes: LOG.as_bytes().to_vec(),
    };
    archive.load(vec![input], false).expect("the fixture loads");
    archive
}

fn search(archive: &mut Archive) -> String {
    let params = Json::parse(r#"[{"query":"parser"}]"#, ParseLimits::default()).expect("JSON");
    archive
        .call_json("searchSessions", params.as_array().unwrap_or_default(), Dialect::Dsh)
        .expect("a search answers")
}

/// The snapshot and the first page its index answers.
fn reference() -> &'static (Vec<u8>, String) {
    static REFERENCE: OnceLock<(Vec<u8>, String)> = OnceLock::new();
    REFERENCE.get_or_init(|| {
        let mut archive = archive();
        let page = search(&mut archive);
        (archive.export_index().expect("exports"), page)
    })
}

/// Applies `data` as edits: each 4-byte group is (kind, position hi, position lo, value).
fn edited(snapshot: &[u8], data: &[u8]) -> Vec<u8> {
    let mut bytes = snapshot.to_vec();
    for edit in data.chunks_exact(4).take(64) {
        if bytes.is_empty() {
            break;
        }
        let at = (usize::from(edit[1]) << 8 | usize::from(edit[2])) * 7 % bytes.len();
        match edit[0] % 4 {
            0 => bytes[at] = edit[3],
            1 => bytes.truncate(at),
            2 => bytes.insert(at, edit[3]),
            _ => {
                bytes.remove(at);
            }
        }
    }
    bytes
}

fuzz_target!(|data: &[u8]| {
    let (snapshot, page) = reference();
    let mut archive = archive();
    match archive.import_index(&edited(snapshot, data)) {
        Ok(()) => assert_eq!(&search(&mut archive), page, "an accepted snapshot answers as its index did"),
        Err(error) => assert_eq!(error.code.as_str(), "SESSION_QUERY_INDEX_FAILED", "{error}"),
    }
});
