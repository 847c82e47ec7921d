//! Mention parsing: any text parses or fails with a code, never panics; a parse that
//! succeeds cites only sessions whose mentions format back into URIs that decode.
#![no_main]

use dsh_session_search::json::JsString;
use dsh_session_search::reference::{
    decode_session_reference_uri, encode_session_reference_uri, parse_session_reference_text,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = JsString::from(String::from_utf8_lossy(data).into_owned());
    if let Ok(parsed) = parse_session_reference_text(&text) {
        for reference in &parsed.references {
            let uri = encode_session_reference_uri(&reference.session_id);
            assert!(decode_session_reference_uri(&uri).is_ok());
        }
    }
});
