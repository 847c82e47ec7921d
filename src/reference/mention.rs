//! Mentions: formatting `@[label](dsh-session:…)` with DSH's escaping, and
//! parsing host text into readable `@label` text plus the structured references it cites.
//!
//! DSH matches with one JavaScript regular expression (`u` flag). The scan here states the same
//! behaviour explicitly, over code points, in linear time: how far a label run, a URI tail and a
//! bare base64url run reach from each position is computed once, right to left, so inputs such
//! as `@[@[@[…` cannot make the scan quadratic.

use super::text::{JsStringBuilder, code_points, from_code_points};
use super::uri::{SESSION_REFERENCE_SCHEME, decode_session_reference_uri, encode_session_reference_uri, invalid_uri};
use crate::error::Error;
use crate::json::JsString;

/// One cited session, as parsed from text or after normalization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionReference {
    /// The source session's id (authoritative).
    pub session_id: JsString,
    /// Display text only; never identifies anything.
    pub label: JsString,
}

/// The result of [`parse_session_reference_text`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedReferenceText {
    /// The text with every mention and bare URI replaced by `@` + its label.
    pub text: JsString,
    /// Every reference in order of appearance, duplicates included.
    pub references: Vec<SessionReference>,
}

/// `@[escape(label ?? session_id)](uri(session_id))`, where `escape` puts a backslash before
/// every `\` and `]` and changes nothing else.
pub fn format_session_reference_mention(label: Option<&JsString>, session_id: &JsString) -> JsString {
    let label = label.unwrap_or(session_id);
    let mut out = JsStringBuilder::new();
    out.push_str("@[");
    for cp in code_points(label.as_wtf8()) {
        if cp == u32::from('\\') || cp == u32::from(']') {
            out.push(u32::from('\\'));
        }
        out.push(cp);
    }
    out.push_str("](");
    out.push_str(&encode_session_reference_uri(session_id));
    out.push_str(")");
    out.finish()
}

/// Replaces Markdown mentions and bare canonical URIs in `text` by `@label` and returns the
/// references in order. Any mention or bare base64url-shaped URI that does not decode fails the
/// whole parse with `SESSION_REFERENCE_INVALID_REFERENCE`; no partial result is returned.
pub fn parse_session_reference_text(text: &JsString) -> Result<ParsedReferenceText, Error> {
    // Both forms contain the scheme; without it the text is returned unchanged.
    if !contains(text.as_wtf8(), SESSION_REFERENCE_SCHEME.as_bytes()) {
        return Ok(ParsedReferenceText {
            text: text.clone(),
            references: Vec::new(),
        });
    }
    let cps = code_points(text.as_wtf8());
    let reach = Reach::new(&cps);
    let mut out = JsStringBuilder::new();
    let mut references = Vec::new();
    let mut at = 0;
    while at < cps.len() {
        let found = markdown_at(&cps, &reach, at).or_else(|| bare_at(&cps, &reach, at));
        let Some(found) = found else {
            out.push(cps[at]);
            at += 1;
            continue;
        };
        let session_id = decode_uri_code_points(&cps[found.uri.0..found.uri.1])?;
        let label = match found.raw_label {
            Some((start, end)) => unescape_label(&cps[start..end]),
            None => session_id.clone(),
        };
        out.push(u32::from('@'));
        out.push_js(&label);
        references.push(SessionReference { session_id, label });
        at = found.end;
    }
    Ok(ParsedReferenceText {
        text: out.finish(),
        references,
    })
}

/// One match: code-point ranges of the raw label (Markdown form only) and of the URI.
struct Match {
    raw_label: Option<(usize, usize)>,
    uri: (usize, usize),
    end: usize,
}

/// For every position, where a run that starts there ends (the index of the first code point
/// that is not part of it).
struct Reach {
    /// Label runs: tokens `\` + a non-line-terminator, or one code point other than `\` and `]`.
    label: Vec<usize>,
    /// URI tails: code points other than `)` and JavaScript whitespace.
    uri_tail: Vec<usize>,
    /// Bare payloads: base64url code points.
    base64url: Vec<usize>,
}

impl Reach {
    fn new(cps: &[u32]) -> Reach {
        let n = cps.len();
        let mut label = vec![n; n + 1];
        let mut uri_tail = vec![n; n + 1];
        let mut base64url = vec![n; n + 1];
        for at in (0..n).rev() {
            let c = cps[at];
            label[at] = if c == u32::from('\\') {
                match cps.get(at + 1) {
                    Some(&next) if !is_line_terminator(next) => label[at + 2],
                    _ => at,
                }
            } else if c == u32::from(']') {
                at
            } else {
                label[at + 1]
            };
            uri_tail[at] = if c == u32::from(')') || is_js_whitespace(c) {
                at
            } else {
                uri_tail[at + 1]
            };
            base64url[at] = if u8::try_from(c).is_ok_and(super::uri::is_base64url) {
                base64url[at + 1]
            } else {
                at
            };
        }
        Reach {
            label,
            uri_tail,
            base64url,
        }
    }
}

/// `@[` label-run `](dsh-session:` uri-tail `)` at `at`.
fn markdown_at(cps: &[u32], reach: &Reach, at: usize) -> Option<Match> {
    if !starts_with(cps, at, "@[") {
        return None;
    }
    let label_end = reach.label[at + 2];
    if !starts_with(cps, label_end, "](") || !starts_with(cps, label_end + 2, SESSION_REFERENCE_SCHEME) {
        return None;
    }
    let uri_start = label_end + 2;
    let tail_end = reach.uri_tail[uri_start + SESSION_REFERENCE_SCHEME.len()];
    (cps.get(tail_end) == Some(&u32::from(')'))).then_some(Match {
        raw_label: Some((at + 2, label_end)),
        uri: (uri_start, tail_end),
        end: tail_end + 1,
    })
}

/// `dsh-session:` followed by at least one base64url code point at `at`; no word boundary.
fn bare_at(cps: &[u32], reach: &Reach, at: usize) -> Option<Match> {
    if !starts_with(cps, at, SESSION_REFERENCE_SCHEME) {
        return None;
    }
    let payload_start = at + SESSION_REFERENCE_SCHEME.len();
    let end = reach.base64url[payload_start];
    (end > payload_start).then_some(Match {
        raw_label: None,
        uri: (at, end),
        end,
    })
}

fn decode_uri_code_points(cps: &[u32]) -> Result<JsString, Error> {
    let uri = from_code_points(cps);
    match uri.as_str() {
        Some(text) => decode_session_reference_uri(text),
        // A lone surrogate is never part of a canonical URI.
        None => Err(invalid_uri(&uri)),
    }
}

/// Drops each escaping backslash and keeps the code point after it.
fn unescape_label(raw: &[u32]) -> JsString {
    let mut out = JsStringBuilder::new();
    let mut at = 0;
    while at < raw.len() {
        if raw[at] == u32::from('\\')
            && let Some(&next) = raw.get(at + 1)
        {
            out.push(next);
            at += 2;
        } else {
            out.push(raw[at]);
            at += 1;
        }
    }
    out.finish()
}

fn starts_with(cps: &[u32], at: usize, ascii: &str) -> bool {
    cps.get(at..at + ascii.len())
        .is_some_and(|window| window.iter().zip(ascii.bytes()).all(|(&c, b)| c == u32::from(b)))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// ECMAScript line terminators (what `.` does not match).
fn is_line_terminator(c: u32) -> bool {
    matches!(c, 0x0A | 0x0D | 0x2028 | 0x2029)
}

/// ECMAScript `\s`: WhiteSpace plus LineTerminator. Not Rust's `char::is_whitespace`, which
/// adds U+0085 and leaves out U+FEFF.
fn is_js_whitespace(c: u32) -> bool {
    matches!(
        c,
        0x09..=0x0D | 0x20 | 0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000 | 0xFEFF
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::json::{Json, ParseLimits};

    const U: &str = "dsh-session:ImFiYyI";
    const V: &str = "dsh-session:ImRlZiI";

    fn js(s: &str) -> JsString {
        JsString::from(s)
    }

    /// `$u`/`$v` in the input stand for the URIs `U` (id `abc`) and `V` (id `def`).
    fn input(template: &str) -> JsString {
        js(&template.replace("$u", U).replace("$v", V))
    }

    fn parses_to(template: &str, readable: &str, references: &[(&str, &str)]) {
        let parsed = parse_session_reference_text(&input(template)).expect("parses");
        assert_eq!(parsed.text, js(readable), "readable text of {template:?}");
        let expected: Vec<SessionReference> = references
            .iter()
            .map(|(id, label)| SessionReference {
                session_id: js(id),
                label: js(label),
            })
            .collect();
        assert_eq!(parsed.references, expected, "references of {template:?}");
    }

    fn fails(template: &str) {
        let error = parse_session_reference_text(&input(template)).expect_err(template);
        assert_eq!(error.code, ErrorCode::ReferenceInvalidReference, "{template:?}");
    }

    fn unchanged(template: &str) {
        parses_to(template, &template.replace("$u", U).replace("$v", V), &[]);
    }

    #[test]
    fn row_01_bare_uri_label_is_the_id() {
        parses_to("see $u now", "see @abc now", &[("abc", "abc")]);
    }

    #[test]
    fn row_02_dot_and_backtick_end_the_payload_and_duplicates_are_kept() {
        parses_to(
            "see $u. and `$u`",
            "see @abc. and `@abc`",
            &[("abc", "abc"), ("abc", "abc")],
        );
    }

    #[test]
    fn row_03_markdown_mention() {
        parses_to("@[Notes]($u)", "@Notes", &[("abc", "Notes")]);
    }

    #[test]
    fn row_04_escaped_closing_bracket() {
        parses_to(r"@[a\]b]($u)", "@a]b", &[("abc", "a]b")]);
    }

    #[test]
    fn row_05_unescaped_bracket_breaks_markdown_but_the_bare_uri_counts() {
        parses_to("@[a]b]($u)", "@[a]b](@abc)", &[("abc", "abc")]);
    }

    #[test]
    fn row_06_opening_bracket_needs_no_escape() {
        parses_to("@[a[b]($u)", "@a[b", &[("abc", "a[b")]);
    }

    #[test]
    fn row_07_parentheses_in_labels() {
        parses_to("@[a(b)c]($u)", "@a(b)c", &[("abc", "a(b)c")]);
    }

    #[test]
    fn row_08_raw_newline_inside_a_label() {
        parses_to("@[l1\nl2]($u)", "@l1\nl2", &[("abc", "l1\nl2")]);
    }

    #[test]
    fn row_09_backslash_before_a_line_terminator_is_not_an_escape() {
        parses_to("@[a\\\nb]($u)", "@[a\\\nb](@abc)", &[("abc", "abc")]);
        for terminator in ['\r', '\u{2028}', '\u{2029}'] {
            let text = format!("@[a\\{terminator}b]($u)");
            let readable = format!("@[a\\{terminator}b](@abc)");
            parses_to(&text, &readable, &[("abc", "abc")]);
        }
    }

    #[test]
    fn row_10_any_escaped_character_loses_its_backslash() {
        parses_to(r"@[a\qb]($u)", "@aqb", &[("abc", "aqb")]);
    }

    #[test]
    fn row_11_escaped_backslash() {
        parses_to(r"@[a\\]($u)", r"@a\", &[("abc", r"a\")]);
    }

    #[test]
    fn row_12_empty_label() {
        parses_to("@[]($u)", "@", &[("abc", "")]);
    }

    #[test]
    fn row_13_whitespace_before_closing_parenthesis() {
        parses_to("@[x]($u )", "@[x](@abc )", &[("abc", "abc")]);
    }

    #[test]
    fn row_14_whitespace_after_opening_parenthesis() {
        parses_to("@[x]( $u)", "@[x]( @abc)", &[("abc", "abc")]);
    }

    #[test]
    fn row_15_nbsp_is_javascript_whitespace() {
        parses_to("@[x]($u\u{A0})", "@[x](@abc\u{A0})", &[("abc", "abc")]);
        for ws in ['\u{FEFF}', '\u{3000}', '\u{200A}', '\u{1680}', '\u{B}'] {
            parses_to(&format!("@[x]($u{ws})"), &format!("@[x](@abc{ws})"), &[("abc", "abc")]);
        }
    }

    #[test]
    fn row_16_next_line_is_not_javascript_whitespace() {
        fails("@[x]($u\u{85})");
        fails("@[x]($u\u{200B})");
        fails("@[x]($u\u{180E})");
    }

    #[test]
    fn row_17_no_leading_at_sign() {
        parses_to("[x]($u)", "[x](@abc)", &[("abc", "abc")]);
    }

    #[test]
    fn row_18_double_at_sign() {
        parses_to("@@[x]($u)", "@@x", &[("abc", "x")]);
    }

    #[test]
    fn row_19_mention_followed_by_parenthesized_uri() {
        parses_to("@[x]($u)($v)", "@x(@def)", &[("abc", "x"), ("def", "def")]);
    }

    #[test]
    fn row_20_no_closing_parenthesis() {
        parses_to("@[x]($u", "@[x](@abc", &[("abc", "abc")]);
    }

    #[test]
    fn row_21_other_links_are_left_alone() {
        unchanged("@[x](https://example.test/p)");
    }

    #[test]
    fn row_22_bare_uris_match_inside_other_links() {
        parses_to(
            "@[x](https://a.test/$u)",
            "@[x](https://a.test/@abc)",
            &[("abc", "abc")],
        );
    }

    #[test]
    fn row_23_no_word_boundary() {
        parses_to("x$u", "x@abc", &[("abc", "abc")]);
    }

    #[test]
    fn row_24_back_to_back_uris_run_together() {
        fails("$u$u");
    }

    #[test]
    fn row_25_underscore_extends_the_payload() {
        fails("$u_more");
    }

    #[test]
    fn row_26_padding_stays_as_text() {
        parses_to("see $u=", "see @abc=", &[("abc", "abc")]);
    }

    #[test]
    fn row_27_markdown_with_an_empty_payload() {
        fails("@[x](dsh-session:)");
    }

    #[test]
    fn row_28_markdown_with_a_bad_payload() {
        fails("@[x](dsh-session:%%%)");
    }

    #[test]
    fn row_29_bare_scheme_without_payload_is_text() {
        unchanged("see dsh-session:%%%");
    }

    #[test]
    fn row_30_bare_scheme_before_a_space_is_text() {
        unchanged("what is a dsh-session: URI?");
    }

    #[test]
    fn row_31_scheme_is_case_sensitive() {
        unchanged("DSH-SESSION:ImFiYyI");
    }

    #[test]
    fn row_32_non_canonical_empty_id() {
        fails("see dsh-session:IiJ");
    }

    #[test]
    fn row_33_the_empty_id() {
        parses_to("dsh-session:IiI", "@", &[("", "")]);
    }

    #[test]
    fn row_34_json_with_whitespace_is_not_canonical() {
        // base64url(` "abc"`)
        fails("@[x](dsh-session:ICJhYmMi)");
    }

    #[test]
    fn row_35_json_that_is_not_a_string() {
        // base64url(`{"id":"x"}`)
        fails("@[x](dsh-session:eyJpZCI6IngifQ)");
    }

    #[test]
    fn row_36_space_in_markdown_uri_then_a_non_canonical_bare_uri() {
        fails("@[x](dsh-session:abc def)");
    }

    #[test]
    fn spec_example_2_text() {
        parses_to(
            r"Compare @[DB [choice\]](dsh-session:InNlc3MtYmV0YSI) with dsh-session:InNlc3MtZ2FtbWEi and again @[other name](dsh-session:InNlc3MtYmV0YSI).",
            "Compare @DB [choice] with @sess-gamma and again @other name.",
            &[
                ("sess-beta", "DB [choice]"),
                ("sess-gamma", "sess-gamma"),
                ("sess-beta", "other name"),
            ],
        );
    }

    #[test]
    fn formats_the_spec_table() {
        for (id, label, mention) in [
            ("abc", Some("Notes"), "@[Notes](dsh-session:ImFiYyI)"),
            ("abc", Some(r"x]y\z[(p)"), r"@[x\]y\\z[(p)](dsh-session:ImFiYyI)"),
            (r"a]b\c", None, r"@[a\]b\\c](dsh-session:ImFdYlxcYyI)"),
            (
                "sess-beta",
                Some("DB [choice]"),
                r"@[DB [choice\]](dsh-session:InNlc3MtYmV0YSI)",
            ),
            ("s1", Some("Fix login"), "@[Fix login](dsh-session:InMxIg)"),
        ] {
            let label = label.map(js);
            let formatted = format_session_reference_mention(label.as_ref(), &js(id));
            assert_eq!(formatted, js(mention), "{id:?} {label:?}");
            // A formatted mention parses back to its id and label.
            let parsed = parse_session_reference_text(&formatted).expect("parses");
            assert_eq!(parsed.references.len(), 1);
            assert_eq!(parsed.references[0].session_id, js(id));
            assert_eq!(parsed.references[0].label, label.unwrap_or_else(|| js(id)));
        }
    }

    #[test]
    fn lone_surrogates_in_labels_join_with_the_following_text() {
        // In JavaScript the output `"@" + "\ud83d"` followed by the input's `"\ude00"` is "@😀".
        let Ok(Json::String(text)) =
            Json::parse(r#""x @[\ud83d](dsh-session:ImFiYyI)\ude00 y""#, ParseLimits::default())
        else {
            panic!("valid JSON string");
        };
        let parsed = parse_session_reference_text(&text).expect("parses");
        assert_eq!(parsed.text, js("x @😀 y"));
        assert_eq!(
            Json::String(parsed.references[0].label.clone()).to_js_string(),
            r#""\ud83d""#
        );
    }

    #[test]
    fn bare_uri_of_a_lone_surrogate_id() {
        let id = match Json::parse(r#""\ud800""#, ParseLimits::default()) {
            Ok(Json::String(s)) => s,
            other => panic!("{other:?}"),
        };
        let uri = encode_session_reference_uri(&id);
        let parsed = parse_session_reference_text(&js(&format!("see {uri}!"))).expect("parses");
        assert_eq!(
            parsed.references,
            vec![SessionReference {
                session_id: id.clone(),
                label: id
            }]
        );
        assert_eq!(Json::String(parsed.text).to_js_string(), r#""see @\ud800!""#);
    }

    #[test]
    fn a_lone_surrogate_in_a_markdown_uri_is_an_error() {
        let Ok(Json::String(text)) = Json::parse(r#""@[x](dsh-session:ImFiYyI\ud800)""#, ParseLimits::default()) else {
            panic!("valid JSON string");
        };
        let error = parse_session_reference_text(&text).expect_err("invalid");
        assert_eq!(
            error.message,
            r#"invalid session reference URI "dsh-session:ImFiYyI\ud800""#
        );
    }

    #[test]
    fn nested_openers_stay_linear_and_correct() {
        let text = "@[".repeat(20_000) + "x](" + U + ")";
        let parsed = parse_session_reference_text(&js(&text)).expect("parses");
        // The first `@[` starts a label run that swallows every later `@[`.
        assert_eq!(parsed.references.len(), 1);
        assert_eq!(parsed.references[0].label, js(&("@[".repeat(19_999) + "x")));
    }
}
