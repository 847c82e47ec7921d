//! Cancellation of reference calls: a token a host cancels from anywhere
//! (another thread, a UI teardown), checked between the steps of `prepare` and discovery.

use crate::error::{Error, ErrorCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A shared cancellation flag; clones observe the same flag. Once cancelled it stays so.
#[derive(Clone, Debug, Default)]
pub struct CancellationToken(Arc<AtomicBool>);

impl CancellationToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        CancellationToken::default()
    }

    /// Cancels every call observing this token (or a clone of it).
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// DSH's cancellation error (the same text for discovery and preparation).
pub(crate) fn cancelled() -> Error {
    Error::new(
        ErrorCode::ReferenceCancelled,
        "session reference preparation was cancelled",
    )
}

/// Fails with `SESSION_REFERENCE_CANCELLED` when the token is cancelled.
pub(crate) fn check(token: Option<&CancellationToken>) -> Result<(), Error> {
    if token.is_some_and(CancellationToken::is_cancelled) {
        Err(cancelled())
    } else {
        Ok(())
    }
}
