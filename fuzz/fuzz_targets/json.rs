//! JSON as JavaScript holds it: any bytes parse or fail without panicking; whatever parses
//! prints to a text that parses back and prints the same (printing is a fixed point), and
//! without non-finite numbers (which print as `null`) parses back to an equal value. A text
//! the parser says is already printed is exactly what printing writes, and the top-level
//! member it was asked to note starts where the parser says. The parse shares a few short
//! strings (as a log's is given DSH's vocabulary): shared and allocated strings must compare,
//! print and round-trip alike. Leaving the strings of one member out ([`Elide`]) changes
//! neither what parses nor whether it is printed, nor where the noted members start.
#![no_main]

use dsh_session_search::json::{Elide, Json, ParseLimits, Vocabulary, parse_printed_value};
use libfuzzer_sys::fuzz_target;

fn all_finite(value: &Json) -> bool {
    match value {
        Json::Number(n) => n.is_finite(),
        Json::Array(items) => items.iter().all(all_finite),
        Json::Object(object) => object.iter().all(|(_, v)| all_finite(v)),
        _ => true,
    }
}

/// Short words a fuzzed text reaches easily, so that keys and values are shared often.
static WORDS: Vocabulary = Vocabulary::new(&[&["a", "b", "ab", "type", "seq", "é", "\u{1F600}"]]);

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let limits = ParseLimits { max_depth: usize::MAX };
    let keys = ["a", "b"];
    let parse = |elide| Json::parse_noting_printed(&text, limits, 4096, &keys, &WORDS, elide);
    let elided = parse(Elide { keys: &["ab"] });
    let Ok(parsed) = parse(Elide::NONE) else {
        assert!(elided.is_err(), "a text refused in full parses with strings left out");
        return;
    };
    let elided = elided.expect("a text parsed in full parses with strings left out");
    assert_eq!(elided.printed, parsed.printed, "leaving strings out changed what is printed");
    assert_eq!(elided.noted_at, parsed.noted_at, "leaving strings out moved the noted members");
    let value = parsed.value;
    let printed = value.to_js_string();
    if parsed.printed {
        assert_eq!(printed, text, "a text said to be printed is not");
        for (key, at) in keys.iter().zip(parsed.noted_at) {
            let noted = at.map(|at| parse_printed_value(&text[at..]).to_js_string());
            let member = value.as_object().and_then(|o| o.get(key)).map(Json::to_js_string);
            assert_eq!(noted, member, "the noted member is not where the parser said");
        }
    }
    let again = Json::parse(&printed, limits).expect("printed JSON parses");
    assert_eq!(again.to_js_string(), printed, "printing is not stable");
    if all_finite(&value) {
        assert!(again == value, "print/parse changed the value");
    }
});
