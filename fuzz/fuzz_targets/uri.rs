//! `dsh-session:` URIs: decoding any text never panics, and whatever decodes is canonical
//! (it re-encodes to the same URI).
#![no_main]

use dsh_session_search::reference::{decode_session_reference_uri, encode_session_reference_uri};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let uri = String::from_utf8_lossy(data);
    if let Ok(id) = decode_session_reference_uri(&uri) {
        assert_eq!(encode_session_reference_uri(&id), uri);
    }
});
