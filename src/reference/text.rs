//! JavaScript-string plumbing for the reference layer: the code points of a WTF-8 string and a
//! builder whose appends join surrogate halves the way JavaScript string concatenation does.
//!
//! Ids, labels and message text are JavaScript strings and may hold lone UTF-16 surrogates
//! ([`JsString`] keeps them as WTF-8). Gluing a text that ends in a lone high surrogate to one
//! that starts with a lone low surrogate makes a real character in JavaScript, so the builder
//! re-encodes such a pair as one 4-byte UTF-8 sequence: the result is always well-formed WTF-8.

use crate::json::JsString;

/// The code points of a WTF-8 string; a lone surrogate is one code point (`0xD800..=0xDFFF`).
pub(crate) fn code_points(wtf8: &[u8]) -> Vec<u32> {
    let mut out = Vec::with_capacity(wtf8.len());
    let mut at = 0;
    while at < wtf8.len() {
        let lead = wtf8[at];
        let (len, init) = match lead {
            0x00..=0x7F => (1, u32::from(lead)),
            0xC0..=0xDF => (2, u32::from(lead & 0x1F)),
            0xE0..=0xEF => (3, u32::from(lead & 0x0F)),
            0xF0..=0xF7 => (4, u32::from(lead & 0x07)),
            // Not produced by `JsString`; read as one replacement character, never panic.
            _ => (1, 0xFFFD),
        };
        let mut cp = init;
        for k in 1..len {
            cp = (cp << 6) | u32::from(wtf8.get(at + k).copied().unwrap_or(0x80) & 0x3F);
        }
        out.push(cp);
        at += len;
    }
    out
}

/// Appends code points and strings, producing a well-formed WTF-8 [`JsString`].
#[derive(Default)]
pub(crate) struct JsStringBuilder {
    bytes: Vec<u8>,
}

impl JsStringBuilder {
    /// An empty builder.
    pub(crate) fn new() -> Self {
        JsStringBuilder::default()
    }

    /// Appends one code point (a lone surrogate is allowed and may join the previous one).
    pub(crate) fn push(&mut self, cp: u32) {
        if (0xDC00..0xE000).contains(&cp)
            && let Some(high) = self.trailing_high_surrogate()
        {
            self.bytes.truncate(self.bytes.len() - 3);
            let joined = 0x10000 + ((high - 0xD800) << 10) + (cp - 0xDC00);
            self.push_generalized(joined);
            return;
        }
        self.push_generalized(cp);
    }

    /// Appends a Rust string (it cannot start with a lone surrogate).
    pub(crate) fn push_str(&mut self, s: &str) {
        self.bytes.extend_from_slice(s.as_bytes());
    }

    /// Appends a JavaScript string.
    pub(crate) fn push_js(&mut self, s: &JsString) {
        match s {
            JsString::Utf8(text) => self.push_str(text),
            JsString::Known(text) => self.push_str(text),
            // Only the log reader elides, and never in the texts a reference reads.
            JsString::Elided(_) => {}
            JsString::Wtf8(bytes) => {
                for cp in code_points(bytes) {
                    self.push(cp);
                }
            }
        }
    }

    /// The built string: `Utf8` when it has no lone surrogate, like every `JsString` we make.
    pub(crate) fn finish(self) -> JsString {
        match String::from_utf8(self.bytes) {
            Ok(text) => JsString::Utf8(text.into_boxed_str()),
            Err(e) => JsString::Wtf8(e.into_bytes().into_boxed_slice()),
        }
    }

    fn trailing_high_surrogate(&self) -> Option<u32> {
        let n = self.bytes.len();
        let tail = self.bytes.get(n.checked_sub(3)?..)?;
        // 0xED 0xA0..=0xAF xx is the generalized UTF-8 form of U+D800..U+DBFF.
        (tail[0] == 0xED && (0xA0..=0xAF).contains(&tail[1]))
            .then(|| 0xD000 | (u32::from(tail[1] & 0x3F) << 6) | u32::from(tail[2] & 0x3F))
    }

    fn push_generalized(&mut self, cp: u32) {
        match cp {
            0..=0x7F => self.bytes.push(cp as u8),
            0x80..=0x7FF => self
                .bytes
                .extend_from_slice(&[0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]),
            0x800..=0xFFFF => self.bytes.extend_from_slice(&[
                0xE0 | (cp >> 12) as u8,
                0x80 | ((cp >> 6) & 0x3F) as u8,
                0x80 | (cp & 0x3F) as u8,
            ]),
            _ => self.bytes.extend_from_slice(&[
                0xF0 | (cp >> 18) as u8,
                0x80 | ((cp >> 12) & 0x3F) as u8,
                0x80 | ((cp >> 6) & 0x3F) as u8,
                0x80 | (cp & 0x3F) as u8,
            ]),
        }
    }
}

/// A string from code points (joining surrogate pairs).
pub(crate) fn from_code_points(cps: &[u32]) -> JsString {
    let mut builder = JsStringBuilder::new();
    for &cp in cps {
        builder.push(cp);
    }
    builder.finish()
}

/// `Buffer.byteLength(s, "utf8")`: UTF-8 bytes, 3 per lone surrogate (it becomes U+FFFD).
pub(crate) fn utf8_len(s: &JsString) -> usize {
    // A lone surrogate takes 3 bytes in WTF-8, exactly like the U+FFFD that replaces it.
    s.as_wtf8().len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Json, ParseLimits};

    fn js(json: &str) -> JsString {
        match Json::parse(json, ParseLimits::default()) {
            Ok(Json::String(s)) => s,
            other => panic!("not a JSON string: {other:?}"),
        }
    }

    #[test]
    fn appending_a_low_half_after_a_high_half_makes_one_character() {
        let mut builder = JsStringBuilder::new();
        builder.push_js(&js(r#""a\ud83d""#));
        builder.push_js(&js(r#""\ude00b""#));
        assert_eq!(builder.finish(), JsString::from("a😀b"));
    }

    #[test]
    fn lone_halves_stay_lone() {
        let lone = js(r#""\ude00x\ud83d""#);
        assert_eq!(code_points(lone.as_wtf8()), vec![0xDE00, u32::from('x'), 0xD83D]);
        let rebuilt = from_code_points(&code_points(lone.as_wtf8()));
        assert_eq!(rebuilt, lone);
        assert_eq!(Json::String(rebuilt).to_js_string(), r#""\ude00x\ud83d""#);
        assert_eq!(utf8_len(&lone), 7);
    }

    #[test]
    fn well_formed_text_round_trips_as_utf8() {
        let text = "é源😀\u{2028}";
        let cps = code_points(text.as_bytes());
        assert_eq!(cps.len(), 4);
        assert_eq!(from_code_points(&cps), JsString::from(text));
        assert!(from_code_points(&cps).as_str().is_some());
    }
}
