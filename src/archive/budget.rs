//! The decompression budget of one load, and the compression-ratio guard that stops a bomb
//! after a few multiples of its own size instead of at the configured limit.

use crate::error::{Error, ErrorCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes a compressed stream may always yield, whatever its size: small logs compress better
/// than any sensible ratio (a header and a few events in a 200-byte frame).
pub const RATIO_SLACK_BYTES: u64 = 1 << 20;

/// The most a stream of `compressed` bytes may decompress to at `max_ratio`.
pub fn ratio_allowance(compressed: u64, max_ratio: u64) -> u64 {
    compressed.saturating_mul(max_ratio).saturating_add(RATIO_SLACK_BYTES)
}

/// What one load may still decompress, shared by every input and log of that load.
///
/// Cloning shares the count (it is one budget); it is checked once per chunk of output, so
/// the cost is one atomic add per mebibyte or so.
#[derive(Clone, Debug)]
pub struct LoadBudget {
    limit: u64,
    used: Arc<AtomicU64>,
}

impl LoadBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: u64) -> Self {
        LoadBudget {
            limit,
            used: Arc::new(AtomicU64::new(0)),
        }
    }

    /// A budget that never runs out (for single reads outside a load).
    pub fn unlimited() -> Self {
        LoadBudget::new(u64::MAX)
    }

    /// Bytes not yet spent.
    pub fn remaining(&self) -> u64 {
        self.limit.saturating_sub(self.used.load(Ordering::Relaxed))
    }

    /// Bytes spent so far.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Spends `bytes`, or fails with `SESSION_LOAD_LIMIT_EXCEEDED` (spending nothing) when
    /// fewer remain.
    pub fn spend(&self, bytes: u64) -> Result<(), Error> {
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            let next = used.saturating_add(bytes);
            if next > self.limit {
                return Err(self.exhausted());
            }
            match self
                .used
                .compare_exchange_weak(used, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Ok(()),
                Err(actual) => used = actual,
            }
        }
    }

    /// Gives back bytes spent on something that was then dropped.
    pub fn refund(&self, bytes: u64) {
        self.used.fetch_sub(bytes.min(self.used()), Ordering::Relaxed);
    }

    /// The error for a spent budget.
    pub fn exhausted(&self) -> Error {
        Error::new(
            ErrorCode::LoadLimitExceeded,
            format!(
                "this load has decompressed its limit of {} bytes (maxLoadBytes)",
                self.limit
            ),
        )
    }
}

impl Default for LoadBudget {
    fn default() -> Self {
        LoadBudget::unlimited()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_budget() {
        let budget = LoadBudget::new(10);
        let other = budget.clone();
        budget.spend(6).expect("fits");
        assert_eq!(other.remaining(), 4);
        assert_eq!(other.spend(5).expect_err("over").code, ErrorCode::LoadLimitExceeded);
        assert_eq!(budget.used(), 6, "a refused spend spends nothing");
        other.refund(6);
        assert_eq!(budget.remaining(), 10);
    }

    #[test]
    fn the_ratio_allowance_has_slack_and_saturates() {
        assert_eq!(ratio_allowance(0, 100), RATIO_SLACK_BYTES);
        assert_eq!(ratio_allowance(1000, 100), 100_000 + RATIO_SLACK_BYTES);
        assert_eq!(ratio_allowance(u64::MAX, 100), u64::MAX);
    }
}
