//! The store: short-lived keys that replicas behind a balancer must share, with atomic
//! set-if-absent and expiry. It holds stored results of calls made with an idempotency key
//! and redeemed confirmation states, so a retry or a replay that lands on another replica
//! is recognised there. In-process by default (bounded, for one replica), or a Redis or
//! Valkey server (`[server.store] url`), reached through the `redis` crate's
//! auto-reconnecting connection, every command bounded by `server.store.timeout_seconds`.
//!
//! Callers fail closed on a [`StoreError`]: a call whose idempotency cannot be checked, or a
//! confirmation whose single use cannot be recorded, is not sent.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::config::StoreSettings;

/// Keys the in-process store holds at most; past it, expired keys are dropped, and when
/// none has expired a new key is refused rather than an old one forgotten.
const MAX_MEMORY_KEYS: usize = 100_000;

/// Values longer than this are not stored (a result this large is not replayed).
pub const MAX_VALUE_BYTES: usize = 1 << 20;

/// The store could not answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    #[error("the shared store ({0}) cannot be reached: {1}")]
    Unreachable(String, String),
    #[error("the shared store ({0}) did not answer within {1:.1} s")]
    TimedOut(String, f64),
    #[error("the in-process store is full ({MAX_MEMORY_KEYS} live keys)")]
    Full,
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

/// Short-lived shared keys (see the module documentation).
pub struct Store {
    backend: Backend,
    timeout: Duration,
}

enum Backend {
    Memory(Mutex<HashMap<String, (String, Instant)>>),
    Redis {
        connection: redis::aio::ConnectionManager,
        /// `host:port/db`, for errors (never a password).
        name: String,
    },
}

impl Store {
    /// An in-process store.
    pub fn memory() -> Store {
        Store {
            backend: Backend::Memory(Mutex::new(HashMap::new())),
            timeout: Duration::from_secs(2),
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
            return Ok(Store {
                timeout,
                ..Store::memory()
            });
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

    /// Sets `key` to `value` for `ttl` unless it holds a value; otherwise says which.
    pub async fn claim(&self, key: &str, value: &str, ttl: Duration) -> Result<Claim, StoreError> {
        match &self.backend {
            Backend::Memory(map) => {
                let now = Instant::now();
                let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
                if let Some((held, expires)) = map.get(key)
                    && *expires > now
                {
                    return Ok(Claim::Held(held.clone()));
                }
                make_room(&mut map, now)?;
                map.insert(key.to_string(), (value.to_string(), now + ttl));
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
            Backend::Memory(map) => {
                let map = map.lock().unwrap_or_else(|p| p.into_inner());
                Ok(map
                    .get(key)
                    .filter(|(_, expires)| *expires > Instant::now())
                    .map(|(held, _)| held.clone()))
            }
            Backend::Redis { connection, name } => {
                let mut get = redis::cmd("GET");
                get.arg(key);
                self.run::<Option<String>>(connection, name, get).await
            }
        }
    }

    /// Sets `key` to `value` for `ttl`, whatever it held.
    pub async fn put(&self, key: &str, value: &str, ttl: Duration) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Memory(map) => {
                let now = Instant::now();
                let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
                if !map.contains_key(key) {
                    make_room(&mut map, now)?;
                }
                map.insert(key.to_string(), (value.to_string(), now + ttl));
                Ok(())
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
            Backend::Memory(map) => {
                map.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
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
            Backend::Memory(map) => {
                let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
                if map.get(key).is_some_and(|(held, _)| held == value) {
                    map.remove(key);
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

/// Room for one more key in the in-process store.
fn make_room(map: &mut HashMap<String, (String, Instant)>, now: Instant) -> Result<(), StoreError> {
    if map.len() >= MAX_MEMORY_KEYS {
        map.retain(|_, (_, expires)| *expires > now);
    }
    if map.len() >= MAX_MEMORY_KEYS {
        return Err(StoreError::Full);
    }
    Ok(())
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

    #[tokio::test]
    async fn a_key_is_claimed_once_until_it_expires_or_is_released() {
        let store = Store::memory();
        let ttl = Duration::from_millis(50);
        assert_eq!(
            store.claim("k", "a", ttl).await.expect("claim"),
            Claim::Claimed
        );
        assert_eq!(
            store.claim("k", "b", ttl).await.expect("claim"),
            Claim::Held("a".into())
        );
        store.put("k", "c", ttl).await.expect("put");
        assert_eq!(
            store.claim("k", "d", ttl).await.expect("claim"),
            Claim::Held("c".into())
        );
        store.release_if("k", "other").await.expect("release_if");
        assert_eq!(
            store.claim("k", "d", ttl).await.expect("claim"),
            Claim::Held("c".into()),
            "release_if leaves a key holding another value"
        );
        store.release_if("k", "c").await.expect("release_if");
        assert_eq!(
            store.claim("k", "e", ttl).await.expect("claim"),
            Claim::Claimed
        );
        store.release("k").await.expect("release");
        assert_eq!(store.get("k").await.expect("get"), None);
        assert_eq!(
            store.claim("k", "e", ttl).await.expect("claim"),
            Claim::Claimed
        );
        assert_eq!(store.get("k").await.expect("get"), Some("e".into()));
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert_eq!(store.get("k").await.expect("get"), None, "an expired key");
        assert_eq!(
            store.claim("k", "f", ttl).await.expect("claim"),
            Claim::Claimed
        );
    }

    #[tokio::test]
    async fn the_in_process_store_is_bounded_and_refuses_rather_than_forgets() {
        let store = Store::memory();
        let long = Duration::from_secs(60);
        if let Backend::Memory(map) = &store.backend {
            let mut map = map.lock().expect("lock");
            let expires = Instant::now() + long;
            for i in 0..MAX_MEMORY_KEYS {
                map.insert(format!("k{i}"), (String::new(), expires));
            }
        }
        assert!(matches!(
            store.claim("new", "v", long).await,
            Err(StoreError::Full)
        ));
        // A key still held is still answered.
        assert_eq!(
            store.claim("k1", "v", long).await.expect("held"),
            Claim::Held(String::new())
        );
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
