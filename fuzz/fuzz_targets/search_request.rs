//! Search requests: any JSON text normalises to a typed request or fails with a query code,
//! never a panic; what passes holds a non-blank query without NUL and a limit in range, and its
//! cursor identity is a pure function of the request.
#![no_main]

use dsh_session_search::json::{Json, ParseLimits};
use dsh_session_search::search::request::{SearchConfig, parse_event_request, parse_session_request};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(request) = Json::parse(&String::from_utf8_lossy(data), ParseLimits::default()) else {
        return;
    };
    let config = SearchConfig::default();
    match parse_session_request(&request, &config) {
        Ok(parsed) => {
            assert!(!parsed.query.is_empty() && !parsed.query.contains('\0'));
            assert!((1..=config.max_limit).contains(&parsed.limit));
            let again = parse_session_request(&request, &config).expect("the same request parses again");
            assert_eq!(parsed.fingerprint(), again.fingerprint());
        }
        Err(error) => assert!(error.code.as_str().starts_with("SESSION_QUERY_"), "{error}"),
    }
    match parse_event_request(&request, &config) {
        Ok(parsed) => {
            assert!(!parsed.query.is_empty() && !parsed.query.contains('\0'));
            assert!((1..=config.max_limit).contains(&parsed.limit));
        }
        Err(error) => assert!(error.code.as_str().starts_with("SESSION_QUERY_"), "{error}"),
    }
});
