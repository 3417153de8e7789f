//! The bounds on Streamable HTTP sessions and long-lived event streams.
//!
//! rmcp keeps sessions in its [`LocalSessionManager`] with no cap, and expires one only when
//! its worker has seen no message for a while, which the calls [`super::direct`] answers
//! never reach. [`SessionTable`] watches every request that names a session instead: it
//! caps the sessions open at once (`server.max_sessions`; at the cap a new `initialize`
//! closes the session idle the longest, and with none idle it is refused), and closes a
//! session idle for `server.session_idle_seconds`. A session is idle while it has no
//! request in flight and no open stream. rmcp's map stays the record of which sessions
//! exist; the table only adds when each was last active.
//!
//! [`Streams`] caps the long-lived event streams (GET streams, `subscriptions/listen`,
//! legacy `/sse`), which no idle timeout closes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_server::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::telemetry::metrics::Metrics;

/// Sessions open and when each was last active (see the module documentation).
pub struct SessionTable {
    manager: Arc<LocalSessionManager>,
    max: usize,
    idle: Duration,
    state: Mutex<State>,
    metrics: Arc<Metrics>,
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

    /// Session `id` was opened with `reservation`.
    pub fn opened(&self, id: &str, mut reservation: Reservation) {
        reservation.used = true;
        let mut state = self.state();
        state.pending = state.pending.saturating_sub(1);
        state.entries.insert(
            id.into(),
            Entry {
                last_active: Instant::now(),
                busy: 0,
            },
        );
    }

    /// Session `id` was ended by its client.
    pub fn closed(&self, id: &str) {
        self.state().entries.remove(id);
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

/// The cap on long-lived event streams.
pub struct Streams {
    slots: Arc<Semaphore>,
    max: usize,
    metrics: Arc<Metrics>,
}

impl Streams {
    pub fn new(max: usize, metrics: Arc<Metrics>) -> Arc<Streams> {
        Arc::new(Streams {
            slots: Arc::new(Semaphore::new(max.max(1))),
            max: max.max(1),
            metrics,
        })
    }

    /// A slot for one stream, held until the stream ends; `None` at the cap.
    pub fn open(&self) -> Option<OwnedSemaphorePermit> {
        let slot = self.slots.clone().try_acquire_owned().ok();
        if slot.is_none() {
            self.metrics.record_refusal("too_many_streams");
        }
        slot
    }

    /// 503 for a stream refused at the cap.
    pub fn refusal(&self) -> axum::response::Response {
        use axum::response::IntoResponse as _;
        (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            [(axum::http::header::RETRY_AFTER, "5")],
            format!(
                "Service Unavailable: too many open event streams (server.max_sse_streams = {})",
                self.max
            ),
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_capped_and_slots_come_back() {
        let streams = Streams::new(2, Metrics::new());
        let first = streams.open().expect("1st");
        let _second = streams.open().expect("2nd");
        assert!(streams.open().is_none(), "a third is refused");
        drop(first);
        assert!(streams.open().is_some(), "a slot came back");
    }
}
