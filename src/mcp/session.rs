//! One session model for every transport: what a handshake settled ([`Handshake`]: the
//! client's name and the revision agreed), the calls running (for
//! `notifications/cancelled`), and, on Streamable HTTP, the bounded table of sessions.
//!
//! Every transport feeds it and reads it the same way: stdio notes the handshake of its one
//! session as the SDK's answer to `initialize` passes by, and answers `tools/list` for that
//! client and revision; on Streamable HTTP the front notes each session's handshake in the
//! [`SessionTable`] and the direct path reads it from there (and registers the calls it
//! runs, so the client's `notifications/cancelled` reaches them). The SDK keeps its own
//! record of each session's peer (for the calls it serves itself); the legacy SSE transport
//! runs the SDK over a pipe exactly as stdio does.
//!
//! rmcp keeps sessions in its [`LocalSessionManager`] with no cap, and expires one only when
//! its worker has seen no message for a while, which the calls the direct path answers
//! never reach. [`SessionTable`] watches every request that names a session instead: it
//! caps the sessions open at once (`server.max_sessions`; at the cap a new `initialize`
//! closes the session idle the longest, and with none idle it is refused), and closes a
//! session idle for `server.session_idle_seconds`. A session is idle while it has no
//! request in flight and no open stream. rmcp's map stays the record of which sessions
//! exist; the table adds when each was last active and what its handshake settled.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::ProtocolVersion;
use rmcp::transport::streamable_http_server::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::jsonrpc;
use crate::telemetry::metrics::Metrics;

/// What a session's handshake settled.
#[derive(Debug, Clone)]
pub struct Handshake {
    /// The name the client gave in `initialize` (client rules match on it).
    pub client: Option<String>,
    /// The protocol revision the SDK agreed to.
    pub version: ProtocolVersion,
    /// The client has sent `notifications/initialized`.
    pub initialized: bool,
    /// The client declared the Tasks extension (`io.modelcontextprotocol/tasks`).
    pub tasks: bool,
}

impl Handshake {
    /// The handshake of `request` (a client's `initialize`) that `answer` (the SDK's
    /// answer to it) settled; `None` when the answer agrees on no revision.
    pub fn settled(request: &Value, answer: &Value) -> Option<Handshake> {
        let version = jsonrpc::member(answer, &["result", "protocolVersion"])
            .and_then(|v| serde_json::from_value::<ProtocolVersion>(v.clone()).ok())?;
        let client = jsonrpc::member(request, &["params", "clientInfo", "name"])
            .and_then(Value::as_str)
            .map(str::to_string);
        let tasks = jsonrpc::member(request, &["params", "capabilities", "extensions"])
            .is_some_and(declares_tasks);
        Some(Handshake {
            client,
            version,
            initialized: false,
            tasks,
        })
    }
}

/// Whether a client capabilities' `extensions` object declares the Tasks extension.
pub(super) fn declares_tasks(extensions: &Value) -> bool {
    extensions
        .get(rmcp::model::TASKS_EXTENSION_ID)
        .is_some_and(Value::is_object)
}

/// Calls running outside the SDK, by session and request id (as JSON text), so the
/// client's `notifications/cancelled` reaches them as it would reach the SDK's own.
#[derive(Default)]
pub struct Running {
    calls: Mutex<HashMap<(Arc<str>, String), CancellationToken>>,
}

impl Running {
    /// Notes a call starting; it is cancelled by [`Running::cancel`] until it
    /// [`Running::finished`].
    pub fn started(&self, session: Arc<str>, id: String, cancelled: CancellationToken) {
        self.lock().insert((session, id), cancelled);
    }

    /// The call of `session` with request id `id` (as JSON text) ended.
    pub fn finished(&self, session: Arc<str>, id: String) {
        self.lock().remove(&(session, id));
    }

    /// A session's `notifications/cancelled`: cancels the call when it is running here.
    pub fn cancel(&self, session: &str, notification: &Value) {
        let Some(id) = jsonrpc::member(notification, &["params", "requestId"]) else {
            return;
        };
        let key = (Arc::<str>::from(session), id.to_string());
        if let Some(token) = self.lock().get(&key) {
            token.cancel();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(Arc<str>, String), CancellationToken>> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Sessions open, when each was last active and what its handshake settled (see the
/// module documentation).
pub struct SessionTable {
    manager: Arc<LocalSessionManager>,
    max: usize,
    idle: Duration,
    state: Mutex<State>,
    metrics: Arc<Metrics>,
    /// Calls the direct path runs for these sessions.
    running: Running,
}

#[derive(Default)]
struct State {
    entries: HashMap<Arc<str>, Entry>,
    /// `initialize` requests admitted whose session is not known yet.
    pending: usize,
}

struct Entry {
    last_active: Instant,
    busy: usize,
    /// Noted when the SDK's answer to `initialize` was read (plain JSON answers only).
    handshake: Option<Handshake>,
    /// The authenticated client that opened it (a static token's `token:N` or an OAuth
    /// caller's pseudonym): no one else may use it.
    owner: Option<String>,
}

/// The cap is full and every session is busy.
#[derive(Debug)]
pub struct Full;

/// Room for one session being opened; returned (if unused) when dropped.
pub struct Reservation {
    table: Arc<SessionTable>,
    used: bool,
}

/// Held while a session has a request in flight or a stream open.
pub struct Activity {
    table: Arc<SessionTable>,
    id: Arc<str>,
}

impl SessionTable {
    pub fn new(
        manager: Arc<LocalSessionManager>,
        max: usize,
        idle: Duration,
        metrics: Arc<Metrics>,
    ) -> Arc<SessionTable> {
        Arc::new(SessionTable {
            manager,
            max: max.max(1),
            idle,
            state: Mutex::default(),
            metrics,
            running: Running::default(),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True for a session this server opened and has not closed.
    pub fn knows(&self, id: &str) -> bool {
        self.state().entries.contains_key(id)
    }

    /// Sessions open now, as far as the table knows.
    pub fn len(&self) -> usize {
        self.state().entries.len()
    }

    /// True when no session is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Marks session `id` active until the returned guard is dropped; `None` for a session
    /// the table does not know.
    pub fn activity(self: &Arc<Self>, id: &str) -> Option<Activity> {
        let mut state = self.state();
        let key = state.entries.get_key_value(id)?.0.clone();
        let entry = state.entries.get_mut(&key)?;
        entry.busy += 1;
        entry.last_active = Instant::now();
        Some(Activity {
            table: self.clone(),
            id: key,
        })
    }

    /// Room for a new session: at the cap, the session idle the longest is closed first.
    pub async fn reserve(self: &Arc<Self>) -> Result<Reservation, Full> {
        self.reconcile().await;
        let victim = {
            let mut state = self.state();
            if state.entries.len() + state.pending < self.max {
                state.pending += 1;
                None
            } else {
                let oldest = state
                    .entries
                    .iter()
                    .filter(|(_, entry)| entry.busy == 0)
                    .min_by_key(|(_, entry)| entry.last_active)
                    .map(|(id, _)| id.clone());
                let Some(oldest) = oldest else {
                    self.metrics.record_refusal("too_many_sessions");
                    return Err(Full);
                };
                state.entries.remove(&oldest);
                state.pending += 1;
                Some(oldest)
            }
        };
        if let Some(victim) = victim {
            self.metrics.record_refusal("session_evicted");
            tracing::debug!("closed the session idle the longest to make room for a new one");
            let _ = self.manager.close_session(&victim).await;
        }
        Ok(Reservation {
            table: self.clone(),
            used: false,
        })
    }

    /// Session `id` was opened with `reservation` by `owner` (None: no authentication).
    pub fn opened(&self, id: &str, mut reservation: Reservation, owner: Option<String>) {
        reservation.used = true;
        let mut state = self.state();
        state.pending = state.pending.saturating_sub(1);
        state.entries.insert(
            id.into(),
            Entry {
                last_active: Instant::now(),
                busy: 0,
                handshake: None,
                owner,
            },
        );
    }

    /// True when session `id` was opened by an authenticated client other than `client`:
    /// a session id is not a credential, so another user's request with it is refused as
    /// if the session did not exist.
    pub fn owned_by_other(&self, id: &str, client: &str) -> bool {
        self.state()
            .entries
            .get(id)
            .and_then(|entry| entry.owner.as_deref())
            .is_some_and(|owner| owner != client)
    }

    /// Session `id` was ended by its client.
    pub fn closed(&self, id: &str) {
        self.state().entries.remove(id);
    }

    /// Notes what session `id`'s handshake settled.
    pub fn settled(&self, id: &str, handshake: Handshake) {
        if let Some(entry) = self.state().entries.get_mut(id) {
            entry.handshake = Some(handshake);
        }
    }

    /// Session `id`'s `notifications/initialized`.
    pub fn initialized(&self, id: &str) {
        if let Some(handshake) = self
            .state()
            .entries
            .get_mut(id)
            .and_then(|entry| entry.handshake.as_mut())
        {
            handshake.initialized = true;
        }
    }

    /// What session `id`'s handshake settled, when it was noted.
    pub fn handshake(&self, id: &str) -> Option<Handshake> {
        self.state().entries.get(id)?.handshake.clone()
    }

    /// The calls running outside the SDK for these sessions.
    pub fn running(&self) -> &Running {
        &self.running
    }

    /// Brings the table in line with rmcp's map: sessions that ended there are dropped, and
    /// any the table missed are counted from now.
    async fn reconcile(&self) {
        let open = self.manager.sessions.read().await;
        let mut state = self.state();
        state.entries.retain(|id, _| open.contains_key(&**id));
        if open.len() > state.entries.len() {
            for id in open.keys() {
                if !state.entries.contains_key(&**id) {
                    state.entries.insert(
                        id.clone(),
                        Entry {
                            last_active: Instant::now(),
                            busy: 0,
                            handshake: None,
                            owner: None,
                        },
                    );
                }
            }
        }
    }

    /// Closes every session idle for longer than the idle timeout.
    pub async fn expire(&self) {
        self.reconcile().await;
        let expired: Vec<Arc<str>> = {
            let mut state = self.state();
            let idle = self.idle;
            let expired: Vec<Arc<str>> = state
                .entries
                .iter()
                .filter(|(_, entry)| entry.busy == 0 && entry.last_active.elapsed() >= idle)
                .map(|(id, _)| id.clone())
                .collect();
            for id in &expired {
                state.entries.remove(id);
            }
            expired
        };
        for id in expired {
            self.metrics.record_refusal("session_expired");
            let _ = self.manager.close_session(&id).await;
        }
    }

    /// Expires idle sessions every so often until `stop` is cancelled (a no-op outside a
    /// Tokio runtime).
    pub fn spawn_expiry(self: &Arc<Self>, stop: CancellationToken) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let table = Arc::downgrade(self);
        let every = (self.idle / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
        runtime.spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    _ = ticks.tick() => {}
                }
                let Some(table) = table.upgrade() else {
                    return;
                };
                table.expire().await;
            }
        });
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if !self.used {
            let mut state = self.table.state();
            state.pending = state.pending.saturating_sub(1);
        }
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        let mut state = self.table.state();
        if let Some(entry) = state.entries.get_mut(&self.id) {
            entry.busy = entry.busy.saturating_sub(1);
            entry.last_active = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_handshake_is_the_client_of_the_request_and_the_revision_of_the_answer() {
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "clientInfo": {"name": "claude", "version": "1"}}});
        let answer =
            json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18"}});
        let handshake = Handshake::settled(&request, &answer).expect("settled");
        assert_eq!(handshake.client.as_deref(), Some("claude"));
        assert_eq!(handshake.version, ProtocolVersion::V_2025_06_18);
        assert!(!handshake.initialized);
        let refused =
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "no"}});
        assert!(Handshake::settled(&request, &refused).is_none());
    }

    #[test]
    fn a_running_call_is_cancelled_by_its_session_and_id_until_it_finished() {
        let running = Running::default();
        let token = CancellationToken::new();
        running.started("s1".into(), "7".into(), token.clone());
        let cancel = |session: &str, id: Value| {
            running.cancel(
                session,
                &json!({"method": "notifications/cancelled", "params": {"requestId": id}}),
            );
        };
        cancel("s2", json!(7));
        cancel("s1", json!("7"));
        assert!(!token.is_cancelled(), "another session, another id");
        running.finished("s1".into(), "7".into());
        cancel("s1", json!(7));
        assert!(!token.is_cancelled(), "finished");
        running.started("s1".into(), "7".into(), token.clone());
        cancel("s1", json!(7));
        assert!(token.is_cancelled());
    }
}
