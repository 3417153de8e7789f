//! The store: short-lived keys that replicas behind a balancer must share, with atomic
//! set-if-absent and expiry. It holds stored results of calls made with an idempotency key
//! and redeemed confirmation states, so a retry or a replay that lands on another replica
//! is recognised there. In-process by default (for one replica), or a Redis or Valkey
//! server (`[server.store] url`), reached through the `redis` crate's auto-reconnecting
//! connection, every command bounded by `server.store.timeout_seconds`.
//!
//! The in-process store is bounded in bytes: what is kept for a caller ([`Keep::Cache`]:
//! stored results, notes) counts against `server.store.max_memory_bytes` and the caller's
//! share, `server.store.max_bytes_per_caller`, the least recently used going first; what
//! must not be forgotten early ([`Keep::Pinned`]: redeemed confirmations, cancelled tasks)
//! is small, kept to its expiry, and bounded in count (a new one is refused at the cap).
//!
//! Callers fail closed on a [`StoreError`]: a call whose idempotency cannot be checked, or a
//! confirmation whose single use cannot be recorded, is not sent.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::config::StoreSettings;

/// Keys that must not be forgotten early (redeemed confirmations, cancelled tasks) the
/// in-process store holds at most; past it, expired keys are dropped, and when none has
/// expired a new key is refused rather than an old one forgotten.
const MAX_MEMORY_KEYS: usize = 100_000;

/// What each key costs the in-process store's byte budget besides its key and value: the
/// map's slot, the recency index and the bookkeeping.
const ENTRY_OVERHEAD: usize = 128;

/// The store could not answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    #[error("the shared store ({0}) cannot be reached: {1}")]
    Unreachable(String, String),
    #[error("the shared store ({0}) did not answer within {1:.1} s")]
    TimedOut(String, f64),
    #[error("the in-process store is full ({MAX_MEMORY_KEYS} live keys)")]
    Full,
    #[error(
        "the value ({0} bytes) is larger than a caller's share of the in-process store \
         (server.store.max_bytes_per_caller)"
    )]
    TooLarge(usize),
    #[error("server.store.password_env: the environment variable {0} is not set")]
    MissingPassword(String),
}

/// What [`Store::claim`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The key was absent and now holds the value: the caller owns it.
    Claimed,
    /// The key already held this value.
    Held(String),
}

/// Who a key is kept for. A caller's keys are a cache: they count against the in-process
/// store's byte budget and the caller's share of it, and the least recently used go first
/// when either is spent (a stored idempotent result, a note of when an operation was last
/// looked at: losing one costs a request upstream, never a wrong answer). A pinned key is
/// kept until it expires whatever it costs (a redeemed confirmation, which must not be
/// redeemable again); there are few, and they are bounded in count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep<'a> {
    /// For the caller with this pseudonym (empty: the callers without one, together).
    Cache(&'a str),
    Pinned,
}

/// Short-lived shared keys (see the module documentation).
pub struct Store {
    backend: Backend,
    timeout: Duration,
}

enum Backend {
    Memory(Mutex<Memory>),
    Redis {
        connection: redis::aio::ConnectionManager,
        /// `host:port/db`, for errors (never a password).
        name: String,
    },
}

/// The in-process store: keys with their expiry, the cached ones by recency and owner.
struct Memory {
    entries: HashMap<String, Slot>,
    /// Every cached key by its last use, least recent first.
    recency: BTreeMap<u64, String>,
    owners: HashMap<Arc<str>, Usage>,
    /// Bytes the cached keys take, in all.
    cached_bytes: usize,
    /// Pinned keys held.
    pinned: usize,
    /// Counts uses, for recency.
    clock: u64,
    max_bytes: usize,
    max_bytes_per_caller: usize,
}

struct Slot {
    value: String,
    expires: Instant,
    /// The caller a cached key is kept for; `None` for a pinned key.
    owner: Option<Arc<str>>,
    /// The clock at its last use.
    used: u64,
}

/// One caller's cached keys: their bytes, and the keys by last use.
#[derive(Default)]
struct Usage {
    bytes: usize,
    recency: BTreeMap<u64, String>,
}

fn cost(key: &str, value: &str) -> usize {
    key.len() + value.len() + ENTRY_OVERHEAD
}

impl Memory {
    fn new(max_bytes: usize, max_bytes_per_caller: usize) -> Memory {
        Memory {
            entries: HashMap::new(),
            recency: BTreeMap::new(),
            owners: HashMap::new(),
            cached_bytes: 0,
            pinned: 0,
            clock: 0,
            max_bytes: max_bytes.max(1),
            max_bytes_per_caller: max_bytes_per_caller.clamp(1, max_bytes.max(1)),
        }
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// The live value of `key`, marked used.
    fn get(&mut self, key: &str, now: Instant) -> Option<String> {
        match self.entries.get(key) {
            Some(slot) if slot.expires > now => {}
            Some(_) => {
                self.remove(key);
                return None;
            }
            None => return None,
        }
        let used = self.tick();
        let slot = self.entries.get_mut(key)?;
        let (before, owner) = (slot.used, slot.owner.clone());
        slot.used = used;
        let value = slot.value.clone();
        if let Some(owner) = owner {
            self.recency.remove(&before);
            self.recency.insert(used, key.to_string());
            if let Some(usage) = self.owners.get_mut(&owner) {
                usage.recency.remove(&before);
                usage.recency.insert(used, key.to_string());
            }
        }
        Some(value)
    }

    fn remove(&mut self, key: &str) {
        let Some(slot) = self.entries.remove(key) else {
            return;
        };
        match slot.owner {
            None => self.pinned -= 1,
            Some(owner) => {
                let bytes = cost(key, &slot.value);
                self.cached_bytes -= bytes;
                self.recency.remove(&slot.used);
                if let Some(usage) = self.owners.get_mut(&owner) {
                    usage.bytes -= bytes;
                    usage.recency.remove(&slot.used);
                    if usage.recency.is_empty() {
                        self.owners.remove(&owner);
                    }
                }
            }
        }
    }

    /// Sets `key` to `value` until `expires`, kept as `keep` says, making room first.
    fn set(
        &mut self,
        key: &str,
        value: &str,
        expires: Instant,
        keep: Keep<'_>,
        now: Instant,
    ) -> Result<(), StoreError> {
        self.remove(key);
        let used = self.tick();
        let owner = match keep {
            Keep::Pinned => {
                if self.pinned >= MAX_MEMORY_KEYS {
                    self.drop_expired(now);
                }
                if self.pinned >= MAX_MEMORY_KEYS {
                    return Err(StoreError::Full);
                }
                self.pinned += 1;
                None
            }
            Keep::Cache(caller) => {
                let owner: Arc<str> = Arc::from(caller);
                self.make_room(&owner, cost(key, value), now)?;
                let bytes = cost(key, value);
                self.cached_bytes += bytes;
                self.recency.insert(used, key.to_string());
                let usage = self.owners.entry(owner.clone()).or_default();
                usage.bytes += bytes;
                usage.recency.insert(used, key.to_string());
                Some(owner)
            }
        };
        self.entries.insert(
            key.to_string(),
            Slot {
                value: value.to_string(),
                expires,
                owner,
                used,
            },
        );
        Ok(())
    }

    /// Room for `bytes` more of `owner`'s: its own least recently used keys go while its
    /// share would be passed, then anyone's while the budget would be.
    fn make_room(
        &mut self,
        owner: &Arc<str>,
        bytes: usize,
        now: Instant,
    ) -> Result<(), StoreError> {
        if bytes > self.max_bytes_per_caller {
            return Err(StoreError::TooLarge(bytes));
        }
        let over_share = |memory: &Memory| {
            memory.owners.get(owner).map_or(0, |usage| usage.bytes) + bytes
                > memory.max_bytes_per_caller
        };
        if over_share(self) || self.cached_bytes + bytes > self.max_bytes {
            self.drop_expired(now);
        }
        while over_share(self) {
            let Some(oldest) = self
                .owners
                .get(owner)
                .and_then(|usage| usage.recency.values().next().cloned())
            else {
                break;
            };
            self.remove(&oldest);
        }
        while self.cached_bytes + bytes > self.max_bytes {
            let Some(oldest) = self.recency.values().next().cloned() else {
                break;
            };
            self.remove(&oldest);
        }
        Ok(())
    }

    fn drop_expired(&mut self, now: Instant) {
        let expired: Vec<String> = self
            .entries
            .iter()
            .filter(|(_, slot)| slot.expires <= now)
            .map(|(key, _)| key.clone())
            .collect();
        for key in expired {
            self.remove(&key);
        }
    }
}

impl Store {
    /// An in-process store with the default budgets.
    pub fn memory() -> Store {
        Store::memory_with(&StoreSettings::default())
    }

    /// An in-process store with the budgets of `settings`.
    pub fn memory_with(settings: &StoreSettings) -> Store {
        Store {
            backend: Backend::Memory(Mutex::new(Memory::new(
                usize::try_from(settings.max_memory_bytes).unwrap_or(usize::MAX),
                usize::try_from(settings.max_bytes_per_caller).unwrap_or(usize::MAX),
            ))),
            timeout: Duration::from_secs_f64(settings.timeout_seconds),
        }
    }

    /// The store `settings` describe: connects to Redis/Valkey now when it names one (the
    /// password read through `env`).
    pub async fn open(
        settings: &StoreSettings,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Store, StoreError> {
        let timeout = Duration::from_secs_f64(settings.timeout_seconds);
        let Some(url) = &settings.url else {
            return Ok(Store::memory_with(settings));
        };
        let name = url::Url::parse(url)
            .map(|u| {
                format!(
                    "redis://{}:{}{}",
                    u.host_str().unwrap_or_default(),
                    u.port().unwrap_or(6379),
                    u.path()
                )
            })
            .unwrap_or_else(|_| "redis".into());
        let unreachable =
            |e: redis::RedisError| StoreError::Unreachable(name.clone(), e.to_string());
        let mut info =
            redis::IntoConnectionInfo::into_connection_info(url.as_str()).map_err(unreachable)?;
        if let Some(variable) = &settings.password_env {
            let password = env(variable)
                .filter(|p| !p.is_empty())
                .ok_or_else(|| StoreError::MissingPassword(variable.clone()))?;
            let redis = info.redis_settings().clone().set_password(password);
            info = info.set_redis_settings(redis);
        }
        let client = redis::Client::open(info).map_err(unreachable)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_secs(1));
        let connection = tokio::time::timeout(
            timeout * 2,
            client.get_connection_manager_with_config(config),
        )
        .await
        .map_err(|_| StoreError::TimedOut(name.clone(), timeout.as_secs_f64() * 2.0))?
        .map_err(unreachable)?;
        Ok(Store {
            backend: Backend::Redis { connection, name },
            timeout,
        })
    }

    /// How long one command may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// What the store is, for the start banner and logs: `in-process` or `redis://host:port/db`.
    pub fn describe(&self) -> &str {
        match &self.backend {
            Backend::Memory(_) => "in-process",
            Backend::Redis { name, .. } => name,
        }
    }

    fn memory_of(memory: &Mutex<Memory>) -> std::sync::MutexGuard<'_, Memory> {
        memory.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets `key` to `value` for `ttl` unless it holds a value; otherwise says which. The
    /// in-process store keeps it as `keep` says (Redis keeps every key until its expiry,
    /// within its own `maxmemory`).
    pub async fn claim(
        &self,
        key: &str,
        value: &str,
        ttl: Duration,
        keep: Keep<'_>,
    ) -> Result<Claim, StoreError> {
        match &self.backend {
            Backend::Memory(memory) => {
                let now = Instant::now();
                let mut memory = Store::memory_of(memory);
                if let Some(held) = memory.get(key, now) {
                    return Ok(Claim::Held(held));
                }
                memory.set(key, value, now + ttl, keep, now)?;
                Ok(Claim::Claimed)
            }
            Backend::Redis { connection, name } => {
                // SET NX returns OK or nil; on nil the value is read (GET), and a key that
                // expired in between is claimed again, once.
                for _ in 0..2 {
                    let mut set = redis::cmd("SET");
                    set.arg(key).arg(value).arg("NX").arg("PX").arg(millis(ttl));
                    let set: Option<String> = self.run(connection, name, set).await?;
                    if set.is_some() {
                        return Ok(Claim::Claimed);
                    }
                    let mut get = redis::cmd("GET");
                    get.arg(key);
                    if let Some(held) = self.run::<Option<String>>(connection, name, get).await? {
                        return Ok(Claim::Held(held));
                    }
                }
                Err(StoreError::Unreachable(
                    name.clone(),
                    "the key kept changing".into(),
                ))
            }
        }
    }

    /// What `key` holds, unless it expired.
    pub async fn get(&self, key: &str) -> Result<Option<String>, StoreError> {
        match &self.backend {
            Backend::Memory(memory) => Ok(Store::memory_of(memory).get(key, Instant::now())),
            Backend::Redis { connection, name } => {
                let mut get = redis::cmd("GET");
                get.arg(key);
                self.run::<Option<String>>(connection, name, get).await
            }
        }
    }

    /// Sets `key` to `value` for `ttl`, whatever it held, kept as `keep` says.
    pub async fn put(
        &self,
        key: &str,
        value: &str,
        ttl: Duration,
        keep: Keep<'_>,
    ) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Memory(memory) => {
                let now = Instant::now();
                Store::memory_of(memory).set(key, value, now + ttl, keep, now)
            }
            Backend::Redis { connection, name } => {
                let mut set = redis::cmd("SET");
                set.arg(key).arg(value).arg("PX").arg(millis(ttl));
                self.run::<()>(connection, name, set).await
            }
        }
    }

    /// Removes `key`.
    pub async fn release(&self, key: &str) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Memory(memory) => {
                Store::memory_of(memory).remove(key);
                Ok(())
            }
            Backend::Redis { connection, name } => {
                let mut del = redis::cmd("DEL");
                del.arg(key);
                self.run::<()>(connection, name, del).await
            }
        }
    }

    /// Removes `key` when it still holds `value` (and not what someone set after it).
    pub async fn release_if(&self, key: &str, value: &str) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Memory(memory) => {
                let mut memory = Store::memory_of(memory);
                if memory
                    .entries
                    .get(key)
                    .is_some_and(|slot| slot.value == value)
                {
                    memory.remove(key);
                }
                Ok(())
            }
            Backend::Redis { connection, name } => {
                let mut eval = redis::cmd("EVAL");
                eval.arg(RELEASE_IF).arg(1).arg(key).arg(value);
                self.run::<()>(connection, name, eval).await
            }
        }
    }

    /// Bytes the in-process store's cached keys take now (in all, and of `caller`); `None`
    /// for Redis.
    pub fn cached_bytes(&self, caller: Option<&str>) -> Option<usize> {
        match &self.backend {
            Backend::Memory(memory) => {
                let memory = Store::memory_of(memory);
                Some(match caller {
                    None => memory.cached_bytes,
                    Some(caller) => memory.owners.get(caller).map_or(0, |usage| usage.bytes),
                })
            }
            Backend::Redis { .. } => None,
        }
    }

    /// One command, bounded by the store's timeout.
    async fn run<T: redis::FromRedisValue>(
        &self,
        connection: &redis::aio::ConnectionManager,
        name: &str,
        command: redis::Cmd,
    ) -> Result<T, StoreError> {
        let mut connection = connection.clone();
        match tokio::time::timeout(self.timeout, command.query_async::<T>(&mut connection)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(StoreError::Unreachable(name.to_string(), error.to_string())),
            Err(_) => Err(StoreError::TimedOut(
                name.to_string(),
                self.timeout.as_secs_f64(),
            )),
        }
    }
}

/// Compare-and-delete, atomic on the server.
const RELEASE_IF: &str =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

fn millis(ttl: Duration) -> u64 {
    (ttl.as_millis() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PINNED: Keep<'static> = Keep::Pinned;

    #[tokio::test]
    async fn a_key_is_claimed_once_until_it_expires_or_is_released() {
        let store = Store::memory();
        let ttl = Duration::from_millis(50);
        let keep = Keep::Cache("sub:a");
        assert_eq!(
            store.claim("k", "a", ttl, keep).await.expect("claim"),
            Claim::Claimed
        );
        assert_eq!(
            store.claim("k", "b", ttl, keep).await.expect("claim"),
            Claim::Held("a".into())
        );
        store.put("k", "c", ttl, keep).await.expect("put");
        assert_eq!(
            store.claim("k", "d", ttl, keep).await.expect("claim"),
            Claim::Held("c".into())
        );
        store.release_if("k", "other").await.expect("release_if");
        assert_eq!(
            store.claim("k", "d", ttl, keep).await.expect("claim"),
            Claim::Held("c".into()),
            "release_if leaves a key holding another value"
        );
        store.release_if("k", "c").await.expect("release_if");
        assert_eq!(
            store.claim("k", "e", ttl, PINNED).await.expect("claim"),
            Claim::Claimed
        );
        store.release("k").await.expect("release");
        assert_eq!(store.get("k").await.expect("get"), None);
        assert_eq!(
            store.claim("k", "e", ttl, keep).await.expect("claim"),
            Claim::Claimed
        );
        assert_eq!(store.get("k").await.expect("get"), Some("e".into()));
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert_eq!(store.get("k").await.expect("get"), None, "an expired key");
        assert_eq!(
            store.claim("k", "f", ttl, keep).await.expect("claim"),
            Claim::Claimed
        );
        assert_eq!(store.cached_bytes(None), store.cached_bytes(Some("sub:a")));
    }

    #[tokio::test]
    async fn pinned_keys_are_bounded_and_refused_rather_than_forgotten() {
        let store = Store::memory();
        let long = Duration::from_secs(60);
        if let Backend::Memory(memory) = &store.backend {
            let mut memory = memory.lock().expect("lock");
            let now = Instant::now();
            for i in 0..MAX_MEMORY_KEYS {
                memory
                    .set(&format!("k{i}"), "", now + long, Keep::Pinned, now)
                    .expect("room");
            }
        }
        assert!(matches!(
            store.claim("new", "v", long, PINNED).await,
            Err(StoreError::Full)
        ));
        // A key still held is still answered.
        assert_eq!(
            store.claim("k1", "v", long, PINNED).await.expect("held"),
            Claim::Held(String::new())
        );
    }

    #[tokio::test]
    async fn cached_keys_stay_within_the_budget_and_one_caller_within_its_share() {
        let settings = StoreSettings {
            max_memory_bytes: 100_000,
            max_bytes_per_caller: 30_000,
            ..StoreSettings::default()
        };
        let store = Store::memory_with(&settings);
        let long = Duration::from_secs(60);
        let value = "x".repeat(1_000);
        // A confirmation pinned before the flood survives it.
        store
            .claim("restmcp:confirm:n1", "1", long, PINNED)
            .await
            .expect("pinned");
        // Bob's records, used lately.
        for n in 0..20 {
            let key = format!("bob-{n}");
            store
                .put(&key, &value, long, Keep::Cache("sub:bob"))
                .await
                .expect("put");
        }
        // Mallory stores as fast as it can: its own oldest go, nobody else's.
        for n in 0..1_000 {
            let key = format!("mallory-{n}");
            store
                .put(&key, &value, long, Keep::Cache("sub:mallory"))
                .await
                .expect("put");
        }
        let mallory = store.cached_bytes(Some("sub:mallory")).expect("memory");
        assert!(mallory <= 30_000, "{mallory}");
        assert_eq!(
            store.get("mallory-999").await.expect("get"),
            Some(value.clone())
        );
        assert_eq!(
            store.get("mallory-0").await.expect("get"),
            None,
            "its oldest went"
        );
        for n in 0..20 {
            assert!(
                store.get(&format!("bob-{n}")).await.expect("get").is_some(),
                "bob-{n}"
            );
        }
        assert_eq!(
            store.get("restmcp:confirm:n1").await.expect("get"),
            Some("1".into())
        );
        // Many callers together stay within the whole budget, the least recently used
        // going first: Bob read his records just now, so they stay.
        for caller in 0..10 {
            for n in 0..25 {
                let key = format!("c{caller}-{n}");
                let owner = format!("sub:c{caller}");
                store
                    .put(&key, &value, long, Keep::Cache(&owner))
                    .await
                    .expect("put");
                if n % 5 == 0 {
                    let _ = store.get("bob-0").await;
                }
            }
        }
        let total = store.cached_bytes(None).expect("memory");
        assert!(total <= 100_000, "{total}");
        assert!(
            store.get("bob-0").await.expect("get").is_some(),
            "recently used stays"
        );
        // A value larger than a whole share is refused, not stored.
        let huge = "y".repeat(40_000);
        assert!(matches!(
            store.put("huge", &huge, long, Keep::Cache("sub:bob")).await,
            Err(StoreError::TooLarge(_))
        ));
    }

    #[tokio::test]
    async fn an_unreachable_server_is_an_error_that_names_it_without_a_password() {
        let settings = StoreSettings {
            url: Some("redis://127.0.0.1:9/0".into()),
            password_env: Some("PW".into()),
            timeout_seconds: 0.5,
            ..Default::default()
        };
        let error = match Store::open(&settings, |_| Some("hunter2-secret".into())).await {
            Err(error) => error.to_string(),
            Ok(_) => panic!("nothing listens on port 9"),
        };
        assert!(error.contains("redis://127.0.0.1:9/0"), "{error}");
        assert!(!error.contains("hunter2"), "{error}");
        let missing = Store::open(&settings, |_| None)
            .await
            .err()
            .expect("no password");
        assert!(matches!(missing, StoreError::MissingPassword(_)));
    }
}
