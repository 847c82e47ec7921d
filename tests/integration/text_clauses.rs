//! Event `text` clauses: the literal, whitespace-flexible, case-insensitive scan. In the
//! browser build it runs on the host's own `RegExp` (flags `iu`), elsewhere on the `regex`
//! crate; the same examples hold on both (natively here, on wasm32 under Node with `make
//! test-wasm`).

/// The documented examples, syntax characters matched literally, and JavaScript's whitespace
/// (and only it) between words.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn text_clauses_match_as_documented() {
    use dsh_session_search::filters::compile_text_filter;
    let matches = |clause: &str, text: &str| compile_text_filter(clause).expect("compiles").is_match(text);
    let doc = "Hello\n(AI)+";
    assert!(matches("hello (ai)+", doc));
    assert!(matches("  hello   (ai)+ ", doc));
    assert!(matches("ello", doc));
    assert!(!matches("hello(ai)", doc));
    assert!(!matches("(ai)+ hello", doc));
    assert!(matches("AI", "BRAID"));
    assert!(!matches("cafe", "café"));
    assert!(matches("É", "é"));
    assert!(matches("s", "ſ"));
    assert!(matches("k", "\u{212A}"));
    assert!(!matches("ss", "ß"));
    assert!(matches("a b", "a\u{FEFF}b"));
    assert!(!matches("a b", "a\u{85}b"));
    assert!(matches(r"^$\.*+?()[]{}|/ -x", r"a ^$\.*+?()[]{}|/  -X b"));
    assert!(!matches("a.c", "abc"));
    assert!(compile_text_filter(" \u{3000} ").is_err());
}
