//! The verdicts on tokens already checked, so a client's every request does not cost a
//! signature check or a round trip to the introspection endpoint. Keyed by the SHA-256 of
//! the token (the token itself is not kept as a key), bounded in entries: at the cap, the
//! expired entries go first, then those that expire soonest.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::identity::Caller;

/// Entries kept at most.
pub const MAX_ENTRIES: usize = 10_000;

/// What was decided about one token.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// Valid; `keys` is the key-set generation its signature was checked under (0 for an
    /// introspected token), so a verdict dies with the keys it relied on. An introspected
    /// token's verdict is trusted until `recheck_at`, then asked about again (a revocation
    /// shows then); it is kept until the token expires, so the re-check of a token once
    /// found active is not a stranger's.
    Valid {
        caller: Arc<Caller>,
        keys: u64,
        recheck_at: Option<Instant>,
    },
    /// Refused by the introspection endpoint (kept briefly, so a bad token cannot make
    /// restmcp ask the authorization server on every request).
    Invalid(String),
}

struct Entry {
    verdict: Verdict,
    until: Instant,
}

/// A bounded map from token digest to verdict.
pub struct TokenCache {
    entries: Mutex<HashMap<[u8; 32], Entry>>,
    capacity: usize,
}

/// The cache key of `token`.
pub fn digest(token: &str) -> [u8; 32] {
    let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
    let mut key = [0u8; 32];
    key.copy_from_slice(digest.as_ref());
    key
}

impl TokenCache {
    pub fn new(capacity: usize) -> TokenCache {
        TokenCache {
            entries: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }

    /// The verdict on `key`, if one is kept and still good.
    pub fn get(&self, key: &[u8; 32], now: Instant) -> Option<Verdict> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        match entries.get(key) {
            Some(entry) if entry.until > now => Some(entry.verdict.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Keeps `verdict` until `until`.
    pub fn put(&self, key: [u8; 32], verdict: Verdict, until: Instant, now: Instant) {
        if until <= now {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            entries.retain(|_, entry| entry.until > now);
            while entries.len() >= self.capacity {
                let Some(soonest) = entries
                    .iter()
                    .min_by_key(|(_, entry)| entry.until)
                    .map(|(key, _)| *key)
                else {
                    break;
                };
                entries.remove(&soonest);
            }
        }
        entries.insert(key, Entry { verdict, until });
    }

    /// Verdicts held (expired ones included until they are next looked at or pushed out).
    pub fn held(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn verdicts_expire_and_the_cache_stays_within_its_cap_soonest_expiring_first() {
        let cache = TokenCache::new(3);
        let now = Instant::now();
        let secs = Duration::from_secs;
        cache.put(
            digest("a"),
            Verdict::Invalid("a".into()),
            now + secs(10),
            now,
        );
        cache.put(
            digest("b"),
            Verdict::Invalid("b".into()),
            now + secs(30),
            now,
        );
        cache.put(
            digest("c"),
            Verdict::Invalid("c".into()),
            now + secs(20),
            now,
        );
        cache.put(
            digest("d"),
            Verdict::Invalid("d".into()),
            now + secs(40),
            now,
        );
        assert_eq!(cache.held(), 3);
        assert!(
            cache.get(&digest("a"), now).is_none(),
            "the soonest to expire made room"
        );
        assert!(cache.get(&digest("d"), now).is_some());
        assert!(cache.get(&digest("c"), now + secs(25)).is_none(), "expired");
        // An already expired verdict is not kept at all.
        cache.put(digest("e"), Verdict::Invalid("e".into()), now, now);
        assert!(cache.get(&digest("e"), now).is_none());
    }
}
