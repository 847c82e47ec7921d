//! `dsh-session:` URIs: encoding any JavaScript string id, and decoding with
//! DSH's canonical round-trip check.
//!
//! `uri(id) = "dsh-session:" + base64url_nopad(utf8(JSON.stringify(id)))`. `JSON.stringify`
//! writes a lone surrogate as a `\udXXX` escape, so every id (lone surrogates included) has
//! exactly one URI and decoding gives that id back.

use crate::error::{Error, ErrorCode};
use crate::json::{self, JsString, Json, ParseLimits};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The URI prefix, lower case, colon included.
pub const SESSION_REFERENCE_SCHEME: &str = "dsh-session:";

/// The canonical URI of a session id.
pub fn encode_session_reference_uri(session_id: &JsString) -> String {
    let mut quoted = String::new();
    json::write_string(session_id, &mut quoted);
    let mut uri = String::with_capacity(SESSION_REFERENCE_SCHEME.len() + quoted.len().div_ceil(3) * 4);
    uri.push_str(SESSION_REFERENCE_SCHEME);
    URL_SAFE_NO_PAD.encode_string(quoted.as_bytes(), &mut uri);
    uri
}

/// The session id of a canonical URI. Anything else (wrong or differently cased scheme, an
/// empty or non-base64url payload, padding, non-zero trailing bits, bytes that are not UTF-8,
/// JSON that is not a string, or any spelling other than `JSON.stringify`'s) fails with
/// `SESSION_REFERENCE_INVALID_REFERENCE`.
pub fn decode_session_reference_uri(uri: &str) -> Result<JsString, Error> {
    decode_canonical(uri).ok_or_else(|| invalid_uri(&JsString::from(uri)))
}

/// The accepted URIs are exactly the images of [`encode_session_reference_uri`], so the final
/// re-encoding comparison decides; the earlier steps only reject cheaply what it would reject.
fn decode_canonical(uri: &str) -> Option<JsString> {
    let payload = uri.strip_prefix(SESSION_REFERENCE_SCHEME)?;
    if payload.is_empty() || !payload.bytes().all(is_base64url) {
        return None;
    }
    let bytes = URL_SAFE_NO_PAD.decode(payload).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let Ok(Json::String(id)) = Json::parse(&text, ParseLimits::default()) else {
        return None;
    };
    (encode_session_reference_uri(&id) == uri).then_some(id)
}

/// Whether `b` is in the base64url alphabet `A–Z a–z 0–9 - _`.
pub(crate) fn is_base64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// DSH's error for a bad URI: the URI is quoted as a JSON string.
pub(crate) fn invalid_uri(uri: &JsString) -> Error {
    let mut quoted = String::new();
    json::write_string(uri, &mut quoted);
    Error::new(
        ErrorCode::ReferenceInvalidReference,
        format!("invalid session reference URI {quoted}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(json: &str) -> JsString {
        match Json::parse(json, ParseLimits::default()) {
            Ok(Json::String(s)) => s,
            other => panic!("not a JSON string: {other:?}"),
        }
    }

    fn payload(raw: &[u8]) -> String {
        format!("{SESSION_REFERENCE_SCHEME}{}", URL_SAFE_NO_PAD.encode(raw))
    }

    #[test]
    fn encodes_the_spec_table() {
        for (id, uri) in [
            ("abc", "dsh-session:ImFiYyI"),
            ("", "dsh-session:IiI"),
            ("sess-1", "dsh-session:InNlc3MtMSI"),
            ("a/b\"c\n", "dsh-session:ImEvYlwiY1xuIg"),
            ("源", "dsh-session:Iua6kCI"),
        ] {
            assert_eq!(encode_session_reference_uri(&JsString::from(id)), uri, "{id:?}");
            assert_eq!(
                decode_session_reference_uri(uri).expect("canonical"),
                JsString::from(id)
            );
        }
    }

    #[test]
    fn lone_surrogate_ids_round_trip() {
        // Node: encodeSessionReferenceUri("\ud800") === "dsh-session:Ilx1ZDgwMCI".
        let id = js(r#""\ud800""#);
        let uri = encode_session_reference_uri(&id);
        assert_eq!(uri, "dsh-session:Ilx1ZDgwMCI");
        assert_eq!(decode_session_reference_uri(&uri).expect("canonical"), id);
        let id = js(r#""\ude00b""#);
        assert_eq!(encode_session_reference_uri(&id), "dsh-session:Ilx1ZGUwMGIi");
        assert_eq!(
            decode_session_reference_uri("dsh-session:Ilx1ZGUwMGIi").expect("canonical"),
            id
        );
    }

    #[test]
    fn rejects_every_non_canonical_form() {
        let bad = [
            "dsh-session:".to_owned(),
            "DSH-SESSION:ImFiYyI".to_owned(),
            "dsh-session:ImFiYyI=".to_owned(),
            "dsh-session:ImFiYyI ".to_owned(),
            "dsh-session:ImFiYy+".to_owned(),
            // Non-zero trailing bits for "".
            "dsh-session:IiJ".to_owned(),
            // A leftover character after a complete encoding.
            "dsh-session:IiIA".to_owned(),
            "dsh-session:%%%".to_owned(),
            payload(b" \"abc\""),
            payload(b"\"abc\" "),
            payload(b"\"\\u0061bc\""),
            payload(b"\"\\/\""),
            // An escaped surrogate pair: JSON.stringify writes the character itself.
            payload(b"\"\\ud83d\\ude00\""),
            // Upper-case hex in a lone-surrogate escape.
            payload(b"\"\\uD800\""),
            payload(b"\"\xff\""),
            payload(b"{\"id\":\"x\"}"),
            payload(b"42"),
            payload(b"null"),
            payload(b"\"unterminated"),
        ];
        for uri in bad {
            let error = decode_session_reference_uri(&uri).expect_err(&uri);
            assert_eq!(error.code, ErrorCode::ReferenceInvalidReference, "{uri}");
        }
        let error = decode_session_reference_uri("dsh-session:IiJ").expect_err("non-canonical");
        assert_eq!(error.message, r#"invalid session reference URI "dsh-session:IiJ""#);
    }

    #[test]
    fn the_empty_id_is_valid() {
        assert_eq!(
            decode_session_reference_uri("dsh-session:IiI").expect("canonical"),
            JsString::from("")
        );
    }
}
