//! Token buckets: so many events a second with a burst, refilled continuously; and
//! [`Keyed`], one bucket per key (a caller, a client address) in a table bounded in entries,
//! so whoever makes up new keys cannot grow it. Per-tool rate limits
//! ([`crate::upstream`]) and the introspections of unknown OAuth tokens
//! ([`crate::http`]'s resource server) count with them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A token bucket (tokens refill continuously up to `burst`).
#[derive(Debug, Clone)]
pub struct Bucket {
    per_second: f64,
    burst: f64,
    tokens: f64,
    updated: Instant,
}

impl Bucket {
    /// A full bucket of `burst` tokens refilling at `per_second`.
    pub fn new(per_second: f64, burst: u32) -> Bucket {
        let burst = f64::from(burst.max(1));
        Bucket {
            per_second,
            burst,
            tokens: burst,
            updated: Instant::now(),
        }
    }

    /// True when the bucket has refilled by `now`: it is then the same as a new one.
    pub fn is_full(&self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        self.tokens + elapsed * self.per_second >= self.burst
    }

    /// Takes a token, or says how long until one is available.
    pub fn take(&mut self, now: Instant) -> Result<(), Duration> {
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.per_second).min(self.burst);
        self.updated = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else if self.per_second > 0.0 {
            Err(Duration::from_secs_f64(
                ((1.0 - self.tokens) / self.per_second).min(86_400.0),
            ))
        } else {
            Err(Duration::from_secs(86_400))
        }
    }
}

/// One bucket per key, at most `max_keys` of them: a new key at the cap first drops the
/// buckets that have refilled (the same as new ones), else the one used the longest ago.
pub struct Keyed {
    per_second: f64,
    burst: u32,
    max_keys: usize,
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl Keyed {
    pub fn new(per_second: f64, burst: u32, max_keys: usize) -> Keyed {
        Keyed {
            per_second,
            burst,
            max_keys: max_keys.max(1),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes a token from `key`'s bucket, or says how long until one is available.
    pub fn take(&self, key: &str, now: Instant) -> Result<(), Duration> {
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if !buckets.contains_key(key) && buckets.len() >= self.max_keys {
            buckets.retain(|_, bucket| !bucket.is_full(now));
            if buckets.len() >= self.max_keys
                && let Some(oldest) = buckets
                    .iter()
                    .min_by_key(|(_, bucket)| bucket.updated)
                    .map(|(key, _)| key.clone())
            {
                buckets.remove(&oldest);
            }
        }
        buckets
            .entry(key.to_string())
            .or_insert_with(|| Bucket::new(self.per_second, self.burst))
            .take(now)
    }

    /// Keys with a bucket now.
    pub fn len(&self) -> usize {
        self.buckets.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// True when no key has a bucket.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_allows_its_burst_then_its_rate() {
        let start = Instant::now();
        let mut bucket = Bucket::new(2.0, 3);
        for _ in 0..3 {
            assert!(bucket.take(start).is_ok());
        }
        let wait = bucket.take(start).expect_err("empty");
        assert!(wait > Duration::from_millis(400) && wait <= Duration::from_millis(500));
        assert!(bucket.take(start + Duration::from_millis(500)).is_ok());
        assert!(!bucket.is_full(start + Duration::from_millis(500)));
        assert!(bucket.is_full(start + Duration::from_secs(2)));
    }

    #[test]
    fn keys_have_their_own_buckets_and_the_table_stays_bounded() {
        let now = Instant::now();
        let keyed = Keyed::new(0.001, 1, 100);
        assert!(keyed.take("a", now).is_ok());
        assert!(keyed.take("a", now).is_err(), "a's one token is spent");
        assert!(keyed.take("b", now).is_ok(), "b has its own");
        for n in 0..1_000 {
            let _ = keyed.take(&format!("made-up-{n}"), now);
        }
        assert!(keyed.len() <= 100, "{}", keyed.len());
    }
}
