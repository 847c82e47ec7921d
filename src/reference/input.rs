//! What `prepare` checks before any read: the reference
//! configuration, and the normalization of a message's references (shape checks, self
//! reference, first-label-wins deduplication, the distinct-source limit) in DSH's exact order.

use super::mention::SessionReference;
use super::{DEFAULT_CANDIDATE_LIMIT, DEFAULT_MAX_REFERENCE_BYTES, MAX_REFERENCES};
use crate::error::{Error, ErrorCode};
use crate::json::{self, JsString, Json, MAX_SAFE_INTEGER};

/// The reference layer's settings, validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReferenceConfig {
    /// Distinct sources one message may cite (1 to 3).
    pub max_references: u64,
    /// Default number of discovery candidates.
    pub candidate_limit: u64,
    /// Per-source byte budget of the snapshot object's tag-safe JSON.
    pub max_reference_bytes: u64,
}

impl Default for ReferenceConfig {
    fn default() -> Self {
        ReferenceConfig {
            max_references: MAX_REFERENCES,
            candidate_limit: DEFAULT_CANDIDATE_LIMIT,
            max_reference_bytes: DEFAULT_MAX_REFERENCE_BYTES,
        }
    }
}

impl ReferenceConfig {
    /// Validates settings: each must be a safe integer above 0 (checked in field order), then
    /// `max_references` must not exceed 3. Fails with `SESSION_REFERENCE_INVALID_CONFIG`.
    pub fn validate(self) -> Result<Self, Error> {
        for (name, value) in [
            ("maxReferences", self.max_references),
            ("candidateLimit", self.candidate_limit),
            ("maxReferenceBytes", self.max_reference_bytes),
        ] {
            if value == 0 || value as f64 > MAX_SAFE_INTEGER {
                return Err(not_positive(name));
            }
        }
        if self.max_references > MAX_REFERENCES {
            return Err(Error::new(
                ErrorCode::ReferenceInvalidConfig,
                "session-reference: maxReferences must not exceed 3",
            ));
        }
        Ok(self)
    }

    /// Reads `{maxReferences?, candidateLimit?, maxReferenceBytes?}` as DSH does: a missing or
    /// `null` value takes its default; any other value must be a positive safe integer (the
    /// string `"3"` is not). Other keys are ignored. `None` means all defaults; a config that
    /// is not an object fails with `SESSION_REFERENCE_INVALID_CONFIG`.
    pub fn from_json(config: Option<&Json>) -> Result<Self, Error> {
        let Some(config) = config else {
            return Ok(ReferenceConfig::default());
        };
        let Some(object) = config.as_object() else {
            return Err(Error::new(
                ErrorCode::ReferenceInvalidConfig,
                "session-reference: config must be an object",
            ));
        };
        let defaults = ReferenceConfig::default();
        let read = |name: &str, default: u64| match object.get(name) {
            None | Some(Json::Null) => Ok(default),
            Some(value) => value
                .as_safe_integer()
                .filter(|n| *n > 0)
                .map(|n| n as u64)
                .ok_or_else(|| not_positive(name)),
        };
        ReferenceConfig {
            max_references: read("maxReferences", defaults.max_references)?,
            candidate_limit: read("candidateLimit", defaults.candidate_limit)?,
            max_reference_bytes: read("maxReferenceBytes", defaults.max_reference_bytes)?,
        }
        .validate()
    }
}

fn not_positive(name: &str) -> Error {
    Error::new(
        ErrorCode::ReferenceInvalidConfig,
        format!("session-reference: {name} must be a positive safe integer"),
    )
}

/// One reference as a host passes it to `prepare`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionReferenceInput {
    /// The source session's id; any string, `""` included.
    pub session_id: JsString,
    /// Display text; the id when absent.
    pub label: Option<JsString>,
}

impl From<SessionReference> for SessionReferenceInput {
    fn from(reference: SessionReference) -> Self {
        SessionReferenceInput {
            session_id: reference.session_id,
            label: Some(reference.label),
        }
    }
}

/// Normalizes typed references: self references fail with `SESSION_REFERENCE_SELF_REFERENCE`
/// (every occurrence, before deduplication), repeats of an id are skipped (the first label
/// wins), a missing label becomes the id, and more than `max_references` distinct sources fail
/// with `SESSION_REFERENCE_TOO_MANY` after the walk.
pub fn normalize_references(
    target_id: &JsString,
    references: &[SessionReferenceInput],
    max_references: u64,
) -> Result<Vec<SessionReference>, Error> {
    normalize(
        target_id,
        references.iter().map(|r| Ok((&r.session_id, r.label.as_ref()))),
        max_references,
    )
}

/// [`normalize_references`] over JSON values as a binding receives them, with DSH's shape
/// checks in the same walk: a non-object (including `null`) or a `sessionId` that is not a
/// string or a `label` that is present and not a string (`null` included) fails with
/// `SESSION_REFERENCE_INVALID_REFERENCE` at its position in the list.
pub fn normalize_reference_values(
    target_id: &JsString,
    references: &[Json],
    max_references: u64,
) -> Result<Vec<SessionReference>, Error> {
    normalize(target_id, references.iter().map(reference_fields), max_references)
}

fn reference_fields(value: &Json) -> Result<(&JsString, Option<&JsString>), Error> {
    let object = value.as_object().ok_or_else(|| {
        Error::new(
            ErrorCode::ReferenceInvalidReference,
            "session reference must be an object",
        )
    })?;
    let bad_shape = || {
        Error::new(
            ErrorCode::ReferenceInvalidReference,
            "session reference must contain a string sessionId and optional string label",
        )
    };
    let session_id = object
        .get("sessionId")
        .and_then(Json::as_js_string)
        .ok_or_else(bad_shape)?;
    let label = match object.get("label") {
        None => None,
        Some(Json::String(label)) => Some(label),
        Some(_) => return Err(bad_shape()),
    };
    Ok((session_id, label))
}

fn normalize<'a>(
    target_id: &JsString,
    references: impl Iterator<Item = Result<(&'a JsString, Option<&'a JsString>), Error>>,
    max_references: u64,
) -> Result<Vec<SessionReference>, Error> {
    let mut normalized: Vec<SessionReference> = Vec::new();
    for reference in references {
        let (session_id, label) = reference?;
        if session_id.as_wtf8() == target_id.as_wtf8() {
            let mut quoted = String::new();
            json::write_string(target_id, &mut quoted);
            return Err(Error::new(
                ErrorCode::ReferenceSelfReference,
                format!("session {quoted} cannot reference itself"),
            ));
        }
        if normalized
            .iter()
            .any(|n| n.session_id.as_wtf8() == session_id.as_wtf8())
        {
            continue;
        }
        normalized.push(SessionReference {
            session_id: session_id.clone(),
            label: label.unwrap_or(session_id).clone(),
        });
    }
    if normalized.len() as u64 > max_references {
        return Err(Error::new(
            ErrorCode::ReferenceTooMany,
            format!("a message may reference at most {max_references} sessions"),
        ));
    }
    Ok(normalized)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::ParseLimits;

    fn parse(text: &str) -> Json {
        Json::parse(text, ParseLimits::default()).expect("valid JSON")
    }

    fn code(result: Result<impl std::fmt::Debug, Error>) -> ErrorCode {
        result.expect_err("fails").code
    }

    fn values(text: &str) -> Vec<Json> {
        parse(text).as_array().expect("array").to_vec()
    }

    #[test]
    fn config_defaults_and_limits() {
        assert_eq!(
            ReferenceConfig::from_json(None).expect("defaults"),
            ReferenceConfig::default()
        );
        let config = ReferenceConfig::from_json(Some(&parse(
            r#"{"maxReferences":null,"candidateLimit":7,"maxReferenceBytes":1,"other":"x"}"#,
        )))
        .expect("valid");
        assert_eq!(
            config,
            ReferenceConfig {
                max_references: 3,
                candidate_limit: 7,
                max_reference_bytes: 1
            }
        );
        for bad in [
            r#"{"maxReferences":4}"#,
            r#"{"maxReferences":0}"#,
            r#"{"maxReferences":"3"}"#,
            r#"{"candidateLimit":1.5}"#,
            r#"{"candidateLimit":-1}"#,
            r#"{"maxReferenceBytes":9007199254740992}"#,
            r#"{"maxReferenceBytes":true}"#,
            "[]",
        ] {
            assert_eq!(
                code(ReferenceConfig::from_json(Some(&parse(bad)))),
                ErrorCode::ReferenceInvalidConfig,
                "{bad}"
            );
        }
        // The integer checks run in field order before the maxReferences ceiling.
        let error = ReferenceConfig::from_json(Some(&parse(r#"{"maxReferences":4,"maxReferenceBytes":0}"#)))
            .expect_err("invalid");
        assert_eq!(
            error.message,
            "session-reference: maxReferenceBytes must be a positive safe integer"
        );
        assert!(ReferenceConfig::from_json(Some(&parse(r#"{"maxReferenceBytes":9007199254740991}"#))).is_ok());
    }

    #[test]
    fn first_label_wins_and_duplicates_do_not_count() {
        let refs = values(
            r#"[{"sessionId":"b","label":"B"},{"sessionId":"c"},{"sessionId":"b","label":"other"},{"sessionId":"d","label":""},{"sessionId":"c"}]"#,
        );
        let normalized = normalize_reference_values(&JsString::from("t"), &refs, 3).expect("three distinct");
        let pairs: Vec<(String, String)> = normalized
            .iter()
            .map(|r| (r.session_id.to_string(), r.label.to_string()))
            .collect();
        assert_eq!(
            pairs,
            vec![
                ("b".into(), "B".into()),
                ("c".into(), "c".into()),
                ("d".into(), String::new())
            ]
        );
        assert_eq!(
            code(normalize_reference_values(&JsString::from("t"), &refs, 2)),
            ErrorCode::ReferenceTooMany
        );
    }

    #[test]
    fn error_precedence_follows_list_order() {
        let target = JsString::from("self");
        let check = |text: &str, limit: u64| code(normalize_reference_values(&target, &values(text), limit));
        // A bad element anywhere beats TOO_MANY.
        assert_eq!(
            check(
                r#"[{"sessionId":"a"},{"sessionId":"b"},{"sessionId":"c"},{"sessionId":"d"},{"sessionId":"self"}]"#,
                3
            ),
            ErrorCode::ReferenceSelfReference
        );
        assert_eq!(
            check(r#"[{"sessionId":"self"},null]"#, 3),
            ErrorCode::ReferenceSelfReference
        );
        assert_eq!(
            check(r#"[null,{"sessionId":"self"}]"#, 3),
            ErrorCode::ReferenceInvalidReference
        );
        assert_eq!(
            check(r#"[{"sessionId":"a","label":null}]"#, 3),
            ErrorCode::ReferenceInvalidReference
        );
        assert_eq!(check(r#"[{"sessionId":1}]"#, 3), ErrorCode::ReferenceInvalidReference);
        assert_eq!(check(r#"["a"]"#, 3), ErrorCode::ReferenceInvalidReference);
        assert_eq!(
            check(r#"[{"sessionId":"a"},{"sessionId":"self","label":"x"}]"#, 3),
            ErrorCode::ReferenceSelfReference
        );
        assert!(normalize_reference_values(&target, &[], 1).expect("empty").is_empty());
    }

    #[test]
    fn typed_inputs_normalize_the_same_way() {
        let inputs = vec![
            SessionReferenceInput {
                session_id: JsString::from("a"),
                label: None,
            },
            SessionReferenceInput {
                session_id: JsString::from("a"),
                label: Some(JsString::from("later")),
            },
        ];
        let normalized = normalize_references(&JsString::from("t"), &inputs, 1).expect("one distinct");
        assert_eq!(normalized[0].label, JsString::from("a"));
        let error = normalize_references(&JsString::from("a"), &inputs, 3).expect_err("self");
        assert_eq!(error.message, r#"session "a" cannot reference itself"#);
    }
}
