//! The bounded tables the MCP surface besides tools keeps in [`super::ServerState`],
//! between requests: the count of resource subscriptions held ([`Subscriptions`]), and
//! list tools' values kept briefly for completions ([`Completions`]). They know nothing
//! of the requests that use them (`subscriptions.rs`, `completion.rs`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The count of resource subscriptions held over all sessions.
#[derive(Default)]
pub(crate) struct Subscriptions {
    held: AtomicUsize,
}

impl Subscriptions {
    /// Takes a place when fewer than `cap` are held.
    pub(super) fn take(&self, cap: usize) -> bool {
        let held = self.held.fetch_add(1, Ordering::Relaxed);
        if held >= cap {
            self.held.fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Gives a place back.
    pub(super) fn give_back(&self) {
        self.held.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How long a list tool's values are kept.
const CACHE_TTL: Duration = Duration::from_secs(15);

/// The most bytes of values the cache holds, over all entries.
const CACHE_BYTES: usize = 4 * 1024 * 1024;

/// Values of list tools, kept briefly (see the module doc).
#[derive(Default)]
pub(crate) struct Completions {
    entries: Mutex<HashMap<String, Entry>>,
}

struct Entry {
    at: Instant,
    bytes: usize,
    values: Arc<Vec<String>>,
}

impl Completions {
    pub(super) fn get(&self, key: &str) -> Option<Arc<Vec<String>>> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let entry = entries.get(key)?;
        (entry.at.elapsed() < CACHE_TTL).then(|| entry.values.clone())
    }

    pub(super) fn put(&self, key: String, values: Arc<Vec<String>>) {
        let bytes = key.len() + values.iter().map(|v| v.len() + 24).sum::<usize>();
        if bytes > CACHE_BYTES / 4 {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.retain(|_, entry| entry.at.elapsed() < CACHE_TTL);
        let mut held: usize = entries.values().map(|e| e.bytes).sum();
        while held + bytes > CACHE_BYTES {
            let Some(oldest) = entries
                .iter()
                .min_by_key(|(_, e)| e.at)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            held -= entries.remove(&oldest).map_or(0, |e| e.bytes);
        }
        entries.insert(
            key,
            Entry {
                at: Instant::now(),
                bytes,
                values,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_stays_within_its_bytes() {
        let cache = Completions::default();
        let big = Arc::new(vec!["x".repeat(1000); 1000]);
        for i in 0..20 {
            cache.put(format!("k{i}"), big.clone());
        }
        let held: usize = cache
            .entries
            .lock()
            .unwrap()
            .values()
            .map(|e| e.bytes)
            .sum();
        assert!(held <= CACHE_BYTES, "{held}");
        assert!(cache.get("k19").is_some());
        assert!(cache.get("k0").is_none());
    }

    #[test]
    fn subscriptions_are_counted_up_to_the_cap() {
        let count = Subscriptions::default();
        assert!(count.take(2) && count.take(2));
        assert!(!count.take(2));
        count.give_back();
        assert!(count.take(2));
    }
}
