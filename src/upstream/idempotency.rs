//! Idempotent calls: a call of a tool whose operation takes an
//! idempotency key ([`crate::catalog::Idempotency`]), made with a key the model gave, is
//! recorded in the [`Store`] under (caller, tool, key) with a fingerprint of its request.
//! A repeat with the same request is answered from the stored result and not sent; the same
//! key with another request is refused; a repeat while the first is still running is told
//! so. Replicas sharing `[server.store]` share this, so a retry that lands on another
//! replica does not call twice. Only answers from the upstream are stored: a call that
//! never got one (unreachable, timed out, refused before sending) frees its key, and its
//! retry is sent again with the same key, which the upstream itself deduplicates.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{CallOutcome, Called, Ready, ToolResult};
use crate::store::{Claim, Keep, Store, StoreError};

/// How long a running call holds its key: a replica that dies mid-call frees it then.
const RUNNING_TTL: Duration = Duration::from_secs(600);

/// What the store holds under a key.
#[derive(Serialize, Deserialize)]
struct Entry {
    /// The request's fingerprint ([`Ready::fingerprint`]).
    f: String,
    /// Random, naming the call that holds the key while it runs: only that call frees it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    t: String,
    /// The stored result, once the call is answered (absent while it runs, or when it was
    /// too large to keep).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    r: Option<ToolResult>,
    /// The call was answered.
    #[serde(default)]
    done: bool,
}

/// A call that holds its idempotency key until it is answered; dropped unanswered (failed,
/// cancelled, refused), it frees the key.
pub(crate) struct Held {
    store: Arc<Store>,
    key: String,
    fingerprint: String,
    /// What the key holds while the call runs.
    running: String,
    ttl: Duration,
    /// The caller whose share of the store the record counts against.
    caller: String,
    /// The most a stored record may hold: the tool's result budget (a result larger than
    /// the model may receive is not kept; the fact of the call is).
    max_bytes: Option<u64>,
    answered: bool,
}

/// What to do with a call before sending it.
pub(crate) enum Before {
    /// Send it (holding its key when it has one).
    Send(Option<Held>),
    /// Answer it with this, unsent.
    Answer(Called),
}

/// Looks the call's key up, and holds it when the call is new; `max_bytes` is the most a
/// stored record of it may hold (its result budget).
pub(crate) async fn before(
    store: &Arc<Store>,
    ready: &Ready<'_>,
    record: (&str, Option<u64>),
    ttl: Duration,
) -> Before {
    let Some(given) = ready.idempotency_key() else {
        return Before::Send(None);
    };
    let keyed = Keyed {
        tool: ready.tool(),
        given,
        fingerprint: ready.fingerprint(),
    };
    before_keyed(store, keyed, record, ttl).await
}

/// A call made with an idempotency key: the tool, the key the model gave, and what a
/// repeat must match (a request's fingerprint; a workflow's arguments).
pub(crate) struct Keyed<'a> {
    pub tool: &'a crate::catalog::Tool,
    pub given: &'a str,
    pub fingerprint: String,
}

/// [`before`] for any call with a key: a workflow tool's, whose requests are not built yet.
pub(crate) async fn before_keyed(
    store: &Arc<Store>,
    keyed: Keyed<'_>,
    (caller, max_bytes): (&str, Option<u64>),
    ttl: Duration,
) -> Before {
    let Keyed {
        tool,
        given,
        fingerprint,
    } = keyed;
    let api = tool.route.api.as_str();
    let key = store_key(caller, &tool.name, given);
    let running = Entry {
        f: fingerprint.clone(),
        t: token(),
        r: None,
        done: false,
    };
    let running = serde_json::to_string(&running).unwrap_or_default();
    let refuse = |text: String| {
        Before::Answer(Called::unsent(
            api,
            ToolResult::error(text),
            CallOutcome::ToolError,
        ))
    };
    match store
        .claim(&key, &running, RUNNING_TTL.min(ttl), Keep::Cache(caller))
        .await
    {
        Ok(Claim::Claimed) => Before::Send(Some(Held {
            store: store.clone(),
            key,
            fingerprint,
            running,
            ttl,
            caller: caller.to_string(),
            max_bytes,
            answered: false,
        })),
        Ok(Claim::Held(value)) => {
            let Ok(entry) = serde_json::from_str::<Entry>(&value) else {
                return refuse(format!(
                    "The stored record of idempotency key \"{given}\" is unreadable; nothing \
                     was sent. Use a new key."
                ));
            };
            if entry.f != fingerprint {
                return refuse(format!(
                    "Idempotency key \"{given}\" was already used for tool \"{}\" with other \
                     arguments; nothing was sent. Use a new key for a different call.",
                    tool.name
                ));
            }
            if !entry.done {
                return refuse(format!(
                    "A call of tool \"{}\" with idempotency key \"{given}\" is still running; \
                     nothing was sent. Retry in a moment to get its result.",
                    tool.name
                ));
            }
            let result = entry.r.unwrap_or_else(|| {
                ToolResult::error(format!(
                    "Tool \"{}\" was already called with idempotency key \"{given}\"; its \
                     result was too large to keep, and nothing was sent again.",
                    tool.name
                ))
            });
            tracing::info!(tool = %tool.name, "idempotent repeat answered from the store");
            Before::Answer(Called::unsent(api, result, CallOutcome::Replayed))
        }
        Err(error) => {
            // The claim may still reach the store after it gave up waiting (a stalled
            // server runs it later): free it then, or the key would say "still running".
            let (store, key) = (store.clone(), key.clone());
            tokio::spawn(async move {
                let _ = store.release_if(&key, &running).await;
            });
            refuse(format!(
                "Tool \"{}\" was called with idempotency key \"{given}\", but {error}; nothing was \
             sent.",
                tool.name
            ))
        }
    }
}

impl Held {
    /// Stores the answer of the call (only answers from the upstream; anything else frees
    /// the key when `self` drops).
    pub(crate) async fn answered(mut self, called: &Called) {
        if called.stats.status.is_none() {
            return;
        }
        let mut entry = Entry {
            f: std::mem::take(&mut self.fingerprint),
            t: String::new(),
            r: Some(called.result.clone()),
            done: true,
        };
        let mut value = serde_json::to_string(&entry).unwrap_or_default();
        if self.max_bytes.is_some_and(|max| value.len() as u64 > max) {
            entry.r = None;
            value = serde_json::to_string(&entry).unwrap_or_default();
        }
        let keep = Keep::Cache(&self.caller);
        let mut stored = self.store.put(&self.key, &value, self.ttl, keep).await;
        if let Err(StoreError::TooLarge(_)) = stored {
            // Larger than the caller's whole share: keep only the fact of the call.
            entry.r = None;
            value = serde_json::to_string(&entry).unwrap_or_default();
            stored = self.store.put(&self.key, &value, self.ttl, keep).await;
        }
        match stored {
            Ok(()) => self.answered = true,
            Err(error) => tracing::warn!(
                error = %error,
                "the result of an idempotent call could not be stored; a repeat will be sent again"
            ),
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        let (store, key, running) = (
            self.store.clone(),
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.running),
        );
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = store.release_if(&key, &running).await;
            });
        }
    }
}

/// A random token naming one running call.
fn token() -> String {
    crate::digest::hex(&crate::digest::random::<12>())
}

/// The store key of (caller, tool, key), hashed so no key the model chose is stored as is.
fn store_key(caller: &str, tool: &str, given: &str) -> String {
    let digest =
        crate::digest::sha256_parts(&[caller.as_bytes(), tool.as_bytes(), given.as_bytes()]);
    format!("restmcp:idempotency:{}", crate::digest::hex(&digest))
}
