//! Tools' rate limits (`apis.NAME.rate_limits`): a token bucket per tool shared by the
//! callers without an identity, and one per caller (by pseudonym), on the buckets of
//! [`crate::rate`].

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::config::RateLimit;
use crate::rate::{Bucket, Keyed};

/// Callers per tool whose buckets are kept; at the cap, the buckets that have refilled
/// (the same as new ones) go, else the one least recently used.
const MAX_CALLERS_PER_TOOL: usize = 10_000;

/// A tool's rate limit: the bucket shared by the callers without an identity, and each
/// caller's own.
pub(super) struct Limited {
    shared: Mutex<Bucket>,
    callers: Keyed,
}

impl Limited {
    pub(super) fn new(limit: &RateLimit) -> Limited {
        Limited {
            shared: Mutex::new(Bucket::new(limit.per_second, limit.burst())),
            callers: Keyed::new(limit.per_second, limit.burst(), MAX_CALLERS_PER_TOOL),
        }
    }

    /// Takes a token from `caller`'s bucket (the shared one without a caller).
    pub(super) fn take(&self, caller: Option<&str>, now: Instant) -> Result<(), Duration> {
        match caller {
            Some(caller) => self.callers.take(caller, now),
            None => self
                .shared
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take(now),
        }
    }
}
