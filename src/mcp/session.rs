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
//! never reach. [`SessionTable`] watches every request that names a session instead:
//! - it caps the sessions open at once (`server.max_sessions`) and those of one client
//!   (`server.max_sessions_per_client`; a client is its caller's pseudonym, else its
//!   address). At a cap a new `initialize` closes a session first (at the client's own
//!   cap, one of its own): one of the client holding the most, an idle one before one
//!   with a stream open, the one unused the longest. A session with a request in flight is
//!   never closed; with none to close, the `initialize` is refused;
//! - it closes a session idle (no request in flight, no open stream) for
//!   `server.session_idle_seconds`;
//! - it knows the ids of each session's requests in flight, and refuses a second request
//!   under one of them (rmcp would send both answers to the second, and the first
//!   one's stream would never end).
//!
//! rmcp's map stays the record of which sessions exist; the table adds who opened each,
//! when it was last active and what its handshake settled.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::ProtocolVersion;
use rmcp::transport::streamable_http_server::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::admission::ClientId;
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

/// A session's handshake as a transport sees it pass, when the SDK runs it over a pipe
/// (stdio): the client's `initialize` until the SDK's answer to it goes by, then what the
/// answer settled.
#[derive(Default)]
pub(super) struct Negotiation {
    /// The client's `initialize` request (one with an id), until the SDK's answer passes by.
    pending: Option<Value>,
    /// What the last answered `initialize` settled.
    settled: Option<Handshake>,
}

impl Negotiation {
    /// The client sent `initialize` (again): a new handshake begins.
    pub(super) fn begin(&mut self, initialize: &Value) {
        *self = Negotiation {
            pending: initialize.get("id").is_some().then(|| initialize.clone()),
            settled: None,
        };
    }

    /// A line the SDK sent: when it answers the pending `initialize`, the handshake is
    /// settled (or failed, when it agreed on no revision).
    pub(super) fn answered(&mut self, line: &[u8]) {
        let Some(pending) = &self.pending else {
            return;
        };
        let Ok(answer) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        if answer.get("id") != pending.get("id") {
            return;
        }
        self.settled = Handshake::settled(pending, &answer);
        self.pending = None;
    }

    /// The client sent `notifications/initialized`.
    pub(super) fn initialized(&mut self) {
        if let Some(settled) = &mut self.settled {
            settled.initialized = true;
        }
    }

    /// What the handshake settled, once the SDK answered `initialize`.
    pub(super) fn settled(&self) -> Option<&Handshake> {
        self.settled.as_ref()
    }
}

type Calls = HashMap<(Arc<str>, String), CancellationToken, foldhash::fast::RandomState>;

/// Calls running outside the SDK, by session and request id (as JSON text), so the
/// client's `notifications/cancelled` reaches them as it would reach the SDK's own. One
/// table for every transport: the Streamable HTTP sessions' direct calls
/// ([`SessionTable::running`]) and stdio's, under the one session stdio has.
#[derive(Default)]
pub struct Running {
    calls: Mutex<Calls>,
}

impl Running {
    /// Notes a call starting; it is cancelled by [`Running::cancel`] until it
    /// [`Running::finished`].
    pub fn started(&self, session: Arc<str>, id: String, cancelled: CancellationToken) {
        self.lock().insert((session, id), cancelled);
    }

    /// Whether a call of `session` with request id `id` (as JSON text) is running.
    pub fn is_running(&self, session: &Arc<str>, id: &str) -> bool {
        self.lock().contains_key(&(session.clone(), id.to_string()))
    }

    /// The call of `session` with request id `id` (as JSON text) ended; false when it was
    /// not running (any more).
    pub fn finished(&self, session: Arc<str>, id: String) -> bool {
        self.lock().remove(&(session, id)).is_some()
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

    /// Whether no call is running.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Cancels every call still running and forgets them (their transport is closing).
    pub fn cancel_all(&self) {
        for (_, call) in self.lock().drain() {
            call.cancel();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Sessions open, when each was last active, who opened it and what its handshake settled
/// (see the module documentation).
pub struct SessionTable {
    manager: Arc<LocalSessionManager>,
    max: usize,
    /// Sessions one client may hold; 0 = no per-client cap.
    per_client: usize,
    idle: Duration,
    state: Mutex<State>,
    metrics: Arc<Metrics>,
    /// Calls the direct path runs for these sessions.
    running: Running,
}

#[derive(Default)]
struct State {
    entries: HashMap<Arc<str>, Entry, foldhash::fast::RandomState>,
    /// `initialize` requests admitted whose session is not known yet, per client.
    pending: HashMap<ClientId, usize, foldhash::fast::RandomState>,
}

impl State {
    fn pending_total(&self) -> usize {
        self.pending.values().sum()
    }

    fn held_by(&self, client: &ClientId) -> usize {
        self.entries.values().filter(|e| e.owner == *client).count()
            + self.pending.get(client).copied().unwrap_or(0)
    }

    /// The session to close to make room for `client`'s new one, among those with no
    /// request in flight (its answer would be lost), and at `client`'s own cap among its
    /// own: one of the client holding the most; of its sessions, an idle one (no stream
    /// open) before one whose client keeps a stream open; then the one unused the
    /// longest. So a flood of sessions closes the flooder's own, idle ones first, and
    /// another client's only session goes last.
    fn victim(&self, client: &ClientId, own_cap: bool) -> Option<Arc<str>> {
        let mut held: HashMap<&ClientId, usize> = HashMap::new();
        for entry in self.entries.values() {
            *held.entry(&entry.owner).or_default() += 1;
        }
        self.entries
            .iter()
            .filter(|(_, entry)| entry.requests == 0 && (!own_cap || entry.owner == *client))
            .max_by_key(|(_, entry)| {
                (
                    held.get(&entry.owner).copied().unwrap_or(0),
                    entry.streams == 0,
                    std::cmp::Reverse(entry.last_active),
                )
            })
            .map(|(id, _)| id.clone())
    }
}

struct Entry {
    /// When it last had a request (or a stream) begin or end.
    last_active: Instant,
    /// Requests in flight.
    requests: usize,
    /// Streams open (GET streams; an SSE answer is a request).
    streams: usize,
    /// The ids (as JSON text) of the requests in flight: a second request under one of
    /// them is refused, since the SDK would route both answers to the second and leave
    /// the first one's stream open for ever.
    ids: Vec<String>,
    /// Noted when the SDK's answer to `initialize` was read (plain JSON answers only).
    handshake: Option<Handshake>,
    /// The client that opened it (its caller's pseudonym, else its address).
    owner: ClientId,
    /// Opened by an authenticated client: no one else may use it.
    authenticated: bool,
    /// It sent `logging/setLevel`.
    logging: bool,
}

impl Entry {
    fn new(owner: ClientId, authenticated: bool) -> Entry {
        Entry {
            last_active: Instant::now(),
            requests: 0,
            streams: 0,
            ids: Vec::new(),
            handshake: None,
            owner,
            authenticated,
            logging: false,
        }
    }
}

/// Why no room was made for a new session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// The table is full and every session has a request in flight.
    Table,
    /// The client holds its share, each with a request in flight.
    Client,
}

/// A request whose id is already in flight in its session.
#[derive(Debug)]
pub struct DuplicateId;

/// Room for one session being opened; returned (if unused) when dropped.
pub struct Reservation {
    table: Arc<SessionTable>,
    client: ClientId,
    used: bool,
}

/// Held while a session has a request in flight or a stream open.
pub struct Activity {
    table: Arc<SessionTable>,
    id: Arc<str>,
    kind: Kind,
}

enum Kind {
    Request(Option<String>),
    Stream,
}

impl SessionTable {
    pub fn new(
        manager: Arc<LocalSessionManager>,
        settings: &crate::config::ServerSettings,
        metrics: Arc<Metrics>,
    ) -> Arc<SessionTable> {
        Arc::new(SessionTable {
            manager,
            max: settings.max_sessions.max(1),
            per_client: settings.max_sessions_per_client,
            idle: Duration::from_secs(settings.session_idle_seconds),
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

    /// Marks a request of session `id` in flight until the returned guard is dropped;
    /// `Ok(None)` for a session the table does not know. `request` is the JSON-RPC id
    /// (none for a notification or a DELETE): one already in flight is refused.
    pub fn request(
        self: &Arc<Self>,
        id: &str,
        request: Option<&Value>,
    ) -> Result<Option<Activity>, DuplicateId> {
        let mut state = self.state();
        let Some(key) = state.entries.get_key_value(id).map(|(key, _)| key.clone()) else {
            return Ok(None);
        };
        let Some(entry) = state.entries.get_mut(&key) else {
            return Ok(None);
        };
        let request = request.map(Value::to_string);
        if let Some(request) = &request {
            if entry.ids.contains(request) {
                self.metrics.record_refusal("duplicate_request_id");
                return Err(DuplicateId);
            }
            entry.ids.push(request.clone());
        }
        entry.requests += 1;
        entry.last_active = Instant::now();
        Ok(Some(Activity {
            table: self.clone(),
            id: key.clone(),
            kind: Kind::Request(request),
        }))
    }

    /// Marks a stream of session `id` open until the returned guard is dropped; `None`
    /// for a session the table does not know.
    pub fn stream(self: &Arc<Self>, id: &str) -> Option<Activity> {
        let mut state = self.state();
        let key = state.entries.get_key_value(id)?.0.clone();
        let entry = state.entries.get_mut(&key)?;
        entry.streams += 1;
        entry.last_active = Instant::now();
        Some(Activity {
            table: self.clone(),
            id: key.clone(),
            kind: Kind::Stream,
        })
    }

    /// Room for a new session of `client`: at the client's cap, its own session that has
    /// gone without a request the longest is closed first; at the table's cap, one of the
    /// client holding the most (see `State::victim`).
    pub async fn reserve(self: &Arc<Self>, client: &ClientId) -> Result<Reservation, Full> {
        self.reconcile().await;
        let victim = {
            let mut state = self.state();
            let own_cap = self.per_client > 0 && state.held_by(client) >= self.per_client;
            let table_cap = state.entries.len() + state.pending_total() >= self.max;
            let victim = if own_cap || table_cap {
                let Some(victim) = state.victim(client, own_cap) else {
                    let (reason, full) = match own_cap {
                        true => ("too_many_client_sessions", Full::Client),
                        false => ("too_many_sessions", Full::Table),
                    };
                    self.metrics.record_refusal(reason);
                    return Err(full);
                };
                state.entries.remove(&victim);
                Some(victim)
            } else {
                None
            };
            *state.pending.entry(client.clone()).or_default() += 1;
            victim
        };
        if let Some(victim) = victim {
            self.metrics.record_refusal("session_evicted");
            tracing::debug!(
                "closed a session that had gone without a request the longest to make room for a new one"
            );
            let _ = self.manager.close_session(&victim).await;
        }
        Ok(Reservation {
            table: self.clone(),
            client: client.clone(),
            used: false,
        })
    }

    /// Session `id` was opened with `reservation`; `authenticated`: its client presented
    /// a token, and only that client may use it.
    pub fn opened(&self, id: &str, mut reservation: Reservation, authenticated: bool) {
        reservation.used = true;
        let mut state = self.state();
        release_pending(&mut state, &reservation.client);
        state.entries.insert(
            id.into(),
            Entry::new(reservation.client.clone(), authenticated),
        );
    }

    /// True when session `id` was opened by an authenticated client other than `client`:
    /// a session id is not a credential, so another user's request with it is refused as
    /// if the session did not exist.
    pub fn owned_by_other(&self, id: &str, client: &ClientId) -> bool {
        self.state()
            .entries
            .get(id)
            .is_some_and(|entry| entry.authenticated && entry.owner != *client)
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

    /// Session `id`'s `logging/setLevel`: its calls tell it what they do as they go,
    /// which only the SDK's peer can send (so they stream, and are not answered directly).
    pub fn logging(&self, id: &str) {
        if let Some(entry) = self.state().entries.get_mut(id) {
            entry.logging = true;
        }
    }

    /// Whether session `id` asked for log messages.
    pub fn logs(&self, id: &str) -> bool {
        self.state()
            .entries
            .get(id)
            .is_some_and(|entry| entry.logging)
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
    /// any the table missed are counted from now (as opened by no one in particular).
    async fn reconcile(&self) {
        let open = self.manager.sessions.read().await;
        let mut state = self.state();
        state.entries.retain(|id, _| open.contains_key(&**id));
        if open.len() > state.entries.len() {
            for id in open.keys() {
                if !state.entries.contains_key(&**id) {
                    state
                        .entries
                        .insert(id.clone(), Entry::new(ClientId("unknown".into()), false));
                }
            }
        }
    }

    /// Closes every session idle (no request in flight, no stream open) for longer than
    /// the idle timeout.
    pub async fn expire(&self) {
        self.reconcile().await;
        let expired: Vec<Arc<str>> = {
            let mut state = self.state();
            let idle = self.idle;
            let expired: Vec<Arc<str>> = state
                .entries
                .iter()
                .filter(|(_, entry)| {
                    entry.requests == 0 && entry.streams == 0 && entry.last_active.elapsed() >= idle
                })
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

fn release_pending(state: &mut State, client: &ClientId) {
    if let Some(count) = state.pending.get_mut(client) {
        *count = count.saturating_sub(1);
        if *count == 0 {
            state.pending.remove(client);
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if !self.used {
            release_pending(&mut self.table.state(), &self.client);
        }
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        let mut state = self.table.state();
        if let Some(entry) = state.entries.get_mut(&self.id) {
            match &self.kind {
                Kind::Request(request) => {
                    entry.requests = entry.requests.saturating_sub(1);
                    if let Some(request) = request
                        && let Some(at) = entry.ids.iter().position(|id| id == request)
                    {
                        entry.ids.swap_remove(at);
                    }
                }
                Kind::Stream => entry.streams = entry.streams.saturating_sub(1),
            }
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
