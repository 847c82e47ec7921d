//! JSON as JavaScript holds it: any bytes parse or fail without panicking; whatever parses
//! prints to a text that parses back and prints the same (printing is a fixed point), and
//! without non-finite numbers (which print as `null`) parses back to an equal value.
#![no_main]

use dsh_session_search::json::{Json, ParseLimits};
use libfuzzer_sys::fuzz_target;

fn all_finite(value: &Json) -> bool {
    match value {
        Json::Number(n) => n.is_finite(),
        Json::Array(items) => items.iter().all(all_finite),
        Json::Object(object) => object.iter().all(|(_, v)| all_finite(v)),
        _ => true,
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let limits = ParseLimits { max_depth: usize::MAX };
    let Ok(value) = Json::parse_bounded(&text, limits, 4096) else {
        return;
    };
    let printed = value.to_js_string();
    let again = Json::parse(&printed, limits).expect("printed JSON parses");
    assert_eq!(again.to_js_string(), printed, "printing is not stable");
    if all_finite(&value) {
        assert!(again == value, "print/parse changed the value");
    }
});
