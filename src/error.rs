//! The crate's one error type, [`Error`], and the stable codes ([`ErrorCode`]) it carries.
//!
//! Codes are part of the public contract: `SESSION_QUERY_*` are DSH's own query codes, and
//! `SESSION_LOAD_*` name what can go wrong while reading an archive, so a load report can say
//! exactly why one session was left out while the others loaded. `SESSION_REFERENCE_*` are
//! DSH's seven cross-session reference codes.

use std::fmt;

/// A stable, machine-readable error code. `as_str` gives the wire spelling.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    /// The decoded log fails validation: header fields, the event envelope, a message shape,
    /// a legacy shape, request headers or the surface fold.
    LoadCorrupt,
    /// The file itself is damaged: no header line, a damaged line before a committed turn end,
    /// or a damaged record inside a complete Zstandard frame.
    LoadDamaged,
    /// The first record is not a session header (DSH's listing passes such files over).
    LoadInvalidHeader,
    /// A Zstandard frame is malformed, fails its checksum, or is not a Zstandard frame at all.
    LoadCorruptFrame,
    /// The header's format `version` is not 0 (written by another harness version).
    LoadUnsupportedVersion,
    /// An event type DSH does not know, without `"ignorable": true`.
    LoadUnknownEventType,
    /// A configured bound (decompressed bytes, line length, JSON depth, entry count) was hit.
    LoadLimitExceeded,
    /// The header's id or cwd does not match the directory the log was found in.
    LoadIdentityMismatch,
    /// A persistence root breaks the layout rules (mixed encodings, legacy flat files,
    /// one id in two project directories).
    LoadLayout,
    /// An input is not a readable archive (bad ZIP, unreadable entry).
    LoadInvalidArchive,
    /// The file system refused a read.
    LoadIo,

    /// `SESSION_QUERY_ABORTED`.
    QueryAborted,
    /// `SESSION_QUERY_CORRUPT_SESSION`.
    QueryCorruptSession,
    /// `SESSION_QUERY_EVENT_NOT_FOUND`.
    QueryEventNotFound,
    /// `SESSION_QUERY_INDEX_FAILED`.
    QueryIndexFailed,
    /// `SESSION_QUERY_INVALID_CONFIG`.
    QueryInvalidConfig,
    /// `SESSION_QUERY_INVALID_CURSOR`.
    QueryInvalidCursor,
    /// `SESSION_QUERY_INVALID_FILTER`.
    QueryInvalidFilter,
    /// `SESSION_QUERY_INVALID_LIMIT`.
    QueryInvalidLimit,
    /// `SESSION_QUERY_INVALID_QUERY`.
    QueryInvalidQuery,
    /// `SESSION_QUERY_INVALID_LINEAGE`.
    QueryInvalidLineage,
    /// `SESSION_QUERY_INVALID_SURFACE`.
    QueryInvalidSurface,
    /// `SESSION_QUERY_INVALID_WINDOW`.
    QueryInvalidWindow,
    /// `SESSION_QUERY_PERSISTENCE_FAILED`.
    QueryPersistenceFailed,
    /// `SESSION_QUERY_SEARCH_DISABLED`.
    QuerySearchDisabled,
    /// `SESSION_QUERY_SESSION_NOT_FOUND`.
    QuerySessionNotFound,
    /// `SESSION_QUERY_STALE_CURSOR`.
    QueryStaleCursor,
    /// `SESSION_QUERY_SOURCE_CONFLICT`.
    QuerySourceConflict,

    /// `SESSION_REFERENCE_INVALID_CONFIG`: a reference setting is not a positive safe integer,
    /// or `maxReferences` exceeds 3.
    ReferenceInvalidConfig,
    /// `SESSION_REFERENCE_INVALID_REFERENCE`: a malformed or non-canonical `dsh-session:` URI,
    /// a reference of the wrong shape, or a bad candidate limit.
    ReferenceInvalidReference,
    /// `SESSION_REFERENCE_SELF_REFERENCE`: a message cites its own session.
    ReferenceSelfReference,
    /// `SESSION_REFERENCE_TOO_MANY`: more distinct sources than `maxReferences`.
    ReferenceTooMany,
    /// `SESSION_REFERENCE_READ_FAILED`: a cited session could not be read.
    ReferenceReadFailed,
    /// `SESSION_REFERENCE_BUDGET_EXCEEDED`: a source cannot fit the per-source byte budget.
    ReferenceBudgetExceeded,
    /// `SESSION_REFERENCE_CANCELLED`: the caller cancelled the preparation or listing.
    ReferenceCancelled,

    /// A load option is out of its range (`LoadOptions::validate`): a bound of zero.
    LoadInvalidOption,

    /// `SESSION_INVALID_ARGUMENT`: a call's arguments are not of the method's shape (an unknown
    /// method, a missing parameter, an unknown option key, a value of the wrong type where the
    /// face checks types strictly). DSH's own validation codes take precedence where DSH has one.
    InvalidArgument,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [ErrorCode; 37] = [
        ErrorCode::LoadCorrupt,
        ErrorCode::LoadDamaged,
        ErrorCode::LoadInvalidHeader,
        ErrorCode::LoadCorruptFrame,
        ErrorCode::LoadUnsupportedVersion,
        ErrorCode::LoadUnknownEventType,
        ErrorCode::LoadLimitExceeded,
        ErrorCode::LoadIdentityMismatch,
        ErrorCode::LoadLayout,
        ErrorCode::LoadInvalidArchive,
        ErrorCode::LoadIo,
        ErrorCode::QueryAborted,
        ErrorCode::QueryCorruptSession,
        ErrorCode::QueryEventNotFound,
        ErrorCode::QueryIndexFailed,
        ErrorCode::QueryInvalidConfig,
        ErrorCode::QueryInvalidCursor,
        ErrorCode::QueryInvalidFilter,
        ErrorCode::QueryInvalidLimit,
        ErrorCode::QueryInvalidQuery,
        ErrorCode::QueryInvalidLineage,
        ErrorCode::QueryInvalidSurface,
        ErrorCode::QueryInvalidWindow,
        ErrorCode::QueryPersistenceFailed,
        ErrorCode::QuerySearchDisabled,
        ErrorCode::QuerySessionNotFound,
        ErrorCode::QueryStaleCursor,
        ErrorCode::QuerySourceConflict,
        ErrorCode::ReferenceInvalidConfig,
        ErrorCode::ReferenceInvalidReference,
        ErrorCode::ReferenceSelfReference,
        ErrorCode::ReferenceTooMany,
        ErrorCode::ReferenceReadFailed,
        ErrorCode::ReferenceBudgetExceeded,
        ErrorCode::ReferenceCancelled,
        ErrorCode::LoadInvalidOption,
        ErrorCode::InvalidArgument,
    ];

    /// The stable wire spelling, e.g. `"SESSION_QUERY_INVALID_SURFACE"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::LoadCorrupt => "SESSION_LOAD_CORRUPT",
            ErrorCode::LoadDamaged => "SESSION_LOAD_DAMAGED",
            ErrorCode::LoadInvalidHeader => "SESSION_LOAD_INVALID_HEADER",
            ErrorCode::LoadCorruptFrame => "SESSION_LOAD_CORRUPT_FRAME",
            ErrorCode::LoadUnsupportedVersion => "SESSION_LOAD_UNSUPPORTED_VERSION",
            ErrorCode::LoadUnknownEventType => "SESSION_LOAD_UNKNOWN_EVENT_TYPE",
            ErrorCode::LoadLimitExceeded => "SESSION_LOAD_LIMIT_EXCEEDED",
            ErrorCode::LoadIdentityMismatch => "SESSION_LOAD_IDENTITY_MISMATCH",
            ErrorCode::LoadLayout => "SESSION_LOAD_LAYOUT",
            ErrorCode::LoadInvalidArchive => "SESSION_LOAD_INVALID_ARCHIVE",
            ErrorCode::LoadIo => "SESSION_LOAD_IO",
            ErrorCode::QueryAborted => "SESSION_QUERY_ABORTED",
            ErrorCode::QueryCorruptSession => "SESSION_QUERY_CORRUPT_SESSION",
            ErrorCode::QueryEventNotFound => "SESSION_QUERY_EVENT_NOT_FOUND",
            ErrorCode::QueryIndexFailed => "SESSION_QUERY_INDEX_FAILED",
            ErrorCode::QueryInvalidConfig => "SESSION_QUERY_INVALID_CONFIG",
            ErrorCode::QueryInvalidCursor => "SESSION_QUERY_INVALID_CURSOR",
            ErrorCode::QueryInvalidFilter => "SESSION_QUERY_INVALID_FILTER",
            ErrorCode::QueryInvalidLimit => "SESSION_QUERY_INVALID_LIMIT",
            ErrorCode::QueryInvalidQuery => "SESSION_QUERY_INVALID_QUERY",
            ErrorCode::QueryInvalidLineage => "SESSION_QUERY_INVALID_LINEAGE",
            ErrorCode::QueryInvalidSurface => "SESSION_QUERY_INVALID_SURFACE",
            ErrorCode::QueryInvalidWindow => "SESSION_QUERY_INVALID_WINDOW",
            ErrorCode::QueryPersistenceFailed => "SESSION_QUERY_PERSISTENCE_FAILED",
            ErrorCode::QuerySearchDisabled => "SESSION_QUERY_SEARCH_DISABLED",
            ErrorCode::QuerySessionNotFound => "SESSION_QUERY_SESSION_NOT_FOUND",
            ErrorCode::QueryStaleCursor => "SESSION_QUERY_STALE_CURSOR",
            ErrorCode::QuerySourceConflict => "SESSION_QUERY_SOURCE_CONFLICT",
            ErrorCode::ReferenceInvalidConfig => "SESSION_REFERENCE_INVALID_CONFIG",
            ErrorCode::ReferenceInvalidReference => "SESSION_REFERENCE_INVALID_REFERENCE",
            ErrorCode::ReferenceSelfReference => "SESSION_REFERENCE_SELF_REFERENCE",
            ErrorCode::ReferenceTooMany => "SESSION_REFERENCE_TOO_MANY",
            ErrorCode::ReferenceReadFailed => "SESSION_REFERENCE_READ_FAILED",
            ErrorCode::ReferenceBudgetExceeded => "SESSION_REFERENCE_BUDGET_EXCEEDED",
            ErrorCode::ReferenceCancelled => "SESSION_REFERENCE_CANCELLED",
            ErrorCode::LoadInvalidOption => "SESSION_LOAD_INVALID_OPTION",
            ErrorCode::InvalidArgument => "SESSION_INVALID_ARGUMENT",
        }
    }

    /// The code DSH's query service reports when it reads a stored session that failed to
    /// load this way: `SESSION_QUERY_CORRUPT_SESSION` for validation failures after decoding,
    /// `SESSION_QUERY_PERSISTENCE_FAILED` for damage its file scanner finds and for refusals,
    /// and `SESSION_QUERY_SESSION_NOT_FOUND` for files its listing passes over.
    pub fn dsh_query_code(self) -> ErrorCode {
        match self {
            ErrorCode::LoadCorrupt => ErrorCode::QueryCorruptSession,
            ErrorCode::LoadInvalidHeader => ErrorCode::QuerySessionNotFound,
            ErrorCode::LoadDamaged
            | ErrorCode::LoadCorruptFrame
            | ErrorCode::LoadUnsupportedVersion
            | ErrorCode::LoadUnknownEventType
            | ErrorCode::LoadLimitExceeded
            | ErrorCode::LoadIdentityMismatch
            | ErrorCode::LoadLayout
            | ErrorCode::LoadInvalidArchive
            | ErrorCode::LoadIo => ErrorCode::QueryPersistenceFailed,
            other => other,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// An error with a stable [`ErrorCode`] and a human-readable message.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{code}: {message}")]
pub struct Error {
    /// What kind of failure this is; stable across releases.
    pub code: ErrorCode,
    /// What went wrong, for people. Not stable.
    pub message: String,
}

impl Error {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }

    /// A `SESSION_INVALID_ARGUMENT` error: the call's arguments do not fit the method.
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidArgument, message)
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_prefixed() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            let s = code.as_str();
            assert!(
                s.starts_with("SESSION_LOAD_")
                    || s.starts_with("SESSION_QUERY_")
                    || s.starts_with("SESSION_REFERENCE_")
                    || s == "SESSION_INVALID_ARGUMENT",
                "{s}"
            );
            assert!(seen.insert(s), "duplicate {s}");
        }
        let query_codes = ErrorCode::ALL
            .iter()
            .filter(|c| c.as_str().starts_with("SESSION_QUERY_"))
            .count();
        assert_eq!(query_codes, 17, "DSH has exactly 17 query codes");
        let reference_codes = ErrorCode::ALL
            .iter()
            .filter(|c| c.as_str().starts_with("SESSION_REFERENCE_"))
            .count();
        assert_eq!(reference_codes, 7, "DSH has exactly 7 session-reference codes");
    }
}
